"""Reading streams: no row-level frame is materialised, counts add up, startup stays light.

``read_rows`` validates each file with one streaming pass that also gathers the route's
per-task counts, and the tables of the files are added (merged into a running total every
few rows, :data:`whilecli.route.pool.PENDING_ROWS`, made tiny here). Every result is checked
against a plain-Python count of the same rows. Timing and peak memory at 10M+ rows are
measured by ``benchmarks/route_bench.py``, not here.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError
from whilecli.io.read import StreamedRows, read_rows
from whilecli.route import pool as pool_module
from whilecli.route.pool import add_counts, summarize

SETTINGS = settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

ROW = st.fixed_dictionaries(
    {
        "task_id": st.sampled_from(["a", "b", "c", "d", "é", "日本"]),
        "reward": st.sampled_from([0.0, 1.0, 0.5]),
        "truncated": st.one_of(st.none(), st.booleans()),
        "model": st.sampled_from(["m", "m@1", "n"]),
    }
)


def plain_pool(rows: list[dict[str, Any]], threshold: float = 1.0) -> dict[str, Any]:
    """Per-task counts, models and versions by hand (DESIGN section 1 and the Pool contract)."""
    tasks: dict[str, list[int]] = {}
    models: Counter[str | None] = Counter()
    versions: Counter[str | None] = Counter()
    for row in rows:
        passed = row["reward"] >= threshold
        cut = row["truncated"]
        entry = tasks.setdefault(row["task_id"], [0, 0, 0, 0, 0])
        entry[0] += 1
        entry[1] += passed
        entry[2] += cut is True
        entry[3] += cut is not None
        entry[4] += cut is True and passed
        writer = row["model"]
        models[writer.split("@")[0]] += 1
        versions[writer if "@" in writer else None] += 1
    return {
        "tasks": {k: tuple(v) for k, v in sorted(tasks.items())},
        "models": dict(models),
        "versions": dict(versions),
    }


def pool_of(rows: Any) -> dict[str, Any]:
    pool = summarize(rows)
    columns = ["n", "passes", "truncated", "truncated_known", "truncated_passes"]
    tasks = {r[0]: tuple(r[1:]) for r in pool.tasks.select("task_id", *columns).iter_rows()}
    assert len(tasks) == pool.tasks.height  # one line per task, in no particular order
    assert pool.rows == sum(v[0] for v in tasks.values())
    return {"tasks": tasks, "models": dict(pool.models), "versions": dict(pool.versions)}


def write_shards(folder: Path, rows: list[dict[str, Any]], cuts: list[int], kind: str) -> None:
    """``rows`` split at ``cuts`` into shard files of ``kind`` (parquet or jsonl)."""
    folder.mkdir()
    bounds = [0, *sorted(set(c % (len(rows) + 1) for c in cuts)), len(rows)]
    schema = {"task_id": pl.String, "reward": pl.Float64, "truncated": pl.Boolean}
    for i, (lo, hi) in enumerate(zip(bounds, bounds[1:], strict=False)):
        part = rows[lo:hi]
        if not part:
            continue
        if kind == "parquet":
            frame = pl.DataFrame(part, schema={**schema, "model": pl.String})
            frame.write_parquet(folder / f"part-{i:03d}.parquet", row_group_size=3)
        else:
            # each row carries its index: two shards never hold the same bytes (read once)
            text = "".join(json.dumps({**r, "row": lo + j}) + "\n" for j, r in enumerate(part))
            (folder / f"part-{i:03d}.jsonl").write_text(text, encoding="utf-8")


@SETTINGS
@given(
    rows=st.lists(ROW, min_size=1, max_size=40),
    cuts=st.lists(st.integers(0, 40), max_size=4),
    piece=st.integers(1, 9),
    kind=st.sampled_from(["parquet", "jsonl"]),
)
def test_counts_add_up_to_the_plain_counts(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    rows: list[dict[str, Any]],
    cuts: list[int],
    piece: int,
    kind: str,
) -> None:
    """Shards, each read in one pass that gathers its per-task counts, the tables added into
    the running total every few rows: the pool is the plain count of all rows, whether from
    the counts gathered while reading or from the frame."""
    folder = tmp_path_factory.mktemp("shards") / "rows"
    write_shards(folder, rows, cuts, kind)
    with monkeypatch.context() as patch:
        patch.setattr(pool_module, "PENDING_ROWS", piece // 2)
        got = read_rows(
            [str(folder)], aggregate=pool_module.Counts(), pass_threshold=1.0
        )  # 0.5 on many rows: not a pass without a threshold
        assert isinstance(got, StreamedRows)
        assert got.aggregate is not None and got.counted_frame is got.frame
        assert pool_of(got) == plain_pool(rows)
        assert pool_of(dataclasses.replace(got, aggregate=None)) == plain_pool(rows)  # by frame
        assert got.frame.collect().height == len(rows)


def test_counts_are_not_used_for_another_frame(tmp_path: Path) -> None:
    """Rows whose frame was replaced are summarized from that frame, not the stored counts."""
    path = tmp_path / "rows.jsonl"
    path.write_text('{"task_id": "a", "reward": 1}\n{"task_id": "b", "reward": 0}\n')
    got = read_rows([str(path)], aggregate=pool_module.Counts())
    only_a = dataclasses.replace(got, frame=got.frame.filter(pl.col("task_id") == "a"))
    assert summarize(only_a).tasks["task_id"].to_list() == ["a"]
    assert summarize(got).tasks["task_id"].to_list() == ["a", "b"]


@SETTINGS
@given(
    tables=st.lists(
        st.dictionaries(st.sampled_from(["a", "b", "c", None]), st.integers(0, 9), min_size=1),
        min_size=1,
        max_size=5,
    )
)
def test_add_counts_sums_by_key(tables: list[dict[str | None, int]]) -> None:
    frames = [
        pl.DataFrame(
            {"key": list(t), "rows": list(t.values())}, schema={"key": pl.String, "rows": pl.Int64}
        )
        for t in tables
    ]
    want: Counter[str | None] = Counter()
    for t in tables:
        want.update(t)
    got = add_counts(frames, "key", sort=True)
    assert dict(got.iter_rows()) == {k: v for k, v in want.items()}
    assert got["key"].drop_nulls().to_list() == sorted(k for k in want if k is not None)


class _Collected:
    """Every frame polars hands back while reading and summarizing, by height."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.heights: list[int] = []
        collect, collect_all = pl.LazyFrame.collect, pl.collect_all

        def one(frame: pl.LazyFrame, *args: Any, **kwargs: Any) -> pl.DataFrame:
            out = collect(frame, *args, **kwargs)
            self.heights.append(out.height)
            return out

        def many(frames: Any, *args: Any, **kwargs: Any) -> list[pl.DataFrame]:
            out = collect_all(frames, *args, **kwargs)
            self.heights.extend(f.height for f in out)
            return out

        monkeypatch.setattr(pl.LazyFrame, "collect", one)
        monkeypatch.setattr(pl, "collect_all", many)


