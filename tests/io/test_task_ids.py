"""Task ids 1 and 1.0 are one task in every reader and file type (the fast JSONL path, the
line-by-line path a bad line sends a file to, Parquet, the batch reader)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from whilecli.errors import InputError
from whilecli.io.batch import read_batch
from whilecli.io.read import read_rows


def test_jsonl_fast_path(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"task_id": 1, "reward": 1.0}\n{"task_id": 1.0, "reward": 0.0}\n')
    assert read_rows([str(path)]).frame.collect()["task_id"].to_list() == ["1", "1"]


def test_line_by_line_path(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    # a string where polars expects a number sends the file to the exact reader
    path.write_text(
        '{"task_id": 1, "reward": 1.0}\n{"task_id": 1.0, "reward": 0.0}\n'
        '{"task_id": 2.5, "reward": "x"}\n'
    )
    with pytest.raises(InputError, match=r"rows\.jsonl:3"):
        read_rows([str(path)])
    path.write_text('{"task_id": 1, "reward": 1}\n{"task_id": 1.0, "reward": true}\n')
    assert set(read_rows([str(path)]).frame.collect()["task_id"].to_list()) == {"1"}


def test_parquet_float_ids(tmp_path: Path) -> None:
    path = tmp_path / "rows.parquet"
    pl.DataFrame({"task_id": [1.0, 1.0, 2.5], "reward": [1.0, 0.0, 1.0]}).write_parquet(path)
    assert read_rows([str(path)]).frame.collect()["task_id"].to_list() == ["1", "1", "2.5"]


def test_route_and_update_agree(tmp_path: Path) -> None:
    path = tmp_path / "batch.jsonl"
    rows = [
        {"task_id": tid, "reward": r, "logprobs": [-0.5, -0.25]}
        for tid, r in ((1, 1.0), (1.0, 0.0), (2, 1.0), (2.0, 1.0))
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    route_ids = read_rows([str(path)]).frame.collect()["task_id"].to_list()
    batch = read_batch(path)
    assert len(set(route_ids)) == 2
    assert batch.task_ids is not None and sorted(set(batch.task_ids)) == sorted(set(route_ids))


@pytest.mark.parametrize("kind", ["jsonl", "csv", "parquet"])
@pytest.mark.parametrize(
    "spellings",
    [("1", "1.0"), ("0", "-0.0"), ("0.0", "-0.0"), ("7", "7.00"), ("-3", "-3.0")],
)
def test_one_number_spelled_two_ways_is_one_task_in_every_file_type(
    kind: str, spellings: tuple[str, str], tmp_path: Path
) -> None:
    """A CSV holds every id as text, a JSONL or Parquet file as a number: a number written
    by two writers (``1`` and ``1.0``, ``0.0`` and ``-0.0``) is one task whichever held it."""
    values = [spellings[i % 2] for i in range(4)]
    path = tmp_path / f"rows.{kind}"
    if kind == "csv":
        path.write_text(
            "task_id,reward\n" + "".join(f"{v},{i % 3 == 0:d}\n" for i, v in enumerate(values))
        )
    elif kind == "jsonl":
        path.write_text(
            "".join(
                f'{{"task_id": {v}, "reward": {float(i % 3 == 0)}}}\n' for i, v in enumerate(values)
            )
        )
    else:
        pl.DataFrame(
            {"task_id": [float(v) for v in values], "reward": [float(i % 3 == 0) for i in range(4)]}
        ).write_parquet(path)
    assert read_rows([str(path)]).frame.collect()["task_id"].n_unique() == 1
