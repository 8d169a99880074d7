"""Skip-observation GAE over action tokens, vectorised (SAO and BPCO).

Over the ``L`` action tokens of one trajectory, in order, with ``r_k = R`` on the last one
and 0 before it, ``V`` the critic's value at that token and ``V = 0`` past the end
(Hou et al. 2026, Eq. 4-5; Qi et al. 2026, Eq. 3-4, 14; γ = 1):

    δ_k = r_k + V_{k+1} − V_k,        A_k = δ_k + λ A_{k+1},        λ = max(0, 1 − 1/(α L)).

Observation tokens (``action_mask`` false) are skipped: the bootstrap is the next *action*
token's value and their own advantage is 0.

:func:`skip_observation_gae_reference` writes the recursion in plain torch, one step per
column (T steps of Python: the reference the tests hold the fast form to, not a path the
methods take). The methods' form has no Python loop over tokens: action tokens are packed to the left of each row with a scatter,
``A_k = λ^{−k} Σ_{j≥k} λ^j δ_j`` is a reversed cumulative sum of scaled terms, and the result
is gathered back. ``λ^{L−1} ≈ e^{−1/α}`` keeps the scaling well inside float64's range for
any sensible α; when ``λ^L`` would still underflow (tiny α, ``λ`` near 0) the packed axis is
cut into chunks short enough that it cannot, and the chunks are joined by their carries.
The recursion is evaluated in float64 whatever the batch dtype.
"""

from __future__ import annotations

import math

import torch

from whilecli.methods.batch import Batch, Update, reuse
from whilecli.methods.fastmath import Workspace, as_float, exp_, row_blocks, row_counts


def skip_observation_gae_reference(
    reward: torch.Tensor, values: torch.Tensor, action_mask: torch.Tensor, lam: torch.Tensor
) -> torch.Tensor:
    """A ``[B, T]``: δ_k = r_k + V(a_{k+1}) − V(a_k), A_k = δ_k + λ A_{k+1} (γ = 1), over the
    action tokens of each row in reverse; r = R on the last action token; V = 0 past the end;
    observation tokens get 0 and are skipped. One step per column, every row at once."""
    B, T = action_mask.shape
    next_value = torch.zeros_like(reward)  # V(a_{k+1}), 0 past the end
    next_adv = torch.zeros_like(reward)  # A_{k+1}
    seen = torch.zeros_like(action_mask[:, 0])  # an action token after this one
    columns = []
    for t in reversed(range(T)):
        act = action_mask[:, t]
        r = torch.where(act & ~seen, reward, 0.0)  # R on the last action token
        delta = r + next_value - values[:, t]  # Eq. 4
        adv = delta + lam * next_adv  # Eq. 5
        columns.append(torch.where(act, adv, 0.0))
        next_value = torch.where(act, values[:, t], next_value)
        next_adv = torch.where(act, adv, next_adv)
        seen = seen | act
    return torch.stack(columns[::-1], dim=1)


#: Smallest power of λ a chunk may reach; far above float64's underflow.
_MIN_POWER = 1e-200


def gae_lambda(action_counts: torch.Tensor, alpha: float) -> torch.Tensor:
    """λ_i = max(0, 1 − 1/(α L_i)) per trajectory (length-adaptive GAE); 0 where L_i = 0."""
    lengths = action_counts.to(torch.float64)
    lam = 1.0 - 1.0 / (alpha * lengths.clamp(min=1.0))
    return torch.where(lengths > 0, lam.clamp(min=0.0), torch.zeros_like(lam))


def _scaled_reverse_cumsum(delta: torch.Tensor, lam: torch.Tensor) -> torch.Tensor:
    """``A_k = Σ_{j≥k} λ^{j−k} δ_j`` along dim 1 for ``λ > 0`` (rows where λ = 0 give δ)."""
    b, length = delta.shape
    zero = lam <= 0
    any_zero = bool(zero.any())
    log_lam = (
        torch.log(torch.where(zero, torch.ones_like(lam), lam)) if any_zero else torch.log(lam)
    )
    min_log = float(log_lam.min()) if b else 0.0
    chunk = length if min_log == 0.0 else max(1, int(math.log(_MIN_POWER) / min_log))
    if chunk >= length:  # one pass: λ^{L−1} stays far above underflow
        steps = torch.arange(length, device=delta.device, dtype=delta.dtype)
        exponent = steps[None, :] * log_lam[:, None]
        out = (delta * exponent.exp()).flip(1).cumsum(1).flip(1) * exponent.neg_().exp_()
    else:
        out = torch.empty_like(delta)
        carry = torch.zeros(b, dtype=delta.dtype, device=delta.device)
        for end in range(length, 0, -chunk):
            start = max(0, end - chunk)
            steps = torch.arange(end - start, device=delta.device, dtype=delta.dtype)
            w = torch.exp(steps[None, :] * log_lam[:, None])  # λ^{j−start}
            suffix = (delta[:, start:end] * w).flip(1).cumsum(1).flip(1) / w
            tail = torch.exp((end - start - steps)[None, :] * log_lam[:, None])  # λ^{end−j}
            block = suffix + tail * carry[:, None]
            out[:, start:end] = block
            carry = block[:, 0]
    return torch.where(zero[:, None], delta, out) if any_zero else out


