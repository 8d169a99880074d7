"""Tinker cookbook rollout summaries: ``<log_path>/iteration_<N>/<base>_rollout_summaries.jsonl``
(``base`` is ``train`` or ``eval_<name>``), one trajectory per line
(``thinking-machines-lab/tinker-cookbook``, ``tinker_cookbook/rl/rollout_logging.py``:
``serialize_rollout_summaries``, written by ``TrainingRunStore.write_rollouts``).

A record: ``schema_version``, ``split``, ``iteration``, ``group_idx`` (the problem: its
trajectories are one group of rollouts), ``traj_idx``, ``tags``, ``sampling_client_step``,
``total_reward``, ``final_reward``, ``trajectory_metrics`` and ``steps[]`` (``reward``,
``episode_done``, ``stop_reason``: ``length`` when the sampler hit ``max_tokens``, and the
environment's ``metrics``). No prompt text (only its token count) and no model.

The task is ``(split, iteration, group_idx)``. The split is kept as the row's ``split``: a log
path holds training and evaluation rollouts, two evaluations, refused pooled
(:mod:`whilecli.io.splits`) and read apart by ``--by split`` or ``--by source``. The pass is the environment's ``correct``
metric (``tinker_cookbook/rl/problem_env.py``: ``metrics={"format": ..., "correct": ...}``),
from ``trajectory_metrics`` or the last step, where it records one; else ``total_reward``
(a shaped reward: ``format_coef * (format - 1) + correct``). A reply is cut off when the last
step's ``stop_reason`` is ``length``. The model is ``model_name`` in the run's ``config.json``
(the log path, beside the iteration folders), where it is found.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from whilecli.io.aliases import cut_reason
from whilecli.io.formats import Converted, as_dict, as_list

NAME = "tinker"
#: The environment metric that is the pass, where an environment records one.
GRADE = "correct"


#: The rows of a Tinker log folder; the others there (``metrics.jsonl``, ``checkpoints.jsonl``,
#: ``config.json``, ``*_logtree.json``) are the run's logs.
ROWS_SUFFIX = "_rollout_summaries.jsonl"


def rows_only(sources: list[Any]) -> list[Any]:
    """A folder's files, or only its rollout summaries where it holds any (a Tinker log path)."""
    rows = [s for s in sources if str(s.name).lower().endswith(ROWS_SUFFIX)]
    return rows or sources


def is_summary(first: dict[str, Any]) -> bool:
    return (
        "group_idx" in first
        and "traj_idx" in first
        and ("total_reward" in first or "final_reward" in first)
    )


def _config_model(path: Path | None) -> str | None:
    """``model_name`` of the run's ``config.json`` (the log path, a folder or two up)."""
    from whilecli.io.sources import read_json_file

    if path is None:
        return None
    for folder in list(path.parents)[:3]:
        model = as_dict(read_json_file(folder / "config.json", lenient=True)).get("model_name")
        if isinstance(model, str):
            return model
    return None


def convert(rows: Iterable[tuple[int, dict[str, Any]]], path: Path | None) -> Converted:
    out: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    model = _config_model(path)
    graded_by_metric = True
    cut_known = True
    for lineno, row in rows:
        steps = [as_dict(s) for s in as_list(row.get("steps"))]
        last = steps[-1] if steps else {}
        grade = as_dict(row.get("trajectory_metrics")).get(GRADE)
        if grade is None:
            grade = as_dict(last.get("metrics")).get(GRADE)
        if grade is None:
            graded_by_metric = False
        reason = last.get("stop_reason")
        cut_known = cut_known and isinstance(reason, str)
        out.append(
            {
                "task_id": f"{row.get('split')}:{row.get('iteration')}:{row.get('group_idx')}",
                "reward": grade,
                "total_reward": row.get("total_reward"),
                "truncated": cut_reason(reason) if isinstance(reason, str) else None,
                "model": model,
                "step": row.get("sampling_client_step"),
                # train or an evaluation's: a log path holds both, two evaluations
                # (whilecli.io.splits), read apart by it (--by split)
                "split": row.get("split"),
            }
        )
        positions.append({"line": lineno})
    if not graded_by_metric:
        for r in out:
            r["reward"] = r.pop("total_reward")
    if not cut_known:
        for r in out:
            r.pop("truncated", None)
    origins = {
        "task_id": "(split, iteration, group_idx): the trajectories of a group are rollouts",
        "reward": (
            "the environment's correct metric (trajectory_metrics, else the last step's)"
            if graded_by_metric
            else "total_reward"
        ),
        "truncated": "the last step's stop_reason == 'length'" if cut_known else "not recorded",
        "model": "config.json: model_name" if model else "not recorded (pass --model)",
        "version": "sampling_client_step",
    }
    spelled = {
        "task_id": "group_idx",
        "reward": "steps[-1].metrics.correct" if graded_by_metric else "total_reward",
    }
    return Converted(NAME, out, origins, positions=positions, spelled=spelled)
