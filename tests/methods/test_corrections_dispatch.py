"""The corrections follow DESIGN section 3: the plain functions (``ipo_reference``,
``icepop_reference``, ``tis_reference``) are the path on an accelerator, the in-place
arithmetic the CPU's; the two give the same update on every kind of coefficient a method
hands over (one that carries ρ, one whose clip tis replaces, one with a KL term, a plain c)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from batch_strategies import well_conditioned
from slow_reference_grouped import random_rows, to_batch
from whilecli.methods import corrections
from whilecli.methods.batch import Batch, Update
from whilecli.methods.corrections import correct
from whilecli.methods.flash_reinforce import FlashReinforce
from whilecli.methods.grpo import GRPO

NAMES = ("ipo", "icepop", "tis")


def _base(kind: str, batch: Batch) -> Update:
    if kind == "flash_reinforce":  # c carries the method's clamped ρ
        return FlashReinforce().update(batch)
    if kind == "grpo":  # tis replaces the clip: row_scale
        return GRPO().update(batch)
    if kind == "grpo_kl":  # a β KL-to-reference term the corrections leave alone
        return GRPO(beta=0.05).update(batch)
    base = FlashReinforce().update(batch)  # a plain Update: c carries no ρ
    return Update(
        coefficients=base.coefficients,
        advantages=base.advantages,
        admitted=base.admitted,
        value_targets=None,
        stats={},
        notes=[],
    )


def _same(a: Update, b: Update) -> None:
    assert torch.allclose(a.coefficients, b.coefficients, rtol=1e-12, atol=1e-15)
    assert torch.equal(a.admitted, b.admitted)
    assert a.stats == b.stats and a.notes == b.notes


@st.composite
def _rows(draw: st.DrawFn) -> list[dict]:
    rows = random_rows(draw)
    if len({r["task_id"] for r in rows}) == len(rows):
        rows.append(dict(rows[0]))
    if draw(st.booleans()):  # reference log-probs for the KL term
        for r in rows:
            r["ref_logprobs"] = [x - 0.1 for x in r["logprobs"]]
    return rows


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _rows(),
    st.sampled_from(NAMES),
    st.sampled_from(["flash_reinforce", "grpo", "grpo_kl", "plain"]),
    st.sampled_from([(0.3, (0.5, 5.0), 2.0), (0.05, (0.9, 1.2), 1.1)]),
)
def test_the_plain_functions_and_the_fast_arithmetic_give_one_update(
    rows, name, kind, knobs
) -> None:
    assume(well_conditioned(rows))
    batch = to_batch(rows)
    assume(kind != "grpo_kl" or batch.ref_logprobs is not None)
    base = _base(kind, batch)
    eps, band, cap = knobs
    plain = correct(base, batch, name, eps=eps, band=band, cap=cap, plain=True)
    fast = correct(base, batch, name, eps=eps, band=band, cap=cap, plain=False)
    _same(plain, fast)


def _spy(patch: pytest.MonkeyPatch) -> list[str]:
    called: list[str] = []
    for fn in ("ipo_reference", "icepop_reference", "tis_reference"):
        real = getattr(corrections, fn)

        def spy(*args, _real=real, _fn=fn, **kwargs):  # type: ignore[no-untyped-def]
            called.append(_fn)
            return _real(*args, **kwargs)

        patch.setattr(corrections, fn, spy)
    return called


def _batch(device: str, dtype: torch.dtype) -> Batch:
    gen = torch.Generator().manual_seed(0)
    lp = -torch.rand(16, 40, generator=gen, dtype=torch.float64) * 3
    bl = (lp + 0.5 * torch.randn(16, 40, generator=gen, dtype=torch.float64)).clamp(max=0)
    rewards = torch.rand(16, generator=gen, dtype=torch.float64)
    batch = Batch.from_tensors(
        lp.to(device, dtype),
        rewards=rewards.to(device, dtype),
        behavior_logprobs=bl.to(device, dtype),
        task_ids=[str(i // 4) for i in range(16)],
    )
    return batch


@pytest.mark.parametrize("name", NAMES)
def test_the_cpu_takes_the_fast_arithmetic(name: str) -> None:
    batch = _batch("cpu", torch.float64)
    with pytest.MonkeyPatch.context() as patch:
        called = _spy(patch)
        correct(GRPO().update(batch), batch, name)
        assert called == []
        correct(GRPO().update(batch), batch, name, plain=True)
        assert called == [f"{name}_reference"]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("method", [FlashReinforce, GRPO])
def test_cuda_takes_the_plain_functions_and_agrees_with_the_cpu(name: str, method: type) -> None:
    gpu, cpu = _batch("cuda", torch.float32), _batch("cpu", torch.float32)
    with pytest.MonkeyPatch.context() as patch:
        called = _spy(patch)
        got = correct(method().update(gpu), gpu, name)
        assert called == [f"{name}_reference"]
    want = correct(method().update(cpu), cpu, name)
    torch.testing.assert_close(got.coefficients.cpu(), want.coefficients, rtol=1e-5, atol=1e-7)
    assert torch.equal(got.admitted.cpu(), want.admitted)
