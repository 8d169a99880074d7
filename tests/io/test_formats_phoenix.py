"""Arize Phoenix experiment runs (GET /v1/experiments/{id}/json, get_experiment_json in
src/phoenix/server/api/routers/v1/experiments.py: one JSON array, a record per run with
example_id, repetition_number and annotations[]): a dataset example is a task, its
repetitions rollouts, the one 0/1 evaluator score the grade, a run whose task raised a
harness error, a run its evaluator left unscored ungraded."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io.read import read_rows

#: Per dataset example, each repetition's (exact_match score, relevance score): None for an
#: exact_match evaluator that raised, "raised" for a task that raised.
RUNS: dict[str, list[Any]] = {
    "RGF0YXNldEV4YW1wbGU6MQ==": [(1.0, 0.9), (1.0, 0.8), (0.0, 0.3)],
    "RGF0YXNldEV4YW1wbGU6Mg==": [(0.0, 0.2), "raised", (0.0, 0.4)],
    "RGF0YXNldEV4YW1wbGU6Mw==": [(1.0, 0.7), (None, 0.6), (1.0, 0.9)],
}


def _annotation(name: str, kind: str, score: float | None) -> dict[str, Any]:
    return {
        "name": name,
        "annotator_kind": kind,
        "label": None if score is None else ("correct" if score == 1.0 else "incorrect"),
        "score": score,
        "explanation": None,
        "trace_id": None,
        "error": "ValueError: no answer found" if score is None else None,
        "metadata": {},
        "start_time": "2025-05-20T10:00:01.000000+00:00",
        "end_time": "2025-05-20T10:00:01.200000+00:00",
    }


def _record(example: str, repetition: int, run: Any) -> dict[str, Any]:
    raised = run == "raised"
    record = {
        "example_id": example,
        "repetition_number": repetition,
        "input": {"question": f"What is the capital of country {example[-4:]}?"},
        "reference_output": {"answer": "Paris"},
        "output": None if raised else ("Paris" if run[0] else "Lyon"),
        "error": "openai.RateLimitError: Error code: 429" if raised else None,
        "latency_ms": 812.5,
        "start_time": "2025-05-20T10:00:00.000000+00:00",
        "end_time": "2025-05-20T10:00:00.812500+00:00",
        "trace_id": f"4bf92f3577b34da6a3ce929d0e0e{repetition:04d}",
        "prompt_token_count": 21,
        "completion_token_count": None if raised else 3,
        "annotations": []
        if raised
        else [
            _annotation("exact_match", "CODE", run[0]),
            _annotation("relevance", "LLM", run[1]),
        ],
    }
    return record


def _write(root: Path, runs: dict[str, list[Any]] | None = None) -> Path:
    records = [
        _record(example, n + 1, run)
        for example, reps in (runs or RUNS).items()
        for n, run in enumerate(reps)
    ]
    path = root / "capitals-gpt-4o-mini.json"
    path.write_text(json.dumps(records, ensure_ascii=False, indent=2))
    return path


def test_repetitions_of_examples_read_as_rollouts(tmp_path: Path) -> None:
    rows = read_rows([str(_write(tmp_path))])
    frame = rows.frame.collect()
    per = frame.group_by("task_id").agg(n=pl.len(), c=pl.col("passed").cast(pl.Int64).sum())
    # the raised task and the unscored run aside
    assert sorted(per.iter_rows()) == [
        ("RGF0YXNldEV4YW1wbGU6MQ==", 3, 2),
        ("RGF0YXNldEV4YW1wbGU6Mg==", 2, 0),
        ("RGF0YXNldEV4YW1wbGU6Mw==", 2, 2),
    ]
    assert (rows.facts.rows, rows.facts.errors, rows.facts.ungraded) == (9, 1, 1)
    assert rows.format == "phoenix"
    assert any("exact_match grades, the only one that is 0 or 1" in n for n in rows.notes)
    assert frame["truncated"].null_count() == frame.height  # not recorded


def test_another_evaluator_is_a_map_away(tmp_path: Path) -> None:
    rows = read_rows(
        [str(_write(tmp_path))], mapping={"reward": "scores.relevance"}, pass_threshold=0.5
    )
    assert rows.frame.collect()["passed"].sum() == 5


def test_an_llm_evaluator_grades_as_a_judge(tmp_path: Path) -> None:
    runs = {e: [r if r == "raised" else (r[1], r[1]) for r in reps] for e, reps in RUNS.items()}
    path = _write(tmp_path, runs)
    doc = json.loads(path.read_text())
    for record in doc:
        record["annotations"] = record["annotations"][1:]  # the LLM evaluator alone
    path.write_text(json.dumps(doc))
    rows = read_rows([str(path)], pass_threshold=0.5)
    assert (rows.judge.rows, rows.judge.judged) == (9, 8)  # the raised run has no grader


def test_runs_no_evaluator_scored_are_refused(tmp_path: Path) -> None:
    path = _write(tmp_path)
    doc = json.loads(path.read_text())
    for record in doc:
        record["annotations"] = []
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="the experiment ran no evaluator"):
        read_rows([str(path)])


def test_a_score_that_is_no_number_is_refused_at_its_field(tmp_path: Path) -> None:
    path = _write(tmp_path)
    doc = json.loads(path.read_text())
    doc[3]["annotations"][0]["score"] = "0.0"
    path.write_text(json.dumps(doc, indent=2))
    done = CliRunner().invoke(app, ["route", str(path)])
    assert done.exit_code == 2
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and path.name in lines[0] and "entry 3" in lines[0]
    assert "annotations[0].score" in lines[0]


def _csv(root: Path) -> Path:
    """The CSV download (get_experiment_csv: json.dumps of input and reference_output, each
    annotation as annotation_<name>_<field> columns, pandas' to_csv writing None empty)."""
    fields = ("label", "score", "explanation", "metadata", "annotator_kind", "trace_id", "error")
    header: list[str] = []
    records = []
    for example, reps in RUNS.items():
        for n, run in enumerate(reps):
            record = _record(example, n + 1, run)
            flat = {k: v for k, v in record.items() if k != "annotations"}
            flat["input"] = json.dumps(record["input"])
            flat["reference_output"] = json.dumps(record["reference_output"])
            for annotation in record["annotations"]:
                for part in (*fields, "start_time", "end_time"):
                    value = annotation[part]
                    flat[f"annotation_{annotation['name']}_{part}"] = (
                        json.dumps(value) if part == "metadata" else value
                    )
            records.append(flat)
            header += [k for k in flat if k not in header]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=header, lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow({k: "" if record.get(k) is None else record[k] for k in header})
    path = root / "capitals-gpt-4o-mini.csv"
    path.write_text(out.getvalue())
    return path


def test_the_csv_download_reads_as_the_json_one(tmp_path: Path) -> None:
    rows = read_rows([str(_csv(tmp_path))])
    assert rows.format == "phoenix"
    per = rows.frame.collect().group_by("task_id").agg(c=pl.col("passed").cast(pl.Int64).sum())
    assert sorted(per.iter_rows()) == [
        ("RGF0YXNldEV4YW1wbGU6MQ==", 2),
        ("RGF0YXNldEV4YW1wbGU6Mg==", 0),
        ("RGF0YXNldEV4YW1wbGU6Mw==", 2),
    ]
    assert (rows.facts.rows, rows.facts.errors, rows.facts.ungraded) == (9, 1, 1)


def test_a_csv_score_that_is_no_number_is_refused_at_its_line_and_column(tmp_path: Path) -> None:
    path = _csv(tmp_path)
    lines = path.read_text().splitlines()
    lines[4] = lines[4].replace(",0.0,", ",zero,", 1)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"csv:5: field 'annotation_exact_match_score'"):
        read_rows([str(path)])


def test_labels_alone_are_a_map_away(tmp_path: Path) -> None:
    path = _write(tmp_path)
    doc = json.loads(path.read_text())
    for record in doc:
        for annotation in record["annotations"]:
            annotation["score"] = None
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="no graded row|no reward column"):
        read_rows([str(path)])
    rows = read_rows([str(path)], mapping={"reward": "labels.exact_match"})
    assert rows.frame.collect()["passed"].sum() == 4
