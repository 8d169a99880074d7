"""Every input is read once, whatever it is (DESIGN section 1, "Sources"): a named FIFO, a pipe
reached as ``/dev/fd/N`` (what bash's ``<(...)`` hands a program), stdin, compressed or not,
read by every command that reads rows gives what the same bytes in a file give. Each run has a
time limit: a command that opens a drained pipe again hangs, and a hang fails the test."""

from __future__ import annotations

import gzip
import io
import json
import os
import random
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io import sources

LIMIT_S = 60
#: A hang guard for each command started in a real shell, not a speed claim: each pays a
#: fresh interpreter's start, which a loaded machine can stretch past :data:`LIMIT_S`.
SHELL_LIMIT_S = 240


def rows_bytes(seed: int = 1, tasks: int = 8, k: int = 4) -> bytes:
    rng = random.Random(seed)
    lines = []
    for t in range(tasks):
        for j in range(k):
            n = rng.randint(2, 5)
            row = {
                "task_id": f"t{t}",
                "reward": float(rng.random() < 0.5),
                "prompt": f"question {t}",
                "completion": f"answer {t}.{j}",
                "rank": j,
                "rm_score": round(rng.random(), 3),
                "logprobs": [round(-rng.random(), 3) for _ in range(n)],
                "behavior_logprobs": [round(-rng.random(), 3) for _ in range(n)],
                "action_mask": [1] * n,
            }
            lines.append(json.dumps(row))
    return ("\n".join(lines) + "\n").encode()


def compressed(data: bytes, codec: str) -> bytes:
    if codec == "gzip":
        return gzip.compress(data)
    if codec == "zstd":
        import pyarrow as pa

        sink = pa.BufferOutputStream()
        with pa.CompressedOutputStream(sink, "zstd") as out:
            out.write(data)
        return bytes(sink.getvalue().to_pybytes())
    return data


#: Every command that reads rows, as arguments around its input paths (two for diff and size).
COMMANDS: dict[str, Callable[[list[str], Path], list[str]]] = {
    "route": lambda p, d: ["route", p[0]],
    "check": lambda p, d: ["check", p[0]],
    "diff": lambda p, d: ["diff", p[0], p[1]],
    "size": lambda p, d: ["size", "--before", p[0], "--after", p[1]],
    "summarize": lambda p, d: ["summarize", p[0], "-o", str(d / "s.parquet"), "--force"],
    "ada": lambda p, d: ["ada", p[0]],
    "groupwise": lambda p, d: ["update", p[0], "--method", "groupwise"],
    "rm": lambda p, d: ["update", p[0], "--method", "rm"],
    "update": lambda p, d: ["update", p[0], "--method", "grpo"],
}
TWO = {"diff", "size"}


def invoke(args: list[str], stdin: bytes | None = None) -> tuple[int, str]:
    """The CLI run in a thread, failed when it runs past :data:`LIMIT_S`."""
    out: list[tuple[int, str]] = []

    def target() -> None:
        result = CliRunner().invoke(app, args, input=stdin)
        out.append((result.exit_code, result.output))

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(LIMIT_S)
    assert not thread.is_alive(), f"while {' '.join(args)} hung (a stream opened twice?)"
    return out[0]


def _feed(open_writer: Callable[[], int], data: bytes) -> threading.Thread:
    def write() -> None:
        fd = open_writer()
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        except BrokenPipeError:
            pass
        finally:
            os.close(fd)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


@contextmanager
def stream(kind: str, data: bytes, folder: Path, tag: str) -> Iterator[str]:
    """A path that reads ``data`` once: a named FIFO or ``/dev/fd/N`` of a pipe."""
    if kind == "fifo":
        path = folder / f"fifo-{tag}"
        os.mkfifo(path)
        writer = _feed(lambda: os.open(path, os.O_WRONLY), data)
        try:
            yield str(path)
        finally:
            writer.join(LIMIT_S)
        return
    r, w = os.pipe()
    writer = _feed(lambda: w, data)
    try:
        yield f"/dev/fd/{r}"
    finally:
        writer.join(LIMIT_S)
        os.close(r)


def _plain(data: bytes) -> bytes:
    if data[:4] == b"\x28\xb5\x2f\xfd":
        import pyarrow as pa

        return bytes(pa.input_stream(pa.py_buffer(data), compression="zstd").read())
    return data


def normal(text: str, names: list[str], folder: Path) -> str:
    for name in names:
        text = text.replace(name, "<IN>")
    words = text.replace(str(folder), "<DIR>").split()
    return " ".join("<IN>" if w == "-" else w for w in words)  # stdin as a name: "-"


@pytest.fixture(scope="module")
def rows_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rows") / "rows.jsonl"
    path.write_bytes(rows_bytes())
    return path


def run_on_stream(command: str, kind: str, data: bytes, folder: Path) -> tuple[int, str]:
    if kind == "stdin":
        paths = ["-", "-"]
        args = COMMANDS[command](paths, folder)
        if command in TWO:  # stdin feeds one side
            paths = ["-", str(folder / "plain.jsonl.gz")]
            (folder / "plain.jsonl.gz").write_bytes(
                gzip.compress(gzip.decompress(data))
                if data[:2] == b"\x1f\x8b"
                else gzip.compress(_plain(data))
            )
            args = COMMANDS[command](paths, folder)
        code, out = invoke(args, stdin=data)
        return code, normal(out, ["<stdin>", *(p for p in paths if p != "-")], folder)
    if command not in TWO:
        with stream(kind, data, folder, "a") as a:
            code, out = invoke(COMMANDS[command]([a], folder))
        return code, normal(out, [a], folder)
    with stream(kind, data, folder, "a") as a, stream(kind, data, folder, "b") as b:
        code, out = invoke(COMMANDS[command]([a, b], folder))
    return code, normal(out, [a, b], folder)


