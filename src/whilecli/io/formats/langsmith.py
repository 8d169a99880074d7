"""LangSmith experiment exports, in the two shapes its SDK gives them
(``langchain-ai/langsmith-sdk``, ``python/langsmith``):

- **runs**: ``Client.list_runs(project_name=<experiment>)`` (``client.py``), each ``Run``
  (``schemas.py``: ``RunBase``, ``Run``) dumped with ``.dict()`` / ``.json()``, one a line or
  as a JSON array. A run is one span: ``id``, ``trace_id``, ``parent_run_id`` (null on the
  root), ``run_type`` (``chain``, ``llm``, ...), ``inputs``, ``outputs``, ``error``,
  ``status``, ``reference_example_id`` (the dataset example the root ran on),
  ``feedback_stats`` (feedback key -> ``{"n", "avg", "stdev", "errors", "values", ...}``:
  ``avg`` the mean score, null for categorical feedback), ``extra.metadata`` (``ls_model_name``
  on a chat model's run), ``start_time``, ``dotted_order``. An LLM run's ``outputs`` keep the
  finish reason (``choices[0].finish_reason``; LangChain's
  ``generations[0][0].generation_info.finish_reason``).
- **results table**: ``evaluate(...)`` returns ``ExperimentResults`` whose ``to_pandas()``
  (``evaluation/_runner.py``: ``_to_pandas``, ``_flatten_experiment_results``) has one row
  per run: ``inputs.<key>``, ``outputs.<key>``, ``error``, ``reference.<key>``,
  ``feedback.<key>`` (each evaluator result's ``score``, else its ``value``),
  ``execution_time``, ``example_id`` (the run's ``reference_example_id``), ``id`` (the run);
  written out as CSV, Parquet, or JSON (records, lines, or pandas' default column layout).

A root run is one row. The task is the example (``num_repetitions`` runs of an example are
its rollouts), else a hash of ``inputs``. The reward is one feedback key
(:mod:`whilecli.io.formats.scores`): several with no single 0/1 one leave the rows ungraded
with every key kept under ``feedback``, and the reader names ``--map reward=feedback.KEY``. A
run with ``error`` set is an error reply. The model is ``extra.metadata.ls_model_name``
(the root's, else its LLM runs'); the results table records none. Truncation is read only
where an LLM run's outputs record a finish reason.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

import polars as pl

from whilecli.errors import InputError
from whilecli.io.aliases import cut_reason
from whilecli.io.formats import Converted, as_dict, as_list, entries, prompt_digest, scores

NAME = "langsmith"
#: Keys a dumped ``Run`` carries beside ``run_type`` and its inputs or outputs.
RUN_KEYS = ("trace_id", "reference_example_id", "feedback_stats", "parent_run_id", "session_id")
#: The prefixes of ``to_pandas()``'s flattened columns.
FLAT = ("inputs.", "outputs.", "feedback.")


def is_run(row: Any) -> bool:
    """A dumped ``Run``: ``run_type``, its inputs or outputs, and a trace or example id."""
    return (
        isinstance(row, dict)
        and "run_type" in row
        and ("inputs" in row or "outputs" in row)
        and any(key in row for key in RUN_KEYS)
    )


def is_flat(row: Any) -> bool:
    """A row of ``to_pandas()``: ``example_id`` beside ``inputs.*``/``outputs.*``/``feedback.*``
    columns."""
    return (
        isinstance(row, dict)
        and "example_id" in row
        and any(isinstance(k, str) and k.startswith(FLAT) for k in row)
    )


def is_document(doc: Any) -> bool:
    """A JSON array of runs or of table rows, or pandas' default ``to_json`` layout (column
    -> {index -> value})."""
    if isinstance(doc, list):
        return bool(doc) and (is_run(doc[0]) or is_flat(doc[0]))
    return _columns(doc) is not None


def from_document(doc: Any, name: str) -> Converted:
    columns = _columns(doc)
    if columns is not None:
        return from_flat(
            ((p, r) for p, r in zip(entries(len(columns)), columns, strict=True)), name
        )
    items = doc if isinstance(doc, list) else []
    places = entries(len(items))
    for place, item in zip(places, items, strict=True):
        if not isinstance(item, dict):
            raise InputError(
                f"a row must be a JSON object, found {type(item).__name__}",
                file=name,
                at=place["at"],
            )
    pairs = list(zip(places, items, strict=True))
    return from_runs(pairs, name) if is_run(items[0]) else from_flat(pairs, name)


def from_lines(
    first: dict[str, Any], rows: Iterable[tuple[int, dict[str, Any]]], name: str
) -> Converted:
    if _columns(first) is not None:  # pandas' column layout, written on one line
        return from_document(first, name)
    pairs = (({"line": n}, row) for n, row in rows)
    return from_runs(pairs, name) if is_run(first) else from_flat(pairs, name)


def from_parquet(source: Any) -> Converted | None:
    """A results table written with ``to_parquet``, as rows; None for any other Parquet
    file (the streaming reader reads it, and names any problem)."""
    try:
        names = list(pl.read_parquet_schema(source.polars_source()))
    except (pl.exceptions.PolarsError, OSError, ValueError):
        return None
    if not is_flat(dict.fromkeys(names)):
        return None
    try:
        rows = pl.read_parquet(source.polars_source()).to_dicts()
    except (pl.exceptions.PolarsError, OSError, ValueError):
        return None
    return from_flat((({"row": i}, r) for i, r in enumerate(rows)), source.name)


def _columns(doc: Any) -> list[dict[str, Any]] | None:
    """pandas' ``to_json`` default (``orient="columns"``) as rows, in index order."""
    if not isinstance(doc, dict) or not is_flat(doc) or not doc:
        return None
    if not all(isinstance(v, dict) for v in doc.values()):
        return None
    index = list(next(iter(doc.values())))
    return [{col: cells.get(i) for col, cells in doc.items()} for i in index]


