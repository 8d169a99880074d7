"""A batch of trajectories as padded tensors, and the :class:`Update` every method returns.

Contract shared by every method module (see DESIGN section 3):

- ``B`` trajectories, padded to ``T`` tokens. ``mask[i, t]`` is True where trajectory ``i``
  has a token ``t`` at all; ``action_mask[i, t]`` is True where that token is an action
  token (the policy wrote it). ``action_mask`` implies ``mask``. Padding holds 0.
- Every per-token tensor is ``[B, T]`` on the batch's device and dtype; ``rewards`` is ``[B]``.
- Optional fields are None when the rows do not carry them. ``behavior_logprobs`` None
  means on-policy (ratio 1). A list on some rows only is refused, whichever it is: a row
  is never filled in (assumed on-policy, or all action tokens).

Build a batch with :meth:`Batch.from_rows` (ragged lists, aliases of DESIGN section 1),
:meth:`Batch.from_columns` (flattened lists, what the file readers produce) or
:meth:`Batch.from_tensors` (padded tensors from a training loop).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
import torch

from whilecli.errors import InputError, UsageError
from whilecli.io.columns import LIST_FIELDS, LOGPROB_FIELDS, Columns, columns_from_rows
from whilecli.methods.fastmath import row_counts

#: What a list's absence from a whole batch means, said when some rows carry it and others do
#: not: one rule for every per-token list, as a row's absence is never filled in from a guess
#: (a row without behaviour log-probs is not assumed on-policy, nor one without a mask all
#: action tokens).
_ABSENT_MEANS = {
    "behavior_logprobs": "a batch without them is on-policy, a row is never assumed so",
    "action_mask": "a batch without one is all action tokens, a row is never assumed so",
}
TENSOR_LISTS = ("logprobs", "behavior_logprobs", "values", "ref_logprobs", "teacher_logprobs")


#: [B, T] tensors an update adds to the padded inputs: coefficients, advantages, value targets.
OUTPUT_TENSORS = 3
#: Share of the available memory one batch's padded tensors may take.
PADDING_SHARE = 0.5
#: Batches smaller than this many padded bytes are not measured against the free memory.
CHECK_ABOVE = 1 << 26


def available_memory(device: str | torch.device = "cpu") -> int | None:
    """Bytes free now on ``device``: ``torch.cuda.mem_get_info`` on CUDA, else the host's
    ``MemAvailable`` (``/proc/meminfo``) or ``SC_AVPHYS_PAGES``; None when unknown."""
    dev = torch.device(device)
    if dev.type == "cuda":
        try:
            return int(torch.cuda.mem_get_info(dev)[0])
        except (RuntimeError, AssertionError):
            return None
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        import os

        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def _gb(n: float) -> str:
    return f"{n / 1e9:.3g} GB"


def check_padding_fits(
    rows: int,
    longest: int,
    *,
    n_tensors: int,
    itemsize: int,
    device: str | torch.device = "cpu",
    file: str | None = None,
) -> None:
    """Refuse, before allocating, a batch whose padded ``[B, T]`` tensors would not fit.

    The size is rows × longest row × bytes per entry × tensors; above :data:`PADDING_SHARE`
    of :func:`available_memory` the batch is refused with what to do instead (one long row
    pads every other row to its length).
    """
    need = rows * longest * itemsize * n_tensors
    if need < CHECK_ABOVE:
        return
    free = available_memory(device)
    if free is None or need <= PADDING_SHARE * free:
        return
    raise InputError(
        f"padding {rows} rows to the longest row's {longest} tokens would need {_gb(need)} "
        f"({n_tensors} tensors of {itemsize} bytes per entry), more than half of the "
        f"{_gb(free)} free on {torch.device(device).type}; split the batch, or sort or bucket "
        "the rows by length so each batch pads to its own longest row",
        file=file,
    )


def default_dtype(device: str | torch.device) -> torch.dtype:
    """float64 on CPU, float32 on an accelerator (DESIGN section 3)."""
    return torch.float64 if torch.device(device).type == "cpu" else torch.float32


def _first(bad: np.ndarray) -> int:
    return int(np.flatnonzero(bad)[0])


@dataclass
class Batch:
    """Padded trajectories; build with ``Batch.from_rows`` or ``Batch.from_tensors``."""

    logprobs: torch.Tensor  # [B, T] log π_θ of each sampled token
    mask: torch.Tensor  # [B, T] bool, token exists
    action_mask: torch.Tensor  # [B, T] bool, token is an action token
    rewards: torch.Tensor  # [B]
    behavior_logprobs: torch.Tensor | None = None  # [B, T] log μ (the sampler's)
    values: torch.Tensor | None = None  # [B, T] critic values (SAO, BPCO)
    ref_logprobs: torch.Tensor | None = None  # [B, T] log π_ref (KL terms, DPO)
    teacher_logprobs: torch.Tensor | None = None  # [B, T] log π_T (OPD, OPSD)
    truncated: torch.Tensor | None = None  # [B] bool, cut at the token cap
    task_ids: list[str] | None = None  # grouped methods
    agents: list[str] | None = None  # rae's per-agent baseline key
    rows: torch.Tensor | None = None  # [B] long, positions in the optimizer batch (micro-batches)

    @property
    def size(self) -> int:
        """B, the number of trajectories."""
        return int(self.rewards.shape[0])

    @property
    def action_counts(self) -> torch.Tensor:
        """T_i, the action tokens of each trajectory, ``[B]`` in the batch dtype."""
        return row_counts(self.action_mask).to(self.logprobs.dtype)

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_rows(
        cls,
        rows: Sequence[Mapping[str, Any]],
        *,
        device: str | torch.device = "cpu",
        dtype: torch.dtype | None = None,
        require: Collection[str] = (),
        mapping: Mapping[str, str] | None = None,
        need_reward: bool = True,
        logprob_fields: Collection[str] | None = None,
    ) -> Batch:
        """Pad ragged rows (``{"reward": 1.0, "logprobs": [...], ...}``) into a batch.

        Aliases of DESIGN section 1 are resolved (``mapping`` overrides them). Refused with an
        :class:`InputError` naming the row index and the field: an empty batch, a missing
        reward or log-prob list, per-token lists of different lengths, a non-finite reward, a
        log-prob on an action token that is non-finite or > 0 (in ``logprob_fields``: by
        default ``logprobs``, ``behavior_logprobs`` and any log-prob list in ``require``), a
        mask entry other than true/false/0/1, a field in ``require`` that is absent.
        """
        if len(rows) == 0:
            raise InputError("the batch is empty: no trajectories")
        cols = columns_from_rows(rows, mapping)
        return cls.from_columns(
            cols,
            device=device,
            dtype=dtype,
            require=require,
            need_reward=need_reward,
            logprob_fields=logprob_fields,
        )

    @classmethod
    def from_columns(
        cls,
        cols: Columns,
        *,
        device: str | torch.device = "cpu",
        dtype: torch.dtype | None = None,
        require: Collection[str] = (),
        need_reward: bool = True,
        logprob_fields: Collection[str] | None = None,
        reads: Collection[str] | None = None,
    ) -> Batch:
        """Validate flattened columns and pad them to ``[B, T]`` (vectorised, no token loop).

        ``reads``: the per-token lists the method reads
        (:attr:`whilecli.methods.validate.Needs.reads`); a list outside it is left out of the
        batch, never refused for what it holds or for being present on some rows only (its
        length, where present, is still checked against ``logprobs``, DESIGN section 3).
        None: every list is read."""
        n = cols.size
        if n == 0:
            raise InputError("the batch is empty: no trajectories", file=cols.file)
        src = cols.sources

        def fail(i: int | None, name: str, message: str) -> InputError:
            where = cols.where(i) if i is not None else {"file": cols.file}
            return InputError(message, **where, field=src.get(name, name))

        if "logprobs" not in cols.lists:
            raise fail(None, "logprobs", "missing: every trajectory needs its per-token log-probs")
        _, lengths = cols.lists["logprobs"]
        if (lengths < 0).any():
            raise fail(_first(lengths < 0), "logprobs", "missing")
        if (lengths == 0).any():
            raise fail(_first(lengths == 0), "logprobs", "is empty")
        unread = set() if reads is None else set(cols.lists) - set(reads)
        for name, (_, other) in cols.lists.items():
            if (other < 0).any() and name not in unread:
                held = int((other >= 0).sum())
                why = _ABSENT_MEANS.get(name)
                raise fail(
                    _first(other < 0),
                    name,
                    f"missing here but present on {held} of the {n} trajectories: give it "
                    "on every trajectory or on none" + (f" ({why})" if why else ""),
                )
            wrong = (other != lengths) & (other >= 0)
            if wrong.any():
                i = _first(wrong)
                raise fail(i, name, f"has {other[i]} entries but logprobs has {lengths[i]}")
        for name in require:
            if name in LIST_FIELDS and name not in cols.lists:
                raise fail(None, name, "missing: this method needs it")
            if name == "task_id" and (cols.task_ids is None or None in cols.task_ids):
                at = None if cols.task_ids is None else cols.task_ids.index(None)
                raise fail(at, name, "missing: this method groups trajectories by task id")
        rewards = np.zeros(n) if cols.rewards is None else cols.rewards
        if need_reward or "reward" in require:
            present = cols.reward_present
            if present is None or not present.all():
                at = None if present is None else _first(~present)
                raise fail(at, "reward", "missing: every trajectory needs a reward")
            if not np.isfinite(rewards).all():
                i = _first(~np.isfinite(rewards))
                raise fail(i, "reward", f"is {rewards[i]}, not a finite number")
            narrow = dtype or default_dtype(device)
            largest = torch.finfo(narrow).max
            if (np.abs(rewards) > largest).any():  # it would turn into ∞ in the tensor
                i = _first(np.abs(rewards) > largest)
                shown = str(narrow).removeprefix("torch.")
                raise fail(
                    i,
                    "reward",
                    f"is {rewards[i]:g}, beyond {shown}'s largest number ({largest:.4g}); "
                    "scale the rewards or use float64",
                )

        if unread:  # left out: a method never sees a list it does not read
            cols = replace(cols, lists={k: v for k, v in cols.lists.items() if k not in unread})
        t_max = int(lengths.max())
        check_padding_fits(
            n,
            t_max,
            n_tensors=sum(name in cols.lists for name in TENSOR_LISTS) + OUTPUT_TENSORS,
            itemsize=8,  # the float64 padding buffers
            device=device,
            file=cols.file,
        )
        mask_np = np.arange(t_max)[None, :] < lengths[:, None]

        def pad(name: str) -> np.ndarray:
            flat, own = cols.lists[name]
            out = np.zeros((n, t_max))
            out[np.arange(t_max)[None, :] < own[:, None]] = flat
            return out

        if "action_mask" in cols.lists:
            flat, own = cols.lists["action_mask"]
            bad = (flat != 0) & (flat != 1)
            if bad.any():
                ends = np.cumsum(np.maximum(own, 0))
                i = int(np.searchsorted(ends, _first(bad), side="right"))
                raise fail(i, "action_mask", "entries must be true/false or 0/1")
            action_np = pad("action_mask") > 0.5
        else:
            action_np = mask_np.copy()
        checked = (
            set(logprob_fields)
            if logprob_fields is not None
            else {"logprobs", "behavior_logprobs"} | (set(require) & set(LOGPROB_FIELDS))
        )
        padded = {name: pad(name) for name in TENSOR_LISTS if name in cols.lists}
        for name in LOGPROB_FIELDS:
            if name in checked and name in padded:
                _check_logprob_values(padded[name], action_np, lambda i, m, f=name: fail(i, f, m))

        dtype = dtype or default_dtype(device)
        largest = torch.finfo(dtype).max
        narrower = largest < np.finfo(np.float64).max
        for name, values in padded.items() if narrower else ():  # a finite entry turned ±∞
            wide = np.isfinite(values) & (np.abs(values) > largest) & action_np
            if wide.any():
                i, t = (int(k[0]) for k in np.nonzero(wide))
                shown = str(dtype).removeprefix("torch.")
                raise fail(
                    i,
                    name,
                    f"token {t} is {values[i, t]:g}, beyond {shown}'s largest number "
                    f"({largest:.4g}); use float64",
                )

        def tensor(a: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(a).to(device=device, dtype=dtype)

        return cls(
            logprobs=tensor(padded["logprobs"]),
            mask=torch.from_numpy(mask_np).to(device),
            action_mask=torch.from_numpy(action_np).to(device),
            rewards=tensor(np.array(rewards, dtype=np.float64)),
            behavior_logprobs=tensor(padded["behavior_logprobs"])
            if "behavior_logprobs" in padded
            else None,
            values=tensor(padded["values"]) if "values" in padded else None,
            ref_logprobs=tensor(padded["ref_logprobs"]) if "ref_logprobs" in padded else None,
            teacher_logprobs=tensor(padded["teacher_logprobs"])
            if "teacher_logprobs" in padded
            else None,
            truncated=None
            if cols.truncated is None
            else torch.from_numpy(cols.truncated).to(device),
            task_ids=None if cols.task_ids is None else [str(t) for t in cols.task_ids],
            agents=None if cols.agents is None else [a or "default" for a in cols.agents],
        )

    @classmethod
    def from_tensors(
        cls,
        logprobs: torch.Tensor,
        *,
        rewards: torch.Tensor | Sequence[float],
        lengths: torch.Tensor | Sequence[int] | None = None,
        mask: torch.Tensor | None = None,
        behavior_logprobs: torch.Tensor | None = None,
        action_mask: torch.Tensor | None = None,
        values: torch.Tensor | None = None,
        ref_logprobs: torch.Tensor | None = None,
        teacher_logprobs: torch.Tensor | None = None,
        truncated: torch.Tensor | None = None,
        task_ids: Sequence[str] | None = None,
        agents: Sequence[str] | None = None,
    ) -> Batch:
        """Wrap padded ``[B, T]`` tensors; ``lengths`` or ``mask`` says which tokens exist.

        Device and dtype follow ``logprobs``. ``action_mask`` defaults to ``mask`` and is
        intersected with it. Shapes are checked here; values by the runner, once per
        optimizer batch, on the lists the method declares (:mod:`whilecli.methods.validate`).
        """
        if logprobs.dim() != 2 or logprobs.shape[0] == 0:
            raise InputError(f"logprobs must be [B, T] with B >= 1, got {tuple(logprobs.shape)}")
        b, t = logprobs.shape
        dev, dt = logprobs.device, logprobs.dtype
        if mask is None and lengths is not None:
            lens = torch.as_tensor(lengths, device=dev).reshape(-1)
            if lens.numel() != b:
                raise InputError(f"lengths has {lens.numel()} entries for {b} trajectories")
            mask = torch.arange(t, device=dev)[None, :] < lens[:, None]
        elif mask is None:
            mask = torch.ones(b, t, dtype=torch.bool, device=dev)
        mask = mask.to(device=dev, dtype=torch.bool)
        action = mask if action_mask is None else action_mask.to(dev).bool() & mask
        r = torch.as_tensor(rewards, device=dev, dtype=dt).reshape(-1)
        if r.numel() != b:
            raise InputError(f"rewards has {r.numel()} entries for {b} trajectories")
        given = {
            "behavior_logprobs": behavior_logprobs,
            "values": values,
            "ref_logprobs": ref_logprobs,
            "teacher_logprobs": teacher_logprobs,
            "mask": mask,
            "action_mask": action,
        }
        for name, tensor in given.items():
            if tensor is not None and tuple(tensor.shape) != (b, t):
                raise InputError(
                    f"shape {tuple(tensor.shape)} differs from logprobs {(b, t)}", field=name
                )

        def same(x: torch.Tensor | None) -> torch.Tensor | None:
            return None if x is None else x.to(device=dev, dtype=dt)

        return cls(
            logprobs=logprobs,
            mask=mask,
            action_mask=action,
            rewards=r,
            behavior_logprobs=same(behavior_logprobs),
            values=same(values),
            ref_logprobs=same(ref_logprobs),
            teacher_logprobs=same(teacher_logprobs),
            truncated=None if truncated is None else truncated.to(dev).bool(),
            task_ids=None if task_ids is None else list(task_ids),
            agents=None if agents is None else list(agents),
        )

    def to(self, device: str | torch.device, dtype: torch.dtype | None = None) -> Batch:
        """The same batch on ``device``, floating tensors in ``dtype`` (default: the device's)."""
        dtype = dtype or default_dtype(device)
        moved: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, torch.Tensor):
                kw: dict[str, Any] = {"device": device}
                if value.is_floating_point():
                    kw["dtype"] = dtype
                moved[f.name] = value.to(**kw)
        return replace(self, **moved)

    def select(self, rows: torch.Tensor | Sequence[int] | slice) -> Batch:
        """The micro-batch of the given rows (positions in this batch), padded to its own
        longest row; it remembers their positions in the optimizer batch (``rows``), which
        the two-step API (:mod:`whilecli.methods.twostep`) uses to find rae's and DPO's
        batch-wide quantities."""
        device = self.rewards.device
        if isinstance(rows, slice):
            idx = torch.arange(self.size, device=device)[rows]
        else:
            idx = torch.as_tensor(rows, dtype=torch.long, device=device).reshape(-1)
        if idx.numel() == 0:
            raise UsageError("a micro-batch needs at least one row")
        if int(idx.min()) < -self.size or int(idx.max()) >= self.size:
            raise UsageError(f"row {int(idx.max())} is outside a batch of {self.size} rows")
        idx = idx % self.size
        width = (
            int(self.mask[idx].any(dim=0).nonzero().max()) + 1 if bool(self.mask[idx].any()) else 1
        )
        picked: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, torch.Tensor) and f.name != "rows":
                value = value[idx]
                picked[f.name] = value[:, :width] if value.dim() == 2 else value
            elif isinstance(value, list):
                picked[f.name] = [value[i] for i in idx.tolist()]
        picked["rows"] = idx if self.rows is None else self.rows[idx]
        return replace(self, **picked)

    def split(self, parts: int) -> list[Batch]:
        """The batch cut into ``parts`` micro-batches of consecutive rows, as even as can be
        (the way a trainer's gradient accumulation cuts it)."""
        if isinstance(parts, bool) or not isinstance(parts, int) or parts < 1:
            raise UsageError(f"split takes a number of micro-batches >= 1, got {parts!r}")
        n = min(parts, self.size)
        bounds = [round(k * self.size / n) for k in range(n + 1)]
        return [self.select(slice(bounds[k], bounds[k + 1])) for k in range(n)]


