"""Rows kept by their grade (finding ``kept_by_grade``): a rejection-sampled set keeps the
passes of each task's draws, a failure dump its fails. Every row left then has one grade,
so the band reads every task at 1 (or at 0) whatever its rate: a mixed pool whose fails were
cut routed a firm "saturated" before. The tell is in the counts: the tasks hold different
numbers of draws, none of them left out as an error.

The generator draws a mixed pool (per-task rates from a Beta, k draws each), drops one
grade's rows, and routes what is left: never a firm verdict. Pools drawn whole, with every
task's k draws (some of them recorded as harness errors), keep their firm verdict."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.route import run_route
from whilecli.route.model import Route


def _write(path: Path, rows: list[dict[str, object]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _draws(rng: random.Random, tasks: int, k: int, a: float, b: float) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for task in range(tasks):
        rate = rng.betavariate(a, b)
        for draw in range(k):
            rows.append(
                {
                    "task_id": f"t{task}",
                    "prompt": f"Solve {task}.",
                    "completion": f"reply {task} {draw}",
                    "reward": float(rng.random() < rate),
                    "finish_reason": "stop",
                }
            )
    return rows


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    tasks=st.sampled_from([40, 200, 800]),
    k=st.sampled_from([4, 8, 16]),
    shape=st.sampled_from([(1.0, 1.0), (0.5, 0.5), (2.0, 5.0), (5.0, 2.0)]),
    kept=st.sampled_from([1.0, 0.0]),
    seed=st.integers(0, 10_000),
)
def test_rows_kept_by_their_grade_never_route_firm(
    tmp_path_factory: pytest.TempPathFactory,
    tasks: int,
    k: int,
    shape: tuple[float, float],
    kept: float,
    seed: int,
) -> None:
    rng = random.Random(seed)
    rows = [r for r in _draws(rng, tasks, k, *shape) if r["reward"] == kept]
    if not rows:
        return
    path = _write(tmp_path_factory.mktemp("kept") / "rows.jsonl", rows)
    route = run_route(path)
    assert isinstance(route, Route)
    assert route.provisional or route.route not in ("floor", "saturated"), route
    if route.route in ("floor", "saturated"):
        assert "kept_by_grade" in [f.kind for f in route.data_quality]


@pytest.mark.parametrize("grade", [1.0, 0.0])
def test_whole_pools_with_errors_recorded_keep_their_firm_verdict(
    tmp_path: Path, grade: float
) -> None:
    """Every task's k draws written, some of them harness errors: the counts of draws are
    equal once the errors are counted, so nothing says the rows were kept by grade."""
    rng = random.Random(4)
    rows: list[dict[str, object]] = []
    for task in range(600):
        for draw in range(4):
            row: dict[str, object] = {
                "task_id": f"t{task}",
                "prompt": f"Solve {task}.",
                "completion": f"reply {task} {draw}",
                "reward": grade,
                "finish_reason": "stop",
            }
            if rng.random() < 0.05:
                row.update(completion="", reward=None, error="upstream timeout")
            rows.append(row)
    route = run_route(_write(tmp_path / "rows.jsonl", rows), model="Qwen/Qwen3-8B")
    assert isinstance(route, Route)
    assert "kept_by_grade" not in [f.kind for f in route.data_quality]
    assert route.route == ("saturated" if grade else "floor")
    whole = [{**r, "reward": grade, "completion": f"reply {i}"} for i, r in enumerate(rows)]
    for row in whole:
        row.pop("error", None)
    firm = run_route(_write(tmp_path / "whole.jsonl", whole), model="Qwen/Qwen3-8B")
    assert isinstance(firm, Route) and firm.route == route.route
    assert not firm.provisional, firm.provisional_why
