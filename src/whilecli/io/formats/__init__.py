"""The tools whose output ``while`` reads, one module each (its layout in its docstring, how
it is recognised in its ``detect``), and the converter that turns a document-shaped file into
rows.

Line-shaped files (JSON Lines, Parquet) are streamed by :mod:`whilecli.io.read`; the tool that
wrote one is recognised from its keys and sidecars (:func:`whilecli.io.sources.detect` asks
``vf_eval``, ``verifiers_traces``, ``prime_rft``, ``lm_eval``, ``nemo_gym``, ``nemo_rl``,
``nemo_skills``, ``trl`` and ``whileai`` in turn) and its fields resolved by :mod:`whilecli.io.plan`. Files that hold *one document* (a JSON array of
rows, an inspect_ai log, a HELM run, rows whose grade sits inside a list, CSV) are converted
here, in memory, into JSON Lines rows whose canonical keys (``task_id``, ``reward``,
``truncated``, ``model``, ``prompt``) are already set, with a record of where each came from
(:class:`Converted`). Every reader then treats them as JSON Lines, so validation, pooling and
the report work the same for every format.

:data:`FORMATS` is the list ``while formats`` prints: each format, how it is detected, and
which field feeds each canonical field.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from whilecli.io.formats.registry import FORMATS as FORMATS
from whilecli.io.formats.registry import FormatInfo as FormatInfo


@dataclass
class Converted:
    """Rows made from one document, and what the report should say about them."""

    format: str
    rows: list[dict[str, Any]]
    origins: dict[str, str]  # canonical field -> where in the document it came from
    notes: list[str] = field(default_factory=list)
    env: str | None = None  # the evaluation (task, dataset, run) the document names
    #: Where each row came from in the file, in row order (``{"line": N}`` for a CSV record
    #: or a line of JSON Lines, ``{"at": "entry 3"}`` / ``{"at": "member samples/x.json"}``
    #: in a document): errors name the file's own place, never the converted row's index.
    positions: list[dict[str, Any]] = field(default_factory=list)
    #: Canonical field -> the field as the file spells it (``task_id`` -> ``instance_id``),
    #: where a row's field came from one field of the file: refusals name that one.
    spelled: dict[str, str] = field(default_factory=dict)
    #: Where the rows' model was read from a name that is not the writer's own record (a
    #: results folder's name, a config's abbr for the model): check 6 reads it, unsure.
    model_unsure: str | None = None
    #: Where the rows' task id is the writer's own record of which draws are one task's (EvalScope's
    #: ``group_id`` of ``repeats``), the field it came from: a prompt that varies between
    #: those draws (options shuffled per draw) is that task's, never another task's.
    grouped: str | None = None

    def source(self, base: Any) -> Any:
        """``base`` (a :class:`~whilecli.io.sources.Source`) as these rows, in memory."""
        data = b"\n".join(json.dumps(_finite(r), ensure_ascii=False).encode() for r in self.rows)
        return replace(
            base,
            kind="jsonl",
            data=data + b"\n" if data else b"",
            compression=None,
            format=self.format,
            origins=tuple(self.origins.items()),
            notes=tuple(self.notes),
            env=self.env if self.env is not None else base.env,
            positions=tuple(self.positions),
            spelled=tuple(self.spelled.items()),
            model_unsure=self.model_unsure,
            grouped=self.grouped,
        )


def prompt_digest(text: str) -> str:
    """A prompt's text as a short task key (the first 12 hex digits of the SHA-1 of its one
    form, :func:`whilecli.io.shape.canonical_text`), for formats that write no id: the same
    prompt gives the same key in every format and run, whatever its line ends or the
    whitespace around it."""
    from whilecli.io.shape import canonical_text

    return hashlib.sha1(canonical_text(text).encode()).hexdigest()[:12]


def score_origin(
    chosen: str | None, found: list[str], where: Callable[[str], str], kind: str = "scores"
) -> str:
    """Where a grade was read among a row's named scores: the one score (``where`` of its
    name), the only 0/1 score of several, or none (``kind``: what the tool calls them)."""
    if chosen is None:
        return f"none: {len(found)} {kind} ({', '.join(found)}) and no single 0/1 one"
    if len(found) == 1:
        return where(chosen)
    return f"{where(chosen)} (the only 0/1 score of {len(found)})"


def entries(count: int, key: str | None = None) -> list[dict[str, Any]]:
    """Where each of ``count`` elements of a document's list is: ``entry i`` (a top-level
    array) or ``KEY[i]`` (the list under ``KEY``)."""
    return [{"at": f"entry {i}" if key is None else f"{key}[{i}]"} for i in range(count)]


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (a field a tool left out or nulled)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def one_text(value: Any) -> Any:
    """An object holding one text (``{"question": "..."}``, a dataset row or a task's output
    as evaluation tools save them) as its text; else the value as it is."""
    if isinstance(value, dict) and len(value) == 1:
        (only,) = value.values()
        if isinstance(only, str):
            return only
    return value


def _finite(row: dict[str, Any]) -> dict[str, Any]:
    """A non-finite reward written as a string, so the reader names it instead of JSON failing."""
    row = {k: v for k, v in row.items() if v is not None}  # absent: not recorded
    reward = row.get("reward")
    if isinstance(reward, float) and not math.isfinite(reward):
        row["reward"] = str(reward)
    return row


def first_assistant_cut(messages: Any) -> Any:
    """The messages before the first assistant turn: the prompt of a chat transcript."""
    if not isinstance(messages, list):
        return messages
    out = []
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "assistant":
            break
        out.append(message)
    return out


def leave_out_beside(
    sources: list[Any],
    roots: Collection[Path],
    graded: Callable[[Path, Path], bool],
    notes: list[str] | None,
    note: Callable[[int, str], str],
) -> list[Any]:
    """``sources`` less the files under one of a tool's output ``roots`` that
    ``graded(root, path)`` does not take for its rows; ``note(count, shown)`` words the note
    on what was left out, ``shown`` naming up to three of them relative to their root."""
    if not roots:
        return sources
    kept: list[Any] = []
    left: list[str] = []
    for source in sources:
        path = source.path
        root = next((r for r in roots if isinstance(path, Path) and r in path.parents), None)
        if root is not None and not graded(root, path):
            left.append(str(path.relative_to(root)))
            continue
        kept.append(source)
    if left and notes is not None:
        names = sorted(set(left))
        notes.append(note(len(left), ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")))
    return kept
