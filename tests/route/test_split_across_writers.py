"""A group is one policy's draws of a prompt (DESIGN section 2, check 3): a task whose rows
come from several writers (two policy versions of an async run, two models) and whose passes
and fails lie in different writers' rows gives no group that splits. The generator draws
pools of 1 to 3 writers per task with a known rate per (task, writer); the truth is counted
by a plain loop over the rows, and the band must count as split only the tasks where one
writer's rows hold a pass and a fail.
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import finding_kinds
from whilecli.io.read import read_rows
from whilecli.route import run_route
from whilecli.route.model import Route
from whilecli.route.pool import Counts, across_writers, split_across_writers

SETTINGS = settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _truth(rows: list[dict[str, Any]], writer: str) -> tuple[int, int]:
    """(split tasks, tasks split only across writers), by a plain loop over the rows: across
    where no writer's rows split and two writers' rows, two or more each, all pass and all
    fail."""
    cells: dict[str, dict[Any, list[float]]] = {}
    for r in rows:
        cells.setdefault(r["task_id"], {}).setdefault(r[writer], []).append(r["reward"])
    split = across = 0
    for by_writer in cells.values():
        every = [x for xs in by_writer.values() for x in xs]
        if len(every) < 2 or not (0 < sum(every) < len(every)):
            continue
        cells = list(by_writer.values())
        sure_pass = any(len(xs) >= 2 and sum(xs) == len(xs) for xs in cells)
        sure_fail = any(len(xs) >= 2 and sum(xs) == 0 for xs in cells)
        if any(0 < sum(xs) < len(xs) for xs in cells) or not (sure_pass and sure_fail):
            split += 1
        else:
            across += 1
    return split, across


@SETTINGS
@given(
    seed=st.integers(0, 10**6),
    writer=st.sampled_from(["policy_version", "model"]),
    k=st.integers(1, 6),
    writers=st.integers(1, 3),
    tasks=st.integers(20, 80),
    per_writer=st.booleans(),
)
def test_the_band_counts_a_split_within_one_writer(
    tmp_path: Path, seed: int, writer: str, k: int, writers: int, tasks: int, per_writer: bool
) -> None:
    rnd = random.Random(seed)
    rows = []
    for t in range(tasks):
        for w in range(rnd.randint(1, writers)):
            rate = rnd.choice([0.0, 0.02, 0.5, 0.98, 1.0])
            for j in range(k):
                row = {"task_id": f"t{t}", "reward": float(rnd.random() < rate),
                       "completion": f"{t}.{w}.{j}.{rnd.random()}", "model": "Qwen/Qwen3-8B"}  # fmt: skip
                row[writer] = w + 1 if writer == "policy_version" else f"org/model-{w}"
                rows.append(row)
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    files: dict[str, list[dict[str, Any]]] = {}
    for r in rows:  # one file, or one file per writer (each file of one writer alone)
        files.setdefault(
            f"rows-{r[writer]}".replace("/", "-") if per_writer else "rows", []
        ).append(r)
    paths = []
    for name, part in files.items():
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in part))
        paths.append(str(folder / f"{name}.jsonl"))
    read = read_rows(paths, aggregate=Counts())
    cells = read.writer_cells
    if cells is not None:  # the read's own count agrees with a query over its rows
        mine = across_writers(cells.lazy().rename({"rows": "n"}), paths, ["Qwen/Qwen3-8B"])
        frame = split_across_writers(read.frame, paths, ["Qwen/Qwen3-8B"])
        assert sorted(mine.to_list()) == sorted(frame.to_list())
    assert cells is not None or writers == 1 or len({r[writer] for r in rows}) == 1
    route = run_route(paths)
    assert isinstance(route, Route)
    band = next(c for c in route.checks if c.key == "band")
    split, across = _truth(rows, writer)
    if not band.measured:  # no grouped task
        assert split == across == 0
        return
    assert band.measured["split_tasks"] == split
    assert band.measured.get("split_across_writers", 0) == across
    kinds = finding_kinds(route)
    assert ("split_across_writers" in kinds) == (across > 0 and split <= across)
    assert ("some_split_across_writers" in kinds) == (0 < across < split)
    if across >= split and across:
        assert route.provisional


def test_two_copies_each_unanimous_route_no_split(tmp_path: Path) -> None:
    """Every task: four rows of version 1, all failing; four of version 2, all passing. The
    pooled groups all split (a firm GRPO on 200 of 200 split tasks before); none of one
    policy's does."""
    rows = [
        {"task_id": f"t{t}", "completion": f"{t}.{v}.{j}", "reward": float(v == 2),
         "model": "Qwen/Qwen3-8B", "policy_version": v}
        for t in range(200) for v in (1, 2) for j in range(4)
    ]  # fmt: skip
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    route = run_route([str(path)], model="Qwen/Qwen3-8B@2")
    assert isinstance(route, Route)
    band = next(c for c in route.checks if c.key == "band")
    assert band.measured["split_tasks"] == 0 and band.measured["split_across_writers"] == 200
    assert route.method != "grpo" and route.provisional


