"""A dump whose pass@1 is itself unsure however its counts fall (:meth:`Facts.doubts`): a
reward of one value beside a column that grades both ways (a placeholder the grader never
filled), or passing replies that look cut off at the token cap though not flagged cut. A
``before`` written with ``reward: 0.0`` beside ``is_correct`` read as an improvement of
+0.47 and exited 0 under ``--fail-on regression`` while the true change was a loss.

The generator draws a pair of dumps of one pool of tasks (the after a small change away),
spoils one side or none, and reads the diff: a spoiled side makes the verdict provisional
and is named among the warnings, whichever side it is; a clean pair is never provisional.
The same spoiled rows given as a teacher make the route provisional (``teacher_doubts``)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.route import run_route
from whilecli.route.model import Route

#: How a side is spoiled: not, a placeholder reward beside the grade (top level or in an
#: object), cut-off passes piled at an unrecorded cap behind a flag saying not cut, or graded
#: by a judge where the other side's grades are a program's, or written by two models.
SPOILS = ("none", "placeholder", "nested", "cut", "judged", "models")


def _rows(rates: list[float], shift: float, spoil: str, rng: random.Random) -> list[dict]:
    rows: list[dict[str, Any]] = []
    for t, p in enumerate(rates):
        for j in range(4):
            ok = rng.random() < min(1.0, max(0.0, p + shift))
            row: dict[str, Any] = {
                "task_id": f"t{t}",
                "prompt": f"Solve {t}.",
                "completion": f"{shift}.{t}.{j}",
                "reward": float(ok),
                "truncated": False,
                "completion_tokens": rng.randint(100, 1900),
            }
            if spoil == "placeholder":
                row.update(reward=0.0, is_correct=ok)
            elif spoil == "nested":
                row.update(reward=1.0, metrics={"exact_match": int(ok)})
            elif spoil == "cut" and rng.random() < 0.15:
                row.update(completion_tokens=2048, reward=float(rng.random() < 0.5))
            elif spoil == "judged":
                row.update(judge_model="gpt-4o", judge_reasoning="matches" if ok else "wrong")
            elif spoil == "models":
                row["model"] = "Qwen/Qwen3-8B" if j % 2 else "meta-llama/Llama-3.1-8B-Instruct"
            rows.append(row)
    return rows


def _write(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


@settings(
    max_examples=16, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10_000),
    tasks=st.sampled_from([40, 300]),
    shift=st.sampled_from([-0.1, 0.0, 0.1]),
    spoil=st.sampled_from(SPOILS),
    side=st.sampled_from(["before", "after"]),
)
def test_a_side_whose_pass_at_1_is_unsure_makes_the_diff_provisional(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    tasks: int,
    shift: float,
    spoil: str,
    side: str,
) -> None:
    rng = random.Random(seed)
    rates = [rng.betavariate(1, 1) for _ in range(tasks)]
    folder = tmp_path_factory.mktemp("doubts")
    spoils = {"before": "none", "after": "none", side: spoil}
    before = _write(folder / "before.jsonl", _rows(rates, 0.0, spoils["before"], rng))
    after = _write(folder / "after.jsonl", _rows(rates, shift, spoils["after"], rng))
    got = CliRunner().invoke(app, ["diff", before, after, "--format", "json"])
    assert got.exit_code == 0, got.output
    report = json.loads(got.output)
    assert report["provisional"] is (spoil != "none")
    said = [w for w in report["warnings"] if w.startswith(f"{side}: ")]
    if spoil in ("placeholder", "nested"):
        column = "is_correct" if spoil == "placeholder" else "metrics.exact_match"
        assert any(column in w and "placeholder" in w for w in said)
    elif spoil == "cut":
        assert any("look cut off at the token cap" in w for w in said)
    elif spoil == "judged":
        assert any("two graders' pass rates" in w for w in report["warnings"])
    elif spoil == "models":  # the before side's is said among the pairing's notes
        named = "the before rows: 2 models" if side == "before" else "after: 2 models"
        assert any(named in w and "a mixture of models" in w for w in report["warnings"])
    text = CliRunner().invoke(app, ["diff", before, after])
    assert (", provisional (" in text.output.splitlines()[0]) is (spoil != "none")


@pytest.mark.parametrize("spoil", ["placeholder", "nested", "cut"])
def test_a_teacher_whose_pass_at_1_is_unsure_leaves_the_route_provisional(
    tmp_path: Path, spoil: str
) -> None:
    rng = random.Random(5)
    rates = [rng.betavariate(0.6, 2.5) for _ in range(300)]
    student = _write(tmp_path / "student.jsonl", _rows(rates, 0.0, "none", rng))
    teacher_rows = _rows(rates, 0.45, spoil, rng)
    for row in teacher_rows:
        row["model"] = "Qwen/Qwen3-32B"
    teacher = _write(tmp_path / "teacher.jsonl", teacher_rows)
    route = run_route(
        student,
        teacher=[teacher],
        model="Qwen/Qwen3-1.7B",
        teacher_vocab=151936,
        student_vocab=151936,
    )
    assert isinstance(route, Route)
    assert route.provisional
    assert "teacher_doubts" in [f.kind for f in route.data_quality]
    if spoil != "cut":
        column = "is_correct" if spoil == "placeholder" else "metrics.exact_match"
        mapped = run_route(
            student,
            teacher=[teacher],
            model="Qwen/Qwen3-1.7B",
            teacher_vocab=151936,
            student_vocab=151936,
            teacher_mapping={"reward": column},
        )
        assert isinstance(mapped, Route)
        assert "teacher_doubts" not in [f.kind for f in mapped.data_quality]
