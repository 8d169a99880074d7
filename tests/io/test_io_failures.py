"""Every I/O failure is one located line and exit 2 (DESIGN section 1; never a traceback or exit
70): corrupt compressed streams and containers (generated: each codec, cut or flipped at a
generated place, read by every reading command), unreadable files inside a directory, JSON that
is pretty-printed or nested too deeply (the line named), and one-line JSON documents."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io import sources
from whilecli.io.read import read_rows

ROWS = [
    {
        "task_id": f"t{i % 4}",
        "reward": float(i % 2),
        "logprobs": [-0.1, -0.2],
        "behavior_logprobs": [-0.1, -0.3],
        "action_mask": [1, 1],
    }
    for i in range(40)
]
TEXT = "".join(json.dumps(r) + "\n" for r in ROWS).encode()


def container(kind: str) -> tuple[str, bytes]:
    if kind == "gz":
        return "rows.jsonl.gz", gzip.compress(TEXT)
    if kind == "zst":
        return "rows.jsonl.zst", bytes(pa.compress(TEXT, codec="zstd", asbytes=True))
    if kind == "parquet":
        sink = pa.BufferOutputStream()
        import pyarrow.parquet as pq

        pq.write_table(pl.DataFrame(ROWS).to_arrow(), sink)
        return "rows.parquet", bytes(sink.getvalue().to_pybytes())
    return "rows.csv.gz", gzip.compress(b"task_id,reward\n" + b"t1,1\nt1,0\nt2,1\nt2,1\n" * 20)


COMMANDS = [["route"], ["ada"], ["update", "--method", "grpo"], ["check"]]


@settings(max_examples=40, deadline=None)
@example(  # a flipped byte in the footer's column names: pyarrow raised UnicodeDecodeError
    kind="parquet", how="flip", at=0.3125, command=["update", "--method", "grpo"], stdin=False
)
@example(  # a flipped byte in a page header, met only when the input columns are read
    kind="parquet", how="flip", at=0.09936926213982807, command=["ada"], stdin=False
)
@given(
    kind=st.sampled_from(["gz", "zst", "parquet", "csv"]),
    how=st.sampled_from(["flip", "cut"]),
    at=st.floats(0.0, 0.999),
    command=st.sampled_from(COMMANDS),
    stdin=st.booleans(),
)
def test_a_corrupt_container_is_one_line_and_exit_2(
    tmp_path_factory: pytest.TempPathFactory,
    kind: str,
    how: str,
    at: float,
    command: list[str],
    stdin: bool,
) -> None:
    name, data = container(kind)
    broken = bytearray(data)
    i = int(at * len(broken))
    if how == "flip":
        broken[i] ^= 0xFF
    else:
        del broken[max(i, 1) :]
    path = tmp_path_factory.mktemp("c") / name
    path.write_bytes(bytes(broken))
    if stdin:
        result = CliRunner().invoke(app, [*command, "-"], input=bytes(broken))
    else:
        result = CliRunner().invoke(app, [*command, str(path)])
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.output[-2000:])
    if result.exit_code == 2:
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("whilecli: error: "), result.output
        assert ("<stdin>" if stdin else str(path)) in lines[0], lines[0]


def test_an_unreadable_file_inside_a_directory_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.jsonl").write_bytes(TEXT)
    locked = tmp_path / "b.jsonl"
    locked.write_bytes(TEXT)
    locked.chmod(0)
    if os.geteuid() == 0:  # root reads anything: deny it as a non-root user would be denied
        real = os.access
        monkeypatch.setattr(
            sources.os, "access", lambda p, mode: False if Path(p) == locked else real(p, mode)
        )
    for command in COMMANDS:
        result = CliRunner().invoke(app, [*command, str(tmp_path)])
        assert result.exit_code == 2, result.output
        assert result.output.strip() == (
            f"whilecli: error: {locked}: file is not readable (permission denied)"
        )


@pytest.mark.parametrize("given", ["folder", "glob"])
@pytest.mark.parametrize("shard", ["b.jsonl", "b.parquet", "sub/b.jsonl.gz"])
def test_a_link_to_nothing_among_the_shards_is_named(
    tmp_path: Path, given: str, shard: str
) -> None:
    """A shard that is a link whose target is gone is unreadable: named, never left out."""
    (tmp_path / "a.jsonl").write_bytes(TEXT)
    link = tmp_path / shard
    link.parent.mkdir(exist_ok=True)
    link.symlink_to(tmp_path / "gone" / link.name)
    arg = str(tmp_path) if given == "folder" else str(link.parent / "*")
    for command in COMMANDS:
        result = CliRunner().invoke(app, [*command, arg])
        assert result.exit_code == 2, result.output
        assert result.output.startswith(f"whilecli: error: {link}: cannot read: a link to "), (
            result.output
        )
        assert "does not exist" in result.output and "\n" not in result.output.strip()


def test_an_unlistable_folder_inside_a_directory_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.jsonl").write_bytes(TEXT)
    (tmp_path / "sub").mkdir()
    real = os.scandir

    def scandir(path: str | os.PathLike[str]) -> object:
        if Path(path) == tmp_path / "sub":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(InputError, match=r"sub: cannot list the folder: permission denied"):
        sources.expand_paths([str(tmp_path)])


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ('{"task_id": "a", "reward": 1}\n{\n  "task_id": "b",\n  "reward": 0\n}\n', 2, "cut off"),
        ('{\n  "task_id": "b",\n  "reward": 0\n}\n{\n  "task_id": "c"\n}\n', 5, "several JSON"),
        ('{"task_id": "a", "reward": 1}\n' + "[" * 5000 + "]" * 5000 + "\n", 2, "too deeply"),
        ("[" * 3000 + "]" * 3000 + "\n", 1, "too deeply"),
        # objects nested too deeply on every line, the first too: rows, never a document
        (('{"a":' * 200 + "1" + "}" * 200 + "\n") * 3, 1, "too deeply"),
        ('{"task_id": "a", "x": ' + '{"a":' * 200 + "1" + "}" * 201 + "\n", 1, "too deeply"),
        ('{"task_id": "a", "reward": 1}\n{"task_id": "b" "reward": 0}\n', 2, "not valid JSON"),
    ],
)
def test_json_errors_name_the_line(tmp_path: Path, text: str, line: int, what: str) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_rows([str(path)])
    assert str(caught.value).startswith(f"{path}:{line}: "), str(caught.value)
    assert what in str(caught.value)


def test_one_line_json_object_is_one_document(tmp_path: Path) -> None:
    rows = [{"task_id": "a", "reward": 1}, {"task_id": "a", "reward": 0}]
    for key in ("rows", "samples", "records", "data"):
        path = tmp_path / f"{key}.json"
        path.write_text(json.dumps({key: rows, "model": "m"}) + "\n")
        frame = read_rows([str(path)]).frame.collect()
        assert frame["reward"].to_list() == [1.0, 0.0] and frame["model"].to_list() == ["m"] * 2
    other = tmp_path / "config.jsonl"
    other.write_text(json.dumps({"lr": 0.1, "name": "x", "layers": [1, 2]}) + "\n")
    with pytest.raises(InputError, match="this is one JSON document, not JSON Lines"):
        read_rows([str(other)])
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps({"task_id": "a", "reward": 1}) + "\n")
    assert read_rows([str(one)]).frame.collect().height == 1


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from([b"\n", b"a", b"{}", b" ", b"xyz" * 7, b"\n" * 9, b"\t\r\n", b" \n"]),
        max_size=40,
    ).map(b"".join),
    st.integers(1, 9),
)
def test_lines_are_split_as_a_slow_split_does(data: bytes, chunk: int) -> None:
    """Whatever the chunk boundaries, the lines (numbered, blank ones skipped, runs of them a
    step at a time) are those of a plain split; a long line costs time linear in its length
    (its pieces joined once)."""
    source = sources.Source(name="mem", kind="jsonl", data=data)
    want = [(n + 1, line) for n, line in enumerate(data.split(b"\n")) if line.strip()]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sources, "READ_CHUNK", chunk)
        assert list(sources.iter_lines(source)) == want


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.sampled_from([b"\n", b"[", b"{", b"]", b"a", b" ", b"[[[["]), max_size=60).map(
        b"".join
    ),
    st.integers(1, 9),
    st.integers(0, 5),
    st.integers(0, 4),
)
def test_bracketed_lines_are_those_of_a_slow_split(
    data: bytes, chunk: int, more_than: int, after: int
) -> None:
    """The lines the depth guard looks at are numbered and cut as iter_lines cuts them (one
    splitter), whatever the chunk boundaries: those past ``after`` with more than
    ``more_than`` opening brackets."""
    source = sources.Source(name="mem", kind="jsonl", data=data)
    want = [
        (n + 1, line)
        for n, line in enumerate(data.split(b"\n"))
        if line.count(b"[") + line.count(b"{") > more_than and n + 1 > after
    ]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sources, "BRACKET_CHUNK", chunk)
        assert list(sources.bracketed_lines(source, more_than, after)) == want


@settings(max_examples=40, deadline=None)
@given(
    key=st.sampled_from([None, "samples", "rows", "records", "data"]),
    bad=st.sampled_from([None, "empty", 5, "text", [1], None]),
    at=st.integers(0, 5),
    name=st.sampled_from(["doc.json", "doc.jsonl", "doc.json.gz", "doc.jsonl.zst"]),
    pretty=st.booleans(),
    bom=st.booleans(),
)
def test_a_json_document_of_rows_is_read_or_refused_at_its_entry(
    tmp_path_factory: pytest.TempPathFactory,
    key: str | None,
    bad: object,
    at: int,
    name: str,
    pretty: bool,
    bom: bool,
) -> None:
    """One JSON document (an array, or an object holding the rows under a key; on one line or
    pretty-printed; behind a byte order mark; compressed): its rows, as many as it holds, or
    one line naming the file and the entry that is not a row (or the empty list)."""
    rows: list[object] = [{"task_id": f"t{i % 3}", "reward": float(i % 2)} for i in range(6)]
    if bad == "empty":
        rows = []
    elif bad is not None:
        rows.insert(at, bad)
    doc: object = rows if key is None else {key: rows, "model": "m"}
    text = (b"\xef\xbb\xbf" if bom else b"") + json.dumps(
        doc, indent=2 if pretty else None
    ).encode()
    if name.endswith(".gz"):
        text = gzip.compress(text)
    elif name.endswith(".zst"):
        text = bytes(pa.compress(text, codec="zstd", asbytes=True))
    path = tmp_path_factory.mktemp("doc") / name
    path.write_bytes(text)
    if bad is None:
        assert read_rows([str(path)]).frame.collect().height == 6
        return
    with pytest.raises(InputError) as caught:
        read_rows([str(path)])
    said = str(caught.value)
    assert "\n" not in said and said.startswith(f"{path}:"), said
    if bad == "empty":
        assert "no rows" in said, said
    else:
        entry = f"entry {at}" if key is None else f"{key}[{at}]"
        assert entry in said and "must be a JSON object" in said, said
    result = CliRunner().invoke(app, ["route", str(path)])
    assert result.exit_code == 2 and said.split(": ", 1)[1] in result.output, result.output
