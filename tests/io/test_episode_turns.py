"""Rows of agent turns are not rollouts (DESIGN section 1: one row is one rollout).

A seeded simulator writes episodes with a known truth (each episode passes or fails, one
reward per episode) as one row per turn, in the layouts agent harnesses use: the turn index
under ``turn`` or ``step``, the final reward on the last turn only or copied onto every
turn, episodes written in order or with their turns interleaved. Rows that repeat an
episode id are refused in one line (exit 2) naming the file, the first row that repeats an
episode and the field, never routed as k = turns × episodes; the same episodes written one
row each route with k = the episodes per task.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.io.aliases import VERSION_ALIASES
from whilecli.route import run_route
from whilecli.route.model import Route

MODEL = "Qwen/Qwen3-8B"
SETTINGS = settings(
    max_examples=5,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def episodes(seed: int, tasks: int, k: int) -> list[dict[str, Any]]:
    """The truth: per task, k episodes, each a pass or a fail and 2-6 turns long."""
    rng = random.Random(seed)
    out = []
    for t in range(tasks):
        rate = rng.random()
        for e in range(k):
            out.append(
                {
                    "task": f"t{t}",
                    "episode": f"t{t}-e{e}",
                    "passed": rng.random() < rate,
                    "turns": rng.randint(2, 6),
                }
            )
    return out


def turn_rows(
    truth: list[dict[str, Any]], field: str, index: str, copied: bool, interleave: bool
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for ep in truth:
        last = ep["turns"] - 1
        for turn in range(ep["turns"]):
            final = 1.0 if ep["passed"] else 0.0
            rows.append(
                {
                    "task_id": ep["task"],
                    field: ep["episode"],
                    index: turn,
                    "reward": final if copied or turn == last else 0.0,
                    "truncated": False,
                    "model": MODEL,
                }
            )
    if interleave:  # every episode's first turn, then every second turn, ...
        rows.sort(key=lambda r: r[index])
    return rows


def write(folder: Path, name: str, rows: list[dict[str, Any]]) -> Path:
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def first_repeat(rows: list[dict[str, Any]], field: str) -> int:
    """The 1-based line of the first row whose (task, episode) an earlier row had."""
    seen = set()
    for line, row in enumerate(rows, 1):
        key = (row["task_id"], row[field])
        if key in seen:
            return line
        seen.add(key)
    raise AssertionError("no episode repeats")


@SETTINGS
@given(
    seed=st.integers(0, 10**6),
    field=st.sampled_from(["episode_id", "trajectory_id", "traj_id"]),
    index=st.sampled_from(["turn", "step"]),
    copied=st.booleans(),
    interleave=st.booleans(),
)
def test_turn_rows_are_refused_not_counted_as_rollouts(
    tmp_path: Path, seed: int, field: str, index: str, copied: bool, interleave: bool
) -> None:
    truth = episodes(seed, tasks=12, k=4)
    rows = turn_rows(truth, field, index, copied, interleave)
    path = write(tmp_path, "turns.jsonl", rows)
    result = CliRunner().invoke(app, ["route", str(path), "--model", MODEL])
    out = " ".join(result.output.split())
    assert result.exit_code == 2, out
    assert f"{path}:{first_repeat(rows, field)}:" in out, out
    assert f"field '{field}'" in out and "one row per episode" in out, out
    if index == "step":  # read as a policy version, it would be a turn index
        assert "step counts turns" in out, out


@SETTINGS
@given(seed=st.integers(0, 10**6), field=st.sampled_from(["episode_id", "trajectory_id"]))
def test_one_row_per_episode_routes_at_the_true_k(tmp_path: Path, seed: int, field: str) -> None:
    truth = episodes(seed, tasks=12, k=4)
    rows = [
        {
            "task_id": ep["task"],
            field: ep["episode"],
            "reward": 1.0 if ep["passed"] else 0.0,
            "truncated": False,
            "model": MODEL,
        }
        for ep in truth
    ]
    got = run_route(str(write(tmp_path, "episodes.jsonl", rows)), model=MODEL)
    assert isinstance(got, Route)
    counts = next(c for c in got.checks if c.key == "rollouts_per_task").measured
    assert counts["k"] == 4 and counts["grouped_tasks"] == 12, counts


def test_an_episode_index_per_task_is_no_repeat(tmp_path: Path) -> None:
    """Episode ids numbered within each task (0..k-1) key one rollout per (task, id)."""
    rows = [
        {"task_id": f"t{t}", "episode_id": e, "reward": float(e % 2), "model": MODEL}
        for t in range(5)
        for e in range(4)
    ]
    got = run_route(str(write(tmp_path, "indexed.jsonl", rows)), model=MODEL)
    assert isinstance(got, Route)


def first_later_turn(rows: list[dict[str, Any]], index: str) -> int:
    """The 1-based line of the first row whose task's first turn index is below its own."""
    low: dict[str, int] = {}
    for row in rows:
        low[row["task_id"]] = min(low.get(row["task_id"], row[index]), row[index])
    return next(line for line, r in enumerate(rows, 1) if r[index] != low[r["task_id"]])


