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
from typing import Any, ClassVar

import torch

from whilecli import knobs as declared
from whilecli.methods.batch import Batch, Update, masked, reuse
from whilecli.methods.corrections import PolicyGradientUpdate
from whilecli.methods.distributed import global_sum, world_note
from whilecli.methods.fastmath import (
    Compiled,
    Workspace,
    all_finite,
    as_float,
    compile_note,
    count,
    exp_,
    log1p_,
    plain_path,
    row_blocks,
)
from whilecli.methods.twostep import BatchStats, TwoStep, base_stats
from whilecli.methods.validate import Needs

TRUST = declared.TRUST.default
LOG_RATIO_CLAMP = 30.0
PROBABILITY_FLOOR = 1e-6


def flash_reinforce_reference(
    reward: torch.Tensor,
    logp: torch.Tensor,
    behavior_logp: torch.Tensor,
    action_mask: torch.Tensor,
    trust: float = TRUST,
    totals: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """FlashReinforce's ``(c [B, T], D [B], Σ_t ρ [B], clamped tokens)``, one line per equation.

    Plain torch: the path on an accelerator (and, compiled, with ``compile=True``) and the
    reference every faster path is tested against. ``reward [B]``; ``logp``,
    ``behavior_logp`` ``[B, T]`` (log π_θ, log μ; pass ``logp`` for an on-policy batch);
    ``action_mask`` bool ``[B, T]``; ``totals`` = (Σ_j R_j, B) of the global batch (default
    this batch's).
    """
    R_sum, B = (reward.sum(), reward.shape[0]) if totals is None else (totals[0], totals[1])
    T = action_mask.sum(dim=1)  # T_i, action tokens
    A = reward - R_sum / B  # Eq. 5
    log_ratio = torch.where(action_mask, logp - behavior_logp, 0.0)
    rho = torch.exp(log_ratio.clamp(-LOG_RATIO_CLAMP, LOG_RATIO_CLAMP))  # kept finite
    p = torch.exp(behavior_logp).clamp(PROBABILITY_FLOOR, 1 - PROBABILITY_FLOOR)  # μ
    q = torch.exp(logp).clamp(PROBABILITY_FLOOR, 1 - PROBABILITY_FLOOR)  # π_θ
    d = p * torch.log(p / q) + (1 - p) * torch.log((1 - p) / (1 - q))  # Eq. 6
    D = torch.where(action_mask, d, 0.0).sum(dim=1) / T  # Eq. 7
    m = trust >= D  # Eq. 8
    c = torch.where(action_mask, torch.where(m, A / (T * B), 0.0)[:, None] * rho, 0.0)  # Eq. 10
    rho_sum = torch.where(action_mask, rho, 0.0).sum(dim=1)  # for the stats
    clamped = (log_ratio.abs() > LOG_RATIO_CLAMP).sum()
    return c, D, rho_sum, clamped


def bernoulli_kl(
    log_p: torch.Tensor, log_q: torch.Tensor, work: Workspace | None = None
) -> torch.Tensor:
    """Eq. 6: KL(Bernoulli(p) ‖ Bernoulli(q)) with p, q clamped to [1e-6, 1 − 1e-6].

    ``d = p (log p − log q) + (1 − p) log1p((q − p)/(1 − q))``: the second log is
    ``log((1 − p)/(1 − q))`` written so that it takes one logarithm instead of two and keeps
    its precision when p and q are close. The clamp is applied to the log-probabilities
    (``log 1e-6 ≤ log p ≤ log(1 − 1e-6)``), the same clamp up to rounding. Four buffers of
    the inputs' shape, taken from ``work`` when given (the result is one of them), every
    later step in place.
    """
    work = Workspace() if work is None else work
    dtype, device, shape = log_p.dtype, log_p.device, tuple(log_p.shape)
    lo, hi = math.log(PROBABILITY_FLOOR), math.log1p(-PROBABILITY_FLOOR)
    d = torch.clamp(log_p, lo, hi, out=work.take("kl", shape, dtype, device))
    q = torch.clamp(log_q, lo, hi, out=work.take("kl_q", shape, dtype, device))
    p = torch.exp(d, out=work.take("kl_p", shape, dtype, device))
    d.sub_(q)  # log p − log q
    exp_(q)
    tail = torch.sub(p, q, out=work.take("kl_tail", shape, dtype, device))
    log1p_(tail.div_(q.sub_(1)))  # log((1 − p)/(1 − q)): (p − q)/(q − 1) is (q − p)/(1 − q)
    d.mul_(p)  # p log(p/q)
    return torch.addcmul(d, tail, p.sub_(1), value=-1, out=d)  # + (1 − p) log((1 − p)/(1 − q))


def _block(
    log_pi: torch.Tensor,
    log_mu: torch.Tensor | None,
    action: torch.Tensor,
    counts: torch.Tensor,
    scale: torch.Tensor,
    trust: float,
    out: torch.Tensor,
    work: Workspace,
) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Eq. 6-10 on a block of rows: writes c into ``out``; ``(D_i, Σ_t ρ, clamped tokens)``.

    ``counts`` is T_i and ``scale`` is ``A_i / (T_i B)``; the gate ``m_i = 1[D_i ≤ trust]``
    multiplies it here.
    """
    dtype, device, shape = log_pi.dtype, log_pi.device, tuple(log_pi.shape)
    action_f = as_float(action, dtype, work.take("action_f", shape, dtype, device))
    if log_mu is None:  # μ = π: ρ = 1, every d is 0
        mean_kl = torch.zeros_like(scale)
        torch.mul(action_f, _gate(scale, mean_kl, trust)[:, None], out=out)
        return mean_kl, counts.to(dtype), 0
    log_ratio = torch.sub(log_pi, log_mu, out=work.take("log_ratio", shape, dtype, device))
    if not all_finite(log_ratio):  # junk in the padding
        log_pi, log_mu = masked(log_pi, action, action_f), masked(log_mu, action, action_f)
        torch.sub(log_pi, log_mu, out=log_ratio)
    n_clamped = 0
    low, high = torch.aminmax(log_ratio)
    if max(float(high), -float(low)) > LOG_RATIO_CLAMP:
        n_clamped = count((log_ratio.abs() > LOG_RATIO_CLAMP).logical_and_(action))
        log_ratio.clamp_(-LOG_RATIO_CLAMP, LOG_RATIO_CLAMP)
    ratio = exp_(log_ratio).mul_(action_f)  # ρ (finite) on the action tokens, 0 elsewhere
    kl = bernoulli_kl(log_mu, log_pi, work).mul_(action_f)  # Eq. 6
    mean_kl = kl.sum(dim=1) / counts  # Eq. 7
    torch.mul(ratio, _gate(scale, mean_kl, trust)[:, None], out=out)  # Eq. 10
    return mean_kl, ratio.sum(dim=1), n_clamped


def _gate(scale: torch.Tensor, mean_kl: torch.Tensor, trust: float) -> torch.Tensor:
    """Eq. 8: m_i A_i / (T_i B), a dropped row's exactly +0 (never −0 from a negative A)."""
    return torch.where(mean_kl <= trust, scale, torch.zeros_like(scale))


class FlashReinforce(TwoStep):
    """FlashReinforce's per-token coefficients for one batch (Hu et al. 2026, Eq. 5-10).

    ``trust`` is δ, the largest mean Bernoulli KL a trajectory may carry and still count
    (default 0.003; ``inf`` turns the gate off). ``compile``: run
    :func:`flash_reinforce_reference` through ``torch.compile`` (built on the first update).
    Without it, CPU batches take the row-block fast path and other devices the plain function.
    """

    name: ClassVar[str] = "flash_reinforce"
    needs = Needs(logprobs=("logprobs", "behavior_logprobs"), action_tokens=True)

    def __init__(self, trust: float = TRUST, compile: bool = False) -> None:
        self.trust = declared.TRUST.check(trust, "trust")
        self._work = Workspace()
        self._compiled = Compiled(flash_reinforce_reference) if compile else None

    def __repr__(self) -> str:
        return f"FlashReinforce(trust={self.trust})"

    def reduce(self, batch: Batch, group: Any | None = None) -> BatchStats:
        """Σ_j R_j and B of the optimizer batch (all-reduced over ``group``'s ranks)."""
        rewards = batch.rewards.detach()
        totals = global_sum(
            torch.stack(
                [rewards.sum(), torch.tensor(float(batch.size), dtype=rewards.dtype).to(rewards)]
            ),
            group,
        )
        notes = []
        if bool((batch.rewards == batch.rewards[0]).all()) and group is None:
            notes.append("Every reward is equal, so every advantage and coefficient is 0.")
        extra = world_note(group)
        if extra:
            notes.append(extra)
        return base_stats(self.name, batch, group, values={"totals": totals}, notes=notes)

    def stats_from_totals(
        self, reward_sum: float, rows: int, micro_batch: Batch, *, also: Needs | None = None
    ) -> BatchStats:
        """The optimizer batch's stats from its Σ_j R_j and B, as a trainer that computed them
        itself hands them over (verl: the advantages are centred already, Σ A = 0); the
        runner checks ``micro_batch`` (:meth:`~whilecli.methods.twostep.TwoStep.trainer_stats`)."""
        dtype = micro_batch.logprobs.dtype
        totals = torch.tensor([float(reward_sum), float(rows)], dtype=dtype)
        values = {"totals": totals.to(micro_batch.rewards.device)}
        return self.trainer_stats(micro_batch, rows=rows, values=values, also=also)

    def per_token(self, micro_batch: Batch, stats: BatchStats, *, out: Update | None) -> Update:
        """Coefficients ``c = m_i A_i ρ / (T_i B)`` of ``micro_batch`` with the mean reward
        and B of the optimizer batch in ``stats``.

        ``out``, a previous :class:`Update`, has its tensors overwritten when their shapes
        match (a training loop saves the fresh memory); otherwise new tensors are returned.
        """
        batch = micro_batch
        action = batch.action_mask
        counts = batch.action_counts
        rewards = batch.rewards.detach()
        dtype = batch.logprobs.dtype
        totals = stats.values["totals"].to(device=rewards.device, dtype=dtype)
        big_b = totals[1]
        adv = rewards - totals[0] / big_b  # Eq. 5

        scale = adv / (counts * big_b)
        log_pi = batch.logprobs.detach()
        log_mu = batch.behavior_logprobs
        log_mu = None if log_mu is None else log_mu.detach()
        coef = reuse(out, "coefficients", log_pi.shape, dtype, log_pi.device)
        if self._compiled is not None or log_pi.device.type != "cpu":  # the plain function
            c, mean_kl, ratio_sums, clamped_t = plain_path(
                self._compiled,
                flash_reinforce_reference,
                rewards,
                log_pi,
                log_pi if log_mu is None else log_mu,  # on-policy: ρ = 1, d = 0
                action,
                self.trust,
                totals,
            )
            coef.copy_(c)
            n_clamped = int(clamped_t)
        else:
            mean_kl, ratio_sums, n_clamped = self._blocks(
                log_pi, log_mu, action, counts, scale, coef
            )
        admitted = mean_kl <= self.trust  # Eq. 8
        advantages = reuse(out, "advantages", log_pi.shape, dtype, log_pi.device)
        as_float(batch.mask, dtype, advantages)
        advantages.mul_(adv[:, None])
        own, notes = self._report(batch, admitted, mean_kl, n_clamped, ratio_sums, counts)
        return PolicyGradientUpdate(
            coefficients=coef.detach(),
            advantages=advantages.detach(),
            admitted=admitted,
            value_targets=None,
            stats=own,
            notes=notes,
            ratio_clamp=LOG_RATIO_CLAMP,
        )

    def _blocks(
        self,
        log_pi: torch.Tensor,
        log_mu: torch.Tensor | None,
        action: torch.Tensor,
        counts: torch.Tensor,
        scale: torch.Tensor,
        coef: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, int]:
        """The CPU fast path: Eq. 6-10 block by block into ``coef``; ``(D, Σ_t ρ, clamped)``."""
        mean_kl, ratio_sums = torch.empty_like(scale), torch.empty_like(scale)
        n_clamped = 0
        for rows in row_blocks(log_pi):
            mean_kl[rows], ratio_sums[rows], clamped = _block(
                log_pi[rows],
                None if log_mu is None else log_mu[rows],
                action[rows],
                counts[rows],
                scale[rows],
                self.trust,
                coef[rows],
                self._work,
            )
            n_clamped += clamped
        return mean_kl, ratio_sums, n_clamped

    def _report(
        self,
        batch: Batch,
        admitted: torch.Tensor,
        mean_kl: torch.Tensor,
        n_clamped: int,
        ratio_sums: torch.Tensor,
        counts: torch.Tensor,
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
        notes: list[str] = compile_note(self._compiled)
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
        return stats, notes
