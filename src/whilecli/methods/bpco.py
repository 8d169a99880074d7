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

from dataclasses import dataclass
from typing import ClassVar

import torch

from whilecli import knobs as declared
from whilecli.errors import UsageError
from whilecli.methods.batch import Batch, Update
from whilecli.methods.corrections import PolicyGradientUpdate
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
    row_counts,
)
from whilecli.methods.gae import (
    critic_block,
    critic_outputs,
    critic_pass,
    skip_observation_gae_reference,
)
from whilecli.methods.knob_checks import pair
from whilecli.methods.twostep import BatchStats, TwoStep
from whilecli.methods.validate import Needs, ValueRule
from whilecli.textstyle import fraction

CLIP = declared.BPCO_CLIP.default
GAE_ALPHA = declared.BPCO_GAE_ALPHA.default
REWARD_RANGE = (0.0, 1.0)
LOG_RATIO_CAP = 20.0


def bpco_reference(
    reward: torch.Tensor,
    logp: torch.Tensor,
    behavior_logp: torch.Tensor,
    values: torch.Tensor,
    action_mask: torch.Tensor,
    clip: float = CLIP,
    alpha: float = GAE_ALPHA,
) -> torch.Tensor:
    """BPCO's c ``[B, T]``, the seed's equations one line each (plain torch).

    The reference every faster path is tested against; no 1/B (the trainer's loss averages
    sequences).
    """
    L = action_mask.sum(dim=1).to(reward.dtype)
    lam = torch.where(L > 0, (1 - 1 / (alpha * L.clamp(min=1))).clamp(min=0), 0.0)  # Eq. 14
    A = skip_observation_gae_reference(reward, values, action_mask, lam)  # Eq. 3-4
    return bpco_clip(A, logp, behavior_logp, action_mask, clip)[0]  # Eq. 2


def bpco_clip(
    A: torch.Tensor,
    logp: torch.Tensor,
    behavior_logp: torch.Tensor,
    action_mask: torch.Tensor,
    clip: float,
) -> tuple[torch.Tensor, ...]:
    """Eq. 2 given the advantages ``A [B, T]``: ``(c, admitted [B], unclipped tokens, clamped
    tokens, Σ ρ)``, plain torch (the path off the CPU, and with ``compile=True``)."""
    log_ratio = torch.where(action_mask, logp - behavior_logp, 0.0)
    rho = torch.exp(log_ratio.clamp(-LOG_RATIO_CAP, LOG_RATIO_CAP))
    mu = torch.exp(torch.where(action_mask, behavior_logp, 0.0))  # μ_t
    half_width = clip / mu  # ε/μ_t, ∞ when μ underflows
    up = (A > 0) & (rho <= 1 + half_width)
    down = (A < 0) & (rho >= 1 - half_width)
    unclipped = action_mask & (up | down | (A == 0))  # the unclipped branch is the minimum
    c = torch.where(unclipped, rho * A, 0.0)  # Eq. 2, its gradient ρA
    clamped = (log_ratio.abs() > LOG_RATIO_CAP).sum()
    rho_sum = torch.where(action_mask, rho, 0.0).sum()
    return c, unclipped.any(dim=1), unclipped.sum(), clamped, rho_sum


def explained_variance(
    rewards: torch.Tensor,
    values: torch.Tensor,
    action: torch.Tensor,
    work: Workspace | None = None,
    finite: bool | None = None,
    counts: torch.Tensor | None = None,
) -> float | None:
    """``1 − Var(R − V)/Var(R)`` over action tokens (population variances); None if R is constant
    (or so nearly constant that Var(R) underflows to 0).

    Two-pass variances: R's from per-row counts (R is constant along a trajectory); R − V's
    mean from dot products of V with the action mask, then its centred sum of squares, each
    pass a block of rows at a time (:func:`~whilecli.methods.fastmath.row_blocks`), so its
    temporaries stay in cache. Temporaries come from ``work`` when given; ``finite`` says whether
    every entry of ``values`` is finite and ``counts`` is the action tokens of each row
    (each computed when None).
    """
    f64 = torch.float64
    counts = (row_counts(action) if counts is None else counts).to(f64)
    n = float(counts.sum())
    r = rewards.detach().to(f64)
    seen = r[counts > 0]
    if n == 0 or bool((seen == seen[0]).all()):
        return None
    mean_r = float((counts * r).sum()) / n
    var_r = float((counts * (r - mean_r) ** 2).sum()) / n
    if var_r == 0:  # rewards that differ by less than the square root of the smallest float
        return None
    work = Workspace() if work is None else work
    v_all = values.detach()
    clean = all_finite(v_all) if finite is None else finite  # else junk in the padding
    blocks = row_blocks(v_all)

    def block(rows: slice) -> tuple[torch.Tensor, torch.Tensor]:
        """V on a block of rows, exactly 0 off its action tokens, and that mask as 0/1."""
        act = action[rows]
        shape = tuple(act.shape)
        action_f = as_float(act, f64, work.take("ev_action", shape, f64, v_all.device))
        v = v_all[rows].to(f64)
        return (v if clean else torch.where(act, v, 0.0)), action_f

    dot_v = 0.0
    for rows in blocks:
        v, action_f = block(rows)
        dot_v += float(torch.dot(v.reshape(-1), action_f.reshape(-1)))
    mean_d = mean_r - dot_v / n  # mean of R − V
    shift = (r - mean_d)[:, None]
    sum_sq = 0.0
    for rows in blocks:
        v, action_f = block(rows)
        out = work.take("ev_centred", tuple(v.shape), f64, v.device)
        flat = torch.sub(shift[rows], v, out=out).mul_(action_f).reshape(-1)  # 0 off actions
        sum_sq += float(torch.dot(flat, flat))
    var_d = sum_sq / n
    return 1.0 - var_d / var_r


