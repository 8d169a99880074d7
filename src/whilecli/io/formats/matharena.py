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


def is_runs(doc: Any) -> bool:
    """``Runs.to_dict()``: the problem's ``idx`` beside the per-run lists and an aggregate."""
    return (
        isinstance(doc, dict)
        and "idx" in doc
        and all(isinstance(doc.get(k), list) for k in PER_RUN)
        and ("pass_at_1" in doc or "N" in doc)
    )


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
    runs = len(doc["correct"])
    for key in PER_RUN:
        if len(doc[key]) != runs:
            raise InputError(
                f"holds {len(doc[key])} runs where correct holds {runs}: one element per run",
                file=name,
                at=where.rstrip(": ") or None,
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
