"""SAO (Hou et al. 2026, Eq. 1-5) against hand-computed values and the slow loop."""

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
from whilecli.methods.sao import SAO


def test_by_hand_with_an_observation_span() -> None:
    # actions at tokens 0, 1, 3; token 2 is tool output. L = 3, α = 1.5 → λ = 1 − 1/4.5.
    row = {
        "reward": 1.0,
        "logprobs": [-0.5, -0.5, -3.0, -0.5],
        "behavior_logprobs": [-0.5, -0.5, -3.0, -0.5 - math.log(2.0)],
        "action_mask": [1, 1, 0, 1],
        "values": [0.2, 0.5, 0.9, 0.4],
    }
    other = {
        "reward": 0.0,
        "logprobs": [-1.0],
        "behavior_logprobs": [-1.0],
        "action_mask": [1],
        "values": [0.0],
    }
    update = SAO().update(Batch.from_rows([row, other]))
    lam = 1 - 1 / 4.5
    d = [0.5 - 0.2, 0.4 - 0.5, 1.0 - 0.4]  # the observation's 0.9 is skipped
    a2 = d[2]
    a1 = d[1] + lam * a2
    a0 = d[0] + lam * a1
    n = 4  # action tokens in the batch
    expected = [a0 / n, a1 / n, 0.0, 2.0 * a2 / n]
    torch.testing.assert_close(update.coefficients[0], torch.tensor(expected, dtype=torch.float64))
    torch.testing.assert_close(
        update.advantages[0], torch.tensor([a0, a1, 0.0, a2], dtype=torch.float64)
    )
    assert update.value_targets is not None
    assert update.value_targets[0].tolist() == [1.0] * 4
    # second row: L = 1 → λ = max(0, 1 − 1/1.5) ; A = R − V = 0
    assert update.coefficients[1, 0] == 0.0
    assert update.admitted.tolist() == [True, True]


def test_open_band_masks_the_edges_and_overflow() -> None:
    assert math.exp(math.log(2.0)) == 2.0
    rows = [
        {
            "reward": 1.0,
            "logprobs": [0.0, -1.0, -1.0, -1.0],
            "behavior_logprobs": [-math.log(2.0), -1.0, -1.0, -1.0],
            "values": [0.0, 0.0, 0.0, 0.0],
        },
        # log-ratio +800: the ratio overflows to inf, outside the band
        {"reward": 1.0, "logprobs": [-1.0], "behavior_logprobs": [-801.0], "values": [0.0]},
    ]
    update = SAO(ratio=(0.5, 2.0)).update(Batch.from_rows(rows))
    assert update.coefficients[0, 0] == 0.0  # ρ = 2 exactly: not strictly inside
    assert bool((update.coefficients[0, 1:] != 0).all())
    assert update.coefficients[1, 0] == 0.0
    assert update.admitted.tolist() == [True, False]
    assert update.stats["above_band"] == 2.0
    assert any("not admitted" in note for note in update.notes)
    assert bool(torch.isfinite(update.coefficients).all())


def test_n_counts_every_action_token_and_empty_rows_are_kept() -> None:
    rows = [
        {"reward": 1.0, "logprobs": [-1.0, -1.0], "behavior_logprobs": [-1.0, -1.0],
         "action_mask": [1, 1], "values": [0.0, 0.0]},
        {"reward": 1.0, "logprobs": [-1.0], "behavior_logprobs": [-9.0], "action_mask": [1],
         "values": [0.0]},
        {"reward": 0.7, "logprobs": [-1.0, -2.0], "behavior_logprobs": [-1.0, -2.0],
         "action_mask": [0, 0], "values": [0.3, 0.3]},
    ]  # fmt: skip
    update = SAO().update(Batch.from_rows(rows))
    lam = max(0.0, 1 - 1 / 3.0)
    a = [0.0 + lam * 1.0, 1.0]  # δ = (V1 − V0, R − V1) = (0, 1)
    n = 3  # the out-of-band token of row 1 counts; row 2 has none
    torch.testing.assert_close(
        update.coefficients[0], torch.tensor([a[0] / n, a[1] / n], dtype=torch.float64)
    )
    assert update.coefficients[2].tolist() == [0.0, 0.0]
    assert update.admitted.tolist() == [True, False, False]
    assert update.value_targets is not None
    assert update.value_targets[2].tolist() == [0.7, 0.7]
    assert update.stats["N"] == 3.0
    assert any("no action token" in note for note in update.notes)


def test_requires_values_and_refuses_nan_ones() -> None:
    with pytest.raises(InputError, match="values"):
        SAO().update(Batch.from_rows([{"reward": 1.0, "logprobs": [-0.1]}]))
    rows = [
        {"reward": 1.0, "logprobs": [-0.1], "values": [0.5]},
        {"reward": 1.0, "logprobs": [-0.1, -0.2], "values": [0.5, math.nan]},
    ]
    with pytest.raises(InputError) as err:
        SAO().update(Batch.from_rows(rows))
    assert err.value.row == 1 and err.value.field == "values"


