"""Batch-global quantities across data-parallel ranks (DESIGN section 5).

A data-parallel trainer gives each rank a slice of the batch. FlashReinforce's mean reward
and B, and SAO's N (action tokens in the batch), belong to the whole batch: with a
``torch.distributed`` process group, :func:`global_sum` all-reduces them so every rank
computes the coefficients of the concatenated global batch. Without a group it is the
identity, so single-process code pays nothing.
"""

from __future__ import annotations

from typing import Any

import torch


def global_sum(values: torch.Tensor, group: Any | None = None) -> torch.Tensor:
    """``values`` summed over the ranks of ``group`` (a copy; the input is left alone).

    ``group`` is a ``torch.distributed`` ProcessGroup, or True for the default group;
    None means one process. The reduction runs in float64 on the tensor's device.
    """
    if group is None:
        return values
    import torch.distributed as dist

    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError("a process group was passed but torch.distributed is not initialized")
    out = values.detach().to(torch.float64).clone()
    dist.all_reduce(out, op=dist.ReduceOp.SUM, group=None if group is True else group)
    return out.to(values.dtype)


def world_note(group: Any | None) -> str | None:
    """A sentence saying the global quantities came from every rank, or None without a group."""
    if group is None:
        return None
    import torch.distributed as dist

    size = dist.get_world_size(None if group is True else group)
    return f"Batch-global quantities were summed over {size} ranks; stats are this rank's."
