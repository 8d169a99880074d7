"""A one-shot ``watch`` of a prime-rl run is linear in its step folders (DESIGN section 6):
``rollouts/`` is scanned a fixed number of times per poll, however many step folders it
holds, whether they are empty or hold traces no metrics row reported, in either split and
with or without ``metrics.jsonl``."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pytest

from whilecli.watch import WatchOptions, watch_run
from whilecli.watch import layout as layout_module

TRACE = {
    "task": {"key": "t", "data": {}},
    "group": {"id": "g"},
    "rewards": {"correct": {"score": 1.0, "weight": 1.0}},
    "stop_condition": None,
}


def _run(root: Path, empty: int, traced: int, metrics: bool, split: str, seed: int) -> None:
    """A run with one reported step 0, then ``empty`` empty step folders and ``traced``
    folders with traces but no metrics row, in a seeded order of step numbers."""
    steps = list(range(1, empty + traced + 1))
    random.Random(seed).shuffle(steps)
    for step in [0, *steps[:traced]]:
        folder = root / "rollouts" / f"step_{step}" / split / "all"
        folder.mkdir(parents=True)
        rows = [TRACE | {"task": {"key": f"t{t}", "data": {}}} for t in range(2) for _ in range(2)]
        (folder / "traces.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    for step in steps[traced:]:
        (root / "rollouts" / f"step_{step}").mkdir()
    if metrics:
        row: dict[str, Any] = {"step": 0, "producer": "orch"}
        if split == "eval":
            row["eval/x"] = 1
        (root / "metrics.jsonl").write_text(json.dumps(row) + "\n")


def _scans(root: Path, split: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[str]]:
    """How many times ``rollouts/`` was scanned by one one-shot watch, and what it said."""
    calls = 0
    real = layout_module._one_name_per_step

    def counted(found: list[Any], folder: Path) -> dict[int, str]:
        nonlocal calls
        calls += 1
        return real(found, folder)

    monkeypatch.setattr(layout_module, "_one_name_per_step", counted)
    said: list[str] = []
    opts = WatchOptions(format="json", bootstrap_draws=50, split=split)
    watch_run(root, opts, write=lambda _: None, say=said.append)
    monkeypatch.setattr(layout_module, "_one_name_per_step", real)
    return calls, said


@pytest.mark.parametrize("metrics", [True, False])
@pytest.mark.parametrize("split", ["train", "eval"])
@pytest.mark.parametrize("seed", [0, 1])
def test_rollouts_is_scanned_as_often_for_many_step_folders_as_for_few(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, metrics: bool, split: str, seed: int
) -> None:
    """The number of scans does not grow with the step folders (it grew by one per folder)."""
    counts = []
    for n in (3, 40, 200):
        root = tmp_path / f"run{n}"
        _run(root, empty=n, traced=n // 4, metrics=metrics, split=split, seed=seed)
        calls, _ = _scans(root, split, monkeypatch)
        counts.append(calls)
    assert counts[0] == counts[1] == counts[2], counts


def test_five_thousand_empty_step_folders_are_watched_in_seconds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The probe's case: a run whose ``rollouts/`` holds thousands of step folders that no
    metrics row reported (quadratic before: minutes)."""
    _run(tmp_path, empty=5000, traced=20, metrics=True, split="train", seed=3)
    start = time.perf_counter()
    _, said = _scans(tmp_path, "train", monkeypatch)
    assert time.perf_counter() - start < 20
    assert any("on disk not reported" in line for line in said), said
