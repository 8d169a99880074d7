"""OpenAI Batch API output (the batch's output_file_id content: one BatchRequestOutput a line,
id, custom_id, response {status_code, request_id, body} and error {code, message}; the API
reference's "The request output object"): the same custom_id in k batches is k rollouts, a
grade written beside custom_id the grade (the API writes none: a file without one is refused),
a chat completion's finish_reason length or a Responses API body incomplete for
max_output_tokens a cut-off reply, an error, a status_code of 400 or more and a failed response
harness errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io.formats import openai_batch
from whilecli.io.read import read_rows

MODEL = "gpt-4o-mini-2024-07-18"
#: Per custom_id, each batch's outcome: a grade (1 / 0 / None: ungraded), "cut" (a reply
#: stopped at the token limit, graded 0), "errored" (error set), "429" or "500".
BATCHES: dict[str, list[Any]] = {
    "gsm8k-0001": [1, 1, 0],
    "gsm8k-0002": [0, "cut", "errored"],
    "gsm8k-0003": [1, None, "429"],
    "gsm8k-0004": [0, 1, 1],
}


def _chat(n: int, text: str, finish_reason: str, tokens: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{n:08d}",
        "object": "chat.completion",
        "created": 1711475054,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "logprobs": None,
                "finish_reason": finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 120, "completion_tokens": tokens, "total_tokens": 120 + tokens},
        "system_fingerprint": None,
    }


def _response(n: int, text: str, cut: bool, tokens: int) -> dict[str, Any]:
    return {
        "id": f"resp_{n:08d}",
        "object": "response",
        "created_at": 1741476542,
        "status": "incomplete" if cut else "completed",
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
        "model": MODEL,
        "output": [
            {
                "type": "message",
                "id": f"msg_{n:08d}",
                "status": "incomplete" if cut else "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
        "usage": {"input_tokens": 120, "output_tokens": tokens, "total_tokens": 120 + tokens},
    }


def _line(
    custom_id: str, outcome: Any, n: int, graded: bool = True, responses: bool = False
) -> dict[str, Any]:
    line: dict[str, Any] = {"id": f"batch_req_{n:08d}", "custom_id": custom_id}
    if outcome == "errored":
        error = {"code": "batch_expired", "message": "This request could not be executed"}
        return line | {"response": None, "error": error}
    if outcome in ("429", "500"):
        error = {
            "message": "Rate limit reached" if outcome == "429" else "The server had an error",
            "type": "requests" if outcome == "429" else "server_error",
            "param": None,
            "code": "rate_limit_exceeded" if outcome == "429" else None,
        }
        response = {"status_code": int(outcome), "request_id": f"req_{n}", "body": {"error": error}}
        return line | {"response": response, "error": None}
    cut = outcome == "cut"
    text = (
        "Let me work through this step by step. First"
        if cut
        else f"The answer is {41 + bool(outcome)}."
    )
    tokens = 1024 if cut else 212
    if responses:
        body = _response(n, text, cut, tokens)
    else:
        body = _chat(n, text, "length" if cut else "stop", tokens)
    line |= {
        "response": {"status_code": 200, "request_id": f"req_{n}", "body": body},
        "error": None,
    }
    if graded:
        line["reward"] = 0 if cut else outcome
    return line


def _write(root: Path, graded: bool = True, responses: bool = False) -> list[Path]:
    paths = []
    for b in range(3):
        path = root / f"batch_abc{b}_output.jsonl"
        lines = [
            _line(c, outcomes[b], 10 * b + i, graded, responses)
            for i, (c, outcomes) in enumerate(BATCHES.items())
        ]
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        paths.append(path)
    return paths


@pytest.mark.parametrize("responses", [False, True], ids=["chat", "responses"])
def test_the_same_custom_id_in_k_batches_reads_as_k_rollouts(
    tmp_path: Path, responses: bool
) -> None:
    _write(tmp_path, responses=responses)
    rows = read_rows([str(tmp_path)])
    frame = rows.frame.collect()
    per = frame.group_by("task_id").agg(
        n=pl.len(),
        c=pl.col("passed").cast(pl.Int64).sum(),
        cut=pl.col("truncated").cast(pl.Int64).sum(),
    )
    # the rows every rate counts: the failed requests and the ungraded reply aside
    assert sorted(per.iter_rows()) == [
        ("gsm8k-0001", 3, 2, 0),
        ("gsm8k-0002", 2, 0, 1),
        ("gsm8k-0003", 1, 1, 0),
        ("gsm8k-0004", 3, 2, 0),
    ]
    facts = rows.facts
    assert (facts.rows, facts.errors, facts.ungraded) == (12, 2, 1)
    assert facts.first_error is not None and facts.first_error.endswith("abc2_output.jsonl line 2")
    assert set(frame["model"].drop_nulls().to_list()) == {MODEL}
    assert rows.format == "openai-batch"


def test_failed_requests_are_harness_errors_never_the_models_failures(tmp_path: Path) -> None:
    path = tmp_path / "output.jsonl"
    outcomes = ["errored", "429", "500", 1, 0, 1, 1]
    lines = [_line(f"q{i}", outcome, i) for i, outcome in enumerate(outcomes)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    rows = read_rows([str(path)])
    assert (rows.facts.rows, rows.facts.errors, rows.facts.counted) == (7, 3, 4)
    assert rows.frame.collect()["passed"].to_list() == [True, False, True, True]
    converted = openai_batch.convert((({"line": n + 1}, x) for n, x in enumerate(lines)), "o")
    assert [r.get("error") for r in converted.rows[:4]] == [
        "failed request: batch_expired: This request could not be executed",
        "failed request: HTTP 429: rate_limit_exceeded: Rate limit reached",
        "failed request: HTTP 500: server_error: The server had an error",
        None,
    ]
    assert any("3 requests failed" in note for note in converted.notes)


def test_output_with_no_grade_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = _write(tmp_path, graded=False)[0]
    with pytest.raises(InputError, match="write each reply's grade beside its custom_id"):
        read_rows([str(path)])
    done = CliRunner().invoke(app, ["route", str(path)])
    assert done.exit_code == 2
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and f"{path.name}:1:" in lines[0]
    assert "'response'" in lines[0]


def test_a_grade_under_another_key_is_a_map_away(tmp_path: Path) -> None:
    path = tmp_path / "output.jsonl"
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
    path = tmp_path / "output.jsonl"
    lines = []
    for k in range(3):
        line = _line(f"q7-sample-{k}", k % 2, k)
        line["task_id"] = "q7"
        lines.append(line)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    frame = read_rows([str(path)]).frame.collect()
    assert frame["task_id"].to_list() == ["q7", "q7", "q7"]
    assert frame["passed"].sum() == 1


def test_a_json_array_of_output_and_a_one_line_file_read_alike(tmp_path: Path) -> None:
    lines = [_line(c, outcomes[0], i) for i, (c, outcomes) in enumerate(BATCHES.items())]
    array = tmp_path / "output.json"
    array.write_text(json.dumps(lines, indent=2))
    rows = read_rows([str(array)])
    assert rows.format == "openai-batch" and rows.frame.collect()["passed"].sum() == 2
    one = tmp_path / "one" / "output.jsonl"
    one.parent.mkdir()
    one.write_text(json.dumps(lines[0]) + "\n")
    assert read_rows([str(one)]).format == "openai-batch"
    assert read_rows([str(one.parent)]).frame.collect()["passed"].to_list() == [True]


def test_an_embeddings_body_is_refused_at_its_line_and_field(tmp_path: Path) -> None:
    path = _write(tmp_path)[0]
    lines = path.read_text().splitlines()
    bad = json.loads(lines[1])
    bad["response"]["body"] = {
        "object": "list",
        "data": [{"object": "embedding", "index": 0, "embedding": [0.1, -0.2]}],
        "model": "text-embedding-3-small",
        "usage": {"prompt_tokens": 8, "total_tokens": 8},
    }
    lines[1] = json.dumps(bad)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"output.jsonl:2: field 'response\.body': .*embeddings"):
        read_rows([str(path)])


def test_anthropic_results_are_not_read_as_openai_output(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    line = {
        "custom_id": "request-1",
        "result": {
            "type": "succeeded",
            "message": {
                "id": "msg_01",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-20250514",
                "content": [{"type": "text", "text": "The answer is 42."}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 120, "output_tokens": 9},
            },
        },
        "response": {"status_code": 200, "body": {}},
        "error": None,
        "reward": 1,
    }
    path.write_text(json.dumps(line) + "\n" + json.dumps({**line, "custom_id": "request-2"}) + "\n")
    assert read_rows([str(path)]).format == "anthropic-batch"
