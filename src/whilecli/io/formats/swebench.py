"""SWE-bench harness reports (``<model>.<run_id>.json``, written by
``swebench.harness.run_evaluation``): counts and id lists, no rows. Each submitted instance is
a task with one rollout: resolved (``resolved_ids``) passes, ``unresolved_ids`` and
``empty_patch_ids`` (the model wrote no patch) fail, ``error_ids`` are the harness's errors,
``incomplete_ids`` were never run (ungraded). The model is only in the file
name and the predictions file (``model_name_or_path``).

Per-instance reports (``swebench/harness/run_evaluation.py``: ``run_instance`` writes
``logs/run_evaluation/<run_id>/<model_name_or_path with / as __>/<instance_id>/report.json``,
``get_eval_report``'s ``{instance_id: {"patch_is_None", "patch_exists",
"patch_successfully_applied", "resolved", "tests_status"}}``): one instance each, resolved or
not; a folder of them is the run, one rollout per instance, the model its folder.

SWE-agent writes what the harness grades, never a grade (``SWE-agent/SWE-agent``,
``sweagent/run/run_batch.py`` and ``sweagent/agent/agents.py``: ``save_trajectory``):
``<output_dir>/<instance_id>/<instance_id>.traj`` (``trajectory``, ``history``, ``info`` with
``exit_status`` and ``submission``) and ``preds.json`` (``{instance_id: {"model_name_or_path",
"instance_id", "model_patch"}}``, the harness's input). mini-swe-agent
(``SWE-agent/mini-swe-agent``, ``docs/usage/output_files.md``; ``run/utils/save.py``:
``save_traj``) writes the same ``preds.json`` and
``<output>/<instance_id>/<instance_id>.traj.json`` (``info`` with ``exit_status``,
``submission`` and ``model_stats``, ``messages``, ``trajectory_format``
``mini-swe-agent-1`` / ``-1.1``). All are refused, saying to pass the harness's report
instead."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from whilecli.io.formats import Converted, as_dict, as_list

#: The keys ``get_eval_report`` writes for an instance beside ``resolved``.
INSTANCE_KEYS = ("patch_is_None", "patch_exists", "patch_successfully_applied")


def is_report(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("resolved_ids"), list)
        and ("submitted_ids" in doc or "completed_ids" in doc)
    )


def convert(doc: dict[str, Any], name: str) -> Converted:
    def ids(key: str) -> list[str]:
        return [str(i) for i in as_list(doc.get(key))]

    resolved, empty, errors = (
        set(ids("resolved_ids")),
        set(ids("empty_patch_ids")),
        ids("error_ids"),
    )
    incomplete = set(ids("incomplete_ids")) - resolved
    order = ids("submitted_ids") or [*ids("completed_ids"), *ids("empty_patch_ids"), *errors]
    order += [i for i in ids("incomplete_ids") if i not in order]
    rows: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    for instance in dict.fromkeys(order):
        row: dict[str, Any] = {"task_id": instance}
        # never evaluated: ungraded; else resolved or not (an empty patch is not)
        row["reward"] = None if instance in incomplete else float(instance in resolved)
        if instance in errors:
            row["error"] = "the harness failed on this instance"
        rows.append(row)
        positions.append({"at": f"instance {instance}"})
    notes = [f"{len(empty)} instances have an empty patch: failures"] if empty else []
    origins = {
        "task_id": "submitted_ids (one rollout per instance)",
        "reward": "1 for resolved_ids, 0 for unresolved_ids and empty_patch_ids",
        "truncated": "not recorded",
        "model": "not recorded (the report's file name names it: pass --model)",
    }
    return Converted("swe-bench", rows, origins, notes, positions=positions)


def is_instance_report(doc: Any) -> bool:
    """``{instance_id: {..., "resolved": bool}}`` as ``run_instance`` writes its report.json."""
    if not isinstance(doc, dict) or len(doc) != 1:
        return False
    report = next(iter(doc.values()))
    return (
        isinstance(report, dict)
        and isinstance(report.get("resolved"), bool)
        and any(key in report for key in INSTANCE_KEYS)
    )


def _instance_model(path: Any, instance: str) -> str | None:
    """``model_name_or_path`` from ``<run_id>/<model>/<instance_id>/report.json`` (its ``/``
    written as ``__``); None out of that layout, or where the prediction named none."""
    if not isinstance(path, Path) or path.parent.name != instance:
        return None
    model = path.parent.parent.name.replace("__", "/")
    return None if model in ("", "None") else model


def convert_instance(doc: dict[str, Any], path: Any, name: str) -> Converted:
    """One instance's report.json as its one row: resolved passes; no patch fails."""
    instance, report = next(iter(doc.items()))
    row: dict[str, Any] = {
        "task_id": str(instance),
        "reward": float(as_dict(report)["resolved"]),
        "model": _instance_model(path, str(instance)),
    }
    origins = {
        "task_id": "the report's instance id (one rollout per instance)",
        "reward": "resolved",
        "truncated": "not recorded",
        "model": "the log folder (run_evaluation/<run_id>/<model>/<instance_id>/)"
        if row["model"]
        else "not recorded",
    }
    return Converted("swe-bench", [row], origins, positions=[{"at": f"instance {instance}"}])


#: What SWE-agent's files hold, refused when named: no grade until the harness runs.
UNGRADED = (
    "run the SWE-bench harness on its preds.json (swebench.harness.run_evaluation"
    " --predictions_path preds.json) and pass the report it writes (<model>.<run_id>.json)"
)


def swe_agent_file(doc: Any) -> str | None:
    """What a SWE-agent trajectory or predictions file is, where ``doc`` is one; else None."""
    if not isinstance(doc, dict) or not doc:
        return None
    info = doc.get("info")
    if (
        isinstance(doc.get("trajectory"), list)
        and isinstance(info, dict)
        and ("exit_status" in info or "submission" in info)
    ):
        return (
            "a SWE-agent trajectory (.traj: the agent's steps, its patch and exit_status), no"
            f" grade: {UNGRADED}"
        )
    form = doc.get("trajectory_format")
    if (isinstance(form, str) and form.startswith("mini-swe-agent")) or (
        isinstance(doc.get("messages"), list)
        and isinstance(info, dict)
        and "exit_status" in info
        and "submission" in info
    ):
        return (
            "a mini-swe-agent trajectory (.traj.json: the agent's messages, its patch and"
            f" exit_status), no grade: {UNGRADED}"
        )
    if all(isinstance(v, dict) and "model_patch" in v and "instance_id" in v for v in doc.values()):
        return f"SWE-agent predictions (preds.json: a patch per instance), no grade: {UNGRADED}"
    return None