def test_refuses_non_finite_reward_and_nan_logprob() -> None:
    nan_reward = Batch.from_tensors(
        torch.full((1, 2), -0.1, dtype=torch.float64),
        rewards=[math.inf],
        values=torch.zeros(1, 2, dtype=torch.float64),
    )
    with pytest.raises(InputError, match="reward"):
        SAO().update(nan_reward)
    nan_lp = Batch.from_tensors(
        torch.tensor([[-0.1, math.nan]], dtype=torch.float64),
        rewards=[1.0],
        values=torch.zeros(1, 2, dtype=torch.float64),
    )
    with pytest.raises(InputError, match="logprobs"):
        SAO().update(nan_lp)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"ratio": (1.2, 6.0)}, r"ratio.*default \(0\.7, 6\.0\)"),
        ({"ratio": (0.7, 0.9)}, "ratio"),
        ({"ratio": (0.0, 6.0)}, "ratio"),
        ({"ratio": 0.7}, "ratio"),
        ({"gae_alpha": 0.0}, r"gae_alpha.*default 1\.5"),
        ({"gae_alpha": math.nan}, "gae_alpha"),
    ],
)
def test_bad_knobs_refused(kwargs: dict, match: str) -> None:
    with pytest.raises(UsageError, match=match):
        SAO(**kwargs)


@settings(max_examples=60, deadline=None)
@given(ragged_rows())
def test_matches_slow_loop(rows: list[dict]) -> None:
    for ratio, alpha in (((0.7, 6.0), 1.5), ((0.9, 1.1), 0.3)):
        batch = Batch.from_rows(rows)
        update = SAO(ratio=ratio, gae_alpha=alpha).update(batch)
        assert_matches(update, slow_reference.sao(rows, ratio=ratio, gae_alpha=alpha), rows)
        assert bool((update.coefficients[~batch.action_mask] == 0).all())
        assert bool((update.coefficients[~update.admitted] == 0).all())


def test_learns_the_toy_task() -> None:
    before, after = train_toy(SAO, steps=40, seed=1)
    assert before < 0.3 and after > 0.8


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_float32_matches_cpu() -> None:
    make_batch, make_method, _ = CASES["sao"]
    batch = make_batch()
    cpu = make_method().update(batch.to("cpu", torch.float32))
    gpu = make_method().update(batch.to("cuda"))
    assert_float32_close(gpu, cpu, "sao")


def test_junk_in_padding_and_observations_changes_nothing() -> None:
    """NaN or ±inf where no action token is (padding, tool output) never leaks into c."""
    nan, inf = math.nan, math.inf
    lp = torch.tensor([[-0.5, -0.2, -0.1], [-0.3, nan, inf]], dtype=torch.float64)
    bl = torch.tensor([[-0.6, -inf, -0.1], [-0.2, -inf, nan]], dtype=torch.float64)
    vals = torch.tensor([[0.1, nan, 0.3], [0.4, inf, nan]], dtype=torch.float64)
    action = torch.tensor([[True, False, True], [True, False, False]])
    clean = lambda x: torch.where(action, x, 0.0)  # noqa: E731
    kwargs = {"rewards": [1.0, 0.0], "action_mask": action}
    junk = Batch.from_tensors(lp, behavior_logprobs=bl, values=vals, **kwargs)
    tidy = Batch.from_tensors(clean(lp), behavior_logprobs=clean(bl), values=clean(vals), **kwargs)
    from whilecli.methods.bpco import BPCO
    from whilecli.methods.flash_reinforce import FlashReinforce

    for method in (SAO(), FlashReinforce(trust=1.0)):
        a, b = method.update(junk), method.update(tidy)
        assert torch.equal(a.coefficients, b.coefficients)
        assert bool(torch.isfinite(a.coefficients).all())
    junk_bpco = Batch.from_tensors(lp, behavior_logprobs=bl, values=clean(vals), **kwargs)
    tidy_bpco = Batch.from_tensors(
        clean(lp), behavior_logprobs=clean(bl), values=clean(vals), **kwargs
    )
    assert torch.equal(BPCO().update(junk_bpco).coefficients, BPCO().update(tidy_bpco).coefficients)


def test_single_trajectory() -> None:
    row = {"reward": 1.0, "logprobs": [-0.2, -0.4], "values": [0.5, 0.5]}
    update = SAO().update(Batch.from_rows([row]))
    lam = 1 - 1 / 3.0
    expected = torch.tensor([lam * 0.5 / 2, 0.5 / 2], dtype=torch.float64)
    torch.testing.assert_close(update.coefficients[0], expected)
