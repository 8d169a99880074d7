"""FlashReinforce (Hu et al. 2026): a baseline from the batch, a gate on drift, equal weight.

For a batch of B trajectories with rewards R_i, ``T_i`` action tokens, the trained policy's
log-probs log π and the sampler's log μ (DESIGN section 3 pins what the paper leaves open):

- Eq. 5: ``A_i = R_i − (1/B) Σ_j R_j`` (no division by a standard deviation; B counts every
  trajectory, gated ones included).
- ``ρ_{i,t} = exp(clamp(log π − log μ, −30, 30))``: never clipped, only kept finite.
- Eq. 6: ``d_{i,t} = p log(p/q) + (1−p) log((1−p)/(1−q))``, the KL between two Bernoullis
  "this token versus everything else", with ``p = μ``, ``q = π`` each clamped to
  ``[1e-6, 1 − 1e-6]`` from the unclamped log-probs.
- Eq. 7-8: ``D_i = (1/T_i) Σ_t d_{i,t}`` over action tokens, ``m_i = 1[D_i ≤ trust]``.
- Eq. 9-10: ``c_{i,t} = m_i A_i ρ_{i,t} / (T_i B)``, the gradient of the surrogate with ρ, A
  and m held fixed. Observation tokens and padding get 0.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from whilecli.errors import InputError
from whilecli.methods.batch import Batch, Update, masked
from whilecli.methods.distributed import global_sum, world_note
from whilecli.methods.knob_checks import positive

TRUST = 0.003
LOG_RATIO_CLAMP = 30.0
PROBABILITY_FLOOR = 1e-6


def bernoulli_kl(log_p: torch.Tensor, log_q: torch.Tensor) -> torch.Tensor:
    """Eq. 6: KL(Bernoulli(p) ‖ Bernoulli(q)) with p, q clamped to [1e-6, 1 − 1e-6].

    The clamp is applied to the log-probabilities (``log 1e-6 ≤ log p ≤ log(1 − 1e-6)``),
    which is the same clamp up to rounding and saves a logarithm per side.
    """
    lo, hi = math.log(PROBABILITY_FLOOR), math.log1p(-PROBABILITY_FLOOR)
    lp = log_p.clamp_max(hi).clamp_min_(lo)
    lq = log_q.clamp_max(hi).clamp_min_(lo)
    p = lp.exp()
    l1p = p.neg().log1p_()  # log(1 − p)
    l1p.sub_(lq.exp().neg_().log1p_())  # − log(1 − q)
    d = lp.sub_(lq).mul_(p)  # p log(p/q)
    return d.add_(l1p.mul_(p.neg_().add_(1)))  # + (1 − p) log((1 − p)/(1 − q))


class FlashReinforce:
    """FlashReinforce's per-token coefficients for one batch (Hu et al. 2026, Eq. 5-10).

    ``trust`` is δ, the largest mean Bernoulli KL a trajectory may carry and still count
    (default 0.003; ``inf`` turns the gate off).
    """

    requires: frozenset[str] = frozenset({"reward", "logprobs"})
    logprob_fields: tuple[str, ...] = ("logprobs", "behavior_logprobs")

    def __init__(self, trust: float = TRUST) -> None:
        self.trust = positive("trust", trust, TRUST, allow_inf=True)

    def __repr__(self) -> str:
        return f"FlashReinforce(trust={self.trust})"

    def update(self, batch: Batch, *, group: Any | None = None) -> Update:
        """Coefficients ``c = m_i A_i ρ / (T_i B)``; ``group`` all-reduces the mean reward and B."""
        batch.check_rewards()
        batch.check_logprobs(self.logprob_fields)
        action = batch.action_mask
        counts = batch.action_counts
        if bool((counts == 0).any()):
            i = int((counts == 0).nonzero()[0, 0])
            raise InputError(
                "has no action token; FlashReinforce cannot weigh it", row=i, field="action_mask"
            )
        dtype = batch.logprobs.dtype
        b = batch.size
        totals = global_sum(
            torch.stack(
                [
                    batch.rewards.sum(),
                    torch.tensor(float(b), dtype=dtype, device=batch.rewards.device),
                ]
            ),
            group,
        )
        big_b = totals[1]
        adv = batch.rewards - totals[0] / big_b  # Eq. 5

        action_f = action.to(dtype)
        log_pi = masked(batch.logprobs, action, action_f)
        log_mu = log_pi
        if batch.behavior_logprobs is not None:
            log_mu = masked(batch.behavior_logprobs, action, action_f)
        log_ratio = log_pi - log_mu  # 0 off the action tokens
        capped = log_ratio.clamp_max(LOG_RATIO_CLAMP).clamp_min(-LOG_RATIO_CLAMP)
        n_clamped = 0
        if float(log_ratio.abs().max()) > LOG_RATIO_CLAMP:
            n_clamped = int((log_ratio.abs() > LOG_RATIO_CLAMP).sum())
        ratio = capped.exp()
        if batch.behavior_logprobs is None:
            mean_kl = torch.zeros_like(adv)  # μ = π: every d is 0
        else:
            kl = bernoulli_kl(log_mu, log_pi) * action_f  # Eq. 6
            mean_kl = kl.sum(dim=1) / counts  # Eq. 7
        admitted = mean_kl <= self.trust  # Eq. 8
        scale = adv * admitted.to(dtype) / (counts * big_b)
        coef = (scale[:, None] * action_f) * ratio  # Eq. 10
        advantages = adv[:, None] * batch.mask.to(dtype)
        ratio_sums = (ratio * action_f).sum(dim=1)
        stats, notes = self._report(batch, admitted, mean_kl, n_clamped, ratio_sums, counts, group)
        return Update(
            coefficients=coef.detach(),
            advantages=advantages.detach(),
            admitted=admitted,
            value_targets=None,
            stats=stats,
            notes=notes,
        )

    def _report(
        self,
        batch: Batch,
        admitted: torch.Tensor,
        mean_kl: torch.Tensor,
        n_clamped: int,
        ratio_sums: torch.Tensor,
        counts: torch.Tensor,
        group: Any | None,
    ) -> tuple[dict[str, float | None], list[str]]:
        b = batch.size
        n_tokens = int(counts.sum())
        kept = int(admitted.sum())
        kept_tokens = float(counts[admitted].sum())
        mean_ratio = float(ratio_sums[admitted].sum()) / kept_tokens if kept else None
        stats: dict[str, float | None] = {
            "trajectories": float(b),
            "action_tokens": float(n_tokens),
            "admitted": float(kept),
            "admitted_share": kept / b,
            "gated": float(b - kept),
            "mean_kl": float(mean_kl.mean()),
            "max_kl": float(mean_kl.max()),
            "clamped_tokens": float(n_clamped),
            "clamped_share": n_clamped / n_tokens,
            "mean_ratio": mean_ratio,
        }
        notes: list[str] = []
        if batch.behavior_logprobs is None:
            notes.append(
                "No behaviour log-probs: the batch is taken as on-policy (ratio 1, KL 0), "
                "so the trust gate admits every trajectory."
            )
        if kept < b:
            worst = float(mean_kl.max())
            notes.append(
                f"{b - kept} of {b} trajectories dropped: their mean Bernoulli KL to the sampler "
                f"is above trust {self.trust:g} (largest {worst:.3g}); they still count in B."
            )
        if kept == 0:
            notes.append("Nothing admitted: every coefficient is 0 and mean_ratio is undefined.")
        if n_clamped:
            notes.append(
                f"{n_clamped} action tokens had |log π − log μ| > {LOG_RATIO_CLAMP:g}; "
                f"their ratio was clamped to e^±{LOG_RATIO_CLAMP:g}."
            )
        if bool((batch.rewards == batch.rewards[0]).all()) and group is None:
            notes.append("Every reward is equal, so every advantage and coefficient is 0.")
        extra = world_note(group)
        if extra:
            notes.append(extra)
        return stats, notes
