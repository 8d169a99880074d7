"""A teacher written in another layout than the student reads with its own map
(``--teacher-map``, over ``--map`` for the fields it names), so that each side can be read:
the probe's student of one row per draw beside a teacher of ``n=8`` requests (``choices[]``
with ``judge_scores[]``), and its mirror (the student needs the map, the teacher none).

The generator draws tasks at known rates and a teacher ahead of the student by a known gap;
its layout is one row per draw or one request per task with the grades in a list. The
teacher's pass@1 read through the map is the truth's, the student's is untouched, and a
teacher refused for want of a map names ``--teacher-map``, not ``--map``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from whilecli.cli import app

K = 8
TASKS = 60


def _draws(seed: int, lead: float) -> tuple[list[list[float]], list[list[float]]]:
    """Per task, the student's and the teacher's K grades (the teacher ``lead`` ahead)."""
    rnd = random.Random(seed)
    student, teacher = [], []
    for _ in range(TASKS):
        p = rnd.uniform(0.1, 0.6)
        student.append([float(rnd.random() < p) for _ in range(K)])
        teacher.append([float(rnd.random() < p + lead) for _ in range(K)])
    return student, teacher


def _rows(grades: list[list[float]], model: str) -> list[dict[str, object]]:
    """One row per draw, graded under ``reward``."""
    return [
        {"prompt": f"Problem {t}", "completion": f"{model} {t} {j}", "reward": g, "model": model}
        for t, task in enumerate(grades)
        for j, g in enumerate(task)
    ]


def _requests(grades: list[list[float]], model: str) -> list[dict[str, object]]:
    """One ``n=K`` chat completion per task, its grades in ``judge_scores[]`` (a name no reader takes for the reward)."""
    return [
        {
            "object": "chat.completion",
            "model": model,
            "prompt": f"Problem {t}",
            "choices": [
                {"index": j, "message": {"role": "assistant", "content": f"{t} {j}"}}
                for j in range(K)
            ],
            "judge_scores": task,
        }
        for t, task in enumerate(grades)
    ]


def _write(path: Path, rows: list[dict[str, object]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def _route(*args: str) -> tuple[int, dict, str]:
    result = CliRunner().invoke(
        app, ["route", *args, "--model", "Qwen/Qwen3-8B", "--format", "json"]
    )
    report = json.loads(result.stdout) if result.exit_code in (0, 1) else {}
    return result.exit_code, report, result.stderr


def _pass1(grades: list[list[float]]) -> float:
    return sum(sum(t) / len(t) for t in grades) / len(grades)


def _teacher_check(report: dict) -> dict:
    return next(c for c in report["checks"] if c["key"] == "teacher")["measured"]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("mirror", [False, True])
def test_each_side_reads_with_its_own_map(tmp_path: Path, seed: int, mirror: bool) -> None:
    student, teacher = _draws(seed, lead=0.3)
    if not mirror:  # the probe's case: the teacher is the n=8 requests
        s = _write(tmp_path / "s.jsonl", _rows(student, "Qwen/Qwen3-8B"))
        t = _write(tmp_path / "t.jsonl", _requests(teacher, "Qwen/Qwen3-32B"))
        maps = ["--teacher-map", "reward=judge_scores[]"]
    else:  # the student is the requests: --map for it, the teacher's own column over it
        s = _write(tmp_path / "s.jsonl", _requests(student, "Qwen/Qwen3-8B"))
        t = _write(tmp_path / "t.jsonl", _rows(teacher, "Qwen/Qwen3-32B"))
        maps = ["--map", "reward=judge_scores[]", "--teacher-map", "reward=reward"]
    code, report, err = _route(s, "--teacher", t, *maps)
    assert code in (0, 1), err
    measured = _teacher_check(report)
    assert measured["teacher_pass_at_1"]["value"] == pytest.approx(_pass1(teacher))
    assert measured["student_pass_at_1"]["value"] == pytest.approx(_pass1(student))


def test_a_teacher_refused_for_a_map_names_teacher_map(tmp_path: Path) -> None:
    student, teacher = _draws(0, lead=0.3)
    s = _write(tmp_path / "s.jsonl", _rows(student, "Qwen/Qwen3-8B"))
    t = _write(tmp_path / "t.jsonl", _requests(teacher, "Qwen/Qwen3-32B"))
    code, _, err = _route(s, "--teacher", t)
    assert code == 2 and "--teacher-map reward=judge_scores[]" in err, err
    assert len(err.strip().splitlines()) == 1
