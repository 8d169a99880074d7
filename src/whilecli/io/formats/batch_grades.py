"""Grades written beside a batch API's output lines (Anthropic Message Batches, the OpenAI
Batch API, Vertex AI batch prediction): the APIs write the replies, never their grades, so a
file of their lines is graded by a key the caller wrote on each line beside the API's own.

One rule for every batch format: the first key of the reward aliases (``reward``, ``score``,
``correct``, ...) any line carries grades every line; a file whose lines carry no such key
and nothing else beside the API's keys is refused, naming the fix; a file that carries other
keys is read ungraded, so ``--map reward=KEY`` reads one of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from whilecli.errors import InputError
from whilecli.io.aliases import REWARD_ALIASES

#: The grades a line may carry beside the API's keys (the reward aliases that are one key).
GRADE_KEYS = tuple(alias for alias in REWARD_ALIASES if "." not in alias)


def graded_beside(
    rows: Sequence[dict[str, Any]],
    lines: Sequence[Mapping[str, Any]],
    api_keys: frozenset[str],
    *,
    name: str,
    what: str,
    where: str,
    field: str,
    place: Mapping[str, Any],
) -> tuple[list[str], list[str]]:
    """Set each row's ``reward`` from the first grade key the file's ``lines`` carry, and
    return (the grade keys found, the notes to say). A file with nothing beside the API's
    keys is refused at ``place`` (its first line) of file ``name``, naming ``field``: ``what``
    (the format's words) holds no grade, write each one beside ``where``."""
    grades = [k for k in GRADE_KEYS if any(k in line for line in lines)]
    if grades:
        for row, line in zip(rows, lines, strict=True):
            row["reward"] = line.get(grades[0])
    beside = any(set(line) - api_keys for line in lines)
    if rows and not grades and not beside:
        raise InputError(
            f"{what} holds the replies, not their grades: write each reply's grade beside"
            f" {where} (a 'reward' key on its line) and read that file; a grade under another"
            " key: pass --map reward=KEY",
            file=name,
            field=field,
            **place,
        )
    notes = []
    if len(grades) > 1:
        notes.append(
            f"lines carry {', '.join(grades)}: {grades[0]} grades; --map reward=KEY picks another"
        )
    return grades, notes


@dataclass
class BatchLines:
    """A batch output file's lines read one by one: each line's row, what kind of line it
    was (the reader's own word: a reply, ``error``, ...), the line itself and its place."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    lines: list[dict[str, Any]] = field(default_factory=list)
    positions: list[dict[str, Any]] = field(default_factory=list)


def read_lines(
    lines: Iterable[tuple[dict[str, Any], dict[str, Any]]],
    name: str,
    read: Callable[[dict[str, Any], dict[str, Any], str], tuple[dict[str, Any], str]],
    what: str = "an output line",
) -> BatchLines:
    """Every line of a batch API's output file through its reader's ``read(place, line,
    name)``; a line that is no JSON object is refused at its place."""
    from whilecli.io.shape import kind_words

    out = BatchLines()
    for place, line in lines:
        if not isinstance(line, dict):
            raise InputError(
                f"{what} must be a JSON object, found {kind_words(line)}", file=name, **place
            )
        row, kind = read(place, line, name)
        out.rows.append(row)
        out.kinds.append(kind)
        out.lines.append(line)
        out.positions.append(place)
    return out


def custom_id_row(
    place: dict[str, Any], line: dict[str, Any], name: str, kept_out: frozenset[str]
) -> dict[str, Any]:
    """The row a batch line keyed by the caller's ``custom_id`` starts as (the Anthropic
    Message Batches' and the OpenAI Batch API's lines): the keys the caller wrote beside the
    API's (all but ``kept_out``: the API's keys and the row's own), its ``custom_id``, and
    the task it names (a ``task_id`` written beside it, else the ``custom_id``). A line whose
    ``custom_id`` is no text is refused at that field."""
    from whilecli.io.shape import kind_words

    custom_id = line.get("custom_id")
    if not isinstance(custom_id, str) or not custom_id:
        raise InputError(
            f"custom_id is {kind_words(custom_id)}, not the request's id",
            file=name,
            field="custom_id",
            **place,
        )
    row: dict[str, Any] = {k: v for k, v in line.items() if k not in kept_out}
    row["custom_id"] = custom_id
    row["task_id"] = line.get("task_id", custom_id)
    return row