@SETTINGS
@given(
    seed=st.integers(0, 10**6),
    index=st.sampled_from(["turn", "turn_idx", "turn_index", "turn_number"])
    | st.sampled_from(["step_idx", "step_id", "message_index", "message_idx"]),
    base=st.sampled_from([0, 1]),
    copied=st.booleans(),
    interleave=st.booleans(),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_turn_rows_without_an_episode_id_are_refused(
    tmp_path: Path, seed: int, index: str, base: int, copied: bool, interleave: bool, kind: str
) -> None:
    """A turn index with no episode id beside it: the rows of a task under indices 0, 1, 2,
    ... (each on as many rows as the one before or fewer) are turns, whichever turn holds
    the reward."""
    truth = episodes(seed, tasks=12, k=4)
    rows = [
        {k: v + base if k == index else v for k, v in r.items() if k != "episode_id"}
        for r in turn_rows(truth, "episode_id", index, copied, interleave)
    ]
    path = write(tmp_path, "turns.jsonl", rows)
    if kind == "parquet":
        path = tmp_path / "turns.parquet"
        pl.DataFrame(rows).write_parquet(path)
    result = CliRunner().invoke(app, ["route", str(path), "--model", MODEL])
    out = " ".join(result.output.split())
    assert result.exit_code == 2, out
    where = f"{path}:{first_later_turn(rows, index)}:" if kind == "jsonl" else f"{path}"
    assert where in out and f"field '{index}'" in out and "one row per episode" in out, out


@pytest.mark.parametrize(
    "values",
    [
        [0, 0, 0, 0],  # one turn each: single-turn rows
        [3, 5, 2, 4],  # how many turns each episode took: no index
        [1, 2, 2, 3],  # a later index on more rows than the one before: no index
        [0, 2, 0, 2],  # an index skipped
        [1, 2, 1, 1],  # turns taken, 1 or 2: no task shows three, and none counts from 0
        [2, 1, 1, 2],
    ],
)
def test_a_turn_column_that_is_no_index_routes(tmp_path: Path, values: list[int]) -> None:
    rows = [
        {"task_id": f"t{t}", "turn": v, "reward": float((t + e) % 2), "model": MODEL}
        for t in range(20)
        for e, v in enumerate(values)
    ]
    got = run_route(str(write(tmp_path, "counts.jsonl", rows)), model=MODEL)
    assert isinstance(got, Route)
    counts = next(c for c in got.checks if c.key == "rollouts_per_task").measured
    assert counts["k"] == 4, counts


@pytest.mark.parametrize("index", ["step_idx", "step_id", "message_index", "message_idx"])
def test_a_step_or_message_index_is_a_turn_never_a_version(tmp_path: Path, index: str) -> None:
    """An agent's step index or a message's place, on rows of one task with no episode id,
    is a turn index (refused as turns), never read as the policy's version."""
    assert index not in VERSION_ALIASES
    truth = episodes(3, tasks=12, k=4)
    rows = [
        {k: v for k, v in r.items() if k != "episode_id"}
        for r in turn_rows(truth, "episode_id", index, False, False)
    ]
    result = CliRunner().invoke(
        app, ["route", str(write(tmp_path, "turns.jsonl", rows)), "--model", MODEL]
    )
    assert result.exit_code == 2 and f"field '{index}'" in " ".join(result.output.split())


@SETTINGS
@given(
    seed=st.integers(0, 10**6),
    beside=st.sampled_from([None, "episode", "episode_idx", "rollout"]),
    copied=st.booleans(),
    interleave=st.booleans(),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_a_plain_step_that_runs_through_each_episode_is_a_turn_index(
    tmp_path: Path, seed: int, beside: str | None, copied: bool, interleave: bool, kind: str
) -> None:
    """A plain ``step`` is read as a policy's version, but rows of every task under steps
    0, 1, 2, ..., each on as many rows as the one before or fewer, are an agent's turns (an
    episode index no alias names beside them, ``episode``, changes nothing): refused, with
    ``--map policy_version=step`` for a step that is a version."""
    truth = episodes(seed, tasks=40, k=4)
    rows = []
    for r in turn_rows(truth, "episode_id", "step", copied, interleave):
        row = {k: v for k, v in r.items() if k != "episode_id"}
        if beside is not None:
            row[beside] = int(str(r["episode_id"]).rpartition("-e")[2])
        rows.append(row)
    path = write(tmp_path, "steps.jsonl", rows)
    if kind == "parquet":
        path = tmp_path / "steps.parquet"
        pl.DataFrame(rows).write_parquet(path)
    result = CliRunner().invoke(app, ["route", str(path), "--model", MODEL])
    out = " ".join(result.output.split())
    assert result.exit_code == 2, out
    assert "field 'step'" in out and "--map policy_version=step" in out, out
    mapped = CliRunner().invoke(
        app, ["route", str(path), "--model", MODEL, "--map", "policy_version=step"]
    )
    assert mapped.exit_code != 2, mapped.output


@pytest.mark.parametrize(
    "layout",
    [
        "trainer",  # each task drawn at one or two steps far apart: versions
        "checkpoints",  # every task evaluated at steps 0, 1, 2 on the same rows
        "checkpoints_some_fewer",  # the same, a few tasks with a row lost at a later step
        "one_step",  # every row at one step
        "partial",  # rollouts begun under step 0 and finished under 1: more rows at the older
    ],
)
def test_a_step_that_counts_a_trainers_steps_stays_a_version(tmp_path: Path, layout: str) -> None:
    rng = random.Random(7)
    rows = []
    for t in range(60):
        if layout == "trainer":
            steps = rng.sample([0, 10, 20, 30, 40, 50], rng.choice([1, 2]))
        elif layout == "one_step":
            steps = [5]
        elif layout == "partial":
            steps = [0, 0, 0, 1]  # each draw's oldest policy: most began under step 0
        else:
            steps = [0, 1, 2]
        for s in steps:
            k = 4 - (layout == "checkpoints_some_fewer" and s == 2 and t % 10 == 0)
            k = 1 if layout == "partial" else k
            rows += [
                {
                    "task_id": f"t{t}",
                    "step": s,
                    "completion": f"{t}.{s}.{j}",
                    "reward": float(rng.random() < 0.5),
                    "truncated": False,
                    "model": MODEL,
                }
                for j in range(k)
            ]
    got = run_route(str(write(tmp_path, "steps.jsonl", rows)), model=MODEL)
    assert isinstance(got, Route)
    sources = got.inputs["sources"]
    assert sources.get("policy_version", "").startswith("step"), sources
