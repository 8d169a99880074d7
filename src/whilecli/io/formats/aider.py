"""Aider benchmark results (``Aider-AI/aider``, ``benchmark/benchmark.py``: ``run_test_real``
writes ``<run dir>/<language>/exercises/practice/<exercise>/.aider.results.json``, one per
exercise, under ``tmp.benchmarks/<YYYY-MM-DD-HH-MM-SS>--<name>/``).

A result: ``testdir`` (the exercise's folder), ``testcase`` (its name), ``model``,
``edit_format``, ``tests_outcomes`` (one bool per try: the unit tests' verdict, stopping at
the first pass; empty with ``--no-unit-tests``), ``cost``, ``duration``, ``test_timeouts``,
``commit_hash`` (aider's), ``num_error_outputs``, ``num_user_asks``,
``num_exhausted_context_windows``, ``num_malformed_responses``, ``syntax_errors``,
``indentation_errors``, ``lazy_comments``, ``chat_hashes``; ``editor_model`` and
``editor_edit_format`` in architect mode. Where the harness raised, ``run_test`` writes
``{"exception": "..."}`` alone.

A task is an exercise of one language (``<language>/<exercise>``, from ``testdir``: exercise
names repeat across languages); the runs of one model are its rollouts. The grade is the last
outcome, as ``summarize_results`` counts a pass (``pass_rate_<tries>``: passed within the
run's tries; ``--map reward=tests_outcomes[0]`` reads the first try alone). An exhausted
context window cut the chat off. A ``{"exception"}`` file is a failure, as Aider's summary
counts it (a completed exercise that passed no try).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from whilecli.errors import InputError
from whilecli.io.formats import Converted

NAME = "aider"
#: The one name ``run_test`` gives a result file (it begins with a dot: a folder's hidden
#: files are otherwise left out).
FILE_NAME = ".aider.results.json"
#: ``<language>/exercises/practice/<exercise>`` at the end of ``testdir``.
EXERCISE = re.compile(r"([^/\\]+)[/\\]exercises[/\\]practice[/\\]([^/\\]+)[/\\]?$")


def is_result(doc: Any) -> bool:
    """A result as ``run_test_real`` writes it: ``testcase``, ``edit_format`` and a list
    ``tests_outcomes``."""
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("tests_outcomes"), list)
        and "testcase" in doc
        and "edit_format" in doc
    )


def is_exception(doc: Any, path: Any) -> bool:
    """``run_test``'s ``{"exception": ...}``, in a file named as its results are."""
    return (
        isinstance(path, Path)
        and path.name == FILE_NAME
        and isinstance(doc, dict)
        and set(doc) == {"exception"}
    )


def _task(testdir: Any, testcase: Any, path: Any) -> str | None:
    """``<language>/<exercise>`` from ``testdir``, else from the file's folder; else the
    exercise's name alone."""
    for where in (testdir, path.parent if isinstance(path, Path) else None):
        if isinstance(where, (str, Path)):
            found = EXERCISE.search(str(where))
            if found is not None:
                return f"{found.group(1)}/{found.group(2)}"
    return str(testcase) if isinstance(testcase, str) and testcase else None


def _row(doc: dict[str, Any], path: Any, name: str, where: dict[str, Any]) -> dict[str, Any]:
    """One result (or ``{"exception"}``) as a row."""
    if is_exception(doc, path):
        task = _task(None, None, path)
        if task is None:
            raise InputError("no exercise folder names the task", file=name, field="exception")
        # no verdict after an exception: a failure, as summarize_results counts it (a completed
        # test whose tests_outcomes is empty); not named an error (aliases.ERROR_ALIASES): one
        # exercise a file, an error row would leave its file no graded row
        return {"task_id": task, "reward": 0.0, "run_exception": str(doc["exception"])}
    if not is_result(doc):
        raise InputError(
            "not an Aider benchmark result (testcase, edit_format, tests_outcomes)",
            file=name,
            **where,
        )
    outcomes = doc["tests_outcomes"]
    for i, outcome in enumerate(outcomes):
        if not isinstance(outcome, bool):
            raise InputError(
                f"must be true or false, found {outcome!r}",
                file=name,
                field=f"tests_outcomes[{i}]",
                **where,
            )
    task = _task(doc.get("testdir"), doc.get("testcase"), path)
    if task is None:
        raise InputError("not an exercise name", file=name, field="testcase", **where)
    windows = doc.get("num_exhausted_context_windows")
    model = doc.get("model")
    return {
        "task_id": task,
        # no unit tests were run (--no-unit-tests): ungraded
        "reward": float(outcomes[-1]) if outcomes else None,
        "tests_outcomes": outcomes,
        "truncated": windows > 0 if isinstance(windows, int) else None,
        "model": model if isinstance(model, str) else None,
        "edit_format": doc.get("edit_format"),
    }


def convert(doc: dict[str, Any], path: Any, name: str) -> Converted:
    """One result file (``run_test_real``'s, pretty-printed, or ``run_test``'s exception)."""
    return _converted([_row(doc, path, name, {})], [{"at": "the result"}])


def from_lines(rows: Iterable[tuple[int, dict[str, Any]]], path: Any, name: str) -> Converted:
    """Results one per line (a result file written on one line, or several joined)."""
    out: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    for lineno, doc in rows:
        out.append(_row(doc, path, name, {"line": lineno}))
        positions.append({"line": lineno})
    return _converted(out, positions)


def _converted(rows: list[dict[str, Any]], positions: list[dict[str, Any]]) -> Converted:
    notes = []
    raised = sum("run_exception" in row for row in rows)
    if raised:
        notes.append(
            f'the benchmark raised on {raised} exercise(s) ({{"exception"}}): failures, as'
            " Aider's summary counts them"
        )
    ungraded = sum(row["reward"] is None for row in rows)
    if ungraded:
        notes.append(f"{ungraded} result(s) ran no unit tests (--no-unit-tests): ungraded")
    cut_known = any(row.get("truncated") is not None for row in rows)
    origins = {
        "task_id": "testdir: <language>/<exercise> (a model's runs are rollouts)",
        "reward": "tests_outcomes[-1] (passed within the run's tries)",
        "truncated": "num_exhausted_context_windows > 0" if cut_known else "not recorded",
        "model": "model" if any(row.get("model") for row in rows) else "not recorded",
    }
    spelled = {"reward": "tests_outcomes", "model": "model"}
    return Converted(NAME, rows, origins, notes, positions=positions, spelled=spelled)
