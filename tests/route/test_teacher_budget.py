"""A teacher sampled under a larger token cap than the student (32768 beside 4096) may win
only with replies the student's cap would cut, and OPD runs at the student's cap: the skill
says to score the teacher at the student's max_tokens. Where both pools record their caps
and the teacher's is larger, an OPD verdict is provisional (``teacher_budget``); where the
caps are equal, or the teacher's is smaller, or either is not recorded, it stays firm. A
firm OPD was given to a teacher whose every pass was a reply of 5k to 20k tokens."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.route import run_route

MODEL, TEACHER = "Qwen/Qwen3-8B", "Qwen/Qwen3-32B"


def _pool(path: Path, rate: float, cap: int | None, model: str, seed: int) -> str:
    rng = random.Random(seed)
    rows = []
    for t in range(300):
        p = min(1.0, max(0.0, rate + rng.uniform(-0.25, 0.25)))
        for j in range(4):
            row: dict[str, object] = {
                "task_id": f"t{t}",
                "completion": f"{model}.{t}.{j}",
                "reward": float(rng.random() < p),
                "truncated": False,
                "model": model,
            }
            if cap is not None:
                row["max_tokens"] = cap
                row["completion_tokens"] = rng.randint(10, cap - 1)
            rows.append(row)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    student_cap=st.sampled_from([1024, 4096, None]),
    teacher_cap=st.sampled_from([1024, 4096, 32768, None]),
    seed=st.integers(0, 999),
)
def test_a_teacher_under_a_larger_cap_leaves_opd_provisional(
    tmp_path_factory: pytest.TempPathFactory,
    student_cap: int | None,
    teacher_cap: int | None,
    seed: int,
) -> None:
    folder = tmp_path_factory.mktemp("budget")
    student = _pool(folder / "student.jsonl", 0.35, student_cap, MODEL, seed)
    teacher = _pool(folder / "teacher.jsonl", 0.75, teacher_cap, TEACHER, seed + 1)
    got = run_route(
        student, model=MODEL, teacher=teacher, teacher_vocab=151936, student_vocab=151936
    )
    assert got.method == "opd"
    larger = None not in (student_cap, teacher_cap) and teacher_cap > student_cap  # type: ignore[operator]
    kinds = [f.kind for f in got.data_quality]
    assert ("teacher_budget" in kinds) is larger
    assert got.provisional is larger
