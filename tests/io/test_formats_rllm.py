"""rLLM episode logs (rllm/utils/episode_logger.py: EpisodeLogger.log_episode): one JSON
object per episode under episodes/<mode>_step_<N>_epoch_<E>/, its id "<task>:<rollout>", the
grade is_correct, a length or turn cap in termination_reason a cut-off reply; the
batch_summary.json beside them holds no rows."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from whilecli.errors import InputError
from whilecli.io.read import read_rows

#: Per task, each rollout's (is_correct, termination_reason).
GRID = {
    "t0": [(True, "env_done"), (True, "env_done"), (True, "env_done"), (False, "env_done")],
    "t1": [
        (False, "env_done"),
        (False, "env_done"),
        (True, "env_done"),
        (False, "max_response_length_exceeded"),
    ],
    "t2": [(False, "env_done"), (False, "max_turns_exceeded"), (False, "env_done")],
}


def _episode(task_id: str, k: int, correct: bool, reason: str) -> dict[str, Any]:
    task = {"question": f"What is {task_id}?", "ground_truth": "42", "uid": task_id}
    return {
        "training_step": 10,
        "epoch": 0,
        "episode_id": f"{task_id}:{k}",
        "task": task,
        "task_hash": hashlib.sha256(json.dumps(task, sort_keys=True).encode()).hexdigest()[:8],
        "is_correct": correct,
        "termination_reason": reason,
        "metrics": {"solver_acc": float(correct)},
        "timing": {},
        "trajectories": [
            {
                "name": "solver",
                "uid": f"{task_id}-{k}",
                "reward": float(correct),
                "num_steps": 1,
                "timing": {},
                "steps": [
                    {
                        "observation": None,
                        "thought": "",
                        "action": "42",
                        "reward": float(correct),
                        "done": True,
                        "model_response": f"\\boxed{{{42 if correct else k}}}",
                        "model_output": None,
                        "chat_completions": [{"role": "user", "content": task["question"]}],
                        "timing": {},
                    }
                ],
            }
        ],
    }


def _write(root: Path) -> Path:
    folder = root / "episodes" / "val_step_10_epoch_0"
    folder.mkdir(parents=True)
    for task_id, draws in GRID.items():
        for k, (correct, reason) in enumerate(draws):
            episode = _episode(task_id, k, correct, reason)
            name = f"episode_hash{episode['task_hash']}_id{task_id}_{k}.json"
            (folder / name).write_text(json.dumps(episode, indent=2) + "\n")
    summary = {"training_step": 10, "epoch": 0, "mode": "val", "num_episodes": 11}
    summary |= {"episode_files": [], "summary_stats": {"total_correct": 4, "accuracy": 4 / 11}}
    (folder / "batch_summary.json").write_text(json.dumps(summary, indent=2))
    return folder


def test_episode_folder_reads_as_rollouts_of_tasks(tmp_path: Path) -> None:
    rows = read_rows([str(_write(tmp_path))])
    frame = rows.frame.collect()
    per = frame.group_by("task_id").agg(n=pl.len(), c=pl.col("passed").cast(pl.Int64).sum())
    assert sorted(per.iter_rows()) == [("t0", 4, 3), ("t1", 4, 1), ("t2", 3, 0)]
    assert frame["truncated"].sum() == 2
    assert frame["truncated"].null_count() == 0
    assert rows.format == "rllm"


def test_one_episode_named_is_one_row(tmp_path: Path) -> None:
    folder = _write(tmp_path)
    path = next(folder.glob("episode_*_idt1_3.json"))
    frame = read_rows([str(path)]).frame.collect()
    assert frame["task_id"].to_list() == ["t1"]
    assert frame["truncated"].to_list() == [True]
    assert frame["passed"].to_list() == [False]


def test_batch_summary_named_is_refused_as_a_sidecar(tmp_path: Path) -> None:
    folder = _write(tmp_path)
    with pytest.raises(InputError, match="batch_summary"):
        read_rows([str(folder / "batch_summary.json")])
