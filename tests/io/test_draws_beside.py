"""A metric named as a mean over n samples is n draws only where a row is one doc
(``io/plan.py::_sample_mean_metric``; DESIGN section 1: a row is a rollout).

A seeded simulator writes rows that already are draws (a task id repeating k times), each with
its own 0/1 grade in ``metrics``, beside a task-level ``pass@1:k_samples`` (or ``avg@n:n=k``)
stamped on every row, or beside a bare ``metrics.pass@1`` and a ``predictions[]`` list of the
answers extracted from that one reply (none on a fail, two on some rows): each row must read
as one rollout with its own grade, k draws a task, none ungraded. A neighbour keeps the rule's
own case: rows whose ids do not repeat, each holding n replies and the mean over them, read as
n draws a row.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from read_helpers import frame_of, jsonl

MEANS = ["pass@1:4_samples", "math_pass@1:4_samples", "avg@n:n=4", "pass@k:k=1&n=4"]


def _draws(seed: int, mean: str) -> tuple[list[dict[str, Any]], list[float]]:
    """40 tasks × 4 draws, each with its own grade and the task's mean stamped beside it."""
    rnd = random.Random(seed)
    rows, grades = [], []
    for t in range(40):
        own = [float(rnd.random() < rnd.choice([0.0, 0.5, 1.0, 0.3])) for _ in range(4)]
        for j, g in enumerate(own):
            metrics = {"acc": g, mean: sum(own) / 4}
            rows.append({"task_id": f"t{t}", "completion": f"{t}.{j}", "metrics": metrics})
            grades.append(g)
    return rows, grades


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("mean", MEANS)
def test_a_task_mean_beside_per_draw_grades_is_no_draws(
    tmp_path: Path, seed: int, mean: str
) -> None:
    rows, grades = _draws(seed, mean)
    frame, _ = frame_of(jsonl(tmp_path / "r.jsonl", rows))
    assert frame.height == len(rows)
    assert frame["reward"].to_list() == grades


@pytest.mark.parametrize("seed", range(3))
def test_an_extracted_answer_list_is_not_the_samples(tmp_path: Path, seed: int) -> None:
    """Bare ``metrics.pass@1`` per draw beside ``predictions`` of 0 to 2 answers."""
    rnd = random.Random(seed)
    rows = []
    for t in range(40):
        for j in range(4):
            ok = rnd.random() < 0.5
            found = [] if not ok and rnd.random() < 0.7 else [str(t)] * rnd.choice([1, 1, 2])
            rows.append(
                {
                    "task_id": f"t{t}",
                    "completion": f"{t}.{j}",
                    "predictions": found,
                    "metrics": {"pass@1": float(ok)},
                }
            )
    frame, _ = frame_of(jsonl(tmp_path / "r.jsonl", rows))
    assert frame.height == len(rows)
    assert frame["reward"].to_list() == [r["metrics"]["pass@1"] for r in rows]


@pytest.mark.parametrize("seed", range(3))
def test_one_doc_a_row_still_reads_as_n_draws(tmp_path: Path, seed: int) -> None:
    """The rule's own case outside lighteval: ids that do not repeat, n replies a row."""
    rnd = random.Random(seed)
    counts = [rnd.randint(0, 4) for _ in range(30)]
    rows = [
        {
            "task_id": f"t{t}",
            "predictions": [f"{t}.{j}" for j in range(4)],
            "metrics": {"pass@1": c / 4},
        }
        for t, c in enumerate(counts)
    ]
    frame, _ = frame_of(jsonl(tmp_path / "r.jsonl", rows))
    got = frame.group_by("task_id").agg(pl.col("reward").sum(), pl.len())
    assert {r["task_id"]: (r["reward"], r["len"]) for r in got.iter_rows(named=True)} == {
        f"t{t}": (float(c), 4) for t, c in enumerate(counts)
    }
