"""LiveBench ground-truth judgments (``LiveBench/LiveBench``,
``livebench/gen_ground_truth_judgment.py``: ``play_a_match_gt``):
``data/<bench>/<category>/<task>/model_judgment/ground_truth_judgment.jsonl``, one line per
(question, model): ``question_id``, ``task``, ``model``, ``score`` (the task's own scorer:
0 or 1 for most tasks, a fraction for partial credit such as zebra puzzles and connections),
``turn`` (always 1), ``tstamp``, ``category`` and, for some tasks, ``subtask``. The file is
de-duplicated per (question, model) and holds every model the command scored: each model
answered each question once (``--by model`` routes each apart). The model's answers
(``model_answer/<model>.jsonl``: ``choices[0].turns``) carry no grade and are left out of a
bench folder. No finish reason is recorded.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from whilecli.io.formats import Converted

NAME = "livebench"
KEYS = ("question_id", "task", "model", "score", "turn", "tstamp", "category")


def is_judgment(first: dict[str, Any]) -> bool:
    """A ``play_a_match_gt`` line: its keys, and no judge (FastChat's lines name one)."""
    return all(k in first for k in KEYS) and "judge" not in first


def convert(rows: Iterable[tuple[int, dict[str, Any]]], name: str) -> Converted:
    out: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    tasks: set[str] = set()
    for lineno, row in rows:
        tasks.add(str(row.get("task")))
        out.append(
            {
                "task_id": row.get("question_id"),
                "reward": row.get("score"),
                "model": row.get("model"),
                "category": row.get("category"),
            }
        )
        positions.append({"line": lineno})
    origins = {
        "task_id": "question_id (each model answered once)",
        "reward": "score (the task's scorer; partial credit on some tasks)",
        "truncated": "not recorded",
        "model": "model (one file holds every scored model: --by model)",
        "env": "task",
    }
    spelled = {"task_id": "question_id", "reward": "score"}
    env = tasks.pop() if len(tasks) == 1 else None
    return Converted(NAME, out, origins, env=env, positions=positions, spelled=spelled)
