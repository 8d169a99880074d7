"""Hypothesis strategies for random ragged batches, and a comparison against the slow loops."""

from __future__ import annotations

from typing import Any

import torch
from hypothesis import strategies as st

from whilecli.methods.batch import Update

# Log-ratio drifts: fresh, stale beyond a gate or band, and extreme (past the ±20/±30 clamps).
DRIFTS = (0.0, 0.01, 0.3, 2.5, 45.0)


@st.composite
def ragged_rows(
    draw: st.DrawFn,
    *,
    min_actions: int = 0,
    max_rows: int = 6,
    max_len: int = 10,
    values: bool = True,
) -> list[dict[str, Any]]:
    """Rows with observation spans, stale or extreme behaviour log-probs, values in [0, 1]."""
    n = draw(st.integers(1, max_rows))
    equal = draw(st.booleans())
    shared = draw(st.sampled_from([0.0, 0.5, 1.0]))
    unit = st.floats(0.0, 1.0, allow_nan=False)
    rows = []
    for _ in range(n):
        length = draw(st.integers(max(1, min_actions), max_len))
        mask = draw(st.lists(st.booleans(), min_size=length, max_size=length))
        if sum(mask) < min_actions:
            mask = [True] * length
        logprobs = draw(st.lists(st.floats(-6.0, -1e-4), min_size=length, max_size=length))
        drift = draw(st.sampled_from(DRIFTS))
        shifts = draw(st.lists(st.floats(-1.0, 1.0), min_size=length, max_size=length))
        behaviour = [min(0.0, lp + drift * s) for lp, s in zip(logprobs, shifts, strict=True)]
        if drift == DRIFTS[-1]:  # log-ratios of about +45 and -45 on some tokens
            pairs = list(zip(logprobs, shifts, strict=True))
            behaviour = [lp - drift if s > 0.5 else lp for lp, s in pairs]
            logprobs = [lp - drift if s < -0.5 else lp for lp, s in pairs]
        reward = shared if equal else draw(st.one_of(st.sampled_from([0.0, 1.0]), unit))
        row: dict[str, Any] = {
            "reward": reward,
            "logprobs": logprobs,
            "behavior_logprobs": behaviour,
            "action_mask": [int(m) for m in mask],
        }
        if values:
            row["values"] = draw(st.lists(unit, min_size=length, max_size=length))
        rows.append(row)
    return rows


def assert_matches(
    update: Update,
    slow: tuple[Any, Any, Any, Any],
    rows: list[dict[str, Any]],
    *,
    rtol: float = 1e-9,
    atol: float = 1e-12,
) -> None:
    """Every row's coefficients, advantages, admitted flag and value targets equal the loop's,
    and the padding beyond each row is exactly 0."""
    coefs, advs, admitted, targets = slow
    assert update.admitted.tolist() == admitted
    for i, row in enumerate(rows):
        n = len(row["logprobs"])
        got_c = update.coefficients[i]
        expect = torch.tensor(coefs[i], dtype=torch.float64)
        torch.testing.assert_close(got_c[:n].double().cpu(), expect, rtol=rtol, atol=atol)
        assert bool((got_c[n:] == 0).all())
        torch.testing.assert_close(
            update.advantages[i, :n].double().cpu(),
            torch.tensor(advs[i], dtype=torch.float64),
            rtol=rtol,
            atol=atol,
        )
        if targets is None:
            assert update.value_targets is None
        else:
            torch.testing.assert_close(
                update.value_targets[i, :n].double().cpu(),
                torch.tensor(targets[i], dtype=torch.float64),
            )


def well_conditioned(rows: list[dict[str, Any]], truncated: str = "mask") -> bool:
    """No group whose rewards differ, but by so little that (R − mean)/std is ill-conditioned.

    Rewards a few ulps apart (``1.0`` and ``0.9999999999999999``) are not a unanimous group,
    so A = (R − mean)/std is of order 1, yet every rounding of the mean changes it by as much:
    two correct summation orders disagree. Property tests that compare summation orders keep
    to groups whose spread is at least 1e-6 of their scale.
    """
    from slow_reference_grouped import _rewards

    rewards = _rewards(rows, truncated)
    groups: dict[Any, list[float]] = {}
    for row, reward in zip(rows, rewards, strict=True):
        groups.setdefault(row.get("task_id"), []).append(reward)
    for members in groups.values():
        spread = max(members) - min(members)
        if 0 < spread < 1e-6 * max(1.0, max(abs(m) for m in members)):
            return False
    return True
