"""DPO: pairing, coefficients by hand and against the slow loop, refusals, learning."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slow_reference_grouped import random_rows, slow_dpo, slow_dpo_pairs, to_batch
from toy_policy import train_toy
from whilecli.errors import InputError, UsageError
from whilecli.methods.dpo import DPO, pair_rows


def row(task: str, reward: float, lp: list[float], ref: list[float]) -> dict:
    return {
        "task_id": task,
        "reward": reward,
        "logprobs": lp,
        "ref_logprobs": ref,
        "action_mask": [1] * len(lp),
    }


def test_pairing_closest_length_ties_to_earlier_row() -> None:
    tasks = ["a", "a", "a", "a", "b", "a"]
    passed = [False, True, False, False, True, True]
    lengths = [5, 3, 4, 2, 3, 3]
    # row 1 (len 3): fails 0 (5), 2 (4), 3 (2) → 2 and 3 tie at 1, earlier row 2 wins.
    # row 5 (len 3): fails 0, 3 left → 3 (gap 1). Task b has no fail.
    assert pair_rows(tasks, passed, lengths) == [(1, 2), (5, 3)]


def test_dpo_hand_computed() -> None:
    rows = [
        row("a", 1.0, [-1.0, -1.0], [-1.5, -1.0]),  # Σ(lp − ref) = 0.5
        row("a", 0.0, [-2.0, -1.0, -1.0], [-1.0, -1.0, -1.0]),  # −1.0
        row("b", 0.0, [-1.0], [-1.0]),  # no pass in b: unpaired
    ]
    up = DPO().update(to_batch(rows))
    delta = 0.5 - (-1.0)
    c = 0.1 / (1 + math.exp(0.1 * delta))  # β σ(−βΔ), P = 1
    assert up.coefficients[0, :2].tolist() == pytest.approx([c, c])
    assert up.coefficients[1].tolist() == pytest.approx([-c, -c, -c])
    assert torch.all(up.coefficients[2] == 0)
    assert up.admitted.tolist() == [True, True, False]
    assert up.stats["pairs"] == 1 and up.stats["unpaired_fails"] == 1
    assert up.stats["loss_mean"] == pytest.approx(math.log1p(math.exp(-0.1 * delta)))


def test_no_pair_gives_zeros_with_a_note() -> None:
    rows = [row("a", 1.0, [-1.0], [-1.0]), row("b", 0.0, [-1.0], [-1.0])]
    up = DPO().update(to_batch(rows))
    assert torch.all(up.coefficients == 0)
    assert any("no DPO pair" in n for n in up.notes)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from([0.1, 0.5]), st.sampled_from([0.5, 1.0]))
def test_dpo_matches_slow_loop(data, beta, threshold) -> None:
    rows = random_rows(data.draw, max_group=5, stale=False)
    batch = to_batch(rows)
    up = DPO(beta=beta, pass_threshold=threshold).update(batch)
    for i, r in enumerate(slow_dpo(rows, beta, threshold)):
        assert up.coefficients[i, : len(r)].tolist() == pytest.approx(r, rel=1e-9, abs=1e-15)
    assert up.stats["pairs"] == len(slow_dpo_pairs(rows, threshold))
    assert torch.all(up.coefficients[~batch.action_mask] == 0)
    # each pair's coefficients are opposite: the total over rows cancels per pair
    per_row = up.coefficients.sum(1) / batch.action_counts.clamp(min=1)
    assert per_row.sum().item() == pytest.approx(0.0, abs=1e-12)


def test_refusals() -> None:
    batch = to_batch([row("a", 1.0, [-1.0], [-1.0])])
    batch.ref_logprobs = None
    with pytest.raises(InputError, match="ref_logprobs"):
        DPO().update(batch)
    batch = to_batch([row("a", 1.0, [-1.0], [-1.0])])
    batch.task_ids = None
    with pytest.raises(InputError, match="task_id"):
        DPO().update(batch)
    with pytest.raises(UsageError, match="beta.*default 0.1"):
        DPO(beta=0)
    with pytest.raises(UsageError, match="pass_threshold"):
        DPO(pass_threshold=float("nan"))


def test_toy_policy_learns() -> None:
    before, after = train_toy(lambda: DPO(beta=0.5, pass_threshold=0.6), steps=30, seed=4)
    assert after > before + 0.3, (before, after)
