"""Opik experiment exports (sdks/python/src/opik/cli/exports/experiment.py:
export_experiment_by_id writes <workspace>/experiments/experiment_<name>_<id>.json, the object
utils.create_experiment_data_structure builds, and the experiment's traces and dataset beside
it): a dataset item is a task, its trial_count runs rollouts, the one 0/1 feedback score the
grade (a fault score never), the model experiment.metadata.model or the exported llm spans'."""

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

#: Per dataset item, each trial's (equals_metric, levenshtein_ratio_metric, hallucination_metric).
TRIALS: dict[str, list[tuple[float, float, float]]] = {
    "0196f6a1-7c2e-7d4b-9a53-1f0c6e2b8a01": [(1.0, 1.0, 0.0), (1.0, 1.0, 0.0), (0.0, 0.4, 1.0)],
    "0196f6a1-7c2e-7d4b-9a53-1f0c6e2b8a02": [(0.0, 0.2, 1.0), (0.0, 0.5, 0.0), (0.0, 0.3, 0.0)],
    "0196f6a1-7c2e-7d4b-9a53-1f0c6e2b8a03": [(1.0, 1.0, 0.0), (0.0, 0.6, 0.0), (1.0, 1.0, 0.0)],
}
EXPERIMENT_ID = "0196f6a2-0d11-7e3c-8c5e-5b2f7a9d4c10"
MODEL = "gpt-4o-mini-2024-07-18"


def _score(name: str, value: float) -> dict[str, Any]:
    return {"category_name": None, "name": name, "reason": None, "value": value}


def _item(n: int, dataset_item: str, trial: tuple[float, float, float]) -> dict[str, Any]:
    equals, levenshtein, hallucination = trial
    question = f"What is the capital of country {dataset_item[-2:]}?"
    # serialize_experiment_item: a dataclass, read attribute by attribute, a None left out
    return {
        "id": f"0196f6a3-0000-7000-8000-{n:012d}",
        "dataset_item_id": dataset_item,
        "trace_id": f"0196f6a4-0000-7000-8000-{n:012d}",
        "feedback_scores": [
            _score("equals_metric", equals),
            _score("levenshtein_ratio_metric", levenshtein),
            {**_score("hallucination_metric", hallucination), "reason": "The output is grounded."},
        ],
        "dataset_item_data": {"input": question, "expected_output": "Paris"},
        "evaluation_task_output": {"output": "Paris" if equals else "Lyon"},
    }


def _trace(item: dict[str, Any]) -> dict[str, Any]:
    trace_id = item["trace_id"]
    return {
        "trace": {
            "id": trace_id,
            "project_id": "0196f6a0-aaaa-7bbb-8ccc-000000000001",
            "name": "evaluation_task",
            "input": item["dataset_item_data"],
            "output": item["evaluation_task_output"],
            "feedback_scores": None,
        },
        "spans": [
            {
                "id": f"{trace_id[:-4]}beef",
                "trace_id": trace_id,
                "parent_span_id": None,
                "name": "chat_completion_create",
                "type": "llm",
                "model": MODEL,
                "provider": "openai",
                "usage": {"prompt_tokens": 14, "completion_tokens": 2, "total_tokens": 16},
            }
        ],
        "downloaded_at": "2025-06-02T10:11:13.000001",
        "project_name": "capitals",
    }


