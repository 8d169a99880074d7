"""FlashReinforce (Hu et al. 2026, Eq. 5-10) against hand-computed values and the slow loop."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings

import slow_reference
from batch_strategies import assert_matches, ragged_rows
from cuda_cases import CASES, assert_float32_close
from toy_policy import train_toy
from whilecli.errors import InputError, UsageError
from whilecli.methods.batch import Batch
from whilecli.methods.flash_reinforce import (
    FlashReinforce,
    bernoulli_kl,
    flash_reinforce_reference,
)

SEED_BATCH = [
    {"reward": 1.0, "logprobs": [-0.5, -1.2, -0.3]},
    {"reward": 0.0, "logprobs": [-0.7, -0.4]},
]


def test_seed_example_by_hand() -> None:
    update = FlashReinforce().update(Batch.from_rows(SEED_BATCH))
    # mean R = 0.5, A = (+0.5, -0.5), on-policy ρ = 1, KL 0, c = A / (T_i B).
    expected = torch.tensor([[0.5 / 6] * 3, [-0.5 / 4, -0.5 / 4, 0.0]], dtype=torch.float64)
    torch.testing.assert_close(update.coefficients, expected, rtol=0, atol=1e-15)
    assert update.advantages.tolist() == [[0.5, 0.5, 0.5], [-0.5, -0.5, 0.0]]
    assert update.admitted.tolist() == [True, True]
    assert update.value_targets is None
    assert update.stats["admitted_share"] == 1.0
    assert any("on-policy" in note for note in update.notes)


def test_gate_ratio_and_observation_by_hand() -> None:
    mu_stale = math.log(0.1)
    rows = [
        # fresh: ratio e^0.01 on one token, an observation token in the middle
        {
            "reward": 1.0,
            "logprobs": [-1.0, -2.0, -0.5],
            "behavior_logprobs": [-1.01, -9.0, -0.5],
            "action_mask": [1, 0, 1],
        },
        # stale: π = 0.9 where μ = 0.1, far above trust
        {
            "reward": 0.0,
            "logprobs": [math.log(0.9)],
            "behavior_logprobs": [mu_stale],
            "action_mask": [1],
        },
        {
            "reward": 0.5,
            "logprobs": [-0.2, -0.2],
            "behavior_logprobs": [-0.2, -0.2],
            "action_mask": [1, 1],
        },
    ]
    update = FlashReinforce().update(Batch.from_rows(rows))
    mean_r = 0.5
    p = math.exp(-1.01)
    q = math.exp(-1.0)
    d = p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))
    assert d / 2 <= 0.003
    c0 = (1.0 - mean_r) / (2 * 3)
    expected0 = [c0 * math.exp(0.01), 0.0, c0]
    torch.testing.assert_close(update.coefficients[0], torch.tensor(expected0, dtype=torch.float64))
    assert update.admitted.tolist() == [True, False, True]
    assert update.coefficients[1].abs().sum() == 0
    assert update.coefficients[2].abs().sum() == 0  # A = 0 exactly
    assert update.stats["gated"] == 1.0
    assert any("1 of 3 trajectories dropped" in note for note in update.notes)
    # the gated trajectory still counts in B: c0 used B = 3 above


def test_bernoulli_kl_floor_matches_formula() -> None:
    log_p = torch.tensor([0.0, -1e-9, -50.0, math.log(0.3)], dtype=torch.float64)
    log_q = torch.tensor([-50.0, -1e-9, 0.0, math.log(0.6)], dtype=torch.float64)
    got = bernoulli_kl(log_p, log_q)
    for k in range(4):
        p = min(max(math.exp(float(log_p[k])), 1e-6), 1 - 1e-6)
        q = min(max(math.exp(float(log_q[k])), 1e-6), 1 - 1e-6)
        want = p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))
        assert math.isclose(float(got[k]), want, rel_tol=1e-12, abs_tol=1e-15)


def test_log_ratio_clamped_at_30() -> None:
    rows = [
        {"reward": 1.0, "logprobs": [-0.1], "behavior_logprobs": [-40.1]},
        {"reward": 0.0, "logprobs": [-0.1], "behavior_logprobs": [-0.1]},
    ]
    update = FlashReinforce(trust=math.inf).update(Batch.from_rows(rows))
    assert math.isclose(float(update.coefficients[0, 0]), 0.5 * math.exp(30.0) / 2, rel_tol=1e-12)
    assert update.stats["clamped_tokens"] == 1.0
    assert any("clamped" in note for note in update.notes)


def test_scales_as_one_over_b() -> None:
    batch = Batch.from_rows(SEED_BATCH)
    doubled = Batch.from_rows(SEED_BATCH + SEED_BATCH)
    one = FlashReinforce().update(batch).coefficients
    two = FlashReinforce().update(doubled).coefficients
    torch.testing.assert_close(two[:2], one / 2, rtol=1e-15, atol=0)


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"reward": 1.0, "logprobs": [-0.1, -0.2], "action_mask": [0, 0]}, "action_mask"),
        ({"reward": math.nan, "logprobs": [-0.1]}, "reward"),
        ({"reward": 1.0, "logprobs": [-0.1, 0.4]}, "logprobs"),
        ({"reward": 1.0, "logprobs": [-0.1, math.nan]}, "logprobs"),
        ({"reward": 1.0, "logprobs": [-0.1], "behavior_logprobs": [math.inf]}, "behavior_logprobs"),
    ],
)
def test_refuses_bad_trajectory_with_index(row: dict, field: str) -> None:
    good: dict = {"reward": 0.0, "logprobs": [-0.3]}
    fill = {"action_mask": [1], "behavior_logprobs": [-0.3]}
    good.update({name: value for name, value in fill.items() if name in row})
    with pytest.raises(InputError) as err:
        batch = Batch.from_rows([good, row], logprob_fields=())
        FlashReinforce().update(batch)
    assert err.value.row == 1 and err.value.field == field


def test_refuses_bad_tensor_batch_too() -> None:
    batch = Batch.from_tensors(torch.tensor([[-0.1, 0.2]], dtype=torch.float64), rewards=[1.0])
    with pytest.raises(InputError, match="pass log p, not p"):
        FlashReinforce().update(batch)


@pytest.mark.parametrize("trust", [0, -1.0, math.nan, "0.1", True])
def test_bad_trust_refused_naming_default(trust: object) -> None:
    with pytest.raises(UsageError, match=r"trust.*default 0\.003"):
        FlashReinforce(trust=trust)  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(ragged_rows(min_actions=1, values=False))
def test_matches_slow_loop(rows: list[dict]) -> None:
    for trust in (0.003, 0.5):
        update = FlashReinforce(trust=trust).update(Batch.from_rows(rows))
        assert_matches(update, slow_reference.flash_reinforce(rows, trust=trust), rows)
        masked = ~Batch.from_rows(rows).action_mask
        assert bool((update.coefficients[masked] == 0).all())
        assert bool((update.coefficients[~update.admitted] == 0).all())


def test_learns_the_toy_task() -> None:
    before, after = train_toy(FlashReinforce, steps=40, seed=0)
    assert before < 0.3 and after > 0.8


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_float32_matches_cpu() -> None:
    make_batch, make_method, _ = CASES["flash_reinforce"]
    batch = make_batch()
    cpu = make_method().update(batch.to("cpu", torch.float32))
    gpu = make_method().update(batch.to("cuda"))
    assert_float32_close(gpu, cpu, "flash_reinforce")


def test_single_trajectory_has_zero_advantage() -> None:
    update = FlashReinforce().update(Batch.from_rows([SEED_BATCH[0]]))
    assert update.coefficients.abs().sum() == 0
    assert update.admitted.tolist() == [True]
    assert any("Every reward is equal" in note for note in update.notes)


def test_a_dropped_row_gets_plus_zero_not_minus_zero() -> None:
    """A row over the gate with A < 0 writes +0.0 (m_i = 0 is a coefficient of 0, not −0.0
    from 0 · A_i), in the fast path and the plain function, and under a correction."""
    lp = torch.tensor([[math.log(0.9)] * 2] * 3, dtype=torch.float64)
    mu = lp.clone()
    mu[2] = math.log(0.2)  # far from the sampler: dropped
    batch = Batch.from_tensors(
        lp, rewards=[1.0, 0.5, 0.0], behavior_logprobs=mu
    )  # the dropped row has A = −0.5
    up = FlashReinforce().update(batch)
    assert up.admitted.tolist() == [True, True, False]
    assert not bool(torch.signbit(up.coefficients[2]).any())
    c, *_ = flash_reinforce_reference(batch.rewards, lp, mu, batch.action_mask)
    assert not bool(torch.signbit(c[2]).any())
    for corr in ("tis", "icepop", "ipo"):
        up = FlashReinforce().update(batch, correction=corr)
        assert not bool(torch.signbit(up.coefficients[2]).any()), corr
