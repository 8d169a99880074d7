"""Arena-Hard-Auto judgments: ``data/<bench>/model_judgment/<judge model>/<model>.jsonl``
(``lmarena/arena-hard-auto``, ``gen_judgment.py``: ``judgment`` appends one line per question).

A line: ``question_id`` (``uid`` in the v2 layout), ``model`` (the model whose answer was
judged), ``judge`` (the judge model's name), ``baseline`` (v2 only; the baseline model of
``judge_config.yaml`` otherwise) and ``games``: with ``pairwise: true`` two games, each
``{"user_prompt", "judgment", "score"}``. ``score`` is the judge's verdict label parsed from
``[[...]]``: ``A>>B``, ``A>B``, ``A=B``, ``B>A``, ``B>>A``, or null when the judge gave none.
In game 1 assistant A is the baseline and B the model; game 2 swaps them (``game % 2 == 1``),
as ``show_result.py`` reads them back.

A task is a question (one answer of the model to it). The grade is the model's share of its
games against the baseline, as ``show_result.py`` scores a game: a win 1 (a strong win ``>>``
counts three times in its Bradley-Terry fit, but wins either way), a tie 0.5, a loss 0; a game
with no verdict is left out, and a line with none is ungraded. So the default pass is winning
both games; ``--pass-threshold 0.5`` passes an answer that wins half. A judge grades every row.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from whilecli.errors import InputError
from whilecli.io.formats import Converted, as_dict

NAME = "arena-hard"
#: The model's result in a game where it is assistant B (game 1): verdict label -> share.
AS_B = {"B>>A": 1.0, "B>A": 1.0, "A=B": 0.5, "A>B": 0.0, "A>>B": 0.0}
#: ... and where it is assistant A (game 2, positions swapped).
AS_A = {"A>>B": 1.0, "A>B": 1.0, "A=B": 0.5, "B>A": 0.0, "B>>A": 0.0}


def is_judgment(first: dict[str, Any]) -> bool:
    """A line as ``judgment`` writes it: a question id, ``model``, a ``judge`` name and
    ``games`` (a line whose games are not a list of games is refused by name)."""
    return (
        ("question_id" in first or "uid" in first)
        and "model" in first
        and isinstance(first.get("judge"), str)
        and "games" in first
    )


def share(games: list[Any]) -> float | None:
    """The model's share of the games with a verdict (win 1, tie 0.5, loss 0); None when no
    game has one."""
    results = []
    for i, game in enumerate(games):
        label = as_dict(game).get("score")
        table = AS_B if i % 2 == 0 else AS_A
        if isinstance(label, str) and label.strip() in table:
            results.append(table[label.strip()])
    return sum(results) / len(results) if results else None


def convert(rows: Iterable[tuple[int, dict[str, Any]]], name: str) -> Converted:
    out: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    unjudged = 0
    baselines: set[str] = set()
    key = "question_id"
    for lineno, row in rows:
        games = row.get("games")
        if not isinstance(games, list) or not all(isinstance(g, dict) for g in games):
            raise InputError(
                "games is not a list of games (each with a score)",
                file=name,
                line=lineno,
                field="games",
            )
        reward = share(games)
        unjudged += reward is None
        if isinstance(row.get("baseline"), str):
            baselines.add(row["baseline"])
        key = "question_id" if "question_id" in row else "uid"
        task = row.get(key)
        out.append(
            {
                "task_id": None if task is None else str(task),
                "reward": reward,
                "model": row.get("model"),
                "judge": row.get("judge"),
            }
        )
        positions.append({"line": lineno})
    against = f" against {', '.join(sorted(baselines))}" if baselines else " against the baseline"
    origins = {
        "task_id": "question_id (uid in the v2 layout)",
        "reward": f"the model's share of its games{against}: a win 1, a tie 0.5, a loss 0"
        " (the judge's verdict labels; game 2 swaps the positions)",
        "truncated": "not recorded",
        "model": "model",
    }
    notes = []
    if unjudged:
        notes.append(f"{unjudged} questions hold no verdict in any game: those rows are ungraded")
    spelled = {"task_id": key, "reward": "games[].score"}
    return Converted(NAME, out, origins, notes, positions=positions, spelled=spelled)
