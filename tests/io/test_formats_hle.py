"""Humanity's Last Exam (hle_eval: run_model_predictions.py writes hle_<model>.json, keyed by
question id, each value {model, response, usage}; run_judge_results.py copies it into
judged_<file>.json with the judge's judge_response: correct "yes"/"no", confidence, ...): a
question is a task, each judged file one draw of it, the grade the judge's verdict, the
model each value's own. An unjudged predictions file is no rows: refused when named, left
out of a folder beside the judged file."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io.read import read_rows
from whilecli.route import run_route
from whilecli.route.model import Route

MODEL = "gpt-4o-2024-11-20"


def _prediction(rng: random.Random, model: str) -> dict[str, Any]:
    return {
        "model": model,
        "response": f"Explanation: ...\nAnswer: {rng.randint(0, 99)}\nConfidence: 80%",
        "usage": {"completion_tokens": rng.randint(50, 4000), "prompt_tokens": 300},
    }


def _judged(prediction: dict[str, Any], verdict: str) -> dict[str, Any]:
    return {
        **prediction,
        "judge_response": {
            "correct_answer": "42",
            "model_answer": "42" if verdict == "yes" else "7",
            "reasoning": "The extracted answer matches." if verdict == "yes" else "It differs.",
            "correct": verdict,
            "confidence": 80,
        },
    }


def _files(
    folder: Path, verdicts: list[list[str]], model: str = MODEL, seed: int = 0
) -> list[Path]:
    """One judged file per draw (its question ids shared), and the predictions beside each."""
    rng = random.Random(seed)
    ids = [f"66{i:04x}{rng.getrandbits(32):08x}" for i in range(len(verdicts[0]))]
    written = []
    for draw, row in enumerate(verdicts):
        predictions = {qid: _prediction(rng, model) for qid in ids}
        judged = {qid: _judged(p, v) for (qid, p), v in zip(predictions.items(), row, strict=True)}
        (folder / f"hle_{model}_{draw}.json").write_text(json.dumps(predictions, indent=4))
        path = folder / f"judged_hle_{model}_{draw}.json.json"
        path.write_text(json.dumps(judged, indent=4))
        written.append(path)
    return written


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    verdicts=st.integers(1, 3).flatmap(
        lambda draws: st.lists(
            st.lists(st.sampled_from(["yes", "no"]), min_size=draws, max_size=draws),
            min_size=3,
            max_size=12,
        )
    )
)
def test_each_question_is_a_task_and_each_judged_file_a_draw(
    verdicts: list[list[str]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("hle")
    by_draw = [list(col) for col in zip(*verdicts, strict=True)]
    _files(folder, by_draw)
    frame = read_rows([str(folder)]).frame.collect()  # the predictions beside are left out
    assert frame.height == len(verdicts) * len(by_draw)
    assert frame["task_id"].n_unique() == len(verdicts)
    assert int(frame["reward"].sum()) == sum(v == "yes" for row in verdicts for v in row)
    passes = frame.group_by("task_id").agg(pl.col("reward").sum())["reward"].sort().to_list()
    assert passes == sorted(sum(v == "yes" for v in row) for row in verdicts)


def test_the_judge_grades_and_the_model_is_read(tmp_path: Path) -> None:
    rng = random.Random(1)
    _files(tmp_path, [[rng.choice(["yes", "no"]) for _ in range(40)]])
    route = run_route(str(tmp_path / f"judged_hle_{MODEL}_0.json.json"), model="gpt-4o")
    assert isinstance(route, Route)
    assert route.route == "single-rollout"
    assert "a judge grades" in route.headline
    on_policy = next(c for c in route.checks if c.key == "on_policy")
    assert on_policy.status.value == "pass"  # the rows name gpt-4o's snapshot
    assert route.inputs["sources"]["model"] == "model"


def test_a_predictions_file_is_refused_when_named(tmp_path: Path) -> None:
    _files(tmp_path, [["yes", "no", "no"]])
    result = CliRunner().invoke(app, ["route", str(tmp_path / f"hle_{MODEL}_0.json")])
    assert result.exit_code == 2
    assert "HLE predictions" in result.output and "run_judge_results.py" in result.output
    assert "Traceback" not in result.output


def test_a_verdict_other_than_yes_or_no_names_the_question_and_field(tmp_path: Path) -> None:
    (path,) = _files(tmp_path, [["yes", "no", "no"]])
    doc = json.loads(path.read_text())
    qid = list(doc)[1]
    doc[qid]["judge_response"]["correct"] = "maybe"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError) as err:
        read_rows([str(path)])
    assert qid in str(err.value) and "judge_response.correct" in str(err.value)
    assert "'maybe'" in str(err.value)


def test_judge_verdicts_are_read_as_the_judge_writes_them(tmp_path: Path) -> None:
    (path,) = _files(tmp_path, [["yes", "no", "yes", "no"]])
    doc = json.loads(path.read_text())
    for value, spelled in zip(doc.values(), ["Yes", " no", "YES", None], strict=True):
        value["judge_response"]["correct"] = spelled
    path.write_text(json.dumps(doc))
    frame = read_rows([str(path)]).frame.collect()
    assert frame["reward"].drop_nulls().to_list() == [1.0, 0.0, 1.0]
