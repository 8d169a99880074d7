"""Hostile files through the command line of every command that reads rows: each exits 0, 1
or 2, never 70 and never with a traceback; an exit 2 is one line on stderr that starts with
``whilecli: error:`` and names the file, and where the readers refuse one row, its line.

The files are drawn by the hostile-row generator (:func:`tests.io.test_hostile_rows.corpora`:
NaN and infinities, huge integers, wrong types, a byte order mark, UTF-16, CRLF ends,
trailing garbage, bytes that are not UTF-8) and beside it: an empty file, a truncated or
corrupt gzip stream, a directory of shards one of which cannot be read, and a key written
twice on a line, in the rows the reader samples and past them. Generated too: gzip and zstd
files cut at a drawn byte or followed by drawn bytes, refused at the line the decoding
stopped in (for gzip, the line a plain ``zlib`` decoder reaches); bzip2 and xz rows, by name,
behind a ``.jsonl`` name, on stdin and in a folder; loops of links; NUL bytes where text
should be; Parquet values refused at a drawn row (bytes that are not UTF-8 in a binary id
column, a list or object reward column null before it). Commands run in process (typer's
CliRunner); one case runs the installed entry point in a fresh interpreter, as a user would.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.io.test_hostile_rows import corpora
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io.read import read_rows

PREFIX = "whilecli: error: "
GOOD = "".join(
    json.dumps({"task_id": f"t{i // 4}", "reward": float(i % 3 == 0)}) + "\n" for i in range(16)
)


def commands(path: str, out: str) -> dict[str, list[str]]:
    """Every command that reads rows, on ``path`` (``out``: where a writer writes)."""
    return {
        "route": ["route", path],
        "check": ["check", path],
        "diff": ["diff", path, path],
        "size": ["size", "--before", path, "--after", path],
        "summarize": ["summarize", path, "-o", f"{out}.parquet", "--force"],
        "ada": ["ada", path],
        "groupwise": ["update", "--method", "groupwise", path],
        "rm": ["update", "--method", "rm", path],
        "update": ["update", "--method", "grpo", path],
        "config": ["config", "--from", path, "-o", f"{out}.toml", "--force"],
        "watch": ["watch", path],
    }


def _check(name: str, args: list[str], code: int, out: str, err: str, path: Path) -> None:
    shown = f"{name} {args}: exit {code}\n{err}{out[-2000:]}"
    assert code in (0, 1, 2), shown
    assert "Traceback" not in err + out, shown
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(PREFIX), shown


def _run_all(path: Path, tmp: Path) -> dict[str, tuple[int, str]]:
    got: dict[str, tuple[int, str]] = {}
    for name, args in commands(str(path), str(tmp / "written")).items():
        result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
        _check(name, args, result.exit_code, result.stdout, result.stderr, path)
        got[name] = (result.exit_code, result.stderr.strip())
    return got


def _row_refusal(path: Path) -> InputError | None:
    try:
        read_rows([str(path)])
    except InputError as err:
        return err
    return None


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(corpus=corpora())
def test_every_command_takes_a_hostile_file_or_refuses_it_in_one_line(
    tmp_path_factory: pytest.TempPathFactory, corpus: tuple[bytes, str]
) -> None:
    data, _ = corpus
    tmp = tmp_path_factory.mktemp("hostile")
    path = tmp / "rows.jsonl"
    path.write_bytes(data)
    got = _run_all(path, tmp)
    refusal = _row_refusal(path)
    if refusal is not None:
        # what the reader refuses, every command that reads rows refuses, naming the file
        # and, for one row, its line
        place = path.name if refusal.line is None else f"{path.name}:{refusal.line}"
        for name in ("route", "check", "diff", "size", "summarize", "ada"):
            code, err = got[name]
            assert code == 2 and place in err, (name, err, str(refusal))


def _gzip_cut(tmp: Path) -> Path:
    path = tmp / "cut.jsonl.gz"
    path.write_bytes(gzip.compress(GOOD.encode() * 50)[:-40])
    return path


def _gzip_corrupt(tmp: Path) -> Path:
    path = tmp / "corrupt.jsonl.gz"
    data = bytearray(gzip.compress(GOOD.encode() * 50))
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    return path


def _empty(tmp: Path) -> Path:
    path = tmp / "empty.jsonl"
    path.write_bytes(b"")
    return path


def _bad_shard(tmp: Path) -> Path:
    folder = tmp / "shards"
    folder.mkdir()
    (folder / "a.jsonl").write_text(GOOD)
    os.symlink("/proc/self/mem", folder / "b.jsonl")  # opens, then every read fails
    return folder


def _repeated(tmp: Path) -> Path:
    path = tmp / "repeated.jsonl"
    lines = GOOD.splitlines()
    lines[5] = lines[5][:-1] + ', "reward": 0.5}'
    path.write_text("\n".join(lines) + "\n")
    return path


def _repeated_late(tmp: Path) -> Path:
    """A key written twice past the rows the reader parses with Python (the first 1,000)."""
    path = tmp / "late.jsonl"
    lines = (GOOD * 70).splitlines()
    lines[1019] = lines[1019][:-1] + ', "task_id": "elsewhere"}'
    path.write_text("\n".join(lines) + "\n")
    return path


def _no_utf8(tmp: Path) -> Path:
    path = tmp / "latin1.jsonl"
    path.write_bytes(GOOD.encode() + b'{"task_id": "\xe9", "reward": 1}\n')
    return path


FILES = {
    "gzip-cut": _gzip_cut,
    "gzip-corrupt": _gzip_corrupt,
    "empty": _empty,
    "bad-shard": _bad_shard,
    "repeated": _repeated,
    "repeated-late": _repeated_late,
    "not-utf8": _no_utf8,
}


@pytest.mark.parametrize("kind", list(FILES))
def test_every_command_refuses_a_broken_file_in_one_line(kind: str, tmp_path: Path) -> None:
    path = FILES[kind](tmp_path)
    got = _run_all(path, tmp_path)
    for name, (code, err) in got.items():
        if name == "watch":
            continue  # a run directory, not rows: it says what it lacks
        assert code == 2 and path.name in err, (kind, name, err)
        lines = {"repeated": 6, "repeated-late": 1020, "not-utf8": 17}
        if kind in lines:
            line = lines[kind]
            assert re.search(rf"{path.name}:{line}\b", err), (kind, name, err)


def test_the_installed_command_refuses_a_hostile_file_in_one_line(tmp_path: Path) -> None:
    path = _repeated(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "whilecli", "route", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(PREFIX), done.stderr
    assert f"{path.name}:6" in lines[0] and "reward" in lines[0]


#: Parquet cells for the id and the grade: ordinary, empty, missing and hostile ones.
PARQUET_IDS = st.sampled_from(["a", "b", "", "  ", None, "none", "\x00", "x" * 500])
PARQUET_GRADES = st.sampled_from(
    [1.0, 0.0, None, float("nan"), float("inf"), -float("inf"), 0.5, 2.0, -0.0, 1e308]
)


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    ids=st.lists(PARQUET_IDS, min_size=1, max_size=10),
    grades=st.lists(PARQUET_GRADES, min_size=10, max_size=10),
    text=st.booleans(),
)
def test_every_command_takes_a_hostile_parquet_file_or_refuses_it_in_one_line(
    tmp_path_factory: pytest.TempPathFactory, ids: list[str | None], grades: list[float], text: bool
) -> None:
    import polars as pl

    tmp = tmp_path_factory.mktemp("parquet")
    path = tmp / "rows.parquet"
    reward = [None if g is None else (str(g) if text else g) for g in grades[: len(ids)]]
    pl.DataFrame(
        {"task_id": ids, "reward": reward},
        schema={"task_id": pl.String, "reward": pl.String if text else pl.Float64},
    ).write_parquet(path)
    got = _run_all(path, tmp)
    refusal = _row_refusal(path)
    if refusal is not None:
        place = "" if refusal.row is None else f"row {refusal.row}"
        for name in ("route", "check", "diff", "size", "summarize", "ada"):
            code, err = got[name]
            assert code == 2 and path.name in err and place in err, (name, err, str(refusal))


# --- compressed streams: cut, damaged, followed by other bytes, or of a kind not read ------


def _zstd(data: bytes) -> bytes:
    import pyarrow as pa

    return bytes(pa.Codec("zstd").compress(data, asbytes=True))


def _decodable_lines(data: bytes) -> int:
    """Newlines in what a gzip stream decodes to before it breaks off (the damage's line is
    the one after them)."""
    import zlib

    return zlib.decompressobj(wbits=31).decompress(data).count(b"\n")


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    codec=st.sampled_from(["gzip", "zstd"]),
    lines=st.integers(16, 3000),
    damage=st.sampled_from(["cut", "trailing"]),
    cut=st.floats(0.05, 0.98),
    tail=st.binary(min_size=1, max_size=64).filter(lambda b: bool(b.strip(b"\x00"))),
)
def test_a_damaged_compressed_file_is_refused_at_its_line(
    tmp_path_factory: pytest.TempPathFactory,
    codec: str,
    lines: int,
    damage: str,
    cut: float,
    tail: bytes,
) -> None:
    """A compressed file cut short, or followed by bytes that are no stream: every command
    refuses it in one line naming the line the decoding stopped in (gzip: exactly the line;
    zstd, which decodes in blocks: that line or one before it), never the first line of a
    file whose damage is far into it."""
    tmp = tmp_path_factory.mktemp("codec")
    text = "".join(
        json.dumps({"task_id": f"t{i // 4}", "reward": float(i % 3 == 0), "pad": "x" * 80}) + "\n"
        for i in range(lines)
    ).encode()
    packed = gzip.compress(text) if codec == "gzip" else _zstd(text)
    data = packed[: max(10, int(len(packed) * cut))] if damage == "cut" else packed + tail
    path = tmp / f"rows.jsonl.{'gz' if codec == 'gzip' else 'zst'}"
    path.write_bytes(data)
    if damage == "trailing" and codec == "gzip" and tail.startswith(b"\x1f\x8b"):
        return  # the start of another gzip member: a stream of its own
    truth = lines + 1 if damage == "trailing" else None
    if codec == "gzip" and damage == "cut":
        truth = _decodable_lines(data) + 1
    for name, (code, err) in _run_all(path, tmp).items():
        if name == "watch":
            continue
        assert code == 2 and path.name in err, (name, err)
        found = re.search(rf"{path.name}:(\d+): cannot decompress", err)
        assert found is not None, (name, err)
        if truth is not None and codec == "gzip":
            assert int(found.group(1)) == truth, (name, err, truth)
        elif truth is not None:
            assert int(found.group(1)) <= truth, (name, err, truth)


@pytest.mark.parametrize("codec", ["bzip2", "xz"])
@pytest.mark.parametrize("named", [True, False])
def test_rows_compressed_by_a_tool_not_read_are_named(
    codec: str, named: bool, tmp_path: Path
) -> None:
    """bzip2 and xz streams are not read: a file of them (by its name or behind a .jsonl
    name, or on stdin) is refused naming the compression, never as text that is not UTF-8;
    in a folder beside other rows it is refused, never left out in silence."""
    import bz2
    import lzma

    data = bz2.compress(GOOD.encode()) if codec == "bzip2" else lzma.compress(GOOD.encode())
    suffix = ".bz2" if codec == "bzip2" else ".xz"
    path = tmp_path / ("rows.jsonl" + (suffix if named else ""))
    path.write_bytes(data)
    for name, (code, err) in _run_all(path, tmp_path).items():
        if name != "watch":
            assert code == 2 and f"compressed with {codec}" in err, (name, err)
    folder = tmp_path / "shards"
    folder.mkdir()
    (folder / "a.jsonl").write_text(GOOD)
    (folder / ("b.jsonl" + suffix)).write_bytes(data)
    code, err = _run_all(folder, tmp_path)["route"]
    assert code == 2 and f"b.jsonl{suffix}" in err and f"compressed with {codec}" in err, err
    result = CliRunner().invoke(app, ["route", "-"], input=data)
    assert result.exit_code == 2 and f"compressed with {codec}" in result.stderr


# --- links that loop ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["self", "pair", "in-folder"])
def test_a_loop_of_links_is_named_a_loop(kind: str, tmp_path: Path) -> None:
    if kind == "self":
        path = tmp_path / "self.jsonl"
        os.symlink(path.name, path)
    elif kind == "pair":
        path = tmp_path / "a.jsonl"
        os.symlink("b.jsonl", path)
        os.symlink("a.jsonl", tmp_path / "b.jsonl")
    else:
        path = tmp_path / "shards"
        path.mkdir()
        (path / "a.jsonl").write_text(GOOD)
        os.symlink("b.jsonl", path / "b.jsonl")
    for name, (code, err) in _run_all(path, tmp_path).items():
        if name != "watch":
            assert code == 2 and "loop of links" in err, (name, err)


# --- NUL bytes where text should be -------------------------------------------------------


@pytest.mark.parametrize("kind", ["utf-16-be", "utf-32", "zeros"])
def test_nul_bytes_in_a_line_are_named(kind: str, tmp_path: Path) -> None:
    """UTF-16 or UTF-32 text without a byte order mark, or zeros a crash left at a file's
    end: refused at the line, saying what the NUL bytes likely are."""
    data = {
        "utf-16-be": GOOD.encode("utf-16-be"),
        "utf-32": GOOD.encode("utf-32-le"),
        "zeros": GOOD.encode() + b"\x00" * 300,
    }[kind]
    path = tmp_path / "rows.jsonl"
    path.write_bytes(data)
    line = 17 if kind == "zeros" else 1
    for name, (code, err) in _run_all(path, tmp_path).items():
        if name != "watch":
            assert code == 2 and f"rows.jsonl:{line}:" in err and "NUL" in err, (name, err)


# --- Parquet values refused at their row ---------------------------------------------------


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rows=st.integers(2, 40),
    data=st.data(),
    kind=st.sampled_from(["bytes-not-text", "list-reward", "struct-reward"]),
)
def test_a_parquet_value_no_reader_takes_is_refused_at_its_row(
    tmp_path_factory: pytest.TempPathFactory, rows: int, data: st.DataObject, kind: str
) -> None:
    """A binary id column with bytes that are not UTF-8 from row ``bad``, or a reward column
    of lists or objects null before row ``bad``: every reading command names row ``bad``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    bad = data.draw(st.integers(0, rows - 1))
    ids = [f"t{i // 4}".encode() for i in range(rows)]
    grades: list[object] = [float(i % 2) for i in range(rows)]
    if kind == "bytes-not-text":
        ids[bad] = b"\xff\xfe" + ids[bad]
        table = pa.table({"task_id": pa.array(ids, pa.binary()), "reward": grades})
    else:
        cells = [None if i < bad else g for i, g in enumerate(grades)]
        wrapped = [c if c is None else [c] if kind == "list-reward" else {"s": c} for c in cells]
        table = pa.table({"task_id": [i.decode() for i in ids], "reward": wrapped})
    tmp = tmp_path_factory.mktemp("parquet-row")
    path = tmp / "rows.parquet"
    pq.write_table(table, path)
    got = _run_all(path, tmp)
    for name in ("route", "check", "diff", "size", "summarize", "ada"):
        code, err = got[name]
        assert code == 2 and f"row {bad}:" in err, (name, err, bad)


