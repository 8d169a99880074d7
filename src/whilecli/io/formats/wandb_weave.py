"""W&B Weave evaluation results: the answer of ``POST /v2/{entity}/{project}/eval_results/query``
(the v2 Evaluation REST API, https://docs.wandb.ai/weave/reference/service-api/eval-results/eval-results-query;
the guide "Export evaluation data", https://docs.wandb.ai/weave/guides/evaluation/export_eval),
saved as one JSON document.

The document: ``rows`` (one per dataset row: ``row_digest``, ``raw_data_row`` with
``include_raw_data_rows``, ``evaluations``: per evaluation, ``evaluation_call_id`` and
``trials``: ``predict_and_score_call_id``, ``predict_call_id``, ``model_output``, ``scores``
(each scorer's output by its name: a value, or an object of values), ``model_latency_seconds``,
``total_tokens``, ``scorer_call_ids``), ``total_rows``, ``summary`` (with ``include_summary``:
``evaluations[]`` with ``evaluation_call_id``, ``trial_count``, ``scorer_stats``,
``evaluation_ref``, ``model_ref``, ``display_name``, ...) and ``warnings``.

A dataset row (its digest) is a task and its trials in each evaluation are rollouts. Each
scorer's output is read as scores named ``SCORER`` (a value) or ``SCORER.KEY`` (an object's
values); the grade is the one score, else the only one that is 0 or 1 on every trial; with
several, ``--map reward=scores.NAME`` picks one. A trial no scorer scored is ungraded. The model
is the summary's ``model_ref`` of the trial's evaluation (its object name and digest); several
evaluations in one file are several models (``--by model``), refused where no summary names
them. The answer records no stop reason and no error of the model call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whilecli.errors import InputError
from whilecli.io.formats import Converted, as_dict, as_list, one_text, score_origin, scores
from whilecli.io.shape import kind_words

NAME = "weave"


def is_results(doc: Any) -> bool:
    """The query's answer: ``rows`` whose first names a ``row_digest`` and ``evaluations``."""
    if not isinstance(doc, dict):
        return False
    first = next(iter(as_list(doc.get("rows"))), None)
    return isinstance(first, dict) and "row_digest" in first and "evaluations" in first


def _flat(value: Any, prefix: str, into: dict[str, Any]) -> None:
    """A scorer's output as named leaves (``scorer.key.subkey``)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            _flat(inner, f"{prefix}.{key}", into)
    else:
        into[prefix] = value


def _model_name(ref: Any) -> str | None:
    """A ``weave:///entity/project/object/NAME:DIGEST`` reference's ``NAME:DIGEST``."""
    if not isinstance(ref, str) or not ref:
        return None
    return ref.rstrip("/").rsplit("/", 1)[-1]


def convert(doc: dict[str, Any], name: str) -> Converted:
    summary = {
        e.get("evaluation_call_id"): e
        for e in map(as_dict, as_list(as_dict(doc.get("summary")).get("evaluations")))
    }
    read: list[tuple[dict[str, Any], dict[str, Any], str, str, Any]] = []
    for i, row in enumerate(as_list(doc["rows"])):
        at = f"rows[{i}]"
        if not isinstance(row, dict):
            raise InputError(
                f"a row must be a JSON object, found {kind_words(row)}", file=name, at=at
            )
        digest = row.get("row_digest")
        if not isinstance(digest, str) or not digest:
            raise InputError(
                f"row_digest is {kind_words(digest)}, not the dataset row's digest",
                file=name,
                at=at,
                field="row_digest",
            )
        for j, evaluation in enumerate(as_list(row.get("evaluations"))):
            call = as_dict(evaluation).get("evaluation_call_id")
            for t, trial in enumerate(as_list(as_dict(evaluation).get("trials"))):
                where = f"{at}.evaluations[{j}].trials[{t}]"
                if not isinstance(trial, dict):
                    raise InputError(
                        f"a trial must be a JSON object, found {kind_words(trial)}",
                        file=name,
                        at=where,
                    )
                table: dict[str, Any] = {}
                for scorer, output in as_dict(trial.get("scores")).items():
                    _flat(output, str(scorer), table)
                read.append((row, trial, where, str(call), table))
    if not read:
        raise InputError(
            "no rows: the answer holds no trial (query with include_rows true)",
            file=name,
            field="rows",
        )
    calls = sorted({call for *_, call, _ in read})
    if len(calls) > 1 and not all(_model_name(summary.get(c, {}).get("model_ref")) for c in calls):
        raise InputError(
            f"trials of {len(calls)} evaluations ({', '.join(calls[:3])}) and no summary naming"
            " their models: query with include_summary true, or one evaluation at a time",
            file=name,
            field="summary",
        )
    tables: list[Mapping[str, Any]] = [table for *_, table in read]
    found = scores.names(tables)
    if not found:
        raise InputError(
            "no trial holds a scorer's score: the evaluation ran no scorer",
            file=name,
            field="rows[].evaluations[].trials[].scores",
        )
    chosen = scores.pick(tables)
    rows: list[dict[str, Any]] = []
    for row, trial, _, call, table in read:
        model = _model_name(summary.get(call, {}).get("model_ref"))
        rows.append(
            {
                "task_id": row["row_digest"],
                "reward": scores.number(table.get(chosen)) if chosen is not None else None,
                "prompt": one_text(row.get("raw_data_row")),
                "completion": one_text(trial.get("model_output")),
                "model": model,
                "evaluation_call_id": call,
                "scores": scores.numbers(table),
                "grader_model": chosen if chosen is not None and scores.judged(chosen) else None,
            }
        )
    notes = []
    if chosen is not None and len(found) > 1:
        notes.append(
            f"{len(found)} scores ({', '.join(found)}): {chosen} grades, the only one that is 0"
            " or 1; --map reward=scores.NAME picks another"
        )
    models = sorted({r["model"] for r in rows if r["model"]})
    if len(models) > 1:
        notes.append(f"{len(models)} models' evaluations in one file: --by model routes each apart")
    refs = {_model_name(e.get("evaluation_ref")) for e in summary.values()} - {None}
    origins = {
        "task_id": "rows[].row_digest (its trials are rollouts)",
        "reward": score_origin(chosen, found, lambda c: f"trials[].scores.{c}", "scores"),
        "truncated": "not recorded",
        "model": "summary.evaluations[].model_ref" if models else "not recorded (pass --model)",
    }
    spelled = {"task_id": "row_digest"}
    if chosen is not None:
        spelled["reward"] = f"scores.{chosen}"
    env = refs.pop() if len(refs) == 1 else None
    positions = [{"at": where} for _, _, where, _, _ in read]
    return Converted(NAME, rows, origins, notes, env=env, positions=positions, spelled=spelled)
