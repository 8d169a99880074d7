"""The row facts agree between the route's reader and the row methods' table.

Generated files carry ungraded rows (a null or NaN grade, or none), harness-error replies and
partial credit. ``route``/``check`` (:func:`read_rows` + :func:`summarize`) and ``ada``/the
row methods (:func:`read_table`) must count the same rows per task, the same passes, the same
ungraded and error rows, and refuse the same files with the same words, under ``--missing
skip`` and ``--missing fail`` alike; a slow loop over the rows says what that is.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError
from whilecli.io.batch import read_batch
from whilecli.io.read import read_rows
from whilecli.io.table import read_table
from whilecli.route.pool import Counts, summarize

GRADES = st.sampled_from([1.0, 0.0, 0.0, 1.0, 0.5, None, "nan", "absent"])
REPLIES = st.sampled_from(["an answer", "an answer", "", "Error: HTTP 503 service unavailable"])


@st.composite
def files(draw: st.DrawFn) -> list[dict[str, Any]]:
    rows = []
    for t in range(draw(st.integers(1, 5))):
        for _ in range(draw(st.integers(1, 4))):
            row: dict[str, Any] = {"task_id": f"t{t}", "completion": draw(REPLIES)}
            grade = draw(GRADES)
            if grade != "absent":
                row["reward"] = math.nan if grade == "nan" else grade
            rows.append(row)
    if all(r["completion"] == "" for r in rows):
        rows[0]["completion"] = "an answer"
    if all("reward" not in r for r in rows):
        rows[0]["reward"] = 1.0
    return rows


def slow(rows: list[dict[str, Any]], missing: str) -> dict[str, Any]:
    """What every reader must find: per task (rows, passes), the counts, or the refusal."""

    def grade(r: dict[str, Any]) -> float | None:
        g = r.get("reward")
        return None if g is None or (isinstance(g, float) and math.isnan(g)) else g

    def error(r: dict[str, Any]) -> bool:  # an error text the grader gave no credit
        return r["completion"].startswith("Error") and not (grade(r) or 0.0) > 0

    errors = sum(error(r) for r in rows)
    if errors >= 0.5 * len(rows):
        return {"refused": "most replies are errors"}
    kept = [r for r in rows if not error(r)]

    graded = [r for r in kept if grade(r) is not None]
    if not graded:
        return {"refused": "no graded row"}
    partial = sum(0 < grade(r) < 1 for r in graded)  # type: ignore[operator]
    if partial >= 0.1 * len(graded):
        return {"refused": "strictly between 0 and 1"}
    counted = kept if missing == "fail" else graded
    tasks: dict[str, list[int]] = {}
    for r in counted:
        entry = tasks.setdefault(r["task_id"], [0, 0])
        entry[0] += 1
        entry[1] += (grade(r) or 0.0) >= 1.0
    return {
        "tasks": {k: tuple(v) for k, v in tasks.items()},
        "ungraded": len(kept) - len(graded),
        "errors": errors,
    }


def route_reading(path: Path, missing: str) -> dict[str, Any]:
    rows = read_rows([str(path)], aggregate=Counts(), missing=missing)
    tasks = summarize(rows).tasks
    return {
        "tasks": {r["task_id"]: (r["n"], r["passes"]) for r in tasks.iter_rows(named=True)},
        "ungraded": rows.facts.ungraded,
        "errors": rows.facts.errors,
    }


def table_reading(path: Path, missing: str) -> dict[str, Any]:
    table = read_table([str(path)], missing=missing)
    tasks: dict[str, list[int]] = {}
    canonical = table.canonical
    for task, passed in zip(canonical["task_id"], canonical["passed"], strict=True):
        entry = tasks.setdefault(task, [0, 0])
        entry[0] += 1
        entry[1] += bool(passed)
    return {
        "tasks": {k: tuple(v) for k, v in tasks.items()},
        "ungraded": table.facts.ungraded,
        "errors": table.facts.errors,
    }


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rows=files(), missing=st.sampled_from(["skip", "fail"]))
def test_route_and_row_methods_read_the_same_facts(
    tmp_path_factory: pytest.TempPathFactory, rows: list[dict[str, Any]], missing: str
) -> None:
    path = tmp_path_factory.mktemp("facts") / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    want = slow(rows, missing)
    for read in (route_reading, table_reading):
        if "refused" in want:
            with pytest.raises(InputError) as err:
                read(path, missing)
            assert want["refused"] in str(err.value), (read.__name__, str(err.value))
        else:
            assert read(path, missing) == want, read.__name__


def test_a_null_grade_among_graded_rows_is_counted_not_refused(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    rows = [{"task_id": f"t{i % 3}", "reward": float(i % 2)} for i in range(30)]
    rows[4]["reward"] = None
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    table = read_table([str(path)])
    assert table.height == 29 and table.facts.ungraded == 1
    assert table.facts.first_ungraded == f"{path} line 5"
    assert any("1 of 30 rows are ungraded" in n for n in table.notes)
    failed = read_table([str(path)], missing="fail")
    assert failed.height == 30
    assert failed.canonical.filter(~failed.canonical["graded"])["passed"].to_list() == [False]


@pytest.mark.parametrize("command", ["ada", "summarize"])
def test_missing_is_offered_by_every_command_that_reads_rows(tmp_path: Path, command: str) -> None:
    """``--missing fail`` counts the ungraded row as a failure where ``skip`` leaves it out."""
    from typer.testing import CliRunner

    from whilecli.cli import app
    from whilecli.route.summary import pool_from_summary

    path = tmp_path / "rows.jsonl"
    rows = [{"task_id": f"t{i % 3}", "reward": float(i % 2)} for i in range(30)]
    rows[3]["reward"] = None  # task t0, an odd row: would not have passed either way
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    rollouts = {}
    for missing in ("skip", "fail"):
        if command == "ada":
            args = ["ada", str(path), "--missing", missing, "--format", "json"]
        else:
            out = tmp_path / f"{missing}.parquet"
            args = ["summarize", str(path), "-o", str(out), "--missing", missing]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        if command == "ada":
            rollouts[missing] = json.loads(result.stdout)["stats"]["rows"]
        else:
            rollouts[missing] = pool_from_summary([out]).rows
    assert rollouts == {"skip": 29, "fail": 30}


def batch_reading(path: Path, missing: str) -> dict[str, Any]:
    """update's batch (:func:`read_batch`): the same rows per task and passes at 1.0."""
    cols = read_batch(path, missing=missing)
    assert cols.task_ids is not None and cols.rewards is not None
    tasks: dict[str, list[int]] = {}
    for task, reward in zip(cols.task_ids, cols.rewards.tolist(), strict=True):
        entry = tasks.setdefault(str(task), [0, 0])
        entry[0] += 1
        entry[1] += reward >= 1.0
    return {"tasks": {k: tuple(v) for k, v in tasks.items()}}


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rows=files(),
    missing=st.sampled_from(["skip", "fail"]),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_update_reads_the_rows_route_and_the_row_methods_read(
    tmp_path_factory: pytest.TempPathFactory, rows: list[dict[str, Any]], missing: str, kind: str
) -> None:
    """update reads a batch through the same reader: the same rows per task (ungraded rows
    left out, or failures under fail; error replies left out) and the same refusals, except
    partial credit, which the update uses as a number, not a pass."""
    rows = [{**r, "logprobs": [-0.1, -0.2]} for r in rows]
    path = tmp_path_factory.mktemp("batch") / f"rows.{kind}"
    if kind == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        import polars as pl

        pl.DataFrame(rows, schema_overrides={"reward": pl.Float64}).write_parquet(path)
    want = slow(rows, missing)
    if want.get("refused") == "strictly between 0 and 1":
        want = _without_partial_rule(rows, missing)
    if "refused" in want:
        with pytest.raises(InputError) as err:
            batch_reading(path, missing)
        assert want["refused"] in str(err.value), str(err.value)
        return
    assert batch_reading(path, missing) == {"tasks": want["tasks"]}


def _without_partial_rule(rows: list[dict[str, Any]], missing: str) -> dict[str, Any]:
    """:func:`slow` with the partial-credit refusal left out (update reads rewards as numbers:
    a partial reward is no pass at 1.0, as a 0 is not)."""
    # a partial reward is credit: an error text beside it is the model's reply
    credited = {"completion": "an answer", "reward": 0.0}
    return slow([{**r, **credited} if r.get("reward") == 0.5 else r for r in rows], missing)
