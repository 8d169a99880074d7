"""A teacher's rows kept by their grade (check 4's teacher rules).

People hand ``--teacher`` the rows they would distil from: a rejection-sampled set that keeps
every passing draw, or the best draw of each task. Every such row passes, so the teacher's
pass@1 reads 1.0 on every task it kept, and a teacher no better than the student "cleared by
+0.47 with intervals apart": a firm OPD. The generator draws a student and a teacher of a
known gap (at most +0.04, short of the 0.05 OPD needs), some tasks neither solves, and keeps
the teacher's rows as such a set does; the truth is "the teacher does not clear", so OPD is
never firm, and the reason is named (``teacher_doubts``). The teacher's every draw, kept,
still clears firmly where its gap is real.

A best-of-k teacher that solves every task leaves no trace: one passing row per task is what
a perfect teacher writes too.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.route import run_route

MODEL, TEACHER = "Qwen/Qwen3-8B", "Qwen/Qwen3-32B"


def _rows(
    rates: list[float], k: int, model: str, rng: random.Random, keep: str = "every"
) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for t, p in enumerate(rates):
        passed = [rng.random() < p for _ in range(k)]
        if keep == "passes":  # a rejection-sampled set: every passing draw
            kept = [ok for ok in passed if ok]
        elif keep == "best":  # the best draw of each task, where one passed
            kept = [True] if any(passed) else []
        else:
            kept = passed
        rows += [
            {
                "task_id": f"t{t}",
                "prompt": f"Question {t}",
                "completion": f"{model} {t}.{j}",
                "reward": float(ok),
                "finish_reason": "stop",
                "model": model,
            }
            for j, ok in enumerate(kept)
        ]
    return rows


def _write(path: Path, rows: list[dict[str, object]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    keep=st.sampled_from(["passes", "best"]),
    tasks=st.integers(60, 300),
    teacher_k=st.sampled_from([1, 4, 8]),
    gap=st.floats(-0.1, 0.04),
    never=st.floats(0.05, 0.3),
    seed=st.integers(0, 10**6),
)
def test_a_teacher_kept_by_its_grade_is_never_a_firm_opd(
    tmp_path_factory: pytest.TempPathFactory,
    keep: str,
    tasks: int,
    teacher_k: int,
    gap: float,
    never: float,
    seed: int,
) -> None:
    rng = random.Random(seed)
    rates = [0.0 if rng.random() < never else rng.betavariate(2, 2) for _ in range(tasks)]
    teacher_rates = [0.0 if p == 0 else min(1.0, max(0.0, p + gap)) for p in rates]
    folder = tmp_path_factory.mktemp("kept")
    student = _write(folder / "student.jsonl", _rows(rates, 8, MODEL, rng))
    teacher_rows = _rows(teacher_rates, teacher_k, TEACHER, rng, keep)
    teacher = _write(folder / "teacher.jsonl", teacher_rows)
    route = run_route(
        [student], model=MODEL, teacher=[teacher], teacher_vocab=151936, student_vocab=151936
    )
    assert route.method != "opd" or route.provisional, route.headline
    if route.method == "opd":
        assert "teacher_doubts" in [f.kind for f in route.data_quality], route.headline


def test_a_teacher_whose_every_draw_is_kept_clears_firmly(tmp_path: Path) -> None:
    rng = random.Random(11)
    rates = [rng.betavariate(2, 5) for _ in range(300)]
    student = _write(tmp_path / "student.jsonl", _rows(rates, 8, MODEL, rng))
    better = [min(1.0, p + 0.3) for p in rates]
    teacher = _write(tmp_path / "teacher.jsonl", _rows(better, 4, TEACHER, rng))
    route = run_route(
        [student], model=MODEL, teacher=[teacher], teacher_vocab=151936, student_vocab=151936
    )
    assert route.method == "opd" and not route.provisional, route.headline
    assert "teacher_doubts" not in [f.kind for f in route.data_quality]


@pytest.mark.parametrize("side", ["before", "after"])
def test_diff_against_a_dump_kept_by_its_grade_is_provisional(tmp_path: Path, side: str) -> None:
    """The same rule in ``diff``: a rejection-sampled dump beside a full one reads as a gain
    (or a loss) of about half the pass rate, which its rows cannot show."""
    from typer.testing import CliRunner

    from whilecli.cli import app

    rng = random.Random(5)
    rates = [0.0 if rng.random() < 0.1 else rng.betavariate(2, 2) for _ in range(200)]
    full = _write(tmp_path / "full.jsonl", _rows(rates, 8, MODEL, rng))
    kept = _write(tmp_path / "kept.jsonl", _rows(rates, 8, MODEL, rng, keep="passes"))
    pair = [full, kept] if side == "after" else [kept, full]
    result = CliRunner().invoke(app, ["diff", *pair, "--format", "json"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    assert got["provisional"] is True, got
    assert any("kept by their grade" in w for w in got["warnings"]), got["warnings"]
