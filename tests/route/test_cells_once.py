"""The pool's cells are grouped once per per-task frame and every statistic reads them: the
kept cells never leak into another frame, and the histogram binned per cell equals a plain
per-task loop."""

from __future__ import annotations

import gc

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.route import stats


def frame(pairs: list[tuple[int, int]]) -> pl.DataFrame:
    """A per-task frame from ``[(passes, n), ...]``."""
    return pl.DataFrame(
        {
            "task_id": [f"t{i}" for i in range(len(pairs))],
            "n": pl.Series([n for _, n in pairs], dtype=pl.Int64),
            "passes": pl.Series([c for c, _ in pairs], dtype=pl.Int64),
        }
    )


def plain_cells(pairs: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    tally: dict[tuple[int, int], int] = {}
    for c, n in pairs:
        tally[(n, c)] = tally.get((n, c), 0) + 1
    return [(c, n, m) for (n, c), m in sorted(tally.items())]


def as_list(cells: tuple[np.ndarray, np.ndarray, np.ndarray]) -> list[tuple[int, int, int]]:
    return [(int(c), int(n), int(m)) for c, n, m in zip(*cells, strict=True)]


pairs_strategy = st.lists(
    st.integers(1, 12).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    min_size=1,
    max_size=40,
)


@settings(max_examples=40, deadline=None)
@given(pairs_strategy, pairs_strategy)
def test_cells_are_each_frames_own(
    first: list[tuple[int, int]], second: list[tuple[int, int]]
) -> None:
    # the objects made before this example are left out of the collection below: a full
    # collection walks the whole process's heap, most of a second in a suite that has imported
    # torch, and the frames it must free are all made here
    gc.freeze()
    try:
        a, b = frame(first), frame(second)
        for _ in range(2):  # asked twice, in turn: each frame's own cells every time
            assert as_list(stats.cell_arrays(a)) == plain_cells(first)
            assert as_list(stats.cell_arrays(b)) == plain_cells(second)
        del a
        gc.collect()  # a new frame where the old one was is grouped anew
        c = frame(second)
        assert as_list(stats.cell_arrays(c)) == plain_cells(second)
    finally:
        gc.unfreeze()


def test_cells_are_kept_and_read_only() -> None:
    tasks = frame([(1, 4), (1, 4), (4, 4)])
    cells = stats.cell_lists(tasks)
    assert stats.cell_lists(tasks) is cells
    assert all(isinstance(column, tuple) for column in cells)
    for array in stats.cell_arrays(tasks):
        with pytest.raises(ValueError):
            array[0] = 7
    assert stats.cell_lists(frame([(0, 4)])) is not cells


@settings(max_examples=40, deadline=None)
@given(pairs_strategy)
def test_histogram_per_cell_is_the_per_task_loop(pairs: list[tuple[int, int]]) -> None:
    hist = stats.histogram(frame(pairs))
    want = [0] * 10
    for c, n in pairs:
        want[min(10 * c // n, 9)] += 1
    assert hist["counts"] == want
    assert hist["at_0"] == sum(c == 0 for c, _ in pairs)
    assert hist["at_1"] == sum(c == n for c, n in pairs)
    assert hist["tasks"] == len(pairs)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.integers(-2, 64), st.integers(2**56, 2**62)),
            st.one_of(st.none(), st.integers(-2, 40)),
        ),
        min_size=1,
        max_size=30,
    ),
    st.sampled_from([pl.Int64, pl.UInt64, pl.Int32]),
)
def test_packed_cells_are_the_grouped_cells(
    pairs: list[tuple[int | None, int | None]], dtype: pl.DataType
) -> None:
    """Cells counted by one packed integer per task are the (passes, n) group-by's, in its
    order, whatever the counts: small or near 2^63, passes past n, negative or null (those
    the packing cannot hold apart are grouped as before)."""
    try:
        n = pl.Series([n for n, _ in pairs], dtype=dtype)
    except (OverflowError, TypeError, pl.exceptions.PolarsError):
        return  # a count the column type cannot hold
    tasks = pl.DataFrame({"n": n, "passes": pl.Series([c for _, c in pairs], dtype=pl.Int64)})
    grid = (
        tasks.select(pl.col("passes").cast(pl.Int64), pl.col("n").cast(pl.Int64))
        .group_by("n", "passes")
        .agg(pl.len().cast(pl.Int64).alias("tasks"))
        .sort("n", "passes")
    )
    expected = tuple(tuple(grid[c].to_list()) for c in ("passes", "n", "tasks"))
    assert stats._cell_lists(tasks) == expected
