"""HELM runs: ``per_instance_stats.json`` (a JSON array) beside ``run_spec.json`` (the run:
``adapter_spec.model``, ``adapter_spec.max_tokens``) and ``display_predictions.json`` (the
predicted text).

HELM writes one ``PerInstanceStats`` entry per (``instance_id``, ``perturbation``,
``train_trial_index``): the unperturbed instance's entry has ``perturbation`` null, and a
robustness or fairness run adds one entry per perturbation of it (``{"name": "typos", ...}``),
graded on another input. A row is one unperturbed entry: task ``instance_id``, rollout
``train_trial_index``. A perturbed entry is not another rollout of its instance: it is left
out and counted in a note (a run of perturbed entries only is refused, naming the first).

The grade is the ``stats`` entry named ``exact_match`` (its ``mean``), skipping stats computed
on a perturbed input (those carry ``name.perturbation``). ``finish_reason_length`` is a
cut-off reply only when the run allowed more than :data:`SHORT_ANSWER` tokens: a run with
``max_tokens = 1`` for a one-letter answer stops for length on every row by design.
``instance_id`` must be a string or an integer: a null one is refused at its entry.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from whilecli.errors import InputError
from whilecli.io.formats import Converted, as_dict

METRIC = "exact_match"
SHORT_ANSWER = 8


def is_instance_stats(doc: Any) -> bool:
    return (
        isinstance(doc, list)
        and bool(doc)
        and all(isinstance(x, dict) and "instance_id" in x and "stats" in x for x in doc[:50])
    )


def is_display_predictions(doc: Any) -> bool:
    """HELM's ``display_predictions.json``: the predicted text per instance (with a ``stats``
    object for display), not the graded entries."""
    return (
        isinstance(doc, list)
        and bool(doc)
        and all(
            isinstance(x, dict) and "instance_id" in x and "predicted_text" in x for x in doc[:50]
        )
    )


def refuse_display_predictions(path: Path | None, name: str) -> InputError:
    """The refusal of a ``display_predictions.json`` read as rows: the graded rows are in
    ``per_instance_stats.json`` beside it."""
    graded = path.parent / "per_instance_stats.json" if path is not None else None
    where = (
        f" ({graded})"
        if graded is not None and graded.is_file()
        else " (HELM writes it in the same run folder)"
    )
    return InputError(
        "this is HELM's display_predictions.json, the predicted text of each instance, not"
        f" its grades: the graded rows are in per_instance_stats.json{where}; route that"
        " file or the run folder",
        file=name,
    )


def _load(path: Path) -> Any:
    from whilecli.io.sources import read_json_file

    return read_json_file(path)


def convert(doc: list[dict[str, Any]], path: Path | None, name: str) -> Converted:
    spec = _load(path.parent / "run_spec.json") if path is not None else None
    adapter = as_dict(spec.get("adapter_spec")) if isinstance(spec, dict) else {}
    model = adapter.get("model") if isinstance(adapter.get("model"), str) else None
    max_tokens = adapter.get("max_tokens")
    short = isinstance(max_tokens, int) and max_tokens <= SHORT_ANSWER
    # Without the run's max_tokens (no run_spec.json beside the file: a stream, a copy), a
    # length stop cannot be told from the designed end of a short answer: unknown.
    known = isinstance(max_tokens, int)
    predictions = _load(path.parent / "display_predictions.json") if path is not None else None
    texts: dict[tuple[str, int | None], str] = {}
    if isinstance(predictions, list):
        for p in predictions:
            if (
                isinstance(p, dict)
                and p.get("perturbation") is None
                and isinstance(p.get("predicted_text"), str)
                and _id(p.get("instance_id")) is not None
            ):
                key = (str(p["instance_id"]), _trial(p.get("train_trial_index")))
                texts.setdefault(key, p["predicted_text"])
    rows: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    notes: list[str] = []
    perturbed: dict[str, int] = {}
    first_perturbed: int | None = None
    for i, entry in enumerate(doc):
        at = f"entry {i}"
        if not isinstance(entry, dict):
            raise InputError(
                f"an entry must be a JSON object, found {type(entry).__name__}", file=name, at=at
            )
        task = _id(entry.get("instance_id"))
        if task is None:
            raise InputError(
                f"instance_id is {json.dumps(entry.get('instance_id'))[:40]}: HELM keys every"
                " instance by a string id",
                file=name,
                at=at,
                field="instance_id",
            )
        perturbation = entry.get("perturbation")
        if perturbation is not None:
            label = perturbation.get("name") if isinstance(perturbation, dict) else None
            kind = label if isinstance(label, str) else "unnamed"
            perturbed[kind] = perturbed.get(kind, 0) + 1
            first_perturbed = i if first_perturbed is None else first_perturbed
            continue
        stats = entry.get("stats")
        if not isinstance(stats, list):
            raise InputError("stats is not a list", file=name, at=at, field="stats")
        values: dict[str, float] = {}
        for stat in stats:
            label = stat.get("name") if isinstance(stat, dict) else None
            if not isinstance(label, dict) or label.get("perturbation") is not None:
                continue
            mean = stat.get("mean")
            if (
                isinstance(label.get("name"), str)
                and isinstance(mean, (int, float))
                and not isinstance(mean, bool)
            ):
                values.setdefault(label["name"], float(mean))
        length = values.get("finish_reason_length")
        trial = _trial(entry.get("train_trial_index"))
        if trial is None:
            raise InputError(
                "train_trial_index is not a whole number",
                file=name,
                at=at,
                field="train_trial_index",
            )
        row: dict[str, Any] = {
            "task_id": task,
            "trial": trial,
            "reward": values.get(METRIC),
            "truncated": None if length is None or not known else (False if short else length > 0),
            "model": model,
            "completion": texts.get((task, trial)),
            **{k: v for k, v in values.items() if k not in ("reward", "task_id", "model")},
        }
        rows.append(row)
        positions.append({"at": at})
    if perturbed:
        kinds = ", ".join(f"{k} ({n})" for k, n in sorted(perturbed.items()))
        if not rows:
            raise InputError(
                f"every entry is computed on a perturbed input ({kinds}): HELM writes the"
                " unperturbed instance's entry (perturbation null) beside them, and none is"
                " here",
                file=name,
                at=f"entry {first_perturbed}",
                field="perturbation",
            )
        notes.append(
            f"{sum(perturbed.values())} HELM entries graded on a perturbed input ({kinds}) are"
            " left out: they are another input, not rollouts of the instance"
        )
    if short:
        notes.append(
            f"HELM ran with max_tokens = {max_tokens}: its length stops are the answer's designed"
            " end, not cut-off replies (truncation read as false)"
        )
    if not known and any(r["truncated"] is None for r in rows[:1]):
        notes.append(
            "HELM: no max_tokens in a run_spec.json beside the file, so a length stop cannot be"
            " told from a short answer's designed end (truncation unknown); route the run folder"
        )
    env = spec.get("name") if isinstance(spec, dict) and isinstance(spec.get("name"), str) else None
    if env is not None:
        env = ",".join(p for p in env.split(",") if not p.startswith("model=")).rstrip(":")
    origins = {
        "task_id": "instance_id (train trials are rollouts; perturbed entries left out)",
        "reward": f"stats[] {METRIC} (no perturbation), mean",
        "truncated": (
            f"not cut off: max_tokens = {max_tokens}"
            if short
            else "stats[] finish_reason_length > 0"
            if known
            else "not recorded: no run_spec.json max_tokens"
        ),
        "model": "run_spec.json: adapter_spec.model" if model else "not recorded",
    }
    spelled = {"task_id": "instance_id"}
    return Converted("helm", rows, origins, notes, env=env, positions=positions, spelled=spelled)


def _id(value: Any) -> str | None:
    """An instance id as text: a string or an integer; None for anything else (null, NaN)."""
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _trial(value: Any) -> int | None:
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None