@dataclass
class _Tally:
    """Counts gathered over the row blocks: unclipped and clamped tokens, Σ ρ on actions."""

    unclipped: int = 0
    clamped: int = 0
    ratio_sum: float = 0.0


def _block(
    log_pi: torch.Tensor,
    log_mu: torch.Tensor | None,
    action: torch.Tensor,
    action_f: torch.Tensor,
    adv: torch.Tensor,
    clip: float,
    out: torch.Tensor,
    tally: _Tally,
    work: Workspace,
) -> torch.Tensor:
    """Eq. 2 on a block of rows: writes c = ρA where unclipped (else 0) into ``out``.

    ``action_f`` is ``action`` as 0/1 floats. Returns admitted (a row with an unclipped
    action token).
    """
    dtype, device, shape = log_pi.dtype, log_pi.device, tuple(log_pi.shape)
    if log_mu is None:
        log_mu = log_pi
    ratio = torch.sub(log_pi, log_mu, out=work.take("ratio", shape, dtype, device))
    half = work.take("half", shape, dtype, device)
    if all_finite(ratio):  # then both inputs are: off the action tokens ρ and μ stay finite
        # or μ = 0 (ε/μ = ∞), and every value there is discarded by the final ``& action``
        torch.exp(log_mu, out=half)
    else:  # junk in the padding
        off = ~action
        ratio.masked_fill_(off, 0.0)
        exp_(half.copy_(log_mu).masked_fill_(off, 0.0))
    low, high = torch.aminmax(ratio)
    if max(float(high), -float(low)) > LOG_RATIO_CAP:
        tally.clamped += count((ratio.abs() > LOG_RATIO_CAP).logical_and_(action))
        ratio.clamp_(-LOG_RATIO_CAP, LOG_RATIO_CAP)
    ratio = exp_(ratio)  # finite everywhere: |log ρ| ≤ 20
    half = torch.div(torch.tensor(clip, dtype=dtype), half, out=half)  # ε/μ, ∞ if μ = 0
    # the unclipped branch: with s = sign(A), s ρ ≤ s + ε/μ is ρ ≤ 1 + ε/μ for A > 0,
    # ρ ≥ 1 − ε/μ for A < 0 (−1 + x rounds as −(1 − x)) and 0 ≤ ε/μ for A = 0
    sign = torch.sign(adv, out=work.take("sign", shape, dtype, device))
    bound = torch.add(half, sign, out=half)
    unclipped = work.take("up", shape, torch.bool, device)
    compare(torch.mul(ratio, sign, out=sign), "<=", bound, unclipped)
    unclipped.logical_and_(action)
    tally.unclipped += count(unclipped)
    tally.ratio_sum += float(torch.dot(ratio.view(-1), action_f.view(-1)))
    torch.mul(ratio, adv, out=out).mul_(as_float(unclipped, dtype, action_f))
    return any_rows(unclipped)


