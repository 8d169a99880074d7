"""Vertex AI batch prediction output for Gemini (the job's predictions.jsonl: status,
processed_time, request and response a line; "Batch prediction from Cloud Storage", Retrieve
batch output): the same prompt in k jobs' output is k rollouts, a grade written beside the
request the grade (the job writes none: a file without one is refused), finishReason MAX_TOKENS
a cut-off reply, an error in status and a blocked prompt harness errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io.formats import vertex_batch
from whilecli.io.read import read_rows

MODEL = "gemini-2.0-flash-001"
#: Per prompt, each job's outcome: a grade (1 / 0 / None: ungraded), "cut" (a reply stopped at
#: MAX_TOKENS, graded 0) or "failed" (an error in status).
BATCHES: dict[str, list[Any]] = {
    "What is 6 times 7?": [1, 1, 0],
    "What is 12 plus 30?": [0, "cut", "failed"],
    "What is 84 divided by 2?": [1, None, "failed"],
    "What is 50 minus 8?": [0, 1, 1],
}
BAD_REQUEST = (
    'Bad Request: {"error": {"code": 400, "message": "Please use a valid role: user, model.",'
    ' "status": "INVALID_ARGUMENT"}}'
)


def _request(prompt: str) -> dict[str, Any]:
    return {
        "contents": [{"role": "user", "parts": [{"text": prompt}]}],
        "generationConfig": {"temperature": 0.4, "maxOutputTokens": 1024},
    }


def _line(prompt: str, outcome: Any, graded: bool = True) -> dict[str, Any]:
    line: dict[str, Any] = {
        "status": "",
        "processed_time": "2024-11-01T18:13:16.826+00:00",
        "request": _request(prompt),
    }
    if outcome == "failed":
        return line | {"status": BAD_REQUEST}
    cut = outcome == "cut"
    text = "Let me work through this step by step. First" if cut else f"It is {41 + bool(outcome)}."
    line["response"] = {
        "candidates": [
            {
                "avgLogprobs": -0.10394711927934126,
                "content": {"parts": [{"text": text}], "role": "model"},
                "finishReason": "MAX_TOKENS" if cut else "STOP",
            }
        ],
        "modelVersion": MODEL,
        "usageMetadata": {
            "candidatesTokenCount": 1024 if cut else 36,
            "promptTokenCount": 29,
            "totalTokenCount": 29 + (1024 if cut else 36),
        },
    }
    if graded:
        line["reward"] = 0 if cut else outcome
    return line


def _write(root: Path, graded: bool = True) -> list[Path]:
    paths = []
    for b in range(3):
        path = root / f"prediction-model-2024-11-0{b + 1}T18:13:16" / "predictions.jsonl"
        path.parent.mkdir()
        lines = [_line(p, outcomes[b], graded) for p, outcomes in BATCHES.items()]
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        paths.append(path)
    return paths


def test_the_same_prompt_in_k_jobs_reads_as_k_rollouts(tmp_path: Path) -> None:
    _write(tmp_path)
    rows = read_rows([str(tmp_path)])
    frame = rows.frame.collect()
    per = frame.group_by("task_id").agg(
        n=pl.len(),
        c=pl.col("passed").cast(pl.Int64).sum(),
        cut=pl.col("truncated").cast(pl.Int64).sum(),
    )
    # the rows every rate counts: the failed requests and the ungraded reply aside
    assert sorted((n, c, cut) for _, n, c, cut in per.iter_rows()) == [
        (1, 1, 0),
        (2, 0, 1),
        (3, 2, 0),
        (3, 2, 0),
    ]
    facts = rows.facts
    assert (facts.rows, facts.errors, facts.ungraded) == (12, 2, 1)
    assert facts.first_error is not None and facts.first_error.endswith("predictions.jsonl line 2")
    assert set(frame["model"].drop_nulls().to_list()) == {MODEL}
    assert rows.format == "vertex-batch"


def test_failed_and_blocked_requests_are_harness_errors(tmp_path: Path) -> None:
    lines = [_line(p, "failed") for p in BATCHES]
    blocked = _line("Say something unsafe.", 0)
    blocked["response"] = {"promptFeedback": {"blockReason": "SAFETY"}, "modelVersion": MODEL}
    lines.append(blocked)
    lines += [_line(p, 1) for p in BATCHES]
    converted = vertex_batch.convert((({"line": n + 1}, x) for n, x in enumerate(lines)), "p")
    errors = [r.get("error") for r in converted.rows]
    assert errors[:5] == [f"failed request: {BAD_REQUEST}"] * 4 + ["prompt blocked: SAFETY"]
    assert errors[5:] == [None] * 4
    assert any("5 requests failed" in note for note in converted.notes)
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines[3:]))
    rows = read_rows([str(path)])
    assert (rows.facts.rows, rows.facts.errors, rows.facts.counted) == (6, 2, 4)


def test_output_with_no_grade_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = _write(tmp_path, graded=False)[0]
    with pytest.raises(InputError, match="write each reply's grade beside its request"):
        read_rows([str(path)])
    done = CliRunner().invoke(app, ["route", str(path)])
    assert done.exit_code == 2
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and f"{path.name}:1:" in lines[0]
    assert "'response'" in lines[0]


def test_a_grade_under_another_key_is_a_map_away(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    lines = []
    for prompt, outcomes in BATCHES.items():
        line = _line(prompt, 1, graded=False)
        line["verdict"] = outcomes[0] == 1
        lines.append(line)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(InputError, match="no reward column"):
        read_rows([str(path)])
    rows = read_rows([str(path)], mapping={"reward": "verdict"})
    assert rows.frame.collect()["passed"].sum() == 2


def test_a_task_id_written_beside_keys_the_task(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    lines = []
    for k in range(3):
        line = _line("What is 6 times 7?", k % 2)
        line["task_id"] = "q7"
        lines.append(line)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    frame = read_rows([str(path)]).frame.collect()
    assert frame["task_id"].to_list() == ["q7", "q7", "q7"]
    assert frame["passed"].sum() == 1


def test_a_json_array_of_output_and_a_one_line_file_read_alike(tmp_path: Path) -> None:
    lines = [_line(p, outcomes[0]) for p, outcomes in BATCHES.items()]
    array = tmp_path / "predictions.json"
    array.write_text(json.dumps(lines, indent=2))
    rows = read_rows([str(array)])
    assert rows.format == "vertex-batch" and rows.frame.collect()["passed"].sum() == 2
    one = tmp_path / "one" / "predictions.jsonl"
    one.parent.mkdir()
    one.write_text(json.dumps(lines[0]) + "\n")
    assert read_rows([str(one)]).format == "vertex-batch"
    assert read_rows([str(one.parent)]).frame.collect()["passed"].to_list() == [True]


def test_a_request_without_text_is_refused_at_its_line_and_field(tmp_path: Path) -> None:
    path = _write(tmp_path)[0]
    lines = path.read_text().splitlines()
    bad = json.loads(lines[2])
    bad["request"]["contents"] = [
        {"role": "user", "parts": [{"fileData": {"fileUri": "gs://b/x"}}]}
    ]
    lines[2] = json.dumps(bad)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(
        InputError, match=r"predictions.jsonl:3: field 'request\.contents': .*write a task_id"
    ):
        read_rows([str(path)])


def test_gemini_api_batch_results_key_the_task_by_key(tmp_path: Path) -> None:
    """The Gemini API's batch mode results file: {"key", "response"} or {"key", "error"}."""
    for b in range(3):
        lines = []
        for i, (prompt, outcomes) in enumerate(BATCHES.items()):
            line = _line(prompt, outcomes[b])
            line.pop("request")
            line.pop("processed_time")
            status = line.pop("status")
            if status:
                line["error"] = {"code": 400, "message": "Request contains an invalid argument."}
            line["key"] = f"request-{i}"
            lines.append(line)
        path = tmp_path / f"batch-{b}" / "results.jsonl"
        path.parent.mkdir()
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    rows = read_rows([str(tmp_path)])
    assert rows.format == "vertex-batch"
    frame = rows.frame.collect()
    per = frame.group_by("task_id").agg(
        n=pl.len(),
        c=pl.col("passed").cast(pl.Int64).sum(),
        cut=pl.col("truncated").cast(pl.Int64).sum(),
    )
    assert sorted(per.iter_rows()) == [
        ("request-0", 3, 2, 0),
        ("request-1", 2, 0, 1),
        ("request-2", 1, 1, 0),
        ("request-3", 3, 2, 0),
    ]
    assert (rows.facts.rows, rows.facts.errors) == (12, 2)
    assert set(frame["model"].drop_nulls().to_list()) == {MODEL}
