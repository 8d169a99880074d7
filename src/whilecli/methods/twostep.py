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

:class:`TwoStep` is the one runner every method goes through: ``batch_stats`` checks the
optimizer batch once against the method's declared :class:`~whilecli.methods.validate.Needs`
(:func:`~whilecli.methods.validate.check_batch`, the only place a batch is validated), then
runs the method's batch-wide step (:meth:`TwoStep.reduce`, all-reduced over the ranks);
``coefficients`` runs its per-token step (:meth:`TwoStep.per_token`) on a micro-batch of that
batch, unchecked, and writes the batch-wide stats and notes before the micro-batch's own. A
trainer that computes the batch-wide quantities itself hands them to :meth:`trainer_stats`,
which checks the micro-batch it is given (the only batch the trainer shows the runner).

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
from whilecli.knobs import ICEPOP_BAND, IPO_EPS, LOG_FLOAT_MAX, TIS_CAP
from whilecli.methods.batch import Batch, Update
from whilecli.methods.corrections import correct
from whilecli.methods.distributed import global_sum
from whilecli.methods.fastmath import all_finite
from whilecli.methods.validate import Needs, check_batch, correction_needs


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


class _Requires:
    """``requires``, the fields a method needs beyond the log-probs, read from its ``needs``
    (on the class and on an instance whose knobs change them)."""

    def __get__(self, obj: Any, owner: type) -> frozenset[str]:
        holder: Any = owner if obj is None else obj
        return frozenset(holder.needs.requires)


class TwoStep:
    """The runner: ``batch_stats`` once per optimizer batch (checked against ``needs``,
    reduced over the ranks), ``coefficients`` per micro-batch, ``update`` the two in one call.

    A method declares ``needs`` (a :class:`~whilecli.methods.validate.Needs`, data) and
    implements :meth:`per_token`; one with batch-global quantities also overrides
    :meth:`reduce` (the default gives B and Σ_j T_j). Neither checks its input: the runner
    has, once.
    """

    name: ClassVar[str] = ""
    needs: Needs = Needs()
    requires = _Requires()

    def batch_stats(
        self, batch: Batch, group: Any | None = None, *, also: Needs | None = None
    ) -> BatchStats:
        """The batch-global quantities of ``batch`` (all-reduced over ``group``'s ranks),
        after checking it once against the method's ``needs`` (and ``also``'s: a
        correction's, :func:`~whilecli.methods.validate.correction_needs`)."""
        check_batch(batch, self.needs | also, self.name)
        return self.reduce(batch, group)

    def trainer_stats(
        self,
        micro_batch: Batch,
        *,
        rows: int,
        values: Mapping[str, Any],
        also: Needs | None = None,
    ) -> BatchStats:
        """The optimizer batch's stats from quantities a trainer computed over it itself
        (``rows`` = B, ``values`` the method's own), for ``micro_batch``, which is checked
        here: it is the only batch such a trainer shows the runner."""
        check_batch(micro_batch, self.needs | also, self.name)
        return BatchStats(
            method=self.name,
            rows=int(rows),
            action_tokens=float(micro_batch.action_mask.sum()),
            local_rows=micro_batch.size,
            values=dict(values),
        )

    def reduce(self, batch: Batch, group: Any | None = None) -> BatchStats:
        """The method's batch-wide step on a checked batch (default: B and Σ_j T_j)."""
        return base_stats(self.name, batch, group)

    def coefficients(
        self,
        micro_batch: Batch,
        stats: BatchStats,
        *,
        out: Update | None = None,
        correction: str | None = None,
        **correction_knobs: Any,
    ) -> Update:
        """The per-token coefficients of ``micro_batch`` (a micro-batch of the optimizer
        batch ``stats`` came from) under ``stats``; ``out``, a previous :class:`Update`, is
        overwritten when shapes match. Its stats and notes are the batch-wide ones, then the
        micro-batch's own. ``correction`` (``ipo``, ``icepop``, ``tis``, with its knobs) is
        applied last, on a micro-batch the runner has checked for it (``batch_stats(...,
        also=correction_needs(name))``). A coefficient that is not finite once the
        correction has had its say is refused (:func:`refuse_not_finite`): a correction that
        masks an overflowed ratio, or replaces it by min(ρ, cap), leaves a finite c."""
        self._check(stats)
        own = self.per_token(micro_batch, stats, out=out)
        own.stats = {**stats.stats, **own.stats}
        own.notes = [*stats.notes, *own.notes]
        if correction is not None:
            own = correct(own, micro_batch, correction, **correction_knobs)
        return refuse_not_finite(own, micro_batch)

    def per_token(self, micro_batch: Batch, stats: BatchStats, *, out: Update | None) -> Update:
        """The method's per-token step: an :class:`Update` with the micro-batch's own stats
        and notes."""
        raise NotImplementedError

    def update(
        self,
        batch: Batch,
        *,
        group: Any | None = None,
        out: Update | None = None,
        correction: str | None = None,
        **correction_knobs: Any,
    ) -> Update:
        """``coefficients(batch, batch_stats(batch, group))``: the whole batch in one call (a
        micro-batch handed here is an optimizer batch of its own). ``correction`` (``ipo``,
        ``icepop``, ``tis``, with its knobs ``eps``, ``band``, ``cap``) is applied last; the
        batch is checked once for the method and the correction together."""
        whole = batch if batch.rows is None else replace(batch, rows=None)
        stats = self.batch_stats(whole, group, also=correction_needs(correction))
        return self.coefficients(whole, stats, out=out, correction=correction, **correction_knobs)

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


