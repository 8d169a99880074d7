"""Groups of rows that share a task id and their reward statistics.

A group is the set of rollouts of one task (GRPO, Shao et al. 2024, arXiv:2402.03300).
Statistics are computed with scatter operations over integer group ids, never with a Python
loop over groups or tokens:

    mean_g = Σ_{i∈g} R_i / n_g,    std_g = sqrt(Σ_{i∈g} (R_i − mean_g)² / (n_g − 1)),

and a group is *unanimous* when its rewards are equal within the project's tolerance,
max_g R − min_g R ≤ 1e-9 (:data:`UNANIMOUS_TOLERANCE`; 0.1 + 0.2 and 0.3 are one reward),
decided on the rewards themselves, never on a computed standard deviation near 0, so that a
rounding difference never becomes an advantage of ±1, in any dtype.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import torch

from whilecli.errors import InputError
from whilecli.methods.batch import Batch

SINGLE_ROLLOUT_METHODS = ("flash_reinforce", "sao", "bpco", "rae")

#: Rewards of one group that differ by at most this are one reward: the group is unanimous and
#: every A_i is 0 (the 1e-9 every documented boundary forgives, DESIGN sections 1 and 3).
UNANIMOUS_TOLERANCE = 1e-9


def unanimous_groups(low: torch.Tensor, high: torch.Tensor) -> torch.Tensor:
    """``[G]`` bool: max_g R − min_g R ≤ 1e-9, from each group's least and greatest reward."""
    return (high - low) <= UNANIMOUS_TOLERANCE