def from_runs(items: Iterable[tuple[dict[str, Any], dict[str, Any]]], name: str) -> Converted:
    traces: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for where, run in items:
        for key, kind, words in (
            ("feedback_stats", dict, "an object"),
            ("extra", dict, "an object"),
        ):
            value = run.get(key)
            if value is not None and not isinstance(value, kind):
                raise InputError(
                    f"{key} is {type(value).__name__}, not {words} (as LangSmith writes it)",
                    file=name,
                    field=key,
                    **where,
                )
        trace = run.get("trace_id") or run.get("id")
        key = str(trace) if trace is not None else f"#{len(traces)}"
        traces.setdefault(key, []).append((where, run))
    read = [_trace(runs) for runs in traces.values()]
    return _rows(read, name, flat=False)


def from_flat(items: Iterable[tuple[dict[str, Any], dict[str, Any]]], name: str) -> Converted:
    read = []
    for where, row in items:
        nested: dict[str, dict[str, Any]] = {"inputs.": {}, "outputs.": {}, "feedback.": {}}
        for key, value in row.items():
            prefix = next((p for p in FLAT if isinstance(key, str) and key.startswith(p)), None)
            if prefix is not None:
                nested[prefix][key[len(prefix) :]] = _missing(value)
        error = _missing(row.get("error"))
        example = _missing(row.get("example_id"))
        inputs = nested["inputs."]
        read.append(
            {
                "where": where,
                "task": str(example) if example not in (None, "") else None,
                "inputs": inputs or None,
                "outputs": nested["outputs."] or None,
                "error": None if error in (None, "") else str(error),
                "feedback": nested["feedback."],
                "model": None,
                "finish": None,
            }
        )
    return _rows(read, name, flat=True)


def _missing(value: Any) -> Any:
    """A cell pandas wrote for "no value" (NaN) as None."""
    return None if isinstance(value, float) and math.isnan(value) else value


def _root(runs: list[tuple[dict[str, Any], dict[str, Any]]]) -> int:
    for i, (_, run) in enumerate(runs):
        if run.get("parent_run_id") is None:
            return i
    for i, (_, run) in enumerate(runs):
        if run.get("id") is not None and run.get("id") == run.get("trace_id"):
            return i
    return 0


