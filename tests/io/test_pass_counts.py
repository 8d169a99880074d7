"""Rows that hold one task's pass count each (``num_correct`` of ``num_samples``, an eval
harness's per-task line) are read as that task's draws, so many passing: the route of the
counts equals the route of the same draws written one row each, in JSON Lines and Parquet.
Such a file was refused ("rewards run from 0 to 8"), with a hint (``--map
reward=num_correct``) that was refused in turn. Counts that cannot be (more passes than
draws, a negative count) are no grade: ungraded, counted and named."""

from __future__ import annotations

import json
import random
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError
from whilecli.io.read import read_rows
from whilecli.route import run_route

NAMES = [("num_correct", "num_samples"), ("n_correct", "n"), ("num_passed", "num_attempts")]


def _write(path: Path, rows: list[dict[str, object]]) -> str:
    if path.suffix == ".parquet":
        pl.DataFrame(rows).write_parquet(path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10_000),
    names=st.sampled_from(NAMES),
    suffix=st.sampled_from([".jsonl", ".parquet"]),
    k=st.sampled_from([1, 4, 8, 16, 0]),  # 0: k drawn per task from 1..16
)
def test_pass_counts_route_as_their_draws(
    tmp_path_factory: pytest.TempPathFactory, seed: int, names: tuple[str, str], suffix: str, k: int
) -> None:
    rng = random.Random(seed)
    counts, draws = [], []
    for t in range(rng.randint(5, 80)):
        n = k or rng.randint(1, 16)
        p = rng.random()
        c = sum(rng.random() < p for _ in range(n))
        counts.append({"task_id": f"t{t}", names[0]: c, names[1]: n})
        draws += [{"task_id": f"t{t}", "reward": float(j < c)} for j in range(n)]
    folder = tmp_path_factory.mktemp("counts")
    got = run_route(_write(folder / f"counts{suffix}", counts))
    want = run_route(_write(folder / f"draws{suffix}", draws))
    assert got.route == want.route and got.method == want.method
    assert got.summary["rows"] == want.summary["rows"] == len(draws)
    assert got.summary["pass_at_1"] == want.summary["pass_at_1"]
    assert got.inputs["sources"]["reward"] == f"{names[0]} of {names[1]}, one rollout per draw"


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_counts_that_cannot_be_are_ungraded_and_named(tmp_path: Path, suffix: str) -> None:
    rows = [{"task_id": f"t{t}", "num_correct": t % 5, "num_samples": 4} for t in range(40)]
    rows[3]["num_correct"] = 9  # more passes than draws
    got = read_rows([_write(tmp_path / f"bad{suffix}", rows)])
    assert got.facts.ungraded == 1  # t3's row: no draws read from it
    assert got.facts.rows == 39 * 4 + 1
    first = got.facts.first_ungraded or ""
    assert first.endswith("row 3" if suffix == ".parquet" else "line 4"), first  # t3's row


def test_a_reward_beside_counts_is_the_grade(tmp_path: Path) -> None:
    rows = [
        {"task_id": f"t{t // 4}", "reward": float(t % 3 == 0), "num_correct": 1, "num_samples": 4}
        for t in range(40)
    ]
    got = run_route(_write(tmp_path / "rows.jsonl", rows))
    assert got.inputs["sources"]["reward"] == "reward"
    assert got.summary["rows"] == 40


def test_counts_on_each_of_a_tasks_rows_are_one_replys(tmp_path: Path) -> None:
    """Unit tests passed of those run, on each of a task's k rows, are a reply's counts, not
    the task's draws: no pass-count reading (the rows are refused as they were, naming the
    columns)."""
    rows = [
        {"task_id": f"t{t // 4}", "num_passed": t % 11, "n": 10, "completion": f"c{t}"}
        for t in range(80)
    ]
    with pytest.raises(InputError, match="num_passed|reward"):
        read_rows([_write(tmp_path / "tests.jsonl", rows)])


@pytest.mark.parametrize("grade", ["passed", "is_correct", "acc", "correct"])
def test_counts_beside_a_rows_own_grade_are_its_unit_tests(tmp_path: Path, grade: str) -> None:
    """One row per task with its own grade and test counts beside it (7 of 10 tests): the
    grade is the row's, k = 1; the counts are not draws."""
    rows = [
        {"task_id": f"t{t}", grade: t % 2 == 0, "num_correct": t % 11, "num_samples": 10}
        for t in range(200)
    ]
    got = run_route(_write(tmp_path / "rows.jsonl", rows))
    assert got.summary["rows"] == 200
    assert got.method == "flash_reinforce"
