"""A batch's fields in memory: the alias tables of the per-token lists and :class:`Columns`,
the flattened lists the update pads into ``[B, T]`` tensors (DESIGN sections 1 and 3).

numpy only, no polars and no pyarrow: :mod:`whilecli.methods` builds batches from rows in
memory through :func:`columns_from_rows` without loading the file readers, which live in
:mod:`whilecli.io.batch` and produce the same :class:`Columns`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from whilecli.errors import InputError
from whilecli.io.aliases import (
    REWARD_ALIASES,
    REWARD_PARTS,
    TASK_ALIASES,
    TOKEN_LIST_ALIASES,
    parse_field_map,
)
from whilecli.io.words import flag_text, grade_text

#: Per-token list fields and the columns that carry them, first match wins.
LIST_ALIASES = TOKEN_LIST_ALIASES
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
#: Text fields: read as strings, numbers rendered as the route renders them.
TEXT_FIELDS = ("task_id", "agent")


def parse_map(pairs: Sequence[str]) -> dict[str, str]:
    """``["reward=score", ...]`` (the CLI's ``--map``) → ``{"reward": "score"}``."""
    return parse_field_map(pairs, (*LIST_FIELDS, *SCALAR_FIELDS))


def candidates(mapping: Mapping[str, str] | None = None) -> dict[str, tuple[str, ...]]:
    """Canonical field → the columns that may feed it, in order (``mapping`` replaces the
    aliases of a field it names; the ``rewards`` parts come after the reward aliases)."""
    mapping = dict(mapping or {})
    out: dict[str, tuple[str, ...]] = {}
    for name, aliases in {**LIST_ALIASES, **SCALAR_ALIASES}.items():
        out[name] = (mapping[name],) if name in mapping else aliases
    if "reward" not in mapping:
        out["reward"] = (*out["reward"], REWARD_PARTS)
    return out


def resolve(
    available: Sequence[str] | set[str], mapping: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Canonical field → the source column that feeds it, among ``available`` (the columns
    that hold a value somewhere); ``mapping`` wins over aliases."""
    names = set(available)
    out: dict[str, str] = {}
    for name, columns in candidates(mapping).items():
        found = next((c for c in columns if c in names), None)
        if found is not None:
            out[name] = found
    return out


@dataclass
class InputRows:
    """Every row of the input, in input order, beside the batch (which holds the rows that
    entered the update): where each stands in its source, which batch row it is, and, for a
    row left out of the batch (an error reply, an ungraded row), why, its task id and how
    many tokens its ``logprobs`` list holds (0 without one)."""

    #: Each row's 0-based place in its source (blank lines skipped).
    row: np.ndarray
    #: Each row's source, where the batch was read from several; None for one source.
    file: list[str] | None
    #: Each row's index in the batch; -1 for a row left out.
    batch: np.ndarray
    #: Why each row was left out; None for a row in the batch.
    left_out: list[str | None]
    #: Each left-out row's task id (None for a row in the batch: the batch holds it).
    task_id: list[str | None]
    #: Each left-out row's token count (0 for a row in the batch).
    tokens: np.ndarray

    @property
    def size(self) -> int:
        return len(self.batch)


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
    #: For a batch read from several files: (first row, that file's columns), in order.
    parts: list[tuple[int, Columns]] | None = None
    #: What reading found and left out (the one reader's notes and row-fact warnings).
    notes: list[str] = field(default_factory=list)
    #: Every input row, the rows left out of the batch among them (a batch read from a file).
    input_rows: InputRows | None = None

    def where(self, i: int) -> dict[str, Any]:
        """Where row ``i`` lives: ``{"file", "line"}`` for text files, else ``{"file", "row"}``."""
        if self.parts:
            starts = [start for start, _ in self.parts]
            k = int(np.searchsorted(starts, i, side="right")) - 1
            start, part = self.parts[k]
            return part.where(i - start)
        if self.lines is not None:
            return {"file": self.file, "line": int(self.lines[i])}
        return {"file": self.file, "row": int(i)}


# ------------------------------------------------------------------ rows already in memory


def dig(row: Mapping[str, Any], column: str) -> tuple[bool, Any]:
    """``row[column]``, following dots into nested objects; ``(found, value)``."""
    if column in row:
        return True, row[column]
    node: Any = row
    for part in column.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def _held(rows: Sequence[Mapping[str, Any]], mapping: Mapping[str, str] | None) -> set[str]:
    """The candidate columns that hold a non-null value in some row."""
    wanted = {c for columns in candidates(mapping).values() for c in columns}
    return {c for c in wanted if any(dig(row, c)[1] is not None for row in rows)}


def _describe(value: Any) -> str:
    if isinstance(value, str):
        text = value if len(value) <= 24 else value[:21] + "..."
        return f"the text {json.dumps(text, ensure_ascii=False)}"
    if isinstance(value, (dict, Mapping)):
        return "a JSON object"
    if isinstance(value, (list, tuple)):
        return "a JSON list"
    if value is None:
        return "None (null)"
    return repr(value)


def _number(v: Any) -> bool:
    return isinstance(v, (bool, int, float, np.integer, np.floating, np.bool_))


def _list_values(value: Any, name: str, err: dict[str, Any]) -> np.ndarray:
    """One row's per-token list as float64, refusing strings, nulls and non-numbers."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise InputError(f"must be a list of numbers, got {type(value).__name__}", **err)
    for v in value:
        if not _number(v):
            what = "a nested list" if isinstance(v, (list, tuple)) else _describe(v)
            raise InputError(f"holds {what}; every entry must be a number", **err)
    kinds = {isinstance(v, (bool, np.bool_)) for v in value}
    if True in kinds and name != "action_mask":
        raise InputError("holds booleans; expected numbers", **err)
    try:
        return np.asarray([float(v) for v in value], dtype=np.float64)
    except OverflowError:  # an integer past the float range
        return np.asarray([_float(v) for v in value], dtype=np.float64)


def _float(v: Any) -> float:
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf


def _reward(value: Any, err: dict[str, Any]) -> float | None:
    """A reward: a number, a boolean as 1.0 / 0.0, or a grade written as text
    (:func:`~whilecli.io.words.grade_text`; None: ungraded)."""
    if isinstance(value, (bool, int, float, np.integer, np.floating, np.bool_)):
        return _float(value)
    if isinstance(value, str):
        try:
            return grade_text(value)
        except ValueError as bad:
            raise InputError(str(bad), **err) from None
    raise InputError(f"must be a number, got {_describe(value)}", **err)


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


def render_text(value: Any) -> str:
    """A task id or agent as text, the way the route's polars reader renders a JSON value
    read as a string: text as it is, ``true``/``false``, a number by its shortest
    round-trip digits in positional notation without a trailing ``.0`` (``1.0`` → ``"1"``,
    ``1e-7`` → ``"0.0000001"``), JSON otherwise."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return np.format_float_positional(float(value), trim="-")
    return json.dumps(value, ensure_ascii=False)


def columns_from_rows(
    rows: Sequence[Mapping[str, Any]],
    mapping: Mapping[str, str] | None = None,
    *,
    file: str | None = None,
    lines: Sequence[int] | None = None,
) -> Columns:
    """Flatten rows (dicts with ragged lists) into :class:`Columns`, resolving aliases.

    The exact reader, one row at a time: what the file reader falls back to, and what
    :meth:`~whilecli.methods.batch.Batch.from_rows` uses for rows already in memory.
    """
    n = len(rows)
    cols = Columns(size=n, file=file, lines=lines)
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise InputError(f"expected an object, got {type(row).__name__}", **cols.where(i))
    src = resolve(_held(rows, mapping), mapping)
    cols.sources = src
    for name in LIST_FIELDS:
        if name not in src:
            continue
        parts: list[np.ndarray] = []
        lengths = np.full(n, -1, dtype=np.int64)
        for i, row in enumerate(rows):
            found, value = dig(row, src[name])
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
            found, value = dig(row, src["reward"])
            if not found or value is None:
                continue
            where = {**cols.where(i), "field": src["reward"]}
            read = reward_of_parts if src["reward"] == REWARD_PARTS else _reward
            got = read(value, where)
            if got is not None:
                rewards[i], present[i] = got, True
        cols.rewards, cols.reward_present = rewards, present
    for name in TEXT_FIELDS:
        if name in src:
            vals: list[str | None] = []
            for row in rows:
                found, value = dig(row, src[name])
                vals.append(None if not found or value is None else render_text(value))
            if name == "task_id":
                cols.task_ids = vals
            else:
                cols.agents = vals
    if "truncated" in src:
        trunc = np.zeros(n, dtype=bool)
        for i, row in enumerate(rows):
            found, value = dig(row, src["truncated"])
            if found and isinstance(value, str):
                try:
                    value = flag_text(value)  # the readers' rule; unknown reads as not cut
                except ValueError as bad:
                    raise InputError(str(bad), **cols.where(i), field=src["truncated"]) from None
            if found and value is not None:
                if not isinstance(value, (bool, np.bool_)) and (
                    not _number(value) or value not in (0, 1)
                ):
                    raise InputError(
                        f"must be true or false, got {_describe(value)}",
                        **cols.where(i),
                        field=src["truncated"],
                    )
                trunc[i] = bool(value)
        cols.truncated = trunc
    return cols
