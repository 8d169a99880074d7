"""A teacher of the student's very questions whose task keys are spelled apart (the
student's ids zero-padded text, the teacher's whole numbers; or both keyed by their prompts,
the teacher's with a system message or rendered through a chat template) shares no task
key with the student. No shared task is no evidence: check 4 is unknown, not failed, OPD is
not chosen and the verdict is provisional with a hint naming the spelling. The generator
draws the truth (the teacher leads by 0.35 on every question) and one spelling; the same
pools keyed alike are the control, a firm OPD."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.route import run_route
from whilecli.route.model import Route, Status

MODEL = "Qwen/Qwen3-8B"
TEACHER = "Qwen/Qwen3-32B"
SPELLINGS = ["padded", "system", "chatml", "alike"]


def _write(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _key(t: int, teacher: bool, spelling: str, width: int) -> dict[str, Any]:
    """One side's task key for question ``t`` under ``spelling``."""
    question = f"Problem {t}: what is {t} mod 97?"
    if spelling == "padded":
        return {"task_id": t} if teacher else {"task_id": f"{t:0{width}d}"}
    if spelling == "alike":
        return {"task_id": t}
    user = {"role": "user", "content": question}
    if not teacher:
        return {"prompt": [user]}
    if spelling == "system":
        return {"prompt": [{"role": "system", "content": "Think step by step."}, user]}
    return {"prompt": f"<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n"}


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10**6),
    tasks=st.integers(150, 400),
    spelling=st.sampled_from(SPELLINGS),
    width=st.integers(4, 7),
)
def test_a_teacher_keyed_apart_is_unknown_never_a_firm_failure(
    tmp_path: Path, seed: int, tasks: int, spelling: str, width: int
) -> None:
    rnd = random.Random(seed)
    student: list[dict[str, Any]] = []
    teacher: list[dict[str, Any]] = []
    for t in range(tasks):
        p = rnd.uniform(0.1, 0.5)
        for j in range(4):
            student.append({**_key(t, False, spelling, width), "completion": f"s{t}.{j}",
                            "model": MODEL, "reward": float(rnd.random() < p),
                            "truncated": False})  # fmt: skip
            teacher.append({**_key(t, True, spelling, width), "completion": f"T{t}.{j}",
                            "model": TEACHER, "reward": float(rnd.random() < p + 0.35),
                            "truncated": False})  # fmt: skip
    got = run_route(
        _write(tmp_path / "student.jsonl", student),
        teacher=_write(tmp_path / "teacher.jsonl", teacher),
        model=MODEL,
        teacher_vocab=151936,
        student_vocab=151936,
    )
    assert isinstance(got, Route)
    check = next(c for c in got.checks if c.key == "teacher")
    if spelling == "alike":  # the control: keyed alike, the teacher clears firmly
        assert got.method == "opd" and not got.provisional, got.headline
        return
    assert check.measured.get("shared_tasks") == 0
    assert check.status is Status.UNKNOWN, check.why
    assert got.method != "opd" and got.provisional, got.headline
    assert "teacher_unpaired" in [f.kind for f in got.data_quality]
    if spelling == "padded":
        assert "zero-padded" in check.why
    else:
        assert "system message or a chat template" in check.why
