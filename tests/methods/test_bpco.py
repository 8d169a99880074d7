"""BPCO (Qi et al. 2026, Eq. 2-4, 9, 11, 14) against hand-computed values and the slow loop."""

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
from whilecli.methods.bpco import BPCO


def one_token(reward: float, value: float, logprob: float, behaviour: float) -> dict:
    return {
        "reward": reward,
        "logprobs": [logprob],
        "behavior_logprobs": [behaviour],
        "values": [value],
    }


def test_probability_clip_by_hand() -> None:
    half = math.log(0.5)
    rows = [
        one_token(1.0, 0.5, 0.0, half),  # A = +0.5, μ = 0.5, ρ = 2
        one_token(0.0, 0.5, half, 0.0),  # A = −0.5, μ = 1, ρ = 0.5
        one_token(1.0, 0.5, -1.0, -801.0),  # μ underflows: never clipped, ρ clamped to e^20
        one_token(0.5, 0.5, -0.1, -3.0),  # A = 0
    ]
    batch = Batch.from_rows(rows)
    assert float(batch.logprobs[0, 0] - batch.behavior_logprobs[0, 0]) == math.log(2.0)
    tie = BPCO(clip=0.5).update(batch)  # 1 + 0.5/0.5 = 2 and 1 − 0.5/1 = 0.5: ties, unclipped
    assert tie.coefficients[:, 0].tolist() == [2.0 * 0.5, 0.5 * -0.5, math.exp(20.0) * 0.5, 0.0]
    assert tie.admitted.tolist() == [True, True, True, True]
    assert tie.stats["clamped_tokens"] == 1.0
    tight = BPCO(clip=0.4).update(batch)  # 1 + 0.8 < 2 and 1 − 0.4 > 0.5: both clipped
    assert tight.coefficients[:2, 0].tolist() == [0.0, 0.0]
    assert tight.admitted.tolist() == [False, False, True, True]
    assert tight.stats["clipped_tokens"] == 2.0
    # no 1/B: the same trajectory alone gets the same coefficient
    alone = BPCO(clip=0.5).update(Batch.from_rows(rows[:1]))
    assert alone.coefficients[0, 0] == tie.coefficients[0, 0]
    assert any("no 1/B" in note for note in tie.notes)


def test_gae_lambda_zero_for_short_rows_and_value_targets() -> None:
    # α = 0.4, L = 2 → λ = max(0, 1 − 1/0.8) = 0: A_k = δ_k.
    row = {
        "reward": 1.0,
        "logprobs": [-0.3, -2.0, -0.3],
        "action_mask": [1, 0, 1],
        "values": [0.25, 0.0, 0.75],
    }
    update = BPCO().update(Batch.from_rows([row]))
    assert update.advantages[0].tolist() == [0.75 - 0.25, 0.0, 1.0 - 0.75]
    assert update.coefficients[0].tolist() == [0.5, 0.0, 0.25]
    assert update.value_targets is not None
    assert update.value_targets[0].tolist() == [1.0, 1.0, 1.0]
    assert update.stats["zero_lambda_trajectories"] == 1.0


def test_explained_variance_by_hand() -> None:
    rows = [
        {"reward": 1.0, "logprobs": [-0.1, -0.1], "values": [0.75, 0.25]},
        {"reward": 0.0, "logprobs": [-0.1, -0.1], "values": [0.25, 0.25]},
    ]
    update = BPCO().update(Batch.from_rows(rows))
    r = [1.0, 1.0, 0.0, 0.0]
    v = [0.75, 0.25, 0.25, 0.25]
    d = [a - b for a, b in zip(r, v, strict=True)]

    def pvar(x: list[float]) -> float:
        m = sum(x) / len(x)
        return sum((y - m) ** 2 for y in x) / len(x)

    ev = update.stats["explained_variance"]
    assert ev is not None and math.isclose(ev, 1 - pvar(d) / pvar(r), rel_tol=1e-12)
    flat = BPCO().update(Batch.from_rows([{**rows[0], "reward": 0.5}, {**rows[1], "reward": 0.5}]))
    assert flat.stats["explained_variance"] is None
    assert any("Explained variance is undefined" in note for note in flat.notes)