def _trace(runs: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    where, root = runs[_root(runs)]
    feedback: dict[str, Any] = {}
    for run in [root, *(r for _, r in runs if r is not root)]:
        for key, stats in as_dict(run.get("feedback_stats")).items():
            value = as_dict(stats).get("avg") if isinstance(stats, dict) else stats
            feedback.setdefault(str(key), value)
    calls = sorted(
        (_order(run, i), run) for i, (_, run) in enumerate(runs) if run.get("run_type") == "llm"
    )
    model = _model(root)
    for _, call in calls:
        model = model or _model(call)
    error = root.get("error")
    if error in (None, "") and root.get("status") == "error":
        error = "the run's status is error"
    return {
        "where": where,
        "task": _task(root),
        "inputs": root.get("inputs"),
        "outputs": root.get("outputs"),
        "error": None if error in (None, "") else str(error),
        "feedback": feedback,
        "model": model,
        "finish": _finish(calls[-1][1].get("outputs")) if calls else None,
    }


def _order(run: dict[str, Any], i: int) -> tuple[str, int]:
    """Where an LLM run falls in its trace: its ``dotted_order`` (start times, nested), else
    its start time, else its place in the file."""
    for key in ("dotted_order", "start_time"):
        if isinstance(run.get(key), str):
            return (str(run[key]), i)
    return ("", i)


def _model(run: dict[str, Any]) -> str | None:
    extra = as_dict(run.get("extra"))
    metadata = as_dict(extra.get("metadata"))
    params = as_dict(extra.get("invocation_params"))
    for value in (metadata.get("ls_model_name"), params.get("model"), params.get("model_name")):
        if isinstance(value, str) and value:
            return value
    return None


def _task(root: dict[str, Any]) -> str | None:
    example = root.get("reference_example_id")
    return example if isinstance(example, str) and example else None


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return "inputs:" + prompt_digest(text)


def _finish(outputs: Any) -> str | None:
    """The finish reason an LLM run's outputs record (OpenAI's response, LangChain's
    ``LLMResult``)."""
    outputs = as_dict(outputs)
    choices = as_list(outputs.get("choices"))
    generations = as_list(outputs.get("generations"))
    first = as_list(generations[0])[:1] if generations else []
    generation = as_dict(first[0]) if first else {}
    message = as_dict(generation.get("message"))
    metadata = as_dict(as_dict(message.get("kwargs")).get("response_metadata")) or as_dict(
        message.get("response_metadata")
    )
    for place in (
        as_dict(choices[0]) if choices else {},
        as_dict(generation.get("generation_info")),
        metadata,
        outputs,
    ):
        for key in ("finish_reason", "stop_reason"):
            if isinstance(place.get(key), str):
                return str(place[key])
    return None


def _text(value: Any) -> str | None:
    """Inputs or outputs as text: the one text value of a one-key object, else JSON; None for
    an object that holds nothing (an errored run's ``{"output": null}``: no reply)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict) and all(v in (None, "") for v in value.values()):
        return None
    if isinstance(value, dict) and len(value) == 1:
        (only,) = value.values()
        if isinstance(only, str):
            return only
    return json.dumps(value, sort_keys=True, default=str)


def _rows(read: list[dict[str, Any]], name: str, flat: bool) -> Converted:
    tables = [r["feedback"] for r in read]
    found = scores.names(tables)
    if not found:
        where = "feedback.* column" if flat else "feedback_stats key"
        raise InputError(
            f"no {where} holds a score: the experiment was not graded (run evaluate() with"
            " evaluators, or add feedback)",
            file=name,
            field="feedback" if flat else "feedback_stats",
        )
    chosen = scores.pick(tables)
    judge = chosen if chosen is not None and scores.judged(chosen) else None
    out: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    for trace in read:
        table = trace["feedback"]
        error = trace["error"]
        row: dict[str, Any] = {
            "task_id": trace["task"] or _digest(trace["inputs"]),
            "reward": None if chosen is None or error else scores.number(table.get(chosen)),
            "prompt": _text(trace["inputs"]),
            # a run that errored recorded an error instead of its outputs
            "completion": None if error else _text(trace["outputs"]),
            "model": trace["model"],
            "error": error,
            "grader_model": judge if chosen in table else None,
            "feedback": scores.numbers(table),
        }
        if trace["finish"] is not None:
            row["finish_reason"] = trace["finish"]
            row["truncated"] = cut_reason(trace["finish"])
        out.append(row)
        positions.append(trace["where"])
    spelled_reward = ("feedback." if flat else "feedback_stats.") + str(chosen)
    origins = {
        "task_id": ("example_id" if flat else "reference_example_id")
        + " (repetitions of an example are its rollouts), else a hash of inputs",
        "reward": _reward_origin(chosen, found, flat),
        "truncated": "an llm run's outputs: finish_reason == 'length'"
        if any("truncated" in r for r in out)
        else "not recorded",
        "model": "not recorded (the results table has no model: pass --model)"
        if flat
        else (
            "extra.metadata.ls_model_name (the root's, else its llm runs')"
            if any(r["model"] for r in out)
            else "not recorded (pass --model)"
        ),
    }
    notes = []
    if chosen is not None and len(found) > 1:
        notes.append(
            f"{len(found)} feedback keys ({', '.join(found)}): {chosen} grades, the only one"
            " that is 0 or 1; --map reward=feedback.KEY picks another"
        )
    spelled = {"reward": spelled_reward if flat else spelled_reward + ".avg"} if chosen else {}
    if all(r["task"] for r in read):  # every task is the example's own id
        spelled["task_id"] = "example_id" if flat else "reference_example_id"
    return Converted(NAME, out, origins, notes, positions=positions, spelled=spelled)


def _reward_origin(chosen: str | None, found: list[str], flat: bool) -> str:
    where = "feedback.{}" if flat else "feedback_stats.{}.avg"
    if chosen is None:
        return f"none: {len(found)} feedback keys ({', '.join(found)}) and no single 0/1 one"
    if len(found) == 1:
        return where.format(chosen)
    return where.format(chosen) + f" (the only 0/1 key of {len(found)})"
