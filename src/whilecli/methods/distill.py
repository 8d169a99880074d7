"""On-policy distillation (OPD) and on-policy self-distillation (OPSD) as coefficients.

The student samples its own reply; a teacher π_T scores every sampled token. The sampled-token
form of the per-token reverse KL, KL(π_θ ‖ π_T), is a policy gradient whose advantage is the
log-probability gap (Agarwal et al. 2023, arXiv:2306.13649):

    c_{i,t} = log π_T(a_{i,t} | h_{i,t}) − log π_θ(a_{i,t} | h_{i,t})   on action tokens,

no reward, no group, no further weight. OPSD (SDFT, arXiv:2601.19897; SDPO, arXiv:2601.20802)
is the same loss with the student's own weights, shown a privileged hint, as the teacher.

What these coefficients cannot carry is the trainer's to do, and is said in the notes: the
top-k sum over the teacher's distribution (``top_k``), a divergence other than the
sampled-token reverse KL (``divergence``), and, for OPSD, how the teacher's weights follow
the student (``anchor``).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import torch

from whilecli.methods.batch import Batch, Update, reuse
from whilecli.methods.fastmath import (
    Compiled,
    Workspace,
    as_float,
    compare,
    compile_note,
    plain_path,
)
from whilecli.methods.fastmath import count as count_true
from whilecli.methods.groups import count
from whilecli.methods.surrogate import knob_error
from whilecli.methods.twostep import BatchStats, TwoStep
from whilecli.methods.validate import Needs


def opd_reference(
    teacher_logp: torch.Tensor, logp: torch.Tensor, action_mask: torch.Tensor
) -> torch.Tensor:
    """OPD / OPSD's c ``[B, T]``: c = log π_T − log π_θ on action tokens (plain torch).

    The path off the CPU and with ``compile=True``, and what :func:`opd_into` is tested
    against.
    """
    c = teacher_logp - logp  # the sampled-token reverse-KL gradient
    return torch.where(action_mask, c, 0.0)


def opd_into(
    teacher_logp: torch.Tensor,
    logp: torch.Tensor,
    action_mask: torch.Tensor,
    out: torch.Tensor,
    scratch: torch.Tensor,
) -> torch.Tensor:
    """:func:`opd_reference` written into ``out`` on CPU; returns Σ c (0-dim).

    0 + the gap times the 0/1 mask (built in ``scratch``, a float tensor of ``out``'s shape;
    the + 0 turns the −0 of a negative gap off the action tokens into +0): three passes, no
    ``where``. Used when the product's sum is finite (the action tokens' gaps are, so only
    junk in the padding can spoil it); otherwise the reference's ``where``.
    """
    torch.sub(teacher_logp, logp, out=out)
    mask = as_float(action_mask, out.dtype, scratch)
    torch.addcmul(out.new_zeros(()), out, mask, out=out)
    total = out.sum()
    if bool(torch.isfinite(total)):
        return total
    out.copy_(opd_reference(teacher_logp, logp, action_mask))
    return out.sum()


DIVERGENCES = ("reverse_kl", "forward_kl", "jsd")
_ANCHOR = re.compile(r"^(ema(:(?P<rate>[0-9.eE+-]+))?|initial|live)$")


def _check_divergence(method: str, divergence: Any) -> str:
    if divergence not in DIVERGENCES:
        raise knob_error(method, "divergence", "reverse_kl", divergence, f"one of {DIVERGENCES}")
    return str(divergence)


class OPD(TwoStep):
    """On-policy distillation: c = log π_T − log π_θ per action token (Agarwal et al. 2023).

    ``top_k`` (32) and ``divergence`` (``reverse_kl``) describe the full loss, a sum over
    the teacher's top-k tokens; they are reported in the notes as what the trainer must
    compute, since the per-token coefficients hold only the sampled token's gradient.
    """

    name: ClassVar[str] = "opd"
    needs = Needs(
        fields=("teacher_logprobs",), logprobs=("logprobs", "teacher_logprobs"), reward=False
    )

    def __init__(
        self, top_k: int = 32, divergence: str = "reverse_kl", compile: bool = False
    ) -> None:
        self._compiled = Compiled(opd_reference) if compile else None
        self._work = Workspace()
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise knob_error(self.name, "top_k", 32, top_k, "an integer ≥ 1")
        self.top_k = top_k
        self.divergence = _check_divergence(self.name, divergence)

    def _trainer_notes(self) -> list[str]:
        notes = [
            f"the trainer must take the {self.divergence} over the teacher's top-{self.top_k} "
            "tokens at each position to match the full loss; these coefficients are its "
            "sampled-token form."
        ]
        if self.divergence != "reverse_kl":
            notes.append(
                f"divergence {self.divergence}: c = log π_T − log π_θ is the reverse-KL "
                f"gradient; {self.divergence} needs the teacher's distribution, which the "
                "trainer must supply."
            )
        return notes

    def per_token(self, micro_batch: Batch, stats: BatchStats, *, out: Update | None) -> Update:
        """c = log π_T − log π_θ on action tokens, 0 elsewhere; no reward needed; nothing
        here is batch-global. ``out``, a previous :class:`Update`, has its tensors
        overwritten when their shapes match.
        """
        batch = micro_batch
        act = batch.action_mask
        teacher = batch.teacher_logprobs
        assert teacher is not None
        lp = batch.logprobs.detach()
        shape, dtype, device = lp.shape, lp.dtype, lp.device
        if self._compiled is not None or device.type != "cpu":
            gap = plain_path(self._compiled, opd_reference, teacher.detach(), lp, act)
            if out is not None:
                gap = reuse(out, "coefficients", shape, gap.dtype, device).copy_(gap)
            advantages = reuse(out, "advantages", shape, dtype, device).copy_(gap)
            total, above = gap.sum(), int(torch.count_nonzero(gap > 0))
        else:
            gap = reuse(out, "coefficients", shape, dtype, device)
            advantages = reuse(out, "advantages", shape, dtype, device)
            total = opd_into(teacher.detach(), lp, act, gap, advantages)
            above = count_true(
                compare(gap, ">", 0.0, out=self._work.take("up", shape, torch.bool, device))
            )
            advantages.copy_(gap)
        counts = batch.action_counts
        n = int(counts.sum())
        admitted = counts > 0
        gap_mean = float(total) / n if n else 0.0  # gap is 0 off the action tokens
        own: dict[str, float | None] = {
            "rows": float(batch.size),
            "action_tokens": float(n),
            "gap_mean": gap_mean,
            "reverse_kl_estimate": -gap_mean,
            "teacher_prefers_share": above / n if n else 0.0,
        }
        notes = [f"{self.name}: c = log π_T − log π_θ on {n} action tokens of {batch.size} rows."]
        empty = int((~admitted).sum())
        if empty:
            notes.append(f"c = 0 for {count(empty, 'row')} without an action token.")
        notes.extend(self._trainer_notes())
        notes.extend(compile_note(self._compiled))
        return Update(
            coefficients=gap,
            advantages=advantages,
            admitted=admitted,
            stats=own,
            notes=notes,
        )


class OPSD(OPD):
    """On-policy self-distillation: OPD's coefficients with the student as its own teacher.

    ``teacher_logprobs`` are the student's log-probs when shown the privileged hint
    (``privileged``). ``anchor`` (``ema:0.01``: θ̄ ← (1 − α) θ̄ + α θ; ``initial``; ``live``)
    says how the teacher's weights follow the student: the trainer's job, stated in the notes.
    """

    name: ClassVar[str] = "opsd"

    def __init__(
        self,
        top_k: int = 32,
        divergence: str = "reverse_kl",
        anchor: str = "ema:0.01",
        privileged: str = "demonstration",
        compile: bool = False,
    ) -> None:
        super().__init__(top_k=top_k, divergence=divergence, compile=compile)
        match = _ANCHOR.match(anchor) if isinstance(anchor, str) else None
        rate = match.group("rate") if match else None
        ok = match is not None
        if ok and rate is not None:
            try:
                ok = 0 < float(rate) < 1
            except ValueError:
                ok = False
        if not ok:
            raise knob_error(
                self.name,
                "anchor",
                "ema:0.01",
                anchor,
                "'ema[:r]' with 0 < r < 1, 'initial' or 'live'",
            )
        if not isinstance(privileged, str) or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", privileged):
            raise knob_error(self.name, "privileged", "demonstration", privileged, "an identifier")
        self.anchor = anchor if anchor != "ema" else "ema:0.01"
        self.privileged = privileged

    def _trainer_notes(self) -> list[str]:
        notes = super()._trainer_notes()
        if self.anchor.startswith("ema"):
            rate = self.anchor.split(":", 1)[1]
            how = f"a moving average θ̄ ← (1 − {rate}) θ̄ + {rate} θ after each step"
        elif self.anchor == "initial":
            how = "the starting weights, frozen"
        else:
            how = "the live student weights, unanchored"
        notes.append(
            f"anchor {self.anchor}: the teacher's weights must be {how}; teacher_logprobs "
            f"are read as the student's own, shown the privileged '{self.privileged}'."
        )
        return notes
