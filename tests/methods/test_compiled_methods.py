"""``compile=True``: the plain functions through ``torch.compile`` give the eager ones' update.

One small fixed batch per method family (compiling takes seconds, so no hypothesis here; the
eager plain functions are held to the fast paths on hypothesis batches in test_fast_paths.py).
``_same`` holds the compiled update to the eager one at 1e-12 relative in float64.
When the compiler cannot run, the update falls back to eager and says so in its notes.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

from updates import assert_same_update, eager_plain
from whilecli.methods import fastmath
from whilecli.methods.batch import Batch, Update
from whilecli.methods.bpco import BPCO
from whilecli.methods.distill import OPD
from whilecli.methods.dpo import DPO
from whilecli.methods.flash_reinforce import FlashReinforce
from whilecli.methods.grpo import GRPO
from whilecli.methods.sao import SAO
from whilecli.methods.sft import SFT


def _batch() -> Batch:
    gen = torch.Generator().manual_seed(7)
    b, t = 8, 12
    lengths = torch.tensor([12, 9, 7, 12, 5, 10, 11, 8])
    mask = torch.arange(t)[None, :] < lengths[:, None]
    logprobs = torch.where(mask, -torch.rand(b, t, generator=gen, dtype=torch.float64) * 3, 0.0)
    drift = 0.3 * torch.randn(b, t, generator=gen, dtype=torch.float64)
    behaviour = torch.where(mask, (logprobs + drift).clamp(max=0.0), 0.0)
    action = mask & (torch.rand(b, t, generator=gen) > 0.2)
    action[:, 0] = True
    batch = Batch.from_tensors(
        logprobs,
        rewards=torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0], dtype=torch.float64),
        mask=mask,
        behavior_logprobs=behaviour,
        action_mask=action,
        values=torch.rand(b, t, generator=gen, dtype=torch.float64),
    )
    batch.ref_logprobs = torch.where(mask, (logprobs - drift).clamp(max=0.0), 0.0)
    batch.teacher_logprobs = torch.where(mask, (logprobs + 0.5 * drift).clamp(max=0.0), 0.0)
    batch.task_ids = [f"t{i // 4}" for i in range(b)]
    return batch


_eager = eager_plain


def _same(got: Update, want: Update) -> None:
    assert_same_update(got, want, atol=1e-300, stats_rel=1e-12, stats_abs=1e-300, same_keys=False)


FAMILIES: dict[str, Any] = {
    "flash_reinforce": lambda **k: FlashReinforce(trust=0.05, **k),
    "sao": lambda **k: SAO(**k),
    "bpco": lambda **k: BPCO(**k),
    "grpo": lambda **k: GRPO(beta=0.05, **k),
    "opd": lambda **k: OPD(**k),
    "sft": lambda **k: SFT(**k),
    "dpo": lambda **k: DPO(**k),
}

#: Inductor builds C++ kernels: the first compilation in a fresh cache costs about a minute
#: on two cores (later ones a few seconds), so the suite compiles one family with it, the
#: one with the most transcendentals, and traces every family with ``aot_eager`` (dynamo
#: and AOT autograd without code generation, a tenth of a second each).
INDUCTOR = ["flash_reinforce"]


@pytest.mark.slow
@pytest.mark.parametrize("name", INDUCTOR)
def test_compiled_equals_eager(name: str) -> None:
    batch = _batch()
    make = FAMILIES[name]
    method = make(compile=True)
    got = method.update(batch)
    assert method._compiled.note is None, method._compiled.note  # it did compile
    _same(got, _eager(make(compile=True)).update(batch))
    again = method.update(batch, out=got)  # the compiled kernels again, into out=
    assert again.coefficients.data_ptr() == got.coefficients.data_ptr()
    _same(again, got)


@pytest.mark.parametrize("name", list(FAMILIES))
def test_traced_equals_eager(name: str) -> None:
    batch = _batch()
    make = FAMILIES[name]
    method = make(compile=True)
    method._compiled = fastmath.Compiled(method._compiled.fn, backend="aot_eager")
    got = method.update(batch)
    assert method._compiled.note is None, method._compiled.note
    _same(got, _eager(make(compile=True)).update(batch))


def test_no_compiler_falls_back_to_eager_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(fn: Any, **kwargs: Any) -> Any:
        def run(*args: Any) -> Any:
            raise RuntimeError("InductorError: no working C++ compiler found")

        return run

    monkeypatch.setattr(torch, "compile", broken)
    batch = _batch()
    for name, make in FAMILIES.items():
        method = make(compile=True)
        got = method.update(batch)
        want = make().update(batch)
        torch.testing.assert_close(got.coefficients, want.coefficients, rtol=1e-12, atol=1e-15)
        note = (
            "torch.compile is unavailable here (RuntimeError: InductorError: no working C++ "
            "compiler found); the eager plain-torch path ran instead."
        )
        assert note in got.notes, name
        assert [n for n in got.notes if n != note] == want.notes, name
        assert method.update(batch).notes == got.notes  # it stays eager, and says so again
