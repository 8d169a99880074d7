"""Skip-observation GAE (Hou et al. 2026, Eq. 4-5; Qi et al. 2026, Eq. 3-4, 14), vectorised."""

from __future__ import annotations

import math

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.methods.gae import (
    _scaled_reverse_cumsum,
    action_returns,
    gae_lambda,
    skip_observation_gae,
)


def loop_gae(
    rewards: list[float], values: list[list[float]], mask: list[list[bool]], alpha: float
) -> list[list[float]]:
    out = []
    for r, v, m in zip(rewards, values, mask, strict=True):
        actions = [t for t, on in enumerate(m) if on]
        n = len(actions)
        lam = max(0.0, 1 - 1 / (alpha * n)) if n else 0.0
        adv = [0.0] * len(m)
        running = 0.0
        for k in reversed(range(n)):
            v_next = v[actions[k + 1]] if k + 1 < n else 0.0
            delta = (r if k == n - 1 else 0.0) + v_next - v[actions[k]]
            running = delta + lam * running
            adv[actions[k]] = running
        out.append(adv)
    return out


def test_lambda_is_length_adaptive() -> None:
    lam = gae_lambda(torch.tensor([0, 1, 2, 4, 1000]), 0.4)
    assert lam.tolist() == [0.0, 0.0, 0.0, 1 - 1 / 1.6, 1 - 1 / 400]


def test_terminal_reward_reaches_first_token_with_weight_lambda_to_l_minus_1() -> None:
    for length in (5, 50, 2000):
        mask = torch.ones(1, length, dtype=torch.bool)
        values = torch.zeros(1, length, dtype=torch.float64)
        lam = gae_lambda(mask.sum(1), 1.5)
        adv = skip_observation_gae(torch.tensor([1.0], dtype=torch.float64), values, mask, lam)
        assert math.isclose(float(adv[0, 0]), float(lam[0]) ** (length - 1), rel_tol=1e-12)
        if length == 2000:
            assert math.isclose(float(adv[0, 0]), math.exp(-1 / 1.5), rel_tol=1e-3)


def test_observation_tokens_are_skipped_not_scored() -> None:
    values = torch.tensor([[0.2, 0.9, 0.9, 0.5, 0.4, 0.0]], dtype=torch.float64)
    mask = torch.tensor([[1, 0, 0, 1, 1, 0]], dtype=torch.bool)  # trailing observation, then pad
    lam = torch.tensor([0.5], dtype=torch.float64)
    adv = skip_observation_gae(torch.tensor([1.0], dtype=torch.float64), values, mask, lam)
    a2 = 1.0 - 0.4
    a1 = 0.4 - 0.5 + 0.5 * a2
    a0 = 0.5 - 0.2 + 0.5 * a1
    torch.testing.assert_close(adv[0], torch.tensor([a0, 0, 0, a1, a2, 0], dtype=torch.float64))


def test_chunked_path_for_tiny_lambda_matches_recursion() -> None:
    gen = torch.Generator().manual_seed(0)
    delta = torch.randn(3, 700, generator=gen, dtype=torch.float64)
    lam = torch.tensor([1e-3, 0.0, 0.999], dtype=torch.float64)
    got = _scaled_reverse_cumsum(delta, lam)
    want = torch.zeros_like(delta)
    carry = torch.zeros(3, dtype=torch.float64)
    for k in reversed(range(700)):
        carry = delta[:, k] + lam * carry
        want[:, k] = carry
    assert bool(torch.isfinite(got).all())
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)


def test_value_targets_are_r_on_every_real_token() -> None:
    mask = torch.tensor([[1, 1, 0], [1, 1, 1]], dtype=torch.bool)
    out = action_returns(torch.tensor([0.3, 1.0], dtype=torch.float64), mask)
    assert out.tolist() == [[0.3, 0.3, 0.0], [1.0, 1.0, 1.0]]


@st.composite
def gae_cases(draw: st.DrawFn) -> tuple[list[float], list[list[float]], list[list[bool]], float]:
    b = draw(st.integers(1, 5))
    t = draw(st.integers(1, 12))
    unit = st.floats(-1.0, 1.0)
    rewards = draw(st.lists(unit, min_size=b, max_size=b))
    values = [draw(st.lists(unit, min_size=t, max_size=t)) for _ in range(b)]
    mask = [draw(st.lists(st.booleans(), min_size=t, max_size=t)) for _ in range(b)]
    alpha = draw(st.sampled_from([0.05, 0.4, 1.5, 10.0]))
    return rewards, values, mask, alpha


@settings(max_examples=80, deadline=None)
@given(gae_cases())
def test_matches_the_recursion(case: tuple) -> None:
    rewards, values, mask, alpha = case
    m = torch.tensor(mask, dtype=torch.bool)
    lam = gae_lambda(m.sum(1), alpha)
    got = skip_observation_gae(
        torch.tensor(rewards, dtype=torch.float64),
        torch.tensor(values, dtype=torch.float64),
        m,
        lam,
    )
    want = torch.tensor(loop_gae(rewards, values, mask, alpha), dtype=torch.float64)
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-12)
