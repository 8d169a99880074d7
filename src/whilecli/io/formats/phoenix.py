"""Arize Phoenix experiment runs: what ``GET /v1/experiments/{experiment_id}/json`` ("Download
experiment runs as a JSON file", ``getExperimentJSON``) answers, saved as
``<experiment name>.json`` (``Arize-ai/phoenix``,
``src/phoenix/server/api/routers/v1/experiments.py``: ``get_experiment_json``).

The file is one JSON array, a record per run of a dataset example: ``example_id`` (the
example's GlobalID), ``repetition_number`` (``run_experiment(..., repetitions=k)``: 1 to k),
``input`` and ``reference_output`` (the example's revision), ``output`` (the task's output),
``error`` (what the task raised, else null), ``latency_ms``, ``start_time``, ``end_time``,
``trace_id``, ``prompt_token_count``, ``completion_token_count`` and ``annotations``, one per
evaluator: ``name``, ``annotator_kind`` (``CODE``, ``LLM`` or ``HUMAN``), ``label``,
``score``, ``explanation``, ``trace_id``, ``error`` (what the evaluator raised),
``metadata``, ``start_time``, ``end_time``.

The CSV download (``GET /v1/experiments/{experiment_id}/csv``, ``get_experiment_csv``) holds
the same runs, ``input`` and ``reference_output`` as JSON text and each annotation as columns
``annotation_<name>_label``, ``_score``, ``_explanation``, ``_metadata``, ``_annotator_kind``,
``_trace_id``, ``_error``, ``_start_time`` and ``_end_time``: read alike.

A dataset example is a task and its repetitions are rollouts. The grade is the one
evaluator's ``score``, else the only one that is 0 or 1 on every run; with several,
``--map reward=scores.NAME`` picks one (every score is kept under ``scores``, every label
under ``labels``; evaluators that wrote labels alone grade nothing until ``--map
reward=labels.NAME`` reads one's words). A run whose evaluator gave no score (it raised, or wrote a label alone) is
ungraded; a run whose task raised is a harness error, not the model's failure. An ``LLM``
evaluator's grade is a judge's. The file names no model (``--model`` says it) and records no
stop reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whilecli.errors import InputError
from whilecli.io.formats import Converted, entries, one_text, score_origin, scores
from whilecli.io.shape import kind_words

NAME = "phoenix"
#: The keys every record of the download carries.
KEYS = frozenset({"example_id", "repetition_number", "annotations"})
#: The columns every record of the CSV download carries (``get_experiment_csv``).
CSV_KEYS = frozenset({"example_id", "repetition_number", "reference_output", "output"})
#: A CSV annotation's fields, each a column ``annotation_<name>_<field>``.
CSV_FIELDS = ("score", "label", "annotator_kind", "error")
#: Where a rebuilt CSV annotation keeps the column its score came from (errors name it).
COLUMN = "_column"


def is_runs(doc: Any) -> bool:
    """The download: a JSON array of records with ``example_id``, ``repetition_number`` and
    ``annotations``."""
    return (
        isinstance(doc, list)
        and bool(doc)
        and isinstance(doc[0], dict)
        and set(doc[0]) >= KEYS
        and isinstance(doc[0].get("annotations"), list)
    )


def is_table(row: Any) -> bool:
    """A record of the CSV download (``GET /v1/experiments/{id}/csv``): the run's columns, and
    its annotations as ``annotation_<name>_score``, ``_label``, ... columns."""
    return isinstance(row, dict) and set(row) >= CSV_KEYS


def from_table(items: list[tuple[dict[str, Any], dict[str, Any]]], name: str) -> Converted:
    """Rows from the CSV download's records, each with its line: the annotation columns
    rebuilt as the JSON download's ``annotations``."""
    records = []
    for _, row in items:
        found: dict[str, dict[str, Any]] = {}
        for key in row:
            for part in CSV_FIELDS:
                suffix = f"_{part}"
                if isinstance(key, str) and key.startswith("annotation_") and key.endswith(suffix):
                    evaluator = key[len("annotation_") : -len(suffix)]
                    if evaluator:
                        found.setdefault(evaluator, {"name": evaluator})[part] = row[key]
                    break
        for evaluator, annotation in found.items():
            annotation[COLUMN] = f"annotation_{evaluator}_score"
        plain = {k: v for k, v in row.items() if not str(k).startswith("annotation_")}
        error = plain.get("error")
        plain["error"] = error if isinstance(error, str) and error else None
        records.append({**plain, "annotations": list(found.values())})
    return convert(records, name, [place for place, _ in items])


