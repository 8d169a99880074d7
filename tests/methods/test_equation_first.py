"""The plain functions that open grpo.py and corrections.py, held to the plain-Python loops of
tests/support and to the library's update path (its fast paths included)."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from batch_strategies import well_conditioned
from slow_reference import flash_reinforce as slow_flash_reinforce
from slow_reference_grouped import random_rows, slow_correction, slow_grpo, slow_max_rl, to_batch
from whilecli.methods.batch import Batch
from whilecli.methods.corrections import icepop_reference, ipo_reference, tis_reference
from whilecli.methods.flash_reinforce import LOG_RATIO_CLAMP, FlashReinforce
from whilecli.methods.grpo import GRPO, MaxRL, grpo_reference
from whilecli.methods.twostep import apply_correction


@st.composite
def grouped_rows(draw: st.DrawFn) -> list[dict]:
    rows = random_rows(draw)
    if len({r["task_id"] for r in rows}) == len(rows):
        rows.append(dict(rows[0]))  # at least one group of two rows
    return rows


def _groups(batch: Batch) -> torch.Tensor:
    assert batch.task_ids is not None
    index: dict[str, int] = {}
    return torch.tensor([index.setdefault(t, len(index)) for t in batch.task_ids])


def _close(got: torch.Tensor, slow: list[list[float]]) -> None:
    for i, row in enumerate(slow):
        assert got[i, : len(row)].tolist() == pytest.approx(row, rel=1e-9, abs=1e-12)


def _reference(batch: Batch, kind: str, **knobs: object) -> torch.Tensor:
    return grpo_reference(
        batch.rewards,
        _groups(batch),
        batch.logprobs,
        batch.action_mask,
        behavior_logp=batch.behavior_logprobs,
        ref_logp=batch.ref_logprobs,
        truncated=batch.truncated,
        kind=kind,
        **knobs,  # type: ignore[arg-type]
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    grouped_rows(),
    st.sampled_from(["grpo", "bnpo", "dr_grpo"]),
    st.sampled_from(["mask", "zero"]),
    st.sampled_from([0.0, 0.05]),
    st.sampled_from([None, 9]),
)
def test_grpo_reference_is_the_slow_loop_and_the_update(
    rows, loss_type, truncated, beta, max_len
) -> None:
    assume(well_conditioned(rows, truncated))
    batch = to_batch(rows)
    knobs = dict(loss_type=loss_type, beta=beta, max_len=max_len)
    ref = _reference(batch, "grpo", truncated_mode=truncated, **knobs)
    _close(ref, slow_grpo(rows, truncated=truncated, **knobs))
    fast = GRPO(truncated=truncated, **knobs).update(batch).coefficients
    assert torch.allclose(fast, ref, rtol=1e-12, atol=1e-15)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grouped_rows(), st.sampled_from(["mask", "zero"]))
def test_max_rl_through_grpo_reference(rows, truncated) -> None:
    assume(well_conditioned(rows, truncated))
    batch = to_batch(rows)
    ref = _reference(batch, "max_rl", truncated_mode=truncated)
    _close(ref, slow_max_rl(rows, truncated=truncated))
    fast = MaxRL(truncated=truncated).update(batch).coefficients
    assert torch.allclose(fast, ref, rtol=1e-12, atol=1e-15)


def _plain_correction(
    name: str, c: torch.Tensor, batch: Batch, carried: torch.Tensor | None = None
) -> torch.Tensor:
    blp = batch.behavior_logprobs
    assert blp is not None
    args = (c, batch.logprobs, blp, batch.action_mask)
    if name == "ipo":
        return ipo_reference(*args)
    if name == "icepop":
        return icepop_reference(*args)
    return tis_reference(*args, carried=carried)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grouped_rows(), st.sampled_from(["ipo", "icepop", "tis"]))
def test_corrections_on_grpo_are_the_slow_loop_and_the_update(rows, name) -> None:
    assume(well_conditioned(rows))
    batch = to_batch(rows)
    base = GRPO().update(batch)
    if name == "tis":  # the clip gives way: c = w_i A_i with ρ taken as 1, then min(ρ, cap)
        assert batch.truncated is not None
        live = (batch.action_counts > 0) & ~batch.truncated  # a truncated row carries no loss
        w = 1 / (batch.action_counts.clamp(min=1) * batch.size)
        pg = torch.where(live, w, 0.0)[:, None] * base.advantages
        plain = _plain_correction(name, pg, batch)
        slow = slow_correction(rows, slow_grpo(rows), name, tis_pg=slow_grpo(rows, part="tis"))
    else:
        plain = _plain_correction(name, base.coefficients, batch)
        slow = slow_correction(rows, slow_grpo(rows), name)
    _close(plain, slow)
    fast = apply_correction(base, batch, name).coefficients
    assert torch.allclose(fast, plain, rtol=1e-12, atol=1e-15)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grouped_rows(), st.sampled_from(["ipo", "icepop", "tis"]))
def test_corrections_on_flash_reinforce(rows, name) -> None:
    assume(well_conditioned(rows))
    batch = to_batch(rows)
    base = FlashReinforce().update(batch)
    blp = batch.behavior_logprobs
    assert blp is not None
    carried = torch.exp((batch.logprobs - blp).clamp(-LOG_RATIO_CLAMP, LOG_RATIO_CLAMP))
    plain = _plain_correction(name, base.coefficients, batch, carried)
    slow_c = slow_flash_reinforce(rows)[0]
    _close(plain, slow_correction(rows, slow_c, name, carries_ratio=True))
    fast = apply_correction(base, batch, name).coefficients
    assert torch.allclose(fast, plain, rtol=1e-12, atol=1e-15)


def test_tis_reference_by_hand() -> None:
    # ρ = 0.5, 3.0 on two action tokens and one observation token; c carries no ratio
    lp = torch.tensor([[-1.0, -1.0, -1.0]], dtype=torch.float64)
    blp = lp - torch.tensor([[math.log(0.5), math.log(3.0), 0.0]], dtype=torch.float64)
    act = torch.tensor([[True, True, False]])
    c = torch.ones(1, 3, dtype=torch.float64)
    assert tis_reference(c, lp, blp, act)[0].tolist() == pytest.approx([0.5, 2.0, 0.0])
    rho = torch.exp(lp - blp)  # c = ρ: the ratio replaced, not counted twice
    assert tis_reference(rho, lp, blp, act, carried=rho)[0].tolist() == pytest.approx(
        [0.5, 2.0, 0.0]
    )
