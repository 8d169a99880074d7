"""One draw written twice, or one reply graded twice (DESIGN section 2, "Data quality first").

A seeded simulator draws a grouped pool with a known truth (each task's k replies distinct,
graded once), then writes some of its tasks' rows twice (a file concatenated with itself,
a resumed run's overlap), or grades the same replies a second time in a second file with
some grades flipped. The rows that repeat another row are counted and leave the verdict
provisional; replies graded both pass and fail anywhere in the pool are counted as the
grader's splits, with the tasks that hold them, and leave it provisional too.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.route import run_route
from whilecli.route.model import Route

MODEL = "Qwen/Qwen3-8B"
SETTINGS = settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def pool(seed: int, tasks: int, k: int) -> list[dict[str, Any]]:
    """The truth: per task a pass rate from across the band, k distinct replies graded once."""
    rng = random.Random(seed)
    rows = []
    for t in range(tasks):
        rate = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0])
        for j in range(k):
            rows.append(
                {"task_id": f"t{t}", "prompt": f"question {t}?"}
                | {"completion": f"answer {t}.{j} {rng.random():.6f}"}
                | {"reward": float(rng.random() < rate), "truncated": False, "model": MODEL}
            )
    return rows


def write(folder: Path, name: str, rows: list[dict[str, Any]]) -> str:
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def route(*paths: str) -> Route:
    got = run_route(list(paths), model=MODEL)
    assert isinstance(got, Route)
    return got


def finding(got: Route, kind: str) -> int | None:
    return next((f.count for f in got.data_quality if f.kind == kind), None)


@SETTINGS
@given(seed=st.integers(0, 10**6), share=st.sampled_from([0.25, 0.5, 1.0]))
def test_rows_written_twice_are_counted_and_leave_the_verdict_provisional(
    tmp_path_factory: Any, seed: int, share: float
) -> None:
    folder = tmp_path_factory.mktemp("twice")
    rows = pool(seed, tasks=60, k=4)
    assert finding(route(write(folder, "once.jsonl", rows)), "repeated_rows") is None
    again = [r for r in rows if int(r["task_id"][1:]) < share * 60]
    got = route(write(folder, "twice.jsonl", rows + again))
    assert finding(got, "repeated_rows") == len(again), got.data_quality
    assert got.provisional, got.headline


@SETTINGS
@given(seed=st.integers(0, 10**6), flips=st.integers(1, 30))
def test_a_reply_graded_both_ways_across_files_is_the_graders_split(
    tmp_path_factory: Any, seed: int, flips: int
) -> None:
    folder = tmp_path_factory.mktemp("regraded")
    rows = pool(seed, tasks=60, k=4)
    flipped = set(random.Random(seed).sample(range(len(rows)), flips))
    regraded = [
        dict(r, reward=1.0 - r["reward"]) if i in flipped else r for i, r in enumerate(rows)
    ]
    got = route(write(folder, "v1.jsonl", rows), write(folder, "v2.jsonl", regraded))
    tasks = {rows[i]["task_id"] for i in flipped}
    assert finding(got, "graded_apart") == len(tasks), got.data_quality
    assert got.provisional, got.headline
