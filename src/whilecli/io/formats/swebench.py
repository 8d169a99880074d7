"""SWE-bench harness reports (``<model>.<run_id>.json``, written by
``swebench.harness.run_evaluation``): counts and id lists, no rows. Each submitted instance is
a task with one rollout: resolved (``resolved_ids``) passes, ``unresolved_ids`` and
``empty_patch_ids`` (the model wrote no patch) fail, ``error_ids`` are the harness's errors,
``incomplete_ids`` were never run (ungraded). The model is only in the file
name and the predictions file (``model_name_or_path``)."""

from __future__ import annotations

from typing import Any

from whilecli.io.formats import Converted, as_list


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
