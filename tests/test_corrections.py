"""The staleness corrections ipo, icepop and tis, applied last to a method's coefficients."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slow_reference_grouped import random_rows, slow_correction, slow_grpo, to_batch
from toy_policy import train_toy
from whilecli.errors import UsageError
from whilecli.methods.batch import Update
from whilecli.methods.corrections import apply_correction
from whilecli.methods.grpo import GRPO
from whilecli.methods.sft import SFT


def _stale_batch():
    # π = e^−1 ≈ 0.368 on every token; μ chosen for ρ = 0.4, 1.0, 3.0, 6.0 and one observation.
    lp = [-1.0] * 5
    blp = [-1.0 - math.log(r) for r in (0.4, 1.0, 3.0, 6.0)] + [-1.0]
    rows = [
        {"reward": 1.0, "logprobs": lp, "behavior_logprobs": blp, "action_mask": [1, 1, 1, 1, 0]}
    ]
    return rows, to_batch(rows)


def _ones(batch) -> Update:
    c = batch.action_mask.to(torch.float64)
    return Update(coefficients=c, advantages=c.clone(), admitted=torch.ones(1, dtype=torch.bool))


def test_ipo_by_hand() -> None:
    _, batch = _stale_batch()
    pi = math.exp(-1)
    # |π − μ| = |π − π/ρ|: 0.552, 0, 0.245, 0.307 → masked where > 0.3
    up = apply_correction(_ones(batch), batch, "ipo")
    assert up.coefficients[0].tolist() == [0.0, 1.0, 1.0, 0.0, 0.0]
    assert abs(pi - pi / 3) <= 0.3 < abs(pi - pi / 6)
    assert up.stats["ipo_masked_tokens"] == 2 and up.stats["ipo_masked_share"] == 0.5
    assert any("ipo masked 2 of 4" in n for n in up.notes)


def test_icepop_and_tis_by_hand() -> None:
    _, batch = _stale_batch()
    ice = apply_correction(_ones(batch), batch, "icepop")
    assert ice.coefficients[0].tolist() == [0.0, 1.0, 1.0, 0.0, 0.0]
    assert ice.stats["icepop_masked_tokens"] == 2
    tis = apply_correction(_ones(batch), batch, "tis")
    assert tis.coefficients[0].tolist() == pytest.approx([0.4, 1.0, 2.0, 2.0, 0.0])
    assert tis.stats["tis_capped_tokens"] == 2
    wide = apply_correction(_ones(batch), batch, "icepop", band=(0.3, 10.0))
    assert wide.coefficients[0].tolist() == [1.0, 1.0, 1.0, 1.0, 0.0]


def test_a_row_losing_every_token_is_no_longer_admitted() -> None:
    rows = [{"reward": 1.0, "logprobs": [-1.0], "behavior_logprobs": [-3.0], "action_mask": [1]}]
    batch = to_batch(rows)
    up = apply_correction(_ones(batch), batch, "icepop")
    assert up.admitted.tolist() == [False]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from(["ipo", "icepop", "tis"]))
def test_corrections_match_slow_loop(data, name) -> None:
    rows = random_rows(data.draw)
    if len({r["task_id"] for r in rows}) == len(rows):
        rows.append(dict(rows[0]))
    batch = to_batch(rows)
    base = GRPO().update(batch)
    up = apply_correction(base, batch, name)
    slow = slow_correction(rows, slow_grpo(rows), name)
    for i, r in enumerate(slow):
        assert up.coefficients[i, : len(r)].tolist() == pytest.approx(r, rel=1e-9, abs=1e-12)
    assert torch.all(up.coefficients[~batch.action_mask] == 0)
    assert torch.equal(up.advantages, base.advantages)


def test_refusals() -> None:
    rows = [{"reward": 1.0, "logprobs": [-1.0], "action_mask": [1]}]
    batch = to_batch(rows)
    up = SFT().update(batch)
    with pytest.raises(UsageError, match="behavior_logprobs"):
        apply_correction(up, batch, "tis")
    _, stale = _stale_batch()
    with pytest.raises(UsageError, match="ipo, icepop, tis"):
        apply_correction(_ones(stale), stale, "clip")
    for knobs, name in [({"eps": 0}, "eps"), ({"band": (2, 5)}, "band"), ({"cap": 0.5}, "cap")]:
        with pytest.raises(UsageError, match=f"{name}.*default"):
            apply_correction(_ones(stale), stale, "ipo", **knobs)


class _Corrected:
    """GRPO on rollouts made stale on purpose (behaviour log-probs = log π + noise), with a
    correction applied last: the learning test under masking and capping."""

    def __init__(self, name: str) -> None:
        self.name, self.inner = name, GRPO()
        self.gen = torch.Generator().manual_seed(0)
        self.touched = 0.0

    def update(self, batch):
        noise = 0.7 * torch.randn(batch.logprobs.shape, generator=self.gen, dtype=torch.float64)
        stale = (batch.logprobs + noise).clamp(max=0)
        batch.behavior_logprobs = torch.where(batch.action_mask, stale, batch.logprobs)
        up = apply_correction(self.inner.update(batch), batch, self.name)
        self.touched += up.stats.get(f"{self.name}_masked_tokens", 0.0)
        self.touched += up.stats.get(f"{self.name}_capped_tokens", 0.0)
        return up


@pytest.mark.parametrize("name", ["ipo", "icepop", "tis"])
def test_toy_policy_learns_under_each_correction(name: str) -> None:
    made: list[_Corrected] = []

    def factory() -> _Corrected:
        made.append(_Corrected(name))
        return made[-1]

    before, after = train_toy(factory, steps=30, seed=6)
    assert made[0].touched > 0  # the correction did mask or cap tokens
    assert after > before + 0.4, (before, after)
