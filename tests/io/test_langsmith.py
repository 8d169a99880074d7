"""LangSmith experiment exports (:mod:`whilecli.io.formats.langsmith`): ``list_runs()`` runs
(one row per root run, its example the task, a feedback key the grade, the model and finish
reason from its LLM runs) and ``evaluate()`` results' ``to_pandas()`` table written as CSV,
Parquet or JSON (flattened ``feedback.*`` columns read, a missing cell ungraded, an ``error``
an error reply); several 0/1 keys refused in one line naming ``--map reward=feedback.KEY``."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io.formats import langsmith
from whilecli.io.read import read_rows


def _root(i: int, example: str, feedback: dict[str, Any], **run: Any) -> dict[str, Any]:
    return {
        "id": f"run-{i}",
        "trace_id": f"run-{i}",
        "parent_run_id": None,
        "run_type": "chain",
        "name": "target",
        "inputs": {"question": f"q-{example}"},
        "outputs": {"answer": f"a{i}"},
        "error": None,
        "reference_example_id": example,
        "feedback_stats": {
            k: {"n": 1, "avg": v, "stdev": 0, "errors": 0} for k, v in feedback.items()
        },
        "extra": {"metadata": {"num_repetitions": 2}},
        "dotted_order": f"20250101T00000{i}Zrun-{i}",
        **run,
    }


def _llm(i: int, finish: str, model: str = "gpt-4o-mini") -> dict[str, Any]:
    return {
        "id": f"llm-{i}",
        "trace_id": f"run-{i}",
        "parent_run_id": f"run-{i}",
        "run_type": "llm",
        "name": "ChatOpenAI",
        "inputs": {"messages": []},
        "outputs": {"generations": [[{"text": "a", "generation_info": {"finish_reason": finish}}]]},
        "feedback_stats": None,
        "extra": {"metadata": {"ls_model_name": model}},
        "dotted_order": f"20250101T00000{i}Zrun-{i}.llm",
    }


def _lines(tmp_path: Path, rows: list[dict[str, Any]], name: str = "runs.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_runs_with_their_llm_runs(tmp_path: Path) -> None:
    runs = [
        _llm(0, "stop"),
        _root(0, "ex-a", {"correctness": 1.0}),
        _root(1, "ex-a", {"correctness": 0.0}),
        _llm(1, "length"),
        _root(2, "ex-b", {"correctness": 1.0}),
        _llm(2, "stop"),
    ]
    rows = read_rows([str(_lines(tmp_path, runs))])
    frame = rows.frame.collect().sort("task_id")
    assert rows.format == "langsmith"
    assert frame["task_id"].to_list() == ["ex-a", "ex-a", "ex-b"]
    assert frame["reward"].sum() == 2.0 and frame["truncated"].sum() == 1
    assert set(frame["model"].to_list()) == {"gpt-4o-mini"}


def test_an_errored_run_is_an_error_reply(tmp_path: Path) -> None:
    runs = [_root(i, f"ex-{i}", {"correctness": 1.0}) for i in range(5)]
    runs[0] |= {"error": "ValueError('boom')", "outputs": None, "status": "error"}
    rows = read_rows([str(_lines(tmp_path, runs))])
    assert rows.facts.errors == 1 and rows.frame.collect().height == 4


def test_a_judge_named_feedback_key_is_a_judge(tmp_path: Path) -> None:
    runs = [_root(i, f"ex-{i % 2}", {"llm_judge_correct": float(i % 2)}) for i in range(4)]
    rows = read_rows([str(_lines(tmp_path, runs))])
    assert rows.judge is not None and rows.judge.judged == 4


def test_several_zero_one_keys_are_refused_and_mapped(tmp_path: Path) -> None:
    runs = [
        _root(i, f"ex-{i % 2}", {"correctness": float(i % 2), "helpful": float(i < 2)})
        for i in range(4)
    ]
    path = _lines(tmp_path, runs)
    with pytest.raises(InputError) as err:
        read_rows([str(path)])
    message = str(err.value)
    assert "\n" not in message and "--map reward=feedback.correctness" in message
    assert "feedback.helpful" in message
    frame = read_rows([str(path)], mapping={"reward": "feedback.helpful"}).frame.collect()
    assert sorted(frame["reward"].to_list()) == [0.0, 0.0, 1.0, 1.0]


TABLE: dict[str, list[Any]] = {
    "inputs.question": ["q0", "q0", "q1", "q1"],
    "outputs.output": ["a", "b", "c", None],
    "error": [None, None, None, "TimeoutError()"],
    "reference.answer": ["x", "x", "y", "y"],
    "feedback.correctness": [1.0, 0.0, math.nan, None],
    "feedback.conciseness": [0.3, 0.7, 0.5, None],
    "execution_time": [1.0, 1.1, 0.9, 30.0],
    "example_id": ["e0", "e0", "e1", "e1"],
    "id": ["r0", "r1", "r2", "r3"],
}


@pytest.mark.parametrize("kind", ["csv", "parquet", "records", "lines", "columns"])
def test_a_results_table_as_pandas_writes_it(tmp_path: Path, kind: str) -> None:
    frame = pl.DataFrame(TABLE, strict=False)
    path = (
        tmp_path
        / f"results.{ {'records': 'json', 'lines': 'jsonl', 'columns': 'json'}.get(kind, kind) }"
    )
    records = [
        {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
        for r in frame.to_dicts()
    ]
    if kind == "csv":
        frame.write_csv(path)
    elif kind == "parquet":
        frame.write_parquet(path)
    elif kind == "records":
        path.write_text(json.dumps(records))
    elif kind == "lines":
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    else:
        columns = {k: {str(i): r[k] for i, r in enumerate(records)} for k in TABLE}
        path.write_text(json.dumps(columns))
    rows = read_rows([str(path)])
    assert rows.format == "langsmith"
    assert rows.sources["reward"].startswith("feedback.correctness")
    graded = rows.frame.collect().sort("task_id")
    assert graded["task_id"].to_list() == ["e0", "e0"]  # e1: one ungraded, one error
    assert graded["reward"].to_list() == [1.0, 0.0]
    assert rows.facts.errors == 1 and rows.facts.ungraded == 1


def test_a_table_with_no_feedback_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "results.csv"
    path.write_text("inputs.question,outputs.output,error,example_id,id\nq,a,,e0,r0\n")
    result = CliRunner().invoke(app, ["route", str(path)])
    assert result.exit_code == 2 and "no feedback.* column holds a score" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_the_recognisers() -> None:
    assert langsmith.is_run({"run_type": "llm", "inputs": {}, "trace_id": "t"})
    assert not langsmith.is_run({"run_type": "llm", "inputs": {}})
    assert langsmith.is_flat({"example_id": "e", "feedback.x": 1})
    assert not langsmith.is_flat({"example_id": "e", "reward": 1, "prompt": "p"})
    assert not langsmith.is_document([{"task_id": "a", "reward": 1}])


def test_route_reads_runs(tmp_path: Path) -> None:
    runs = [_root(i, f"ex-{i % 5}", {"correctness": float(i % 3 == 0)}) for i in range(10)]
    result = CliRunner().invoke(app, ["route", str(_lines(tmp_path, runs)), "-v"])
    assert result.exit_code in (0, 1), result.output
    assert "format: langsmith" in result.output
    assert "reward ← feedback_stats.correctness.avg" in result.output
