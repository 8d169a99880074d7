"""MLE-bench grading reports (``openai/mle-bench``, ``mlebench/grade.py``: ``grade_jsonl``
writes ``<output_dir>/<timestamp>_grading_report.json``, ``aggregate_reports``'s summary):
counts (``total_runs``, ``total_medals``, ``total_valid_submissions``, ...) beside
``competition_reports[]``, one ``CompetitionReport.to_dict()`` per graded submission
(``mlebench/grade_helpers.py``): ``competition_id``, ``score`` (the competition's metric, null
for an invalid submission), the medal thresholds, ``any_medal``, ``gold_medal``,
``silver_medal``, ``bronze_medal``, ``above_median``, ``submission_exists``,
``valid_submission``, ``is_lower_better``, ``created_at`` and ``submission_path``.

A competition is a task; each of its reports (one per seed in the submissions JSONL) is a
rollout. The grade is ``any_medal``, MLE-bench's headline metric; a missing or invalid
submission earns no medal (MLE-bench counts it a failure, as here). ``score`` is each
competition's own metric (lower is better in some), never a pass. MLE-bench writes no model
and no stop reason into the report.
"""

from __future__ import annotations

from typing import Any

from whilecli.errors import InputError
from whilecli.io.formats import Converted

NAME = "mle-bench"
#: What each entry of ``competition_reports`` must carry to be read.
REQUIRED = ("competition_id", "any_medal")


def is_report(doc: Any) -> bool:
    """``aggregate_reports``'s summary: a list ``competition_reports`` of entries with
    ``competition_id`` and ``any_medal``, beside the run counts."""
    if not isinstance(doc, dict) or "total_runs" not in doc:
        return False
    entries = doc.get("competition_reports")
    return isinstance(entries, list) and any(
        isinstance(e, dict) and "competition_id" in e and "any_medal" in e for e in entries
    )


def convert(doc: dict[str, Any], name: str) -> Converted:
    rows: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    invalid = 0
    for i, entry in enumerate(doc["competition_reports"]):
        at = f"competition_reports[{i}]"
        if not isinstance(entry, dict):
            raise InputError(
                f"a competition report must be a JSON object, found {type(entry).__name__}",
                file=name,
                at=at,
            )
        for key in REQUIRED:
            if key not in entry:
                raise InputError("missing from the competition report", file=name, at=at, field=key)
        task, medal = entry["competition_id"], entry["any_medal"]
        if not isinstance(task, str) or not task:
            raise InputError("not a competition id", file=name, at=at, field="competition_id")
        if not isinstance(medal, bool):
            raise InputError(
                f"must be true or false, found {medal!r}", file=name, at=at, field="any_medal"
            )
        invalid += entry.get("valid_submission") is False
        rows.append(
            {
                "task_id": task,
                "reward": float(medal),
                "competition_score": entry.get("score"),
                "above_median": entry.get("above_median"),
            }
        )
        positions.append({"at": at})
    if not rows:
        raise InputError("no rows: the report's competition_reports is empty", file=name)
    notes = []
    if invalid:
        notes.append(
            f"{invalid} of {len(rows)} submissions are missing or invalid: no medal, counted as"
            " failures (as MLE-bench counts them)"
        )
    origins = {
        "task_id": "competition_reports[].competition_id (its seeds are rollouts)",
        "reward": "competition_reports[].any_medal",
        "truncated": "not recorded",
        "model": "not recorded (pass --model)",
    }
    spelled = {"task_id": "competition_id", "reward": "any_medal"}
    return Converted(NAME, rows, origins, notes, positions=positions, spelled=spelled)