def logprob_range(x: torch.Tensor) -> tuple[bool, bool]:
    """``(every entry a finite value ≤ 0, every entry finite)``, from one ``aminmax`` pass
    (NaN fails both). The validators' fast path: a False first sends them to the exact test."""
    if x.numel() == 0:
        return True, True
    lo, hi = torch.aminmax(x.detach())
    finite = bool(torch.isfinite(lo) & torch.isfinite(hi))
    return finite and bool(hi <= 0), finite


def masked(x: torch.Tensor, keep: torch.Tensor, keep_f: torch.Tensor) -> torch.Tensor:
    """``x`` where ``keep``, exactly 0 elsewhere; ``keep_f`` is ``keep`` in ``x``'s dtype.

    A multiply when ``x`` is finite everywhere (its sum is), else a ``where`` so that junk in
    the padding (NaN, ±inf) cannot leak through ``0 · inf``.
    """
    if bool(torch.isfinite(x.sum())):
        return x * keep_f
    return torch.where(keep, x, 0.0)


def _logprob_message(value: float, t: int) -> str:
    if value > 0 and np.isfinite(value):
        return f"token {t} is {value:g} > 0; pass log p, not p"
    return f"token {t} is {value}, not a finite log-prob"


def _check_logprob_values(padded: np.ndarray, action: np.ndarray, fail: Any) -> None:
    bad = action & ~(np.isfinite(padded) & (padded <= 0))
    if bad.any():
        i = _first(bad.any(axis=1))
        t = _first(bad[i])
        raise fail(i, _logprob_message(float(padded[i, t]), t))


