"""Harbor (terminal-bench 2) job folders: ``jobs/<job>/<trial>/result.json``, one trial per file
(a pretty-printed object): ``task_name`` (the task; its trials are rollouts), ``trial_name``,
``verifier_result.rewards`` (``{"reward": 1.0}``; older versions ``verifier_result.reward``),
``agent_info.model_info.name`` (the model) and ``exception_info`` (null, or the exception that
ended the trial: ``exception_type``, ``exception_message``). The job's own ``result.json``
(``n_total_trials``, ``stats``) is a summary.

What an exception means follows ``Trial.run`` (``harbor/trial/trial.py``): it catches
``AgentTimeoutError`` (``agent.run`` outlived the task's ``[agent] timeout_sec``) and
``NonZeroAgentExitCodeError`` (the agent's own process failed) and verifies the trial all the
same, so their verdict is the rollout's grade, the first one cut off at its time budget. Any
other exception (``EnvironmentStartTimeoutError``, a Docker build error, ``AgentSetupTimeoutError``,
``VerifierTimeoutError``, a cancelled trial) skips the verifier: no verdict, and what Harbor
recorded is an error in place of a graded rollout, the harness's (left out of every rate, as
tau2-bench's ``infrastructure_error`` is). A verdict beside another exception (the environment's
clean-up failing after it) is a verdict. Harbor records no step or token cap: a trial without
``AgentTimeoutError`` is not known to have run to its end."""

from __future__ import annotations

from typing import Any

from whilecli.io.formats import Converted, as_dict

NAME = "harbor"
#: ``Trial.run``'s exception for the agent's time budget: caught, and the trial verified.
CUT_OFF = "AgentTimeoutError"


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


def _exception(doc: dict[str, Any]) -> str | None:
    """The exception that ended the trial (its ``exception_type``), or None where none did."""
    info = doc.get("exception_info")
    if not info:
        return None
    kind = as_dict(info).get("exception_type")
    return kind if isinstance(kind, str) and kind else "an exception"


def convert(doc: dict[str, Any], name: str) -> Converted:
    """One trial's ``result.json`` as one row."""
    reward = _reward(as_dict(doc.get("verifier_result")))
    model = as_dict(as_dict(doc.get("agent_info")).get("model_info")).get("name")
    ended = _exception(doc)
    row: dict[str, Any] = {
        "task_id": doc.get("task_name"),
        "trial": doc.get("trial_name"),  # two trials alike are two rollouts, not one file twice
        "reward": reward,
        "model": model if isinstance(model, str) else None,
        "truncated": True if ended == CUT_OFF else None,  # no other cap is recorded
        "ended_by": ended,
    }
    notes: list[str] = []
    if ended is not None and reward is None:
        row["error"] = f"{ended}: the trial ended with no verdict"
        # Harbor's own mean counts it 0; an error row is left out of every rate whatever its
        # reward, and a file of one row with none would name no reward column at all
        row["reward"] = 0.0
        notes.append(
            f"the trial ended in {ended} with no verdict (Harbor skipped its verifier): the"
            " harness's error, not the agent's failure"
        )
    elif ended == CUT_OFF:
        notes.append(f"the agent ran out of time ({CUT_OFF}), then was verified: cut off")
    origins = {
        "task_id": "task_name (each trial's result.json is a rollout)",
        "reward": "verifier_result.rewards.reward",
        "truncated": f"exception_info.exception_type == {CUT_OFF} (the agent's time budget);"
        " else not recorded",
        "model": "agent_info.model_info.name",
    }
    spelled = {"task_id": "task_name", "reward": "verifier_result.rewards.reward"}
    return Converted(NAME, [row], origins, notes, positions=[{"at": "the trial"}], spelled=spelled)