def _annotations(
    run: dict[str, Any], place: dict[str, Any], name: str
) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """A run's evaluator scores and labels by name, and the names of the ``LLM`` ones."""
    listed = run.get("annotations")
    if not isinstance(listed, list):
        raise InputError(
            f"must be a list of annotations, found {kind_words(listed)}",
            file=name,
            **place,
            field="annotations",
        )
    table: dict[str, Any] = {}
    labels: dict[str, Any] = {}
    judges: list[str] = []
    for j, annotation in enumerate(listed):
        field = f"annotations[{j}]"
        if not isinstance(annotation, dict) or not isinstance(annotation.get("name"), str):
            raise InputError(
                "an annotation must be an object with a name", file=name, field=field, **place
            )
        score = annotation.get("score")
        if score is not None and scores.number(score) is None:
            raise InputError(
                f"must be a number or null, found {score!r}",
                file=name,
                **place,
                field=annotation.get(COLUMN) or f"{field}.score",
            )
        table[annotation["name"]] = score
        if isinstance(annotation.get("label"), str):
            labels[annotation["name"]] = annotation["label"]
        if annotation.get("annotator_kind") == "LLM":
            judges.append(annotation["name"])
    return table, labels, judges


def convert(doc: list[Any], name: str, places: list[dict[str, Any]] | None = None) -> Converted:
    """Rows from the download's records, each with its place in the file (``{"at": "entry
    i"}``, or the line of a CSV record)."""
    read: list[
        tuple[dict[str, Any], dict[str, Any], dict[str, Any], list[str], dict[str, Any]]
    ] = []
    places = places if places is not None else entries(len(doc))
    for run, place in zip(doc, places, strict=True):
        if not isinstance(run, dict):
            raise InputError(
                f"a run must be a JSON object, found {kind_words(run)}", file=name, **place
            )
        task = run.get("example_id")
        if not isinstance(task, str) or not task:
            raise InputError(
                f"example_id is {kind_words(task)}, not the dataset example's id",
                file=name,
                field="example_id",
                **place,
            )
        table, labels, judges = _annotations(run, place, name)
        read.append((run, table, labels, judges, place))
    tables: list[Mapping[str, Any]] = [table for _, table, _, _, _ in read]
    found = scores.names(tables)
    labelled = sorted({k for _, _, labels, _, _ in read for k in labels})
    if not found and not labelled:
        raise InputError(
            "no run holds an evaluator's score: the experiment ran no evaluator (run"
            " evaluate_experiment, then download the runs again)",
            file=name,
            field="annotations",
            **places[0],
        )
    chosen = scores.pick(tables)
    rows: list[dict[str, Any]] = []
    for run, table, labels, judges, _ in read:
        row: dict[str, Any] = {
            "task_id": run["example_id"],
            "repetition_number": run.get("repetition_number"),
            "reward": scores.number(table.get(chosen)) if chosen is not None else None,
            "prompt": one_text(run.get("input")),
            "completion": one_text(run.get("output")),
            "trace_id": run.get("trace_id"),
            "scores": scores.numbers(table),
            "labels": labels or None,
            "judge_name": chosen if chosen in judges else None,
        }
        error = run.get("error")
        if isinstance(error, str) and error:
            row["error"] = error
            row["completion"] = None  # the task raised: no output stands for the model
        rows.append(row)
    notes = []
    if chosen is not None and len(found) > 1:
        notes.append(
            f"{len(found)} evaluator scores ({', '.join(found)}): {chosen} grades, the only one"
            " that is 0 or 1; --map reward=scores.NAME picks another"
        )
    origins = {
        "task_id": "example_id (its repetitions are rollouts)",
        "reward": score_origin(
            chosen, found, lambda c: f"annotations[name={c}].score", "evaluator scores"
        )
        if found
        else f"none: the evaluators wrote labels alone ({', '.join(labelled)}), no score;"
        " --map reward=labels.NAME reads one's words",
        "truncated": "not recorded",
        "model": "not recorded (pass --model)",
    }
    spelled = {"task_id": "example_id"}
    if chosen is not None:
        spelled["reward"] = f"annotations.{chosen}"
    return Converted(NAME, rows, origins, notes, positions=[p for *_, p in read], spelled=spelled)
