"""The batch reader of ``while update`` (``whilecli.io.batch``): JSONL through Arrow, errors
located at the line and field, and the same tensors as a plain ``json.loads`` reader."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import whilecli.io.batch as batch_io
from whilecli.errors import InputError
from whilecli.io.batch import read_batch, read_jsonl
from whilecli.io.read import read_rows
from whilecli.methods.batch import Batch
from whilecli.methods.grpo import GRPO

INTERNALS = ("InvalidNumber", "TapeError", "supertype", "character", "Static(", "polars")


def row(i: int, **extra: Any) -> dict[str, Any]:
    return {
        "task_id": f"t{i // 2}",
        "reward": float(i % 2),
        "logprobs": [-0.1 * (i + 1), -0.2],
        "action_mask": [1, 1],
        **extra,
    }


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def good_lines(n: int) -> list[str]:
    return [json.dumps(row(i)) for i in range(n)]


def located(path: Path) -> InputError:
    with pytest.raises(InputError) as err:
        Batch.from_columns(read_batch(path))
    text = str(err.value)
    assert "\n" not in text
    assert not any(word in text for word in INTERNALS), text
    return err.value


@pytest.mark.parametrize(
    ("bad", "field", "words"),
    [
        ({"logprobs": [-0.1, "x"]}, "logprobs", "number"),
        ({"logprobs": [-0.1, None]}, "logprobs", "None"),
        ({"reward": "high"}, "reward", "number"),
        ({"action_mask": [1, "1"]}, "action_mask", "number"),
        ({"logprobs": "abc"}, "logprobs", "list"),
        ({"values": [0.5, {"v": 1}]}, "values", "object"),
        ({"logprobs": [-0.1, 1e400]}, "logprobs", "finite"),
        ({"truncated": [True]}, "truncated", "true/false"),
    ],
)
def test_a_bad_value_is_named_at_its_line_and_field(
    tmp_path: Path, bad: dict, field: str, words: str
) -> None:
    lines = good_lines(20)
    lines[16] = json.dumps({**row(16), **bad}).replace("Infinity", "1e400")
    lines.insert(3, "")  # a blank line counts: the bad row is on line 18
    err = located(write_lines(tmp_path / "batch.jsonl", lines))
    assert err.file is not None and err.file.endswith("batch.jsonl")
    assert (err.line, err.field) == (18, field)
    assert words in str(err)


def test_invalid_utf8_is_named_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "batch.jsonl"
    lines = [line.encode() for line in good_lines(5)]
    lines[2] = lines[2].replace(b'"t1"', b'"t\xff\xfe"')
    path.write_bytes(b"\n".join(lines) + b"\n")
    err = located(path)
    assert err.line == 3 and "UTF-8" in str(err)


def test_a_parquet_file_named_jsonl_is_read_as_parquet(tmp_path: Path) -> None:
    rows = [row(i) for i in range(4)]
    rows = [{**r, "action_mask": [bool(m) for m in r["action_mask"]]} for r in rows]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "really.jsonl")
    write_lines(tmp_path / "b.jsonl", [json.dumps(r) for r in rows])
    a = Batch.from_columns(read_batch(tmp_path / "really.jsonl"))
    b = Batch.from_columns(read_batch(tmp_path / "b.jsonl"))
    for name in ("logprobs", "mask", "action_mask", "rewards"):
        assert torch.equal(getattr(a, name), getattr(b, name)), name
    assert a.task_ids == b.task_ids == ["t0", "t0", "t1", "t1"]


@pytest.mark.parametrize("where", ["extra", "logprobs"])
def test_json_nested_thousands_deep_is_refused_at_its_line(tmp_path: Path, where: str) -> None:
    lines = good_lines(4)
    deep = "[" * 5000 + "]" * 5000
    lines[1] = lines[1][:-1] + f', "{where}": {deep}' + "}"
    if where == "logprobs":  # the repeated key comes first, so it is the one read
        lines[1] = "{" + f'"logprobs": {deep}, ' + lines[1][1:]
    err = located(write_lines(tmp_path / "batch.jsonl", lines))
    assert err.line == 2 and "deep" in str(err)


def test_nesting_past_the_parsers_guard_is_refused_as_the_route_refuses_it(
    tmp_path: Path,
) -> None:
    """600 levels: polars reads it, the one JSON parser does not; a batch is held to the
    parser's guard, as the route's rows are."""
    lines = good_lines(4)
    lines[1] = lines[1][:-1] + ', "extra": ' + "[" * 600 + "]" * 600 + "}"
    err = located(write_lines(tmp_path / "batch.jsonl", lines))
    assert err.line == 2 and "nested too deeply" in str(err)
    with pytest.raises(InputError, match="nested too deeply"):
        read_rows([str(tmp_path / "batch.jsonl")])


def test_a_nested_list_where_a_token_list_belongs(tmp_path: Path) -> None:
    lines = good_lines(3)
    lines[1] = json.dumps({**row(1), "logprobs": [[-0.1], [-0.2]]})
    err = located(write_lines(tmp_path / "batch.jsonl", lines))
    assert (err.line, err.field) == (2, "logprobs")
    assert "nested list" in str(err)


def test_a_repeated_key_is_read_once_or_refused(tmp_path: Path) -> None:
    """A key written twice with its own value is read once; with two values (readers
    disagree on which counts) the batch is refused at the line, naming the key, on the whole
    read and on the line-by-line one alike."""
    line = '{"task_id": "a", "reward": 1, "reward": 1.0, "logprobs": [-0.1], "logprobs": [-0.1]}'
    path = write_lines(tmp_path / "batch.jsonl", [line, line.replace('"a"', '"b"')])
    batch = Batch.from_columns(read_batch(path))
    assert batch.rewards.tolist() == [1.0, 1.0]
    assert batch.logprobs.tolist() == [[-0.1], [-0.1]]
    rows, lines = read_jsonl(path)
    assert rows[0]["reward"] == 1 and rows[0]["logprobs"] == [-0.1] and lines == [1, 2]
    two = line.replace('"reward": 1.0', '"reward": 0')
    # the line-by-line reader (here: a mask mixing booleans and numbers) refuses alike
    mixed = two.replace('"logprobs": [-0.1],', '"logprobs": [-0.1], "action_mask": [true],', 1)
    for first in (two, mixed):
        write_lines(path, [line, first.replace("[true]", "[1]"), first])
        with pytest.raises(InputError, match=r"batch\.jsonl:2: field 'reward': written twice"):
            read_batch(path)
        with pytest.raises(InputError, match=r"batch\.jsonl:2: field 'reward': written twice"):
            read_jsonl(path)


@pytest.mark.parametrize("slow", [False, True])
def test_ids_1_and_1_0_are_one_task(tmp_path: Path, slow: bool) -> None:
    ids: list[Any] = [1, 1.0, "1", 2, 2.0]
    rows = [{**row(i), "task_id": t, "reward": float(i % 2)} for i, t in enumerate(ids)]
    if slow:  # booleans and numbers in one mask column: read line by line
        rows[0]["action_mask"] = [True, True]
    path = write_lines(tmp_path / "batch.jsonl", [json.dumps(r) for r in rows])
    batch = Batch.from_columns(read_batch(path), require={"task_id"})
    assert batch.task_ids == ["1", "1", "1", "2", "2"]
    adv = GRPO().update(batch).advantages[:, 0].tolist()
    # group "1" holds rewards 0, 1, 0; group "2" holds 1, 0
    assert adv[0] == adv[2] < 0 < adv[1] and adv[3] == -adv[4] > 0


def test_the_happy_path_parses_no_line_in_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []
    real = batch_io.parse_line

    def counted(*args: Any) -> Any:
        calls.append(args[1])
        return real(*args)

    monkeypatch.setattr(batch_io, "parse_line", counted)
    cols = read_batch(write_lines(tmp_path / "batch.jsonl", good_lines(50)))
    assert cols.size == 50 and calls == []  # polars reads every line, Arrow the lists


def test_gzip_files_and_directories_read_as_the_route_reads_them(tmp_path: Path) -> None:
    (tmp_path / "shards").mkdir()
    data = "".join(line + "\n" for line in good_lines(4)).encode()
    (tmp_path / "shards" / "a.jsonl.gz").write_bytes(gzip.compress(data))
    write_lines(tmp_path / "shards" / "b.jsonl", [json.dumps(row(7, reward="bad"))])
    one = read_batch(tmp_path / "shards" / "a.jsonl.gz")
    assert one.size == 4 and one.task_ids == ["t0", "t0", "t1", "t1"]
    with pytest.raises(InputError, match=r"b\.jsonl:1: field 'reward'"):
        read_batch(tmp_path / "shards")
    write_lines(tmp_path / "shards" / "b.jsonl", [json.dumps(row(7)), json.dumps(row(8))])
    both = read_batch(tmp_path / "shards")
    assert both.size == 6 and both.task_ids == ["t0", "t0", "t1", "t1", "t3", "t4"]
    assert both.where(5)["file"].endswith("b.jsonl") and both.where(5)["line"] == 2
    write_lines(tmp_path / "shards" / "b.jsonl", [json.dumps(row(7, logprobs=[0.5, -0.1]))])
    with pytest.raises(InputError, match=r"b\.jsonl:1: field 'logprobs'"):
        Batch.from_columns(read_batch(tmp_path / "shards"))


# ---------------------------------------------------------------- against a plain reader


def reference(path: Path) -> dict[str, Any]:
    """The batch as a plain ``json.loads`` per line pads it (first alias wins)."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    t_max = max(len(r["logprobs"]) for r in rows)

    def pad(values: list[float]) -> list[float]:
        return [float(v) for v in values] + [0.0] * (t_max - len(values))

    out: dict[str, Any] = {
        "logprobs": [pad(r["logprobs"]) for r in rows],
        "mask": [[t < len(r["logprobs"]) for t in range(t_max)] for r in rows],
        "rewards": [float(r["reward"]) for r in rows],
        "action_mask": [
            [
                t < len(r["logprobs"]) and bool(r.get("action_mask", [1] * t_max)[t])
                for t in range(t_max)
            ]
            for r in rows
        ],
        "task_ids": [batch_io.render_text(r["task_id"]) for r in rows],
    }
    if any("values" in r for r in rows):
        out["values"] = [pad(r["values"]) for r in rows]
    if any("behavior_logprobs" in r for r in rows):
        out["behavior_logprobs"] = [pad(r["behavior_logprobs"]) for r in rows]
    return out


