"""HELM runs: ``per_instance_stats.json`` (a JSON array, one entry per instance and train trial,
each with a ``stats`` list) beside ``run_spec.json`` (the run: ``adapter_spec.model``,
``adapter_spec.max_tokens``) and ``display_predictions.json`` (the predicted text).

The grade is the ``stats`` entry named ``exact_match`` (its ``mean``), skipping the entries
computed on a perturbed input (those carry ``name.perturbation``). ``finish_reason_length`` is a
cut-off reply only when the run allowed more than :data:`SHORT_ANSWER` tokens: a run with
``max_tokens = 1`` for a one-letter answer stops for length on every row by design.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from whilecli.errors import InputError
from whilecli.io.formats import Converted

METRIC = "exact_match"
SHORT_ANSWER = 8


def is_instance_stats(doc: Any) -> bool:
    return (
        isinstance(doc, list)
        and bool(doc)
        and all(isinstance(x, dict) and "instance_id" in x and "stats" in x for x in doc[:50])
    )


def _load(path: Path) -> Any:
    from whilecli.io.sources import read_json_file

    return read_json_file(path)


def convert(doc: list[dict[str, Any]], path: Path | None, name: str) -> Converted:
    spec = _load(path.parent / "run_spec.json") if path is not None else None
    adapter = spec.get("adapter_spec", {}) if isinstance(spec, dict) else {}
    model = adapter.get("model") if isinstance(adapter.get("model"), str) else None
    max_tokens = adapter.get("max_tokens")
    short = isinstance(max_tokens, int) and max_tokens <= SHORT_ANSWER
    predictions = _load(path.parent / "display_predictions.json") if path is not None else None
    texts: dict[tuple[str, int], str] = {}
    if isinstance(predictions, list):
        for p in predictions:
            if isinstance(p, dict) and isinstance(p.get("predicted_text"), str):
                key = (str(p.get("instance_id")), int(p.get("train_trial_index") or 0))
                texts[key] = p["predicted_text"]
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    for i, entry in enumerate(doc):
        stats = entry.get("stats")
        if not isinstance(stats, list):
            raise InputError("stats is not a list", file=name, row=i, field="stats")
        values: dict[str, float] = {}
        for stat in stats:
            label = stat.get("name") if isinstance(stat, dict) else None
            if not isinstance(label, dict) or label.get("perturbation") is not None:
                continue
            if isinstance(label.get("name"), str) and isinstance(stat.get("mean"), (int, float)):
                values.setdefault(label["name"], float(stat["mean"]))
        length = values.get("finish_reason_length")
        trial = int(entry.get("train_trial_index") or 0)
        row: dict[str, Any] = {
            "task_id": str(entry["instance_id"]),
            "trial": trial,
            "reward": values.get(METRIC),
            "truncated": None if length is None else (False if short else length > 0),
            "model": model,
            "completion": texts.get((str(entry["instance_id"]), trial)),
            **{k: v for k, v in values.items() if k not in ("reward", "task_id", "model")},
        }
        rows.append(row)
    if short:
        notes.append(
            f"HELM ran with max_tokens = {max_tokens}: its length stops are the answer's designed"
            " end, not cut-off replies (truncation read as false)"
        )
    env = spec.get("name") if isinstance(spec, dict) and isinstance(spec.get("name"), str) else None
    if env is not None:
        env = ",".join(p for p in env.split(",") if not p.startswith("model=")).rstrip(":")
    origins = {
        "task_id": "instance_id (train trials are rollouts)",
        "reward": f"stats[] {METRIC} (no perturbation), mean",
        "truncated": (
            f"not cut off: max_tokens = {max_tokens}"
            if short
            else "stats[] finish_reason_length > 0"
        ),
        "model": "run_spec.json: adapter_spec.model" if model else "not recorded",
    }
    return Converted("helm", rows, origins, notes, env=env)
