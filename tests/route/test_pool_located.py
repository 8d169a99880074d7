"""A route finds each task's first rows only when ``--show`` lists them: the counts are the same
either way, and a route with ``--show`` still names the rows."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from whilecli.io.read import read_rows
from whilecli.route import run_route
from whilecli.route.pool import POSITIONS, TASK_COLUMNS, Counts, summarize

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "data"


@pytest.mark.parametrize("name", ["mixed.parquet", "truncated_passes.jsonl", "student.jsonl"])
def test_counts_without_positions_are_the_same_counts(name: str) -> None:
    path = str(EXAMPLES / name)
    located = summarize(read_rows([path], aggregate=Counts())).tasks
    counted = summarize(read_rows([path], aggregate=Counts(located=False))).tasks
    assert all(c in located.columns for c in POSITIONS)
    assert not any(c in counted.columns for c in POSITIONS)
    keep = ["task_id", *TASK_COLUMNS]
    assert located.select(keep).sort("task_id").equals(counted.select(keep).sort("task_id"))


def test_show_still_names_the_rows() -> None:
    path = str(EXAMPLES / "truncated_passes.jsonl")
    route = run_route(path, show=("truncated_passes",), limit=5)
    shown = route.show["truncated_passes"]["shown"]  # type: ignore[union-attr]
    assert shown and all(isinstance(s["line"], int) for s in shown)
    plain = run_route(path)
    assert not plain.show  # type: ignore[union-attr]
    assert pl.Series([s["task_id"] for s in shown]).is_unique().all()
