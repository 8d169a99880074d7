"""AlpacaEval annotations (``tatsu-lab/alpaca_eval``, ``main.evaluate``: ``annotations.json``
in ``<model outputs' folder>/<annotator>/``, beside ``leaderboard.csv``): one JSON array, one
object per instruction with ``instruction``, ``output_1`` / ``generator_1`` (the reference),
``output_2`` / ``generator_2`` (the model evaluated), ``annotator`` and ``preference`` (the
judge's: 1 prefers ``output_1``, 2 prefers ``output_2``, a weighted annotator's probability in
between; 0 or 1.5 a tie). The reward is ``preference - 1`` (the model's win, 0.5 a tie); a
judge grades. ``model_outputs.json`` beside it holds the replies ungraded."""

from __future__ import annotations

from typing import Any

from whilecli.io.formats import Converted, entries

NAME = "alpaca-eval"


def is_annotations(doc: Any) -> bool:
    return (
        isinstance(doc, list)
        and bool(doc)
        and all(isinstance(x, dict) for x in doc)
        and {"output_1", "output_2", "preference"} <= set(doc[0])
    )


def _win(preference: Any) -> float | None:
    if isinstance(preference, bool) or not isinstance(preference, (int, float)):
        return None
    if preference == 0:
        return 0.5  # a tie, as older annotators write it
    return float(preference) - 1.0


def convert(doc: list[dict[str, Any]], name: str) -> Converted:
    rows = [
        {
            "prompt": row.get("instruction"),
            "completion": row.get("output_2"),
            "model": row.get("generator_2"),
            "reward": _win(row.get("preference")),
            "annotator": row.get("annotator"),
            "preference": row.get("preference"),
        }
        for row in doc
    ]
    origins = {
        "task_id": "hash of instruction",
        "reward": "preference - 1 (the judge's preference for output_2: 1 a win, 0.5 a tie)",
        "truncated": "not recorded",
        "model": "generator_2",
    }
    notes = ["AlpacaEval: a judge (the annotator) grades each reply against the reference"]
    return Converted(NAME, rows, origins, notes, positions=entries(len(rows)))