def apply_correction(
    update: Update,
    batch: Batch,
    name: str,
    *,
    eps: float = IPO_EPS.default,
    band: tuple[float, float] = ICEPOP_BAND,
    cap: float = TIS_CAP.default,
) -> Update:
    """``update`` corrected for the sampler/trainer gap (``ipo``, ``icepop``, ``tis``; see
    :mod:`whilecli.methods.corrections`), after checking ``batch`` for the correction: its
    behaviour log-probs present, both log-prob lists valid. A caller that ran the method
    through :meth:`TwoStep.update` with ``correction=`` has both done at once."""
    needs = correction_needs(name)
    if needs is not None:  # an unknown name is refused by correct, naming the known ones
        check_batch(batch, needs, f"correction {name}")
    return correct(update, batch, name, eps=eps, band=band, cap=cap)


def refuse_not_finite(update: Update, batch: Batch | None = None) -> Update:
    """``update`` as it is when its coefficients are finite; else the located refusal.

    Only an update that says it may hold a non-finite coefficient (a
    :class:`~whilecli.methods.corrections.PolicyGradientUpdate` with ``finite`` False: the
    grpo family's unclamped ρ overflowed) is looked at again, after any correction. The
    refusal blames what overflowed, at the coefficients' dtype's limit (log-ratios above 88.7
    overflow float32, above 709.8 float64): the log-probs when their gap on that row passes
    it, else ``--beta`` (``batch``, the batch the update came from, tells them apart)."""
    if getattr(update, "finite", True):
        return update
    c = update.coefficients
    if all_finite(c):
        update.finite = True  # type: ignore[attr-defined]  # a PolicyGradientUpdate
        return update
    row = int(torch.nonzero(~torch.isfinite(c))[0, 0])
    dtype = str(c.dtype).removeprefix("torch.")
    limit = LOG_FLOAT_MAX.get(dtype, LOG_FLOAT_MAX["float64"])

    def gap_passes(upper: torch.Tensor | None, lower: torch.Tensor | None) -> bool:
        if batch is None or upper is None or lower is None:
            return True  # nothing to tell them apart: the log-probs, as ever
        on = batch.action_mask[row]
        return bool(((upper[row] - lower[row])[on] > limit).any())

    reference_term = getattr(update, "reference_term", None)
    if reference_term is not None and not bool(torch.isfinite(reference_term[row]).all()):
        if not gap_passes(
            None if batch is None else batch.ref_logprobs, None if batch is None else batch.logprobs
        ):
            raise UsageError(
                f"beta is too large for {dtype}: the KL term β w (1 − r) overflows on an "
                f"action token where log π_ref − log π_θ ≤ {limit:.1f} keeps r "
                "finite; make it smaller" + (", or run in float64" if dtype != "float64" else ""),
                knob="beta",
            )
        raise InputError(
            "the KL term's r = exp(log π_ref − log π_θ) overflows on an action token "
            f"(log π_ref − log π_θ > {limit:.1f}, {dtype}'s limit), so its coefficient is not "
            "finite; check that ref_logprobs are the reference model's log-probabilities of "
            "the sampled tokens",
            row=row,
            field="ref_logprobs",
        )
    raise InputError(
        "the ratio exp(log π − log μ) overflows on an action token (log π − log μ > "
        f"{limit:.1f}, {dtype}'s limit), so its coefficient is not finite; check that "
        "behavior_logprobs are the sampler's log-probabilities of the sampled tokens",
        row=row,
        field="behavior_logprobs",
    )


def refuse_unknown_tasks(method: str, missing: list[str]) -> InputError:
    """A micro-batch row whose task is not in the optimizer batch the stats came from."""
    return InputError(
        f"{method}: task id {missing[0]!r} is not in the optimizer batch these stats came from",
        field="task_id",
    )