@pytest.mark.parametrize("kind", ["parquet", "jsonl"])
def test_no_row_level_frame_is_collected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """Reading and summarizing 3,000 rows of 7 tasks collects nothing taller than the
    per-task table: the validation is aggregates, the pool group-bys."""
    rows = [
        {"task_id": f"t{i % 7}", "reward": float(i % 3 == 0), "truncated": i % 5 == 0, "model": "m"}
        for i in range(3000)
    ]
    write_shards(tmp_path / "rows", rows, [1000, 2000], kind)
    seen = _Collected(monkeypatch)
    got = read_rows([str(tmp_path / "rows")])
    pool = summarize(got)
    monkeypatch.undo()
    assert pool.rows == 3000 and pool.n_tasks == 7
    assert seen.heights and max(seen.heights) <= 7, seen.heights
    assert pool_of(got) == plain_pool(rows)


def test_bad_row_in_a_later_shard_is_named(tmp_path: Path) -> None:
    """An aggregate finds the infinity; a filter on the row index names its file and row."""
    good = pl.DataFrame({"task_id": ["a", "b"] * 5, "reward": [1.0, 0.0] * 5})
    bad = good.with_columns(
        reward=pl.when(pl.int_range(pl.len()) == 7).then(float("inf")).otherwise(pl.col("reward"))
    )
    (tmp_path / "rows").mkdir()
    good.write_parquet(tmp_path / "rows" / "a.parquet")
    bad.write_parquet(tmp_path / "rows" / "b.parquet", row_group_size=3)
    with pytest.raises(InputError) as err:
        read_rows([str(tmp_path / "rows")])
    text = str(err.value)
    assert str(tmp_path / "rows" / "b.parquet") in text
    assert "row 7" in text and "reward" in text and "inf" in text.lower()


def test_reading_a_small_jsonl_does_not_import_pyarrow(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"task_id": "a", "reward": 1}\n{"task_id": "a", "reward": 0}\n')
    code = (
        "import sys\n"
        "from whilecli.route.pool import summarize\n"
        "from whilecli.io.read import read_rows\n"
        f"pool = summarize(read_rows([{str(path)!r}]))\n"
        "assert pool.rows == 2, pool.rows\n"
        "print('pyarrow' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
