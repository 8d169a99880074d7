"""Per-token update coefficients for every method of the spec, one module per family.

Every method returns an :class:`Update` whose ``coefficients[i, t]`` is the number a trainer
multiplies ∇ log π_θ(a_{i,t}) by. Names load lazily (PEP 562): importing this package does
not import torch, so ``while route`` stays fast.

>>> from whilecli.methods import SAO, Batch          # doctest: +SKIP
>>> sao = SAO()                                      # doctest: +SKIP
>>> update = sao.update(Batch.from_rows(rows))       # doctest: +SKIP
>>> loss = update.policy_loss(logprobs)              # doctest: +SKIP
>>> update = sao.update(next_batch, out=update)      # doctest: +SKIP

A method object keeps scratch memory between calls, and ``out=`` hands the previous
:class:`Update` back to be overwritten, so a training loop allocates nothing per step on CPU.
Use one method object per thread.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "Batch": "batch",
    "Update": "batch",
    "FlashReinforce": "flash_reinforce",
    "SAO": "sao",
    "BPCO": "bpco",
    "GRPO": "grpo",
    "MaxRL": "grpo",
    "RAE": "grpo",
    "OPD": "distill",
    "OPSD": "distill",
    "DPO": "dpo",
    "SFT": "sft",
    "apply_correction": "twostep",
    "GroupwiseGrading": "groupwise",
    "ReinforceAda": "ada",
    "RewardModel": "reward_model",
    "METHODS": "registry",
    "make_method": "registry",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'whilecli.methods' has no attribute {name!r}")
    return getattr(importlib.import_module(f"whilecli.methods.{module}"), name)
