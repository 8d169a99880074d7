"""Grades and truncation flags written as text mean what their words say, in every command.

Generated pools write each grade as a number, a boolean or text (``"1.0"``, ``" 1 "``,
``"PASS"``, ``"fail"``, ``"true"``, ``"correct"``, ``"N/A"``...) and the same rows as JSON
Lines, one JSON document, CSV and Parquet (the grades as a string column). Every command's
reader (``route``/``check``, ``diff``/``size``, ``summarize``, ``ada`` and the row methods,
``update``) must read the passes a plain table of the words gives; a text that says no grade
(``"N/A"``, ``"null"``, an empty cell) is an ungraded row, counted and left out; a text that
says nothing (``"maybe"``) is refused in one line naming the file, the line or row and the
field, by every reader. A truncation flag's text follows one rule likewise: ``"maybe"`` is
refused by ``route`` and ``update`` alike, never read as "not cut off" by one of them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from read_helpers import every_reader
from whilecli.commands.diff import read_tasks
from whilecli.errors import InputError
from whilecli.io.batch import read_batch
from whilecli.io.columns import columns_from_rows
from whilecli.io.read import read_rows
from whilecli.io.table import read_table
from whilecli.route.pool import Counts, summarize
from whilecli.route.summary import pool_from_summary, write_summary

#: Grades as writers spell them, and what each means (None: no grade), written here by hand.
SPELLED: list[tuple[Any, float | None]] = [
    ("1.0", 1.0),
    ("0", 0.0),
    (" 1 ", 1.0),
    ("1", 1.0),
    ("0.0", 0.0),
    ("1e0", 1.0),
    ("+1", 1.0),
    ("-0", 0.0),
    ("\t0\t", 0.0),
    ("pass", 1.0),
    ("PASS", 1.0),
    ("Passed", 1.0),
    ("fail", 0.0),
    ("FAILED", 0.0),
    ("true", 1.0),
    ("True", 1.0),
    ("false", 0.0),
    ("correct", 1.0),
    ("Incorrect", 0.0),
    ("yes", 1.0),
    ("no", 0.0),
    ("N/A", None),
    ("null", None),
    ("None", None),
    ("nan", None),
    (1, 1.0),
    (0, 0.0),
    (1.0, 1.0),
    (True, 1.0),
    (False, 0.0),
]
#: Texts that say nothing about a grade: refused at their row by every reader.
NOT_GRADES = ("maybe", "high", "1.0.0", "0x1", "½", "pass!", "1_0", "٣")
FORMATS = ("jsonl", "json", "csv", "parquet")
#: The key a generated row keeps its grade's meaning under (never written to a file).
MEANS = "__means"


@st.composite
def pools(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Tasks of 1 to 4 rows, each grade one spelling; every task keeps one graded row."""
    rows: list[dict[str, Any]] = []
    for task in range(draw(st.integers(1, 6))):
        grades = draw(st.lists(st.sampled_from(SPELLED), min_size=1, max_size=4))
        if all(meaning is None for _, meaning in grades):
            grades.append(draw(st.sampled_from([("1", 1.0), ("fail", 0.0), (0, 0.0), (True, 1.0)])))
        rows += [{"task_id": f"t{task}", "reward": g, MEANS: m} for g, m in grades]
    return rows