def test_values_outside_range_refused_naming_row_and_token() -> None:
    rows = [
        {"reward": 1.0, "logprobs": [-0.1], "values": [0.5]},
        {"reward": 1.0, "logprobs": [-0.1, -0.1], "values": [0.5, 1.5]},
    ]
    with pytest.raises(InputError, match="token 1") as err:
        BPCO().update(Batch.from_rows(rows))
    assert err.value.row == 1 and err.value.field == "values"
    assert BPCO(reward_range=(0.0, 2.0)).update(Batch.from_rows(rows)).coefficients.shape == (2, 2)
    with pytest.raises(InputError, match="values"):
        BPCO().update(Batch.from_rows([{"reward": 1.0, "logprobs": [-0.1]}]))


def test_empty_trajectory_kept_not_admitted() -> None:
    rows = [
        {"reward": 1.0, "logprobs": [-0.1], "action_mask": [1], "values": [0.5]},
        {"reward": 0.0, "logprobs": [-0.1, -0.2], "action_mask": [0, 0], "values": [0.5, 0.5]},
    ]
    update = BPCO().update(Batch.from_rows(rows))
    assert update.admitted.tolist() == [True, False]
    assert update.coefficients[1].tolist() == [0.0, 0.0]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"clip": 0.0}, r"clip.*default 0\.2"),
        ({"clip": 1.5}, r"clip.*default 0\.2"),
        ({"gae_alpha": -1.0}, r"gae_alpha.*default 0\.4"),
        ({"reward_range": (1.0, 0.0)}, r"reward_range.*default \(0\.0, 1\.0\)"),
        ({"reward_range": (0.0, math.inf)}, "reward_range"),
    ],
)
def test_bad_knobs_refused(kwargs: dict, match: str) -> None:
    with pytest.raises(UsageError, match=match):
        BPCO(**kwargs)
    assert BPCO(clip=1.0).clip == 1.0


@settings(max_examples=60, deadline=None)
@given(ragged_rows())
def test_matches_slow_loop(rows: list[dict]) -> None:
    for clip, alpha in ((0.2, 0.4), (0.05, 2.0)):
        batch = Batch.from_rows(rows)
        update = BPCO(clip=clip, gae_alpha=alpha).update(batch)
        assert_matches(update, slow_reference.bpco(rows, clip=clip, gae_alpha=alpha), rows)
        assert bool((update.coefficients[~batch.action_mask] == 0).all())
        assert bool((update.coefficients[~update.admitted] == 0).all())


def test_zero_advantage_stays_zero_under_the_largest_ratio() -> None:
    """A = R − V = 0 exactly on the last action token and ρ = e^20: c must be exactly 0, so the
    GAE may not turn the cancellation into rounding noise that ρ then multiplies."""
    rows = [
        {
            "reward": 1.0,
            "logprobs": [-1.0] * 10,
            "behavior_logprobs": [-1.0] * 9 + [-46.0],
            "action_mask": [0, 0, 0, 0, 1, 1, 1, 1, 1, 1],
            "values": [0.0] * 9 + [1.0],
        },
        {
            "reward": 1.0,
            "logprobs": [-1.0] * 3,
            "behavior_logprobs": [-1.0] * 3,
            "action_mask": [1] * 3,
            "values": [1.0] * 3,
        },
    ]
    update = BPCO().update(Batch.from_rows(rows))
    assert_matches(update, slow_reference.bpco(rows), rows)
    assert float(update.coefficients[0, 9]) == 0.0


def test_learns_the_toy_task() -> None:
    before, after = train_toy(BPCO, steps=40, seed=2)
    assert before < 0.3 and after > 0.8


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_float32_matches_cpu() -> None:
    make_batch, make_method, _ = CASES["bpco"]
    batch = make_batch()
    cpu = make_method().update(batch.to("cpu", torch.float32))
    gpu = make_method().update(batch.to("cuda"))
    assert_float32_close(gpu, cpu, "bpco")
