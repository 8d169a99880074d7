"""A pool whose rows were selected, the groups that split kept (a dynamic-sampling filter,
as DAPO's and verl's dumps), shows no unanimous group where the pool's own fitted prior
expects many: the verdict is provisional (``no_unanimous_groups``). The generator draws
pools from a known truth (per-task pass rates from a mixture, k draws per task), writes the
rows once whole and once filtered; the filtered rows are flagged, the whole rows, whose
unanimous groups show at their rates, never are, nor a pool whose tasks all sit near one
half at many draws (no unanimous group expected)."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import finding_kinds, route_rows, write_rows

SETTINGS = settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
MODEL = "Qwen/Qwen3-8B"


def _rate(rnd: random.Random, truth: str) -> float:
    if truth == "floor-heavy":  # 70% never pass (DAPO's own example)
        return 0.0 if rnd.random() < 0.7 else rnd.random()
    if truth == "uniform":
        return rnd.random()
    if truth == "high":
        return 1.0 if rnd.random() < 0.4 else rnd.uniform(0.5, 1.0)
    return rnd.uniform(0.45, 0.55)  # "half": nearly every group splits at many draws


def _groups(seed: int, tasks: int, k: int, truth: str) -> list[list[dict[str, Any]]]:
    rnd = random.Random(seed)
    out = []
    for t in range(tasks):
        p = _rate(rnd, truth)
        out.append([{"task_id": f"t{t}", "reward": float(rnd.random() < p), "model": MODEL,
                     "completion": f"draw {rnd.random()}"} for _ in range(k)])  # fmt: skip
    return out


def _split(group: list[dict[str, Any]]) -> bool:
    return 0 < sum(r["reward"] for r in group) < len(group)


@SETTINGS
@given(
    seed=st.integers(0, 10**6),
    tasks=st.integers(1200, 2000),  # k = 16 and 800 floor-heavy tasks keep too few splits to tell
    k=st.sampled_from([4, 8, 16]),
    truth=st.sampled_from(["floor-heavy", "uniform", "high"]),
)
def test_only_split_groups_kept_leave_the_verdict_provisional(
    tmp_path: Path, seed: int, tasks: int, k: int, truth: str
) -> None:
    groups = _groups(seed, tasks, k, truth)
    kept = [g for g in groups if _split(g)]
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    whole = route_rows(write_rows(folder, [r for g in groups for r in g], "jsonl"), MODEL)
    assert "no_unanimous_groups" not in finding_kinds(whole)
    filtered = route_rows(write_rows(folder, [r for g in kept for r in g], "parquet"), MODEL)
    assert "no_unanimous_groups" in finding_kinds(filtered), (len(kept), filtered.data_quality)
    assert filtered.provisional


@SETTINGS
@given(seed=st.integers(0, 10**6), tasks=st.integers(200, 1500), k=st.sampled_from([16, 32]))
def test_tasks_near_one_half_at_many_draws_are_not_read_as_selected(
    tmp_path: Path, seed: int, tasks: int, k: int
) -> None:
    groups = _groups(seed, tasks, k, "half")
    route = route_rows(write_rows(tmp_path, [r for g in groups for r in g], "jsonl"), MODEL)
    assert "no_unanimous_groups" not in finding_kinds(route)
