"""Humanity's Last Exam evaluations (``centerforaisafety/hle``, ``hle_eval``).

``run_model_predictions.py`` writes ``hle_<model>.json``: one object keyed by each
question's ``id``, each value ``{"model", "response", "usage"}`` (the chat completion's
``usage``: ``completion_tokens``, ``prompt_tokens``, ...). Nothing in it is graded.

``run_judge_results.py`` copies each prediction into ``judged_<predictions file>.json`` and
adds the judge's structured answer under ``judge_response``: ``correct_answer``,
``model_answer``, ``reasoning``, ``correct`` (``"yes"`` or ``"no"``, a ``Literal`` of its
``ExtractedAnswer``) and ``confidence``. Its metric counts a question correct where
``"yes"`` is in ``correct``; a question the judge failed on is left out of the file.

A question is a task, each file one draw of it (temperature 0 by default: several judged
files of one model are its repeats); the grade is the judge's ``correct`` (an LLM judge
grades every row: ``o3-mini`` by default); the model is each value's ``model``. The token
cap (``--max_completion_tokens``) is not written, and no finish reason: truncation is not
recorded.
"""

from __future__ import annotations

from typing import Any

from whilecli.errors import InputError
from whilecli.io.formats import Converted, as_dict

NAME = "hle"
#: The judge's verdicts (``ExtractedAnswer.correct``).
VERDICTS = {"yes": 1.0, "no": 0.0}


def _prediction(value: Any) -> bool:
    return isinstance(value, dict) and ("response" in value or "judge_response" in value)


def _predictions(doc: Any) -> bool:
    """Most values of a non-empty object are predictions (a ``response``, or the judge's
    ``judge_response``): a file with a broken entry is still one, and its fault is named."""
    if not isinstance(doc, dict) or not doc:
        return False
    return 2 * sum(map(_prediction, doc.values())) >= len(doc) and any(
        _prediction(v) and "model" in v for v in doc.values()
    )


def is_judged(doc: Any) -> bool:
    """``run_judge_results.py``'s file: predictions keyed by question, judged."""
    return _predictions(doc) and any(
        isinstance(v, dict) and isinstance(v.get("judge_response"), dict) for v in doc.values()
    )


def is_predictions(doc: Any) -> bool:
    """``run_model_predictions.py``'s file: predictions keyed by question, none judged yet."""
    return (
        _predictions(doc)
        and not any(isinstance(v, dict) and "judge_response" in v for v in doc.values())
        and any(isinstance(v, dict) and isinstance(v.get("usage"), dict) for v in doc.values())
    )


#: What an unjudged predictions file is, as a sidecar: left out of a folder, refused when named.
PREDICTIONS = (
    "HLE predictions (run_model_predictions.py), not judged yet: run_judge_results.py writes"
    " the graded judged_*.json beside them"
)


def _grade(value: Any, name: str, at: str) -> float | None:
    if value is None:
        return None
    text = value.strip().lower() if isinstance(value, str) else None
    if text not in VERDICTS:
        raise InputError(
            f"must be 'yes' or 'no' (the judge's verdict), found {value!r}",
            file=name,
            at=at,
            field="judge_response.correct",
        )
    return VERDICTS[text]


def convert(doc: dict[str, Any], name: str) -> Converted:
    rows: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    for key, prediction in doc.items():
        at = f"question {key!r}"
        if not isinstance(prediction, dict):
            raise InputError(
                "must be the question's prediction (an object with model, response and"
                f" judge_response), found {type(prediction).__name__}",
                file=name,
                at=at,
            )
        judged = prediction.get("judge_response")
        if judged is not None and not isinstance(judged, dict):
            raise InputError(
                f"must be the judge's object, found {type(judged).__name__}",
                file=name,
                at=at,
                field="judge_response",
            )
        verdict = as_dict(judged)
        model = prediction.get("model")
        if model is not None and not isinstance(model, str):
            raise InputError(
                f"must be the model's name, found {model!r}", file=name, at=at, field="model"
            )
        rows.append(
            {
                "task_id": str(key),
                "reward": _grade(verdict.get("correct"), name, at),
                "model": model or None,
                "completion": prediction.get("response"),
                "completion_tokens": as_dict(prediction.get("usage")).get("completion_tokens"),
                "judge_confidence": verdict.get("confidence"),
            }
        )
        positions.append({"at": at})
    notes = []
    unjudged = sum(row["reward"] is None for row in rows)
    if unjudged == len(rows):
        raise InputError(
            "no question holds the judge's verdict ('yes' or 'no'): route the file"
            " run_judge_results.py wrote",
            file=name,
            field="judge_response.correct",
        )
    if unjudged:
        notes.append(
            f"{unjudged} of {len(rows)} questions hold no judge_response.correct (not judged"
            " yet): ungraded"
        )
    origins = {
        "task_id": "the keys of the judged file (each question's id)",
        "reward": "judge_response.correct == 'yes' (run_judge_results.py's LLM judge)",
        "truncated": "not recorded (no finish reason; the token cap is not written)",
        "model": "model",
    }
    spelled = {"reward": "judge_response.correct"}
    return Converted(NAME, rows, origins, notes, env="hle", positions=positions, spelled=spelled)
