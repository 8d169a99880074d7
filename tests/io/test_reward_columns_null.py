"""A reward kept in named columns, one per reward function (TRL's GRPO completion tables), with
a null in one of them: the row is ungraded, in every reader, however the table is stored.

TRL's ``GRPOTrainer`` writes ``completions/[mode/]completions_{step:05d}.parquet`` (and the
W&B ``completions`` table) with one column per reward function, named by its ``__name__``;
``trl.rewards.accuracy_reward`` returns None where the gold answer cannot be parsed. Such a row
has no grade: left out of every rate and counted (DESIGN section 1, "graded"), never read as a
failure, whether it is the only reward column or one of several that are summed. A refusal of
the summed rewards' range names the sum, not its first column.

The truth is counted from the generated parts, apart from the reader.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.commands.diff import read_tasks
from whilecli.errors import InputError
from whilecli.io.batch import read_batch
from whilecli.io.read import read_rows
from whilecli.io.table import read_table
from whilecli.route.pool import Counts, summarize

FUNCS = ("accuracy_reward", "think_format_reward", "tag_count_reward")
#: (how the table is stored, how many reward columns, which of them can hold a null)
VARIANTS = [
    ("parquet", 1, (0,)),
    ("parquet", 2, (0,)),
    ("parquet", 2, (1,)),
    ("parquet", 3, (0, 2)),
    ("table.json", 1, (0,)),
    ("table.json", 2, (0, 1)),
    ("jsonl", 2, (0,)),
]


def _table(rng: random.Random, n_cols: int, nullable: tuple[int, ...]) -> list[dict[str, Any]]:
    rows = []
    for t in range(rng.randint(6, 12)):
        unparsable = rng.random() < 0.4  # the gold answer of this task does not parse
        for i in range(rng.randint(2, 6)):
            row: dict[str, Any] = {
                "step": 40,
                "prompt": f"<|im_start|>user\nQuestion {t}<|im_end|>\n<|im_start|>assistant\n",
                "completion": f"<think>draw {i}</think> answer",
            }
            for c in range(n_cols):
                part: float | None = float(rng.random() < 0.6)
                if c in nullable and unparsable and rng.random() < 0.8:
                    part = None
                row[FUNCS[c]] = part
            row["advantage"] = 0.0
            rows.append(row)
    # at least one row graded and one ungraded
    rows[0] |= {FUNCS[c]: 1.0 for c in range(n_cols)}
    rows[-1][FUNCS[nullable[0]]] = None
    return rows


def _truth(rows: list[dict[str, Any]], n_cols: int) -> tuple[list[tuple[int, int]], int]:
    """(graded rows, passes) per task, and the ungraded rows: a row passes when every reward
    function gave it 1 (the sum reaches the number of columns)."""
    tasks: dict[str, list[int]] = {}
    ungraded = 0
    for row in rows:
        parts = [row[FUNCS[c]] for c in range(n_cols)]
        if any(p is None for p in parts):
            ungraded += 1
            continue
        n, p = tasks.setdefault(row["prompt"], [0, 0])
        tasks[row["prompt"]] = [n + 1, p + (sum(parts) == n_cols)]
    return sorted((n, p) for n, p in tasks.values()), ungraded


def _write(folder: Path, store: str, rows: list[dict[str, Any]]) -> Path:
    if store == "parquet":
        path = folder / "completions" / "completions_00040.parquet"
        path.parent.mkdir()
        pl.DataFrame(rows, infer_schema_length=None).write_parquet(path)
    elif store == "table.json":  # W&B's media/table/completions_*.table.json
        path = folder / "completions_40_abc.table.json"
        columns = list(rows[0])
        path.write_text(json.dumps({"columns": columns, "data": [list(r.values()) for r in rows]}))
    else:
        path = folder / "completions.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


CASES = [(store, n, nulls, seed) for store, n, nulls in VARIANTS for seed in range(3)]


@pytest.mark.parametrize(
    ("store", "n_cols", "nullable", "seed"),
    CASES,
    ids=[f"{s}-{n}cols-null{'+'.join(map(str, nl))}-{seed}" for s, n, nl, seed in CASES],
)
def test_a_null_reward_column_is_no_grade(
    tmp_path: Path, store: str, n_cols: int, nullable: tuple[int, ...], seed: int
) -> None:
    rows = _table(random.Random(seed), n_cols, nullable)
    want, ungraded = _truth(rows, n_cols)
    path = _write(tmp_path, store, rows)
    threshold = float(n_cols) if n_cols > 1 else None

    read = read_rows([str(path)], pass_threshold=threshold, aggregate=Counts())
    assert read.format == "trl"
    assert read.facts.ungraded == ungraded
    tasks = summarize(read).tasks
    assert sorted((int(r["n"]), int(r["passes"])) for r in tasks.iter_rows(named=True)) == want

    per_task = read_tasks(str(path), mapping=None, pass_threshold=threshold, input_format=None)
    assert sorted((int(r["n"]), int(r["passes"])) for r in per_task.iter_rows(named=True)) == want

    table = read_table([str(path)], pass_threshold=threshold)  # the row methods' reader
    assert table.canonical.filter("graded").height == len(rows) - ungraded
    assert table.facts.ungraded == ungraded

    batch = read_batch(str(path))  # the update's reader leaves the ungraded rows out
    assert batch.size == len(rows) - ungraded
    assert batch.input_rows is not None
    assert sum(why is not None for why in batch.input_rows.left_out) == ungraded

    # --missing fail: the ungraded rows are failures, and every row counts
    failed = read_tasks(
        str(path), mapping=None, pass_threshold=threshold, input_format=None, missing="fail"
    )
    assert int(failed["n"].sum()) == len(rows)
    assert int(failed["passes"].sum()) == sum(p for _, p in want)


@pytest.mark.parametrize("store", ["parquet", "table.json"])
def test_the_route_warns_of_the_ungraded_rows(tmp_path: Path, store: str) -> None:
    rows = _table(random.Random(5), 1, (0,))
    _, ungraded = _truth(rows, 1)
    path = _write(tmp_path, store, rows)
    result = CliRunner().invoke(app, ["route", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["summary"]["rows"] == len(rows) - ungraded
    assert f"{ungraded} of {len(rows)} rows" in result.output


@pytest.mark.parametrize("n_cols", [2, 3])
def test_a_sum_out_of_range_is_named_as_the_sum(tmp_path: Path, n_cols: int) -> None:
    rows = _table(random.Random(1), n_cols, (0,))
    path = _write(tmp_path, "parquet", rows)
    with pytest.raises(InputError) as err:
        read_rows([str(path)])
    summed = " + ".join(FUNCS[:n_cols])
    assert err.value.field == summed, str(err.value)
    assert f"'{summed}'" in str(err.value)
