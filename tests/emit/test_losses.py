"""The custom losses whilecli ships for prime-rl (icepop, tis), against hand computation, a
plain-Python loop over the seed's equations, and autograd."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.emit.losses import KL_TAU, icepop_loss, tis_loss

LP = [-1.0, -0.5, -2.0, -0.1]
IP = [-1.0, -1.5, -0.5, -0.2]
ADV = [1.0, -2.0, 0.5, 3.0]
MASK = [True, True, True, False]


def make_inputs(
    lp: list[float],
    ip: list[float],
    adv: list[float],
    mask: list[bool],
    weights: list[float] | None = None,
) -> SimpleNamespace:
    """Stand-in for prime-rl's per-sample loss inputs (1-D tensors)."""
    return SimpleNamespace(
        trainer_logprobs=torch.tensor(lp, dtype=torch.float64, requires_grad=True),
        inference_logprobs=torch.tensor(ip, dtype=torch.float64),
        ref_logprobs=None,
        advantages=torch.tensor(adv, dtype=torch.float64),
        loss_mask=torch.tensor(mask, dtype=torch.bool),
        loss_weights=None if weights is None else torch.tensor(weights, dtype=torch.float64),
    )


def slow_icepop(lp, ip, adv, mask, weights, low, high, kl_tau):
    """Σ_t w(−m·1[low ≤ ρ ≤ high]·A·ρ + m·kl_tau·(log ρ)²) and its gradient, one token at a time."""
    loss, grad = 0.0, []
    for t in range(len(lp)):
        m = 1.0 if mask[t] else 0.0
        w = 1.0 if weights is None else weights[t]
        lr = lp[t] - ip[t]
        r = math.exp(lr)
        keep = 1.0 if low <= r <= high else 0.0
        loss += w * (m * kl_tau * lr * lr - m * keep * adv[t] * r)
        grad.append(w * (2 * m * kl_tau * lr - m * keep * adv[t] * r))
    return loss, grad


def slow_tis(lp, ip, adv, mask, weights, cap, kl_tau):
    """Σ_t w(−m·A·min(ρ, cap) + m·kl_tau·(log ρ)²); gradient −m·A·min(ρ, cap) + KL's."""
    loss, grad = 0.0, []
    for t in range(len(lp)):
        m = 1.0 if mask[t] else 0.0
        w = 1.0 if weights is None else weights[t]
        lr = lp[t] - ip[t]
        v = min(math.exp(lr), cap)
        loss += w * (m * kl_tau * lr * lr - m * adv[t] * v)
        grad.append(w * (2 * m * kl_tau * lr - m * adv[t] * v))
    return loss, grad


def run(fn, inputs, **kw):
    out = fn(inputs, **kw)
    out.loss.backward()
    return out, inputs.trainer_logprobs.grad.tolist()


def test_icepop_hand_computed() -> None:
    # log ratios 0, 1, −1.5, 0.1 → ρ = 1, e, e^−1.5 ≈ 0.223 (outside [0.5, 5]), masked
    out, grad = run(icepop_loss, make_inputs(LP, IP, ADV, MASK), kl_tau=0.0)
    assert out.loss.item() == pytest.approx(-(1.0 * 1.0 + (-2.0) * math.e), rel=1e-12)
    assert grad == pytest.approx([-1.0, 2.0 * math.e, 0.0, 0.0], rel=1e-12)
    assert out.metrics["icepop/masked_fraction"].item() == pytest.approx(1 / 3)


def test_icepop_default_kl_term() -> None:
    out, grad = run(icepop_loss, make_inputs(LP, IP, ADV, MASK))
    kl = KL_TAU * (0.0 + 1.0 + 2.25)
    assert out.loss.item() == pytest.approx(-(1.0 - 2.0 * math.e) + kl, rel=1e-12)
    assert grad[2] == pytest.approx(2 * KL_TAU * -1.5)  # outside the band: only the KL term


def test_tis_hand_computed() -> None:
    # weights min(ρ, 2) = 1, 2 (capped from e), e^−1.5, masked
    out, grad = run(tis_loss, make_inputs(LP, IP, ADV, MASK), kl_tau=0.0)
    w2 = math.exp(-1.5)
    assert out.loss.item() == pytest.approx(-(1.0 - 4.0 + 0.5 * w2), rel=1e-12)
    assert grad == pytest.approx([-1.0, 4.0, -0.5 * w2, 0.0], rel=1e-12)
    assert out.metrics["tis/capped_fraction"].item() == pytest.approx(1 / 3)


