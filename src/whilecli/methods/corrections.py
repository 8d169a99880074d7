"""Staleness corrections, applied last to any method's per-token coefficients.

For rollouts sampled by μ (the sampler, or an older copy of the policy) and trained under
π_θ, with π = exp(log π_θ), μ = exp(log μ) and ρ = π/μ per action token (Yao et al. 2025):

- ``ipo``:    c ← c · 1[|π − μ| ≤ ε], ε = 0.3 (masks on probability moved);
- ``icepop``: c ← c · 1[low ≤ ρ ≤ high], (low, high) = (0.5, 5.0) (Ring-1T, arXiv:2510.18855);
- ``tis``:    c ← c · min(ρ, cap), cap = 2.0 (truncated importance sampling; ρ held constant).

Each needs ``behavior_logprobs``. The stats and notes say how many action tokens each masked
or capped.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import torch

from whilecli.errors import UsageError
from whilecli.methods.batch import Batch, Update
from whilecli.methods.fastmath import all_finite, as_float, exp_
from whilecli.methods.groups import check_logprobs, count

CORRECTIONS = ("ipo", "icepop", "tis")


def _check_knobs(name: str, eps: Any, band: Any, cap: Any) -> tuple[float, float, float, float]:
    def num(v: Any) -> float:
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan

    e = num(eps)
    if not 0 < e <= 1:
        raise UsageError(f"{name}: eps must be in (0, 1] (default 0.3), got {eps!r}")
    try:
        lo, hi = (num(v) for v in band)
    except (TypeError, ValueError):
        lo, hi = math.nan, math.nan
    if not (0 < lo <= 1 <= hi and math.isfinite(hi)):
        raise UsageError(
            f"{name}: band must be a pair low, high with 0 < low ≤ 1 ≤ high "
            f"(default (0.5, 5.0)), got {band!r}"
        )
    k = num(cap)
    if not (k >= 1 and math.isfinite(k)):
        raise UsageError(f"{name}: cap must be a finite number ≥ 1 (default 2.0), got {cap!r}")
    return e, lo, hi, k


def _keep(x: torch.Tensor, keep: torch.Tensor, keep_f: torch.Tensor) -> torch.Tensor:
    """``torch.where(keep, x, 0.0)``: an exact 0/1 product (−0 made +0) when ``x`` is finite."""
    if all_finite(x):
        return x.mul(keep_f).add_(0.0)
    return torch.where(keep, x, 0.0)


def apply_correction(
    update: Update,
    batch: Batch,
    name: str,
    *,
    eps: float = 0.3,
    band: tuple[float, float] = (0.5, 5.0),
    cap: float = 2.0,
) -> Update:
    """Return ``update`` with its coefficients corrected for the sampler/trainer gap.

    ``name`` is ``ipo``, ``icepop`` or ``tis``. Coefficients outside the action mask stay 0;
    ``advantages`` are untouched; a row whose every action token is masked is no longer
    admitted. Stats gain ``<name>_masked_tokens`` / ``<name>_capped_tokens`` and shares.
    """
    if name not in CORRECTIONS:
        raise UsageError(f"unknown correction {name!r}; choose one of {', '.join(CORRECTIONS)}")
    e, lo, hi, k = _check_knobs(name, eps, band, cap)
    if batch.behavior_logprobs is None:
        raise UsageError(
            f"--correction {name} needs the sampler's log-probs in field 'behavior_logprobs', "
            "and the batch carries none"
        )
    check_logprobs(batch, ["logprobs", "behavior_logprobs"], f"correction {name}")
    act = batch.action_mask
    n_act = int(act.sum())
    c = update.coefficients
    lp, blp = batch.logprobs, batch.behavior_logprobs
    stats = dict(update.stats)
    notes = list(update.notes)
    lp, blp = lp.detach(), blp.detach()
    act_f = as_float(act, c.dtype)
    if name == "tis":
        rho = exp_(torch.sub(lp, blp))
        n_hit = int((rho > k).logical_and_(act).sum())
        kept = (rho > 0).logical_and_(act)
        new_c = torch.mul(c, rho.clamp_(max=k))
        stats["tis_capped_tokens"] = float(n_hit)
        stats["tis_capped_share"] = n_hit / n_act if n_act else 0.0
        notes.append(
            f"tis multiplied every coefficient by min(ρ, {k}) and capped the ratio on "
            f"{n_hit} of {n_act} action tokens."
        )
    else:
        if name == "ipo":
            gap = exp_(lp.clone()).sub_(exp_(blp.clone())).abs_()
            kept = (gap <= e).logical_and_(act)
            rule = f"|π − μ| > {e}"
        else:
            rho = exp_(torch.sub(lp, blp))
            kept = (rho >= lo).logical_and_(rho <= hi).logical_and_(act)
            rule = f"ρ outside [{lo}, {hi}]"
        new_c = _keep(c, kept, as_float(kept, c.dtype))
        n_hit = n_act - int(kept.sum())
        stats[f"{name}_masked_tokens"] = float(n_hit)
        stats[f"{name}_masked_share"] = n_hit / n_act if n_act else 0.0
        notes.append(f"{name} masked {n_hit} of {n_act} action tokens ({rule}), setting c = 0.")
    new_c = _keep(new_c, act, act_f).detach()
    lost = update.admitted & act.any(dim=1) & ~kept.any(dim=1)
    if int(lost.sum()):
        notes.append(f"{count(int(lost.sum()), 'row')} lost every action token to {name}.")
    return replace(
        update, coefficients=new_c, admitted=update.admitted & ~lost, stats=stats, notes=notes
    )
