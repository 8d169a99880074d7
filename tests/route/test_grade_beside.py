"""A placeholder reward beside the real grade (finding ``grade_beside``): a harness writes
``reward: 0.0`` on every row (its grader never ran, or fills another column) while
``is_correct`` holds the grade. Read by the reward, every task fails: a floor, firm from
536 tasks, where the band is mixed.

The generator draws a mixed pool, writes its grade under a binary-looking name (as booleans
or 0/1 or words, at the top level or inside an object such as ``metrics``, in JSON Lines or
Parquet) beside a reward of one value, and routes it: never a firm floor or saturation, the
finding names the column by its path. A reward that varies, a grade column of
one value, or a reward named with ``--map`` say nothing."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import drawn_rows, write_rows
from whilecli.route import run_route
from whilecli.route.model import Route

GRADES = ("is_correct", "correct", "passed", "solved", "acc", "verdict", "judgement")
#: How a grade is written: booleans, 0/1, or words (any case).
SPELLINGS = {
    "bool": (True, False),
    "01": (1, 0),
    "words": ("CORRECT", "INCORRECT"),
    "pass": ("pass", "fail"),
}


#: Where a harness files the grade: at the top level, or inside an object (one or two deep).
PLACES = ("", "metrics.", "info.", "scores.judge.")


def _pool(
    seed: int, tasks: int, grade: str, placeholder: float, spelling: str, place: str = ""
) -> list[dict]:
    """A mixed pool whose grade stands under ``place + grade`` (a dotted path into objects),
    its reward ``placeholder`` throughout."""
    rng = random.Random(seed)
    rates = [rng.choice([0.1, 0.3, 0.5, 0.7, 0.9]) for _ in range(tasks)]
    rows = drawn_rows(tasks, 4, lambda task, _: rng.random() < rates[task])
    for row in rows:
        ok = row["reward"] == 1.0
        row["reward"] = placeholder
        holder = row
        for key in place.split(".")[:-1]:
            holder = holder.setdefault(key, {})
        holder[grade] = SPELLINGS[spelling][0 if ok else 1]
    return rows


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10_000),
    tasks=st.sampled_from([60, 700]),
    grade=st.sampled_from(GRADES),
    placeholder=st.sampled_from([0.0, 1.0]),
    spelling=st.sampled_from(sorted(SPELLINGS)),
    kind=st.sampled_from(["jsonl", "parquet"]),
    place=st.sampled_from(PLACES),
)
def test_a_reward_of_one_value_beside_a_grade_is_never_a_firm_end(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    tasks: int,
    grade: str,
    placeholder: float,
    spelling: str,
    kind: str,
    place: str,
) -> None:
    rows = _pool(seed, tasks, grade, placeholder, spelling, place)
    path = str(write_rows(tmp_path_factory.mktemp("beside"), rows, kind))
    route = run_route(path, model="Qwen/Qwen3-8B")
    assert isinstance(route, Route)
    assert route.route == ("saturated" if placeholder else "floor")
    assert route.provisional
    found = [f for f in route.data_quality if f.kind == "grade_beside"]
    column = place + grade
    assert len(found) == 1 and column in found[0].found and f"reward={column}" in found[0].moves
    mapped = run_route(path, model="Qwen/Qwen3-8B", mapping={"reward": column})
    assert isinstance(mapped, Route) and mapped.route != route.route
    said = run_route(path, model="Qwen/Qwen3-8B", mapping={"reward": "reward"})
    assert isinstance(said, Route)
    assert "grade_beside" not in [f.kind for f in said.data_quality]


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_a_grade_column_of_one_value_says_nothing(tmp_path: Path, kind: str) -> None:
    rows = [{**r, "is_correct": False} for r in _pool(3, 60, "is_correct", 0.0, "bool")]
    route = run_route(str(write_rows(tmp_path, rows, kind)), model="Qwen/Qwen3-8B")
    assert isinstance(route, Route) and route.route == "floor"
    assert "grade_beside" not in [f.kind for f in route.data_quality]


def test_a_status_or_a_result_in_words_is_not_read_as_a_grade(tmp_path: Path) -> None:
    """``status`` holds a request's state as often as a grade, ``result`` the answer: their
    words beside a reward of one value say nothing."""
    rows = _pool(5, 60, "status", 0.0, "pass")
    for row in rows:
        row["result"] = "correct" if row["status"] == "pass" else "incorrect"
    route = run_route(str(write_rows(tmp_path, rows, "jsonl")), model="Qwen/Qwen3-8B")
    assert isinstance(route, Route) and route.route == "floor"
    assert "grade_beside" not in [f.kind for f in route.data_quality]
