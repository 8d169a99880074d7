"""A version a file's path states (:func:`whilecli.io.versions.path_step`).

Two checkpoints' dumps kept in sibling folders (``step_100/``, ``step_200/``;
``checkpoint-300/``, ``global_step_N/``) or in files named by their step
(``rollouts_step100.jsonl``), with no version on their rows, were pooled as one policy's rows:
check 6 passed, and ``--model M@200`` said the rows carry no version. Each row now takes its
path's step where it records none: two steps pooled are two policy versions (Async), and a
single step folder routes as before with its version known.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.io.read import read_rows
from whilecli.io.versions import path_step, version_id
from whilecli.route import run_route

FOLDERS = ["step_{}", "step-{}", "checkpoint-{}", "global_step_{}", "global_step{}", "ckpt-{}"]
FILES = ["rollouts_step{}.jsonl", "rollouts-checkpoint-{}.jsonl", "step_{}_eval.jsonl"]


def _write(path: Path, seed: int, model: str = "Qwen/Qwen3-8B", extra: dict | None = None) -> None:
    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for t in range(60):
        p = rng.uniform(0.2, 0.8)
        for d in range(8):
            row = {"task_id": f"t{t}", "reward": float(rng.random() < p), "truncated": False}
            row |= {"model": model, "completion": f"r{t}-{d}-{seed}", **(extra or {})}
            lines.append(json.dumps(row))
    path.write_text("\n".join(lines) + "\n")


def _layout(root: Path, how: str, steps: list[int]) -> list[Path]:
    """One file per step under ``root``: in a step folder (``how`` a folder's pattern, with an
    ``eval/`` folder inside it or not), or named by its step."""
    out = []
    for step in steps:
        if how in FILES:
            out.append(root / how.format(step))
        else:
            out.append(root / how.format(step) / "rollouts.jsonl")
    return out


def _on_policy(report: object) -> object:
    return next(c for c in report.checks if c.key == "on_policy")  # type: ignore[attr-defined]


@pytest.mark.parametrize("how", FOLDERS + FILES)
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(old=st.integers(0, 10**5), ahead=st.integers(1, 10**5), seed=st.integers(0, 99))
def test_two_steps_pooled_are_two_versions(
    tmp_path_factory: pytest.TempPathFactory, how: str, old: int, ahead: int, seed: int
) -> None:
    """Two steps' dumps pooled: an older copy wrote half the rows (Async), with or without
    ``--model M@NEW``, which now compares with the paths' steps."""
    root = tmp_path_factory.mktemp("pool")
    new = old + ahead
    for i, path in enumerate(_layout(root, how, [old, new])):
        _write(path, seed + i)
    for model in ("Qwen/Qwen3-8B", f"Qwen/Qwen3-8B@{new}"):
        report = run_route([str(root)], model=model)
        check = _on_policy(report)
        assert check.status.value == "fail" and "async" in report.plan, check.why
        assert report.method != "sft"
        assert set(check.measured["versions"]) == {str(old), str(new)}


@pytest.mark.parametrize("how", FOLDERS + FILES)
def test_one_step_routes_as_before_with_its_version(tmp_path: Path, how: str) -> None:
    """A single step's dump routes on-policy as before; its version is now known, so
    ``--model M@STEP`` passes and ``--model M@LATER`` reads it as an older copy."""
    (path,) = _layout(tmp_path, how, [100])
    _write(path, 1)
    plain = run_route([str(path)], model="Qwen/Qwen3-8B")
    assert _on_policy(plain).status.value == "pass" and plain.plan == ["grpo"]
    assert run_route([str(path)], model="Qwen/Qwen3-8B@100").plan == ["grpo"]
    later = run_route([str(path)], model="Qwen/Qwen3-8B@200")
    assert "async" in later.plan


def test_the_rows_own_version_comes_first(tmp_path: Path) -> None:
    """A version the rows record (a column, ``model@version``, a checkpoint in the model's
    name) wins over the path's step; the path fills only rows that record none."""
    _write(tmp_path / "step_100" / "a.jsonl", 1, extra={"policy_version": 7})
    _write(tmp_path / "step_100" / "b.jsonl", 2, model="Qwen/Qwen3-8B@8")
    _write(tmp_path / "step_100" / "c.jsonl", 3, model="my-org/Qwen3-8B-checkpoint-9")
    for name, version in (("a", "7"), ("b", "8"), ("c", "9")):
        frame = read_rows([str(tmp_path / "step_100" / f"{name}.jsonl")]).frame.collect()
        found = {version_id(v) for v in frame["policy_version"].to_list()}
        assert found == {version}, name


@pytest.mark.parametrize(
    ("path", "step"),
    [
        ("runs/step_100/rollouts.jsonl", 100),
        ("runs/global_step_7/eval/rows.jsonl", 7),
        ("runs/rollouts_step100.jsonl", 100),
        ("runs/multistep2.jsonl", None),
        ("runs/step_1_to_step_2.jsonl", None),
        ("runs/a/b/step_5/c/d/rows.jsonl", None),
        ("runs/gsm8k/rows.jsonl", None),
    ],
)
def test_path_step(path: str, step: int | None) -> None:
    """The file's name (one step in it), else its two nearest folders named as a checkpoint."""
    found = path_step(Path(path))
    assert (found[0] if found else None) == step