logprob = st.one_of(
    st.floats(-50.0, 0.0, allow_nan=False),
    st.floats(-1e-300, 0.0),
    st.integers(-5, 0),
    st.sampled_from([-1e-310, -2.2250738585072014e-308, -0.1, -1 / 3, -0.0]),
)
task = st.one_of(
    st.integers(-3, 3),
    st.integers(-3, 3).map(float),
    st.sampled_from(["a", "b", "1", 0.5, 1e-7, 1e20, 1.5e300, True]),
)


@st.composite
def batches(draw: st.DrawFn) -> list[dict[str, Any]]:
    n = draw(st.integers(1, 8))
    with_values = draw(st.booleans())
    with_behavior = draw(st.sampled_from(["none", "all", "some"]))
    bool_mask = draw(st.sampled_from([True, False, None]))
    rows = []
    for _ in range(n):
        length = draw(st.integers(1, 12))
        lp = draw(st.lists(logprob, min_size=length, max_size=length))
        r: dict[str, Any] = {
            "task_id": draw(task),
            "reward": draw(st.one_of(st.floats(-10, 10, allow_nan=False), st.integers(0, 1))),
            "logprobs": lp,
        }
        if bool_mask is not None:
            bits = draw(st.lists(st.booleans(), min_size=length, max_size=length))
            r["action_mask"] = bits if bool_mask else [int(b) for b in bits]
        if with_values:
            r["values"] = draw(
                st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=length, max_size=length)
            )
        if with_behavior == "all" or (with_behavior == "some" and draw(st.booleans())):
            r["behavior_logprobs"] = draw(st.lists(logprob, min_size=length, max_size=length))
        rows.append(r)
    return rows


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=batches())
def test_tensors_equal_a_plain_json_reader(tmp_path: Path, rows: list[dict[str, Any]]) -> None:
    path = tmp_path / "batch.jsonl"
    write_lines(path, [json.dumps(r) for r in rows])
    lacking = [i for i, r in enumerate(rows) if "behavior_logprobs" not in r]
    if lacking and len(lacking) < len(rows):  # on some rows only: refused, never filled in
        with pytest.raises(InputError, match="missing here but present on") as err:
            Batch.from_columns(read_batch(path), logprob_fields=())
        assert err.value.line == lacking[0] + 1 and err.value.field == "behavior_logprobs"
        return
    batch = Batch.from_columns(read_batch(path), logprob_fields=())
    want = reference(path)
    for name in ("logprobs", "rewards", "values", "behavior_logprobs"):
        got = getattr(batch, name)
        if name not in want:
            assert got is None, name
            continue
        expected = torch.tensor(want[name], dtype=torch.float64)
        assert torch.equal(got, expected), name
        assert [math.copysign(1, v) for v in got.flatten().tolist()] == [
            math.copysign(1, v) for v in expected.flatten().tolist()
        ], name
    assert batch.mask.tolist() == want["mask"]
    assert batch.action_mask.tolist() == want["action_mask"]
    assert batch.task_ids == want["task_ids"]
    # the line-by-line reader, which a failed fast read falls back to, reads the same
    parsed, lines = read_jsonl(path)
    exact = Batch.from_columns(batch_io.columns_from_rows(parsed, lines=lines), logprob_fields=())
    for name in ("logprobs", "rewards", "values", "behavior_logprobs", "mask", "action_mask"):
        a, b = getattr(batch, name), getattr(exact, name)
        assert (a is None and b is None) or torch.equal(a, b), name
    assert exact.task_ids == batch.task_ids


def test_a_parquet_float_id_reads_as_the_jsonl_one(tmp_path: Path) -> None:
    table = pa.table({"task_id": [1.0, 1.0, 2.5], "reward": [0.0, 1.0, 1.0]})
    table = table.append_column("logprobs", pa.array([[-0.1], [-0.2], [-0.3]]))
    pq.write_table(table, tmp_path / "b.parquet")
    assert read_batch(tmp_path / "b.parquet").task_ids == ["1", "1", "2.5"]
