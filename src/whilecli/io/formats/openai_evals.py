"""OpenAI ``evals`` run logs (``oaieval``'s ``/tmp/evallogs/<run_id>_<model>_<eval>.jsonl``):
a ``spec`` line (``completion_fns``: the model; ``eval_name``), a ``final_report`` line, then
one event per line with ``run_id``, ``event_id``, ``sample_id`` (the task), ``type`` and
``data``. A ``match`` event grades a sample (``data.correct``, a boolean); model-graded evals
log a ``metrics`` event with ``data.score`` instead. ``sampling`` events hold the prompt and
the reply; every graded event of one ``sample_id`` is a rollout of that task."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from whilecli.io.formats import Converted, as_dict, as_list

#: Events that grade a sample, and where their grade is.
GRADES = {"match": "correct", "metrics": "score"}


def is_log(first: dict[str, Any]) -> bool:
    spec = first.get("spec")
    return isinstance(spec, dict) and ("completion_fns" in spec or "eval_name" in spec)


def convert(rows: Iterable[tuple[int, dict[str, Any]]], name: str) -> Converted:
    out: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    model: str | None = None
    env: str | None = None
    replies: dict[str, Any] = {}  # the last sampled reply of each sample
    for lineno, row in rows:
        spec = row.get("spec")
        if isinstance(spec, dict):
            fns = as_list(spec.get("completion_fns"))
            model = fns[0] if fns and isinstance(fns[0], str) else model
            env = spec.get("eval_name") if isinstance(spec.get("eval_name"), str) else env
            continue
        kind, data, sample = row.get("type"), as_dict(row.get("data")), row.get("sample_id")
        if kind == "sampling":
            replies[str(sample)] = data.get("sampled")
            continue
        if not isinstance(kind, str) or kind not in GRADES or GRADES[kind] not in data:
            continue  # the final report, or an event that grades nothing
        out.append(
            {
                "task_id": sample,
                "reward": data[GRADES[kind]],
                "completion": data.get("sampled", replies.get(str(sample))),
                "model": model,
            }
        )
        positions.append({"line": lineno})
    origins = {
        "task_id": "sample_id (each graded event is a rollout)",
        "reward": "data.correct of match events (data.score of metrics events)",
        "truncated": "not recorded",
        "model": "spec.completion_fns[0]",
    }
    spelled = {"task_id": "sample_id", "reward": "data.correct"}
    return Converted("openai-evals", out, origins, env=env, positions=positions, spelled=spelled)
