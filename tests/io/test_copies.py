"""A pool passed twice, as a copy under another name (gzipped, its keys reordered, written as
Parquet), is one pool's rows (DESIGN section 1, "Pooling": one pool in two encodings is read
once): the route is the single file's, and a note names the copy. The generator writes pools
of known truth at k = 1 and k = 4 and a copy of each in every form."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from whilecli.route import run_route
from whilecli.route.model import Route

MODEL = "Qwen/Qwen3-8B"


def _rows(seed: int, k: int) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    out = []
    for t in range(400):
        p = rnd.random()
        out += [{"task_id": f"q{t}", "reward": float(rnd.random() < p), "model": MODEL,
                 "truncated": False} for _ in range(k)]  # fmt: skip
    return out


def _copy(folder: Path, rows: list[dict[str, Any]], form: str) -> Path:
    if form == "gzip":
        path = folder / "again.jsonl.gz"
        path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    elif form == "reordered":
        path = folder / "again.jsonl"
        path.write_text("".join(json.dumps(dict(reversed(r.items()))) + "\n" for r in rows))
    else:
        path = folder / "again.parquet"
        pl.DataFrame(rows).write_parquet(path)
    return path


def _route(*paths: Path) -> Route:
    got = run_route([str(p) for p in paths], model=MODEL)
    assert isinstance(got, Route)
    return got


@pytest.mark.parametrize("form", ["gzip", "reordered", "parquet"])
@pytest.mark.parametrize("k", [1, 4])
def test_a_copy_under_another_name_is_read_once(tmp_path: Path, form: str, k: int) -> None:
    rows = _rows(k, k)
    one = tmp_path / "rows.jsonl"
    one.write_text("".join(json.dumps(r) + "\n" for r in rows))
    alone = _route(one)
    both = _route(one, _copy(tmp_path, rows, form))
    assert (both.route, both.method, both.provisional) == (
        alone.route,
        alone.method,
        alone.provisional,
    )
    assert both.summary["pass_at_1"].n_rows == alone.summary["pass_at_1"].n_rows
    assert any("read once" in note for note in both.notes)


def test_two_runs_that_differ_are_pooled(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("".join(json.dumps(r) + "\n" for r in _rows(1, 4)))
    b.write_text("".join(json.dumps(r) + "\n" for r in _rows(2, 4)))
    both = _route(a, b)
    assert both.summary["pass_at_1"].n_rows == 3200
    assert not any("read once" in note for note in both.notes)


@pytest.mark.parametrize("grade", [0.0, 1.0])
def test_two_runs_of_a_floor_or_saturated_pool_are_pooled(tmp_path: Path, grade: float) -> None:
    """Two runs that keep no reply, of a pool every row of which fails (or passes), agree on
    every grade as a copy would: nothing says they are one, so both are read."""
    a, b = tmp_path / "run1.jsonl", tmp_path / "run2.jsonl"
    for seed, path in enumerate((a, b)):
        rows = [{"task_id": f"q{t}", "reward": grade, "model": MODEL, "seed": seed}
                for t in range(400)]  # fmt: skip
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    both = _route(a, b)
    assert both.summary["pass_at_1"].n_rows == 800


def _greedy_rows(seed: int, replies: bool) -> list[dict[str, Any]]:
    """A pool decoded greedily: one reply per task, what every run writes again."""
    rnd = random.Random(seed)
    out = []
    for t in range(60):
        row: dict[str, Any] = {"task_id": f"q{t}", "reward": float(rnd.random() < 0.5)}
        if replies:
            row["completion"] = f"the answer is {rnd.randrange(1000)}"
        out.append(row)
    return out


#: Paths of repeated runs, as tools write them: a seed's or a run's number in the name, the
#: same file in each run's folder (SWE-bench's ``run_evaluation/<run_id>/.../report.json``).
RUN_LAYOUTS = [
    ("output-rs{i}.jsonl",),
    ("seed_{i}", "rows.jsonl"),
    ("run-2026-01-0{i}", "samples.jsonl"),
]


@pytest.mark.parametrize("replies", [True, False])
@pytest.mark.parametrize("layout", RUN_LAYOUTS)
@pytest.mark.parametrize("runs", [2, 4])
def test_runs_that_agree_byte_for_byte_are_runs_not_copies(
    tmp_path: Path, layout: tuple[str, ...], runs: int, replies: bool
) -> None:
    """Runs at temperature 0 (or of a grader that keeps no reply) write the same bytes each:
    read once, k = ``runs`` would read as k = 1, a firm single-rollout route. Their names say
    they are runs: every one is read, and the route sees one draw repeated, or the grades."""
    body = "".join(json.dumps(r) + "\n" for r in _greedy_rows(runs, replies))
    for i in range(runs):
        path = tmp_path.joinpath(*(part.format(i=i) for part in layout))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    got = run_route([str(tmp_path)], model=MODEL)
    assert isinstance(got, Route)
    assert got.summary["pass_at_1"].n_rows == 60 * runs
    assert got.provisional or got.route != "single-rollout"
    assert any("both read, as two runs" in note for note in got.notes)
