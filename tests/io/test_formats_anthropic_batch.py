"""Anthropic Message Batches results (GET /v1/messages/batches/{id}/results: one
MessageBatchIndividualResponse a line, custom_id beside a result of type succeeded, errored,
canceled or expired; anthropic-sdk-python src/anthropic/types/messages/): the same custom_id in
k batches is k rollouts, a grade written beside custom_id the grade (the API writes none: a
file without one is refused), stop_reason max_tokens a cut-off reply, an errored, canceled or
expired request a harness error."""

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

MODEL = "claude-sonnet-4-20250514"
#: Per custom_id, each batch's outcome: a grade (1 / 0 / None: ungraded), "cut" (a reply
#: stopped at max_tokens, graded 0), "errored" or "expired".
BATCHES: dict[str, list[Any]] = {
    "gsm8k-0001": [1, 1, 0],
    "gsm8k-0002": [0, "cut", "errored"],
    "gsm8k-0003": [1, None, "expired"],
    "gsm8k-0004": [0, 1, 1],
}


def _message(n: int, text: str, stop_reason: str, tokens: int) -> dict[str, Any]:
    return {
        "id": f"msg_01{n:022d}",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 120, "output_tokens": tokens},
    }


def _line(custom_id: str, outcome: Any, n: int, graded: bool = True) -> dict[str, Any]:
    if outcome == "errored":
        result: dict[str, Any] = {
            "type": "errored",
            "error": {
                "type": "error",
                "error": {"type": "overloaded_error", "message": "Overloaded"},
                "request_id": f"req_01{n:022d}",
            },
        }
        return {"custom_id": custom_id, "result": result}
    if outcome == "expired":
        return {"custom_id": custom_id, "result": {"type": "expired"}}
    if outcome == "cut":
        message = _message(n, "Let me work through this step by step. First", "max_tokens", 1024)
    else:
        message = _message(n, f"The answer is {42 if outcome else 41}.", "end_turn", 212)
    line: dict[str, Any] = {
        "custom_id": custom_id,
        "result": {"type": "succeeded", "message": message},
    }
    if graded:
        line["reward"] = 0 if outcome == "cut" else outcome
    return line


def _write(root: Path, graded: bool = True) -> list[Path]:
    paths = []
    for b in range(3):
        path = root / f"msgbatch_01ABC{b}_results.jsonl"
        lines = [
            _line(c, outcomes[b], 10 * b + i, graded)
            for i, (c, outcomes) in enumerate(BATCHES.items())
        ]
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        paths.append(path)
    return paths


def test_the_same_custom_id_in_k_batches_reads_as_k_rollouts(tmp_path: Path) -> None:
    _write(tmp_path)
    rows = read_rows([str(tmp_path)])
    frame = rows.frame.collect()
    per = frame.group_by("task_id").agg(
        n=pl.len(),
        c=pl.col("passed").cast(pl.Int64).sum(),
        cut=pl.col("truncated").cast(pl.Int64).sum(),
    )
    # the rows every rate counts: the errored and expired requests and the ungraded reply aside
    assert sorted(per.iter_rows()) == [
        ("gsm8k-0001", 3, 2, 0),
        ("gsm8k-0002", 2, 0, 1),
        ("gsm8k-0003", 1, 1, 0),
        ("gsm8k-0004", 3, 2, 0),
    ]
    facts = rows.facts
    assert (facts.rows, facts.errors, facts.ungraded) == (12, 2, 1)
    assert facts.first_error is not None and facts.first_error.endswith("ABC2_results.jsonl line 2")
    assert set(frame["model"].drop_nulls().to_list()) == {MODEL}
    assert rows.format == "anthropic-batch"


def test_results_with_no_grade_are_refused_with_the_fix(tmp_path: Path) -> None:
    path = _write(tmp_path, graded=False)[0]
    with pytest.raises(InputError, match="write each reply's grade beside its custom_id"):
        read_rows([str(path)])
    done = CliRunner().invoke(app, ["route", str(path)])
    assert done.exit_code == 2
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and f"{path.name}:1:" in lines[0]
    assert "'result'" in lines[0]


def test_a_grade_under_another_key_is_a_map_away(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    lines = []
    for n, (custom_id, outcomes) in enumerate(BATCHES.items()):
        line = _line(custom_id, 1, n, graded=False)
        line["verdict"] = outcomes[0] == 1
        lines.append(line)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(InputError, match="no reward column"):
        read_rows([str(path)])
    rows = read_rows([str(path)], mapping={"reward": "verdict"})
    assert rows.frame.collect()["passed"].sum() == 2


def test_a_task_id_written_beside_keys_the_requests_of_one_batch(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    lines = []
    for k in range(3):
        line = _line(f"q7-sample-{k}", k % 2, k)
        line["task_id"] = "q7"
        lines.append(line)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    frame = read_rows([str(path)]).frame.collect()
    assert frame["task_id"].to_list() == ["q7", "q7", "q7"]
    assert frame["passed"].sum() == 1


def test_a_json_array_of_results_and_a_one_line_file_read_alike(tmp_path: Path) -> None:
    lines = [_line(c, outcomes[0], i) for i, (c, outcomes) in enumerate(BATCHES.items())]
    array = tmp_path / "results.json"
    array.write_text(json.dumps(lines, indent=2))
    rows = read_rows([str(array)])
    assert rows.format == "anthropic-batch" and rows.frame.collect()["passed"].sum() == 2
    one = tmp_path / "one" / "results.jsonl"
    one.parent.mkdir()
    one.write_text(json.dumps(lines[0]) + "\n")
    assert read_rows([str(one)]).format == "anthropic-batch"
    assert read_rows([str(one.parent)]).frame.collect()["passed"].to_list() == [True]


def test_an_unknown_result_type_is_refused_at_its_line_and_field(tmp_path: Path) -> None:
    path = _write(tmp_path)[1]
    lines = path.read_text().splitlines()
    bad = json.loads(lines[2])
    bad["result"]["type"] = "failed"
    lines[2] = json.dumps(bad)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"results.jsonl:3: field 'result\.type': must be one of"):
        read_rows([str(path)])


def test_openai_batch_output_is_not_read_as_anthropic_results(tmp_path: Path) -> None:
    path = tmp_path / "batch_output.jsonl"
    line = {
        "id": "batch_req_123",
        "custom_id": "request-1",
        "response": {
            "status_code": 200,
            "request_id": "req_1",
            "body": {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": "gpt-4o",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "2 + 2 equals 4."},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 24, "completion_tokens": 15, "total_tokens": 39},
            },
        },
        "error": None,
        "reward": 1,
    }
    path.write_text(json.dumps(line) + "\n" + json.dumps({**line, "custom_id": "request-2"}) + "\n")
    assert read_rows([str(path)]).format == "openai-batch"
