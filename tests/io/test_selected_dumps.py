"""Trainers' dumps that hold a selection of the rollouts: open-instruct's GRPO traces are
written after ``grpo_fast.py`` drops each prompt whose scores do not vary
(``non_zero_std_mask``), so no trace holds a unanimous group. Read as the pool, a floor run
whose few split groups survived read as a firm GRPO on a split share of 1.00.

The generator draws a training run of known truth (per prompt a pass rate from a band, k
draws a step), filters each step as ``grpo_fast`` does, and writes the traces; the route must
say the rows are a selection and stay provisional, whatever the band."""

from __future__ import annotations

import json
import random
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.rows_files import finding_kinds

from whilecli.route import run_route
from whilecli.route.model import Route

BANDS = {"floor-ish": (0.9, 0.0), "mid": (0.2, 0.5), "high": (0.6, 1.0)}


def _traces(seed: int, band: str, prompts: int, k: int, steps: int) -> str:
    """One line per step: the filtered batch's parallel lists, as ``--save_traces`` writes."""
    rng = random.Random(seed)
    stuck, rate = BANDS[band]
    rates = [rate if rng.random() < stuck else rng.random() for _ in range(prompts)]
    lines = []
    for step in range(1, steps + 1):
        scores, indices, reasons = [], [], []
        for p, r in enumerate(rates):
            group = [10.0 * (rng.random() < r) for _ in range(k)]
            if len(set(group)) == 1:  # zero std: dropped before the traces are written
                continue
            scores += group
            indices += [p] * k
            reasons += ["stop"] * k
        lines.append(
            {
                "scores": scores,
                "finish_reasons": reasons,
                "responses": [[1, 2, 3] for _ in scores],
                "training_step": step,
                "indices": indices,
                "decoded_responses": [f"reply {rng.random()}" for _ in scores],
                "objective/verifiable_reward": 0.5,
            }
        )
    return "".join(json.dumps(line) + "\n" for line in lines)


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 2**16),
    band=st.sampled_from(sorted(BANDS)),
    k=st.sampled_from([4, 8]),
)
def test_open_instruct_traces_are_a_selection(tmp_path: Path, seed: int, band: str, k: int) -> None:
    path = tmp_path / "output/run__1__1700000000/traces_run__1__1700000000.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_traces(seed, band, 64, k, 10))
    route = run_route([str(path)], pass_threshold=10.0)
    assert isinstance(route, Route)
    assert "selected_rows" in finding_kinds(route), finding_kinds(route)
    assert route.provisional, route.headline