def count(n: int, noun: str) -> str:
    """``1 row``, ``3 rows``: a count with its noun in the right number."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


@dataclass(frozen=True)
class GroupStats:
    """Per-group reward statistics; every tensor is ``[G]`` except ``ids`` (``[B]``)."""

    ids: torch.Tensor  # [B] long, the group of each row
    counts: torch.Tensor  # [G] rows per group, batch dtype
    mean: torch.Tensor  # [G]
    std: torch.Tensor  # [G] sample std (n − 1); 0 for a one-row group
    unanimous: torch.Tensor  # [G] bool, rewards within 1e-9 (one-row groups included)

    @property
    def n_groups(self) -> int:
        """G, the number of distinct task ids."""
        return int(self.counts.shape[0])


def group_ids(task_ids: Sequence[str], device: torch.device | str = "cpu") -> torch.Tensor:
    """Integer group ids ``[B]`` numbered by first appearance of each task id.

    Strings are coded to integers in one pass over the rows, then ``torch.unique`` with
    ``return_inverse`` gives dense ids.
    """
    codes: dict[str, int] = {}
    raw = [codes.setdefault(t, len(codes)) for t in task_ids]
    code = torch.tensor(raw, dtype=torch.long, device=device)
    _, inverse = torch.unique(code, return_inverse=True)
    return inverse


def group_stats(rewards: torch.Tensor, ids: torch.Tensor) -> GroupStats:
    """Mean, sample std, counts and unanimity of ``rewards [B]`` per group ``ids [B]``."""
    n_groups = int(ids.max().item()) + 1 if ids.numel() else 0
    dtype, device = rewards.dtype, rewards.device
    counts = torch.zeros(n_groups, dtype=dtype, device=device).index_add_(
        0, ids, torch.ones_like(rewards)
    )
    sums = torch.zeros(n_groups, dtype=dtype, device=device).index_add_(0, ids, rewards)
    mean = sums / counts
    dev = rewards - mean[ids]
    sq = torch.zeros(n_groups, dtype=dtype, device=device).index_add_(0, ids, dev * dev)
    denom = (counts - 1).clamp(min=1)
    std = torch.where(counts > 1, (sq / denom).sqrt(), torch.zeros_like(sq))
    hi = torch.full((n_groups,), -torch.inf, dtype=dtype, device=device)
    lo = torch.full((n_groups,), torch.inf, dtype=dtype, device=device)
    hi = hi.scatter_reduce(0, ids, rewards, reduce="amax", include_self=True)
    lo = lo.scatter_reduce(0, ids, rewards, reduce="amin", include_self=True)
    # Σ dev² under- or overflows when the rewards differ by less than ~1e-154 or more than
    # ~1e154: those groups are summed again with the deviations scaled by their largest
    bad = (counts > 1) & (((std == 0) & (hi != lo)) | ~torch.isfinite(std))
    if bool(bad.any()):
        size = torch.zeros_like(sq).scatter_reduce(
            0, ids, dev.abs(), reduce="amax", include_self=True
        )
        unit = torch.where(size > 0, size, torch.ones_like(size))
        scaled = dev / unit[ids]
        sq_scaled = torch.zeros_like(sq).index_add_(0, ids, scaled * scaled)
        std = torch.where(bad, unit * (sq_scaled / denom).sqrt(), std)
    return GroupStats(
        ids=ids, counts=counts, mean=mean, std=std, unanimous=unanimous_groups(lo, hi)
    )


def refuse_all_singletons(stats: GroupStats, method: str) -> None:
    """Refuse a batch in which every task has one row: its grouped advantages are all 0."""
    if stats.n_groups and bool((stats.counts == 1).all()):
        names = ", ".join(SINGLE_ROLLOUT_METHODS)
        raise InputError(
            f"{method} needs at least 2 rows per task, and every one of the {stats.n_groups} "
            f"tasks in this batch has one row, so every advantage would be 0; use a "
            f"single-rollout method ({names}) or sample more rollouts per task",
            row=0,  # located at the first row, the first of the one-row tasks
            field="task_id",
        )


def truncated_rows(batch: Batch) -> torch.Tensor:
    """``[B]`` bool: the row was cut at the token cap (a missing field reads as False)."""
    if batch.truncated is None:
        return torch.zeros(batch.size, dtype=torch.bool, device=batch.rewards.device)
    return batch.truncated.to(device=batch.rewards.device, dtype=torch.bool)


def gather_rows(
    group: object | None,
    tensors: dict[str, torch.Tensor],
    labels: dict[str, list[str]],
) -> tuple[dict[str, torch.Tensor], dict[str, list[str]], int]:
    """The per-row columns of the whole data-parallel batch, and this rank's first row.

    Without a process group the columns come back as given with offset 0. With one (or True
    for the default group), every
    rank's rows are gathered in rank order (``torch.distributed.all_gather_object``), so the
    statistics of a group split across ranks are those of the concatenated global batch;
    the caller keeps rows ``offset … offset + B − 1`` of what it computes.
    """
    if group is None:
        return tensors, labels, 0
    import torch.distributed as dist

    pg = None if group is True else cast("dist.ProcessGroup", group)

    payload = {
        "t": {k: v.detach().cpu().tolist() for k, v in tensors.items()},
        "l": {k: list(v) for k, v in labels.items()},
    }
    world = dist.get_world_size(pg)
    slots: list[dict[str, Any] | None] = [None] * world
    dist.all_gather_object(slots, payload, group=pg)
    gathered = cast("list[dict[str, Any]]", slots)  # every slot filled by its rank
    rank = dist.get_rank(pg)
    first = next(iter(tensors.values()))
    offset = sum(len(next(iter(g["t"].values()))) for g in gathered[:rank])
    out_t = {
        k: torch.tensor(
            [x for g in gathered for x in g["t"][k]],
            dtype=v.dtype,
            device=first.device,
        )
        for k, v in tensors.items()
    }
    out_l = {k: [x for g in gathered for x in g["l"][k]] for k in labels}
    return out_t, out_l, offset


def ema_baselines(
    rewards: torch.Tensor,
    ids: torch.Tensor,
    start: torch.Tensor,
    decay: float,
    block: int = 128,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The running baseline each row reads, and each key's baseline after the last row.

    Rows in order, per key k = ``ids[i]``: the row reads b_k, then b_k ← d·b_k + (1 − d)·R_i
    (SPIRAL's role-conditioned baseline, arXiv:2506.24119). Closed form over the n-th row
    of a key, within a block that starts at row s of that key with baseline b_s:

        b_n = d^(n−s) b_s + (1 − d) Σ_{s ≤ j < n} d^(n−1−j) R_j,

    a lower-triangular matrix product per block, so only non-negative powers of d occur.
    The loop runs over blocks of ``block`` rows per key, never over rows or tokens.
    Returns ``(before [N], final [K])`` with K = ``start.shape[0]``.
    """
    n_keys = int(start.shape[0])
    dtype, device = rewards.dtype, rewards.device
    n = int(rewards.shape[0])
    counts = torch.bincount(ids, minlength=n_keys)
    order = torch.sort(ids, stable=True).indices
    first = torch.cumsum(counts, 0) - counts
    pos = torch.empty_like(ids)
    pos[order] = torch.arange(n, device=device) - first[ids[order]]
    width = int(counts.max().item()) + 1 if n else 1
    width = -(-width // block) * block
    grid = torch.zeros(n_keys, width, dtype=dtype, device=device)
    grid[ids, pos] = rewards
    k = torch.arange(block, device=device, dtype=dtype)
    expo = k[:, None] - 1 - k[None, :]
    tri = torch.where(expo >= 0, decay ** expo.clamp(min=0), torch.zeros_like(expo))
    lead = decay**k  # d^(n−s) for the rows of a block
    tail = decay ** (block - 1 - k)  # weights of a block's rewards in the next block's start
    before = torch.empty_like(grid)
    b = start.to(dtype=dtype, device=device).clone()
    for s in range(0, width, block):
        r = grid[:, s : s + block]
        before[:, s : s + block] = lead[None, :] * b[:, None] + (1 - decay) * (r @ tri.T)
        b = decay**block * b + (1 - decay) * (r @ tail)
    return before[ids, pos], before[torch.arange(n_keys, device=device), counts]
