"""Harbor (terminal-bench 2) job folders: ``jobs/<job>/<trial>/result.json``, one trial per file
(a pretty-printed object): ``task_name`` (the task; its trials are rollouts), ``trial_name``,
``verifier_result.rewards`` (``{"reward": 1.0}``; older versions ``verifier_result.reward``),
``agent_info.model_info.name`` (the model) and ``exception_info`` (null, or the error that
ended the trial: with no verdict, the trial failed, as Harbor's own mean counts it). The job's own ``result.json`` (``n_total_trials``, ``stats``) is a summary."""

from __future__ import annotations

from typing import Any

from whilecli.io.formats import Converted, as_dict


def is_trial(doc: Any) -> bool:
    return isinstance(doc, dict) and "trial_name" in doc and "verifier_result" in doc


def is_job(doc: Any) -> bool:
    return isinstance(doc, dict) and "n_total_trials" in doc and "stats" in doc


def _reward(verifier: dict[str, Any]) -> Any:
    rewards = verifier.get("rewards")
    if isinstance(rewards, dict):
        if "reward" in rewards:
            return rewards["reward"]
        if len(rewards) == 1:
            return next(iter(rewards.values()))
    return verifier.get("reward")


def convert(doc: dict[str, Any], name: str) -> Converted:
    verifier = as_dict(doc.get("verifier_result"))
    reward = _reward(verifier)
    model = as_dict(as_dict(doc.get("agent_info")).get("model_info")).get("name")
    error = as_dict(doc.get("exception_info"))
    failed = reward is None and bool(error)
    if failed:
        reward = 0.0  # no verdict after an exception: a failure, as Harbor's own mean counts it
    row = {
        "task_id": doc.get("task_name"),
        "trial": doc.get("trial_name"),  # two trials alike are two rollouts, not one file twice
        "reward": reward,
        "model": model if isinstance(model, str) else None,
        # the agent's exception, scored as its failure: not a harness error (aliases.ERROR_ALIASES)
        "agent_exception": (error.get("exception_type") or "an exception") if failed else None,
    }
    origins = {
        "task_id": "task_name (each trial's result.json is a rollout)",
        "reward": "verifier_result.rewards.reward",
        "truncated": "not recorded",
        "model": "agent_info.model_info.name",
    }
    spelled = {"task_id": "task_name", "reward": "verifier_result.rewards.reward"}
    notes = (
        [f"the trial ended in {row['agent_exception']} with no verdict: a failure"]
        if failed
        else []
    )
    return Converted(
        "harbor", [row], origins, notes, positions=[{"at": "the trial"}], spelled=spelled
    )
