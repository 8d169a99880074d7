"""A hostile environment, for every command: never a traceback, never exit 70, never a short
write reported as success.

One generator per class. The stream classes run each command in process on the program's
own checked streams (:mod:`whilecli.stdio`) put on real descriptors: ``/dev/full``
(ENOSPC), a pipe whose reader has gone (EPIPE: 141), a descriptor that is closed (EBADF),
and a file-size limit (the kernel's short write, then EFBIG, at a byte drawn per case). The
cases that need a process of their own (``RLIMIT_FSIZE`` set in ``preexec_fn``, descriptors
closed before the program starts, ``/dev/full``, a small tmpfs, locale encodings, a deleted
working directory) run as subprocesses, few and with a timeout each.
"""

from __future__ import annotations

import errno
import json
import os
import random
import resource
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import click
import polars as pl
import pyarrow.parquet as pq
import pytest
import typer
from typer.testing import CliRunner

from conftest import EXAMPLES, ROOT
from whilecli import stdio
from whilecli.cli import app
from whilecli.commands._common import PROG
from whilecli.route.summary import HEADER_KEY

MIXED = str(EXAMPLES / "mixed.jsonl")
GRADED = str(EXAMPLES / "graded.jsonl")
BATCH = str(EXAMPLES / "batch.jsonl")
STUDENT = str(EXAMPLES / "student.jsonl")
TEACHER = str(EXAMPLES / "teacher.jsonl")
RUN = ROOT / "examples" / "run"  # a recorded prime-rl run

#: One command line per command (the row methods as ``update``'s), each writing to stdout.
EVERY_COMMAND: dict[str, list[str]] = {
    "route": ["route", MIXED, "--show", "split"],
    "route-json": ["route", MIXED, "--format", "json"],
    "check": ["check", MIXED],
    "diff": ["diff", STUDENT, TEACHER, "--draws", "200"],
    "size": ["size", "--draws", "200"],
    "summarize": ["summarize", MIXED, "-o", "-"],
    "config": ["config", "--method", "grpo"],
    "config-toml": ["config", "--method", "grpo", "-o", "-"],
    "formats": ["formats"],
    "ada": ["ada", MIXED, "-o", "-"],
    "update": ["update", BATCH, "--method", "sao", "-o", "-"],
    "update-json": ["update", BATCH, "--method", "flash_reinforce", "--format", "json"],
    "groupwise": ["update", GRADED, "--method", "groupwise", "-o", "-"],
    "rm": ["update", GRADED, "--method", "rm"],
    "watch": ["watch", str(RUN)],
    "watch-json": ["watch", str(RUN), "--format", "json"],
}

PREFIX = f"{PROG}: error: "


def _command() -> click.Command:
    return typer.main.get_command(app)


@contextmanager
def _streams(out: stdio.SafeText, err: stdio.SafeText) -> Iterator[None]:
    old = sys.stdout, sys.stderr
    stdio.FAILED.clear()
    sys.stdout, sys.stderr = out, err
    try:
        yield
    finally:
        sys.stdout, sys.stderr = old
        stdio.FAILED.clear()


def _run(args: list[str], out: stdio.SafeText, err: stdio.SafeText) -> int:
    """``whilecli ARGS`` in process on ``out`` and ``err``; its exit code."""
    out.buffer.raw.name = "standard output"  # type: ignore[attr-defined]
    err.buffer.raw.name = "standard error"  # type: ignore[attr-defined]
    with _streams(out, err):
        return stdio.run(lambda: _command().main(args=args, prog_name=PROG))


def _limited(stream: stdio.SafeText, budget: int) -> stdio.SafeText:
    """``stream`` under a file-size limit ``budget`` bytes away: the kernel writes what fits
    (a short write), then refuses with EFBIG, as under ``RLIMIT_FSIZE``."""
    raw = stream.buffer.raw  # type: ignore[attr-defined]
    left = [budget]

    def write(fd: int, data: memoryview) -> int:
        if left[0] <= 0:
            raise OSError(errno.EFBIG, os.strerror(errno.EFBIG))
        n = os.write(fd, data[: left[0]])
        left[0] -= n
        return n

    raw._write = write
    return stream


