"""SFT: c = 1 on the action tokens of passing rows."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slow_reference_grouped import random_rows, slow_sft, to_batch
from toy_policy import train_toy
from whilecli.errors import UsageError
from whilecli.methods.sft import SFT


def test_sft_hand_computed() -> None:
    rows = [
        {"reward": 1.0, "logprobs": [-1.0, -1.0, -1.0], "action_mask": [1, 0, 1]},
        {"reward": 0.5, "logprobs": [-1.0], "action_mask": [1]},
    ]
    up = SFT().update(to_batch(rows))
    assert up.coefficients.tolist() == [[1.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    assert up.admitted.tolist() == [True, False]
    assert up.stats["passing_rows"] == 1 and up.stats["trained_tokens"] == 2
    assert SFT(pass_threshold=0.5).update(to_batch(rows)).coefficients[1, 0] == 1


def test_no_pass_is_said() -> None:
    up = SFT().update(to_batch([{"reward": 0.0, "logprobs": [-1.0], "action_mask": [1]}]))
    assert torch.all(up.coefficients == 0) and any("no row passes" in n for n in up.notes)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from([0.5, 1.0]))
def test_sft_matches_slow_loop(data, threshold) -> None:
    rows = random_rows(data.draw, stale=False)
    up = SFT(pass_threshold=threshold).update(to_batch(rows))
    for i, r in enumerate(slow_sft(rows, threshold)):
        assert up.coefficients[i, : len(r)].tolist() == r


def test_knob_refused() -> None:
    with pytest.raises(UsageError, match=r"pass_threshold.*default 1.0.*'x'"):
        SFT(pass_threshold="x")  # type: ignore[arg-type]


def test_toy_policy_learns() -> None:
    before, after = train_toy(lambda: SFT(pass_threshold=0.6), steps=30, seed=5)
    assert after > before + 0.3, (before, after)
