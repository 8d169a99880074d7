"""The columns the reader carries as conditions the draws may have been made under
(:mod:`whilecli.io.factors`), and their cells over every row of every file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from tests.support.rows_files import drawn_rows, write_rows

from whilecli.io.factors import MAX_FACTORS, MAX_LEVELS, candidates
from whilecli.io.read import StreamedRows, read_rows
from whilecli.io.shape import Shape
from whilecli.io.slices import read_slices


def _candidates(rows: list[dict[str, Any]], used: frozenset[str] = frozenset()) -> list[str]:
    return candidates(Shape.from_rows(rows), rows, set(used))


def test_a_condition_of_few_values_is_a_candidate_and_outcomes_are_not() -> None:
    rows = [
        {
            "sampler": ["a", "b"][i % 2],
            "top_p": [0.9, 1][i % 2],  # numbers of both kinds are one kind
            "sample_idx": i % 8,  # a draw's index
            "advantage": 0.5 if i % 2 else -0.5,  # a trainer's number on the draw
            "finish_reason": "stop",
            "pred": "ABCD"[i % 4],
            "mixed": "x" if i % 2 else 1,  # two kinds
            "many": f"v{i}",  # one value a row
            "sparse": "s" if i % 5 == 0 else None,  # on a fifth of the rows
        }
        for i in range(100)
    ]
    assert _candidates(rows) == ["sampler", "top_p"]
    assert _candidates(rows, frozenset({"sampler"})) == ["top_p"]


def test_more_values_first_at_most_the_limit() -> None:
    rows = [{f"c{j}": f"v{i % (j + 1)}" for j in range(MAX_LEVELS + 2)} for i in range(200)]
    got = _candidates(rows)
    assert len(got) == MAX_FACTORS
    assert got == [f"c{j}" for j in range(MAX_LEVELS - 1, MAX_LEVELS - 1 - MAX_FACTORS, -1)]


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_cells_count_every_row_of_each_value(tmp_path: Path, kind: str) -> None:
    rows = drawn_rows(20, 6, lambda t, d: d % 3 == 0)
    for i, row in enumerate(rows):
        row["sampler"] = "ab"[i % 2]
        if i % 6 == 5:
            row["reward"] = None  # ungraded: read, not counted
    got = read_rows([str(write_rows(tmp_path, rows, kind))]).factor_cells
    cells = got["sampler"].sort("task_id", "value")
    assert cells.height == 40
    assert cells["all"].to_list() == [3] * 40
    assert int(cells["rows"].sum()) == 100
    # draws 0 and 3 pass: draw 0 under "a", draw 3 under "b"
    passes = dict(cells.group_by("value").agg(pl.col("passes").sum()).rows())
    assert passes == {"a": 20, "b": 20}


def test_files_add_up_and_a_read_by_a_column_carries_none(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    one = write_rows(first, drawn_rows(10, 4, lambda t, d: True, sampler="a"), "jsonl")
    two = write_rows(second, drawn_rows(10, 4, lambda t, d: False, sampler="b"), "jsonl")
    cells = read_rows([str(one), str(two)], pool=True).factor_cells["sampler"]
    assert sorted(cells["value"].unique().to_list()) == ["a", "b"]
    assert int(cells["all"].sum()) == 80
    for _, rows in read_slices([str(one), str(two)], "sampler"):
        assert isinstance(rows, StreamedRows) and not rows.factor_cells


def test_a_condition_inside_the_rows_extras_is_a_candidate_unless_read() -> None:
    rows = [
        {
            "metadata": {"checkpoint": ["a", "b"][i % 2], "error": None, "trial": i % 4},
            "sampling_params": {"top_p": [0.9, 1.0][i % 2], "temperature": [0.6, 1.0][i % 2]},
            "judge": {"label": ["x", "y"][i % 2]},  # no place conditions are kept in
            "info": ["not", "an", "object"],
        }
        for i in range(100)
    ]
    got = _candidates(rows)
    assert got == [
        "metadata.checkpoint",
        "sampling_params.top_p",
        "sampling_params.temperature",
    ]
    # a field read inside the object leaves its neighbours; the object read whole, none
    assert _candidates(rows, frozenset({"metadata.error"}))[0] == "metadata.checkpoint"
    assert "metadata.checkpoint" not in _candidates(rows, frozenset({"metadata"}))
    # a sampling setting read as evidence of greedy decoding stays one (the reader's `used`
    # leaves it out), one read as anything else does not
    assert "sampling_params.top_p" not in _candidates(rows, frozenset({"sampling_params.top_p"}))


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_cells_of_a_condition_inside_an_object(tmp_path: Path, kind: str) -> None:
    rows = drawn_rows(20, 4, lambda t, d: d % 2 == 0)
    for i, row in enumerate(rows):
        row["metadata"] = {"checkpoint": "ab"[i % 2], "attempt": 1}
    got = read_rows([str(write_rows(tmp_path, rows, kind))]).factor_cells
    cells = got["metadata.checkpoint"]
    assert int(cells["all"].sum()) == 80
    passes = dict(cells.group_by("value").agg(pl.col("passes").sum()).rows())
    assert passes == {"a": 40, "b": 0}
