"""Amazon Bedrock batch inference output (the job's <input>.jsonl.out under <job id>/, beside
manifest.json.out: recordId, modelInput and modelOutput a line, or error in place of
modelOutput; "View the results of a batch inference job"): the same prompt in k jobs is k
rollouts, a grade written beside recordId the grade (the job writes none: a file without one is
refused), each model body's end reason read for a cut-off reply, an error a harness error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io.formats import bedrock_batch
from whilecli.io.read import read_rows

MODEL = "claude-3-5-sonnet-20240620"
#: Per prompt, each job's outcome: a grade (1 / 0), "cut" (stopped at max_tokens, graded 0)
#: or "failed" (an error in place of modelOutput).
JOBS: dict[str, list[Any]] = {
    "What is 6 times 7?": [1, 1, 0],
    "What is 12 plus 30?": [0, "cut", "failed"],
    "What is 84 divided by 2?": [1, 1, 1],
    "What is 50 minus 8?": [0, 1, 1],
}


def _claude(prompt: str, record: str, outcome: Any, graded: bool = True) -> dict[str, Any]:
    line: dict[str, Any] = {
        "recordId": record,
        "modelInput": {
            "anthropic_version": "bedrock-2023-05-31",
            "max_tokens": 256,
            "system": "Answer with a number.",
            "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}],
        },
    }
    if outcome == "failed":
        return line | {"error": {"errorCode": 400, "errorMessage": "bad request"}}
    cut = outcome == "cut"
    line["modelOutput"] = {
        "id": f"msg_bdrk_{record}",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [{"type": "text", "text": "Let me think" if cut else f"{41 + outcome}"}],
        "stop_reason": "max_tokens" if cut else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 20, "output_tokens": 256 if cut else 2},
    }
    if graded:
        line["reward"] = 0 if cut else outcome
    return line


def _write(root: Path, graded: bool = True) -> list[Path]:
    paths = []
    for job in range(3):
        folder = root / f"j{job}abcd1234"
        folder.mkdir()
        lines = [
            _claude(p, f"REC{i:08d}", outcomes[job], graded)
            for i, (p, outcomes) in enumerate(JOBS.items())
        ]
        path = folder / "questions.jsonl.out"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        (folder / "manifest.json.out").write_text(
            json.dumps({"totalRecordCount": 4, "processedRecordCount": 4, "errorRecordCount": 0})
        )
        paths.append(path)
    return paths


def test_the_same_prompt_in_k_jobs_reads_as_k_rollouts(tmp_path: Path) -> None:
    _write(tmp_path)
    rows = read_rows([str(tmp_path)])
    assert rows.format == "bedrock-batch"
    frame = rows.frame.collect()
    per = frame.group_by("task_id").agg(
        n=pl.len(),
        c=pl.col("passed").cast(pl.Int64).sum(),
        cut=pl.col("truncated").cast(pl.Int64).sum(),
    )
    # the failed record aside: 4 tasks, k = 3 but for the one whose third job failed
    assert sorted((n, c, cut) for _, n, c, cut in per.iter_rows()) == [
        (2, 0, 1),
        (3, 2, 0),
        (3, 2, 0),
        (3, 3, 0),
    ]
    assert all(t.startswith("request:") for t in frame["task_id"].to_list())
    facts = rows.facts
    assert (facts.rows, facts.errors) == (12, 1)
    assert set(frame["model"].drop_nulls().to_list()) == {MODEL}


def test_route_reads_the_job_folder_and_says_where_each_field_came_from(tmp_path: Path) -> None:
    _write(tmp_path)
    done = CliRunner().invoke(app, ["route", str(tmp_path), "--format", "json"])
    assert done.exit_code in (0, 1), done.output
    assert '"bedrock-batch"' in done.output
    assert "modelOutput.stop_reason == 'max_tokens' (Anthropic)" in done.output
    assert "1 records failed" in done.output


def _other(body: str, prompt: str, cut: bool) -> dict[str, Any]:
    """A line of another model's body, graded 0 where cut, else 1."""
    if body == "llama":
        request: dict[str, Any] = {"prompt": prompt, "max_gen_len": 64}
        output: dict[str, Any] = {
            "generation": " 42",
            "prompt_token_count": 9,
            "generation_token_count": 64 if cut else 2,
            "stop_reason": "length" if cut else "stop",
        }
    elif body == "nova":
        request = {
            "schemaVersion": "messages-v1",
            "messages": [{"role": "user", "content": [{"text": prompt}]}],
            "inferenceConfig": {"maxTokens": 64},
        }
        output = {
            "output": {"message": {"role": "assistant", "content": [{"text": "42"}]}},
            "stopReason": "max_tokens" if cut else "end_turn",
            "usage": {"inputTokens": 8, "outputTokens": 64 if cut else 1, "totalTokens": 9},
        }
    elif body == "titan":
        request = {"inputText": prompt, "textGenerationConfig": {"maxTokenCount": 64}}
        output = {
            "inputTextTokenCount": 8,
            "results": [
                {
                    "tokenCount": 64 if cut else 2,
                    "outputText": "42",
                    "completionReason": "LENGTH" if cut else "FINISH",
                }
            ],
        }
    else:
        request = {"prompt": f"<s>[INST] {prompt} [/INST]", "max_tokens": 64}
        output = {"outputs": [{"text": "42", "stop_reason": "length" if cut else "stop"}]}
    return {
        "recordId": f"R{len(prompt):04d}{int(cut)}",
        "modelInput": request,
        "modelOutput": output,
        "reward": 0 if cut else 1,
    }


