"""A teacher that leads but whose rows do not record truncation: check 4 asks its truncated
share to be at most 0.05 and no pass of it a cut-off reply, which those rows do not say, so
check 4 is unknown and an OPD verdict resting on it is provisional, never firm. The
generator draws a student and a teacher from a known truth (the teacher's lead, the share
of its replies cut off at the cap, which fail) and records the teacher's truncation on all,
some or none of its rows: a firm OPD is given only where every row records it, and then
only where the truth clears."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.route import run_route
from whilecli.route.model import Route

MODEL = "Qwen/Qwen3-1.7B"
TEACHER = "Qwen/Qwen3-32B"


def _write(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10**6),
    tasks=st.integers(200, 600),
    cut=st.sampled_from([0.0, 0.25]),
    recorded=st.sampled_from([0.0, 0.5, 1.0]),
)
def test_a_teacher_whose_truncation_is_not_recorded_is_no_firm_opd(
    tmp_path: Path, seed: int, tasks: int, cut: float, recorded: float
) -> None:
    rnd = random.Random(seed)
    student: list[dict[str, Any]] = []
    teacher: list[dict[str, Any]] = []
    for t in range(tasks):
        p = rnd.uniform(0.0, 0.5)
        for j in range(4):
            student.append({"task_id": f"t{t}", "completion": f"s{t}.{j}", "model": MODEL,
                            "reward": float(rnd.random() < p), "truncated": False})  # fmt: skip
            is_cut = rnd.random() < cut
            row = {"task_id": f"t{t}", "completion": f"T{t}.{j}", "model": TEACHER,
                   "reward": 0.0 if is_cut else float(rnd.random() < p + 0.4)}  # fmt: skip
            if rnd.random() < recorded:
                row["truncated"] = is_cut
            teacher.append(row)
    got = run_route(
        _write(tmp_path / "student.jsonl", student),
        teacher=_write(tmp_path / "teacher.jsonl", teacher),
        model=MODEL,
        teacher_vocab=151936,
        student_vocab=151936,
    )
    assert isinstance(got, Route)
    if got.method == "opd" and not got.provisional:
        assert recorded == 1.0 and cut == 0.0, got.headline
    if recorded < 1.0 and got.route == "teacher":
        assert got.provisional and "truncation is not recorded" in (got.provisional_why or "")