def test_tis_gradient_is_seed_coefficient() -> None:
    """c ← c·min(ρ, cap): ∂loss/∂trainer_logprobs = −mask·A·min(ρ, cap), capped tokens included."""
    inputs = make_inputs(LP, IP, ADV, MASK)
    _, grad = run(tis_loss, inputs, cap=2.0, kl_tau=0.0)
    rho = torch.exp(torch.tensor(LP) - torch.tensor(IP)).double()
    expected = -torch.tensor(MASK).double() * torch.tensor(ADV).double() * rho.clamp(max=2.0)
    assert torch.allclose(torch.tensor(grad, dtype=torch.float64), expected, atol=1e-12)


finite = st.floats(-8.0, 0.0, allow_nan=False)


@st.composite
def samples(draw):
    n = draw(st.integers(1, 12))
    lp = draw(st.lists(finite, min_size=n, max_size=n))
    ip = draw(st.lists(finite, min_size=n, max_size=n))
    adv = draw(st.lists(st.floats(-3, 3, allow_nan=False), min_size=n, max_size=n))
    mask = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    weights = draw(st.none() | st.lists(st.floats(0, 2), min_size=n, max_size=n))
    return lp, ip, adv, mask, weights


@settings(max_examples=60, deadline=None)
@given(samples(), st.floats(0.05, 1.0), st.floats(1.0, 20.0), st.sampled_from([0.0, 1e-3, 0.1]))
def test_icepop_matches_slow_loop(sample, low, high, kl_tau) -> None:
    lp, ip, adv, mask, weights = sample
    out, grad = run(icepop_loss, make_inputs(*sample), low=low, high=high, kl_tau=kl_tau)
    loss, slow_grad = slow_icepop(lp, ip, adv, mask, weights, low, high, kl_tau)
    assert out.loss.item() == pytest.approx(loss, rel=1e-9, abs=1e-9)
    assert grad == pytest.approx(slow_grad, rel=1e-9, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(samples(), st.floats(1.0, 10.0), st.sampled_from([0.0, 1e-3, 0.1]))
def test_tis_matches_slow_loop(sample, cap, kl_tau) -> None:
    lp, ip, adv, mask, weights = sample
    out, grad = run(tis_loss, make_inputs(*sample), cap=cap, kl_tau=kl_tau)
    loss, slow_grad = slow_tis(lp, ip, adv, mask, weights, cap, kl_tau)
    assert out.loss.item() == pytest.approx(loss, rel=1e-9, abs=1e-9)
    assert grad == pytest.approx(slow_grad, rel=1e-9, abs=1e-9)


@settings(max_examples=50, deadline=None)
@given(samples())
def test_wide_band_and_high_cap_give_the_builtin_policy_gradient(sample) -> None:
    """With the band or cap out of reach both reduce to the built-in Σ −m·A·ρ (kl_tau = 0)."""
    lp, ip, adv, mask, weights = sample
    builtin = -sum(
        (1.0 if weights is None else weights[t]) * mask[t] * adv[t] * math.exp(lp[t] - ip[t])
        for t in range(len(lp))
    )
    a = icepop_loss(make_inputs(*sample), low=1e-9, high=1e9, kl_tau=0.0).loss.item()
    b = tis_loss(make_inputs(*sample), cap=1e9, kl_tau=0.0).loss.item()
    assert a == pytest.approx(builtin, rel=1e-9, abs=1e-9)
    assert b == pytest.approx(builtin, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("fn", [icepop_loss, tis_loss])
def test_extreme_ratios_stay_finite(fn) -> None:
    inputs = make_inputs([0.0, -500.0, 0.0], [-900.0, 0.0, 0.0], [1.0, -1.0, 2.0], [True] * 3)
    out = fn(inputs)
    out.loss.backward()
    assert torch.isfinite(out.loss)
    assert torch.isfinite(inputs.trainer_logprobs.grad).all()
    for v in out.metrics.values():
        assert torch.isfinite(v)


@pytest.mark.parametrize("fn", [icepop_loss, tis_loss])
def test_masked_tokens_carry_nothing(fn) -> None:
    inputs = make_inputs(LP, IP, ADV, [False] * 4)
    out, grad = run(fn, inputs)
    assert out.loss.item() == 0.0
    assert grad == [0.0] * 4


def test_mapping_inputs_and_bad_knobs() -> None:
    d = vars(make_inputs(LP, IP, ADV, MASK))
    assert icepop_loss(d, kl_tau=0.0).loss.item() == pytest.approx(2 * math.e - 1)
    with pytest.raises(ValueError, match="low"):
        icepop_loss(d, low=2.0, high=5.0)
    with pytest.raises(ValueError, match="cap"):
        tis_loss(d, cap=0.5)
    bad = dict(d, advantages=torch.zeros(2, dtype=torch.float64))
    with pytest.raises(ValueError, match="advantages"):
        tis_loss(bad)
