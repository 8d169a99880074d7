"""Staleness corrections, applied last to any method's per-token coefficients.

For rollouts sampled by μ (the sampler, or an older copy of the policy) and trained under
π_θ, with π = exp(log π_θ), μ = exp(log μ) and ρ = π/μ per action token (Yao et al. 2025):

- ``ipo``:    c ← c · 1[|π − μ| ≤ ε], ε = 0.3 (masks on probability moved);
- ``icepop``: c ← c · 1[low ≤ ρ ≤ high], (low, high) = (0.5, 5.0) (Ring-1T, arXiv:2510.18855);
- ``tis``:    the method's ratio treatment replaced by the truncated weight min(ρ, cap),
  cap = 2.0 (truncated importance sampling; DESIGN section 3): for grpo, max_rl and rae the
  clipped surrogate becomes g = A·min(ρ, cap) on every action token, no PPO clip (Yao et al.
  2025; verl's ``bypass_pg_is``, TRL's ``token_truncate`` at one iteration, and
  :func:`whilecli.emit.losses.tis_loss` agree); for sao and bpco the band or probability clip
  gives way to min(ρ, cap) likewise; for flash_reinforce c ← c · min(ρ, cap)/ρ (its gate
  stays); for the others (opd, opsd, dpo, sft) c ← c · min(ρ, cap). Multiplying a
  ρ-carrying c by min(ρ, cap) would count the ratio twice.

How they compose with a method's own clip or band. A correction multiplies the method's c, so
``icepop`` on grpo keeps c = w_i ρ A_i only where the surrogate's unclipped branch is the
minimum *and* 0.5 ≤ ρ ≤ 5.0: the band on top of the clip, as verl composes them (and as
:func:`whilecli.emit.losses.icepop_loss`, whose built-in term has no clip, gives where the
clip does not bite). ``tis`` on grpo drops the clip: every action token of a live row gets
w_i A_i min(ρ, cap).

Corrections act on the policy-gradient part of c only: the β KL-to-reference term of the grpo
family (c = w_i g − β w_i (1 − r)) is left as it is, as TRL and prime-rl's losses do. A method
says which part is which by returning a :class:`PolicyGradientUpdate`; a plain
:class:`~whilecli.methods.batch.Update` is taken as a c that carries no ρ and no KL term.

Each needs ``behavior_logprobs``: the runner checks the batch for it
(:func:`whilecli.methods.twostep.apply_correction`, or a method's ``update(batch,
correction=...)``); :func:`correct` is the arithmetic on a checked batch. The stats and notes
say how many action tokens each masked or capped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import torch

from whilecli.errors import UsageError
from whilecli.knobs import CORRECTIONS, ICEPOP_BAND, IPO_EPS, TIS_CAP, check_band
from whilecli.methods.batch import Batch, Update
from whilecli.methods.fastmath import all_finite, as_float, exp_
from whilecli.methods.groups import count

__all__ = [
    "CORRECTIONS",
    "PolicyGradientUpdate",
    "correct",
    "icepop_reference",
    "ipo_reference",
    "tis_reference",
]


def ipo_reference(
    c: torch.Tensor,
    logp: torch.Tensor,
    behavior_logp: torch.Tensor,
    action_mask: torch.Tensor,
    eps: float = IPO_EPS.default,
) -> torch.Tensor:
    """ipo: c ← c · 1[|π − μ| ≤ ε] on action tokens (plain torch)."""
    keep = (torch.exp(logp) - torch.exp(behavior_logp)).abs() <= eps
    return torch.where(action_mask & keep, c, 0.0)


def icepop_reference(
    c: torch.Tensor,
    logp: torch.Tensor,
    behavior_logp: torch.Tensor,
    action_mask: torch.Tensor,
    band: tuple[float, float] = ICEPOP_BAND,
) -> torch.Tensor:
    """icepop: c ← c · 1[low ≤ ρ ≤ high] on action tokens (plain torch)."""
    rho = torch.exp(logp - behavior_logp)
    keep = (rho >= band[0]) & (rho <= band[1])
    return torch.where(action_mask & keep, c, 0.0)


def tis_reference(
    c: torch.Tensor,
    logp: torch.Tensor,
    behavior_logp: torch.Tensor,
    action_mask: torch.Tensor,
    cap: float = TIS_CAP.default,
    carried: torch.Tensor | None = None,
) -> torch.Tensor:
    """tis: the ratio in c replaced by the truncated weight (plain torch).

    ``carried`` None: c carries no ratio, c ← c · min(ρ, cap); the grpo family, SAO and BPCO
    pass c = w_i A (ρ taken as 1, no clip or band) and get w_i A min(ρ, cap). ``carried`` the
    ratio ρ_c that c carries (FlashReinforce's, clamped to stay finite): c ← c · min(ρ_c,
    cap) / ρ_c.
    """
    if carried is None:
        return torch.where(action_mask, c * torch.exp(logp - behavior_logp).clamp(max=cap), 0.0)
    return torch.where(action_mask, c * carried.clamp(max=cap) / carried, 0.0)


@dataclass(eq=False)
class PolicyGradientUpdate(Update):
    """An :class:`Update` that says what its coefficients are made of, for the corrections.

    ``ratio_clamp``: c carries ρ = exp(clamp(log π − log μ, ±ratio_clamp)) as a factor
    (∞: the ratio unclamped; None: c carries no ρ). ``reference_term``: the β KL-to-reference
    part of c, ``[B, T]`` (None when there is none); a correction leaves it as it is.
    ``row_scale``: ``[B]``, for a method whose ratio treatment ``tis`` replaces whole (the
    grpo family's clip, SAO's band, BPCO's probability clip): the policy-gradient part of c
    with ρ taken as 1 and no clip or band is ``row_scale[i] · advantages[i, t]`` on the
    action tokens, and ``tis`` makes it ``row_scale[i] · advantages[i, t] · min(ρ, cap)``.
    ``finite``: False when a coefficient is not finite (the unclamped ρ of the grpo family
    overflowed on a token whose unclipped branch is the minimum); the runner refuses such an
    update only after the correction, which may mask that token or replace its ratio
    (:func:`whilecli.methods.twostep.refuse_not_finite`).
    """

    ratio_clamp: float | None = math.inf
    reference_term: torch.Tensor | None = None
    row_scale: torch.Tensor | None = None
    finite: bool = True


def _check_knobs(name: str, eps: Any, band: Any, cap: Any) -> tuple[float, float, float, float]:
    """The correction's knobs, each checked against its one declaration in :mod:`whilecli.knobs`."""
    e = IPO_EPS.check(eps, f"{name}: eps")
    lo, hi = check_band(band, f"{name}: band")
    k = TIS_CAP.check(cap, f"{name}: cap")
    return e, lo, hi, k


def _keep(x: torch.Tensor, keep: torch.Tensor, keep_f: torch.Tensor) -> torch.Tensor:
    """``torch.where(keep, x, 0.0)``: an exact 0/1 product (−0 made +0) when ``x`` is finite."""
    if all_finite(x):
        return x.mul(keep_f).add_(0.0)
    return torch.where(keep, x, 0.0)


def correct(
    update: Update,
    batch: Batch,
    name: str,
    *,
    eps: float = IPO_EPS.default,
    band: tuple[float, float] = ICEPOP_BAND,
    cap: float = TIS_CAP.default,
    plain: bool | None = None,
) -> Update:
    """Return ``update`` with its coefficients corrected for the sampler/trainer gap, on a
    batch the runner has checked for the correction (behaviour log-probs present and valid).

    ``name`` is ``ipo``, ``icepop`` or ``tis``. Coefficients outside the action mask stay 0;
    ``advantages`` are untouched; a row whose every action token is masked is no longer
    admitted. Stats gain ``<name>_masked_tokens`` / ``<name>_capped_tokens`` and shares.

    ``plain``: the coefficients come from the plain functions (:func:`ipo_reference`,
    :func:`icepop_reference`, :func:`tis_reference`), the path on an accelerator (DESIGN
    section 3); else from the in-place arithmetic, the CPU's faster path. None: plain off
    the CPU. Both give the same update (the tests hold them to each other).
    """
    if name not in CORRECTIONS:
        raise UsageError(f"unknown correction {name!r}; choose one of {', '.join(CORRECTIONS)}")
    e, lo, hi, k = _check_knobs(name, eps, band, cap)
    if batch.behavior_logprobs is None:  # the runner refuses this batch before
        raise UsageError(f"--correction {name}: the batch carries no 'behavior_logprobs'")
    act = batch.action_mask
    n_act = int(act.sum())
    c = update.coefficients
    ratio_clamp = getattr(update, "ratio_clamp", None)
    reference = getattr(update, "reference_term", None)
    row_scale = getattr(update, "row_scale", None)
    if reference is not None:
        c = torch.sub(c, reference)  # the policy-gradient part
    lp, blp = batch.logprobs, batch.behavior_logprobs
    stats = dict(update.stats)
    notes = list(update.notes)
    lp, blp = lp.detach(), blp.detach()
    act_f = as_float(act, c.dtype)
    if plain is None:
        plain = c.device.type != "cpu"
    if name == "tis":
        log_ratio = torch.sub(lp, blp)
        rho = exp_(log_ratio.clone())
        capped = rho > k
        n_hit = int(capped.logical_and(act).sum())
        kept = (rho > 0).logical_and_(act)
        if row_scale is not None:  # the method's clip or band gives way: s_i A min(ρ, cap)
            pg = torch.mul(update.advantages, row_scale[:, None])
            if plain:
                new_c = tis_reference(pg, lp, blp, act, k)
            else:
                new_c = pg.mul_(rho.clamp_(max=k).mul_(act_f))
            how = f"replaced the method's clip or band and its ratio by min(ρ, {k})"
        elif ratio_clamp is None:  # c carries no ρ: c ← c · min(ρ, cap)
            new_c = tis_reference(c, lp, blp, act, k) if plain else torch.mul(c, rho.clamp_(max=k))
            how = f"multiplied every coefficient by min(ρ, {k})"
        else:  # c carries the method's ρ: replace it by min(ρ, cap), c ← c · min(ρ, cap)/ρ
            own = exp_(log_ratio.clamp_(-ratio_clamp, ratio_clamp))
            if plain:
                new_c = tis_reference(c, lp, blp, act, k, carried=own)
            else:
                new_c = torch.where(capped, c * (k / own), c)
            how = f"replaced ρ by min(ρ, {k}) in every coefficient"
        stats["tis_capped_tokens"] = float(n_hit)
        stats["tis_capped_share"] = n_hit / n_act if n_act else 0.0
        notes.append(f"tis {how} and capped the ratio on {n_hit} of {n_act} action tokens.")
    else:
        if name == "ipo":
            gap = exp_(lp.clone()).sub_(exp_(blp.clone())).abs_()
            kept = (gap <= e).logical_and_(act)
            rule = f"|π − μ| > {e}"
        else:
            rho = exp_(torch.sub(lp, blp))
            kept = (rho >= lo).logical_and_(rho <= hi).logical_and_(act)
            rule = f"ρ outside [{lo}, {hi}]"
        if not plain:
            new_c = _keep(c, kept, as_float(kept, c.dtype))
        elif name == "ipo":
            new_c = ipo_reference(c, lp, blp, act, e)
        else:
            new_c = icepop_reference(c, lp, blp, act, (lo, hi))
        n_hit = n_act - int(kept.sum())
        stats[f"{name}_masked_tokens"] = float(n_hit)
        stats[f"{name}_masked_share"] = n_hit / n_act if n_act else 0.0
        notes.append(f"{name} masked {n_hit} of {n_act} action tokens ({rule}), setting c = 0.")
    new_c = _keep(new_c, act, act_f)
    if reference is not None:
        new_c = new_c.add_(reference)
        notes.append(f"{name} left the KL-to-reference term of c as it is.")
    new_c = new_c.detach()
    if name == "tis" and row_scale is not None:
        admitted = (new_c != 0).any(dim=1)  # the clip or band no longer drops a row
    else:
        lost = update.admitted & act.any(dim=1) & ~kept.any(dim=1)
        if reference is not None:  # the KL term alone still moves the row
            lost &= ~(new_c != 0).any(dim=1)
        if int(lost.sum()):
            notes.append(f"{count(int(lost.sum()), 'row')} lost every action token to {name}.")
        admitted = update.admitted & ~lost
    return replace(update, coefficients=new_c, admitted=admitted, stats=stats, notes=notes)
