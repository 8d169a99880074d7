"""SAO (Hou et al. 2026): a critic in place of the group and a band that masks drifted tokens.

With the critic's ``values`` V, rewards R and ratios ρ = exp(log π − log μ) (DESIGN section 3):

- Eq. 4-5: skip-observation GAE over the ``L`` action tokens of each trajectory, γ = 1,
  ``λ = max(0, 1 − 1/(α L))``, the reward on the last action token, V = 0 past the end
  (:mod:`whilecli.methods.gae`). Observation tokens get A = 0.
- Eq. 2-3: ``f(ρ) = ρ`` strictly inside the band ``(low, high)``, else 0. ρ is not clamped:
  an overflow to ∞ is outside the band.
- Eq. 1: ``c_{i,t} = f(ρ_{i,t}) A_{i,t} / N``, N = action tokens in the whole batch (every
  trajectory counts, admitted or not). No normalisation: the critic is the baseline.
- Value targets are the Monte Carlo return, R on every token (γ = 1); observation tokens carry
  the next action token's, trailing ones the last action token's, which is R again.
- A trajectory is admitted when one of its action tokens is in the band. A trajectory with no
  action token is kept, not admitted, with zero coefficients and value targets R.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from whilecli import knobs as declared
from whilecli.errors import UsageError
from whilecli.methods.batch import Batch, Update
from whilecli.methods.corrections import PolicyGradientUpdate
from whilecli.methods.distributed import world_note
from whilecli.methods.fastmath import (
    Compiled,
    Workspace,
    all_finite,
    any_rows,
    as_float,
    compare,
    compile_note,
    count,
    exp_,
    plain_path,
    row_blocks,
)
from whilecli.methods.gae import (
    critic_block,
    critic_outputs,
    critic_pass,
    skip_observation_gae_reference,
)
from whilecli.methods.knob_checks import pair
from whilecli.methods.twostep import BatchStats, TwoStep, base_stats
from whilecli.methods.validate import Needs, ValueRule
from whilecli.textstyle import fraction

RATIO = declared.SAO_RATIO
GAE_ALPHA = declared.SAO_GAE_ALPHA.default


def sao_reference(
    reward: torch.Tensor,
    logp: torch.Tensor,
    behavior_logp: torch.Tensor,
    values: torch.Tensor,
    action_mask: torch.Tensor,
    ratio: tuple[float, float] = RATIO,
    alpha: float = GAE_ALPHA,
) -> torch.Tensor:
    """SAO's c ``[B, T]``, the seed's equations one line each (plain torch).

    The reference every faster path is tested against.
    """
    L = action_mask.sum(dim=1).to(reward.dtype)  # action tokens of each row
    lam = torch.where(L > 0, (1 - 1 / (alpha * L.clamp(min=1))).clamp(min=0), 0.0)  # Eq. 5
    A = skip_observation_gae_reference(reward, values, action_mask, lam)  # Eq. 4-5
    N = action_mask.sum()  # action tokens in the batch
    return sao_band(A, logp, behavior_logp, action_mask, ratio, N)[0]  # Eq. 1-3


def sao_band(
    A: torch.Tensor,
    logp: torch.Tensor,
    behavior_logp: torch.Tensor,
    action_mask: torch.Tensor,
    ratio: tuple[float, float],
    N: torch.Tensor,
) -> tuple[torch.Tensor, ...]:
    """Eq. 1-3 given the advantages ``A [B, T]``: ``(c, admitted [B], tokens in the band,
    tokens above it, Σ f(ρ))``, plain torch (the path off the CPU, and with ``compile=True``)."""
    rho = torch.exp(torch.where(action_mask, logp - behavior_logp, 0.0))  # unclamped
    low, high = ratio
    in_band = action_mask & (rho > low) & (rho < high)  # the open band
    f = torch.where(in_band, rho, 0.0)  # Eq. 2-3
    c = f * A / N.clamp(min=1)  # Eq. 1
    above = (action_mask & (rho >= high)).sum()
    return c, in_band.any(dim=1), in_band.sum(), above, f.sum()


@dataclass
class _Band:
    """Counts gathered over the row blocks: tokens inside the band, above it, Σ f(ρ)."""

    inside: int = 0
    above: int = 0
    ratio_sum: float = 0.0


_ZERO = torch.zeros(())


def _block(
    log_pi: torch.Tensor,
    log_mu: torch.Tensor | None,
    action: torch.Tensor,
    n_action: int,
    adv: torch.Tensor,
    inv_n: float,
    ratio: tuple[float, float],
    out: torch.Tensor,
    band: _Band,
    work: Workspace,
) -> torch.Tensor:
    """Eq. 1-3 on a block of rows (``n_action`` action tokens): writes c = f(ρ) A / N into
    ``out`` (``inv_n`` is 1/N); returns admitted."""
    dtype, device, shape = log_pi.dtype, log_pi.device, tuple(log_pi.shape)
    rho = work.take("rho", shape, dtype, device)
    finite = True
    if log_mu is None:
        rho.fill_(1.0)
    else:
        exp_(torch.sub(log_pi, log_mu, out=rho))  # every token: the band test needs ``action``
        finite = all_finite(rho)
        if not finite:  # junk in the padding, or an overflow to ∞
            torch.sub(log_pi, log_mu, out=rho).masked_fill_(~action, 0.0)
            exp_(rho)  # not clamped: an overflow to ∞ is outside the band
    low, high = ratio
    # Eq. 2-3, the open band
    below_high = compare(rho, "<", high, out=work.take("flag", shape, torch.bool, device))
    below_high.logical_and_(action)
    band.above += n_action - count(below_high)  # ρ ≥ high: ρ is never NaN on an action token
    in_band = compare(rho, ">", low, out=work.take("in_band", shape, torch.bool, device))
    in_band.logical_and_(below_high)
    band.inside += count(in_band)
    if finite or float(rho.max()) < math.inf:
        f = rho.mul_(as_float(in_band, dtype, work.take("in_band_f", shape, dtype, device)))
    else:  # ∞ · 0 would leak a NaN
        f = rho.masked_fill_(~in_band, 0.0)
    band.ratio_sum += float(f.sum())
    # Eq. 1, f A / N as f A (1/N): the same to a unit in the last place; A = 0 off the
    # action tokens
    torch.addcmul(_ZERO.to(dtype), f, adv, value=inv_n, out=out)
    return any_rows(in_band)


class SAO(TwoStep):
    """SAO's per-token coefficients for one batch (Hou et al. 2026, Eq. 1-5).

    ``ratio`` is the open band ``(1 − ε_low, 1 + ε_high)`` (default (0.7, 6.0)); ``gae_alpha``
    is α in λ = 1 − 1/(α L) (default 1.5). ``compile``: run :func:`sao_band` (Eq. 1-3) through
    ``torch.compile``, built on the first update; the GAE is the vectorised scan either way.
    """

    name: ClassVar[str] = "sao"
    needs = Needs(fields=("values",), values=ValueRule())

    def __init__(
        self,
        ratio: tuple[float, float] = RATIO,
        gae_alpha: float = GAE_ALPHA,
        compile: bool = False,
    ) -> None:
        low, high = pair("ratio", ratio, RATIO, allow_inf=True)
        if not 0 < low < 1 < high:
            raise UsageError(
                f"ratio must be a band LOW,HIGH with 0 < LOW < 1 < HIGH (default {RATIO}); "
                f"got {tuple(ratio)!r}"
            )
        self.ratio = (low, high)
        self.gae_alpha = declared.SAO_GAE_ALPHA.check(gae_alpha, "gae_alpha")
        self._work = Workspace()
        self._compiled = Compiled(sao_band) if compile else None

    def __repr__(self) -> str:
        return f"SAO(ratio={self.ratio}, gae_alpha={self.gae_alpha})"

    def reduce(self, batch: Batch, group: Any | None = None) -> BatchStats:
        """N, the action tokens of the optimizer batch (all-reduced over ``group``'s ranks)."""
        extra = world_note(group)
        return base_stats(self.name, batch, group, notes=[extra] if extra else [])

    def per_token(self, micro_batch: Batch, stats: BatchStats, *, out: Update | None) -> Update:
        """Coefficients ``c = f(ρ) A / N`` of ``micro_batch``, N from ``stats``.

        ``out``, a previous :class:`Update`, has its tensors overwritten when their shapes
        match (a training loop saves the fresh memory); otherwise new tensors are returned.
        """
        batch = micro_batch
        values = batch.values
        assert values is not None  # the runner checked the batch for its needs
        action = batch.action_mask
        counts = batch.action_counts
        log_pi = batch.logprobs.detach()
        log_mu = batch.behavior_logprobs
        log_mu = None if log_mu is None else log_mu.detach()
        n_total = torch.tensor(stats.action_tokens, dtype=counts.dtype, device=counts.device)
        if self._compiled is not None or log_pi.device.type != "cpu":  # the plain function
            # Eq. 4-5: skip-observation GAE; value targets R
            coef, adv, targets, lam = critic_pass(
                batch, values, self.gae_alpha, out, self._work, counts
            )
            c, admitted, inside, above, f_sum = plain_path(
                self._compiled,
                sao_band,
                adv,
                log_pi,
                log_pi if log_mu is None else log_mu,  # on-policy: ρ = 1
                action,
                self.ratio,
                n_total,
            )
            coef.copy_(c)
            band = _Band(inside=int(inside), above=int(above), ratio_sum=float(f_sum))
        else:
            coef, adv, targets, lam = critic_outputs(batch, values, self.gae_alpha, out, counts)
            outputs = (coef, adv, targets)
            admitted, band = self._blocks(batch, values, counts, lam, n_total, outputs)
        own, notes = self._report(batch, counts, band, admitted, lam, n_total)
        return PolicyGradientUpdate(
            coefficients=coef.detach(),
            advantages=adv.detach(),
            admitted=admitted,
            value_targets=targets.detach(),
            stats=own,
            notes=notes,
            ratio_clamp=math.inf,
            row_scale=torch.full_like(batch.rewards, 1.0) / n_total.clamp(min=1),
        )

    def _blocks(
        self,
        batch: Batch,
        values: torch.Tensor,
        counts: torch.Tensor,
        lam: torch.Tensor,
        n_total: torch.Tensor,
        outputs: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
    ) -> tuple[torch.Tensor, _Band]:
        """The CPU fast path, block by block: Eq. 4-5 into the advantages and value targets,
        Eq. 1-3 into the coefficients (``outputs``, in that order); ``(admitted, counts)``."""
        coef, adv, targets = outputs
        log_pi = batch.logprobs.detach()
        log_mu = batch.behavior_logprobs
        log_mu = None if log_mu is None else log_mu.detach()
        action, work = batch.action_mask, self._work
        admitted = torch.empty_like(action[:, 0])
        band = _Band()
        inv_n = 1.0 / float(n_total.clamp(min=1))
        for rows in row_blocks(log_pi):
            act = action[rows]
            critic_block(batch, values, lam, counts, rows, adv, targets, work)
            admitted[rows] = _block(
                log_pi[rows],
                None if log_mu is None else log_mu[rows],
                act,
                int(counts[rows].sum()),
                adv[rows],
                inv_n,
                self.ratio,
                coef[rows],
                band,
                work,
            )
        return admitted, band

    def _report(
        self,
        batch: Batch,
        counts: torch.Tensor,
        band: _Band,
        admitted: torch.Tensor,
        lam: torch.Tensor,
        n_total: torch.Tensor,
    ) -> tuple[dict[str, float | None], list[str]]:
        b = batch.size
        n_tokens = int(counts.sum())
        low, high = self.ratio
        n_in = band.inside
        masked = n_tokens - n_in
        above = band.above
        below = masked - above
        kept = int(admitted.sum())
        empty = int((counts == 0).sum())
        has = counts > 0
        stats: dict[str, float | None] = {
            "trajectories": float(b),
            "action_tokens": float(n_tokens),
            "N": float(n_total),
            "admitted": float(kept),
            "admitted_share": kept / b,
            "masked_tokens": float(masked),
            "masked_share": masked / n_tokens if n_tokens else 0.0,
            "below_band": float(below),
            "above_band": float(above),
            "mean_ratio": band.ratio_sum / n_in if n_in else None,
            "mean_lambda": float(lam[has].mean()) if bool(has.any()) else None,
        }
        notes: list[str] = compile_note(self._compiled)
        if batch.behavior_logprobs is None:
            notes.append("No behaviour log-probs: every ratio is 1, inside the band.")
        if masked:
            notes.append(
                f"{masked} of {n_tokens} action tokens (share {fraction(masked / n_tokens)}) fell outside the "
                f"ratio band ({low:g}, {high:g}) and were masked: {below} below, {above} above."
            )
        dropped = b - kept - empty
        if dropped:
            notes.append(
                f"{dropped} of {b} trajectories had no action token left in the band and were "
                "not admitted; their tokens still count in N."
            )
        if empty:
            notes.append(
                f"{empty} trajectories have no action token: kept, not admitted, zero "
                "coefficients, value targets R."
            )
        return stats, notes
