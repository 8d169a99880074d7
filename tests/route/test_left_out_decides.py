"""Rows left out of every rate (harness errors; ungraded rows under ``--missing skip``)
that, counted as failures (or the ungraded ones as passes), route firmly to another method:
the verdict rests on leaving them out and is provisional (``left_out_decides``), whatever
the band. The generator draws pools from a known truth (per-task pass rates, k draws) whose
failures, or passes, are written some of the time as no grade or as a harness error, in
either encoding; the truth of the rule is the route of the same rows with the left-out rows
written as failures (and as passes), so the rule is held to what the rows would say."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import finding_kinds, route_rows, write_rows
from whilecli.route import run_route
from whilecli.route.model import Route
from whilecli.route.summary import write_summary

SETTINGS = settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
MODEL = "Qwen/Qwen3-8B"
ERRORS = ["ContextWindowExceededError: prompt exceeds 32768 tokens", "TimeoutError: 600 s"]
#: Per-task pass rates of each truth: (low, high) of a uniform draw.
BANDS = {"low": (0.0, 0.4), "high": (0.9, 1.0), "top": (1.0, 1.0), "zero": (0.0, 0.0)}


def _rows(
    rnd: random.Random, tasks: int, k: int, band: str, hide: float, hide_passes: bool, how: str
) -> list[dict[str, Any]]:
    """Rows of ``tasks`` tasks at k draws; a failure (or, with ``hide_passes``, a pass) is
    written with chance ``hide`` as no grade (``how`` "ungraded") or as a harness error."""
    low, high = BANDS[band]
    rows: list[dict[str, Any]] = []
    for t in range(tasks):
        p = rnd.uniform(low, high)
        for _ in range(k):
            ok = rnd.random() < p
            row: dict[str, Any] = {"task_id": f"t{t}", "reward": float(ok), "model": MODEL,
                                   "completion": f"answer {rnd.random()}", "error": None}  # fmt: skip
            if ok == hide_passes and rnd.random() < hide:
                if how == "ungraded":
                    row["reward"] = None
                else:
                    row.update(reward=None, completion="", error=rnd.choice(ERRORS))
            rows.append(row)
    return rows


def _counted(rows: list[dict[str, Any]], passes: bool) -> list[dict[str, Any]]:
    """The rows with those left out counted: every one as a failure, or the ungraded ones
    as passes (an error stays out: it is no reply)."""
    out = []
    for r in rows:
        if r["reward"] is None and (not passes or r["error"] is None):
            r = {**r, "reward": float(passes), "error": None, "completion": "counted"}
        out.append(r)
    return out


def _route(folder: Path, rows: list[dict[str, Any]], kind: str) -> Route:
    return route_rows(write_rows(Path(tempfile.mkdtemp(dir=folder)), rows, kind), MODEL)


@SETTINGS
@given(
    seed=st.integers(0, 10**6),
    tasks=st.integers(60, 300),
    k=st.sampled_from([2, 4, 8]),
    band=st.sampled_from(sorted(BANDS)),
    hide=st.sampled_from([0.0, 0.05, 0.5, 0.9, 1.0]),
    hide_passes=st.sampled_from([False, False, True]),
    how=st.sampled_from(["ungraded", "error"]),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_rows_left_out_that_would_route_elsewhere_leave_the_verdict_provisional(
    tmp_path: Path,
    seed: int,
    tasks: int,
    k: int,
    band: str,
    hide: float,
    hide_passes: bool,
    how: str,
    kind: str,
) -> None:
    rows = _rows(random.Random(seed), tasks, k, band, hide, hide_passes, how)
    left = sum(r["reward"] is None for r in rows)
    if left >= len(rows) / 2:  # most replies errors, or no row graded: refused, not routed
        return
    route = _route(tmp_path, rows, kind)
    elsewhere = []
    for passes in (False, True):
        if left and not (passes and how == "error"):
            other = _route(tmp_path, _counted(rows, passes), kind)
            if other.method != route.method and not other.provisional and other.method:
                elsewhere.append(other.method)
    kinds = finding_kinds(route)
    if elsewhere and route.route != "fix-reward":
        assert "left_out_decides" in kinds, (route.route, elsewhere)
        found = next(f for f in route.data_quality if f.kind == "left_out_decides")
        assert found.count == left
        assert route.provisional
    else:
        assert "left_out_decides" not in kinds, (route.route, route.data_quality)


def test_ungraded_failures_beside_every_pass_are_not_a_firm_saturation(tmp_path: Path) -> None:
    """Every failure of a low band written with no grade: the graded rows all pass. Counted
    as failures (``--missing fail``) the rows route firmly to GRPO; left out, the saturation
    they read as is provisional."""
    rows = _rows(random.Random(5), 1000, 8, "low", 1.0, False, "ungraded")
    path = write_rows(Path(tempfile.mkdtemp(dir=tmp_path)), rows, "jsonl")
    route = route_rows(path, MODEL)
    failed = run_route(str(path), model=MODEL, missing="fail")
    assert isinstance(failed, Route)
    assert failed.method == "grpo" and not failed.provisional
    assert route.route == "saturated" and route.provisional
    assert "left_out_decides" in finding_kinds(route)
    assert "--missing fail" in next(
        f.found for f in route.data_quality if f.kind == "left_out_decides"
    )


def test_a_summary_spreads_its_left_out_rows_over_the_tasks_they_move_most(
    tmp_path: Path,
) -> None:
    """A summary keeps the number of the rows left out, not their tasks: errors beside a
    saturated band are spread one per task, so 200 of them, counted as failures, could
    split 200 tasks now at 1, as the rows they summarise say."""
    rnd = random.Random(3)
    rows = _rows(rnd, 400, 4, "top", 0.0, False, "error")
    for r in rnd.sample(rows, 200):
        r.update(reward=None, completion="", error=ERRORS[0])
    path = write_rows(Path(tempfile.mkdtemp(dir=tmp_path)), rows, "jsonl")
    from whilecli.io.read import read_rows

    summary = tmp_path / "summary.parquet"
    write_summary(read_rows([str(path)]), summary)
    for routed in (run_route(str(path), model=MODEL), run_route(str(summary), model=MODEL)):
        assert isinstance(routed, Route)
        assert routed.route == "saturated" and routed.provisional
        assert "left_out_decides" in finding_kinds(routed)
