"""Pass counts that no mixture of pass rates makes (:func:`whilecli.route.stats.even_counts`,
its mixture test): rows of one rollout split into its turns, the reward on the last turn
only (k = 1 read as k = 3: half the tasks pass one of three, none two), or a pass planted in
each group. Each window of counts stays within what some single rate gives (one pass of
three: 44% at p = 1/3), so the window test let a firm GRPO through; the histogram as a
whole sits far from every mixture.

The generator draws both sides from a known truth: independent draws at rates from many
mixtures (the test never fires there, whatever the size), and the structures above (it
fires, and the route hedges)."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.route import run_route, stats
from whilecli.route.model import Route

MODEL = "Qwen/Qwen3-8B"


@settings(max_examples=60, deadline=None)
@given(
    n=st.sampled_from([2, 3, 4, 5, 8, 16]),
    tasks=st.sampled_from([10, 30, 100, 400, 3000]),
    a=st.floats(0.05, 4.0),
    b=st.floats(0.05, 4.0),
    stuck=st.floats(0.0, 0.9),
    seed=st.integers(0, 2**16),
)
def test_independent_draws_never_read_as_unmixed(
    n: int, tasks: int, a: float, b: float, stuck: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    rates = np.where(
        rng.random(tasks) < stuck, rng.choice([0.0, 1.0], tasks), rng.beta(a, b, tasks)
    )
    passes = rng.binomial(n, rates)
    frame = pl.DataFrame(
        {"task_id": [f"t{i}" for i in range(tasks)], "n": [n] * tasks, "passes": passes.tolist()}
    )
    found = stats.even_counts(frame)
    assert found is None or found.log_chance > math.log(1e-6), found


def _turns(seed: int, episodes: int, turns: int, rate: float) -> list[dict[str, object]]:
    """One rollout per prompt written as ``turns`` rows, the reward on the last turn only."""
    rng = random.Random(seed)
    rows: list[dict[str, object]] = []
    for e in range(episodes):
        passed = rng.random() < rate
        for t in range(turns):
            rows.append(
                {
                    "task_id": f"p{e}",
                    "completion": f"turn {t} of episode {e}: {rng.random():.6f}",
                    "reward": float(passed and t == turns - 1),
                    "truncated": False,
                    "model": MODEL,
                }
            )
    return rows


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 2**16),
    turns=st.sampled_from([3, 4]),
    rate=st.floats(0.45, 0.7),
)
def test_one_rollout_written_as_its_turns_is_not_a_group(
    tmp_path: Path, seed: int, turns: int, rate: float
) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _turns(seed, 600, turns, rate)))
    route = run_route([str(path)], model=MODEL)
    assert isinstance(route, Route)
    assert "even_counts" in [f.kind for f in route.data_quality], route.headline
    assert route.provisional, route.headline
