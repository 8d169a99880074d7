"""What a method needs of a batch, declared as data, and the one check of a batch against it.

Every token method declares a :class:`Needs`: the fields it reads, the log-prob lists whose
values it uses, whether it reads rewards, the critic values' bounds, whether every row must
carry an action token. :func:`check_batch` is the only place a batch's values are checked
(DESIGN section 3: "validation happens once, in one place, with one wording per error"); the
runner (:class:`whilecli.methods.twostep.TwoStep`) calls it once per optimizer batch, and the
methods' own code checks nothing. Each refusal is one located line: the row (trajectory
index), the field, what is wrong.

>>> check_batch(batch, Needs(fields=("values",)), "sao")   # doctest: +SKIP
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import torch

from whilecli.errors import InputError, UsageError
from whilecli.knobs import CORRECTIONS
from whilecli.methods.batch import _logprob_message, logprob_range
from whilecli.methods.fastmath import as_float

if TYPE_CHECKING:
    from whilecli.methods.batch import Batch

#: Batch attribute → the field name errors and ``requires`` use (DESIGN section 1).
FIELD_NAMES = {"task_ids": "task_id", "agents": "agent", "rewards": "reward"}
#: The per-token lists a method may need beside ``logprobs`` (Batch attribute names).
TOKEN_FIELDS = ("behavior_logprobs", "values", "ref_logprobs", "teacher_logprobs")


@dataclass(frozen=True)
class ValueRule:
    """Where the critic's ``values`` must lie: inside ``[low, high]`` (finite when the bounds
    are infinite) on the action tokens, the only ones any method reads (a value on a token the
    environment wrote is never refused); ``knob`` names the option that sets finite bounds
    (BPCO's ``reward_range``)."""

    low: float = -math.inf
    high: float = math.inf
    knob: str = "reward_range"


@dataclass(frozen=True)
class Needs:
    """What a method reads of a batch (its declaration; :func:`check_batch` enforces it).

    ``fields``: Batch attributes that must be present (``values``, ``ref_logprobs``,
    ``teacher_logprobs``, ``task_ids``, ``behavior_logprobs``). ``logprobs``: the log-prob
    lists whose action-token entries must be finite and ≤ 0, where present. ``reward``: every
    reward finite. ``reward_floor``: every reward at least this, with ``floor_reason`` saying
    why. ``values``: the critic values' bounds. ``action_tokens``: every row has an action
    token. ``usage``: a missing field is bad usage (a correction asked of a batch without
    behaviour log-probs), with this sentence.
    """

    fields: tuple[str, ...] = ()
    logprobs: tuple[str, ...] = ("logprobs", "behavior_logprobs")
    reward: bool = True
    reward_floor: float | None = None
    floor_reason: str = ""
    values: ValueRule | None = None
    action_tokens: bool = False
    usage: str | None = field(default=None, compare=False)

    @property
    def requires(self) -> frozenset[str]:
        """The fields beyond the log-probs, as Batch attributes (the :class:`Method` protocol)."""
        return frozenset(self.fields)

    @property
    def reads(self) -> frozenset[str]:
        """The per-token lists a method with these needs reads (their row-file names):
        ``logprobs`` and ``action_mask`` always, the log-prob lists whose values it uses, the
        lists it requires, and ``values`` when it bounds them. The one answer to "which lists
        does this method read": a list outside it is ignored, never refused, by
        :meth:`whilecli.methods.batch.Batch.from_columns` and ``while update``."""
        listed = {"logprobs", "action_mask", *self.logprobs}
        listed |= {f for f in self.fields if f in TOKEN_FIELDS}
        if self.values is not None:
            listed.add("values")
        return frozenset(listed)

    @property
    def field_names(self) -> tuple[str, ...]:
        """``fields`` under the names errors and the file readers use (``task_id``)."""
        return tuple(FIELD_NAMES.get(f, f) for f in self.fields)

    def __or__(self, other: Needs | None) -> Needs:
        """Both declarations at once (a method's with its correction's)."""
        if other is None:
            return self
        return replace(
            self,
            fields=_union(self.fields, other.fields),
            logprobs=_union(self.logprobs, other.logprobs),
            reward=self.reward or other.reward,
            reward_floor=self.reward_floor if other.reward_floor is None else other.reward_floor,
            floor_reason=other.floor_reason or self.floor_reason,
            values=other.values or self.values,
            action_tokens=self.action_tokens or other.action_tokens,
            usage=other.usage or self.usage,
        )


def _union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return a + tuple(x for x in b if x not in a)


def correction_needs(name: str | None) -> Needs | None:
    """A staleness correction's declaration: ``behavior_logprobs`` present, both log-prob
    lists valid (None without a correction, or for a name that is none: the correction
    itself refuses it, naming the known ones)."""
    if name not in CORRECTIONS:
        return None
    return Needs(
        fields=("behavior_logprobs",),
        reward=False,
        usage=(
            f"--correction {name} needs the sampler's log-probs in field 'behavior_logprobs', "
            "and the batch carries none"
        ),
    )


def check_batch(batch: Batch, needs: Needs, method: str) -> None:
    """Refuse ``batch`` where it falls short of ``needs``, naming the row and the field.

    The checks, in order: the declared fields are present (task ids on every row); the
    rewards are finite (and above the floor); the declared log-prob lists are finite and ≤ 0
    on action tokens; the critic values lie inside their bounds; every row has an action
    token. The first failure raises an :class:`~whilecli.errors.InputError` (a
    :class:`~whilecli.errors.UsageError` for a correction without behaviour log-probs).
    """
    for name in needs.fields:
        if name == "task_ids":
            _check_task_ids(batch, method)
        elif getattr(batch, name) is None:
            if needs.usage is not None:
                raise UsageError(needs.usage)
            raise InputError(
                f"missing: {method} needs it on every trajectory", field=FIELD_NAMES.get(name, name)
            )
    if needs.reward:
        _check_rewards(batch.rewards, needs, method)
    _check_logprobs(batch, needs.logprobs)
    if needs.values is not None and batch.values is not None:
        _check_values(batch, batch.values, needs.values)
    if needs.action_tokens:
        empty = ~batch.action_mask.any(dim=1)
        if bool(empty.any()):
            i = int(empty.nonzero()[0, 0])
            raise InputError(
                f"has no action token; {method} cannot weigh it", row=i, field="action_mask"
            )


def _check_task_ids(batch: Batch, method: str) -> None:
    ids = batch.task_ids
    if ids is None:
        raise InputError(f"missing: {method} groups trajectories by task id", field="task_id")
    if len(ids) != batch.size:
        raise InputError(
            f"{len(ids)} task ids for {batch.size} trajectories; {method} needs one per trajectory",
            field="task_id",
        )
    for i, t in enumerate(ids):
        if t is None or (isinstance(t, str) and not t.strip()):
            raise InputError(
                f"missing: {method} groups trajectories by task id", row=i, field="task_id"
            )


def reward_bound(dtype: torch.dtype) -> float:
    """The largest reward magnitude the arithmetic takes in ``dtype``: √(largest float) / 10⁴,
    so a reward's square, and sums of ten thousand of them, stay finite (a group's variance,
    a baseline's mean); 1.3e150 in float64, 1.8e15 in float32."""
    return math.sqrt(torch.finfo(dtype).max) / 1e4


def _check_rewards(rewards: torch.Tensor, needs: Needs, method: str) -> None:
    bad = ~torch.isfinite(rewards)
    if bool(bad.any()):
        i = int(bad.nonzero()[0, 0])
        raise InputError(f"is {float(rewards[i])}, not a finite number", row=i, field="reward")
    bound = reward_bound(rewards.dtype)
    huge = rewards.abs() > bound
    if bool(huge.any()):  # finite, yet its square overflows: a NaN update (exit 0) before
        i = int(huge.nonzero()[0, 0])
        raise InputError(
            f"is {float(rewards[i]):g}: rewards past ±{bound:.2g} overflow the arithmetic"
            f" in {str(rewards.dtype).removeprefix('torch.')}; scale them",
            row=i,
            field="reward",
        )
    floor = needs.reward_floor
    if floor is not None:
        low = rewards < floor
        if bool(low.any()):
            i = int(low.nonzero()[0, 0])
            raise InputError(
                f"is {float(rewards[i])!r}; {method} needs rewards ≥ {floor:g}"
                + (f" ({needs.floor_reason})" if needs.floor_reason else ""),
                row=i,
                field="reward",
            )


def _check_logprobs(batch: Batch, names: Collection[str]) -> None:
    """A non-finite or positive log-prob on an action token of the named lists."""
    for name in names:
        tensor = getattr(batch, name)
        if tensor is None:
            continue
        tensor = tensor.detach()
        # fast paths: every entry (padding included) in range, in one pass; then, when every
        # entry is finite, the action tokens alone through a product with the 0/1 mask (exact
        # for finite entries)
        in_range, finite = logprob_range(tensor)
        if in_range or (
            finite and logprob_range(tensor * as_float(batch.action_mask, tensor.dtype))[0]
        ):
            continue
        bad = batch.action_mask & ~(torch.isfinite(tensor) & (tensor <= 0))
        if bool(bad.any()):
            i = int(bad.any(dim=1).nonzero()[0, 0])
            t = int(bad[i].nonzero()[0, 0])
            raise InputError(_logprob_message(float(tensor[i, t]), t), row=i, field=name)


def _check_values(batch: Batch, values: torch.Tensor, rule: ValueRule) -> None:
    """Critic values outside the rule's bounds (or not finite) on the tokens it covers."""
    values = values.detach()
    lo, hi = rule.low, rule.high
    if values.numel():
        least, most = torch.aminmax(values)
        if bool(least >= lo) and bool(most <= hi) and bool(torch.isfinite(least + most)):
            return  # every entry, the padding too (NaN fails)
    bad = batch.action_mask & ((values < lo) | (values > hi) | ~torch.isfinite(values))
    if not bool(bad.any()):
        return
    i = int(bad.any(dim=1).nonzero()[0, 0])
    t = int(bad[i].nonzero()[0, 0])
    v = float(values[i, t])
    if math.isfinite(v):
        message = (
            f"token {t} is {v:g}, outside {rule.knob} [{lo:g}, {hi:g}] (the critic is bounded)"
        )
    else:
        message = f"token {t} is {v}, not a finite value"
    raise InputError(message, row=i, field="values")
