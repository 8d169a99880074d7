"""SkyThought evaluation results (skythought/evals/inference_and_check.py: save_results writes
<result_dir>/<model>_<task>_<hash>/results.json, keyed by each problem's _index, and
save_summary the summary.json beside it): a problem is a task, its responses[] the rollouts,
responses[].correctness the grade (null until skythought score), a reply reaching the
run's max_tokens cut off where the backend counted each sample's tokens, the model
configuration.model.name."""

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

MAX_TOKENS = 32768
#: Per AIME problem (its _index), each sample's (correctness, completion tokens).
SAMPLES: dict[str, list[tuple[bool | None, int]]] = {
    "0": [(True, 9120), (True, 11004), (False, MAX_TOKENS), (True, 8790)],
    "1": [(False, MAX_TOKENS), (False, 20517), (False, MAX_TOKENS), (True, 15233)],
    "2": [(False, 17002), (False, 12890), (False, 26531), (False, 31002)],
}
MODEL = "Qwen/QwQ-32B"


def _problem(index: str, samples: list[tuple[bool | None, int]]) -> dict[str, Any]:
    question = f"Find the remainder when {index}07 is divided by 1000."
    conversation = [
        {"role": "system", "content": "Please reason step by step."},
        {"role": "user", "content": f"Return your final response within \\boxed{{}}. {question}"},
    ]
    return {
        "id": 60 + int(index),
        "problem": question,
        "solution": "...",
        "answer": f"{index}7",
        "url": f"https://artofproblemsolving.com/wiki/index.php/2024_AIME_I_Problems/Problem_{index}",
        "_index": index,
        "prompt": conversation[1]["content"],
        "input_conversation": conversation,
        "responses": [
            {
                "content": f"... so the answer is \\boxed{{{index}7}}." if ok else "... \\boxed{0}",
                "correctness": ok,
                "reason": "" if ok else "Solution is incorrect.",
                "reasoning_content": None,
            }
            for ok, _ in samples
        ],
        "token_usages": [{"completion_tokens": t, "prompt_tokens": 87} for _, t in samples],
    }


def _summary(backend: str) -> dict[str, Any]:
    return {
        "configuration": {
            "task": {
                "name": "aime24",
                "config": {
                    "handler": "aime",
                    "dataset_path": "AI-MO/aimo-validation-aime",
                    "dataset_split": "train",
                    "question_key": "problem",
                    "answer_key": "answer",
                },
                "start": 0,
                "end": -1,
            },
            "model": {"name": MODEL, "config": {"model_id": MODEL, "name": "qwq-32b"}},
            "backend": {"name": backend, "backend_args": {"tensor_parallel_size": 4}},
            "sampling_params": {"temperature": 0.7, "top_p": 0.95, "max_tokens": MAX_TOKENS},
        },
        "total_completion_tokens": 310000,
        "avg_completion_tokens": 25833.333,
        "total_prompt_tokens": 1044,
        "avg_prompt_tokens": 87.0,
        "accuracy": 0.4167,
        "pass_at_k": {"temp=0.7": {"k=1": 41.667, "k=2": 58.333, "k=4": 66.667}},
    }


def _write(root: Path, backend: str = "vllm", samples: dict[str, Any] | None = None) -> Path:
    run = root / "Qwen_QwQ-32B_aime24_6a1f0c2b9d"
    run.mkdir(parents=True)
    results = {i: _problem(i, s) for i, s in (samples or SAMPLES).items()}
    (run / "results.json").write_text(json.dumps(results, indent=4, ensure_ascii=False))
    (run / "summary.json").write_text(json.dumps(_summary(backend), indent=4))
    return run


def test_responses_of_problems_read_as_rollouts(tmp_path: Path) -> None:
    rows = read_rows([str(_write(tmp_path))])
    frame = rows.frame.collect()
    per = frame.group_by("task_id").agg(
        n=pl.len(),
        c=pl.col("passed").cast(pl.Int64).sum(),
        cut=pl.col("truncated").cast(pl.Int64).sum(),
    )
    assert sorted(per.iter_rows()) == [("0", 4, 3, 1), ("1", 4, 1, 2), ("2", 4, 0, 0)]
    assert set(frame["model"].to_list()) == {MODEL}
    assert rows.format == "skythought"


def test_the_summary_is_a_sidecar_and_the_folder_reads_alone(tmp_path: Path) -> None:
    run = _write(tmp_path)
    assert read_rows([str(run / "results.json")]).frame.collect().height == 12
    with pytest.raises(InputError, match="a SkyThought summary.json"):
        read_rows([str(run / "summary.json")])


def test_the_openai_backend_counts_no_tokens_per_sample(tmp_path: Path) -> None:
    rows = read_rows([str(_write(tmp_path, backend="openai"))])
    assert rows.frame.collect()["truncated"].null_count() == 12  # not recorded


def test_responses_not_yet_scored_are_ungraded(tmp_path: Path) -> None:
    samples = {i: [(None if i == "2" else ok, t) for ok, t in s] for i, s in SAMPLES.items()}
    rows = read_rows([str(_write(tmp_path, samples=samples))])
    assert any("4 of 12 responses hold no correctness" in note for note in rows.notes)


def test_results_never_scored_are_refused_naming_the_scoring_step(tmp_path: Path) -> None:
    samples = {i: [(None, t) for _, t in s] for i, s in SAMPLES.items()}
    with pytest.raises(InputError, match="grade them with skythought score"):
        read_rows([str(_write(tmp_path, samples=samples))])


def test_a_correctness_that_is_no_verdict_is_refused_at_its_field(tmp_path: Path) -> None:
    run = _write(tmp_path)
    doc = json.loads((run / "results.json").read_text())
    doc["1"]["responses"][2]["correctness"] = "False"
    (run / "results.json").write_text(json.dumps(doc, indent=4))
    with pytest.raises(InputError, match=r"field 'responses\[2\]\.correctness': must be true"):
        read_rows([str(run)])
    done = CliRunner().invoke(app, ["route", str(run)])
    assert done.exit_code == 2
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and "results.json" in lines[0] and "correctness" in lines[0]