class BPCO(TwoStep):
    """BPCO's per-token coefficients for one batch (Qi et al. 2026, Eq. 2-4, 9, 11, 14).

    ``clip`` is ε in the half-width ε/μ (default 0.2, at most 1); ``gae_alpha`` is α in
    λ = 1 − 1/(α L) (default 0.4); ``reward_range`` bounds the critic (default (0, 1)).
    The coefficients carry no 1/B: the trainer averages its loss over sequences. ``compile``:
    run :func:`bpco_clip` (Eq. 2) through ``torch.compile``, built on the first update; the
    GAE is the vectorised scan either way.
    """

    name: ClassVar[str] = "bpco"
    needs = Needs(fields=("values",), values=ValueRule(*REWARD_RANGE))

    def __init__(
        self,
        clip: float = CLIP,
        gae_alpha: float = GAE_ALPHA,
        reward_range: tuple[float, float] = REWARD_RANGE,
        compile: bool = False,
    ) -> None:
        self.clip = declared.BPCO_CLIP.check(clip, "clip")
        self.gae_alpha = declared.BPCO_GAE_ALPHA.check(gae_alpha, "gae_alpha")
        lo, hi = pair("reward_range", reward_range, REWARD_RANGE)
        if not lo < hi:
            raise UsageError(
                f"reward_range must be LO,HI with LO < HI (default {REWARD_RANGE}); "
                f"got {tuple(reward_range)!r}",
                knob="reward_range",
            )
        self.reward_range = (lo, hi)
        self.needs = Needs(fields=("values",), values=ValueRule(lo, hi))
        self._work = Workspace()
        self._compiled = Compiled(bpco_clip) if compile else None

    def __repr__(self) -> str:
        return (
            f"BPCO(clip={self.clip}, gae_alpha={self.gae_alpha}, reward_range={self.reward_range})"
        )

    def per_token(self, micro_batch: Batch, stats: BatchStats, *, out: Update | None) -> Update:
        """Coefficients ``c = ρA`` where unclipped, else 0 (no 1/B): nothing here is
        batch-global. The runner has checked the values against ``reward_range``.

        ``out``, a previous :class:`Update`, has its tensors overwritten when their shapes
        match (a training loop saves the fresh memory); otherwise new tensors are returned.
        """
        batch = micro_batch
        values = batch.values
        assert values is not None  # the runner checked the batch for its needs
        values_finite = all_finite(values)  # else junk in the padding
        action = batch.action_mask
        log_pi = batch.logprobs.detach()
        log_mu = batch.behavior_logprobs
        log_mu = None if log_mu is None else log_mu.detach()
        counts = batch.action_counts
        if self._compiled is not None or log_pi.device.type != "cpu":  # the plain function
            # Eq. 3-4, 14: skip-observation GAE; value targets R
            coef, adv, targets, lam = critic_pass(
                batch, values, self.gae_alpha, out, self._work, counts
            )
            c, admitted, unclipped, clamped, rho_sum = plain_path(
                self._compiled,
                bpco_clip,
                adv,
                log_pi,
                log_pi if log_mu is None else log_mu,  # on-policy: ρ = 1
                action,
                self.clip,
            )
            coef.copy_(c)
            tally = _Tally(unclipped=int(unclipped), clamped=int(clamped), ratio_sum=float(rho_sum))
        else:
            coef, adv, targets, lam = critic_outputs(batch, values, self.gae_alpha, out, counts)
            outputs = (coef, adv, targets)
            admitted, tally = self._blocks(batch, values, counts, lam, outputs)
        own, notes = self._report(batch, values, values_finite, counts, tally, lam, admitted)
        return PolicyGradientUpdate(
            coefficients=coef.detach(),
            advantages=adv.detach(),
            admitted=admitted,
            value_targets=targets.detach(),
            stats=own,
            notes=notes,
            ratio_clamp=LOG_RATIO_CAP,
            row_scale=torch.ones_like(batch.rewards),
        )

    def _blocks(
        self,
        batch: Batch,
        values: torch.Tensor,
        counts: torch.Tensor,
        lam: torch.Tensor,
        outputs: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
    ) -> tuple[torch.Tensor, _Tally]:
        """The CPU fast path, block by block: Eq. 3-4, 11 into the advantages and value
        targets, Eq. 2 into the coefficients (``outputs``, in that order); ``(admitted,
        counts)``."""
        coef, adv, targets = outputs
        log_pi = batch.logprobs.detach()
        log_mu = batch.behavior_logprobs
        log_mu = None if log_mu is None else log_mu.detach()
        action, work = batch.action_mask, self._work
        dtype, device = log_pi.dtype, log_pi.device
        admitted = torch.empty_like(action[:, 0])
        tally = _Tally()
        for rows in row_blocks(log_pi):
            act = action[rows]
            action_f = as_float(act, dtype, work.take("action_f", tuple(act.shape), dtype, device))
            critic_block(batch, values, lam, counts, rows, adv, targets, work)
            admitted[rows] = _block(
                log_pi[rows],
                None if log_mu is None else log_mu[rows],
                act,
                action_f,
                adv[rows],
                self.clip,
                coef[rows],
                tally,
                work,
            )
        return admitted, tally

    def _report(
        self,
        batch: Batch,
        values: torch.Tensor,
        values_finite: bool,
        counts: torch.Tensor,
        tally: _Tally,
        lam: torch.Tensor,
        admitted: torch.Tensor,
    ) -> tuple[dict[str, float | None], list[str]]:
        action = batch.action_mask
        b = batch.size
        n_tokens = int(counts.sum())
        clipped = n_tokens - tally.unclipped
        n_clamped = tally.clamped
        kept = int(admitted.sum())
        empty = int((counts == 0).sum())
        ev = explained_variance(batch.rewards, values, action, self._work, values_finite, counts)
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
            "mean_ratio": tally.ratio_sum / n_tokens if n_tokens else None,
            "explained_variance": ev,
            "zero_lambda_trajectories": float(short),
        }
        notes = ["Coefficients carry no 1/B: average the loss over sequences in the trainer."]
        notes += compile_note(self._compiled)
        if clipped:
            notes.append(
                f"{clipped} of {n_tokens} action tokens (share {fraction(clipped / n_tokens)}) were clipped "
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
