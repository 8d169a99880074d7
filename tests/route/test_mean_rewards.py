"""Rows that hold a per-task pass rate (the mean of k draws: c/k) one per task are not
rollouts: read as one draw per prompt with partial credit they route to the single-rollout
family. The generator draws tasks from a known truth (per-task pass rates, k draws), writes
one row per task holding c/k, and the route leaves the verdict provisional with
``mean_rewards``; one draw per prompt whose partial credit is no grid's (a judge's score, a
half credit), or k rows per task, is not flagged."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import finding_kinds, write_rows
from whilecli.route import run_route
from whilecli.route.model import Route

SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
MODEL = "Qwen/Qwen3-8B"


def _route(folder: Path, rows: list[dict[str, Any]], kind: str) -> Route:
    path = write_rows(Path(tempfile.mkdtemp(dir=folder)), rows, kind)
    got = run_route(str(path), model=MODEL, pass_threshold=1.0)
    assert isinstance(got, Route)
    return got


@SETTINGS
@given(
    seed=st.integers(0, 10**6),
    tasks=st.integers(100, 800),
    k=st.sampled_from([3, 4, 8, 16]),
    edge=st.sampled_from([0.5, 0.9]),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_one_row_per_task_holding_the_mean_of_k_draws_is_provisional(
    tmp_path: Path, seed: int, tasks: int, k: int, edge: float, kind: str
) -> None:
    rnd = random.Random(seed)
    rows = []
    for t in range(tasks):  # a share ``edge`` of the tasks never or always pass
        p = rnd.choice([0.0, 1.0]) if rnd.random() < edge else rnd.random()
        c = sum(rnd.random() < p for _ in range(k))
        rows.append({"task_id": f"t{t}", "reward": c / k, "model": MODEL, "truncated": False})
    fractions = {r["reward"] for r in rows if 0 < r["reward"] < 1}
    got = _route(tmp_path, rows, kind)
    if len(fractions) >= 2:
        assert "mean_rewards" in finding_kinds(got), (k, sorted(fractions))
        assert got.provisional
    else:
        assert "mean_rewards" not in finding_kinds(got)


@SETTINGS
@given(
    seed=st.integers(0, 10**6),
    tasks=st.integers(100, 400),
    credit=st.sampled_from(["judge", "half", "grouped"]),
)
def test_partial_credit_off_a_grid_or_in_groups_is_not_read_as_means(
    tmp_path: Path, seed: int, tasks: int, credit: str
) -> None:
    rnd = random.Random(seed)
    rows = []
    k = 8 if credit == "grouped" else 1
    for t in range(tasks):
        for _ in range(k):
            reward = float(rnd.random() < 0.5)
            if rnd.random() < 0.05:  # partial credit on a few rows
                reward = {"judge": rnd.uniform(0.01, 0.99), "half": 0.5}.get(
                    credit, rnd.choice([0.125, 0.375, 0.625])
                )
            rows.append({"task_id": f"t{t}", "reward": reward, "model": MODEL})
    assert "mean_rewards" not in finding_kinds(_route(tmp_path, rows, "jsonl"))


@pytest.mark.parametrize("parts", [3, 4, 5])
def test_a_rubric_given_its_pass_mark_is_no_mean(tmp_path: Path, parts: int) -> None:
    """One row per task scored by a rubric of ``parts`` parts (on the 1/parts grid, as a
    mean would be): with --pass-threshold under 1, the pass mark of a score, it routes firm."""
    rng = random.Random(parts)
    rows = [
        {"task_id": f"t{t}", "reward": rng.randint(0, parts) / parts, "model": MODEL}
        for t in range(600)
    ]
    path = write_rows(tmp_path, rows, "jsonl")
    marked = run_route(str(path), model=MODEL, pass_threshold=(parts - 1) / parts)
    assert isinstance(marked, Route)
    assert "mean_rewards" not in {f.kind for f in marked.data_quality}
    whole = run_route(str(path), model=MODEL, pass_threshold=1.0)
    assert isinstance(whole, Route) and "mean_rewards" in {f.kind for f in whole.data_quality}
