"""rLLM episode logs (``rllm-org/rllm``, ``rllm/utils/episode_logger.py``: ``EpisodeLogger``,
``trainer.episode_log_dir``): one pretty-printed JSON object per episode,
``episodes/<mode>_step_<N>_epoch_<E>/episode_hash<task hash>_id<task id>_<rollout>.json``,
beside a ``batch_summary.json`` (counts and accuracy, no rows).

An episode (``log_episode``): ``training_step``, ``epoch``, ``episode_id``
(``"<task_id>:<rollout_idx>"``, ``rllm/agents/agent.py``: ``Episode.task_id`` is the part
before the colon), ``task``, ``task_hash``, ``is_correct`` (the workflow's verdict),
``termination_reason``, ``metrics`` and ``trajectories[]`` (each with its shaped ``reward`` and
``steps``). ``Episode.to_dict()`` writes the same with ``id`` for ``episode_id``.

A task is the episode id's task part (its rollouts are the task's rollouts); the grade is
``is_correct``; ``termination_reason`` (``rllm/workflows/workflow.py``: ``TerminationReason``)
``max_response_length_exceeded`` or ``max_turns_exceeded`` is a cut-off reply,
``max_prompt_length_exceeded`` and ``error`` never produced an evaluable reply (the harness's);
the version is ``training_step``. rLLM writes no model into an episode.
"""

from __future__ import annotations

from typing import Any

from whilecli.io.formats import Converted

NAME = "rllm"
#: Termination reasons that cut the reply off.
CUT_OFF = frozenset({"max_response_length_exceeded", "max_turns_exceeded"})
#: Termination reasons where no reply could be graded: the harness's.
NO_REPLY = frozenset({"max_prompt_length_exceeded", "error"})


def _id(doc: dict[str, Any]) -> Any:
    return doc.get("episode_id", doc.get("id"))


def is_episode(doc: Any) -> bool:
    """One episode as ``EpisodeLogger.log_episode`` or ``Episode.to_dict`` writes it."""
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("is_correct"), bool)
        and isinstance(doc.get("trajectories"), list)
        and "termination_reason" in doc
        and isinstance(_id(doc), str)
    )


def is_batch_summary(doc: Any) -> bool:
    """``batch_summary.json``: the step's counts, written beside its episodes."""
    return isinstance(doc, dict) and "summary_stats" in doc and "episode_files" in doc


def convert(doc: dict[str, Any], name: str) -> Converted:
    episode = str(_id(doc))
    task, _, rollout = episode.partition(":")
    reason = doc.get("termination_reason")
    row: dict[str, Any] = {
        "task_id": task,
        "rollout": rollout or None,
        "reward": float(doc["is_correct"]),
        "truncated": reason in CUT_OFF if isinstance(reason, str) else None,
        "step": doc.get("training_step"),
    }
    notes = []
    if reason in NO_REPLY:
        row["error"] = f"termination_reason {reason}: no reply was graded"
        notes.append(f"the episode ended in {reason}: a harness error, not the model's failure")
    origins = {
        "task_id": "episode_id before ':' (the task; its rollouts are episodes)",
        "reward": "is_correct",
        "truncated": "termination_reason in {max_response_length_exceeded, max_turns_exceeded}",
        "model": "not recorded",
        "policy_version": "training_step",
    }
    spelled = {"task_id": "episode_id" if "episode_id" in doc else "id", "reward": "is_correct"}
    return Converted(
        NAME, [row], origins, notes, positions=[{"at": "the episode"}], spelled=spelled
    )