@dataclass
class Update:
    """What a method returns: the per-token coefficients and what it kept and why.

    ``coefficients[i, t]`` is the number a trainer multiplies ∇ log π_θ(a_{i,t}) by; it is
    detached and exactly 0 on padding, observation tokens and dropped trajectories.
    ``stats`` holds floats (None where a statistic is undefined, such as an explained
    variance when the rewards do not vary).
    """

    coefficients: torch.Tensor  # [B, T]
    advantages: torch.Tensor  # [B, T], before any ratio, gate, band or clip
    admitted: torch.Tensor  # [B] bool, the trajectory has gradient left
    value_targets: torch.Tensor | None = None  # [B, T], None without a critic
    stats: Mapping[str, float | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def policy_loss(self, logprobs: torch.Tensor) -> torch.Tensor:
        """The surrogate loss whose gradient is Σ c ∇log π: ``-(coefficients * logprobs).sum()``."""
        return -(self.coefficients.detach() * logprobs).sum()


def reuse(
    previous: Update | None,
    name: str,
    shape: torch.Size,
    dtype: torch.dtype,
    device: torch.device,
) -> torch.Tensor:
    """``previous.<name>``, to be overwritten, when it has this shape, dtype and device; else
    a new uninitialised tensor.

    A training loop that passes last step's :class:`Update` back as ``out=`` saves the page
    faults of fresh output memory (on CPU about 1 µs per 4 KiB page: ~1 ms per 4 MB output).
    """
    old = None if previous is None else getattr(previous, name)
    if (
        old is not None
        and old.shape == shape
        and old.dtype == dtype
        and old.device == device
        and old.is_contiguous()
    ):
        return old
    return torch.empty(shape, dtype=dtype, device=device)
