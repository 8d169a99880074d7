"""An empty or blank task id is no id: it means what a missing one means, in every reader.

A generated pool mixes tasks whose rows share an id with tasks whose rows carry no id:
absent, null, empty, only whitespace, or the text a writer leaves for a missing value
(``None``, ``null``, ``NaN``, ``undefined``, in any case, with whitespace around it). Where those rows carry a prompt, each prompt is one
task (as in a file without an id column); where they carry none, ``route``, ``diff``/``size``
and ``ada`` refuse the first such row as one without a task id, and ``update`` reads the row
with no id (a method that groups by task refuses it). Empty ids are never one shared task.
"""

from __future__ import annotations

import json
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.commands.diff import read_tasks
from whilecli.errors import InputError
from whilecli.io.batch import read_batch
from whilecli.io.read import read_rows
from whilecli.io.table import read_table
from whilecli.route.pool import Counts, summarize

NO_ID = ("absent", None, "", "  ", "\t", " \n ", "missing text")
#: What writers leave where a value was missing, drawn in any case with whitespace around.
MISSING = ("none", "null", "nan", "undefined")


def _missing_text(draw: st.DrawFn) -> str:
    word = draw(st.sampled_from(MISSING))
    cased = "".join(draw(st.sampled_from([c, c.upper()])) for c in word)
    pad = st.sampled_from(["", " ", "\t", " \n"])
    return draw(pad) + cased + draw(pad)


@st.composite
def pools(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[tuple[int, int]], bool]:
    """Rows, each true task's (rows, passes), and whether a row has neither id nor prompt."""
    rows: list[dict[str, Any]] = []
    truth: list[tuple[int, int]] = []
    orphan = False
    for t in range(draw(st.integers(2, 6))):
        missing = draw(st.sampled_from(("shared", *NO_ID)))
        if missing == "missing text":
            missing = _missing_text(draw)
        prompt = draw(st.sampled_from([f"question {t}", f"question {t}", None]))
        passes = [draw(st.booleans()) for _ in range(draw(st.integers(1, 4)))]
        for passed in passes:
            row: dict[str, Any] = {"reward": float(passed), "prompt": prompt}
            if missing != "absent":
                row["task_id"] = f"task-{t}" if missing == "shared" else missing
            rows.append(row)
        if missing != "shared" and prompt is None:
            orphan = True
            truth.extend((1, int(p)) for p in passes)
        else:
            truth.append((len(passes), sum(passes)))
    if not any("task_id" in r for r in rows):
        rows[0]["task_id"] = None  # the file has an id column
    order = draw(st.permutations(range(len(rows))))
    return [rows[i] for i in order], sorted(truth), orphan


def _shape(ids: list[Any], passes: list[Any]) -> list[tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for i, (task, passed) in enumerate(zip(ids, passes, strict=True)):
        key = f"row {i}" if task is None else str(task)
        n, p = out.get(key, (0, 0))
        out[key] = (n + 1, p + bool(passed))
    return sorted(out.values())


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(pool=pools(), fmt=st.sampled_from(["jsonl", "parquet"]))
def test_a_blank_id_means_a_missing_one_in_every_reader(
    tmp_path_factory: Any, pool: tuple[list[dict[str, Any]], list[tuple[int, int]], bool], fmt: str
) -> None:
    rows, truth, orphan = pool
    path = tmp_path_factory.mktemp("ids") / f"rows.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        pl.DataFrame(
            rows, schema={"reward": pl.Float64, "prompt": pl.String, "task_id": pl.String}
        ).write_parquet(path)
    readers = {
        "route": lambda: summarize(read_rows([str(path)], aggregate=Counts())).tasks,
        "diff/size": lambda: read_tasks(
            str(path), mapping=None, pass_threshold=None, input_format=None
        ),
        "ada": lambda: read_table([str(path)]).canonical,
    }
    cols = read_batch(path)
    assert cols.task_ids is not None and cols.rewards is not None
    assert not any(str(t).strip().lower() in ("", *MISSING) for t in cols.task_ids if t is not None)
    if orphan:
        for command, read in readers.items():
            with pytest.raises(InputError, match="no task id") as err:
                read()
            assert path.name in str(err.value), command
        assert None in cols.task_ids
        return
    got = {
        "update": _shape(cols.task_ids, [r >= 1.0 for r in cols.rewards]),
    }
    tasks = readers["route"]()
    got["route"] = sorted(zip(tasks["n"].to_list(), tasks["passes"].to_list(), strict=True))
    diff = readers["diff/size"]()
    got["diff/size"] = sorted(zip(diff["n"].to_list(), diff["passes"].to_list(), strict=True))
    table = readers["ada"]()
    got["ada"] = _shape(table["task_id"].to_list(), table["passed"].to_list())
    for command, shape in got.items():
        assert shape == truth, (command, rows)


_AROUND = st.text(alphabet=" \t\u00a0\u2003\u3000\u200b\u2060\ufeff", max_size=4)


@settings(max_examples=60, deadline=None)
@given(pads=st.lists(st.tuples(_AROUND, _AROUND), min_size=1, max_size=6))
def test_invisible_characters_around_an_id_are_dropped_as_whitespace_is(
    pads: list[tuple[str, str]],
) -> None:
    import tempfile
    from pathlib import Path

    rows = [{"task_id": "t000", "reward": 1.0}] + [
        {"task_id": f"{before}t000{after}", "reward": float(i % 2)}
        for i, (before, after) in enumerate(pads)
    ]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rows.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        ids = read_rows([str(path)]).frame.collect()["task_id"].to_list()
    assert set(ids) == {"t000"}