def _gae_block(
    rewards: torch.Tensor,
    values: torch.Tensor,
    action_mask: torch.Tensor,
    lam: torch.Tensor,
    out: torch.Tensor,
    work: Workspace,
    counts: torch.Tensor | None = None,
) -> None:
    """Skip-observation GAE on a block of rows into ``out``, in float64 (see
    :func:`skip_observation_gae`); ``counts`` (each row's action tokens) is computed when
    not given.

    Action tokens are packed last-first into columns ``1 … L`` of a ``[b, L + 2]`` buffer
    (column 0 is the V = 0 past the end, column ``L + 1`` the dump for every other token);
    the advantages are computed in place in a second such buffer and gathered back.
    """
    b, t = action_mask.shape
    f64 = torch.float64
    device = values.device
    counts = row_counts(action_mask) if counts is None else counts.long()
    length = int(counts.max()) if b else 0
    if length == 0:
        out.zero_()
        return
    # the k-th action token (1-based) goes to column L + 1 − k; every other token to L + 1
    slot = work.take("gae_slot", (b, t), torch.int64, device)
    torch.cumsum(action_mask, dim=1, out=slot)
    slot.mul_(action_mask).neg_().add_(length + 1)
    packed = work.take("gae_packed", (b, length + 2), f64, device).zero_()
    packed.scatter_(1, slot, values if values.dtype == f64 else values.to(f64))
    acc = work.take("gae_acc", (b, length + 2), f64, device)
    acc[:, length + 1] = 0.0  # observations and padding get A = 0
    # δ_k = r_k + V_{k+1} − V_k; zero past each row's end since V and r are zero there
    delta = torch.sub(packed[:, :length], packed[:, 1 : length + 1], out=acc[:, 1 : length + 1])
    # r on the last action token, column L − T_i; a row without one adds 0 to column L − 1
    last = (length - counts).clamp_(max=length - 1)[:, None]
    delta.scatter_add_(1, last, (rewards.to(f64) * (counts > 0))[:, None])
    _reversed_scaled_cumsum_(delta, lam.to(f64), work)
    if out.dtype == f64:
        torch.gather(acc, 1, slot, out=out)
    else:
        out.copy_(acc.gather(1, slot))


def _reversed_scaled_cumsum_(delta: torch.Tensor, lam: torch.Tensor, work: Workspace) -> None:
    """:func:`_scaled_reverse_cumsum` in place for ``delta`` stored last action first, its
    weights in ``work``.

    Column ``p`` holds packed index ``j = L − 1 − p``; the suffix sums over ``j ≥ k`` become
    prefix sums over ``p``, added in the same order as the flipped forward layout, without
    the two flips; the scaling back is a division by λ^k (the same value up to rounding).
    """
    b, length = delta.shape
    zero = lam <= 0
    any_zero = bool(zero.any())
    log_lam = torch.log(torch.where(zero, torch.ones_like(lam), lam)) if any_zero else lam.log()
    min_log = float(log_lam.min()) if b else 0.0
    if min_log != 0.0 and max(1, int(math.log(_MIN_POWER) / min_log)) < length:
        delta.copy_(_scaled_reverse_cumsum(delta.flip(1), lam).flip(1))  # λ^L underflows
        return
    kept = delta[zero] if any_zero else None  # rows with λ = 0: A = δ
    steps = torch.arange(length - 1, -1, -1, device=delta.device, dtype=delta.dtype)
    w = work.take("gae_w", (b, length), delta.dtype, delta.device)
    exp_(torch.mul(steps[None, :], log_lam[:, None], out=w))  # λ^j, j = L − 1 … 0
    delta.mul_(w).cumsum_(1).div_(w)
    if kept is not None:
        delta[zero] = kept


