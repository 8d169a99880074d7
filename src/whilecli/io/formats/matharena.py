"""MathArena runs (``eth-sri/matharena``, ``src/matharena/runs.py``: ``Runs.save_to_file``).

Each problem of a competition is one file, ``outputs/<competition>/<solver>/<idx>.json``,
holding every run of one solver (a model at its settings) on it: the problem (``idx``,
``problem``, ``gold_answer``, ``source``, ``types``), the aggregates (``N``, ``cost``,
``pass_at_1``), and one element per run in each of ``answers`` (the parsed answer),
``correct`` (the grade), ``warnings``, ``messages`` (the run's conversation), ``judgment``,
``history`` (an agent's steps) and ``detailed_costs`` (``input_tokens``, ``output_tokens``,
``cost``, ``time``).

A problem is a task and each run a rollout. ``correct`` is a boolean where the competition
has final answers, a text (``pass_at_1`` then reads ``"TODO Grading"``) until a proof is
graded: ungraded. The reply is the conversation's last assistant message. The solver is
named by the folder alone (the file writes no model) and the token cap by the model's
config, so neither is recorded here: pass ``--model``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from whilecli.errors import InputError
from whilecli.io.formats import Converted, as_dict, as_list

NAME = "matharena"
#: The per-run lists of a runs file, one element per run.
PER_RUN = ("answers", "correct", "messages")


#: Keys a runs file writes beside ``correct`` (:meth:`Runs.to_dict`'s order).
KEYS = ("idx", "problem", "gold_answer", "N", "cost", "pass_at_1", "answers", "warnings")
KEYS_MORE = ("messages", "judgment", "history", "detailed_costs")


def is_runs(doc: Any) -> bool:
    """``Runs.to_dict()`` as one file: ``correct`` beside at least four of the keys it
    writes with it, or eight of them without it (a file whose lists are broken or missing
    is still one, and its fault is named)."""
    if not isinstance(doc, dict):
        return False
    known = sum(k in doc for k in (*KEYS, *KEYS_MORE))
    return known >= 4 if "correct" in doc else known >= 8


def is_runs_line(first: dict[str, Any]) -> bool:
    """A runs object written on a line: as :func:`is_runs`, its ``correct`` a list (a
    line holding one graded reply beside an ``idx`` and ``answers`` is a row)."""
    return is_runs(first) and isinstance(first.get("correct"), list)


def _grade(value: Any, name: str, at: str) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if value is None or isinstance(value, str):  # a proof not yet graded
        return None
    if isinstance(value, (int, float)) and 0 <= value <= 1:
        return float(value)
    raise InputError(
        f"must be true or false (the run's grade), found {value!r}",
        file=name,
        at=at,
        field="correct",
    )


def _reply(conversation: Any) -> Any:
    """The text of a run's last assistant message, where it has one."""
    for message in reversed(as_list(conversation)):
        message = as_dict(message)
        if message.get("role") == "assistant" and isinstance(message.get("content"), str):
            return message["content"]
    return None


def _problem_rows(doc: dict[str, Any], name: str, where: str) -> list[dict[str, Any]]:
    """One row per run of one problem's file (or line), each with its place."""
    where_at = where.rstrip(": ") or None
    if doc.get("idx") is None or isinstance(doc["idx"], (dict, list, bool)):
        raise InputError(
            f"must be the problem's index, found {doc.get('idx')!r}",
            file=name,
            at=where_at,
            field="idx",
        )
    for key in PER_RUN:
        if not isinstance(doc.get(key), list):
            raise InputError(
                f"must be a list with one element per run, found {doc.get(key)!r}",
                file=name,
                at=where_at,
                field=key,
            )
    runs = len(doc["correct"])
    for key in PER_RUN:
        if len(doc[key]) != runs:
            raise InputError(
                f"holds {len(doc[key])} runs where correct holds {runs}: one element per run",
                file=name,
                at=where_at,
                field=key,
            )
    costs = as_list(doc.get("detailed_costs"))
    rows = []
    for i in range(runs):
        at = f"{where}run {i}"
        cost = as_dict(costs[i]) if i < len(costs) else {}
        rows.append(
            {
                "task_id": str(doc["idx"]),
                "reward": _grade(doc["correct"][i], name, at),
                "prompt": doc.get("problem"),
                "completion": _reply(doc["messages"][i]),
                "answer": doc["answers"][i],
                "completion_tokens": cost.get("output_tokens"),
                "@": at,
            }
        )
    return rows


def convert(docs: Iterable[tuple[str, dict[str, Any]]], name: str) -> Converted:
    """Rows of runs files: ``docs`` is each problem with its place (``""`` for a whole file,
    ``"line N: "`` for a line of JSON Lines)."""
    rows = [row for where, doc in docs for row in _problem_rows(doc, name, where)]
    if not rows:
        raise InputError("no runs: the problem's lists are empty", file=name, field="correct")
    positions = [{"at": row.pop("@")} for row in rows]
    notes = []
    ungraded = sum(row["reward"] is None for row in rows)
    if ungraded == len(rows):
        raise InputError(
            "no run is graded yet (a proof awaiting its grade): grade the competition first",
            file=name,
            field="correct",
        )
    if ungraded:
        notes.append(
            f"{ungraded} of {len(rows)} runs hold no true/false correct (a proof not yet"
            " graded): ungraded"
        )
    origins = {
        "task_id": "idx (the problem; each element of its lists is a run)",
        "reward": "correct[] (one per run)",
        "truncated": "not recorded (the token cap is in the model's config)",
        "model": "not recorded (the solver's folder names it: pass --model)",
    }
    spelled = {"task_id": "idx", "reward": "correct"}
    return Converted(NAME, rows, origins, notes, positions=positions, spelled=spelled)
