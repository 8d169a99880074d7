"""Supervised fine-tuning on passing rows, as per-token coefficients.

Maximum likelihood, L = −Σ_i Σ_{t ≤ T_i} log π_θ(a_{i,t} | h_{i,t}), over the rows that pass:

    c_{i,t} = 1 on the action tokens of rows with R_i ≥ ``pass_threshold``, 0 elsewhere.

The loss sums tokens; a trainer that averages per sequence or per token divides itself.
"""

from __future__ import annotations

import math
from typing import ClassVar

import torch

from whilecli.knobs import PASS_TOLERANCE
from whilecli.methods.batch import Batch, Update, reuse
from whilecli.methods.fastmath import Compiled, as_float, compile_note, plain_path, row_counts
from whilecli.methods.groups import count
from whilecli.methods.surrogate import knob_error, number_knob
from whilecli.methods.twostep import BatchStats, TwoStep
from whilecli.methods.validate import Needs


def sft_reference(
    reward: torch.Tensor, action_mask: torch.Tensor, pass_threshold: float = 1.0
) -> torch.Tensor:
    """SFT's c ``[B, T]``: 1 on the action tokens of passing rows (R ≥ threshold), plain torch.

    The path off the CPU and with ``compile=True``; on CPU the update builds the same 0/1
    values from the mask's bytes times the per-row pass flag (exact), without the bool
    temporary.
    """
    passed = reward >= pass_threshold - PASS_TOLERANCE  # the rows that pass (the route's rule)
    return (action_mask & passed[:, None]).to(reward.dtype)  # c = 1 on their action tokens


class SFT(TwoStep):
    """SFT on the rows whose reward reaches ``pass_threshold`` (default 1.0), less the pass
    rule's 1e-9 (DESIGN section 1)."""

    name: ClassVar[str] = "sft"
    needs = Needs(logprobs=("logprobs",))

    def __init__(self, pass_threshold: float = 1.0, compile: bool = False) -> None:
        self._compiled = Compiled(sft_reference) if compile else None
        thr = number_knob(self.name, "pass_threshold", 1.0, pass_threshold)
        if not math.isfinite(thr):
            raise knob_error(self.name, "pass_threshold", 1.0, pass_threshold, "finite")
        self.pass_threshold = thr

    def per_token(self, micro_batch: Batch, stats: BatchStats, *, out: Update | None) -> Update:
        """c = 1 on action tokens of passing rows; ``out``, a previous :class:`Update`, has
        its tensors overwritten when their shapes match."""
        batch = micro_batch
        passed = batch.rewards >= self.pass_threshold - PASS_TOLERANCE
        dtype = batch.logprobs.dtype
        shape, device = batch.logprobs.shape, batch.logprobs.device
        if self._compiled is None and device.type == "cpu":
            c = as_float(batch.action_mask, dtype, reuse(out, "coefficients", shape, dtype, device))
            c.mul_(passed.to(dtype)[:, None])  # c = 1 on the action tokens of passing rows
        else:
            c = plain_path(
                self._compiled, sft_reference, batch.rewards, batch.action_mask, self.pass_threshold
            ).to(dtype)
            if out is not None:
                c = reuse(out, "coefficients", shape, dtype, device).copy_(c)
        counts = row_counts(batch.action_mask)
        admitted = passed & (counts > 0)
        n_pass = int(passed.sum())
        tokens = int(counts[passed].sum())
        own: dict[str, float | None] = {
            "rows": float(batch.size),
            "passing_rows": float(n_pass),
            "trained_tokens": float(tokens),
        }
        notes = [
            f"sft: c = 1 on {tokens} action tokens of {n_pass} of {batch.size} rows with "
            f"reward ≥ {self.pass_threshold}; the loss sums tokens."
        ]
        if not n_pass:
            notes.append("no row passes, so every coefficient is 0.")
        notes.extend(compile_note(self._compiled))
        empty = int((passed & (counts == 0)).sum())
        if empty:
            notes.append(f"c = 0 for {count(empty, 'passing row')} without an action token.")
        advantages = reuse(out, "advantages", shape, dtype, device).copy_(c)
        return Update(
            coefficients=c,
            advantages=advantages,
            admitted=admitted,
            stats=own,
            notes=notes,
        )
