"""Pass counts more even than independent draws can make them (finding ``even_counts``).

A task's n draws pass Binomial(n, p) times at its own p, so of the split tasks a window of
counts away from the ends holds at most a share no mixture of pass rates can raise (4 of 8:
0.28, at p = 0.5). A grade built from the group (the top half of each group passing, a rank
with ties, a balanced selection of passes and fails) puts every group there: a firm GRPO on
"300 split tasks of 300" measured how the grade was made. The generators draw such grades
(the truth: not graded draw by draw, provisional) and binomial mixtures of every shape (the
truth: independent draws, never flagged); the bound is checked against scipy's binomial on a
fine grid.

A window at an end is weighed over every task: one pass of n holds at most (1 − 1/n)^(n−1)
of all tasks (0.39 at n = 8) whatever the rates, so a pass planted in each group (a
reference answer graded beside the draws, the best of each group marked a pass) beside tasks
the draws never solve reads as provisional, not as "300 split tasks of 300"."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from whilecli.route import run_route, stats
from whilecli.route.model import Route
from whilecli.route.quality import EVEN_CHANCE


def _tasks(counts: list[tuple[int, int]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "task_id": [f"t{i}" for i in range(len(counts))],
            "n": [n for n, _ in counts],
            "passes": [c for _, c in counts],
        }
    )


def _route_groups(folder: Path, groups: list[list[bool]]) -> Route:
    """The route of one JSON Lines file holding each task's grades, a row per draw."""
    lines = [
        json.dumps({"task_id": f"t{t}", "completion": f"a{t}.{j}", "reward": float(ok)}) + "\n"
        for t, grades in enumerate(groups)
        for j, ok in enumerate(grades)
    ]
    path = folder / "rows.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    route = run_route([str(path)])
    assert isinstance(route, Route)
    return route


@pytest.mark.parametrize(("n", "low", "high"), [(4, 2, 2), (8, 4, 4), (8, 2, 3), (16, 7, 9)])
def test_the_most_a_window_holds_is_scipys_maximum_or_a_little_above(
    n: int, low: int, high: int
) -> None:
    """Never below the true maximum (the bound must hold for every p), at most the slack
    above it."""
    p = np.linspace(1e-5, 1 - 1e-5, 20001)
    pmf = sps.binom.pmf(np.arange(n + 1)[:, None], n, p[None, :])
    split = 1 - pmf[0] - pmf[n]
    held = pmf[low : high + 1].sum(axis=0) / split
    truth = float(held.max())
    got = stats._most_in(n, low, high)
    assert truth <= got <= truth + 0.006, (truth, got)


@pytest.mark.parametrize(
    ("n", "low", "high"), [(2, 1, 1), (3, 1, 2), (4, 1, 1), (8, 1, 1), (8, 1, 3), (8, 7, 7)]
)
def test_the_most_an_end_window_holds_of_every_task_is_scipys_maximum(
    n: int, low: int, high: int
) -> None:
    p = np.linspace(1e-5, 1 - 1e-5, 20001)
    pmf = sps.binom.pmf(np.arange(n + 1)[:, None], n, p[None, :])
    truth = float(pmf[low : high + 1].sum(axis=0).max())
    got = stats._most_in(n, low, high, among_split=False)
    assert truth <= got <= truth + 0.006, (truth, got)


