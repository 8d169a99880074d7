"""A summary of rows with missing grades (null or NaN rewards) routes as the rows do, under
``--missing skip`` and ``--missing fail`` alike (DESIGN section 1, "graded": an ungraded row
is left out, or counted as a failure): the written summary is always readable (no NaN sum)
and ``summarize`` then ``route`` gives the rows' verdict. The generator draws pools from a
known truth (per-task pass rates, k draws) and blanks some rows' grades as null, NaN or
both, in JSON Lines and Parquet."""

from __future__ import annotations

import math
import random
import tempfile
from pathlib import Path
from typing import Any

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import write_rows
from whilecli.io.read import read_rows
from whilecli.route import run_route
from whilecli.route.model import Route
from whilecli.route.summary import write_summary

SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
MODEL = "Qwen/Qwen3-8B"
BANDS = {"low": (0.0, 0.4), "mixed": (0.1, 0.9), "top": (1.0, 1.0), "zero": (0.0, 0.0)}


def _rows(
    rnd: random.Random, tasks: int, k: int, band: str, blank: float, how: str
) -> list[dict[str, Any]]:
    """Rows of ``tasks`` tasks at k draws; each row's grade is blanked with chance ``blank``
    as null, NaN, or either (``how``)."""
    low, high = BANDS[band]
    rows: list[dict[str, Any]] = []
    for t in range(tasks):
        p = rnd.uniform(low, high)
        for _ in range(k):
            reward: float | None = float(rnd.random() < p)
            if rnd.random() < blank:
                kind = how if how != "both" else rnd.choice(["null", "nan"])
                reward = None if kind == "null" else math.nan
            rows.append({"task_id": f"t{t}", "reward": reward, "model": MODEL})
    return rows


def _verdict(route: Route | int) -> tuple[Any, ...]:
    assert isinstance(route, Route)
    return (route.route, route.method, route.provisional, route.exit_code)


@SETTINGS
@given(
    seed=st.integers(0, 10**6),
    tasks=st.integers(2, 120),
    k=st.sampled_from([2, 4, 8]),
    band=st.sampled_from(sorted(BANDS)),
    blank=st.sampled_from([0.02, 0.1, 0.3]),
    how=st.sampled_from(["null", "nan", "both"]),
    kind=st.sampled_from(["jsonl", "parquet"]),
    missing=st.sampled_from(["fail", "skip"]),
)
def test_a_summary_of_rows_with_missing_grades_routes_as_the_rows(
    tmp_path: Path,
    seed: int,
    tasks: int,
    k: int,
    band: str,
    blank: float,
    how: str,
    kind: str,
    missing: str,
) -> None:
    rnd = random.Random(seed)
    rows = _rows(rnd, tasks, k, band, blank, how)
    rows[rnd.randrange(len(rows))]["reward"] = None if how == "null" else math.nan  # one, at least
    if sum(r["reward"] is None or r["reward"] != r["reward"] for r in rows) >= len(rows) / 2:
        return  # no graded majority: refused either way, not routed
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    path = write_rows(folder, rows, kind)
    summary = folder / "summary.parquet"
    write_summary(read_rows([str(path)], missing=missing), summary)
    sums = pl.read_parquet(summary).select("reward_sum", "reward_sumsq")
    assert all(math.isfinite(v) for column in sums.iter_columns() for v in column)
    from_rows = run_route(str(path), model=MODEL, missing=missing)
    from_summary = run_route(str(summary), model=MODEL, missing=missing)
    assert _verdict(from_summary) == _verdict(from_rows)


def test_the_probes_nan_row_under_missing_fail_is_a_failure_in_the_summary(
    tmp_path: Path,
) -> None:
    """The reported instance: a NaN reward kept by ``--missing fail`` adds 0 to the sums."""
    rows = [
        {"task_id": "a", "reward": 1.0},
        {"task_id": "a", "reward": math.nan},
        {"task_id": "b", "reward": 0.0},
        {"task_id": "b", "reward": 0.0},
    ]
    path = write_rows(tmp_path, rows, "jsonl")
    summary = tmp_path / "s.parquet"
    write_summary(read_rows([str(path)], missing="fail"), summary)
    frame = pl.read_parquet(summary).sort("task_id")
    assert frame["reward_sum"].to_list() == [1.0, 0.0]
    assert frame["n"].to_list() == [2, 2] and frame["passes"].to_list() == [1, 0]
    assert _verdict(run_route(str(summary), missing="fail")) == _verdict(
        run_route(str(path), missing="fail")
    )
