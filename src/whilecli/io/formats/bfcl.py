"""Berkeley Function Calling Leaderboard score files (``ShishirPatil/gorilla``,
``berkeley-function-call-leaderboard/bfcl_eval/eval_checker/eval_runner.py``: ``ast_file_runner``,
``relevance_file_runner``, ``multi_turn_runner`` and ``agentic_runner``, each ending in
``write_list_of_dicts_to_file``): ``score/<model>/[<group>/]BFCL_v<N>_<category>_score.json``.

The file is JSON Lines despite its name. Its first line is the category's summary
(``{"accuracy", "correct_count", "total_count"}``); every later line is one *failed* entry
(``id``, ``model_name``, ``test_category``, ``valid: false``, ``error``, ``error_type``,
``prompt``, the model's raw and decoded result). A passing entry is written nowhere in it:
it is counted in ``correct_count`` only. So the rows are the failures (reward 0) and
``correct_count`` passes; the passes' ids are those of the generation file the scorer read
(``result/<model>/[<group>/]BFCL_v<N>_<category>_result.json``, one ``{"id", "result"}`` a
line) that did not fail, where that file lies in the tool's layout, else they are counted
without ids. ``error`` on a failed entry is the checker's verdict, not a harness error;
an ``error_type`` ending in ``inference_error`` is the harness failing to get a reply
(``Error during inference phase``). Each entry is one test: k = 1. Nothing records a
cut-off reply.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from whilecli import jsonout
from whilecli.io.formats import Converted, as_dict

NAME = "bfcl"
#: The summary line every runner inserts first.
SUMMARY = frozenset({"accuracy", "correct_count", "total_count"})
#: How a score file names itself, and its generation file beside it.
SCORE_SUFFIX, RESULT_SUFFIX = "_score.json", "_result.json"


def is_score(first: Any) -> bool:
    """The summary line a BFCL runner writes first: exactly its three counts."""
    return (
        isinstance(first, dict)
        and set(first) == SUMMARY
        and all(isinstance(first[k], int) for k in ("correct_count", "total_count"))
    )


def score_root(path: Any) -> Path | None:
    """The ``score`` folder a score file lies under (its nearest), else None."""
    if not isinstance(path, Path) or not path.name.endswith(SCORE_SUFFIX):
        return None
    return next((folder for folder in path.parents if folder.name == "score"), None)


def result_file(path: Any) -> Path | None:
    """The generation file the scorer read: ``score/...`` mirrored under ``result/...``,
    ``_score.json`` as ``_result.json``; None where the path is not in that layout."""
    root = score_root(path)
    if root is None:
        return None
    name = path.name[: -len(SCORE_SUFFIX)] + RESULT_SUFFIX
    return root.parent / "result" / path.parent.relative_to(root) / name


def _result_ids(path: Path | None) -> list[str] | None:
    """The ids of a generation file, in order; None where it cannot be read."""
    if path is None or not path.is_file():
        return None
    ids: list[str] = []
    try:
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                if line.strip():
                    ids.append(str(as_dict(jsonout.parse(line)).get("id")))
    except (OSError, ValueError):
        return None
    return ids


def _prompt(entry: dict[str, Any]) -> Any:
    """The entry's question (the user turns), wherever its runner put it."""
    prompt = entry.get("prompt")
    return prompt.get("question") if isinstance(prompt, dict) else prompt


def _failed_row(entry: dict[str, Any]) -> dict[str, Any]:
    """One failed entry as a row: reward 0; an inference error is the harness's."""
    error_type = entry.get("error_type") or as_dict(entry.get("error")).get("error_type")
    row: dict[str, Any] = {
        "task_id": str(entry.get("id")),
        "reward": 0.0,
        "model": entry.get("model_name"),
        "prompt": _prompt(entry),
    }
    if isinstance(error_type, str) and error_type.endswith("inference_error"):
        row["error"] = error_type
    return row


def convert(rows: Iterable[tuple[int, dict[str, Any]]], path: Any, name: str) -> Converted:
    """The summary line and the failed entries as one row per test of the category."""
    summary: dict[str, Any] = {}
    failed: dict[str, dict[str, Any]] = {}
    positions: dict[str, dict[str, Any]] = {}
    for lineno, entry in rows:
        if is_score(entry):
            summary = entry
        elif "id" in entry and str(entry["id"]) not in failed:
            failed[str(entry["id"])] = _failed_row(entry)
            positions[str(entry["id"])] = {"line": lineno}
    return _converted(summary, failed, positions, path)


def _converted(
    summary: dict[str, Any],
    failed: dict[str, dict[str, Any]],
    positions: dict[str, dict[str, Any]],
    path: Any,
) -> Converted:
    passes = int(summary.get("correct_count") or 0)
    models = {r["model"] for r in failed.values() if r.get("model")}
    model = next(iter(models)) if len(models) == 1 else _model_folder(path)
    env = _category(path)
    ids = _result_ids(result_file(path))
    passing = [i for i in (ids or []) if i not in failed]
    notes: list[str] = []
    if ids is None or len(passing) != passes:
        passing = [f"{env or NAME}: passed #{i + 1}" for i in range(passes)]
        notes.append(
            f"{passes} passing tests are counted from the score file's correct_count (BFCL"
            " writes only failures there); their ids are in its result file, not found beside"
        )
    out = list(failed.values())
    places = [positions[i] for i in failed]
    for task in passing:
        out.append({"task_id": task, "reward": 1.0, "model": model})
        places.append({"at": "line 1 (correct_count)"})
    for row in out:
        row["model"] = row.get("model") or model
    origins = {
        "task_id": "id (failed entries; passes from the result file, or counted)",
        "reward": "0 for each failed entry, 1 for each of correct_count",
        "truncated": "not recorded",
        "model": "model_name" if models or not model else "the score folder (score/<model>/)",
    }
    unsure = None if models or not model else f"the score folder ({model})"
    return Converted(NAME, out, origins, notes, env=env, positions=places, model_unsure=unsure)


def _model_folder(path: Any) -> str | None:
    """``<model>`` of ``score/<model>/[<group>/]``, where the file lies in that layout."""
    root = score_root(path)
    if root is None or path.parent == root:
        return None
    return path.parent.relative_to(root).parts[0]


def _category(path: Any) -> str | None:
    """``<category>`` of ``BFCL_v<N>_<category>_score.json``."""
    if not isinstance(path, Path) or not path.name.endswith(SCORE_SUFFIX):
        return None
    stem = path.name[: -len(SCORE_SUFFIX)]
    head, _, rest = stem.partition("_")
    version, _, category = rest.partition("_")
    return category if head == "BFCL" and version[:1] == "v" else stem
