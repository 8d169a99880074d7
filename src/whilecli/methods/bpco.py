"""BPCO (Qi et al. 2026): a bounded critic, the natural-scale advantage, a clip on probability.

With critic values V inside ``reward_range``, rewards R and behaviour log-probs log μ
(DESIGN section 3):

- Eq. 9: the critic is bounded, ``V = R_min + (R_max − R_min)(1/2 + arctan(z)/π)``, so every
  value must lie in ``reward_range``; a value outside it is refused.
- Eq. 3-4, 14: skip-observation GAE over action tokens, γ = 1, ``λ = max(0, 1 − 1/(α L))``
  (0 for short trajectories at the default α = 0.4), not normalised.
- Eq. 11: value targets ``V̂_t = R`` on every token (λ_V = 1, γ = 1).
- Eq. 2 (DPPO clip): ``ρ = exp(clamp(log π − log μ, ±20))``, half-width ``ε/μ_t`` with
  ``μ_t = exp(log μ)`` (∞ when μ underflows to 0); ``c = ρA`` when the unclipped branch of
  ``min(ρA, clip(ρ, 1 − ε/μ, 1 + ε/μ) A)`` is the minimum (A > 0 and ρ ≤ 1 + ε/μ, A < 0 and
  ρ ≥ 1 − ε/μ, or A = 0; ties count as unclipped), else 0.

No 1/B or 1/N factor enters ``c``: BPCO's loss sums each sequence's tokens and the trainer
averages the loss over sequences itself. Divide by the number of sequences in your loop.
"""

from __future__ import annotations

from typing import Any

import torch

from whilecli.errors import InputError, UsageError
from whilecli.methods.batch import Batch, Update, masked
from whilecli.methods.gae import action_returns, gae_lambda, skip_observation_gae
from whilecli.methods.knob_checks import pair, positive

CLIP = 0.2
GAE_ALPHA = 0.4
REWARD_RANGE = (0.0, 1.0)
LOG_RATIO_CAP = 20.0


def explained_variance(
    rewards: torch.Tensor, values: torch.Tensor, action: torch.Tensor
) -> float | None:
    """``1 − Var(R − V)/Var(R)`` over action tokens (population variances); None if R is constant.

    Two-pass variances, R's from per-row counts (R is constant along a trajectory).
    """
    f64 = torch.float64
    counts = action.sum(dim=1).to(f64)
    n = float(counts.sum())
    r = rewards.to(f64)
    seen = r[counts > 0]
    if n == 0 or bool((seen == seen[0]).all()):
        return None
    mean_r = float((counts * r).sum()) / n
    var_r = float((counts * (r - mean_r) ** 2).sum()) / n
    action_f = action.to(f64)
    diff = masked(r[:, None] - values.to(f64), action, action_f)
    mean_d = float(diff.sum()) / n
    var_d = float(((diff - mean_d) * action_f).square().sum()) / n
    return 1.0 - var_d / var_r