@settings(max_examples=60, deadline=None)
@given(
    tasks=st.integers(10, 600),
    k=st.sampled_from([2, 3, 4, 6, 8, 9, 16, 32]),
    a=st.floats(0.1, 20),
    b=st.floats(0.1, 20),
    floor=st.floats(0, 0.6),
    seed=st.integers(0, 10**6),
)
def test_independent_draws_are_never_flagged(
    tasks: int, k: int, a: float, b: float, floor: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    p = np.where(rng.random(tasks) < floor, 0.0, rng.beta(a, b, tasks))
    counts = rng.binomial(k, p)
    found = stats.even_counts(_tasks([(k, int(c)) for c in counts]))
    assert found is None or found.log_chance > math.log(EVEN_CHANCE), found


def _group_built(kind: str, k: int, rng: random.Random) -> list[bool]:
    """One group's grades built from the group, not draw by draw."""
    if kind == "top-half":
        passes = k // 2
    elif kind == "ranked-ties":
        passes = k // 2 + rng.choice([-1, 0, 0, 1])
    elif kind == "top-m":
        passes = max(2, k // 4)
    else:  # balanced: as many passes as fails kept
        passes = k // 2
    grades = [True] * passes + [False] * (k - passes)
    rng.shuffle(grades)
    return grades


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    kind=st.sampled_from(["top-half", "ranked-ties", "top-m", "balanced"]),
    k=st.sampled_from([8, 16]),
    tasks=st.integers(120, 250),  # split tasks enough to tell 3 to 5 of 8 from draws
    floor=st.sampled_from([0.0, 0.3]),
    seed=st.integers(0, 10**6),
)
def test_a_grade_built_from_the_group_leaves_the_verdict_provisional(
    tmp_path_factory: pytest.TempPathFactory,
    kind: str,
    k: int,
    tasks: int,
    floor: float,
    seed: int,
) -> None:
    rng = random.Random(seed)
    groups = []
    for _ in range(tasks):
        never = rng.random() < floor  # a task no draw solves: all fail, whatever the rank
        groups.append([False] * k if never else _group_built(kind, k, rng))
    route = _route_groups(tmp_path_factory.mktemp("even"), groups)
    kinds = [f.kind for f in route.data_quality]
    # with no task at 0 the pool may read as selected first (no_unanimous_groups), which
    # says as much; beside tasks no draw solves only the counts' evenness can tell
    told = {"even_counts"} if floor else {"even_counts", "no_unanimous_groups"}
    assert told & set(kinds), (kinds, route.headline)
    assert route.provisional, route.headline


def test_a_pool_of_independent_draws_routes_as_before(tmp_path: Path) -> None:
    rng = random.Random(7)
    lines = []
    for t in range(300):
        p = rng.betavariate(2, 2)
        for j in range(8):
            row = {"task_id": f"t{t}", "completion": f"a{t}.{j}", "reward": float(rng.random() < p)}
            lines.append(json.dumps(row) + "\n")
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    route = run_route([str(path)])
    assert "even_counts" not in [f.kind for f in route.data_quality]
    assert route.method == "grpo" and not route.provisional, route.headline


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    kind=st.sampled_from(["reference row", "best of the group"]),
    k=st.sampled_from([4, 8, 16]),
    tasks=st.integers(150, 300),
    never=st.floats(0.8, 0.95),  # tasks the model's draws never solve
    seed=st.integers(0, 10**6),
)
def test_a_pass_planted_in_each_group_leaves_the_verdict_provisional(
    tmp_path_factory: pytest.TempPathFactory,
    kind: str,
    k: int,
    tasks: int,
    never: float,
    seed: int,
) -> None:
    """The model's own draws mostly fail (a floor with a few tasks in the band); each group
    also holds one pass that is not the model's draw: a reference answer graded beside
    them (k + 1 rows), or the best draw of each group marked a pass (k rows)."""
    rng = random.Random(seed)
    groups = []
    for _ in range(tasks):
        p = 0.0 if rng.random() < never else rng.betavariate(1, 3)
        grades = [rng.random() < p for _ in range(k)]
        if kind == "reference row":
            grades.append(True)
        elif not any(grades):
            grades[rng.randrange(k)] = True
        groups.append(grades)
    route = _route_groups(tmp_path_factory.mktemp("planted"), groups)
    kinds = [f.kind for f in route.data_quality]
    assert {"even_counts", "no_unanimous_groups"} & set(kinds), (kinds, route.headline)
    assert route.provisional, route.headline


@pytest.mark.parametrize("seed", [9, 10, 11])
def test_draws_stopped_at_the_first_pass_leave_the_verdict_provisional(
    tmp_path: Path, seed: int
) -> None:
    """Retrying a task until it passes writes fails then one pass: every task of n draws
    below the cap passes exactly 1 of n, where independent draws put at most half of the
    tasks of 2 draws (a firm GRPO on "126 split tasks of 145")."""
    rng = random.Random(seed)
    groups = []
    for _ in range(300):
        p = rng.betavariate(2, 2)
        grades: list[bool] = []
        while len(grades) < 8 and not (grades and grades[-1]):
            grades.append(rng.random() < p)
        groups.append(grades)
    route = _route_groups(tmp_path, groups)
    assert "even_counts" in [f.kind for f in route.data_quality], route.headline
    assert route.provisional, route.headline
