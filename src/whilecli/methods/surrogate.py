"""PPO's clipped surrogate as per-token coefficients, with GRPO's length weights and KL term.

Shared by grpo, max_rl and rae, which differ only in the advantage A_i (Shao et al. 2024,
arXiv:2402.03300; Liu et al. 2025, arXiv:2503.20783). With ρ = exp(log π_θ − log μ) (1 without
behaviour log-probs) the gradient of min(ρA, clip(ρ, 1 − ε, 1 + ε)A) with respect to log π_θ is

    g = ρA   when the unclipped branch is the minimum
             (A > 0 and ρ ≤ 1 + ε, or A < 0 and ρ ≥ 1 − ε, or A = 0),
    g = 0    otherwise.

The length weight w_i is chosen by ``loss_type``: ``grpo`` 1/(T_i B), ``bnpo`` 1/Σ_j T_j,
``dr_grpo`` 1/(L_max B) (L_max: ``--max-len``, the generation cap trainers use; default the
longest row). Σ_j T_j leaves out the tokens of rows that carry no loss (truncated rows under
``--truncated mask``), as TRL and verl do; B counts every row. With β > 0 the k3 estimator of KL(π_θ ‖ π_ref),
KL = r − log r − 1 with r = π_ref/π_θ, adds the gradient term −β w_i (1 − r):

    c_{i,t} = w_i g_{i,t} − β w_i (1 − r_{i,t}).

:func:`clipped_surrogate_reference` writes these equations in plain torch; it is what the
tests hold :func:`surrogate_coefficients` (row blocks, in place, scratch kept between calls) to, bit for
bit, and ``benchmarks/update_bench.py`` times the two in the same run. The KL part is
returned apart as well, so that a staleness correction can leave it as it is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from whilecli.errors import UsageError
from whilecli.knobs import BETA, CLIP
from whilecli.methods.batch import Batch, Update, reuse
from whilecli.methods.corrections import PolicyGradientUpdate
from whilecli.methods.fastmath import (
    Compiled,
    Workspace,
    all_finite,
    any_rows,
    as_float,
    compare,
    compile_note,
    exp_,
    plain_path,
    row_blocks,
    row_counts,
)
from whilecli.methods.groups import count, gather_rows, truncated_rows
from whilecli.methods.twostep import BatchStats, TwoStep, refuse_unknown_tasks
from whilecli.methods.validate import Needs
from whilecli.textstyle import fraction

LOSS_TYPES = ("grpo", "bnpo", "dr_grpo")


def clipped_surrogate_reference(
    logp: torch.Tensor,
    behavior_logp: torch.Tensor | None,
    ref_logp: torch.Tensor | None,
    action_mask: torch.Tensor,
    A: torch.Tensor,
    w: torch.Tensor,
    clip: float = 0.2,
    beta: float = 0.0,
    live: torch.Tensor | None = None,
) -> tuple[
    torch.Tensor, torch.Tensor | None, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None
]:
    """c = w_i g − β w_i (1 − r) ``[B, T]``, the equations one line each (plain torch).

    ``A [B]`` the advantages, ``w [B]`` the length weights (0 on a row that carries no loss),
    ``live [B]`` the rows that carry one (default every row). The path on an accelerator
    (and, compiled, with ``compile=True``) and the reference every faster path is tested
    against. Returns ``(c, KL part −β w (1 − r) or None, admitted [B], clipped tokens,
    Σ ρ, Σ KL_k3 or None)``, the sums over live action tokens.
    """
    live = torch.ones_like(A, dtype=torch.bool) if live is None else live
    log_ratio = torch.zeros_like(logp) if behavior_logp is None else logp - behavior_logp
    ratio = torch.exp(torch.where(action_mask, log_ratio, 0.0))  # ρ, unclamped
    A, w = A[:, None], w[:, None]
    # d/dlog π of min(ρA, clip(ρ, 1 − ε, 1 + ε)A): ρA where the unclipped branch is the minimum
    unclipped = ((A > 0) & (ratio <= 1 + clip)) | ((A < 0) & (ratio >= 1 - clip))
    g = torch.where(unclipped, ratio * A, 0.0)
    on = action_mask & live[:, None]  # live action tokens: a row without a loss gets c = 0
    c = torch.where(on, w * g, 0.0)
    kl_term, kl_sum = None, None
    if beta > 0:
        assert ref_logp is not None
        log_r = ref_logp - logp
        r = torch.exp(log_r)  # π_ref/π_θ
        kl_term = torch.where(action_mask, -beta * w * (1 - r), 0.0)  # d/dlog π of β(r − log r − 1)
        c = c + kl_term
        kl_sum = torch.where(on, r - log_r - 1, 0.0).sum()
    admitted = (c != 0).any(dim=1)
    clipped = (on & ~unclipped & (A != 0)).sum()
    ratio_sum = torch.where(on, ratio, 0.0).sum()
    return c + 0.0, kl_term, admitted, clipped, ratio_sum, kl_sum


def length_weights(
    loss_type: str,
    action_counts: torch.Tensor,
    *,
    n_rows: int,
    total_tokens: float,
    max_len: float,
) -> torch.Tensor:
    """w_i ``[B]``: ``grpo`` 1/(T_i B), ``bnpo`` 1/Σ_j T_j, ``dr_grpo`` 1/(L_max B).

    ``n_rows`` (B) counts every row of the global batch, truncated ones included;
    ``total_tokens`` (Σ_j T_j) counts the action tokens of the rows that carry a loss (a
    truncated row under ``--truncated mask`` carries none). A row with no action token gets
    w = 0.
    """
    zero = torch.zeros_like(action_counts)
    has = action_counts > 0
    if loss_type == "grpo":
        return torch.where(has, 1.0 / (action_counts.clamp(min=1) * n_rows), zero)
    if loss_type == "bnpo":
        return torch.where(has, zero + 1.0 / max(total_tokens, 1.0), zero)
    if loss_type == "dr_grpo":
        return torch.where(has, zero + 1.0 / (max(max_len, 1.0) * n_rows), zero)
    raise ValueError(f"unknown loss_type {loss_type!r}")


@dataclass(frozen=True)
class Baseline:
    """Each row's baseline in the optimizer batch: A_i = 0 where ``zero``, else
    (R_i − centre_i)/scale_i (``[N]`` tensors; grpo: the group mean and std, max_rl: the group
    mean twice, rae: the running baseline and 1)."""

    centre: torch.Tensor
    scale: torch.Tensor
    zero: torch.Tensor

    def advantages(self, rewards: torch.Tensor, at: torch.Tensor) -> torch.Tensor:
        """A of rows with ``rewards`` whose baselines sit at positions ``at``."""
        at = at.to(self.centre.device)
        centre, scale, zero = self.centre[at], self.scale[at], self.zero[at]
        adv = (rewards - centre.to(rewards)) / scale.to(rewards)
        return torch.where(zero.to(rewards.device), torch.zeros_like(adv), adv)


def _world(group: object) -> int:
    import torch.distributed as dist

    return int(dist.get_world_size(None if group is True else group))  # type: ignore[arg-type]


@dataclass
class SurrogateOut:
    """Coefficients of the clipped surrogate and the sums the stats report about them.

    The sums run over the live action tokens (``on``): tokens whose clipped branch won on a
    row with A ≠ 0, Σ ρ, and Σ KL_k3 (None when β = 0).
    """

    coefficients: torch.Tensor  # [B, T]
    admitted: torch.Tensor  # [B] bool, a coefficient ≠ 0 is left
    clipped: int
    ratio_sum: float
    kl_sum: float | None
    reference_term: torch.Tensor | None = None  # [B, T] −β w (1 − r), the KL part of c
    finite: bool = True  # every coefficient is finite


def _masked_sum(x: torch.Tensor, keep: torch.Tensor, keep_f: torch.Tensor) -> float:
    """Σ x over ``keep``: a dot product with the 0/1 mask ``keep_f`` (one pass, no temporary);
    when that is not finite (∞ · 0 off ``keep``, or ∞ on it), the ``where`` sum decides."""
    total = float(torch.dot(x.reshape(-1), keep_f.reshape(-1)))
    if math.isfinite(total):
        return total
    return float(torch.where(keep, x, 0.0).sum())


def _surrogate_block(
    logprobs: torch.Tensor,
    behavior_logprobs: torch.Tensor | None,
    ref_logprobs: torch.Tensor | None,
    action: torch.Tensor,
    a: torch.Tensor,
    w: torch.Tensor,
    live: torch.Tensor,
    bounds: tuple[torch.Tensor, torch.Tensor],
    beta: float,
    out: torch.Tensor,
    ref_out: torch.Tensor | None,
    work: Workspace,
    action_counts: torch.Tensor,
    token_advantages: torch.Tensor | None,
) -> tuple[torch.Tensor, int, float, float | None, bool]:
    """c = w g − β w (1 − r) on a block of rows, written into ``out`` (``a``, ``w``: [b, 1]).

    ρ = exp(log π_θ − log μ), unclamped (1 without behaviour log-probs), computed in ``out``
    and turned into c there. The branch test is a per-row interval for ρ,
    ``bounds = (upper, lower)``: (−∞, 1 + ε] when A > 0, [1 − ε, ∞) when A < 0, empty when
    A = 0 (g = 0, kept exactly 0 even for an overflowed ρ). The k3 term:
    r = exp(log π_ref − log π_θ), d/d log π_θ (r − log r − 1) = 1 − r. Returns admitted and
    the block's clipped-token count, Σ ρ and Σ KL_k3 over live action tokens. With β > 0 the
    KL part −β w (1 − r) (0 off the action tokens) is also written into ``ref_out``, and
    A on the action tokens (0 elsewhere) into ``token_advantages`` when given. The last
    value says whether every coefficient of the block is finite, decided while it is hot.
    ``action_counts`` holds each row's action tokens; temporaries come from ``work``.
    """
    dtype, device, shape = logprobs.dtype, logprobs.device, tuple(logprobs.shape)
    action_f = as_float(action, dtype, work.take("action_f", shape, dtype, device))
    if token_advantages is not None:
        torch.mul(action_f, a, out=token_advantages)  # A is finite: the product is exact
    on, on_f = action, action_f  # live action tokens
    if not bool(live.all()):
        on = action & live[:, None]
        on_f = torch.mul(
            action_f, as_float(live, dtype)[:, None], out=work.take("on_f", shape, dtype, device)
        )
    if behavior_logprobs is None:
        ratio = out.fill_(1.0)
    else:
        ratio = exp_(torch.sub(logprobs, behavior_logprobs, out=out))
    upper, lower = bounds
    keep = compare(ratio, "<=", upper, out=work.take("keep", shape, torch.bool, device))
    flag = work.take("flag", shape, torch.bool, device)
    keep.logical_and_(compare(ratio, ">=", lower, out=flag)).logical_and_(action)
    lost = action_counts - row_counts(keep)  # action tokens on the clipped branch
    clipped = int(lost[live & (a[:, 0] != 0)].sum())  # counted on live rows with A ≠ 0
    if on is not action:  # a row without a loss gets c = 0, an overflowed ρ there too
        keep.logical_and_(on)
    ratio_sum = _masked_sum(ratio, on, on_f)
    wg = ratio.mul_(a).mul_(w)  # w (ρA), in place; g = ρA where keep
    finite = all_finite(wg)
    if finite:  # 0 + the 0/1 product: exact, and −0 → +0
        keep_f = as_float(keep, dtype, work.take("keep_f", shape, dtype, device))
        c = torch.addcmul(wg.new_zeros(()), wg, keep_f, out=wg)
    else:  # an overflowed ρ, or junk in the padding
        c = wg.masked_fill_(~keep, 0.0).add_(0.0)
        finite = all_finite(c)
    kl_sum = None
    if beta > 0:
        assert ref_logprobs is not None and ref_out is not None
        log_r = torch.sub(ref_logprobs, logprobs, out=work.take("log_r", shape, dtype, device))
        r = torch.exp(log_r, out=work.take("r", shape, dtype, device))
        term = torch.neg(r, out=ref_out).add_(1).mul_(-beta * w)  # − β w (1 − r)
        if all_finite(term):
            term.mul_(action_f)
        else:
            term.masked_fill_(~action, 0.0)
        c.add_(term.add_(0.0)).add_(0.0)  # −0 → +0: exactly 0 off the kept tokens
        kl = r.sub_(log_r).sub_(1)  # r − log r − 1
        kl_sum = _masked_sum(kl, on, on_f)
        finite = all_finite(c)
    return any_rows(compare(c, "!=", 0.0, out=flag)), clipped, ratio_sum, kl_sum, finite


def surrogate_coefficients(
    *,
    logprobs: torch.Tensor,
    behavior_logprobs: torch.Tensor | None,
    ref_logprobs: torch.Tensor | None,
    action_mask: torch.Tensor,
    advantages: torch.Tensor,
    weights: torch.Tensor,
    live: torch.Tensor,
    clip: float,
    beta: float,
    out: torch.Tensor | None = None,
    compiled: Compiled | None = None,
    work: Workspace | None = None,
    token_advantages: torch.Tensor | None = None,
    action_counts: torch.Tensor | None = None,
) -> SurrogateOut:
    """c = w_i g − β w_i (1 − r) on action tokens of live rows, exactly 0 elsewhere.

    ``live [B]`` is False for rows that get no gradient (``--truncated mask``). On CPU the
    rows are processed in blocks (:func:`~whilecli.methods.fastmath.row_blocks`). The
    coefficients are written into ``out`` (``logprobs``' shape and dtype) when given. With
    ``compiled`` (the method's ``compile=True``), or off the CPU, the plain function
    :func:`clipped_surrogate_reference` runs instead of the row blocks.
    ``token_advantages``, when given, receives A on the action tokens and 0 elsewhere.
    ``action_counts``, the action tokens of each row (``batch.action_counts``), saves
    counting them again.
    """
    if compiled is not None or logprobs.device.type != "cpu":
        if token_advantages is not None:  # A is finite: the product is exact
            as_float(action_mask, token_advantages.dtype, token_advantages)
            token_advantages.mul_(advantages[:, None])
        c, term, admitted, clipped, r_sum, k_sum = plain_path(
            compiled,
            clipped_surrogate_reference,
            logprobs.detach(),
            None if behavior_logprobs is None else behavior_logprobs.detach(),
            None if ref_logprobs is None else ref_logprobs.detach(),
            action_mask,
            advantages,
            torch.where(live, weights, 0.0),
            clip,
            beta,
            live,
        )
        return SurrogateOut(
            coefficients=c if out is None else out.copy_(c),
            admitted=admitted,
            clipped=int(clipped),
            ratio_sum=float(r_sum),
            kl_sum=None if k_sum is None else float(k_sum),
            reference_term=term,
            finite=all_finite(c),
        )
    w = torch.where(live, weights, 0.0)[:, None]
    a = advantages[:, None]
    # the branch test as a per-row interval for ρ (see _surrogate_block)
    # Bounds in the advantages' dtype: torch.where on two Python floats would give float32,
    # and 1.2 in float32 is 1.2000000476837158, which moves the clip edge off 1 ± ε.
    inf = torch.full_like(a, torch.inf)
    upper = torch.where(a > 0, torch.full_like(a, 1 + clip), torch.where(a < 0, inf, -inf))
    lower = torch.where(a < 0, torch.full_like(a, 1 - clip), -inf)
    lp = logprobs.detach()
    blp = None if behavior_logprobs is None else behavior_logprobs.detach()
    ref = None if ref_logprobs is None else ref_logprobs.detach()
    work = Workspace() if work is None else work
    coef = torch.empty_like(lp) if out is None else out
    ref_term = torch.empty_like(lp) if beta > 0 else None
    admitted = torch.empty_like(live)
    counts = row_counts(action_mask) if action_counts is None else action_counts.long()
    clipped, ratio_sum, kl_sum, finite = 0, 0.0, 0.0, True
    for rows in row_blocks(lp):
        admitted[rows], n_clipped, r_sum, k_sum, block_finite = _surrogate_block(
            lp[rows],
            None if blp is None else blp[rows],
            None if ref is None else ref[rows],
            action_mask[rows],
            a[rows],
            w[rows],
            live[rows],
            (upper[rows], lower[rows]),
            beta,
            coef[rows],
            None if ref_term is None else ref_term[rows],
            work,
            counts[rows],
            None if token_advantages is None else token_advantages[rows],
        )
        clipped += n_clipped
        ratio_sum += r_sum
        kl_sum += k_sum or 0.0
        finite = finite and block_finite
    return SurrogateOut(
        coefficients=coef,
        admitted=admitted,
        clipped=clipped,
        ratio_sum=ratio_sum,
        kl_sum=kl_sum if beta > 0 else None,
        reference_term=ref_term,
        finite=finite,
    )


WEIGHT_TEXT = {
    "grpo": "w_i = 1/(T_i B)",
    "bnpo": "w_i = 1/Σ_j T_j",
    "dr_grpo": "w_i = 1/(L_max B)",
}


def knob_error(method: str, knob: str, default: Any, value: Any, rule: str) -> UsageError:
    """The one-line refusal of a knob: its name, the rule, its default and the value."""
    return UsageError(
        f"{method}: {knob} must be {rule} (default {default!r}), got {value!r}", knob=knob
    )


def number_knob(method: str, knob: str, default: float | None, value: Any) -> float:
    """``value`` as a float, refusing a bool, a string or anything else not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise knob_error(method, knob, default, value, "a number")
    return float(value)


class ClippedPolicyGradient(TwoStep):
    """Shared engine: advantages from :meth:`_advantages`, then the clipped surrogate.

    ``update`` returns c = w_i g − β w_i (1 − r) on the action tokens of live rows; with
    ``truncated="mask"`` a truncated row keeps its place in the statistics and gets c = 0,
    with ``"zero"`` its reward is read as 0 before them. B and L_max count every row of the
    (global) batch; bnpo's Σ_j T_j leaves out the rows that carry no loss (TRL, verl).
    """

    name: ClassVar[str] = "grpo"
    needs = Needs()

    def __init__(
        self,
        loss_type: str = "grpo",
        clip: float = CLIP.default,
        beta: float = BETA.default,
        max_len: int | None = None,
        truncated: str = "mask",
        compile: bool = False,
    ) -> None:
        m = self.name
        self._compiled = Compiled(clipped_surrogate_reference) if compile else None
        self._work = Workspace()
        if loss_type not in LOSS_TYPES:
            raise knob_error(m, "loss_type", "grpo", loss_type, f"one of {', '.join(LOSS_TYPES)}")
        clip = CLIP.check(clip, f"{m}: clip")
        beta = BETA.check(beta, f"{m}: beta")
        if max_len is not None and (
            isinstance(max_len, bool) or not isinstance(max_len, int) or max_len < 1
        ):
            raise knob_error(m, "max_len", None, max_len, "an integer ≥ 1 or None")
        if truncated not in ("mask", "zero"):
            raise knob_error(m, "truncated", "mask", truncated, "'mask' or 'zero'")
        self.loss_type, self.clip, self.beta = loss_type, clip, beta
        self.max_len, self.truncated = max_len, truncated
        if beta > 0:  # the k3 term reads the reference's log-probs
            self.needs = type(self).needs | Needs(
                fields=("ref_logprobs",), logprobs=("ref_logprobs",)
            )

    def _labels(self, batch: Batch) -> dict[str, list[str]]:
        """Per-row string keys gathered with the rewards (task ids, agents)."""
        raise NotImplementedError

    def _advantages(
        self, rewards: torch.Tensor, labels: dict[str, list[str]]
    ) -> tuple[Baseline, dict[str, float], list[str]]:
        """A_i = 0 where ``zero``, else (R_i − centre_i)/scale_i, for every row of the global
        batch (:class:`Baseline`), with stats and notes."""
        raise NotImplementedError

    #: Whether a row's baseline is found by its task id (grpo, max_rl) or by its position (rae).
    by_task: ClassVar[bool] = True

    def reduce(self, batch: Batch, group: object | None = None) -> BatchStats:
        """The group statistics, B, Σ_j T_j and L_max of the optimizer batch.

        ``group``: a ``torch.distributed`` process group; the rows of every rank are
        gathered, so each rank's coefficients equal those of the concatenated global batch.
        """
        m = self.name
        trunc = truncated_rows(batch)
        rewards = batch.rewards
        if self.truncated == "zero":
            rewards = torch.where(trunc, torch.zeros_like(rewards), rewards)
        counts = batch.action_counts
        rows, labels, offset = gather_rows(
            group,
            {"reward": rewards, "truncated": trunc, "count": counts},
            self._labels(batch),
        )
        base, stats, notes = self._advantages(rows["reward"], labels)
        n_rows = int(rows["reward"].shape[0])
        total = float(rows["count"].sum())
        # bnpo's Σ_j T_j: the tokens that carry a loss (TRL, verl); B counts every row
        carrying = rows["count"]
        if self.truncated == "mask":
            carrying = torch.where(rows["truncated"], torch.zeros_like(carrying), carrying)
        loss_tokens = float(carrying.sum())
        longest = float(rows["count"].max())
        max_len = float(self.max_len) if self.max_len is not None else longest
        keys: dict[str, int] = {}
        if self.by_task:
            for j, task in enumerate(labels["task"]):
                keys.setdefault(task, j)
        stats["loss_tokens_global"] = loss_tokens
        stats["rows_global"] = float(n_rows)
        stats["action_tokens_global"] = total
        heading = (
            f"{self.name} with loss_type {self.loss_type}: {WEIGHT_TEXT[self.loss_type]}, "
            f"B = {n_rows}, ε = {self.clip}."
        )
        return BatchStats(
            method=m,
            rows=n_rows,
            action_tokens=total,
            local_rows=batch.size,
            values={
                "baseline": base,
                "keys": keys,
                "loss_tokens": loss_tokens,
                "longest": longest,
                "max_len": max_len,
            },
            stats=stats,
            notes=(heading, *notes),
            ranks=1 if group is None else _world(group),
            offset=offset,
        )

    def _baseline_rows(self, batch: Batch, stats: BatchStats) -> torch.Tensor:
        """The positions in ``stats``' baseline of the rows of ``batch``."""
        if not self.by_task:
            return stats.positions(batch)
        keys: dict[str, int] = stats.values["keys"]
        tasks = self._labels(batch)["task"]
        missing = [t for t in tasks if t not in keys]
        if missing:
            raise refuse_unknown_tasks(self.name, missing)
        return torch.tensor([keys[t] for t in tasks], dtype=torch.long).to(batch.rewards.device)

    def advantages(self, batch: Batch, stats: BatchStats) -> torch.Tensor:
        """A_i ``[b]`` of the rows of ``batch`` under the optimizer batch's ``stats``."""
        self._check(stats)
        rewards = batch.rewards
        if self.truncated == "zero":
            trunc = truncated_rows(batch)
            rewards = torch.where(trunc, torch.zeros_like(rewards), rewards)
        base: Baseline = stats.values["baseline"]
        return base.advantages(rewards, self._baseline_rows(batch, stats))

    def per_token(self, micro_batch: Batch, stats: BatchStats, *, out: Update | None) -> Update:
        """Per-token coefficients of the clipped surrogate for ``micro_batch``, with the group
        statistics, B, Σ_j T_j and L_max of the optimizer batch in ``stats``.

        ``out``, a previous :class:`Update`, has its tensors overwritten when their shapes
        match; otherwise new ones are returned.
        """
        batch = micro_batch
        trunc = truncated_rows(batch)
        adv = self.advantages(batch, stats)
        counts = batch.action_counts
        n_rows = stats.rows
        loss_tokens = float(stats.values["loss_tokens"])
        longest = float(stats.values["longest"])
        max_len = float(stats.values["max_len"])
        weights = length_weights(
            self.loss_type, counts, n_rows=n_rows, total_tokens=loss_tokens, max_len=max_len
        )
        live = ~trunc if self.truncated == "mask" else torch.ones_like(trunc)
        lp = batch.logprobs
        advantages = reuse(out, "advantages", lp.shape, lp.dtype, lp.device)
        sur = surrogate_coefficients(
            logprobs=batch.logprobs,
            behavior_logprobs=batch.behavior_logprobs,
            ref_logprobs=batch.ref_logprobs,
            action_mask=batch.action_mask,
            advantages=adv,
            weights=weights,
            live=live,
            clip=self.clip,
            beta=self.beta,
            out=reuse(out, "coefficients", lp.shape, lp.dtype, lp.device),
            compiled=self._compiled,
            work=self._work,
            token_advantages=advantages,
            action_counts=counts,
        )
        c = sur.coefficients  # not finite where ρ overflowed: refused after any correction
        admitted = sur.admitted
        own = self._common_stats(batch, sur, trunc, live, counts, n_rows, stats.action_tokens)
        own["loss_tokens_global"] = loss_tokens
        notes = self._common_notes(counts, trunc, longest, max_len, {**stats.stats, **own})
        return PolicyGradientUpdate(
            coefficients=c,
            advantages=advantages,
            admitted=admitted,
            stats=own,
            notes=notes + compile_note(self._compiled),
            ratio_clamp=math.inf,
            reference_term=sur.reference_term,
            row_scale=torch.where(live, weights, 0.0),
            finite=sur.finite,
        )

    def _common_stats(
        self,
        batch: Batch,
        out: SurrogateOut,
        trunc: torch.Tensor,
        live: torch.Tensor,
        counts: torch.Tensor,
        n_rows: int,
        total: float,
    ) -> dict[str, float]:
        n_on = int(counts[live].sum())
        clipped = out.clipped
        stats = {
            "rows": float(batch.size),
            "rows_global": float(n_rows),
            "action_tokens_global": total,
            "admitted_rows": float(out.admitted.sum()),
            "truncated_rows": float(trunc.sum()),
            "clipped_tokens": float(clipped),
            "clipped_share": clipped / n_on if n_on else 0.0,
            "ratio_mean": out.ratio_sum / n_on if n_on else 1.0,
        }
        if out.kl_sum is not None:
            stats["kl_k3_mean"] = out.kl_sum / n_on if n_on else 0.0
        return stats

    def _common_notes(
        self,
        counts: torch.Tensor,
        trunc: torch.Tensor,
        longest: float,
        max_len: float,
        stats: Mapping[str, float | None],
    ) -> list[str]:
        notes: list[str] = []
        k = int(trunc.sum())
        if k and self.truncated == "mask":
            notes.append(
                f"c = 0 for {count(k, 'truncated row')}, kept in the statistics (--truncated mask)."
            )
        elif k:
            notes.append(
                f"reward 0 for {count(k, 'truncated row')} before the statistics (--truncated zero)."
            )
        if stats["clipped_tokens"]:
            notes.append(
                f"{int(stats['clipped_tokens'])} action tokens (share {fraction(stats['clipped_share'] or 0.0)}) "
                f"fell on the clipped branch of the surrogate (ε = {self.clip}) and get no "
                "policy-gradient term."
            )
        if self.beta > 0:
            notes.append(
                f"KL to the reference by the k3 estimator r − log r − 1, r = π_ref/π_θ "
                f"(β = {self.beta}), adding −β w_i (1 − r) to c."
            )
        empty = int((counts == 0).sum())
        if empty:
            notes.append(f"c = 0 for {count(empty, 'row')} without an action token.")
        if self.loss_type == "dr_grpo" and self.max_len is None:
            notes.append(
                f"L_max defaulted to the longest row ({int(longest)} action tokens); trainers "
                "use the generation cap (TRL, verl): pass --max-len = your max_tokens."
            )
        if self.loss_type == "bnpo" and self.truncated == "mask" and stats["truncated_rows"]:
            notes.append(
                f"bnpo's Σ_j T_j = {int(stats['loss_tokens_global'] or 0)} leaves out the tokens of "
                "truncated rows, which carry no loss (TRL, verl)."
            )
        if self.loss_type == "dr_grpo" and self.max_len is not None and longest > max_len:
            notes.append(
                f"the longest row has {int(longest)} action tokens, more than max_len "
                f"{int(max_len)}."
            )
        return notes
