"""The CPU fast paths: NumPy kernels, row blocks, and junk confined to one block.

The methods run their per-token arithmetic block by block over the rows
(:func:`whilecli.methods.fastmath.row_blocks`). Small batches fit in one block, so here the
block size is shrunk to a row or two and the results are held against the slow loops, against
one block covering every row, and against the same batch with junk in its padding.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

import slow_reference
from batch_strategies import assert_matches, ragged_rows, well_conditioned
from slow_reference_grouped import slow_correction, slow_grpo
from updates import assert_same_update, eager_plain
from whilecli.methods import fastmath
from whilecli.methods.batch import Batch, Update
from whilecli.methods.bpco import BPCO, explained_variance
from whilecli.methods.flash_reinforce import FlashReinforce
from whilecli.methods.gae import (
    _reversed_scaled_cumsum_,
    _scaled_reverse_cumsum,
    gae_lambda,
    skip_observation_gae,
)
from whilecli.methods.groups import group_stats
from whilecli.methods.grpo import GRPO
from whilecli.methods.sao import SAO
from whilecli.methods.twostep import apply_correction

SINGLE: dict[str, tuple[Callable[[], Any], Callable[[list[dict]], Any]]] = {
    "flash_reinforce": (FlashReinforce, slow_reference.flash_reinforce),
    "sao": (SAO, slow_reference.sao),
    "bpco": (BPCO, slow_reference.bpco),
}


@pytest.fixture
def tiny_blocks(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Blocks of about 16 entries: with rows of up to 10 tokens, one or two rows each."""
    monkeypatch.setattr(fastmath, "BLOCK_ELEMENTS", 16)
    yield


def _one_block(method: Any, batch: Batch) -> Update:
    old = fastmath.BLOCK_ELEMENTS
    fastmath.BLOCK_ELEMENTS = 1 << 40
    try:
        return method.update(batch)
    finally:
        fastmath.BLOCK_ELEMENTS = old


def _grouped(rows: list[dict]) -> list[dict]:
    """Task ids by threes, the first two rows always together (not every task a singleton)."""
    rows = rows if len(rows) > 1 else rows * 2
    return [dict(row, task_id="t0" if i < 2 else f"t{i // 3}") for i, row in enumerate(rows)]


# ---------------------------------------------------------------------------- kernels


