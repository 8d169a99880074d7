"""W&B Weave evaluation results (POST /v2/{entity}/{project}/eval_results/query, the v2
Evaluation REST API: rows[] of row_digest and evaluations[] of trials[], each trial's scores by
scorer, a summary naming each evaluation's model_ref): a dataset row is a task, its trials
rollouts, the one 0/1 scorer output the grade, the model the summary's model_ref."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from whilecli.errors import InputError
from whilecli.io.read import read_rows

ENTITY = "weave:///acme/capitals"
#: Per dataset row digest, each trial's (correct, similarity): None for a trial no scorer scored.
TRIALS: dict[str, list[tuple[bool, float] | None]] = {
    "R0Cx2kE1aQ8h": [(True, 0.9), (True, 0.95), (False, 0.3)],
    "R3fT9bWq0LmZ": [(False, 0.2), (False, 0.4), None],
    "R7pYc1Nn5sVd": [(True, 1.0), (False, 0.5), (True, 0.8)],
}


def _trial(n: int, scored: tuple[bool, float] | None) -> dict[str, Any]:
    return {
        "predict_and_score_call_id": f"0195f2c1-0000-7000-8000-{n:012d}",
        "predict_call_id": f"0195f2c1-1111-7000-8000-{n:012d}",
        "model_output": {"answer": "Paris" if scored and scored[0] else "Lyon"},
        "scores": {}
        if scored is None
        else {"exact_match": {"correct": scored[0]}, "similarity": scored[1]},
        "model_latency_seconds": 0.84,
        "total_tokens": 57,
        "scorer_call_ids": {},
    }


def _answer(
    calls: tuple[str, ...] = ("0195f2c0-eval-0001",), summary: bool = True
) -> dict[str, Any]:
    rows = []
    n = 0
    for digest, trials in TRIALS.items():
        evaluations = []
        for call in calls:
            listed = []
            for scored in trials:
                listed.append(_trial(n, scored))
                n += 1
            evaluations.append({"evaluation_call_id": call, "trials": listed})
        rows.append(
            {
                "row_digest": digest,
                "raw_data_row": {"question": f"What is the capital of country {digest[-3:]}?"},
                "evaluations": evaluations,
            }
        )
    doc: dict[str, Any] = {"rows": rows, "total_rows": len(rows), "warnings": []}
    if summary:
        doc["summary"] = {
            "row_count": len(rows),
            "evaluations": [
                {
                    "evaluation_call_id": call,
                    "trial_count": 9,
                    "scorer_stats": [],
                    "evaluation_ref": f"{ENTITY}/object/capitals-eval:Yx7TqW2b",
                    "model_ref": f"{ENTITY}/object/CapitalsModel:v{i}Hk3s",
                    "display_name": f"capitals-eval-{i}",
                    "trace_id": f"0195f2c0-trace-{i:04d}",
                    "started_at": "2026-03-06T09:12:07Z",
                }
                for i, call in enumerate(calls)
            ],
        }
    return doc


def _write(root: Path, doc: dict[str, Any]) -> Path:
    path = root / "eval_results.json"
    path.write_text(json.dumps(doc, indent=2))
    return path


def test_trials_of_dataset_rows_read_as_rollouts(tmp_path: Path) -> None:
    rows = read_rows([str(_write(tmp_path, _answer()))])
    frame = rows.frame.collect()
    per = frame.group_by("task_id").agg(n=pl.len(), c=pl.col("passed").cast(pl.Int64).sum())
    assert sorted(per.iter_rows()) == [
        ("R0Cx2kE1aQ8h", 3, 2),
        ("R3fT9bWq0LmZ", 2, 0),  # the trial no scorer scored aside
        ("R7pYc1Nn5sVd", 3, 2),
    ]
    assert rows.facts.ungraded == 1
    assert set(frame["model"].to_list()) == {"CapitalsModel:v0Hk3s"}
    assert rows.format == "weave"
    assert any("exact_match.correct grades" in n for n in rows.notes)


def test_another_scorer_is_a_map_away(tmp_path: Path) -> None:
    path = _write(tmp_path, _answer())
    rows = read_rows([str(path)], mapping={"reward": "scores.similarity"}, pass_threshold=0.5)
    assert rows.frame.collect()["passed"].sum() == 5


def test_two_evaluations_are_two_models(tmp_path: Path) -> None:
    path = _write(tmp_path, _answer(("0195f2c0-eval-0001", "0195f2c0-eval-0002")))
    rows = read_rows([str(path)])
    assert set(rows.frame.collect()["model"].to_list()) == {
        "CapitalsModel:v0Hk3s",
        "CapitalsModel:v1Hk3s",
    }
    assert any("--by model" in n for n in rows.notes)


def test_two_evaluations_without_a_summary_are_refused(tmp_path: Path) -> None:
    doc = _answer(("0195f2c0-eval-0001", "0195f2c0-eval-0002"), summary=False)
    with pytest.raises(InputError, match="query with include_summary true"):
        read_rows([str(_write(tmp_path, doc))])


def test_a_trial_that_is_no_object_is_refused_at_its_place(tmp_path: Path) -> None:
    doc = _answer()
    doc["rows"][1]["evaluations"][0]["trials"][2] = "oops"
    with pytest.raises(InputError, match=r"rows\[1\]\.evaluations\[0\]\.trials\[2\]"):
        read_rows([str(_write(tmp_path, doc))])
