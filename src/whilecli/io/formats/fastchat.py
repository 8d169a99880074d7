"""FastChat LLM-judge (MT-Bench) judgments: ``data/<bench>/model_judgment/<judge>_single.jsonl``
(``lm-sys/FastChat``, ``fastchat/llm_judge/gen_judgment.py`` and ``common.py``:
``play_a_match_single`` appends one line per (question, model, turn)).

A single-answer line: ``question_id``, ``model`` (the model whose answer was graded),
``judge`` (``[judge model, prompt name]``, e.g. ``["gpt-4", "single-v1-multi-turn"]``),
``user_prompt`` (the judge's prompt, which quotes the answer), ``judgment`` (the judge's
text), ``score`` (the rating parsed from ``[[N]]``, 1 to 10; -1 when the judge gave none),
``turn`` (1, or 2 for the second turn of a two-turn question) and ``tstamp``. One file holds
every model the command judged.

A task is one turn of one question, ``(question_id, turn)``: the second turn is another
prompt, graded on its own. The model is the row's ``model`` (a file of several models is
several policies: ``--by model`` routes each). The grade is the judge's rating, which is no
pass/fail (``--pass-threshold`` says what passes); -1 is no grade (the row is ungraded). A
judge grades every row. Pairwise files (``<judge>_pair.jsonl``: ``model_1``, ``model_2``,
``g1_winner``, ``g2_winner``) compare two answers and grade neither: refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from whilecli.errors import InputError
from whilecli.io.formats import Converted, leave_out_beside

NAME = "fastchat"
#: What ``play_a_match_single`` writes when the judge's text holds no ``[[rating]]``.
NO_RATING = -1


def _judge(value: Any) -> str | None:
    """``[judge model, prompt name]`` as ``model/prompt``; None when it is not that pair."""
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value):
        return f"{value[0]}/{value[1]}"
    return None


def is_single(first: dict[str, Any]) -> bool:
    return (
        all(k in first for k in ("question_id", "model", "score", "turn"))
        and _judge(first.get("judge")) is not None
    )


def is_pair(first: dict[str, Any]) -> bool:
    return (
        all(k in first for k in ("question_id", "model_1", "model_2", "g1_winner"))
        and _judge(first.get("judge")) is not None
    )


#: What a pairwise file is, refused when named and skipped inside a folder.
PAIR = (
    "FastChat pairwise judgments (model_1 against model_2, g1_winner / g2_winner) grade no"
    " single answer; the single-answer judgments (gen_judgment.py --mode single:"
    " <judge>_single.jsonl) do"
)


def convert(rows: Iterable[tuple[int, dict[str, Any]]], name: str) -> Converted:
    out: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    unrated = 0
    for lineno, row in rows:
        score = row.get("score")
        if score == NO_RATING and not isinstance(score, bool):
            score = None
            unrated += 1
        turn = row.get("turn")
        if not isinstance(turn, int) or isinstance(turn, bool):
            raise InputError(
                "turn is not a turn number (FastChat writes 1 or 2)",
                file=name,
                line=lineno,
                field="turn",
            )
        out.append(
            {
                "task_id": f"{row.get('question_id')}:turn{turn}",
                "reward": score,
                "model": row.get("model"),
                "judge": _judge(row.get("judge")),
                "turn": turn,
            }
        )
        positions.append({"line": lineno})
    origins = {
        "task_id": "(question_id, turn): each turn of a question is a task",
        "reward": "score (the judge's rating, 1 to 10: pass --pass-threshold)",
        "truncated": "not recorded",
        "model": "model (the model whose answer the judge rated)",
    }
    notes = []
    if unrated:
        notes.append(f"{unrated} judgments hold no rating (score -1): those rows are ungraded")
    spelled = {"task_id": "question_id", "reward": "score"}
    return Converted(NAME, out, origins, notes, positions=positions, spelled=spelled)


#: The folder both LLM-judge benches write their judgments to, beside ``model_answer/``,
#: ``question.jsonl`` and ``reference_answer/`` (FastChat ``data/<bench>/``; Arena-Hard-Auto
#: ``data/<bench>/`` likewise, its judgments one folder deeper, per judge).
JUDGMENTS = "model_judgment"


def judged_only(sources: list[Any], notes: list[str] | None = None) -> list[Any]:
    """A folder's files, less what an LLM-judge bench folder holds beside its judgments: the
    questions, the models' answers and the reference answers (none of them graded)."""
    benches = set()
    for source in sources:
        path = source.path
        if not isinstance(path, Path):
            continue
        for folder in path.parents:
            if folder.name == JUDGMENTS and (folder.parent / "model_answer").is_dir():
                benches.add(folder.parent)
    return leave_out_beside(
        sources,
        benches,
        lambda bench, path: (bench / JUDGMENTS) in path.parents,
        notes,
        lambda count, shown: (
            f"LLM-judge bench folder: its rows are the judgments under {JUDGMENTS}/; {count}"
            f" files beside them ({shown}) are the questions and the answers judged, left out"
        ),
    )
