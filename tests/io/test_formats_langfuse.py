"""Langfuse traces and observations table exports (the export button's JSON / JSONL; worker
getDatabaseReadStream.ts, getChunkWithFlattenedScores): a trace is a rollout, its input the
task, a score column (a list of the trace's values of that score) the grade, averaged; an
export with no score column is refused naming why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io.read import read_rows

#: Per question, each trace's correctness (k = 3).
GRADES = {
    "What is 6 times 7?": [1, 1, 0],
    "What is the capital of France?": [0, 0, 0],
    "What is 2 + 2?": [1, 0, 1],
    "Which planet is largest?": [1, 1, 1],
}


def _trace(n: int, question: str, grade: int | None) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": f"trace-{n:04d}",
        "projectId": "clx0proj",
        "timestamp": "2025-03-01T10:00:00.000Z",
        "tags": ["experiment"],
        "bookmarked": False,
        "name": "qa-run",
        "release": None,
        "version": None,
        "userId": None,
        "sessionId": None,
        "public": False,
        "input": {"question": question},
        "output": {"answer": "42" if grade else "I do not know"},
        "metadata": {"run": "run-1"},
        "latency": 1.25,
        "usage": {"promptTokens": 20, "completionTokens": 5, "totalTokens": 25},
        "inputCost": None,
        "outputCost": None,
        "totalCost": None,
        "level": "DEFAULT",
        "errorCount": 0,
        "warningCount": 0,
        "defaultCount": 2,
        "debugCount": 0,
        "observationCount": 2,
        "inputTokens": 20,
        "outputTokens": 5,
        "totalTokens": 25,
        "comments": [],
    }
    row["correctness"] = None if grade is None else [grade]
    row["helpfulness"] = None if grade is None else [0.9 if grade else 0.2, 0.7]
    row["tone"] = None if grade is None else ["friendly"]
    return row


def _traces() -> list[dict[str, Any]]:
    rows = []
    for question, grades in GRADES.items():
        rows += [_trace(len(rows), question, g) for g in grades]
    return rows


def test_a_traces_export_reads_its_input_as_the_task_and_its_0_1_score(tmp_path: Path) -> None:
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(_traces(), indent=2))
    rows = read_rows([str(path)])
    assert rows.format == "langfuse"
    frame = rows.frame.collect()
    counts = frame.group_by("task_id").len()["len"].to_list()
    assert sorted(counts) == [3, 3, 3, 3]
    passes = frame.group_by("task_id").agg(c=pl.col("passed").cast(pl.Int64).sum())
    assert sorted(passes["c"].to_list()) == [0, 2, 2, 3]
    assert all(t.startswith("input:") for t in frame["task_id"].to_list())
    assert frame["model"].drop_nulls().to_list() == []
    assert any("correctness grades" in note for note in rows.notes)


def test_the_jsonl_export_and_route_agree(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _traces()))
    done = CliRunner().invoke(app, ["route", str(path), "-v"])
    assert done.exit_code in (0, 1), done.output
    assert "format: langfuse" in done.output
    assert "reward ← correctness (its values averaged)" in done.output
    assert "GRPO" in done.output.splitlines()[0]


def test_another_score_is_a_map_away_and_its_values_are_averaged(tmp_path: Path) -> None:
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(_traces()))
    rows = read_rows([str(path)], mapping={"reward": "scores.helpfulness"}, pass_threshold=0.5)
    frame = rows.frame.collect()
    assert sorted(set(frame["reward"].to_list())) == [pytest.approx(0.45), pytest.approx(0.8)]


def test_an_unscored_export_is_refused_naming_why(tmp_path: Path) -> None:
    rows = _traces()
    for row in rows:
        for name in ("correctness", "helpfulness", "tone"):
            row[name] = None
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(rows))
    with pytest.raises(InputError, match="holds no score column"):
        read_rows([str(path)])
    done = CliRunner().invoke(app, ["route", str(path)])
    assert done.exit_code == 2
    assert len(done.output.strip().splitlines()) == 1


def test_an_observations_export_names_its_model_and_failed_calls(tmp_path: Path) -> None:
    rows = []
    for n, trace in enumerate(_traces()):
        rows.append(
            {
                "id": f"obs-{n}",
                "traceId": trace["id"],
                "projectId": "clx0proj",
                "type": "GENERATION",
                "name": "llm-call",
                "startTime": "2025-03-01T10:00:00.000Z",
                "endTime": "2025-03-01T10:00:01.000Z",
                "model": "gpt-4o-mini",
                "providedModelName": "gpt-4o-mini",
                "modelParameters": {"temperature": 0.7},
                "input": [{"role": "user", "content": trace["input"]["question"]}],
                "output": {"role": "assistant", "content": trace["output"]["answer"]},
                "level": "ERROR" if n == 0 else "DEFAULT",
                "statusMessage": "429 rate limited" if n == 0 else None,
                "usageDetails": {"input": 20, "output": 5, "total": 25},
                "traceName": "qa-run",
                "comments": [],
                "correctness": trace["correctness"],
            }
        )
    path = tmp_path / "observations.json"
    path.write_text(json.dumps(rows))
    rows_read = read_rows([str(path)])
    frame = rows_read.frame.collect()
    assert set(frame["model"].to_list()) == {"gpt-4o-mini"}
    assert (rows_read.facts.rows, rows_read.facts.errors) == (12, 1)


def test_a_dataset_run_items_export_is_refused_naming_the_traces_export(tmp_path: Path) -> None:
    items = [
        {
            "id": f"run-item-{n}",
            "projectId": "clx0proj",
            "datasetItemId": f"item-{n % 4}",
            "traceId": f"trace-{n:04d}",
            "observationId": None,
            "createdAt": "2025-03-01T10:00:00.000Z",
            "updatedAt": "2025-03-01T10:00:00.000Z",
            "datasetName": "qa",
        }
        for n in range(12)
    ]
    path = tmp_path / "dataset_run_items.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    done = CliRunner().invoke(app, ["route", str(path)])
    assert done.exit_code == 2
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and "dataset run items export" in lines[0]
    assert "export the traces table" in lines[0]
