"""Fields under the names other tools give them (DESIGN section 1, the alias tables).

* The policy version: ``training_step``, ``checkpoint`` (``ckpt-350``), ``model_version``
  (``v3``), ``model_revision`` (``step100``) and the like are the weights' version: rows of
  several versions are older copies' (check 6), never "on-policy". ``iteration`` and
  ``turn`` count an agent's turns: never a version.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from read_helpers import frame_of
from rows_files import route_rows, write_rows

MODEL = "Qwen/Qwen3-8B"

VERSION_NAMES = ["training_step", "checkpoint", "model_version", "model_revision", "train_step"]
#: How a version is written under each name: a step, a checkpoint, a version, a revision.
SPELLED = {
    "int": lambda v: v * 10,
    "ckpt": lambda v: f"ckpt-{v * 50}",
    "v": lambda v: f"v{v}",
    "step": lambda v: f"step{v * 10}",
}


def _check(route: object, key: str) -> object:
    return next(c for c in route.checks if c.key == key)  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(VERSION_NAMES),
    spelled=st.sampled_from(sorted(SPELLED)),
    versions=st.integers(2, 5),
)
def test_a_version_under_another_name_is_read_and_moves_check_6(
    tmp_path: Path, kind: str, name: str, spelled: str, versions: int
) -> None:
    rows = [
        {
            "task_id": f"t{i // 8}",
            "reward": float((i * 7) % 3 == 0),
            "truncated": False,
            "model": MODEL,
            name: SPELLED[spelled](i * versions // 160),
        }
        for i in range(160)
    ]
    path = write_rows(tmp_path, rows, kind)
    frame, _ = frame_of(path)
    assert frame["policy_version"].to_list() == [str(r[name]) for r in rows]
    on = _check(route_rows(path, MODEL), "on_policy")
    assert on.status.value != "pass", on.why  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["iteration", "turn"])
def test_a_turn_count_is_no_version(tmp_path: Path, name: str) -> None:
    rows = [
        {"task_id": f"t{i // 8}", "reward": float(i % 2), "model": MODEL, name: i % 4}
        for i in range(80)
    ]
    frame, _ = frame_of(write_rows(tmp_path, rows, "jsonl"))
    assert frame["policy_version"].null_count() == frame.height
