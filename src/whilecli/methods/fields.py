"""Batch fields: the aliases of DESIGN section 1 and ragged columns read from rows.

A batch arrives as rows (JSON objects, Parquet records) whose per-token lists have different
lengths. :class:`Columns` holds them flattened (one float64 array per list field plus each
row's length), which is what :meth:`whilecli.methods.batch.Batch.from_columns` pads into
``[B, T]`` tensors without a Python loop over tokens.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from whilecli.errors import InputError
from whilecli.io.aliases import REWARD_ALIASES, REWARD_PARTS, TASK_ALIASES, parse_field_map

#: Per-token list fields and the columns that carry them, first match wins.
LIST_ALIASES: dict[str, tuple[str, ...]] = {
    "logprobs": ("logprobs",),
    "behavior_logprobs": (
        "behavior_logprobs",
        "token_logprobs",
        "inference_logprobs",
        "completion_logprobs",
    ),
    "action_mask": ("action_mask", "loss_mask", "completion_mask"),
    "values": ("values",),
    "ref_logprobs": ("ref_logprobs",),
    "teacher_logprobs": ("teacher_logprobs",),
}
#: Scalar fields and their columns, first match wins. ``task`` alone is a label, never an id.
SCALAR_ALIASES: dict[str, tuple[str, ...]] = {
    "reward": REWARD_ALIASES,
    "task_id": TASK_ALIASES,
    "truncated": ("truncated", "is_truncated"),
    "agent": ("agent",),
}
LIST_FIELDS = tuple(LIST_ALIASES)
SCALAR_FIELDS = tuple(SCALAR_ALIASES)
#: Fields whose values are log-probabilities (finite and <= 0 on action tokens).
LOGPROB_FIELDS = ("logprobs", "behavior_logprobs", "ref_logprobs", "teacher_logprobs")


def parse_map(pairs: Sequence[str]) -> dict[str, str]:
    """``["reward=score", ...]`` (the CLI's ``--map``) → ``{"reward": "score"}``."""
    return parse_field_map(pairs, (*LIST_FIELDS, *SCALAR_FIELDS))


def resolve(
    available: Sequence[str] | set[str], mapping: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Canonical field → the source column that feeds it (``mapping`` wins over aliases)."""
    names = set(available)
    mapping = dict(mapping or {})
    out: dict[str, str] = {}
    for name, aliases in {**LIST_ALIASES, **SCALAR_ALIASES}.items():
        if name in mapping:
            if mapping[name] in names:
                out[name] = mapping[name]
            continue
        for alias in aliases:
            if alias in names:
                out[name] = alias
                break
    if "reward" not in out and "reward" not in mapping and REWARD_PARTS in names:
        out["reward"] = REWARD_PARTS
    return out


@dataclass
class Columns:
    """A batch's fields, flattened. ``lists[f] = (values, lengths)``; a length of -1 = missing.

    ``rewards`` is float64 with NaN where ``reward_present`` is false. ``where(i)`` gives the
    keyword arguments that locate row ``i`` in an :class:`InputError` (file and line or row).
    """

    size: int
    lists: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    rewards: np.ndarray | None = None
    reward_present: np.ndarray | None = None
    task_ids: list[str | None] | None = None
    agents: list[str | None] | None = None
    truncated: np.ndarray | None = None
    sources: dict[str, str] = field(default_factory=dict)
    file: str | None = None
    lines: Sequence[int] | None = None

    def where(self, i: int) -> dict[str, Any]:
        """Where row ``i`` lives: ``{"file", "line"}`` for text files, else ``{"file", "row"}``."""
        if self.lines is not None:
            return {"file": self.file, "line": int(self.lines[i])}
        return {"file": self.file, "row": int(i)}


def _dig(row: Mapping[str, Any], column: str) -> tuple[bool, Any]:
    """``row[column]``, following dots into nested objects; ``(found, value)``."""
    if column in row:
        return True, row[column]
    node: Any = row
    for part in column.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def _keys(rows: Sequence[Mapping[str, Any]]) -> set[str]:
    names: set[str] = set()
    for row in rows:
        names.update(row.keys())
        for key, value in row.items():
            if isinstance(value, Mapping):
                names.update(f"{key}.{sub}" for sub in value)
    return names


def _list_values(value: Any, name: str, err: dict[str, Any]) -> np.ndarray:
    """One row's per-token list as float64, refusing strings, nulls and non-numbers."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise InputError(f"must be a list of numbers, got {type(value).__name__}", **err)
    arr = np.asarray(value)
    if arr.ndim != 1 and arr.size:
        raise InputError("must be a flat list of numbers", **err)
    kind = arr.dtype.kind
    if arr.size and kind not in "biuf":
        bad = next(v for v in value if isinstance(v, (str, bytes)) or v is None or not _number(v))
        raise InputError(f"holds {bad!r}; every entry must be a number", **err)
    if kind == "b" and name != "action_mask":
        raise InputError("holds booleans; expected numbers", **err)
    return arr.astype(np.float64, copy=False)


def _number(v: Any) -> bool:
    return isinstance(v, (bool, int, float, np.integer, np.floating, np.bool_))


def _reward(value: Any, err: dict[str, Any]) -> float:
    if isinstance(value, (bool, np.bool_)):
        return float(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    if value is None:
        return math.nan
    raise InputError(f"must be a number, got {type(value).__name__} {value!r}", **err)


def reward_of_parts(parts: Any, err: dict[str, Any]) -> float:
    """Σ score × weight over a ``rewards`` dict (:data:`REWARD_PARTS`), as the route reads it
    (0 when no part carries a score)."""
    if not isinstance(parts, Mapping):
        raise InputError(
            f"must be an object of {{score, weight}} parts, got {type(parts).__name__}", **err
        )
    total = 0.0
    for name, part in parts.items():
        where = {**err, "field": f"{REWARD_PARTS}.{name}"}
        if part is None:
            continue
        if not isinstance(part, Mapping) or "score" not in part:
            raise InputError(f"must be {{score, weight}} or null, got {part!r}", **where)
        score, weight = part["score"], part.get("weight")
        for label, value in (("score", score), ("weight", weight)):
            if value is not None and (
                isinstance(value, str) or not isinstance(value, (int, float, np.number))
            ):
                raise InputError(f"{label} must be a number, got {value!r}", **where)
        if score is not None:
            total += float(score) * (1.0 if weight is None else float(weight))
    return total


def columns_from_rows(
    rows: Sequence[Mapping[str, Any]],
    mapping: Mapping[str, str] | None = None,
    *,
    file: str | None = None,
    lines: Sequence[int] | None = None,
) -> Columns:
    """Flatten rows (dicts with ragged lists) into :class:`Columns`, resolving aliases."""
    n = len(rows)
    cols = Columns(size=n, file=file, lines=lines)
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise InputError(f"expected an object, got {type(row).__name__}", **cols.where(i))
    src = resolve(_keys(rows), mapping)
    cols.sources = src
    for name in LIST_FIELDS:
        if name not in src:
            continue
        parts: list[np.ndarray] = []
        lengths = np.full(n, -1, dtype=np.int64)
        for i, row in enumerate(rows):
            found, value = _dig(row, src[name])
            if not found or value is None:
                continue
            arr = _list_values(value, name, {**cols.where(i), "field": src[name]})
            parts.append(arr)
            lengths[i] = arr.size
        flat = np.concatenate(parts) if parts else np.zeros(0)
        cols.lists[name] = (flat.astype(np.float64, copy=False), lengths)
    if "reward" in src:
        rewards = np.full(n, math.nan)
        present = np.zeros(n, dtype=bool)
        for i, row in enumerate(rows):
            found, value = _dig(row, src["reward"])
            if not found or value is None:
                continue
            where = {**cols.where(i), "field": src["reward"]}
            read = reward_of_parts if src["reward"] == REWARD_PARTS else _reward
            rewards[i], present[i] = read(value, where), True
        cols.rewards, cols.reward_present = rewards, present
    for name in ("task_id", "agent"):
        if name in src:
            vals: list[str | None] = []
            for row in rows:
                found, value = _dig(row, src[name])
                vals.append(None if not found or value is None else str(value))
            if name == "task_id":
                cols.task_ids = vals
            else:
                cols.agents = vals
    if "truncated" in src:
        trunc = np.zeros(n, dtype=bool)
        for i, row in enumerate(rows):
            found, value = _dig(row, src["truncated"])
            if found and value is not None:
                if not isinstance(value, (bool, np.bool_)) and value not in (0, 1):
                    raise InputError(
                        f"must be true or false, got {value!r}",
                        **cols.where(i),
                        field=src["truncated"],
                    )
                trunc[i] = bool(value)
        cols.truncated = trunc
    return cols
