"""AReaL rollout dumps: with ``rollout.dump_to_file``, every trajectory a rollout task returns is
appended to ``<log path>/rollout/<version>/<task_id>.jsonl`` (evaluation rollouts under
``eval-rollout/``), one sample a line (``inclusionAI/AReaL``, ``areal/infra/workflow_executor.py``:
``WorkflowExecutor._dump_trajectory``, called from ``_create_workflow_task``; the log path is
``StatsLogger.get_log_path`` of the run's file root, experiment and trial; commit 3c1f5733;
``version_rle``, ``segments`` and ``original_reward`` since, as in ``areal-project/AReaL``
1af13f76). Before that, ``RLVRWorkflow`` wrote coloured text (``dump_dir/<version>/<qid>.txt``),
which is no rows.

A line: ``task_id`` (the executor's counter, one per submitted prompt: a group workflow's
``group_size`` samples are one trajectory, so one task), ``sample_idx`` (the sample within it),
``seqlen``, ``prompt_len``, ``head_version`` and ``tail_version`` (the oldest and newest weight
versions that generated its tokens; the folder is the batch's newest), ``version_rle`` (later
versions), ``reward``, ``prompt`` and ``completion`` (decoded with special tokens),
``segments`` (the turns of a multi-turn trajectory) and ``original_reward`` where the
trajectory kept its ``original_rewards`` beside an adjusted ``rewards``.

The task is ``task_id``, within the split its folder names (``rollout`` and ``eval-rollout``
count from their own executors), across versions. The grade is ``original_reward`` where every
line carries one, else ``reward``. The version is ``tail_version``. No model, no finish reason
and no log-probs are written. Each rollout process counts its own tasks: where several write
into one log path, their task ids can meet, and the ids are checked against the prompts.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from whilecli.errors import InputError
from whilecli.io.formats import Converted
from whilecli.io.shape import kind_words

NAME = "areal"
#: The keys ``_dump_trajectory`` writes on every line.
KEYS = ("task_id", "sample_idx", "head_version", "tail_version", "reward", "prompt", "completion")
#: The folders a run's log path keeps the dumps in: training rollouts and evaluation rollouts.
SPLITS = ("rollout", "eval-rollout")


def is_dump(first: dict[str, Any]) -> bool:
    """A line as ``_dump_trajectory`` writes it: every key it always writes."""
    return all(k in first for k in KEYS)


def split_of(path: Path | None) -> str | None:
    """The split a dump's folders name (``<log>/eval-rollout/<version>/<task>.jsonl``)."""
    if path is None or len(path.parents) < 2:
        return None
    folder = path.parents[1].name
    return folder if folder in SPLITS else None


def convert(rows: Iterable[tuple[int, dict[str, Any]]], path: Path | None, name: str) -> Converted:
    lines = list(rows)
    split = split_of(path)
    kept = bool(lines) and all(row.get("original_reward") is not None for _, row in lines)
    grade = "original_reward" if kept else "reward"
    out: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    for lineno, row in lines:
        task = row.get("task_id")
        if not _whole(task) and not (isinstance(task, str) and task.strip()):
            raise InputError(
                f"holds {kind_words(task)}, not a number (AReaL writes the rollout task's counter)",
                file=name,
                line=lineno,
                field="task_id",
            )
        version = row.get("tail_version")
        if version is not None and not _whole(version):
            raise InputError(
                f"holds {kind_words(version)}, not a whole number (AReaL writes the newest weight"
                " version of the sample's tokens)",
                file=name,
                line=lineno,
                field="tail_version",
            )
        out.append(
            {
                "task_id": str(task) if split is None else f"{split}:{task}",
                "reward": row.get(grade),
                "prompt": row.get("prompt"),
                "completion": row.get("completion"),
                "step": version,
                "sample_idx": row.get("sample_idx"),
            }
        )
        positions.append({"line": lineno})
    origins = {
        "task_id": (
            "task_id (the rollout task: its samples are a group)"
            if split is None
            else "(the split folder, task_id): a rollout task's samples, as each split counts"
        ),
        "reward": (
            "original_reward (the reward kept beside an adjusted one)" if kept else "reward"
        ),
        "truncated": "not recorded",
        "model": "not recorded",
        "policy_version": "tail_version (the newest weight version of the sample's tokens)",
    }
    spelled = {"task_id": "task_id", "reward": grade}
    return Converted(NAME, out, origins, positions=positions, spelled=spelled)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
