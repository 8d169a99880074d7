"""Hostile input: every generated file ends in valid rows or a one-line ``WhileError``.

Hypothesis writes JSONL and Parquet with wrong types per field, NaN and ±inf, mixed types in
a column, duplicate keys, truncated files, invalid UTF-8, enormous lines, empty files and
unicode task ids. Whatever comes in, ``read_rows`` returns a frame in the canonical schema
with every task id present and every reward finite, or raises a ``WhileError`` on one line;
any other exception fails. ``OUTCOMES`` counts the cases; the last test checks both ends
were reached.
"""

from __future__ import annotations

import io
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.errors import WhileError
from whilecli.route.model import CANONICAL_SCHEMA
from whilecli.route.read import read_rows

OUTCOMES: Counter[str] = Counter()
FUZZ = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
)
ANY = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
GOOD_TASK = st.one_of(st.integers(0, 4), st.sampled_from(["a", "é", "日本", "1", "", "\u0000"]))
GOOD_REWARD = st.sampled_from([0, 1, 0.5, 0.25, True, False, 1.0])
BAD_REWARD = st.one_of(
    st.sampled_from([1.5, -1, "1", "x"]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.just(10**400),
    ANY,
)


def mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``good`` nine times in ten, so that whole files of valid rows come up too."""
    return st.integers(0, 9).flatmap(lambda i: bad if i == 0 else good)


TASK = mostly(GOOD_TASK, ANY)
REWARD = mostly(GOOD_REWARD, BAD_REWARD)
NAME = st.text(max_size=6)
EXTRAS: dict[str, st.SearchStrategy[Any]] = {
    "example_id": GOOD_TASK,
    "prompt": st.one_of(NAME, st.lists(st.fixed_dictionaries({"content": NAME}), max_size=2)),
    "score": GOOD_REWARD,
    "correct": st.booleans(),
    "truncated": st.one_of(st.none(), st.booleans()),
    "finish_reason": st.one_of(st.none(), st.sampled_from(["stop", "length"])),
    "model": st.one_of(st.none(), NAME),
    "policy_version": st.one_of(st.none(), st.sampled_from(["m@1", "m@2", "n"])),
    "response": st.fixed_dictionaries({"id": NAME, "incomplete_details": st.none()}),
    "steps": st.lists(st.fixed_dictionaries({"truncated": st.booleans()}), max_size=2),
    "task": NAME,
    "agent_model": NAME,
    "values": st.lists(st.floats(-1, 1), max_size=2),
}
KEYS = sorted(EXTRAS)


@st.composite
def rows(draw: st.DrawFn) -> list[dict[str, Any]]:
    out = []
    for _ in range(draw(st.integers(1, 6))):
        row: dict[str, Any] = {}
        if draw(st.integers(0, 19)) > 0:
            row["task_id"] = draw(TASK)
        if draw(st.integers(0, 19)) > 0:
            row["reward"] = draw(REWARD)
        for key in draw(st.lists(st.sampled_from(KEYS), max_size=2)):
            row[key] = draw(mostly(EXTRAS[key], ANY))
        out.append(row)
    return out


def encode(row: dict[str, Any], duplicate: bool) -> bytes:
    text = json.dumps(row, allow_nan=True, ensure_ascii=False)
    if duplicate and text.endswith("}") and len(text) > 2:
        text = text[:-1] + ', "reward": 0}'
    return text.encode("utf-8", "surrogatepass")


@st.composite
def jsonl_bytes(draw: st.DrawFn) -> bytes:
    lines = [encode(r, draw(st.integers(0, 9)) == 0) for r in draw(rows())]
    if draw(st.integers(0, 5)) == 0:
        lines.insert(draw(st.integers(0, len(lines))), b"")
    if draw(st.integers(0, 9)) == 0:
        lines.append(b'{"task_id": "big", "reward": 1, "pad": "' + b"x" * 60_000 + b'"}')
    data = b"\n".join(lines) + b"\n"
    mutation = draw(st.integers(0, 11))
    if mutation == 0:
        data = data[: draw(st.integers(0, len(data)))]  # a truncated file
    elif mutation == 1:
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80"])) + data[at:]
    elif mutation == 2:
        data = b""
    return data


def check(call: Any) -> None:
    """Valid canonical rows, or a one-line WhileError; anything else fails the test."""
    try:
        got = call()
    except WhileError as err:
        assert "\n" not in str(err) and err.exit_code == 2
        OUTCOMES["error"] += 1
        return
    frame = got.frame.collect()
    assert frame.schema == pl.Schema(CANONICAL_SCHEMA)
    assert frame.height > 0
    assert frame["task_id"].null_count() == 0
    assert all(math.isfinite(r) for r in frame["reward"].to_list())
    assert frame["passed"].null_count() == 0
    assert isinstance(got.sources, dict) and "task_id" in got.sources
    OUTCOMES["rows"] += 1


@FUZZ
@given(data=jsonl_bytes(), threshold=st.sampled_from([None, 0.5]))
def test_fuzz_jsonl_file(tmp_path: Path, data: bytes, threshold: float | None) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(data)
    check(lambda: read_rows([str(path)], pass_threshold=threshold))


@FUZZ
@given(data=jsonl_bytes())
def test_fuzz_stdin(data: bytes) -> None:
    check(lambda: read_rows(["-"], stdin=io.BytesIO(data)))


COLUMN = st.one_of(
    st.lists(
        st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)), min_size=1, max_size=6
    ),
    st.lists(st.one_of(st.none(), st.integers(-3, 3)), min_size=1, max_size=6),
    st.lists(st.one_of(st.none(), st.booleans()), min_size=1, max_size=6),
    st.lists(st.one_of(st.none(), st.text(max_size=5)), min_size=1, max_size=6),
    st.lists(st.lists(st.integers(0, 2), max_size=2), min_size=1, max_size=6),
)


@FUZZ
@given(
    columns=st.dictionaries(
        st.sampled_from(
            ["task_id", "example_id", "reward", "score", "truncated", "model", "prompt"]
        ),
        COLUMN,
        min_size=1,
        max_size=4,
    ),
    cut=st.one_of(st.none(), st.integers(0, 400)),
)
def test_fuzz_parquet(tmp_path: Path, columns: dict[str, list[Any]], cut: int | None) -> None:
    height = min(len(v) for v in columns.values())
    try:
        frame = pl.DataFrame({k: v[:height] for k, v in columns.items()}, strict=False)
    except Exception:  # a column polars itself cannot build: nothing to write
        return
    path = tmp_path / "fuzz.parquet"
    frame.write_parquet(path)
    if cut is not None:
        path.write_bytes(path.read_bytes()[:cut])
    check(lambda: read_rows([str(path)]))


# --- properties: the reader against plain-Python readings of DESIGN section 1 -------------


def jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def read_file(path: Path, **kwargs: Any) -> tuple[pl.DataFrame, Any]:
    rows = read_rows([str(path)], **kwargs)
    frame = rows.frame.collect()
    assert frame.schema == pl.Schema(CANONICAL_SCHEMA)
    return frame, rows


ROW = st.fixed_dictionaries(
    {
        "task_id": st.one_of(st.integers(0, 5), st.sampled_from(["a", "b", "ü", "1"])),
        "reward": st.one_of(st.sampled_from([0, 1, 0.0, 1.0, True, False]), st.floats(0, 1)),
    },
    optional={
        "truncated": st.booleans(),
        "model": st.sampled_from(["m", "m@1", "n@2"]),
    },
)


def expected(rows: list[dict[str, Any]], threshold: float) -> dict[str, list[Any]]:
    """DESIGN section 1 by hand, row by row."""
    out: dict[str, list[Any]] = {k: [] for k in CANONICAL_SCHEMA}
    for row in rows:
        reward = float(row["reward"])
        model = row.get("model")
        out["task_id"].append(str(row["task_id"]))
        out["reward"].append(reward)
        out["passed"].append(reward >= threshold)
        out["truncated"].append(
            row.get("truncated") if any("truncated" in r for r in rows) else None
        )
        out["model"].append(None if model is None else model.split("@")[0])
        out["policy_version"].append(model if model and "@" in model else None)
    return out


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=st.lists(ROW, min_size=1, max_size=12), threshold=st.sampled_from([None, 0.5, 1.0]))
def test_jsonl_and_parquet_match_the_plain_reading(
    tmp_path: Path, rows: list[dict[str, Any]], threshold: float | None
) -> None:
    want = expected(rows, 1.0 if threshold is None else threshold)
    frame, meta = read_file(jsonl(tmp_path / "rows.jsonl", rows), pass_threshold=threshold)
    assert frame.to_dict(as_series=False) == want
    partial = sum(0 < float(r["reward"]) < 1 for r in rows)
    assert meta.partial_rows == partial
    table = pl.DataFrame(
        {
            "task_id": [str(r["task_id"]) for r in rows],
            "reward": [float(r["reward"]) for r in rows],
            "model": [r.get("model") for r in rows],
        },
        schema={"task_id": pl.String, "reward": pl.Float64, "model": pl.String},
    )
    table.write_parquet(tmp_path / "rows.parquet")
    got, _ = read_file(tmp_path / "rows.parquet", pass_threshold=threshold)
    for key in ("task_id", "reward", "passed", "model", "policy_version"):
        assert got[key].to_list() == want[key]


NESTED = st.fixed_dictionaries(
    {
        "task_id": st.sampled_from(["a", "b", "c"]),
        "rewards": st.dictionaries(
            st.sampled_from(["r1", "r2"]),
            st.one_of(
                st.none(),
                st.fixed_dictionaries(
                    {"score": st.sampled_from([0.0, 0.5, 1.0])},
                    optional={"weight": st.sampled_from([0.0, 0.5, 1.0])},
                ),
            ),
        ),
        "response": st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {
                    "id": st.just("r"),
                    "incomplete_details": st.one_of(
                        st.none(),
                        st.fixed_dictionaries(
                            {"reason": st.sampled_from(["max_output_tokens", "content_filter"])}
                        ),
                    ),
                },
                optional={"model": st.sampled_from(["x", "y@3"])},
            ),
        ),
    },
    optional={"model": st.sampled_from(["m", "n@1"])},
)


def expected_nested(row: dict[str, Any]) -> tuple[Any, ...]:
    """Σ score × weight (weight 1 when absent, unscored rewards skipped); truncation from
    response.incomplete_details (a response without it finished; no response: unknown);
    the model from ``model``, else ``response.model``, before any '@'."""
    reward = sum(r["score"] * r.get("weight", 1.0) for r in row["rewards"].values() if r)
    response = row["response"]
    if response is None:
        truncated = None
    else:
        details = response["incomplete_details"] or {}
        truncated = details.get("reason") == "max_output_tokens"
    writer = row.get("model") or (response or {}).get("model")
    version = writer if writer and "@" in writer else None
    model = writer.split("@")[0] if writer else None
    return row["task_id"], reward, truncated, model, version


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=st.lists(NESTED, min_size=1, max_size=8))
def test_nested_aliases_fast_and_line_by_line_agree(
    tmp_path: Path, rows: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    if not any(r["rewards"] for r in rows):  # an empty rewards dict everywhere: no reward
        rows[0]["rewards"] = {"r1": None}
    want = [expected_nested(r) for r in rows]
    columns = ("task_id", "reward", "truncated", "model", "policy_version")
    path = jsonl(tmp_path / "nested.jsonl", rows)
    fast = read_rows([str(path)], pass_threshold=1.0).frame.collect().select(columns).rows()
    with monkeypatch.context() as patch:  # polars refuses the file: the line-by-line reader
        patch.setattr(pl, "scan_ndjson", _refuse)
        slow = read_rows([str(path)], pass_threshold=1.0).frame.collect().select(columns).rows()
    assert fast == want
    assert slow == want


def _refuse(*args: Any, **kwargs: Any) -> pl.LazyFrame:
    raise pl.exceptions.ComputeError("refused for the test")


def test_fuzz_reached_both_outcomes() -> None:
    """The cases counted above include both valid rows and refusals (run after the fuzzers)."""
    if sum(OUTCOMES.values()) == 0:  # run on its own
        return
    assert OUTCOMES["rows"] > 0 and OUTCOMES["error"] > 0, dict(OUTCOMES)
    print(f"fuzz cases: {dict(OUTCOMES)}")
