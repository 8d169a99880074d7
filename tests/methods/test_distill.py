"""OPD and OPSD: c = log π_T − log π_θ on action tokens, and the knobs the trainer must honour."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slow_reference_grouped import random_rows, slow_opd, to_batch
from toy_policy import train_toy
from whilecli.errors import InputError, UsageError
from whilecli.methods.distill import OPD, OPSD


def test_opd_hand_computed() -> None:
    rows = [
        {
            "reward": float("nan"),  # no reward is read
            "logprobs": [-1.0, -0.5, -2.0],
            "teacher_logprobs": [-0.25, -3.0, -0.5],
            "action_mask": [1, 0, 1],
        },
        {"reward": 0.0, "logprobs": [-0.1], "teacher_logprobs": [-0.3], "action_mask": [1]},
    ]
    up = OPD().update(to_batch(rows))
    assert up.coefficients[0].tolist() == pytest.approx([0.75, 0.0, 1.5])
    assert up.coefficients[1].tolist() == pytest.approx([-0.2, 0.0, 0.0])
    assert up.stats["gap_mean"] == pytest.approx((0.75 + 1.5 - 0.2) / 3)
    assert up.admitted.tolist() == [True, True]


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_opd_matches_slow_loop(data) -> None:
    rows = random_rows(data.draw, stale=False)
    up = OPD().update(to_batch(rows))
    for i, r in enumerate(slow_opd(rows)):
        assert up.coefficients[i, : len(r)].tolist() == pytest.approx(r, abs=1e-12)
    assert torch.all(up.coefficients[~to_batch(rows).action_mask] == 0)


def test_knobs_reported_not_dropped() -> None:
    rows = [{"reward": 1.0, "logprobs": [-1.0], "teacher_logprobs": [-0.5], "action_mask": [1]}]
    notes = " ".join(OPD(top_k=8, divergence="forward_kl").update(to_batch(rows)).notes)
    assert "top-8" in notes and "forward_kl" in notes and "trainer must" in notes
    notes = " ".join(OPSD(anchor="initial", privileged="reference").update(to_batch(rows)).notes)
    assert "anchor initial" in notes and "reference" in notes and "top-32" in notes
    notes = " ".join(OPSD().update(to_batch(rows)).notes)
    assert "0.01" in notes


def test_teacher_logprobs_required() -> None:
    batch = to_batch([{"reward": 1.0, "logprobs": [-1.0], "action_mask": [1]}])
    with pytest.raises(InputError, match="teacher_logprobs"):
        OPSD().update(batch)
    assert "teacher_logprobs" in OPD.requires


@pytest.mark.parametrize(
    ("cls", "knobs", "name"),
    [
        (OPD, {"top_k": 0}, "top_k"),
        (OPD, {"divergence": "kl"}, "divergence"),
        (OPSD, {"anchor": "ema:1.5"}, "anchor"),
        (OPSD, {"anchor": "frozen"}, "anchor"),
        (OPSD, {"privileged": "a b"}, "privileged"),
    ],
)
def test_knobs_refused(cls, knobs: dict, name: str) -> None:
    with pytest.raises(UsageError, match=name) as err:
        cls(**knobs)
    assert "default" in str(err.value)


@pytest.mark.parametrize("cls", [OPD, OPSD])
def test_toy_policy_learns_from_a_better_teacher(cls) -> None:
    before, after = train_toy(cls, steps=30, seed=3)
    assert after > before + 0.4, (before, after)
