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
versions that generated its tokens: a partial rollout, interrupted by a weight update and
resumed, holds tokens of several; the folder is the batch's newest), ``version_rle`` (the
generated tokens' versions, run-length encoded), ``reward``, ``prompt`` and ``completion`` (decoded with special tokens),
``segments`` (the turns of a multi-turn trajectory) and ``original_reward`` where the
trajectory kept its ``original_rewards`` beside an adjusted ``rewards``.

The task is ``task_id``, within the split its folder names (``rollout`` and ``eval-rollout``
count from their own executors), across versions; the split is kept as the row's ``split``
(``train``, ``eval``): a log path's two folders are two evaluations, refused pooled. The grade is ``original_reward`` where every
line carries one, else ``reward``. The version is ``head_version``, the oldest policy that wrote
part of the sample: a sample whose first tokens an older policy wrote is that policy's (check 6
asks whether an older copy wrote rows, and one did). Dumps before ``version_rle`` took the
minimum over the prompt's tokens too, which the workflows mark ``-1`` (``areal/workflow/rlvr.py``:
``versions = [-1] * resp.input_len + resp.output_versions``): a ``head_version`` below 0 names
no policy, and there the version is ``tail_version``. No model, no finish reason
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
#: Each folder's rows as a split's word: training rollouts and evaluation rollouts are two
#: evaluations, refused pooled and read apart by ``--by split`` (:mod:`whilecli.io.splits`).
SPLIT_KINDS = {"rollout": "train", "eval-rollout": "eval"}


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
        for key, which in (("tail_version", "newest"), ("head_version", "oldest")):
            value = row.get(key)
            if value is not None and not _whole(value):
                raise InputError(
                    f"holds {kind_words(value)}, not a whole number (AReaL writes the {which}"
                    " weight version of the sample's tokens)",
                    file=name,
                    line=lineno,
                    field=key,
                )
        version = oldest_version(row.get("head_version"), row.get("tail_version"))
        out.append(
            {
                "task_id": str(task) if split is None else f"{split}:{task}",
                "reward": row.get(grade),
                "prompt": row.get("prompt"),
                "completion": row.get("completion"),
                "step": version,
                "sample_idx": row.get("sample_idx"),
                # training or evaluation rollouts: two evaluations (whilecli.io.splits)
                **({} if split is None else {"split": SPLIT_KINDS[split]}),
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
        "policy_version": (
            "head_version (the oldest weight version of the sample's generated tokens; tail_version"
            " where head_version is the prompt's -1)"
        ),
    }
    spelled = {"task_id": "task_id", "reward": grade}
    return Converted(NAME, out, origins, positions=positions, spelled=spelled)


def oldest_version(head: Any, tail: Any) -> int | None:
    """The oldest weight version that generated a sample's tokens: ``head_version`` where it
    names one (a whole number from 0, at most ``tail_version``), else ``tail_version`` (a dump
    that took the minimum over the prompt's ``-1`` too)."""
    if _whole(head) and head >= 0 and (not _whole(tail) or head <= tail):
        return int(head)
    return int(tail) if _whole(tail) else None


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