def test_row_blocks_cover_every_row_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastmath, "BLOCK_ELEMENTS", 10)
    for b, t in ((1, 1), (7, 3), (5, 40), (12, 10)):
        blocks = fastmath.row_blocks(torch.zeros(b, t))
        seen = [i for s in blocks for i in range(b)[s]]
        assert seen == list(range(b))
        assert all(s.stop - s.start == max(1, 10 // t) for s in blocks[:-1])


def test_exp_and_log1p_in_place_match_torch() -> None:
    x = torch.tensor([-800.0, -30.0, -1e-9, 0.0, 0.5, 30.0, 800.0, math.nan, -math.inf])
    x = x.double()
    got = x.clone()
    assert fastmath.exp_(got) is got
    torch.testing.assert_close(got, torch.exp(x), rtol=4e-16, atol=0, equal_nan=True)
    y = torch.tensor([-1.0, -0.999999, -1e-12, 0.0, 1e-300, 3.0, math.inf, math.nan]).double()
    got = y.clone()
    assert fastmath.log1p_(got) is got
    torch.testing.assert_close(got, torch.log1p(y), rtol=4e-16, atol=0, equal_nan=True)


def test_kernels_fall_back_to_torch_under_autograd() -> None:
    x = torch.tensor([0.1, -2.0], dtype=torch.float64, requires_grad=True)
    y = x * 1.0
    fastmath.exp_(y).sum().backward()
    torch.testing.assert_close(x.grad, torch.exp(x.detach()))


@given(
    st.lists(
        st.one_of(st.floats(-3, 3), st.sampled_from([math.inf, -math.inf, math.nan, 1.0])),
        min_size=6,
        max_size=6,
    ),
    st.sampled_from(["<", "<=", ">", ">=", "!="]),
)
@settings(max_examples=60, deadline=None)
def test_compare_matches_torch(entries: list[float], op: str) -> None:
    x = torch.tensor(entries, dtype=torch.float64).reshape(2, 3)
    torch_op = {"<": torch.lt, "<=": torch.le, ">": torch.gt, ">=": torch.ge, "!=": torch.ne}[op]
    bound = torch.tensor([[1.2], [0.8]])  # float32, widened exactly
    assert torch.equal(fastmath.compare(x, op, bound), torch_op(x, bound))
    assert torch.equal(fastmath.compare(x, op, 1.0), torch_op(x, 1.0))


def test_row_reductions_match_torch() -> None:
    mask = torch.rand(9, 301, generator=torch.Generator().manual_seed(0)) > 0.7
    mask[3] = False
    assert torch.equal(fastmath.any_rows(mask), mask.any(dim=1))
    assert torch.equal(fastmath.row_counts(mask), mask.sum(dim=1))
    assert torch.equal(fastmath.as_float(mask, torch.float64), mask.double())


@pytest.mark.parametrize("block", [1, 7, 300, 1 << 18])
def test_row_counts_in_blocks_count_every_row_by_hand(
    monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    monkeypatch.setattr(fastmath, "BLOCK_ELEMENTS", block)
    gen = torch.Generator().manual_seed(1)
    for b, t in ((0, 5), (1, 1), (5, 0), (13, 97), (4, 300)):
        mask = torch.rand(b, t, generator=gen) > 0.4
        by_hand = [sum(1 for x in row if x) for row in mask.tolist()]
        got = fastmath.row_counts(mask)
        assert got.dtype == torch.int64 and got.tolist() == by_hand
        assert fastmath.row_counts(mask[:, ::2]).tolist() == [sum(r[::2]) for r in mask.tolist()]


# ---------------------------------------------------------------------------- blocks


@given(ragged_rows(min_actions=1, max_rows=7))
@settings(max_examples=60, deadline=None)
def test_single_rollout_methods_in_blocks_match_the_loops(rows: list[dict]) -> None:
    old = fastmath.BLOCK_ELEMENTS
    fastmath.BLOCK_ELEMENTS = 16
    try:
        batch = Batch.from_rows(rows)
        for factory, slow in SINGLE.values():
            update = factory().update(batch)
            assert_matches(update, slow(rows), rows)
            whole = _one_block(factory(), batch)
            assert torch.equal(update.coefficients, whole.coefficients)
            assert torch.equal(update.admitted, whole.admitted)
            for key, value in whole.stats.items():
                if value is None:
                    assert update.stats[key] is None
                else:
                    assert update.stats[key] == pytest.approx(value, rel=1e-12, abs=1e-15)
    finally:
        fastmath.BLOCK_ELEMENTS = old


@given(ragged_rows(max_rows=7, values=False), st.sampled_from([0.0, 0.04]))
@settings(max_examples=60, deadline=None)
def test_surrogate_and_corrections_in_blocks_match_the_loops(rows: list[dict], beta: float) -> None:
    rows = _grouped(rows)
    assume(well_conditioned(rows))
    for row in rows:
        row["ref_logprobs"] = [min(0.0, lp - 0.2) for lp in row["logprobs"]]
    old = fastmath.BLOCK_ELEMENTS
    fastmath.BLOCK_ELEMENTS = 16
    try:
        batch = Batch.from_rows(rows)
        method = GRPO(beta=beta)
        update = method.update(batch)
        want = slow_grpo(rows, beta=beta)
        for i, row in enumerate(rows):
            n = len(row["logprobs"])
            expect = torch.tensor(want[i], dtype=torch.float64)
            torch.testing.assert_close(update.coefficients[i, :n], expect, rtol=1e-9, atol=1e-12)
        whole = _one_block(method, batch)
        assert torch.equal(update.coefficients, whole.coefficients)
        assert torch.equal(update.admitted, whole.admitted)
        assert update.stats["clipped_tokens"] == whole.stats["clipped_tokens"]
        assert update.stats["ratio_mean"] == pytest.approx(whole.stats["ratio_mean"], rel=1e-12)
        # a correction acts on the policy-gradient part; the KL term stays as it is
        pg = slow_grpo(rows, beta=beta, part="pg")
        kl = slow_grpo(rows, beta=beta, part="kl")
        for name in ("ipo", "icepop", "tis"):
            got = apply_correction(update, batch, name).coefficients
            tis_pg = slow_grpo(rows, beta=beta, part="tis") if name == "tis" else None
            slow = slow_correction(rows, pg, name, carries_ratio=True, reference=kl, tis_pg=tis_pg)
            for i, expect in enumerate(slow):
                n = len(expect)
                torch.testing.assert_close(
                    got[i, :n], torch.tensor(expect, dtype=torch.float64), rtol=1e-12, atol=1e-15
                )
                assert bool((got[i, n:] == 0).all())
    finally:
        fastmath.BLOCK_ELEMENTS = old


@pytest.mark.parametrize("junk", [math.nan, math.inf, -math.inf, 5.0])
@pytest.mark.parametrize("name", [*SINGLE, "grpo"])
def test_junk_in_one_block_stays_there(tiny_blocks: None, junk: float, name: str) -> None:
    """Junk in the padding of some rows (their own blocks) changes nothing anywhere."""
    gen = torch.Generator().manual_seed(3)
    b, t = 6, 8
    lengths = torch.tensor([8, 3, 8, 5, 2, 8])
    mask = torch.arange(t)[None, :] < lengths[:, None]
    logprobs = torch.where(mask, -torch.rand(b, t, generator=gen, dtype=torch.float64) - 0.1, 0.0)
    behaviour = torch.where(mask, logprobs - 0.05, 0.0)
    values = torch.where(mask, torch.rand(b, t, generator=gen, dtype=torch.float64), 0.0)
    rewards = torch.tensor([1.0, 0.0, 0.5, 1.0, 0.0, 0.25], dtype=torch.float64)
    tasks = ["a", "a", "a", "b", "b", "b"]

    def make(lp: torch.Tensor, blp: torch.Tensor, v: torch.Tensor) -> Batch:
        return Batch.from_tensors(
            lp, rewards=rewards, mask=mask, behavior_logprobs=blp, values=v, task_ids=tasks
        )

    dirty = ~mask & (torch.arange(b)[:, None] % 2 == 1)  # the padding of rows 1, 3 and 5
    clean = make(logprobs, behaviour, values)
    noisy = make(
        torch.where(dirty, junk, logprobs),
        torch.where(dirty, -junk, behaviour),
        torch.where(dirty, junk, values) if name != "bpco" else values,
    )
    method = {"grpo": GRPO, **{k: v[0] for k, v in SINGLE.items()}}[name]
    want, got = method().update(clean), method().update(noisy)
    assert torch.equal(got.coefficients, want.coefficients)
    assert torch.equal(got.admitted, want.admitted)
    assert bool((got.coefficients[~mask] == 0).all())


def test_gae_in_blocks_equals_one_block(monkeypatch: pytest.MonkeyPatch) -> None:
    gen = torch.Generator().manual_seed(5)
    mask = torch.rand(9, 40, generator=gen) > 0.3
    mask[4] = False  # a row without an action token
    values = torch.rand(9, 40, generator=gen, dtype=torch.float64)
    rewards = torch.rand(9, generator=gen, dtype=torch.float64)
    for alpha in (1.5, 0.4, 0.01):  # 0.01: λ = 0 on short rows, the chunked path on none
        lam = gae_lambda(mask.sum(dim=1), alpha)
        monkeypatch.setattr(fastmath, "BLOCK_ELEMENTS", 1 << 40)
        whole = skip_observation_gae(rewards, values, mask, lam)
        monkeypatch.setattr(fastmath, "BLOCK_ELEMENTS", 50)
        blocks = skip_observation_gae(rewards, values, mask, lam)
        torch.testing.assert_close(blocks, whole, rtol=1e-13, atol=1e-15)
        assert bool((blocks[~mask] == 0).all())


def test_explained_variance_when_var_r_underflows() -> None:
    """Rewards 0 and 1e-200 differ, but Var(R) underflows to 0: undefined, not a crash."""
    rewards = torch.tensor([0.0, 1e-200], dtype=torch.float64)
    values = torch.zeros(2, 3, dtype=torch.float64)
    action = torch.tensor([[False, False, True], [True, False, False]])
    assert explained_variance(rewards, values, action) is None


def test_explained_variance_in_blocks_by_hand(tiny_blocks: None) -> None:
    rewards = torch.tensor([1.0, 0.0, 1.0], dtype=torch.float64)
    values = torch.tensor([[0.5, 0.9], [0.25, 0.0], [1.0, 0.0]], dtype=torch.float64)
    action = torch.tensor([[True, True], [True, False], [True, False]])
    diffs = np.array([0.5, 0.1, -0.25, 0.0])
    r = np.array([1.0, 1.0, 0.0, 1.0])
    want = 1 - diffs.var() / r.var()
    assert explained_variance(rewards, values, action) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("lam", [[0.5, 0.9], [1e-12, 0.3], [0.0, 1e-150]])
def test_reversed_layout_equals_the_forward_one(lam: list[float]) -> None:
    """Last-action-first storage gives the forward layout's sums, chunked or not."""
    delta = torch.randn(2, 30, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    lam_t = torch.tensor(lam, dtype=torch.float64)
    want = _scaled_reverse_cumsum(delta.clone(), lam_t)
    got = delta.flip(1).contiguous()
    _reversed_scaled_cumsum_(got, lam_t, fastmath.Workspace())
    got = got.flip(1)
    torch.testing.assert_close(got, want, rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("name", [*SINGLE, "grpo"])
def test_float32_and_autograd_inputs_take_the_same_path(name: str) -> None:
    """float32 runs the NumPy kernels too; log-probs that need a gradient are detached."""
    gen = torch.Generator().manual_seed(7)
    b, t = 5, 12
    mask = torch.arange(t)[None, :] < torch.tensor([12, 7, 12, 3, 9])[:, None]
    logprobs = torch.where(mask, -torch.rand(b, t, generator=gen, dtype=torch.float64) - 0.1, 0.0)
    behaviour = torch.where(mask, logprobs - 0.02 * torch.rand(b, t, generator=gen), 0.0)
    values = torch.where(mask, torch.rand(b, t, generator=gen, dtype=torch.float64), 0.0)
    rewards = torch.tensor([1.0, 0.0, 0.5, 1.0, 0.0], dtype=torch.float64)
    method = {"grpo": GRPO, **{k: v[0] for k, v in SINGLE.items()}}[name]

    def run(lp: torch.Tensor, dtype: torch.dtype) -> Update:
        batch = Batch.from_tensors(
            lp,
            rewards=rewards.to(dtype),
            mask=mask,
            behavior_logprobs=behaviour.to(dtype),
            values=values.to(dtype),
            task_ids=["a", "a", "a", "b", "b"],
        )
        return method().update(batch)

    f64 = run(logprobs, torch.float64)
    graph = run(logprobs.clone().requires_grad_(True), torch.float64)
    assert torch.equal(graph.coefficients, f64.coefficients)
    assert not graph.coefficients.requires_grad
    f32 = run(logprobs.float(), torch.float32)
    assert f32.coefficients.dtype == torch.float32
    assert torch.equal(f32.admitted, f64.admitted)
    torch.testing.assert_close(f32.coefficients.double(), f64.coefficients, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    "rewards", [[0.0, 0.0, 9.16e-270], [1e200, -1e200, 0.0, 3e199], [0.25, 0.5, 1.0]]
)
def test_group_std_survives_under_and_overflow(rewards: list[float]) -> None:
    """Σ (R − mean)² under- or overflows for these spreads; the std still equals stdev's."""
    stats = group_stats(
        torch.tensor(rewards, dtype=torch.float64), torch.zeros(len(rewards)).long()
    )
    assert float(stats.std[0]) == pytest.approx(statistics.stdev(rewards), rel=1e-12)


# --- the plain references at the head of each method module are what the fast paths equal


def _tensors(rows: list[dict]) -> tuple[torch.Tensor, ...]:
    batch = Batch.from_rows(rows)
    blp = batch.behavior_logprobs if batch.behavior_logprobs is not None else batch.logprobs
    return batch, batch.rewards, batch.logprobs, blp, batch.action_mask


@settings(max_examples=80, deadline=None)
@given(ragged_rows(min_actions=1))
def test_flash_reinforce_equals_its_plain_reference(rows: list[dict]) -> None:
    from whilecli.methods.flash_reinforce import flash_reinforce_reference

    batch, reward, lp, blp, act = _tensors(rows)
    for trust in (0.003, math.inf):
        want, D, rho_sum, clamped = flash_reinforce_reference(reward, lp, blp, act, trust)
        got = FlashReinforce(trust=trust).update(batch)
        torch.testing.assert_close(got.coefficients, want, rtol=1e-12, atol=1e-300)
        assert torch.equal(got.admitted, trust >= D)
        # Eq. 6 sums two terms that cancel: the two forms agree to rounding of the terms
        assert got.stats["max_kl"] == pytest.approx(float(D.max()), rel=1e-12, abs=1e-13)
        assert got.stats["clamped_tokens"] == int(clamped)


@settings(max_examples=80, deadline=None)
@given(ragged_rows())
def test_sao_and_bpco_equal_their_plain_references(rows: list[dict]) -> None:
    from whilecli.methods.bpco import bpco_reference
    from whilecli.methods.sao import sao_reference

    batch, reward, lp, blp, act = _tensors(rows)
    values = batch.values
    got = SAO().update(batch).coefficients
    torch.testing.assert_close(
        got, sao_reference(reward, lp, blp, values, act), rtol=1e-9, atol=1e-12
    )
    got = BPCO().update(batch).coefficients
    torch.testing.assert_close(
        got, bpco_reference(reward, lp, blp, values, act), rtol=1e-9, atol=1e-12
    )


@settings(max_examples=80, deadline=None)
@given(st.data(), st.sampled_from(["grpo", "bnpo", "dr_grpo"]), st.sampled_from([0.0, 0.05]))
def test_grpo_equals_its_plain_reference(data: Any, loss_type: str, beta: float) -> None:
    from slow_reference_grouped import random_rows
    from whilecli.methods.grpo import group_advantages_reference
    from whilecli.methods.surrogate import clipped_surrogate_reference

    rows = random_rows(data.draw)
    if len({r["task_id"] for r in rows}) == len(rows):
        rows.append(dict(rows[0]))
    batch = Batch.from_rows(rows)
    tasks = sorted(set(batch.task_ids))
    group = torch.tensor([tasks.index(t) for t in batch.task_ids])
    A = group_advantages_reference(
        batch.rewards, group, "dr_grpo" if loss_type == "dr_grpo" else "grpo"
    )
    T = batch.action_counts
    B = batch.size
    live = ~batch.truncated
    w = {
        "grpo": 1 / (T * B),
        "bnpo": 1 / T[live].sum().clamp(min=1) + 0 * T,
        "dr_grpo": 1 / (T.max() * B) + 0 * T,
    }[loss_type]
    w = torch.where(live & (T > 0), w, 0.0)
    want = clipped_surrogate_reference(
        batch.logprobs, batch.behavior_logprobs, batch.ref_logprobs, batch.action_mask, A, w,
        beta=beta,
    )[0]  # fmt: skip
    got = GRPO(loss_type=loss_type, beta=beta).update(batch).coefficients
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-15)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_opd_dpo_sft_equal_their_plain_references(data: Any) -> None:
    from slow_reference_grouped import random_rows
    from whilecli.methods.distill import OPD, opd_reference
    from whilecli.methods.dpo import DPO, dpo_reference, pair_rows
    from whilecli.methods.sft import SFT, sft_reference

    rows = random_rows(data.draw)
    batch = Batch.from_rows(rows)
    act = batch.action_mask
    want = opd_reference(batch.teacher_logprobs, batch.logprobs, act)
    assert torch.equal(OPD().update(batch).coefficients, want)
    assert torch.equal(SFT().update(batch).coefficients, sft_reference(batch.rewards, act))
    passed = (batch.rewards >= 1.0).tolist()
    pairs = pair_rows(batch.task_ids, passed, [int(n) for n in batch.action_counts.tolist()])
    chosen = torch.tensor([p[0] for p in pairs], dtype=torch.long)
    rejected = torch.tensor([p[1] for p in pairs], dtype=torch.long)
    want = dpo_reference(batch.logprobs, batch.ref_logprobs, act, chosen, rejected)
    torch.testing.assert_close(DPO().update(batch).coefficients, want, rtol=1e-12, atol=0.0)


_plain = eager_plain


def _same_update(got: Update, want: Update) -> None:
    assert_same_update(got, want, atol=1e-15, stats_rel=1e-9, stats_abs=1e-12, same_keys=True)


@settings(max_examples=30, deadline=None)
@given(st.data(), st.sampled_from(["grpo", "bnpo", "dr_grpo"]), st.sampled_from([0.0, 0.05]))
def test_grpo_plain_path_gives_the_fast_paths_update(
    data: Any, loss_type: str, beta: float
) -> None:
    from slow_reference_grouped import random_rows

    rows = random_rows(data.draw)
    if len({r["task_id"] for r in rows}) == len(rows):
        rows.append(dict(rows[0]))
    batch = Batch.from_rows(rows)
    want = GRPO(loss_type=loss_type, beta=beta).update(batch)
    got = _plain(GRPO(loss_type=loss_type, beta=beta, compile=True)).update(batch)
    _same_update(got, want)
    if beta > 0:
        torch.testing.assert_close(got.reference_term, want.reference_term, rtol=1e-12, atol=0.0)


@settings(max_examples=30, deadline=None)
@given(ragged_rows(min_actions=1), st.sampled_from([0.003, 0.05, math.inf]))
def test_flash_reinforce_plain_path_gives_the_fast_paths_update(
    rows: list[dict], trust: float
) -> None:
    batch = Batch.from_rows(rows)
    want = FlashReinforce(trust=trust).update(batch)
    got = _plain(FlashReinforce(trust=trust, compile=True)).update(batch)
    _same_update(got, want)


#: One row with no action token: every mean over tokens (mean_ratio, ...) is None.
_NO_ACTION = [
    {
        "reward": 0.0,
        "logprobs": [-1.0],
        "behavior_logprobs": [-1.0],
        "action_mask": [0],
        "values": [0.5],
    }
]


@settings(max_examples=30, deadline=None)
@given(ragged_rows(), st.booleans())
@example(_NO_ACTION, False)
@example(_NO_ACTION, True)
def test_sao_and_bpco_plain_paths_give_the_fast_paths_update(
    rows: list[dict], on_policy: bool
) -> None:
    if on_policy:
        rows = [{k: v for k, v in r.items() if k != "behavior_logprobs"} for r in rows]
    batch = Batch.from_rows(rows)
    for cls in (SAO, BPCO):
        _same_update(_plain(cls(compile=True)).update(batch), cls().update(batch))


@settings(max_examples=30, deadline=None)
@given(st.data(), st.sampled_from([None, math.nan, math.inf, -math.inf, 1e308]))
def test_opd_dpo_sft_plain_paths_give_the_fast_paths_update(data: Any, junk: float | None) -> None:
    """The CPU paths (a 0/1 mask product in place of ``where``) against the plain functions,
    fresh and into a previous update's tensors, with junk off the action tokens."""
    from slow_reference_grouped import random_rows
    from whilecli.methods.distill import OPD, OPSD
    from whilecli.methods.dpo import DPO
    from whilecli.methods.sft import SFT

    batch = Batch.from_rows(random_rows(data.draw))
    if junk is not None:
        for name in ("logprobs", "teacher_logprobs", "ref_logprobs"):
            getattr(batch, name).masked_fill_(~batch.action_mask, junk)
    for cls in (OPD, OPSD, DPO, SFT):
        want = _plain(cls(compile=True)).update(batch)
        method = cls()
        for got in (method.update(batch), method.update(batch, out=method.update(batch))):
            _same_update(got, want)
            plus_zero = (want.coefficients == 0) & ~torch.signbit(want.coefficients)
            assert not torch.signbit(got.coefficients[plus_zero]).any(), "−0 for +0"
