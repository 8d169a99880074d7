"""The reader against plain-Python readings of DESIGN section 1 (hypothesis properties).

Generated rows are written as JSONL and Parquet and read back; every canonical column must
equal what the alias table gives row by row by hand, and the fast (polars) and line-by-line
(Python) readers must agree on nested aliases.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from read_helpers import frame_of as read_file
from read_helpers import jsonl
from whilecli.errors import InputError
from whilecli.io.read import read_rows
from whilecli.route.model import CANONICAL_SCHEMA

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
        out["passed"].append(reward >= threshold - 2.0**-22)
        out["truncated"].append(
            row.get("truncated") if any("truncated" in r for r in rows) else None
        )
        out["model"].append(None if model is None else model.split("@")[0])
        out["policy_version"].append(model if model and "@" in model else None)
        out["graded"].append(True)
        out["reply"].append("ok")
    return out


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=st.lists(ROW, min_size=1, max_size=12), threshold=st.sampled_from([None, 0.5, 1.0]))
def test_jsonl_and_parquet_match_the_plain_reading(
    tmp_path: Path, rows: list[dict[str, Any]], threshold: float | None
) -> None:
    want = expected(rows, 1.0 if threshold is None else threshold)
    partial = sum(2.0**-22 < float(r["reward"]) < 1 - 2.0**-22 for r in rows)
    if threshold is None and partial >= 0.1 * len(rows):  # not a pass/fail without a threshold
        with pytest.raises(InputError, match="strictly between 0 and 1"):
            read_file(jsonl(tmp_path / "rows.jsonl", rows), pass_threshold=threshold)
        return
    frame, meta = read_file(jsonl(tmp_path / "rows.jsonl", rows), pass_threshold=threshold)
    assert frame.to_dict(as_series=False) == want
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