def write(folder: Path, rows: list[dict[str, Any]], fmt: str) -> Path:
    path = folder / f"rows.{fmt}"
    rows = [{k: v for k, v in r.items() if k != MEANS} for r in rows]
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif fmt == "json":
        path.write_text(json.dumps(rows))
    else:  # a string column: every grade as the text a CSV or a pandas dump would hold
        text = [None if r["reward"] is None else _text(r["reward"]) for r in rows]
        frame = pl.DataFrame(
            {"task_id": [r["task_id"] for r in rows], "reward": text},
            schema={"task_id": pl.String, "reward": pl.String},
        )
        if fmt == "csv":
            frame.write_csv(path)
        else:
            frame.write_parquet(path)
    return path


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def expected(rows: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Per task, (graded rows, passes), from the table of words above."""
    out: dict[str, list[int]] = {}
    for r in rows:
        grade = r[MEANS]
        n, p = out.setdefault(r["task_id"], [0, 0])
        if grade is not None:
            out[r["task_id"]] = [n + 1, p + (grade >= 1.0)]
    return {k: (v[0], v[1]) for k, v in out.items() if v[0]}


def _from_tasks(tasks: pl.DataFrame) -> dict[str, tuple[int, int]]:
    return {str(r["task_id"]): (int(r["n"]), int(r["passes"])) for r in tasks.iter_rows(named=True)}


def _grouped(ids: list[Any], passes: list[bool]) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for task, passed in zip(ids, passes, strict=True):
        n, p = out.get(str(task), (0, 0))
        out[str(task)] = (n + 1, p + bool(passed))
    return out


def readings(path: Path, tmp: Path) -> dict[str, dict[str, tuple[int, int]]]:
    """Per command, task → (rows counted, passes), as that command reads the file."""
    out: dict[str, dict[str, tuple[int, int]]] = {}
    out["route/check"] = _from_tasks(summarize(read_rows([str(path)], aggregate=Counts())).tasks)
    tasks = read_tasks(str(path), mapping=None, pass_threshold=None, input_format=None)
    out["diff/size"] = _from_tasks(tasks)
    summary = tmp / "summary.parquet"
    write_summary(read_rows([str(path)], aggregate=Counts()), summary, force=True)
    out["summarize"] = _from_tasks(pool_from_summary([summary]).tasks)
    table = read_table([str(path)]).canonical
    out["ada/row methods"] = _grouped(table["task_id"].to_list(), table["passed"].to_list())
    cols = read_batch(path)
    assert cols.task_ids is not None and cols.rewards is not None
    out["update"] = _grouped(cols.task_ids, [r >= 1.0 for r in cols.rewards])
    return out


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rows=pools(), fmt=st.sampled_from(FORMATS))
def test_every_command_reads_grades_written_as_text(
    tmp_path_factory: Any, rows: list[dict[str, Any]], fmt: str
) -> None:
    tmp = tmp_path_factory.mktemp("grades")
    path = write(tmp, rows, fmt)
    want = expected(rows)
    for command, got in readings(path, tmp).items():
        assert got == want, (command, fmt, rows)
    memory = columns_from_rows(
        [{k: v for k, v in r.items() if k != MEANS} for r in rows]
    )  # rows already in memory (the library's Batch.from_rows)
    assert memory.rewards is not None and memory.reward_present is not None
    read = [r[MEANS] for r in rows]
    assert memory.reward_present.tolist() == [g is not None for g in read]
    assert [g for g, ok in zip(memory.rewards.tolist(), read, strict=True) if ok is not None] == [
        g for g in read if g is not None
    ]


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rows=pools(),
    bad=st.sampled_from(NOT_GRADES),
    at=st.integers(0, 30),
    fmt=st.sampled_from(FORMATS),
)
def test_a_text_that_is_no_grade_is_refused_at_its_row_by_every_reader(
    tmp_path_factory: Any, rows: list[dict[str, Any]], bad: str, at: int, fmt: str
) -> None:
    tmp = tmp_path_factory.mktemp("nograde")
    at = at % (len(rows) + 1)
    rows = [*rows[:at], {"task_id": "t0", "reward": bad, MEANS: None}, *rows[at:]]
    path = write(tmp, rows, fmt)
    where = {
        "jsonl": f":{at + 1}: field 'reward'",
        "json": f"entry {at}: field 'reward'",
        "csv": f":{at + 2}: field 'reward'",
        "parquet": f"row {at}: field 'reward'",
    }[fmt]
    for read in every_reader(path):
        with pytest.raises(InputError) as err:
            read()
        message = str(err.value)
        assert where in message and json.dumps(bad, ensure_ascii=False) in message, message
        assert "\n" not in message
    with pytest.raises(InputError, match="not a grade"):
        columns_from_rows([{k: v for k, v in r.items() if k != MEANS} for r in rows])


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
@pytest.mark.parametrize(
    ("flag", "cut"),
    [
        *(("true", True), ("FALSE", False), ("length", True), ("N/A", None)),
        *(("stop", False), ("End_Turn", False), ("maybe", "refused"), ("error", "refused")),
    ],
)
def test_route_and_update_read_a_truncation_flag_alike(
    tmp_path: Path, fmt: str, flag: str, cut: bool | str | None
) -> None:
    rows = [
        {"task_id": "a", "reward": 0.0, "logprobs": [-0.5], "truncated": "false"},
        {"task_id": "a", "reward": 0.0, "logprobs": [-0.5], "truncated": flag},
    ]
    path = tmp_path / f"rows.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        pl.DataFrame(rows).write_parquet(path)
    readers = (lambda: read_rows([str(path)]).frame.collect(), lambda: read_batch(path))
    if cut == "refused":
        for read in readers:
            with pytest.raises(InputError, match=rf"field 'truncated': is the text \"{flag}\""):
                read()
        return
    frame = read_rows([str(path)]).frame.collect()
    assert frame["truncated"].to_list() == [False, cut]
    cols = read_batch(path)
    assert cols.truncated is not None
    assert cols.truncated.tolist() == [
        False,
        bool(cut),
    ]  # unknown: not cut, as DESIGN's update says