@pytest.mark.parametrize("kind", ["fifo", "devfd"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_reads_a_stream_as_the_file(
    command: str, kind: str, rows_file: Path, tmp_path: Path
) -> None:
    data = rows_file.read_bytes()
    want_code, want = invoke(COMMANDS[command]([str(rows_file)] * (1 + (command in TWO)), tmp_path))
    want = normal(want, [str(rows_file)], tmp_path)
    assert want_code in (0, 1), want
    code, got = run_on_stream(command, kind, data, tmp_path)
    assert (code, got) == (want_code, want)


@settings(max_examples=12, deadline=None)
@given(
    command=st.sampled_from(list(COMMANDS)),
    kind=st.sampled_from(["fifo", "devfd", "stdin"]),
    codec=st.sampled_from([None, "gzip", "zstd"]),
    seed=st.integers(0, 1000),
)
def test_stream_kinds_and_codecs_read_as_the_plain_file(
    tmp_path_factory: pytest.TempPathFactory, command: str, kind: str, codec: str | None, seed: int
) -> None:
    if kind == "stdin" and command == "route":
        # route's judge scan skips stdin ("grader unknown"): the one judge detector's work
        command = "check"
    folder = tmp_path_factory.mktemp("s")
    plain = rows_bytes(seed)
    (folder / "rows.jsonl").write_bytes(plain)
    files = [str(folder / "rows.jsonl")] * (1 + (command in TWO))
    want_code, want = invoke(COMMANDS[command](files, folder))
    want = normal(want, [str(folder / "rows.jsonl")], folder)
    code, got = run_on_stream(command, kind, compressed(plain, codec or ""), folder)
    assert (code, got) == (want_code, want)


def test_process_substitution_through_bash(rows_file: Path, tmp_path: Path) -> None:
    """Every command on ``<(cat rows)`` in a real shell, as it reads the file itself."""
    exe, out = sys.executable, tmp_path / "s.parquet"
    runs = {
        name: args([f"<(cat {rows_file})", f"<(cat {rows_file})"], tmp_path)
        for name, args in COMMANDS.items()
    }
    runs["summarize"] = ["summarize", f"<(cat {rows_file})", "-o", str(out), "--force"]
    script = "".join(
        f"echo '=== {name}'; timeout {SHELL_LIMIT_S} {exe} -m whilecli {' '.join(args)}; echo rc=$?;"
        for name, args in runs.items()
    )
    done = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        timeout=SHELL_LIMIT_S * len(runs),
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    parts = done.stdout.split("=== ")[1:]
    assert [p.split("\n", 1)[0] for p in parts] == list(runs), done.stderr
    for part in parts:
        name, text = part.split("\n", 1)
        code = int(text.rsplit("rc=", 1)[1])
        want_code, _ = invoke(COMMANDS[name]([str(rows_file)] * 2, tmp_path))
        assert code == want_code, (name, text[-1500:], done.stderr[-1500:])


def test_a_stream_past_the_limit_is_one_line_saying_how_to_raise_it(
    monkeypatch: pytest.MonkeyPatch, rows_file: Path, tmp_path: Path
) -> None:
    monkeypatch.setenv(sources.STREAM_LIMIT_VAR, "1K")
    with stream("fifo", rows_file.read_bytes(), tmp_path, "x") as path:
        code, out = invoke(["route", path])
    assert code == 2
    assert out.strip().count("\n") == 0
    assert "WHILECLI_STREAM_LIMIT" in out and path in out
    bomb = gzip.compress(b'{"task_id": "t", "reward": 1}\n' * 4000)
    assert len(bomb) < 1024
    code, out = invoke(["route", "-"], stdin=bomb)
    assert code == 2 and "decompressed stream is longer than 1K" in out
    monkeypatch.setenv(sources.STREAM_LIMIT_VAR, "lots")
    code, out = invoke(["route", "-"], stdin=b"{}\n")
    assert code == 2 and "WHILECLI_STREAM_LIMIT" in out


def test_the_same_stream_object_is_read_once() -> None:
    data = rows_bytes(3)
    handle = io.BytesIO(data)
    first = sources.expand_paths(["-"], handle)
    again = sources.expand_paths(["-"], handle)
    assert first[0].data == again[0].data == data
    with pytest.raises(InputError, match="no input"):
        sources.expand_paths([])


#: The commands that read any number of inputs as one pool.
POOLING = ["route", "check", "ada", "summarize"]


def twice(command: str, path: str, folder: Path) -> list[str]:
    head, _, *rest = COMMANDS[command]([path], folder)
    return [head, path, path, *rest]


@pytest.mark.parametrize("kind", ["stdin", "fifo"])
@pytest.mark.parametrize("command", POOLING)
def test_a_stream_named_twice_reads_as_a_file_named_twice(
    command: str, kind: str, rows_file: Path, tmp_path: Path
) -> None:
    """``- -`` or one FIFO twice is one spool, read once with a note, as a file listed twice
    is (never doubled rows, never a lookup of a second input that is not there)."""
    want_code, want = invoke(twice(command, str(rows_file), tmp_path))
    want = normal(want, [str(rows_file)], tmp_path)
    assert want_code in (0, 1), want
    data = rows_file.read_bytes()
    if kind == "stdin":
        code, got = invoke(twice(command, "-", tmp_path), stdin=data)
        got = normal(got, ["<stdin>"], tmp_path)
    else:
        with stream(kind, data, tmp_path, "twice") as path:
            code, got = invoke(twice(command, path, tmp_path))
        got = normal(got, [path], tmp_path)
    assert (code, got) == (want_code, want)
