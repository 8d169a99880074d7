"""Opik experiment exports (``comet-ml/opik``, ``sdks/python/src/opik/cli/exports/``: ``opik
export WORKSPACE experiment NAME`` runs ``experiment.export_experiment_by_id``, which writes
``<path>/<workspace>/experiments/experiment_<name>_<id>.json`` with ``write_json_data``, the
object ``utils.create_experiment_data_structure`` builds; the experiment's traces go to
``<workspace>/projects/<project>/trace_<id>.json`` (``_write_trace_file``: ``{trace, spans,
downloaded_at, project_name}``) and its dataset to ``<workspace>/datasets/dataset_<name>.json``).

An experiment file: ``experiment`` (``id``, ``name``, ``dataset_name``, ``metadata``: the
``experiment_config`` given to ``evaluate``, ``feedback_scores``: the averages, ...),
``items`` (one ``ExperimentItemContent`` a run of a dataset item, serialised by
``utils.serialize_experiment_item`` from its attributes, a null one left out:
``api_objects/experiment/experiment_item.py``: ``id``, ``dataset_item_id``, ``trace_id``,
``dataset_item_data``, ``evaluation_task_output`` and ``feedback_scores``, a list of
``{category_name, name, reason, value}``) and ``downloaded_at``.

A dataset item is a task; each of its items (``evaluate(..., trial_count=k)`` runs it k
times) is a rollout. The grade is the one feedback score, else the only one that is 0 or 1 on
every item (``equals_metric``, ``contains_metric``); ``hallucination_metric`` and
``moderation_metric`` score a fault (1 is a hallucination, a harmful reply) and never grade;
with several, ``--map reward=scores.NAME`` picks one. The model is ``experiment.metadata``'s
``model`` (what ``experiment_config`` names), else the llm spans' ``model`` in the exported
trace files beside the experiment. Opik records no stop reason an export keeps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from whilecli.errors import InputError
from whilecli.io.formats import Converted, as_dict, one_text, score_origin, scores

NAME = "opik"
#: Opik's LLM-judge metrics that score a fault (``llm_judges/hallucination``,
#: ``llm_judges/moderation``, their default names): a 1 is a failure, never the pass.
FAULTS = frozenset({"hallucination_metric", "moderation_metric"})
#: Where ``experiment_config`` may name the model.
MODEL_KEYS = ("model", "model_name")


def is_experiment(doc: Any) -> bool:
    """``create_experiment_data_structure``'s object: ``experiment`` with its ``id`` and
    ``name``, beside ``items`` that name a ``dataset_item_id`` or a ``trace_id``."""
    if not isinstance(doc, dict):
        return False
    experiment, items = doc.get("experiment"), doc.get("items")
    return (
        isinstance(experiment, dict)
        and "id" in experiment
        and "name" in experiment
        and isinstance(items, list)
        and all(isinstance(i, dict) and ("dataset_item_id" in i or "trace_id" in i) for i in items)
    )


def sidecar(doc: Any) -> str | None:
    """What an export file beside an experiment is: a trace (``_write_trace_file``) or a
    dataset (``export_experiment_datasets``, ``export_single_dataset``); else None."""
    if not isinstance(doc, dict) or "downloaded_at" not in doc:
        return None
    if isinstance(doc.get("trace"), dict) and isinstance(doc.get("spans"), list):
        return "an Opik trace export (the experiment file's items name its trace and grade)"
    dataset = isinstance(doc.get("dataset"), dict) or "description" in doc
    if isinstance(doc.get("items"), list) and "experiment" not in doc and dataset:
        return "an Opik dataset export (the questions an experiment ran, ungraded)"
    return None


def _traces(path: Any) -> dict[str, Path]:
    """The exported trace files of the workspace an experiment file sits in, by trace id."""
    if not isinstance(path, Path) or path.parent.name != "experiments":
        return {}
    projects = path.parent.parent / "projects"
    found: dict[str, Path] = {}
    for trace in sorted(projects.glob("*/trace_*.json")):
        found[trace.stem.removeprefix("trace_")] = trace
    return found


def _span_model(path: Path) -> str | None:
    """The model of a trace file's llm spans (the first that names one)."""
    from whilecli.io.sources import read_json_file

    try:
        doc = read_json_file(path)
    except InputError:
        return None
    for span in as_dict(doc).get("spans") or []:
        span = as_dict(span)
        if span.get("type") == "llm" and isinstance(span.get("model"), str) and span["model"]:
            return str(span["model"])
    return None