@dataclass
class Target:
    """A descriptor that fails in one way, and what the command must then do."""

    name: str
    open: Callable[[Path], tuple[int, Callable[[], None]]]
    code: int  # exit code when the command wrote to it
    says: str  # in the error line ("" for a closed pipe: quiet)


def _dev_full(tmp: Path) -> tuple[int, Callable[[], None]]:
    fd = os.open("/dev/full", os.O_WRONLY)
    return fd, lambda: os.close(fd)


def _gone_reader(tmp: Path) -> tuple[int, Callable[[], None]]:
    read, write = os.pipe()
    os.close(read)
    return write, lambda: os.close(write)


def _closed_fd(tmp: Path) -> tuple[int, Callable[[], None]]:
    fd = 987  # a number that names nothing (the test opens far fewer files)
    with pytest.raises(OSError):
        os.fstat(fd)
    return fd, lambda: None


TARGETS = [
    Target("dev-full", _dev_full, 2, "No space left on device"),
    Target("closed-pipe", _gone_reader, 141, ""),
    Target("closed-fd", _closed_fd, 2, "Bad file descriptor"),
]


def _file(tmp: Path, name: str) -> tuple[int, Path]:
    path = tmp / name
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), path


def _cases(seed: int) -> list[tuple[str, str, Target]]:
    """Every command once per failing target, the failing stream (stdout or stderr) drawn."""
    rng = random.Random(seed)
    return [
        (command, rng.choice(["stdout", "stderr"]), target)
        for target in TARGETS
        for command in EVERY_COMMAND
    ]


@pytest.mark.parametrize(
    "command,which,target",
    _cases(27),
    ids=[f"{t.name}-{w}-{c}" for c, w, t in _cases(27)],
)
def test_a_failing_stream(command: str, which: str, target: Target, tmp_path: Path) -> None:
    fd, close = target.open(tmp_path)
    other, other_path = _file(tmp_path, "other")
    try:
        bad = stdio.text_stream(fd)
        good = stdio.text_stream(other)
        out, err = (bad, good) if which == "stdout" else (good, bad)
        code = _run(EVERY_COMMAND[command], out, err)
        failed = dict(stdio.FAILED)
    finally:
        close()
        os.close(other)
    text = other_path.read_text(errors="replace")
    assert "Traceback" not in text and "internal error" not in text, text
    if which == "stderr":
        # nothing shows the error; the code still says that a write failed (or, for a closed
        # pipe, that the reader went away)
        wrote = code != 0
        assert code == (target.code if wrote else 0), (code, failed)
        return
    assert code == target.code, text
    if target.says:
        lines = text.strip().splitlines()
        assert lines[-1].startswith(PREFIX) and target.says in lines[-1], text
    else:
        assert PREFIX not in text, text


@pytest.fixture(scope="module")
def full_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """What each command writes to stdout with room to spare."""
    tmp = tmp_path_factory.mktemp("full")
    outputs = {}
    for command, args in EVERY_COMMAND.items():
        out, out_path = _file(tmp, f"{command}.out")
        err, _ = _file(tmp, f"{command}.err")
        try:
            code = _run(args, stdio.text_stream(out), stdio.text_stream(err))
        finally:
            os.close(out)
            os.close(err)
        assert code == 0, command
        outputs[command] = out_path.read_bytes()
        assert outputs[command], command
    return outputs


@pytest.mark.parametrize("command", list(EVERY_COMMAND))
def test_a_file_size_limit_is_an_error_never_a_short_success(
    command: str, full_outputs: dict[str, bytes], tmp_path: Path
) -> None:
    """Under a limit drawn inside the output: exit 2, one line, and exactly the bytes that fit
    (never a report that ends mid-line with exit 0); at the output's own size: exit 0."""
    whole = full_outputs[command]
    rng = random.Random(f"{command}-27")
    for budget in (rng.randrange(len(whole)), len(whole)):
        out, out_path = _file(tmp_path, "out")
        err, err_path = _file(tmp_path, "err")
        try:
            stream = _limited(stdio.text_stream(out), budget)
            code = _run(EVERY_COMMAND[command], stream, stdio.text_stream(err))
        finally:
            os.close(out)
            os.close(err)
        said = err_path.read_text()
        if budget == len(whole):
            assert code == 0 and out_path.read_bytes() == whole, said
            continue
        assert code == 2, said
        assert said.strip().splitlines()[-1] == (
            f"{PREFIX}cannot write to standard output: {os.strerror(errno.EFBIG)}"
        )
        assert whole.startswith(out_path.read_bytes()) and out_path.stat().st_size == budget


