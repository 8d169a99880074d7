"""A reward in named parts (verifiers' ``rewards`` dict), read alike by every reader.

DESIGN section 1: with no reward column, ``rewards`` = ``{name: {score, weight} | None}`` is
the reward Σ score × weight (weight 1 when absent; a None part adds nothing, so a dict with
no scored part is 0). A row without the dict has no reward. The update's batch reader, the
row methods' reader and the route's reader agree, on JSONL rows and Parquet structs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io.batch import read_batch
from whilecli.io.read import read_rows
from whilecli.methods import rowio

ROWS: list[dict[str, Any]] = [
    {"rewards": {"acc": {"score": 1.0, "weight": 0.75}, "fmt": {"score": 1.0, "weight": 0.25}}},
    {"rewards": {"acc": {"score": 0.0, "weight": 0.75}, "fmt": {"score": 1.0, "weight": 0.25}}},
    {"rewards": {"acc": {"score": 1.0, "weight": 0.75}, "fmt": None}},
    {"rewards": {"acc": {"score": 1.0}, "fmt": {"score": 0.5, "weight": None}}},
]
# by hand: 0.75 + 0.25; 0 + 0.25; 0.75; weights absent or null are 1: 1 + 0.5
WANT = [1.0, 0.25, 0.75, 1.5]


def _files(tmp_path: Path, rows: list[dict[str, Any]]) -> tuple[Path, Path]:
    full = [dict(row, task_id=f"t{i}", logprobs=[-0.5, -0.25]) for i, row in enumerate(rows)]
    jsonl = tmp_path / "b.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in full))
    parquet = tmp_path / "b.parquet"
    pq.write_table(pa.Table.from_pylist(full), parquet)
    return jsonl, parquet


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_parts_sum_score_times_weight(tmp_path: Path, kind: str) -> None:
    path = dict(zip(("jsonl", "parquet"), _files(tmp_path, ROWS), strict=True))[kind]
    cols = read_batch(path)
    assert cols.sources["reward"] == "rewards"
    assert cols.rewards is not None and cols.rewards.tolist() == WANT
    assert cols.reward_present is not None and cols.reward_present.all()


def test_the_route_reads_the_same_sum(tmp_path: Path) -> None:
    jsonl, _ = _files(tmp_path, ROWS)
    route = read_rows([str(jsonl)], pass_threshold=0.5).frame.collect()
    assert route["reward"].to_list() == WANT


def test_a_reward_column_wins_over_the_parts(tmp_path: Path) -> None:
    rows = [dict(row, reward=0.5) for row in ROWS]
    for path in _files(tmp_path, rows):
        cols = read_batch(path)
        assert cols.sources["reward"] == "reward"
        assert cols.rewards is not None and cols.rewards.tolist() == [0.5] * 4


def test_a_malformed_part_is_refused_with_its_name(tmp_path: Path) -> None:
    rows = [*ROWS[:2], {"rewards": {"acc": {"score": "high"}}}]
    jsonl = tmp_path / "b.jsonl"
    jsonl.write_text("".join(json.dumps(dict(r, logprobs=[-0.1])) + "\n" for r in rows))
    with pytest.raises(InputError) as err:
        read_batch(jsonl)
    assert err.value.line == 3 and str(err.value.field).startswith("rewards.acc")
    # parts that are not {score, weight}: no reward, as the route reads it (which refuses)
    jsonl.write_text(json.dumps({"id": 1, "rewards": {"acc": 1.0}, "logprobs": [-0.1]}) + "\n")
    assert read_batch(jsonl).rewards is None
    with pytest.raises(InputError, match="no reward column"):
        read_rows([str(jsonl)])


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_the_row_methods_read_the_same_sum(tmp_path: Path, kind: str) -> None:
    path = dict(zip(("jsonl", "parquet"), _files(tmp_path, ROWS), strict=True))[kind]
    table = rowio.read_table([str(path)], pass_threshold=1.0)  # 1.5: a threshold is needed
    assert table.fields["reward"] == "rewards"
    assert table.canonical["reward"].to_list() == WANT


def test_the_row_methods_refuse_a_part_without_a_score(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"task_id": "a", "rewards": {"acc": {"value": 1}}}) + "\n")
    # the row methods read as the route reads: a dict of parts without scores is no reward
    with pytest.raises(InputError, match="no reward column") as err:
        rowio.read_table([str(path)])
    with pytest.raises(InputError) as route:
        read_rows([str(path)])
    assert str(err.value) == str(route.value) and err.value.field == "reward"


def test_ada_runs_on_rows_with_a_rewards_dict(tmp_path: Path) -> None:
    rows = [
        {"task_id": f"t{i // 4}", "rewards": {"acc": {"score": float(i % 3 == 0), "weight": 1.0}}}
        for i in range(16)
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = CliRunner().invoke(app, ["ada", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output


def test_a_part_never_scored_adds_nothing_in_parquet_too(tmp_path: Path) -> None:
    rows = [{"rewards": {"acc": {"score": 1.0}, "fmt": None}, "logprobs": [-0.1]}] * 2
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "b.parquet")  # fmt: a null column
    cols = read_batch(tmp_path / "b.parquet")
    assert cols.rewards is not None and cols.rewards.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_no_scored_part_is_0_and_no_dict_is_no_reward(tmp_path: Path, kind: str) -> None:
    """As the route sums: a dict whose parts are all null is 0; a row without the dict has no
    reward: an ungraded row, which the batch and the row methods leave out and count (named by
    its line or row), as the route does, or keep as a failure under ``--missing fail``."""
    rows = [
        {"task_id": "a", "rewards": {"acc": {"score": 1.0}}, "logprobs": [-0.1]},
        {"task_id": "a", "rewards": {"acc": None}, "logprobs": [-0.1]},
        {"task_id": "a", "rewards": None, "logprobs": [-0.1]},
    ]
    path = tmp_path / f"b.{kind}"
    if kind == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        pq.write_table(pa.Table.from_pylist(rows), path)
    cols = read_batch(path)
    assert cols.rewards is not None and cols.rewards.tolist() == [1.0, 0.0]
    assert cols.reward_present is not None and cols.reward_present.tolist() == [True, True]
    where = f"{path} " + ("line 3" if kind == "jsonl" else "row 2")
    assert any("1 of 3 rows are ungraded" in n and where in n for n in cols.notes), cols.notes
    failed = read_batch(path, missing="fail")
    assert failed.rewards is not None and failed.rewards.tolist() == [1.0, 0.0, 0.0]
    read = rowio.read_table([str(path)])
    assert read.height == 2 and read.facts.ungraded == 1
    assert read.facts.first_ungraded == f"{path} " + ("line 3" if kind == "jsonl" else "row 2")
    table = rowio.table_of(pl.DataFrame(rows[:2]).drop("logprobs"))
    assert table.canonical["reward"].to_list() == [1.0, 0.0]


def test_a_dict_in_a_reward_column_is_not_a_number(tmp_path: Path) -> None:
    path = tmp_path / "b.jsonl"
    path.write_text(json.dumps({"reward": {"score": 0.5}, "logprobs": [-0.1]}) + "\n")
    with pytest.raises(InputError, match="not a number") as err:
        read_batch(path)
    assert err.value.field == "reward"


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_the_route_reads_0_for_no_scored_part_and_leaves_out_a_row_without_the_dict(
    tmp_path: Path, kind: str
) -> None:
    rows = [
        {"task_id": "a", "rewards": {"acc": {"score": 1.0}, "fmt": {"score": 0.5}}},
        {"task_id": "a", "rewards": {"acc": None, "fmt": None}},
        {"task_id": "a", "rewards": None},
    ]

    def write(name: str, part: list[dict[str, Any]]) -> str:
        path = tmp_path / f"{name}.{kind}"
        if kind == "jsonl":
            path.write_text("".join(json.dumps(r) + "\n" for r in part))
        else:
            pq.write_table(pa.Table.from_pylist(part), path)
        return str(path)

    frame = read_rows([write("two", rows[:2])], pass_threshold=0.5).frame.collect()
    assert frame["reward"].to_list() == [1.5, 0.0]
    three = write("three", rows)
    read = read_rows([three], pass_threshold=0.5)  # the row without the dict is ungraded
    assert read.frame.collect()["reward"].to_list() == [1.5, 0.0]
    where = "row 2" if kind == "parquet" else "line 3"
    assert (read.facts.ungraded, read.facts.first_ungraded) == (1, f"{three} {where}")


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_update_missing_skips_or_fails_an_ungraded_row(tmp_path: Path, kind: str) -> None:
    """``update --missing`` as the route has it: an ungraded row is left out and named in the
    notes (skip, the default), or kept as a failure (fail); ``every trajectory needs a
    reward`` is no longer update's own rule."""
    rows = [
        {"task_id": "a", "reward": 1.0, "logprobs": [-0.1, -0.2]},
        {"task_id": "a", "reward": 0.0, "logprobs": [-0.3]},
        {"task_id": "a", "reward": None, "logprobs": [-0.5]},
        {"task_id": "b", "reward": 1.0, "logprobs": [-0.1]},
    ]
    path = tmp_path / f"b.{kind}"
    if kind == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        pq.write_table(pa.Table.from_pylist(rows), path)
    runner = CliRunner()
    where = "line 3" if kind == "jsonl" else "row 2"
    for flags, size in (([], 3), (["--missing", "skip"], 3), (["--missing", "fail"], 4)):
        args = ["update", str(path), "--method", "grpo", "--format", "json", *flags]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        report = json.loads(result.output)
        assert report["trajectories"] == size
        named = [n for n in report["notes"] if "ungraded" in n]
        assert len(named) == 1 and where in named[0]
    bad = runner.invoke(app, ["update", str(path), "--method", "grpo", "--missing", "maybe"])
    assert bad.exit_code == 2
