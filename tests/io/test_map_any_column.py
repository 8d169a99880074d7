"""``--map FIELD=COLUMN`` onto any column of any type: the rows read, or one located refusal.

A column of text, numbers, flags, lists or objects, or the very column another field reads
(``--map task_id=reward``, ``--map truncated=reward``), mapped to any canonical field of a
JSON Lines or Parquet file, ends routed or refused with an :class:`InputError` that names the
file; never another exception (``--map truncated=reward`` exited 70 with a polars error).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError
from whilecli.io.read import MAPPABLE
from whilecli.route import run_route
from whilecli.route.slices import Slices

#: Columns of every kind a file holds beside the canonical ones.
COLUMNS: dict[str, Any] = {
    "text": lambda i: f"w{i % 3}",
    "words": lambda i: ["pass", "fail", "yes"][i % 3],
    "number": lambda i: float(i % 2),
    "count": lambda i: i,
    "flag": lambda i: i % 2 == 0,
    "list": lambda i: [i, i + 1],
    "object": lambda i: {"a": i},
    "sparse": lambda i: None if i % 2 else "x",
}


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    maps=st.dictionaries(
        st.sampled_from(MAPPABLE),
        st.sampled_from([*COLUMNS, "task_id", "reward", "finish_reason"]),
        min_size=1,
        max_size=3,
    ),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_any_column_mapped_to_any_field_reads_or_is_refused(
    tmp_path: Path, maps: dict[str, str], kind: str
) -> None:
    rows = [
        {
            "task_id": f"t{i % 4}",
            "reward": float(i % 3 == 0),
            "finish_reason": "length" if i % 5 == 0 else "stop",
            **{name: make(i) for name, make in COLUMNS.items()},
        }
        for i in range(16)
    ]
    path = tmp_path / f"rows.{kind}"
    frame = pl.DataFrame(rows)
    if kind == "parquet":
        frame.write_parquet(path)
    else:
        frame.write_ndjson(path)
    try:
        route = run_route([str(path)], mapping=maps)
    except InputError as err:
        said = str(err)
        assert "\n" not in said and str(path) in said, said
        return
    assert not isinstance(route, Slices) and route.summary["rows"] <= 16


@pytest.mark.parametrize("field", [f for f in MAPPABLE if f not in ("task_id", "reward", "passed")])
def test_the_grades_column_feeds_no_other_field(tmp_path: Path, field: str) -> None:
    path = tmp_path / "rows.jsonl"
    pl.DataFrame({"task_id": ["a", "b"] * 4, "reward": [0.0, 1.0] * 4}).write_ndjson(path)
    with pytest.raises(InputError, match=rf"--map {field}=reward: 'reward' is the grade's column"):
        run_route([str(path)], mapping={field: "reward"})
