"""Aider benchmark results (benchmark/benchmark.py: run_test_real) at
<run>/<language>/exercises/practice/<exercise>/.aider.results.json, one per exercise: the
task is <language>/<exercise>, the grade the last of tests_outcomes, an exhausted context
window a cut-off reply, the model its field; run_test's {"exception": ...} a failure, as
Aider's summary counts it. The file's name begins with a dot: a folder's other hidden files
are still left out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from whilecli.errors import InputError
from whilecli.io.read import read_rows

#: Per (language, exercise), each run's tests_outcomes and exhausted context windows.
GRID: dict[tuple[str, str], list[tuple[list[bool], int]]] = {
    ("python", "bowling"): [([True], 0), ([False, True], 0)],
    ("rust", "bowling"): [([False, False], 0), ([False, False], 1)],
    ("go", "bank-account"): [([True], 0), ([False, False], 0)],
}


def _result(testdir: Path, outcomes: list[bool], windows: int) -> dict[str, Any]:
    return {
        "testdir": str(testdir),
        "testcase": testdir.name,
        "model": "openrouter/qwen/qwen-2.5-coder-32b-instruct",
        "edit_format": "diff",
        "tests_outcomes": outcomes,
        "cost": 0.0123,
        "duration": 41.7,
        "test_timeouts": 0,
        "commit_hash": "a1b2c3d",
        "num_error_outputs": 0,
        "num_user_asks": 1,
        "num_exhausted_context_windows": windows,
        "num_malformed_responses": 0,
        "syntax_errors": 0,
        "indentation_errors": 0,
        "lazy_comments": 0,
        "chat_hashes": [["3f1a", "9b2c"]],
    }


def _write(root: Path) -> Path:
    benchmarks = root / "tmp.benchmarks"
    for run in range(2):
        dirname = benchmarks / f"2025-01-0{run + 1}-10-00-00--qwen-coder-diff"
        for (language, exercise), runs in GRID.items():
            outcomes, windows = runs[run]
            testdir = dirname / language / "exercises" / "practice" / exercise
            (testdir / ".meta").mkdir(parents=True)
            (testdir / ".meta" / "config.json").write_text(json.dumps({"files": {"test": []}}))
            (testdir / ".aider.chat.history.md").write_text("# aider chat started\n")
            results = _result(testdir, outcomes, windows)
            (testdir / ".aider.results.json").write_text(json.dumps(results, indent=4))
    return benchmarks


def test_runs_of_exercises_read_as_rollouts(tmp_path: Path) -> None:
    rows = read_rows([str(_write(tmp_path))])
    frame = rows.frame.collect()
    per = frame.group_by("task_id").agg(n=pl.len(), c=pl.col("passed").cast(pl.Int64).sum())
    assert sorted(per.iter_rows()) == [
        ("go/bank-account", 2, 1),
        ("python/bowling", 2, 2),
        ("rust/bowling", 2, 0),
    ]
    assert frame["truncated"].sum() == 1 and frame["truncated"].null_count() == 0
    # a hosted provider's endpoint, kept as written: it says who served the model
    assert set(frame["model"].to_list()) == {"openrouter/qwen/qwen-2.5-coder-32b-instruct"}
    assert rows.format == "aider"
    assert any("begin with a dot left out" in note for note in rows.notes)  # .meta/config.json


def test_the_first_try_alone_is_a_map_away(tmp_path: Path) -> None:
    rows = read_rows([str(_write(tmp_path))], mapping={"reward": "tests_outcomes[0]"})
    assert rows.frame.collect()["passed"].sum() == 2


def test_an_exception_is_a_failure_as_aider_counts_it(tmp_path: Path) -> None:
    benchmarks = _write(tmp_path)
    testdir = next(benchmarks.glob("*/python/exercises/practice/bowling"))
    (testdir / ".aider.results.json").write_text(json.dumps({"exception": "litellm.Timeout"}))
    rows = read_rows([str(benchmarks)])
    frame = rows.frame.collect().filter(pl.col("task_id") == "python/bowling")
    assert sorted(frame["passed"].to_list()) == [False, True]
    assert any("raised on 1 exercise" in note for note in rows.notes)


def test_an_outcome_that_is_no_verdict_is_refused_at_its_field(tmp_path: Path) -> None:
    testdir = tmp_path / "run" / "python" / "exercises" / "practice" / "hangman"
    testdir.mkdir(parents=True)
    results = _result(testdir, [False, True], 0) | {"tests_outcomes": [False, "passed"]}
    path = testdir / ".aider.results.json"
    path.write_text(json.dumps(results, indent=4))
    with pytest.raises(InputError, match=r"field 'tests_outcomes\[1\]': must be true or false"):
        read_rows([str(path)])
