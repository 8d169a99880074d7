"""The batches and tolerances of the CUDA tests, shared with their CPU emulation.

Each single-rollout method's CUDA test runs one seeded float32 batch on the GPU and on the
CPU and holds the coefficients within 1e-6 relative. ``tests/methods/test_workspace.py`` runs the
same comparison with the GPU's control flow emulated on the CPU, so the two stay in step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from whilecli.methods.batch import Batch, Update
from whilecli.methods.bpco import BPCO
from whilecli.methods.flash_reinforce import FlashReinforce
from whilecli.methods.sao import SAO


def _flash_batch() -> Batch:
    gen = torch.Generator().manual_seed(0)
    b, t = 64, 300
    lp = -torch.rand(b, t, generator=gen, dtype=torch.float64) * 3
    bl = (lp + 0.02 * torch.randn(b, t, generator=gen, dtype=torch.float64)).clamp(max=0)
    rewards = torch.rand(b, generator=gen, dtype=torch.float64)
    lengths = torch.randint(1, t, (b,), generator=gen)
    return Batch.from_tensors(lp, rewards=rewards, behavior_logprobs=bl, lengths=lengths)


def _critic_batch(seed: int) -> Batch:
    gen = torch.Generator().manual_seed(seed)
    b, t = 64, 512
    lp = -torch.rand(b, t, generator=gen, dtype=torch.float64) * 3
    bl = (lp + 0.3 * torch.randn(b, t, generator=gen, dtype=torch.float64)).clamp(max=0)
    return Batch.from_tensors(
        lp,
        rewards=(torch.rand(b, generator=gen) > 0.5).double(),
        behavior_logprobs=bl,
        values=torch.rand(b, t, generator=gen, dtype=torch.float64),
        action_mask=torch.rand(b, t, generator=gen) > 0.2,
        lengths=torch.randint(1, t, (b,), generator=gen),
    )


#: name → (the float64 batch, the method, whether the absolute tolerance scales with max |c|)
CASES: dict[str, tuple[Callable[[], Batch], Callable[[], Any], bool]] = {
    "flash_reinforce": (_flash_batch, lambda: FlashReinforce(trust=0.01), False),
    "sao": (lambda: _critic_batch(1), SAO, True),
    "bpco": (lambda: _critic_batch(2), BPCO, True),
}


def assert_float32_close(got: Update, cpu: Update, name: str) -> None:
    """``got`` (another device's or flow's float32 update) equals the CPU's within 1e-6."""
    assert got.coefficients.dtype == torch.float32
    assert got.admitted.cpu().tolist() == cpu.admitted.tolist()
    scaled = CASES[name][2]
    atol = 1e-6 * float(cpu.coefficients.abs().max()) if scaled else 1e-9
    torch.testing.assert_close(got.coefficients.cpu(), cpu.coefficients, rtol=1e-6, atol=atol)
