"""Two grades of one row that disagree: the reward read (``score``, ``reward``, a sum of an
accuracy and a format reward) passes rows a grade beside it (``correct``, ``is_correct``,
``resolved``, ``accuracy_reward``) fails, or the other way. Which is the grade the rows do
not say; a verdict on either is provisional (``grade_disagrees``), naming the column and
the ``--map`` that reads it. A binary column of another name (``format_ok``) grades
something else and says nothing; grades that agree say nothing.

The generator draws a pool (a floor, a saturated band or a split one), the reward's column
and the grade's, how the reward is built from the grade and a format check, the threshold,
and JSON Lines or Parquet; the truth is the share of the sampled rows on which the two
disagree, counted here.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import finding_kinds, route_rows, write_rows

MODEL = "Qwen/Qwen3-8B"
SETTINGS = settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
#: How the reward is built from the row's correctness and a format check: the grade itself
#: (they agree), the format check alone, correctness gated by format, or their sum.
BUILDS = ("same", "format", "gated", "sum")
GRADES = ("correct", "is_correct", "resolved", "accuracy_reward", "exact_match")
REWARDS = ("score", "reward")  # read before each grade (the aliases' order)


def _pool(band: str, build: str, grade: str, reward: str, fmt_rate: float, seed: int) -> list:
    rnd = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for t in range(120):
        p = {"floor": 0.0, "saturated": 1.0}.get(band, rnd.uniform(0.1, 0.9))
        for j in range(4):
            ok, shaped = rnd.random() < p, rnd.random() < fmt_rate
            value = {
                "same": float(ok),
                "format": float(shaped),
                "gated": float(ok and shaped),
                "sum": float(ok) + float(shaped),
            }[build]
            rows.append(
                {
                    "task_id": f"t{t}",
                    "prompt": f"Solve {t}.",
                    "completion": f"reply {t}.{j} {rnd.random():.6f}",
                    "model": MODEL,
                    reward: value,
                    grade: ok,
                    "format_ok": shaped,  # another check: never the grade
                }
            )
    return rows


@SETTINGS
@given(
    band=st.sampled_from(["floor", "saturated", "split"]),
    build=st.sampled_from(BUILDS),
    grade=st.sampled_from(GRADES),
    reward=st.sampled_from(REWARDS),
    fmt_rate=st.sampled_from([0.5, 0.85, 1.0]),
    kind=st.sampled_from(["jsonl", "parquet"]),
    seed=st.integers(0, 2**16),
)
def test_a_grade_beside_the_reward_that_disagrees_leaves_the_verdict_provisional(
    tmp_path_factory: pytest.TempPathFactory,
    band: str,
    build: str,
    grade: str,
    reward: str,
    fmt_rate: float,
    kind: str,
    seed: int,
) -> None:
    rows = _pool(band, build, grade, reward, fmt_rate, seed)
    threshold = 2.0 if build == "sum" and seed % 2 else 1.0
    folder = tmp_path_factory.mktemp("grades")
    path = write_rows(folder, rows, kind)
    from whilecli.route import run_route

    got = run_route(str(path), model=MODEL, pass_threshold=threshold if build == "sum" else None)
    sampled = rows[:1000]
    apart = sum(1 for r in sampled if (r[reward] >= threshold) != r[grade])
    flagged = "grade_disagrees" in finding_kinds(got)
    values = {r[reward] for r in rows}
    if len(values) < 2:  # one reward on every row: a placeholder's rule (grade_beside)
        assert not flagged
        return
    assert flagged == (apart >= max(5, 0.1 * len(sampled))), (apart, got.data_quality)
    if flagged:
        assert got.provisional
        said = next(f for f in got.data_quality if f.kind == "grade_disagrees")
        assert f"--map reward={grade}" in said.moves


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_a_binary_column_of_another_name_says_nothing(tmp_path: Path, kind: str) -> None:
    rows = _pool("split", "same", "correct", "reward", 0.5, 3)
    for row in rows:
        row.pop("correct")  # format_ok disagrees on half the rows, and grades no answer
    got = route_rows(write_rows(tmp_path, rows, kind), MODEL)
    assert "grade_disagrees" not in finding_kinds(got)
    assert not got.provisional