class BPCO:
    """BPCO's per-token coefficients for one batch (Qi et al. 2026, Eq. 2-4, 9, 11, 14).

    ``clip`` is ε in the half-width ε/μ (default 0.2, at most 1); ``gae_alpha`` is α in
    λ = 1 − 1/(α L) (default 0.4); ``reward_range`` bounds the critic (default (0, 1)).
    The coefficients carry no 1/B: the trainer averages its loss over sequences.
    """

    requires: frozenset[str] = frozenset({"reward", "logprobs", "values"})
    logprob_fields: tuple[str, ...] = ("logprobs", "behavior_logprobs")

    def __init__(
        self,
        clip: float = CLIP,
        gae_alpha: float = GAE_ALPHA,
        reward_range: tuple[float, float] = REWARD_RANGE,
    ) -> None:
        self.clip = positive("clip", clip, CLIP)
        if self.clip > 1:
            raise UsageError(f"clip must be in (0, 1] (default {CLIP}); got {clip!r}")
        self.gae_alpha = positive("gae_alpha", gae_alpha, GAE_ALPHA)
        lo, hi = pair("reward_range", reward_range, REWARD_RANGE)
        if not lo < hi:
            raise UsageError(
                f"reward_range must be LO,HI with LO < HI (default {REWARD_RANGE}); "
                f"got {tuple(reward_range)!r}"
            )
        self.reward_range = (lo, hi)

    def __repr__(self) -> str:
        return (
            f"BPCO(clip={self.clip}, gae_alpha={self.gae_alpha}, reward_range={self.reward_range})"
        )

    def _check_range(self, batch: Batch, values: torch.Tensor) -> None:
        lo, hi = self.reward_range
        inside = torch.where(batch.mask, values, lo)
        if bool(inside.min() >= lo) and bool(inside.max() <= hi):  # NaN fails both
            return
        bad = batch.mask & ((values < lo) | (values > hi) | ~torch.isfinite(values))
        if bool(bad.any()):
            i = int(bad.any(dim=1).nonzero()[0, 0])
            t = int(bad[i].nonzero()[0, 0])
            raise InputError(
                f"token {t} is {float(values[i, t]):g}, outside reward_range [{lo:g}, {hi:g}] "
                "(BPCO's critic is bounded)",
                row=i,
                field="values",
            )

    def update(self, batch: Batch, *, group: Any | None = None) -> Update:
        """Coefficients ``c = ρA`` where unclipped, else 0 (no 1/B); ``group`` is accepted
        for a uniform interface: nothing here is batch-global."""
        batch.check_rewards()
        batch.check_logprobs(self.logprob_fields)
        values = batch.require("values", "BPCO")
        self._check_range(batch, values)  # also refuses NaN and infinities
        action = batch.action_mask
        counts = batch.action_counts
        lam = gae_lambda(counts, self.gae_alpha)
        adv = skip_observation_gae(batch.rewards, values, action, lam)  # Eq. 3-4, 14
        dtype = batch.logprobs.dtype
        action_f = action.to(dtype)
        log_pi = masked(batch.logprobs, action, action_f)
        log_mu = log_pi
        if batch.behavior_logprobs is not None:
            log_mu = masked(batch.behavior_logprobs, action, action_f)
        log_ratio = log_pi - log_mu  # 0 off the action tokens
        capped = log_ratio.clamp_max(LOG_RATIO_CAP).clamp_min(-LOG_RATIO_CAP)
        n_clamped = 0
        if float(log_ratio.abs().max()) > LOG_RATIO_CAP:
            n_clamped = int((log_ratio.abs() > LOG_RATIO_CAP).sum())
        ratio = capped.exp()
        half = self.clip / log_mu.exp()  # Eq. 2: ε/μ, +∞ when μ underflows to 0
        # the unclipped branch is the minimum: A > 0 and ρ ≤ 1 + ε/μ, A < 0 and ρ ≥ 1 − ε/μ, A = 0
        pos = adv > 0
        neg = adv < 0
        up = ratio <= 1 + half
        down = ratio >= 1 - half
        unclipped = ((pos & up) | (~pos & (down | ~neg))) & action
        coef = ratio * adv * unclipped.to(dtype)
        admitted = unclipped.any(dim=1)
        stats, notes = self._report(batch, values, unclipped, n_clamped, ratio, lam, admitted)
        return Update(
            coefficients=coef.detach(),
            advantages=adv.detach(),
            admitted=admitted,
            value_targets=action_returns(batch.rewards, batch.mask).detach(),
            stats=stats,
            notes=notes,
        )

    def _report(
        self,
        batch: Batch,
        values: torch.Tensor,
        unclipped: torch.Tensor,
        n_clamped: int,
        ratio: torch.Tensor,
        lam: torch.Tensor,
        admitted: torch.Tensor,
    ) -> tuple[dict[str, float | None], list[str]]:
        action = batch.action_mask
        b = batch.size
        counts = batch.action_counts
        n_tokens = int(counts.sum())
        clipped = n_tokens - int(unclipped.sum())
        kept = int(admitted.sum())
        empty = int((counts == 0).sum())
        ev = explained_variance(batch.rewards, values, action)
        has = counts > 0
        short = int((has & (lam == 0)).sum())
        lo, hi = self.reward_range
        outside = int(((batch.rewards < lo) | (batch.rewards > hi)).sum())
        stats: dict[str, float | None] = {
            "trajectories": float(b),
            "action_tokens": float(n_tokens),
            "admitted": float(kept),
            "admitted_share": kept / b,
            "clipped_tokens": float(clipped),
            "clipped_share": clipped / n_tokens if n_tokens else 0.0,
            "clamped_tokens": float(n_clamped),
            "clamped_share": n_clamped / n_tokens if n_tokens else 0.0,
            "mean_ratio": float((ratio * action.to(ratio.dtype)).sum()) / n_tokens
            if n_tokens
            else None,
            "explained_variance": ev,
            "zero_lambda_trajectories": float(short),
        }
        notes = ["Coefficients carry no 1/B: average the loss over sequences in the trainer."]
        if clipped:
            notes.append(
                f"{clipped} of {n_tokens} action tokens ({clipped / n_tokens:.1%}) were clipped "
                f"(ratio beyond 1 ± {self.clip:g}/μ in the direction of the advantage) and get 0."
            )
        if n_clamped:
            notes.append(
                f"{n_clamped} action tokens had |log π − log μ| > {LOG_RATIO_CAP:g}; their ratio "
                f"was clamped to e^±{LOG_RATIO_CAP:g}."
            )
        if short:
            notes.append(
                f"{short} trajectories are short enough that λ = max(0, 1 − 1/({self.gae_alpha:g} L)) "
                "is 0: their advantage is the one-step TD error."
            )
        if empty:
            notes.append(
                f"{empty} trajectories have no action token: kept, not admitted, zero coefficients."
            )
        if ev is None:
            notes.append("Explained variance is undefined: every reward is equal.")
        if outside:
            notes.append(
                f"{outside} rewards lie outside reward_range [{lo:g}, {hi:g}]; the bounded critic "
                "cannot reach them."
            )
        return stats, notes
