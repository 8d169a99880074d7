"""Rows left out as harness errors beside a saturated band: counted as failures, each could
split a task now at 1, so from as many as a firm GRPO needs split tasks (30) a saturation
resting on leaving them out is provisional. The generator draws saturated pools with error
rows on some tasks (or none), in either encoding; the truth is a plain loop over the rows,
and a summary of the rows routes alike."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import finding_kinds, route_rows, write_rows
from whilecli.route.quality import ERRORS_BESIDE_SATURATION

SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
MODEL = "Qwen/Qwen3-8B"
ERRORS = ["ContextWindowExceededError: prompt exceeds 32768 tokens", "TimeoutError: 600 s"]


@SETTINGS
@given(
    seed=st.integers(0, 10**6),
    tasks=st.integers(40, 200),
    k=st.integers(2, 6),
    errored=st.sampled_from([0.0, 0.02, 0.2, 0.3]),
    fail_beside=st.sampled_from([False, False, True]),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_errors_in_tasks_at_one_leave_a_saturation_provisional(
    tmp_path: Path, seed: int, tasks: int, k: int, errored: float, fail_beside: bool, kind: str
) -> None:
    rnd = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for t in range(tasks):
        for _ in range(k):
            row: dict[str, Any] = {"task_id": f"t{t}", "reward": 1.0, "model": MODEL,
                                   "completion": f"answer {rnd.random()}", "error": None}  # fmt: skip
            if rnd.random() < errored:
                row.update(reward=None, completion="", error=rnd.choice(ERRORS))
            rows.append(row)
    if fail_beside:  # one task whose counted rows fail: the band is no longer saturated
        rows += [{"task_id": "t-fail", "reward": 0.0, "model": MODEL, "completion": "x",
                  "error": None} for _ in range(k)]  # fmt: skip
    counted: dict[str, list[float]] = {}
    errors: dict[str, int] = {}
    for r in rows:
        if r["error"] is None:
            counted.setdefault(r["task_id"], []).append(r["reward"])
        else:
            errors[r["task_id"]] = errors.get(r["task_id"], 0) + 1
    saturated = all(x == 1.0 for xs in counted.values() for x in xs)
    errored_rows = sum(errors.values())
    route = route_rows(write_rows(Path(tempfile.mkdtemp(dir=tmp_path)), rows, kind), MODEL)
    kinds = finding_kinds(route)
    if saturated and errored_rows >= ERRORS_BESIDE_SATURATION:
        found = next(f for f in route.data_quality if f.kind == "errors_beside_the_band")
        assert found.count == errored_rows
        assert route.provisional
    else:
        assert "errors_beside_the_band" not in kinds
