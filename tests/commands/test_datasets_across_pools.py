"""A dataset's name keys tasks across two pools as it does within one (DESIGN section 1:
verl numbers each dataset's rows from 0, so one id is a task of each): a teacher's rows, or
``diff``'s second dump, of another dataset whose integer ids match the student's share no
task with it. The generator draws the student's dataset and the other side's (the same, or
another), the field naming it (``data_source`` or ``dataset``) and which ids match: pools of
one dataset pair by id (the control: a firm OPD, a paired diff); of two, check 4 is unknown
with no shared task, OPD is not chosen, and ``diff`` refuses (exit 2)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.route import run_route
from whilecli.route.model import Route, Status

MODEL = "Qwen/Qwen3-8B"
TEACHER = "Qwen/Qwen3-32B"


def _write(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _rows(rnd: random.Random, tasks: int, field: str, name: str, lead: float, model: str) -> list:
    rows = []
    for t in range(tasks):
        p = rnd.uniform(0.1, 0.5) + lead
        for j in range(4):
            rows.append({"task_id": t, field: name, "completion": f"{model}{t}.{j}",
                         "model": model, "reward": float(rnd.random() < p),
                         "truncated": False})  # fmt: skip
    return rows


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10**6),
    tasks=st.integers(120, 300),
    field=st.sampled_from(["data_source", "dataset"]),
    other=st.sampled_from(["gsm8k", "math500", "aime24"]),
)
def test_a_teacher_of_another_dataset_shares_no_task(
    tmp_path: Path, seed: int, tasks: int, field: str, other: str
) -> None:
    rnd = random.Random(seed)
    student = _write(tmp_path / "s.jsonl", _rows(rnd, tasks, field, "gsm8k", 0.0, MODEL))
    teacher = _write(tmp_path / "t.jsonl", _rows(rnd, tasks, field, other, 0.35, TEACHER))
    got = run_route(
        student, teacher=teacher, model=MODEL, teacher_vocab=151936, student_vocab=151936
    )
    assert isinstance(got, Route)
    check = next(c for c in got.checks if c.key == "teacher")
    diffed = CliRunner().invoke(app, ["diff", student, teacher])
    if other == "gsm8k":  # one dataset: its ids are its tasks on both sides
        assert got.method == "opd" and not got.provisional, got.headline
        assert diffed.exit_code == 0, diffed.output
        return
    assert check.measured.get("shared_tasks") == 0, check.why
    assert check.status is Status.UNKNOWN and got.method != "opd", got.headline
    assert other in check.why
    assert diffed.exit_code == 2, diffed.output
