"""The two steps of a method inside a trainer (DESIGN section 3, "Two steps, for a trainer").

A method's arithmetic has batch-global parts (FlashReinforce's mean reward and B, SAO's N, the
grouped methods' group statistics, B, Σ_j T_j and L_max, rae's running baselines, DPO's
pairs) and per-token parts. A trainer that accumulates gradients over micro-batches must
compute the first once per optimizer batch and the second per micro-batch:

>>> stats = method.batch_stats(batch, group=None)           # doctest: +SKIP
>>> for micro in batch.split(4):                            # doctest: +SKIP
...     c = method.coefficients(micro, stats).coefficients
...     (-(c * new_logprobs(micro)).sum()).backward()

``update(batch)`` is the two in one call. Summing the loss over any split of a batch into
micro-batches gives the gradient of the whole batch (the coefficients agree to 1e-12).
``group`` (a ``torch.distributed`` process group, or True for the default one) makes the
statistics those of the batch concatenated over every rank.

A micro-batch made by :meth:`~whilecli.methods.batch.Batch.select` or
:meth:`~whilecli.methods.batch.Batch.split` knows the positions of its rows in the optimizer
batch (``Batch.rows``); the grouped methods find a row's group by its task id, so their
micro-batches may come from anywhere. rae and DPO look their rows up by position.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import torch

from whilecli.errors import InputError, UsageError
from whilecli.methods.batch import Batch, Update
from whilecli.methods.distributed import global_sum


@dataclass(frozen=True)
class BatchStats:
    """The batch-global quantities of one optimizer batch, for :meth:`TwoStep.coefficients`.

    ``rows`` (B) and ``action_tokens`` (Σ_j T_j) count every rank's rows. ``values`` holds
    the method's own quantities (tensors on the batch's device), ``stats`` and ``notes`` what
    the batch-wide step found (every micro-batch's :class:`Update` carries them), ``ranks``
    the world size, ``local_rows`` this rank's rows and ``offset`` their first position in
    the gathered batch.
    """

    method: str
    rows: int
    action_tokens: float
    local_rows: int
    values: Mapping[str, Any] = field(default_factory=dict)
    stats: Mapping[str, float | None] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    ranks: int = 1
    offset: int = 0

    def positions(self, micro: Batch) -> torch.Tensor:
        """The rows of ``micro`` as positions in the gathered optimizer batch, ``[b]`` long.

        A micro-batch without ``rows`` is taken as the whole local batch; one whose size
        differs is refused (build it with ``Batch.select`` or ``Batch.split``).
        """
        device = micro.rewards.device
        if micro.rows is None:
            if micro.size != self.local_rows:
                raise UsageError(
                    f"{self.method}: a micro-batch of {micro.size} rows from an optimizer batch "
                    f"of {self.local_rows} must say which rows it holds; build it with "
                    "Batch.select(rows) or Batch.split(n)"
                )
            return torch.arange(micro.size, device=device) + self.offset
        pos = micro.rows.to(device=device, dtype=torch.long)
        if micro.size and (int(pos.min()) < 0 or int(pos.max()) >= self.local_rows):
            raise UsageError(
                f"{self.method}: micro-batch row {int(pos.max())} is outside the optimizer "
                f"batch of {self.local_rows} rows these stats came from"
            )
        return pos + self.offset


def base_stats(
    method: str,
    batch: Batch,
    group: Any | None,
    *,
    values: Mapping[str, Any] | None = None,
    stats: Mapping[str, float | None] | None = None,
    notes: list[str] | tuple[str, ...] = (),
    offset: int = 0,
) -> BatchStats:
    """B and Σ_j T_j over every rank (one all-reduce under ``group``), with the method's own
    quantities."""
    dtype = torch.float64
    local = torch.stack(
        [
            torch.tensor(float(batch.size), dtype=dtype, device=batch.rewards.device),
            batch.action_mask.sum().to(dtype),
        ]
    )
    total = global_sum(local, group)
    ranks = 1
    if group is not None:
        import torch.distributed as dist

        ranks = dist.get_world_size(None if group is True else group)
    return BatchStats(
        method=method,
        rows=int(total[0]),
        action_tokens=float(total[1]),
        local_rows=batch.size,
        values=dict(values or {}),
        stats=dict(stats or {}),
        notes=tuple(notes),
        ranks=ranks,
        offset=offset,
    )


class TwoStep:
    """``batch_stats`` once per optimizer batch, ``coefficients`` per micro-batch, ``update``
    the two in one call. A method with nothing batch-global keeps the default
    :meth:`batch_stats` (B and Σ_j T_j) and implements :meth:`coefficients`."""

    name: ClassVar[str] = ""

    def batch_stats(self, batch: Batch, group: Any | None = None) -> BatchStats:
        """The batch-global quantities of ``batch`` (all-reduced over ``group``'s ranks)."""
        return base_stats(self.name, batch, group)

    def coefficients(
        self, micro_batch: Batch, stats: BatchStats, *, out: Update | None = None
    ) -> Update:
        """The per-token coefficients of ``micro_batch`` under the optimizer batch's
        ``stats``; ``out``, a previous :class:`Update`, is overwritten when shapes match."""
        raise NotImplementedError

    def update(
        self, batch: Batch, *, group: Any | None = None, out: Update | None = None
    ) -> Update:
        """``coefficients(batch, batch_stats(batch, group))``: the whole batch in one call
        (a micro-batch handed here is an optimizer batch of its own)."""
        whole = batch if batch.rows is None else replace(batch, rows=None)
        return self.coefficients(whole, self.batch_stats(whole, group), out=out)

    def _check(self, stats: BatchStats) -> None:
        if not isinstance(stats, BatchStats):
            raise UsageError(
                f"{self.name}: coefficients takes the BatchStats of batch_stats, "
                f"got {type(stats).__name__}"
            )
        if stats.method != self.name:
            raise UsageError(
                f"{self.name}: these stats came from {stats.method}'s batch_stats; "
                f"call {self.name}'s own"
            )


def merged(stats: BatchStats, own: Mapping[str, float | None], notes: list[str]) -> tuple:
    """The micro-batch's stats and notes after the batch-wide ones."""
    return {**stats.stats, **own}, [*stats.notes, *notes]


def refuse_unknown_tasks(method: str, missing: list[str]) -> InputError:
    """A micro-batch row whose task is not in the optimizer batch the stats came from."""
    return InputError(
        f"{method}: task id {missing[0]!r} is not in the optimizer batch these stats came from",
        field="task_id",
    )