def test_a_few_groups_mixing_versions_beside_many_split_ones_leave_grpo_firm(
    tmp_path: Path,
) -> None:
    """An async run whose groups mix versions now and then (AReaL): 60 of 1000 tasks split
    only across versions beside 940 that split within one; GRPO rests on those 940."""
    rnd = random.Random(5)
    rows = []
    for t in range(1000):
        across = t < 60
        for j in range(8):
            v = (1 if j < 4 else 2) if across else 2
            ok = (v == 2) if across else rnd.random() < 0.5
            rows.append({"task_id": f"t{t}", "completion": f"{t}.{j}.{rnd.random()}",
                         "reward": float(ok), "model": "Qwen/Qwen3-8B", "policy_version": v})  # fmt: skip
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    route = run_route([str(path)], model="Qwen/Qwen3-8B@2")
    assert isinstance(route, Route)
    assert "some_split_across_writers" in finding_kinds(route)
    assert "split_across_writers" not in finding_kinds(route)
    assert route.route == "grpo"
    assert "split only across writers" not in (route.provisional_why or "")


def test_one_row_tasks_that_pass_beside_a_floor_leave_it_provisional(tmp_path: Path) -> None:
    """2000 tasks of one row passing at half beside 700 re-drawn tasks that all fail: the
    floor is the grouped tasks' only (a firm OPSD before)."""
    rnd = random.Random(0)
    rows = [{"task_id": f"s{t}", "completion": f"s{t}", "reward": float(rnd.random() < 0.5)}
            for t in range(2000)]  # fmt: skip
    rows += [{"task_id": f"g{t}", "completion": f"g{t}.{j}", "reward": 0.0}
             for t in range(700) for j in range(4)]  # fmt: skip
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    route = run_route([str(path)])
    assert isinstance(route, Route)
    assert "singles_beside_the_band" in finding_kinds(route)
    assert route.provisional
    rows = [r for r in rows if r["task_id"].startswith("g")]  # the floor alone stays firm
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    alone = run_route([str(path)])
    assert isinstance(alone, Route)
    assert "singles_beside_the_band" not in finding_kinds(alone)


def test_one_draw_per_version_splits_as_a_group(tmp_path: Path) -> None:
    """A fully async run whose every draw carries its own weights' version: one row per
    (task, version) says nothing of a group's unanimity, so a task with a pass and a fail is
    split, and a mixed pool routes to GRPO, not to no split."""
    rnd = random.Random(11)
    rows = []
    for t in range(600):
        p = rnd.uniform(0.2, 0.8)
        for j in range(8):
            rows.append({"task_id": f"t{t}", "completion": f"{t}.{j}.{rnd.random()}",
                         "reward": float(rnd.random() < p), "model": "Qwen/Qwen3-8B",
                         "policy_version": 100 + 8 * t + j})  # fmt: skip
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    route = run_route([str(path)], model=f"Qwen/Qwen3-8B@{100 + 8 * 600}")
    assert isinstance(route, Route)
    band = next(c for c in route.checks if c.key == "band")
    assert band.measured.get("split_across_writers", 0) == 0
    assert route.route == "grpo"
    assert "split_across_writers" not in finding_kinds(route)