# --- hidden files in a folder of shards ----------------------------------------------------


@pytest.mark.parametrize("hidden", [".h.jsonl", ".#rows.jsonl", ".cache/c.jsonl"])
def test_a_folder_leaves_out_what_its_glob_leaves_out(hidden: str, tmp_path: Path) -> None:
    """A file under a name that begins with a dot (a file in progress, an editor's lock link,
    a cache folder) is no shard: a folder reads what ``folder/**/*.jsonl`` reads, never
    refused for it or counting its rows."""
    folder = tmp_path / "shards"
    (folder / ".cache").mkdir(parents=True)
    (folder / "a.jsonl").write_text(GOOD)
    if hidden == ".#rows.jsonl":
        os.symlink("user@host.1234:1700000000", folder / hidden)  # a link to nothing
    else:
        (folder / hidden).write_text(GOOD.replace('"t', '"u') + "garbage\n")
    spelled = {}
    for name, args in {"folder": str(folder), "glob": f"{folder}/**/*.jsonl"}.items():
        result = CliRunner().invoke(app, ["route", args, "--format", "json"])
        assert result.exit_code == 0, (hidden, name, result.stderr)
        spelled[name] = json.loads(result.stdout)["evidence"]
    assert spelled["folder"] == spelled["glob"], hidden
    got = _run_all(folder, tmp_path)
    assert all(code in (0, 1) for name, (code, _) in got.items() if name in ("route", "ada")), got