def _table(item: dict[str, Any], at: str, name: str) -> dict[str, Any]:
    """An item's feedback scores by name, each checked as Opik writes it."""
    listed = item.get("feedback_scores")
    if listed is None:
        return {}
    if not isinstance(listed, list):
        raise InputError(
            f"must be a list of scores, found {type(listed).__name__}",
            file=name,
            at=at,
            field="feedback_scores",
        )
    table: dict[str, Any] = {}
    for j, score in enumerate(listed):
        field = f"feedback_scores[{j}]"
        if not isinstance(score, dict) or not isinstance(score.get("name"), str):
            raise InputError("a score must be an object with a name", file=name, at=at, field=field)
        value = score.get("value")
        if scores.number(value) is None:
            raise InputError(
                f"must be a number, found {value!r}", file=name, at=at, field=f"{field}.value"
            )
        table[score["name"]] = value
    return table


def convert(doc: dict[str, Any], path: Any, name: str) -> Converted:
    experiment = doc["experiment"]
    read: list[tuple[dict[str, Any], dict[str, Any], str]] = []
    for i, item in enumerate(doc["items"]):
        at = f"items[{i}]"
        task = item.get("dataset_item_id")
        if not isinstance(task, str) or not task:
            raise InputError("not a dataset item id", file=name, at=at, field="dataset_item_id")
        read.append((item, _table(item, at, name), at))
    if not read:
        raise InputError("no rows: the experiment's items list is empty", file=name, field="items")
    tables = [table for _, table, _ in read]
    found = scores.names(tables)
    if not found:
        raise InputError(
            "no item holds a feedback score: the experiment ran no scoring metric",
            file=name,
            field="feedback_scores",
        )
    chosen = scores.pick([{k: v for k, v in t.items() if k not in FAULTS} for t in tables])
    metadata = as_dict(experiment.get("metadata"))
    model = next((metadata[k] for k in MODEL_KEYS if isinstance(metadata.get(k), str)), None)
    model_origin = "experiment.metadata.model (the experiment_config)" if model else None
    traces = _traces(path) if model is None else {}
    rows: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    for item, table, at in read:
        row_model = model
        trace = traces.get(str(item.get("trace_id")))
        if row_model is None and trace is not None:
            row_model = _span_model(trace)
            if row_model is not None:
                model_origin = "the llm spans' model in projects/<project>/trace_<id>.json"
        judge = chosen if chosen is not None and scores.judged(chosen) else None
        rows.append(
            {
                "task_id": item["dataset_item_id"],
                "reward": scores.number(table.get(chosen)) if chosen is not None else None,
                "prompt": one_text(item.get("dataset_item_data")),
                "completion": one_text(item.get("evaluation_task_output")),
                "model": row_model,
                "grader_model": judge,
                "trace_id": item.get("trace_id"),
                "scores": scores.numbers(table),
            }
        )
        positions.append({"at": at})
    notes = []
    if chosen is not None and len(found) > 1:
        notes.append(
            f"{len(found)} feedback scores ({', '.join(found)}): {chosen} grades, the only one"
            " that is 0 or 1; --map reward=scores.NAME picks another"
        )
    faults = sorted(FAULTS & set(found))
    if faults:
        notes.append(
            f"{', '.join(faults)} scores a fault (1 is a failure): kept in scores, never the grade"
        )
    dataset = experiment.get("dataset_name")
    origins = {
        "task_id": "items[].dataset_item_id (its trials are rollouts)",
        "reward": score_origin(
            chosen, found, lambda c: f"feedback_scores[name={c}].value", "feedback scores"
        ),
        "truncated": "not recorded",
        "model": model_origin or "not recorded (pass --model)",
    }
    spelled = {"task_id": "dataset_item_id"}
    if chosen is not None:
        spelled["reward"] = f"feedback_scores.{chosen}"
    env = dataset if isinstance(dataset, str) and dataset else None
    return Converted(NAME, rows, origins, notes, env=env, positions=positions, spelled=spelled)
