"""Braintrust experiment exports (:mod:`whilecli.io.formats.braintrust`): one row per trace,
the dataset record the task, one score the grade (or a one-line refusal naming ``--map
reward=scores.NAME``), an errored root an error reply, truncation and the model from the task's
own LLM span, never from an LLM scorer's, and a grade an LLM scorer gave read as a judge's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io.formats import braintrust
from whilecli.io.read import read_rows


def _span(trace: str, name: str, kind: str, parent: str | None, **event: Any) -> dict[str, Any]:
    span = trace if parent is None else f"{trace}-{name}"
    return {
        "id": f"row-{span}",
        "span_id": span,
        "root_span_id": trace,
        "span_parents": None if parent is None else [parent],
        "is_root": parent is None,
        "experiment_id": "exp-1",
        "span_attributes": {"name": name, "type": kind}
        | ({"purpose": "scorer"} if kind == "score" else {}),
        **event,
    }


def _eval_trace(
    trace: str,
    record: str,
    scores: dict[str, float],
    finish: str = "stop",
    judge_finish: str | None = None,
    error: str | None = None,
) -> list[dict[str, Any]]:
    """An ``Eval()`` trace: the root, the task with its chat call, a score span per scorer
    (an LLM scorer's own chat call beneath it where ``judge_finish`` is given)."""
    origin = {"object_type": "dataset", "object_id": "ds", "id": record, "_xact_id": "1"}
    spans = [
        _span(trace, "eval", "eval", None, input={"q": record}, output="a", origin=origin),
        _span(trace, "task", "task", trace, input={"q": record}, output="a"),
        _span(
            trace,
            "llm",
            "llm",
            f"{trace}-task",
            output=[{"index": 0, "finish_reason": finish, "message": {"content": "a"}}],
            metadata={"model": "gpt-4o-mini"},
            metrics={"start": 1.0},
        ),
    ]
    if error is not None:
        spans[0]["error"] = error
        return spans[:2]
    for name, value in scores.items():
        spans.append(_span(trace, name, "score", trace, scores={name: value}))
        if judge_finish is not None:
            spans.append(
                _span(
                    trace,
                    f"{name}-llm",
                    "llm",
                    f"{trace}-{name}",
                    output=[{"index": 0, "finish_reason": judge_finish}],
                    metadata={"model": "gpt-4.1"},
                )
            )
    return spans


def _write(tmp_path: Path, spans: list[dict[str, Any]], name: str = "exp.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(s) + "\n" for s in spans))
    return path


def _frame(path: Path, **kwargs: Any) -> pl.DataFrame:
    return read_rows([str(path)], **kwargs).frame.collect().sort("task_id")


def test_trials_of_a_record_are_its_rollouts_and_the_task_model_is_the_model(
    tmp_path: Path,
) -> None:
    spans = [
        *_eval_trace("t1", "rec-a", {"ExactMatch": 1}),
        *_eval_trace("t2", "rec-a", {"ExactMatch": 0}, finish="length"),
        *_eval_trace("t3", "rec-b", {"ExactMatch": 1}),
    ]
    rows = read_rows([str(_write(tmp_path, spans[::-1]))])
    frame = rows.frame.collect().sort("task_id")
    assert rows.format == "braintrust"
    assert frame["task_id"].to_list() == ["rec-a", "rec-a", "rec-b"]
    assert sorted(frame["reward"].to_list()) == [0.0, 1.0, 1.0]
    assert frame["truncated"].sum() == 1
    assert set(frame["model"].to_list()) == {"gpt-4o-mini"}
    assert rows.judge is not None and rows.judge.judged == 0  # ExactMatch is a program


def test_an_llm_scorer_grades_as_a_judge_and_its_call_is_not_the_reply(tmp_path: Path) -> None:
    spans = [
        *_eval_trace("t1", "rec-a", {"ClosedQA": 1}, judge_finish="length"),
        *_eval_trace("t2", "rec-b", {"ClosedQA": 0}, judge_finish="length"),
    ]
    rows = read_rows([str(_write(tmp_path, spans))])
    frame = rows.frame.collect()
    assert frame["truncated"].sum() == 0  # the judge's cut-off call is not the model's reply
    assert set(frame["model"].to_list()) == {"gpt-4o-mini"}
    assert rows.judge is not None and rows.judge.judged == rows.judge.rows == 2


def test_an_errored_root_is_an_error_reply(tmp_path: Path) -> None:
    spans = [
        *_eval_trace("t1", "rec-a", {}, error="Traceback: ValueError: boom"),
        *(s for i in range(2, 6) for s in _eval_trace(f"t{i}", f"rec-{i}", {"ExactMatch": 1})),
    ]
    rows = read_rows([str(_write(tmp_path, spans))])
    assert rows.facts.errors == 1
    assert rows.frame.collect().height == 4


def test_one_zero_one_score_among_several_grades(tmp_path: Path) -> None:
    spans = [
        *_eval_trace("t1", "rec-a", {"Levenshtein": 0.4, "ExactMatch": 1}),
        *_eval_trace("t2", "rec-b", {"Levenshtein": 0.9, "ExactMatch": 0}),
    ]
    rows = read_rows([str(_write(tmp_path, spans))])
    assert rows.sources["reward"].startswith("scores.ExactMatch")
    assert any("Levenshtein" in note for note in rows.notes)


def test_several_zero_one_scores_are_refused_naming_the_map_that_picks_one(
    tmp_path: Path,
) -> None:
    spans = [
        *_eval_trace("t1", "rec-a", {"ExactMatch": 1, "Valid": 0}),
        *_eval_trace("t2", "rec-b", {"ExactMatch": 0, "Valid": 1}),
    ]
    path = _write(tmp_path, spans)
    with pytest.raises(InputError) as err:
        read_rows([str(path)])
    message = str(err.value)
    assert "\n" not in message
    assert "--map reward=scores.ExactMatch" in message and "scores.Valid" in message
    frame = _frame(path, mapping={"reward": "scores.Valid"})
    assert frame["reward"].to_list() == [0.0, 1.0]
    assert frame["task_id"].to_list() == ["rec-a", "rec-b"]


def test_logged_rows_and_a_fetch_page(tmp_path: Path) -> None:
    """``Experiment.log`` rows (the scores on the root, ``dataset_record_id``) as a JSON array,
    and the REST fetch answer ``{"events": [...]}``, as booleans."""
    logged = [
        {
            "id": f"r{i}",
            "span_id": f"s{i}",
            "root_span_id": f"s{i}",
            "span_parents": [],
            "input": "q",
            "output": f"a{i}",
            "scores": {"accuracy": i % 2 == 0},
            "dataset_record_id": f"rec-{i % 2}",
            "metadata": {"model": "claude"},
        }
        for i in range(4)
    ]
    array = tmp_path / "logged.json"
    array.write_text(json.dumps(logged))
    frame = _frame(array)
    assert frame["task_id"].to_list() == ["rec-0", "rec-0", "rec-1", "rec-1"]
    assert frame["reward"].to_list() == [1.0, 1.0, 0.0, 0.0]
    page = tmp_path / "fetch.json"
    page.write_text(json.dumps({"events": logged, "cursor": "abc"}, indent=1))
    assert _frame(page)["reward"].to_list() == [1.0, 1.0, 0.0, 0.0]


def test_without_a_dataset_the_input_is_the_task(tmp_path: Path) -> None:
    spans = [
        *_eval_trace("t1", "rec-a", {"ExactMatch": 1}),
        *_eval_trace("t2", "rec-a", {"ExactMatch": 0}),
    ]
    for span in spans:
        span.pop("origin", None)
    frame = _frame(_write(tmp_path, spans))
    assert frame["task_id"].n_unique() == 1
    assert frame["task_id"][0].startswith("input:")


@pytest.mark.parametrize(
    ("spans", "words"),
    [
        ([_span("t1", "eval", "eval", None, input="q", output="a")], "no event holds a score"),
        (
            [_span("t1", "eval", "eval", None, input="q", output="a", scores=[1])],
            "scores is list",
        ),
    ],
)
def test_an_export_with_no_grade_is_refused_in_one_line(
    tmp_path: Path, spans: list[dict[str, Any]], words: str
) -> None:
    result = CliRunner().invoke(app, ["route", str(_write(tmp_path, spans))])
    assert result.exit_code == 2 and words in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1


def test_the_recogniser_takes_events_only() -> None:
    assert braintrust.is_event({"span_id": "a", "root_span_id": "a", "scores": {}})
    assert not braintrust.is_event({"span_id": "a", "root_span_id": "a", "reward": 1})
    assert not braintrust.is_event({"span_id": "a", "scores": {"x": 1}})
    assert not braintrust.is_export({"events": [{"type": "x"}]})


def test_route_reads_an_export(tmp_path: Path) -> None:
    spans = [
        s
        for i in range(6)
        for r in range(2)
        for s in _eval_trace(f"t{i}{r}", f"rec-{i}", {"ExactMatch": (i + r) % 2})
    ]
    result = CliRunner().invoke(app, ["route", str(_write(tmp_path, spans)), "-v"])
    assert result.exit_code in (0, 1), result.output
    assert "format: braintrust" in result.output
    assert "reward ← scores.ExactMatch" in result.output
