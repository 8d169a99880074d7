"""Per-row ids are keyed by the prompt on the rows that carry them, not all or nothing.

A generated pool mixes tasks whose k rollouts share one id, tasks whose rollouts each carry
their own id (a uuid per row) under one prompt, and single rows. Every reader (``route``,
``diff``/``size``, ``ada``, ``update``) must group the shared ids by id, the per-row ids by
their prompt, and leave the single rows alone (those with no prompt too: a missing prompt is
no prompt two rows share), in JSON Lines and Parquet alike.
"""

from __future__ import annotations

import json
from typing import Any

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.commands.diff import read_tasks
from whilecli.io.batch import read_batch
from whilecli.io.read import read_rows
from whilecli.io.table import read_table
from whilecli.route.pool import Counts, summarize


@st.composite
def pools(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[tuple[int, int]]]:
    """Rows, and each true task's (rows, passes)."""
    rows: list[dict[str, Any]] = []
    truth: list[tuple[int, int]] = []
    kind = st.sampled_from(["shared", "per-row", "single", "no-prompt"])
    kinds = draw(st.lists(kind, min_size=2, max_size=8))
    if "per-row" not in kinds:
        kinds.append("per-row")
    for t, kind in enumerate(kinds):
        k = 1 if kind in ("single", "no-prompt") else draw(st.integers(2, 5))
        passes = [draw(st.booleans()) for _ in range(k)]
        for i, passed in enumerate(passes):
            task = f"task-{t}" if kind == "shared" else f"{t:04d}-{i:04d}-uuid"
            prompt = None if kind == "no-prompt" else f"question {t}"
            rows.append({"task_id": task, "prompt": prompt, "reward": float(passed)})
        truth.append((k, sum(passes)))
    order = draw(st.permutations(range(len(rows))))
    return [rows[i] for i in order], sorted(truth)


def _shape(ids: list[Any], passes: list[Any]) -> list[tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for task, passed in zip(ids, passes, strict=True):
        n, p = out.get(str(task), (0, 0))
        out[str(task)] = (n + 1, p + bool(passed))
    return sorted(out.values())


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(pool=pools(), fmt=st.sampled_from(["jsonl", "parquet"]))
def test_per_row_ids_are_keyed_by_prompt_where_they_occur(
    tmp_path_factory: Any, pool: tuple[list[dict[str, Any]], list[tuple[int, int]]], fmt: str
) -> None:
    rows, truth = pool
    path = tmp_path_factory.mktemp("ids") / f"rows.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        pl.DataFrame(rows).write_parquet(path)
    read = read_rows([str(path)], aggregate=Counts())
    tasks = summarize(read).tasks
    got = {
        "route": sorted(zip(tasks["n"].to_list(), tasks["passes"].to_list(), strict=True)),
    }
    diff = read_tasks(str(path), mapping=None, pass_threshold=None, input_format=None)
    got["diff/size"] = sorted(zip(diff["n"].to_list(), diff["passes"].to_list(), strict=True))
    table = read_table([str(path)]).canonical
    got["ada"] = _shape(table["task_id"].to_list(), table["passed"].to_list())
    cols = read_batch(path)
    assert cols.task_ids is not None and cols.rewards is not None
    got["update"] = _shape(cols.task_ids, [r >= 1.0 for r in cols.rewards])
    for command, shape in got.items():
        assert shape == truth, (command, rows)
    assert read.facts.per_row_ids == "task_id"
    # the note says how many rows were keyed by the prompt, and the tasks they form
    per_row = [r for r in rows if r["task_id"].endswith("-uuid")]
    prompts = {r["prompt"] for r in per_row if r["prompt"] is not None}
    shared = [r for r in per_row if r["prompt"] in prompts]
    rekeyed = [r for r in shared if sum(o["prompt"] == r["prompt"] for o in shared) > 1]
    note = next(w for w in read.facts.warnings() if w.startswith("task_id holds one id per row"))
    if len(rekeyed) == len(rows):
        assert note.endswith("tasks are keyed by the prompt, so a prompt's rollouts form one group")
    else:
        keyed = len({r["prompt"] for r in rekeyed})
        assert f"on {len(rekeyed)} of {len(rows)} rows" in note, note
        assert f"those {len(rekeyed)} rows are keyed by the prompt ({keyed} task" in note, note
