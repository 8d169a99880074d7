"""OpenPipe ART trajectory logs (src/art/utils/trajectory_logging.py:
serialize_trajectory_groups) at .art/<project>/models/<model>/trajectories/<split>/<step>.jsonl:
one TrajectoryGroup per line, each trajectory a rollout of the group's prompt, the grade its
reward, the last choice's finish_reason 'length' a cut-off reply, the model its folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from whilecli.io.read import read_rows

#: Per scenario, each rollout's (reward, finish_reason).
GROUPS = [
    [(1.0, "stop"), (0.0, "stop"), (1.0, "stop"), (1.0, "stop")],
    [(0.0, "stop"), (0.0, "stop"), (0.0, "length"), (1.0, "stop")],
    [(1.0, "stop"), (1.0, "stop"), (1.0, "stop")],
]


def _trajectory(g: int, j: int, reward: float, finish: str) -> dict[str, Any]:
    choice = {
        "finish_reason": finish,
        "index": 0,
        "message": {"content": f"reply {g}.{j}", "role": "assistant", "tool_calls": None},
    }
    return {
        "reward": reward,
        "metrics": {"correct": reward},
        "metadata": {"scenario": g},
        "messages_and_choices": [
            {"role": "system", "content": "You search an inbox."},
            {"role": "user", "content": f"Find email {g}"},
            choice,
        ],
        "tools": None,
        "additional_histories": [],
        "logs": [],
    }


def _write(root: Path) -> Path:
    folder = root / ".art" / "email" / "models" / "agent-001" / "trajectories" / "train"
    folder.mkdir(parents=True)
    lines = [
        json.dumps({"trajectories": [_trajectory(g, j, r, f) for j, (r, f) in enumerate(group)]})
        for g, group in enumerate(GROUPS)
    ]
    path = folder / "0003.jsonl"
    path.write_text("\n".join(lines))
    return path


def test_trajectory_groups_read_as_rollouts(tmp_path: Path) -> None:
    rows = read_rows([str(_write(tmp_path))])
    frame = rows.frame.collect()
    per = frame.group_by("task_id").agg(n=pl.len(), c=pl.col("passed").cast(pl.Int64).sum())
    assert sorted((n, c) for _, n, c in per.iter_rows()) == [(3, 3), (4, 1), (4, 3)]
    assert frame["truncated"].sum() == 1
    assert set(frame["model"].to_list()) == {"agent-001"}
    assert rows.format == "art"


def test_groups_of_one_prompt_in_two_steps_meet(tmp_path: Path) -> None:
    path = _write(tmp_path)
    (path.parent / "0004.jsonl").write_text(path.read_text().replace("reply ", "draw "))
    frame = read_rows([str(path.parent)]).frame.collect()
    assert frame["task_id"].n_unique() == 3
    assert frame.height == 22