def skip_observation_gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    action_mask: torch.Tensor,
    lam: torch.Tensor,
    *,
    out: torch.Tensor | None = None,
    work: Workspace | None = None,
    counts: torch.Tensor | None = None,
) -> torch.Tensor:
    """Advantages ``[B, T]`` on action tokens (0 elsewhere), γ = 1, reward on the last action.

    ``rewards`` is ``[B]``, ``values`` and ``action_mask`` ``[B, T]``, ``lam`` ``[B]`` (see
    :func:`gae_lambda`). Returned in the dtype of ``values``, in ``out`` when given. Rows are
    independent: on CPU they are processed in blocks of
    :func:`~whilecli.methods.fastmath.row_blocks`, with temporaries from ``work``.
    ``counts``, the action tokens of each row, is computed when not given.
    """
    lam = lam.to(values.device)
    rewards, values = rewards.detach(), values.detach()  # a critic's values may carry a graph
    work = Workspace() if work is None else work
    out = torch.empty_like(values) if out is None else out
    counts = row_counts(action_mask) if counts is None else counts
    for rows in row_blocks(values):
        _gae_block(
            rewards[rows], values[rows], action_mask[rows], lam[rows], out[rows], work, counts[rows]
        )
    return out


def action_returns(
    rewards: torch.Tensor, mask: torch.Tensor, *, out: torch.Tensor | None = None
) -> torch.Tensor:
    """Value targets with γ = λ_V = 1: the return ``R`` on every token of the trajectory.

    Observation tokens carry the next action token's return and trailing ones the last action
    token's; with γ = 1 all of them equal ``R`` (Hou et al. 2026; Qi et al. 2026, Eq. 11).
    Written into ``out`` (a ``[B, T]`` tensor of ``rewards``' dtype) when given.
    """
    if out is None:
        return as_float(mask, rewards.dtype).mul_(rewards[:, None])
    return as_float(mask, rewards.dtype, out).mul_(rewards[:, None])


def critic_outputs(
    batch: Batch, values: torch.Tensor, alpha: float, previous: Update | None, counts: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(coefficients, advantages, value_targets, λ)`` for SAO and BPCO, uncomputed but λ:
    each tensor ``previous``'s where it fits (:func:`~whilecli.methods.batch.reuse`), else new;
    λ = :func:`gae_lambda` of ``counts`` (``batch.action_counts``) and ``alpha``."""
    shape, device = batch.logprobs.shape, batch.logprobs.device
    coef = reuse(previous, "coefficients", shape, batch.logprobs.dtype, device)
    adv = reuse(previous, "advantages", shape, values.dtype, device)
    targets = reuse(previous, "value_targets", shape, batch.rewards.dtype, device)
    return coef, adv, targets, gae_lambda(counts, alpha)


def critic_block(
    batch: Batch,
    values: torch.Tensor,
    lam: torch.Tensor,
    counts: torch.Tensor,
    rows: slice,
    adv: torch.Tensor,
    targets: torch.Tensor,
    work: Workspace,
) -> None:
    """:func:`skip_observation_gae` into ``adv`` and :func:`action_returns` into ``targets``
    on the block ``rows`` of the batch (CPU), so that a method's own block loop keeps the
    block's data hot. ``lam`` and ``counts`` are per row, ``adv`` and ``targets`` the whole
    outputs."""
    rewards = batch.rewards[rows]
    action = batch.action_mask[rows]
    _gae_block(rewards, values[rows].detach(), action, lam[rows], adv[rows], work, counts[rows])
    action_returns(rewards, batch.mask[rows], out=targets[rows])


def critic_pass(
    batch: Batch,
    values: torch.Tensor,
    alpha: float,
    previous: Update | None,
    work: Workspace,
    counts: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """What SAO and BPCO share before their band or clip: ``(coefficients, advantages,
    value_targets, λ)``, the advantages by :func:`skip_observation_gae` with
    λ = :func:`gae_lambda` of ``alpha``, the value targets by :func:`action_returns`, and the
    coefficients left for the method to write. Each tensor is ``previous``'s where it fits
    (:func:`~whilecli.methods.batch.reuse`), else new. ``counts`` is ``batch.action_counts``
    when the caller has it."""
    counts = batch.action_counts if counts is None else counts
    coef, adv, targets, lam = critic_outputs(batch, values, alpha, previous, counts)
    skip_observation_gae(
        batch.rewards, values, batch.action_mask, lam, out=adv, work=work, counts=counts
    )
    action_returns(batch.rewards, batch.mask, out=targets)
    return coef, adv, targets, lam