@pytest.mark.parametrize("body", ["llama", "nova", "titan", "mistral"])
def test_each_model_body_gives_its_reply_and_its_cut(tmp_path: Path, body: str) -> None:
    path = tmp_path / "in.jsonl.out"
    lines = [_other(body, p, cut) for p in JOBS for cut in (False, False, True)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    rows = read_rows([str(path)])
    frame = rows.frame.collect()
    assert frame["truncated"].to_list() == [False, False, True] * 4
    assert frame["passed"].to_list() == [True, True, False] * 4
    assert frame.group_by("task_id").len()["len"].to_list() == [3] * 4
    assert frame["model"].drop_nulls().to_list() == []
    assert rows.format == "bedrock-batch"


def test_output_with_no_grade_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = _write(tmp_path, graded=False)[0]
    with pytest.raises(InputError, match="write each reply's grade beside its recordId"):
        read_rows([str(path)])
    done = CliRunner().invoke(app, ["route", str(path)])
    assert done.exit_code == 2
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and f"{path.name}:1:" in lines[0]
    assert "'modelOutput'" in lines[0]


def test_a_task_id_written_beside_keys_the_task_and_an_array_reads_alike(tmp_path: Path) -> None:
    lines = [_claude("What is 6 times 7?", f"R{k}", k % 2) | {"task_id": "q7"} for k in range(3)]
    path = tmp_path / "out.json"
    path.write_text(json.dumps(lines, indent=2))
    rows = read_rows([str(path)])
    frame = rows.frame.collect()
    assert rows.format == "bedrock-batch"
    assert frame["task_id"].to_list() == ["q7", "q7", "q7"]
    assert frame["passed"].sum() == 1


def test_an_embedding_body_is_refused_at_its_line_and_field(tmp_path: Path) -> None:
    lines = [
        {"recordId": "E1", "modelInput": {"inputText": "hi"}, "modelOutput": {"embedding": [0.1]}}
    ]
    with pytest.raises(InputError, match=r"field 'modelOutput': modelOutput holds an embedding"):
        bedrock_batch.convert((({"line": n + 1}, x) for n, x in enumerate(lines)), "o.jsonl.out")