# --- text: encodings, control characters, lone surrogates --------------------------------

#: What a hostile input puts in an id: an OSC title sequence, a CSI screen clear, C1
#: controls, a bell, a carriage return, a bidi override and characters outside Latin-1 (a
#: lone surrogate is no id: the readers refuse it, tests/commands/test_hostile_readers.py).
HOSTILE_IDS = [
    "\x1b]0;owned\x07",
    "\x1b[2J\x1b[H",
    "\x9b31m",
    "a\rb",
    "\u202eevil",
    "é→😀",
]


@pytest.fixture(scope="module")
def hostile_text(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Rows whose task ids carry escapes, and a summary whose header names them."""
    root = tmp_path_factory.mktemp("text")
    rows = []
    for i, task in enumerate(HOSTILE_IDS):
        for k in range(4):
            rows.append({"task_id": f"{task}{i}", "reward": float(k % 2), "tokens": [1]})
    text = "".join(json.dumps(r) + "\n" for r in rows)
    (root / "rows.jsonl").write_text(text)
    r = CliRunner().invoke(
        app, ["summarize", str(root / "rows.jsonl"), "-o", str(root / "s.parquet")]
    )
    assert r.exit_code == 0, r.stderr
    table = pq.read_table(root / "s.parquet")
    header = json.loads(table.schema.metadata[HEADER_KEY.encode()])
    header["inputs"][0]["paths"] = ["\x1b]8;;http://x\x07evil\x1b]8;;\x07.jsonl"]
    pq.write_table(
        table.replace_schema_metadata({HEADER_KEY: json.dumps(header)}), root / "evil.parquet"
    )
    return root


def _text_commands(root: Path) -> dict[str, list[str]]:
    rows, evil = str(root / "rows.jsonl"), str(root / "evil.parquet")
    return {
        "route": ["route", rows, "--show", "split"],
        "route-json": ["route", rows, "--format", "json", "--show", "split"],
        "route-markdown": ["route", rows, "--format", "markdown", "--show", "split"],
        "route-summary": ["route", evil],
        "check": ["check", rows, "--show", "split"],
        "diff": ["diff", rows, rows, "--draws", "100"],
        "ada": ["ada", rows],
        "ada-rows": ["ada", rows, "-o", "-"],
        "groupwise": ["update", rows, "--method", "rm", "-o", "-"],
        "summarize": ["summarize", "--merge", evil, "-o", str(root / "m.parquet"), "--force"],
        "config": ["config", "--method", "grpo", "--set", "model.name=\x1b[31mred\udcff"],
        "formats": ["formats"],
    }


#: What must never reach a terminal raw: C0 (but tab and newline), DEL, C1, and the
#: bidirectional controls that reorder the rest of a line.
_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_RAW_CONTROL = [chr(c) for c in (*range(0, 9), *range(11, 32), *range(0x7F, 0xA0), *_BIDI)]


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1", "ascii"])
def test_text_output_is_safe_in_any_encoding(
    encoding: str, hostile_text: Path, tmp_path: Path
) -> None:
    """Every command, on a stdout and stderr of each encoding: exit 0 or one error line,
    the bytes decode in that encoding, no control character reaches the stream raw, and
    JSON stays strict JSON."""
    for name, args in _text_commands(hostile_text).items():
        out, out_path = _file(tmp_path, "out")
        err, err_path = _file(tmp_path, "err")
        try:
            code = _run(
                args,
                stdio.text_stream(out, encoding=encoding),
                stdio.text_stream(err, encoding=encoding),
            )
        finally:
            os.close(out)
            os.close(err)
        said = err_path.read_bytes().decode(encoding)
        shown = out_path.read_bytes().decode(encoding)
        assert code in (0, 1, 2), (name, said)
        if code == 2:
            assert len(said.strip().splitlines()) == 1 and said.startswith(PREFIX), (name, said)
        for ch in _RAW_CONTROL:
            assert ch not in shown and ch not in said, (name, repr(ch))
        if name == "route-json":
            json.loads(shown)


# --- names ------------------------------------------------------------------------------


def _writers(d: Path, name: str) -> dict[str, list[str]]:
    """Every command that writes a file, writing to ``d/name`` + its suffix."""
    at = str(d / name)
    return {
        "summarize": ["summarize", MIXED, "-o", f"{at}.parquet"],
        "merge": ["summarize", "--merge", str(d / "base.parquet"), "-o", f"{at}.pq"],
        "config": ["config", "--method", "grpo", "-o", f"{at}.toml"],
        "ada": ["ada", MIXED, "-o", f"{at}.jsonl"],
        "ada-next": ["ada", MIXED, "--next-round", f"{at}.next.jsonl"],
        "update": ["update", BATCH, "--method", "sao", "-o", f"{at}.u.parquet"],
        "rae-state": ["update", BATCH, "--method", "rae", "--state", f"{at}.json"],
        "groupwise": ["update", GRADED, "--method", "groupwise", "-o", f"{at}.g.jsonl"],
    }


@pytest.mark.parametrize(
    "name,ok",
    [
        ("a" * 240, True),  # legal: the target's name plus a suffix stays within 255 bytes
        ("\udcff\udcfe-not-utf8", True),  # bytes that are not UTF-8, as Python spells them
        ("é" * 110, True),  # 220 bytes of UTF-8 in 110 characters
        ("b" * 300, False),  # past the file system's limit: one line, exit 2
    ],
    ids=["long", "not-utf8", "multibyte", "too-long"],
)
def test_every_writer_takes_every_legal_name(name: str, ok: bool, tmp_path: Path) -> None:
    base = tmp_path / "base.parquet"
    assert CliRunner().invoke(app, ["summarize", MIXED, "-o", str(base)]).exit_code == 0
    streams = tmp_path.parent / f"{tmp_path.name}-streams"
    streams.mkdir()
    before = set(os.listdir(tmp_path))
    for writer, args in _writers(tmp_path, name).items():
        out, _ = _file(streams, "out")
        err, err_path = _file(streams, "err")
        try:
            code = _run(args, stdio.text_stream(out), stdio.text_stream(err))
        finally:
            os.close(out)
            os.close(err)
        said = err_path.read_text()
        if ok:
            assert code == 0, (writer, said)
        else:
            assert code == 2, (writer, said)
            assert said.count("\n") == 1 and said.startswith(PREFIX), said
    made = set(os.listdir(tmp_path)) - before
    assert all(not m.startswith(".") for m in made), made  # no temporary file left
    assert len(made) == (len(_writers(tmp_path, name)) if ok else 0), made


def test_every_reader_takes_a_name_that_is_not_utf8(tmp_path: Path) -> None:
    """Rows, a Parquet file and a summary under names whose bytes are not UTF-8: read by every
    command that reads, and the names printed escaped."""
    rows, table, summary = (tmp_path / f"\udcff{n}" for n in ("r.jsonl", "t.parquet", "s.parquet"))
    graded = tmp_path / "\udcfeg.jsonl"
    shutil.copy(MIXED, rows)
    shutil.copy(GRADED, graded)
    shutil.copy(EXAMPLES / "mixed.parquet", table)
    streams = tmp_path.parent / f"{tmp_path.name}-streams"
    streams.mkdir()
    for args in (
        ["summarize", str(rows), "-o", str(summary)],
        ["route", str(rows)],
        ["route", str(table), "--format", "json"],
        ["route", str(summary)],
        ["check", str(table)],
        ["diff", str(rows), str(table), "--draws", "50"],
        ["size", "--before", str(rows), "--after", str(table), "--draws", "50"],
        ["summarize", "--merge", str(summary), "-o", "-"],
        ["ada", str(rows)],
        ["update", str(graded), "--method", "groupwise", "-o", "-"],
    ):
        out, _ = _file(streams, "out")
        err, err_path = _file(streams, "err")
        try:
            code = _run(args, stdio.text_stream(out), stdio.text_stream(err))
        finally:
            os.close(out)
            os.close(err)
        assert code == 0, (args[0], err_path.read_text())


# --- numbers past int64 -------------------------------------------------------------------


def _int_options() -> list[tuple[str, str]]:
    """Every integer option of every command."""
    group = _command()
    ctx = click.Context(group)
    found = []
    for name in group.list_commands(ctx):  # type: ignore[attr-defined]
        command = group.get_command(ctx, name)  # type: ignore[attr-defined]
        for param in command.params:
            if isinstance(param.type, click.types.IntParamType) and param.opts[0].startswith("--"):
                found.append((name, param.opts[0]))
    return found


_BASE_ARGS = {
    "route": [MIXED, "--show", "split"],
    "check": [MIXED, "--show", "split"],
    "diff": [STUDENT, TEACHER, "--draws", "50"],
    "size": ["--draws", "50"],
    "config": ["--method", "grpo", "--async"],
    "ada": [MIXED],
    "update": [str(EXAMPLES / "grouped_batch.jsonl"), "--method", "grpo", "--loss-type", "dr_grpo"],
    "watch": [str(RUN)],
}


def test_every_integer_option_past_int64() -> None:
    """A count, limit, seed or size past int64: a right answer or one line, never exit 70."""
    options = _int_options()
    assert len(options) >= 15
    for command, option in options:
        for value in (str(2**63), str(10**30)):
            args = [command, *_BASE_ARGS.get(command, []), option, value]
            r = CliRunner().invoke(app, args)
            assert r.exception is None or isinstance(r.exception, SystemExit), (args, r.exception)
            assert r.exit_code in (0, 2), (args, r.stderr)
            if r.exit_code == 2:
                assert r.stderr.count("\n") == 1 and r.stderr.startswith(PREFIX), r.stderr


def test_merged_counts_past_int64_are_refused(tmp_path: Path) -> None:
    """Two summaries whose counts add up past int64: refused naming the task, never a
    negative count written with exit 0."""
    one = tmp_path / "one.parquet"
    assert CliRunner().invoke(app, ["summarize", MIXED, "-o", str(one)]).exit_code == 0
    table = pq.read_table(one)
    big = 2**62 + 5
    counts = {c: pl.lit(0, pl.Int64) for c in ("passes", "truncated", "truncated_known")}
    frame = pl.from_arrow(table).with_columns(
        n=pl.lit(big, pl.Int64),
        truncated_passes=pl.lit(0, pl.Int64),
        partial_rows=pl.lit(0, pl.Int64),
        models=pl.col("models")
        .list.head(1)
        .list.eval(pl.element().struct.with_fields(rows=pl.lit(big, pl.Int64))),
        **counts,
    )
    for name, part in (("a", frame), ("b", frame.reverse())):
        pq.write_table(
            part.to_arrow().replace_schema_metadata(table.schema.metadata),
            tmp_path / f"{name}.parquet",
        )
    out = tmp_path / "m.parquet"
    args = ["summarize", "--merge", str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")]
    r = CliRunner().invoke(app, [*args, "-o", str(out)])
    assert r.exit_code == 2, r.stderr
    assert "past the largest count" in r.stderr and r.stderr.count("\n") == 1
    assert not out.exists()


# --- real processes -----------------------------------------------------------------------

ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "80"}
ENV.pop("WHILE_DEBUG", None)


def _while(
    args: list[str],
    *,
    shell: str = "",
    limit: int | None = None,
    env: dict[str, str] | None = None,
    cwd: str | Path | None = None,
    stdout: object = subprocess.PIPE,
) -> subprocess.CompletedProcess[bytes]:
    """``whilecli ARGS`` as its own process; ``shell`` redirections (``>&-``) applied before
    the program starts; ``limit``: ``RLIMIT_FSIZE`` in bytes."""

    def preexec() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    command = [sys.executable, "-m", "whilecli", *args]
    if shell:
        command = ["/bin/sh", "-c", f'exec "$@" {shell}', "sh", *command]
    return subprocess.run(
        command,
        stdout=stdout,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env or ENV,
        cwd=cwd,
        preexec_fn=preexec,
        timeout=120,
    )


def _one_error_line(done: subprocess.CompletedProcess[bytes], says: str) -> None:
    text = done.stderr.decode(errors="replace")
    assert done.returncode == 2, text
    lines = text.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(PREFIX) and says in lines[0], text


@pytest.mark.parametrize(
    "args",
    [
        ["update", BATCH, "--method", "flash_reinforce", "-o", "-"],
        ["route", MIXED, "--format", "json"],
    ],
    ids=["update-rows", "route-json"],
)
def test_rlimit_fsize_on_stdout(args: list[str], tmp_path: Path) -> None:
    """The issue's case: under a batch scheduler's file-size limit, the report ended
    mid-line with exit 0."""
    with open(tmp_path / "out", "wb") as out:
        done = _while(args, limit=700, stdout=out)
    _one_error_line(done, "File too large")
    assert (tmp_path / "out").stat().st_size == 700


def _small_tmpfs(where: Path) -> bool:
    """Mount a 64 KiB tmpfs at ``where`` if this process may."""
    where.mkdir()
    if shutil.which("mount") is None:
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
        capture_output=True,
        timeout=30,
    )
    return done.returncode == 0


@pytest.mark.parametrize("writer", ["summarize", "config"])
def test_a_full_file_system_leaves_the_target_as_it_was(writer: str, tmp_path: Path) -> None:
    """A write that runs out of room (a 64 KiB tmpfs when one can be mounted, else a file-size
    limit): exit 2, one line, the old file untouched, no temporary file left."""
    where = tmp_path / "small"
    mounted = _small_tmpfs(where)
    try:
        target = where / ("s.parquet" if writer == "summarize" else "rl.toml")
        target.write_bytes(b"old")
        if mounted:  # fill it up
            ballast = os.open(where / "ballast", os.O_WRONLY | os.O_CREAT)
            try:
                while os.write(ballast, b"\0" * 4096):
                    pass
            except OSError:
                pass
            finally:
                os.close(ballast)
        args = {
            "summarize": ["summarize", MIXED, "-o", str(target), "--force"],
            "config": ["config", "--method", "grpo", "-o", str(target), "--force"],
        }[writer]
        done = _while(args, limit=None if mounted else 400)
        reason = "No space left on device" if mounted else "File too large"
        _one_error_line(done, reason)
        assert target.read_bytes() == b"old"
        assert sorted(p.name for p in where.iterdir()) == sorted(
            ["s.parquet" if writer == "summarize" else "rl.toml", *(["ballast"] if mounted else [])]
        )
    finally:
        if mounted:
            subprocess.run(["umount", str(where)], capture_output=True, timeout=30)


@pytest.mark.parametrize(
    "shell,args,code,says",
    [
        (">&-", ["formats"], 2, "standard output: it is closed"),
        (">/dev/full", ["config", "--method", "grpo", "-o", "-"], 2, "No space left on device"),
        ("2>&-", ["config", "--method", "grpo", "-o", "-"], 2, ""),
        ("2>/dev/full", ["size", "--bogus"], 2, ""),
        ("<&-", ["route", "-"], 2, "empty"),
        ("<&- >&- 2>&-", ["formats"], 2, ""),
    ],
    ids=["stdout-closed", "stdout-full", "stderr-closed", "stderr-full", "stdin-closed", "all"],
)
def test_closed_and_full_standard_streams(
    shell: str, args: list[str], code: int, says: str
) -> None:
    done = _while(args, shell=shell)
    assert done.returncode == code, done.stderr
    text = done.stderr.decode(errors="replace")
    assert "Traceback" not in text and "internal error" not in text, text
    if says:
        _one_error_line(done, says)


@pytest.mark.parametrize(
    "env",
    [{"LANG": "C", "LC_ALL": "C"}, {"PYTHONIOENCODING": "latin-1"}, {"PYTHONIOENCODING": "ascii"}],
    ids=["lang-c", "latin-1", "ascii"],
)
def test_locale_encodings(env: dict[str, str], tmp_path: Path) -> None:
    """The report's arrows and bullets in an encoding that lacks them: plain stand-ins, exit
    0, and bytes that decode in that encoding."""
    done = _while(
        ["config", "--method", "grpo", "-o", str(tmp_path / "rl.toml")], env={**ENV, **env}
    )
    assert done.returncode == 0, done.stderr
    encoding = env.get("PYTHONIOENCODING", "utf-8")  # Python takes C as C.UTF-8
    done.stdout.decode(encoding)
    assert (tmp_path / "rl.toml").read_text(encoding="utf-8").startswith("#")


def test_a_deleted_working_directory(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    script = f'cd "{gone}" && rmdir "{gone}" && exec "$@"'
    done = subprocess.run(
        ["/bin/sh", "-c", script, "sh", sys.executable, "-m", "whilecli", "route", MIXED],
        capture_output=True,
        env=ENV,
        timeout=120,
    )
    _one_error_line(done, "working directory")


# --- sidecar and option files: one depth guard, fields checked ---------------------------

DEEP_JSON = "[" * 5000 + "]" * 5000
DEEP_TOML = "x = " + "[" * 5000 + "]" * 5000 + "\n"


def _sidecar_cases(root: Path) -> dict[str, tuple[list[str], str]]:
    """Each file the program parses beside its rows, made hostile: the command line, and the
    file the one error line must name."""
    cases: dict[str, tuple[list[str], str]] = {}
    for shape, text in {"deep": DEEP_JSON, "wrong-type": '{"model": 3}', "list": "[1]"}.items():
        state = root / f"state-{shape}.json"
        state.write_text(text if shape != "wrong-type" else '{"default": "high"}')
        cases[f"rae-state-{shape}"] = (
            ["update", BATCH, "--method", "rae", "--state", str(state)],
            state.name,
        )
        tok = root / f"tok-{shape}" / "tokenizer.json"
        tok.parent.mkdir()
        tok.write_text(text)
        cases[f"tokenizer-{shape}"] = (
            ["route", MIXED, "--teacher", TEACHER, "--teacher-tokenizer", str(tok)],
            "tokenizer.json",
        )
    project = root / "project"
    (project / ".git").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[tool.while]\n" + DEEP_TOML)
    cases["pyproject-deep"] = (["check", "rows.jsonl"], "pyproject.toml")  # run in project
    shutil.copy(MIXED, project / "rows.jsonl")
    good = root / "good.parquet"
    assert CliRunner().invoke(app, ["summarize", MIXED, "-o", str(good)]).exit_code == 0
    table = pq.read_table(good)
    for shape, text in {"deep": DEEP_JSON, "inputs-deep": None}.items():
        if text is None:
            header = table.schema.metadata[HEADER_KEY.encode()].decode()
            assert '"notes": []' in header
            text = header.replace('"notes": []', f'"notes": {DEEP_JSON}', 1)
        bad = root / f"header-{shape}.parquet"
        pq.write_table(table.replace_schema_metadata({HEADER_KEY: text}), bad)
        cases[f"summary-header-{shape}"] = (["route", str(bad)], bad.name)
        cases[f"merge-header-{shape}"] = (
            ["summarize", "--merge", str(good), str(bad), "-o", "-"],
            bad.name,
        )
    return cases


def test_every_sidecar_is_parsed_with_one_guard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nested past the guard, or a field of the wrong type, in each sidecar or option file:
    exit 2 and one line naming the file; never a RecursionError's exit 70."""
    cases = _sidecar_cases(tmp_path)
    assert len(cases) >= 11
    for name, (args, names) in cases.items():
        monkeypatch.chdir(tmp_path / "project" if name.startswith("pyproject") else tmp_path)
        r = CliRunner().invoke(app, args)
        assert r.exception is None or isinstance(r.exception, SystemExit), (name, r.exception)
        assert r.exit_code == 2, (name, r.stderr)
        assert r.stderr.count("\n") == 1 and r.stderr.startswith(PREFIX), (name, r.stderr)
        assert names in r.stderr, (name, r.stderr)


@pytest.mark.parametrize("suffix,text", [(".json", DEEP_JSON), (".toml", DEEP_TOML)])
def test_a_judge_audit_past_the_guard(suffix: str, text: str, tmp_path: Path) -> None:
    """``--judge-audit`` is read only for rows a judge graded; read, it has the same guard."""
    from whilecli.errors import WhileError
    from whilecli.route.judges import load_audit

    audit = tmp_path / f"audit{suffix}"
    audit.write_text(text)
    with pytest.raises(WhileError, match=f"--judge-audit .*audit{suffix}.*nests deeper"):
        load_audit(audit)