def _write(root: Path, metadata: dict[str, Any] | None, traces: bool = True) -> Path:
    workspace = root / "opik_exports" / "acme"
    experiments = workspace / "experiments"
    experiments.mkdir(parents=True)
    runs = [(dataset_item, trial) for dataset_item, trials in TRIALS.items() for trial in trials]
    items = [_item(n, dataset_item, trial) for n, (dataset_item, trial) in enumerate(runs)]
    doc = {
        "experiment": {
            "id": EXPERIMENT_ID,
            "name": "capitals-baseline",
            "dataset_name": "capitals",
            "metadata": metadata,
            "type": "regular",
            "status": "completed",
            "created_at": "2025-06-02 10:00:00+00:00",
            "last_updated_at": "2025-06-02 10:05:00+00:00",
            "created_by": "admin",
            "last_updated_by": "admin",
            "trace_count": len(items),
            "total_estimated_cost": 0.00042,
            "total_estimated_cost_avg": 0.0000467,
            "usage": None,
            "feedback_scores": [{"name": "equals_metric", "value": 0.5556}],
            "comments": None,
            "duration": None,
            "prompt_version": None,
            "prompt_versions": None,
        },
        "items": items,
        "downloaded_at": "2025-06-02T10:11:12.345678",
    }
    path = experiments / f"experiment_capitals-baseline_{EXPERIMENT_ID}.json"
    path.write_text(json.dumps(doc, indent=2, default=str))
    datasets = workspace / "datasets"
    datasets.mkdir()
    dataset = {
        "dataset": {"name": "capitals", "id": "0196f6a0-bbbb-7ccc-8ddd-000000000002"},
        "items": [item["dataset_item_data"] for item in items[::3]],
        "downloaded_at": "2025-06-02T10:11:12.000001",
    }
    (datasets / "dataset_capitals.json").write_text(json.dumps(dataset, indent=2))
    if traces:
        project = workspace / "projects" / "capitals"
        project.mkdir(parents=True)
        for item in items:
            trace_file = project / f"trace_{item['trace_id']}.json"
            trace_file.write_text(json.dumps(_trace(item), indent=2))
    return path


def test_trials_of_dataset_items_read_as_rollouts(tmp_path: Path) -> None:
    _write(tmp_path, {"model": MODEL, "temperature": 0.7})
    rows = read_rows([str(tmp_path / "opik_exports")])  # the whole export: one file of rows
    frame = rows.frame.collect()
    per = frame.group_by("task_id").agg(n=pl.len(), c=pl.col("passed").cast(pl.Int64).sum())
    assert sorted(per.iter_rows()) == [
        ("0196f6a1-7c2e-7d4b-9a53-1f0c6e2b8a01", 3, 2),
        ("0196f6a1-7c2e-7d4b-9a53-1f0c6e2b8a02", 3, 0),
        ("0196f6a1-7c2e-7d4b-9a53-1f0c6e2b8a03", 3, 2),
    ]
    assert set(frame["model"].to_list()) == {MODEL}
    assert frame["truncated"].null_count() == frame.height  # not recorded
    assert rows.format == "opik"
    assert any("equals_metric grades, the only one that is 0 or 1" in n for n in rows.notes)
    assert any("hallucination_metric scores a fault" in n for n in rows.notes)


def test_the_model_comes_from_the_exported_traces_without_a_config(tmp_path: Path) -> None:
    path = _write(tmp_path, None)
    assert set(read_rows([str(path)]).frame.collect()["model"].to_list()) == {MODEL}


def test_no_model_without_a_config_or_traces(tmp_path: Path) -> None:
    path = _write(tmp_path, {"prompt": "Answer in one word."}, traces=False)
    assert read_rows([str(path)]).frame.collect()["model"].null_count() == 9


def test_another_score_is_a_map_away(tmp_path: Path) -> None:
    path = _write(tmp_path, {"model": MODEL})
    rows = read_rows(
        [str(path)], mapping={"reward": "scores.levenshtein_ratio_metric"}, pass_threshold=0.5
    )
    assert rows.frame.collect()["passed"].sum() == 6


def test_the_dataset_export_alone_is_refused_as_no_rows(tmp_path: Path) -> None:
    _write(tmp_path, {"model": MODEL})
    dataset = tmp_path / "opik_exports" / "acme" / "datasets" / "dataset_capitals.json"
    with pytest.raises(InputError, match="an Opik dataset export"):
        read_rows([str(dataset)])


def test_a_score_that_is_no_number_is_refused_at_its_field(tmp_path: Path) -> None:
    path = _write(tmp_path, {"model": MODEL})
    doc = json.loads(path.read_text())
    doc["items"][4]["feedback_scores"][0]["value"] = "1.0"
    path.write_text(json.dumps(doc, indent=2))
    with pytest.raises(InputError, match=r"items\[4\]: field 'feedback_scores\[0\]\.value'"):
        read_rows([str(path)])
    done = CliRunner().invoke(app, ["route", str(path)])
    assert done.exit_code == 2
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and path.name in lines[0] and "feedback_scores[0].value" in lines[0]
