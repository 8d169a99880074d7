"""A teacher graded by another grader than the student (a judge's verdicts on one side, a
program's on the other) measures another pass rate: check 4 would compare two graders, not
two models, and the seed scores both sides on the same rows with one grader. Where the two
sides' graders differ, an OPD verdict is provisional (``teacher_grader``); where one grader
scores both, it stays firm. Judges are written the ways harnesses write them: a judge's
columns beside the grade, a grader named by value, the reference SDK's ``judge_meta``."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.route import run_route

MODEL, TEACHER = "Qwen/Qwen3-8B", "Qwen/Qwen3-32B"
#: How a row says a judge graded it.
JUDGED: list[dict[str, Any]] = [
    {"judge_model": "gpt-4o", "judge_reasoning": "The answer matches the reference."},
    {"grader": "gpt-4o-2024-08-06"},
    {"judge_meta": {"scorer_kind": "judge"}, "judge_name": "claude-3-5-sonnet"},
]


def _pool(path: Path, rate: float, model: str, judge: dict[str, Any] | None, seed: int) -> str:
    rng = random.Random(seed)
    rows = []
    for t in range(300):
        p = min(1.0, max(0.0, rate + rng.uniform(-0.25, 0.25)))
        for j in range(4):
            row: dict[str, Any] = {
                "task_id": f"t{t}",
                "completion": f"{model}.{t}.{j}",
                "reward": float(rng.random() < p),
                "truncated": False,
                "model": model,
            }
            rows.append({**row, **(judge or {})})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    student=st.sampled_from([None, *range(len(JUDGED))]),
    teacher=st.sampled_from([None, *range(len(JUDGED))]),
    seed=st.integers(0, 999),
)
def test_a_teacher_graded_by_another_grader_leaves_opd_provisional(
    tmp_path_factory: pytest.TempPathFactory, student: int | None, teacher: int | None, seed: int
) -> None:
    folder = tmp_path_factory.mktemp("grader")
    s = _pool(
        folder / "student.jsonl", 0.35, MODEL, None if student is None else JUDGED[student], seed
    )
    t = _pool(
        folder / "teacher.jsonl",
        0.75,
        TEACHER,
        None if teacher is None else JUDGED[teacher],
        seed + 1,
    )
    got = run_route(s, model=MODEL, teacher=t, teacher_vocab=151936, student_vocab=151936)
    assert got.method == "opd"
    apart = (student is None) != (teacher is None)
    kinds = [f.kind for f in got.data_quality]
    assert ("teacher_grader" in kinds) is apart
    if apart:
        assert got.provisional
