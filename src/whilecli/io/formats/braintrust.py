"""Braintrust experiment exports: the experiment's events as JSON Lines or a JSON array
(``braintrust.init_experiment(..., open=True).fetch()`` dumped one event a line), or the REST
answer of ``POST /v1/experiment/{id}/fetch`` (``{"events": [...], "cursor": ...}``)
(``braintrustdata/braintrust-sdk``: ``py/src/braintrust/_generated_types.py``:
``ExperimentEvent``; the events an eval writes: ``py/src/braintrust/framework.py``:
``_run_evaluator_internal_impl``, ``run_evaluator_task`` and ``await_or_run_scorer``; LLM spans:
``py/src/braintrust/oai.py``, the chat-completion wrappers).

An event is one span: ``id``, ``span_id``, ``root_span_id`` (its trace), ``span_parents``,
``is_root``, ``span_attributes`` (``type``: ``eval``, ``task``, ``score``, ``llm``; ``purpose``:
``scorer``), ``input``, ``output``, ``expected``, ``error``, ``scores`` (name -> number in
[0, 1], or null), ``metadata`` (``model``: the model of the example), ``metrics`` (times and
token counts), ``origin`` (``{"object_type": "dataset", "object_id", "id"}``: the dataset
record the case came from; older SDKs log it as ``dataset_record_id``), ``experiment_id``.
``Eval()`` writes one trace per (case, trial): the root ``eval`` span holds the case's
``input``, ``expected``, ``output``, ``metadata`` and, when the task raised, ``error``; each
scorer runs in a child ``score`` span whose ``scores`` hold its grade, and the LLM calls an
LLM scorer makes (autoevals' ``Factuality``, ``ClosedQA``, ...) are ``llm`` spans beneath it; the
task's own calls are ``llm`` spans beneath the ``task`` span, their ``output`` the
completion's ``choices`` (``finish_reason``) and their ``metadata`` its parameters (``model``).
``Experiment.log`` writes one root span with everything, scores included.

A trace is one row. The task is the dataset record (``trial_count`` repetitions of a case are
its rollouts), else a hash of ``input`` (Braintrust matches a case across experiments by its
input). The reward is one score (:mod:`whilecli.io.formats.scores`; the root's, else its
scorer spans'): several with no single 0/1 one leave the rows ungraded with every score kept,
and the reader names ``--map reward=scores.NAME``. A root with ``error`` set is an error reply.
Truncation is read only where the task's own LLM span records a finish reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from whilecli.errors import InputError
from whilecli.io.aliases import cut_reason
from whilecli.io.formats import (
    Converted,
    as_dict,
    as_list,
    entries,
    prompt_digest,
    score_origin,
    scores,
)

NAME = "braintrust"
#: Keys only a Braintrust event carries beside its span ids.
EVENT_KEYS = ("scores", "experiment_id", "span_attributes")


def is_event(row: Any) -> bool:
    """One experiment event: span ids with scores, an experiment id or span attributes."""
    return (
        isinstance(row, dict)
        and "span_id" in row
        and "root_span_id" in row
        and any(key in row for key in EVENT_KEYS)
    )


def is_export(doc: Any) -> bool:
    """A JSON array of events, the REST fetch's ``{"events": [...]}``, or one event."""
    if isinstance(doc, list):
        return bool(doc) and is_event(doc[0])
    events = doc.get("events") if isinstance(doc, dict) else None
    if isinstance(events, list):
        return bool(events) and is_event(events[0])
    return is_event(doc)


def from_document(doc: Any, name: str) -> Converted:
    if isinstance(doc, dict) and isinstance(doc.get("events"), list):
        items, key = doc["events"], "events"
    else:
        items, key = (doc if isinstance(doc, list) else [doc]), None
    places = entries(len(items), key)
    for place, item in zip(places, items, strict=True):
        if not isinstance(item, dict):
            raise InputError(
                f"an event must be a JSON object, found {type(item).__name__}",
                file=name,
                at=place["at"],
            )
    return convert(zip(places, items, strict=True), name)


def from_lines(rows: Iterable[tuple[int, dict[str, Any]]], name: str) -> Converted:
    return convert((({"line": n}, row) for n, row in rows), name)


def convert(events: Iterable[tuple[dict[str, Any], dict[str, Any]]], name: str) -> Converted:
    traces: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for where, event in events:
        if event.get("_object_delete"):
            continue  # a deleted event
        _check(event, name, where)
        root = event.get("root_span_id") or event.get("span_id") or event.get("id")
        key = str(root) if root is not None else f"#{len(traces)}"
        traces.setdefault(key, []).append((where, event))
    read = [_trace(spans) for spans in traces.values()]
    tables = [t["scores"] for t in read]
    found = scores.names(tables)
    if not found:
        raise InputError(
            "no event holds a score (scores is empty on every trace): an eval keeps each"
            " scorer's grade in its own score span, so export every span of the experiment",
            file=name,
            field="scores",
        )
    chosen = scores.pick(tables)
    out: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    models: set[str] = set()
    for trace in read:
        table = trace["scores"]
        error = trace["error"]
        judge = None
        if chosen is not None and chosen in table:
            judge = trace["judges"].get(chosen) or (chosen if scores.judged(chosen) else None)
        row: dict[str, Any] = {
            "task_id": trace["task"][0],
            "reward": None if chosen is None or error else scores.number(table.get(chosen)),
            "prompt": _text(trace["input"]),
            # a root that raised recorded an error instead of its output
            "completion": None if error else _text(trace["output"]),
            "model": trace["model"][0] if trace["model"] else None,
            "error": error,
            "grader_model": judge,
            "scores": scores.numbers(table),
        }
        if trace["finish"] is not None:
            row["finish_reason"] = trace["finish"]
            row["truncated"] = cut_reason(trace["finish"])
        if trace["model"]:
            models.add(trace["model"][1])
        out.append(row)
        positions.append(trace["where"])
    origins = {
        "task_id": "dataset_record_id, else origin.id (the dataset record: trials are its"
        " rollouts), else a hash of input",
        "reward": score_origin(chosen, found, lambda c: f"scores.{c}"),
        "truncated": "the task's llm span: output finish_reason == 'length'"
        if any("truncated" in r for r in out)
        else "not recorded",
        "model": " / ".join(sorted(models)) if models else "not recorded (pass --model)",
    }
    notes = []
    if chosen is not None and len(found) > 1:
        notes.append(
            f"{len(found)} scores ({', '.join(found)}): {chosen} grades, the only one that is"
            " 0 or 1; --map reward=scores.NAME picks another"
        )
    spelled = {"reward": f"scores.{chosen}"} if chosen is not None else {}
    keyed = {t["task"][1] for t in read}
    if len(keyed) == 1 and None not in keyed:  # every task read from one field
        spelled["task_id"] = str(keyed.pop())
    return Converted(NAME, out, origins, notes, positions=positions, spelled=spelled)


def _check(event: dict[str, Any], name: str, where: dict[str, Any]) -> None:
    """An event whose ``scores`` or ``span_parents`` is not what Braintrust writes, refused
    at its place."""
    for key, kind, words in (("scores", dict, "an object"), ("span_parents", list, "a list")):
        value = event.get(key)
        if value is not None and not isinstance(value, kind):
            raise InputError(
                f"{key} is {type(value).__name__}, not {words} (as Braintrust writes it)",
                file=name,
                field=key,
                **where,
            )


def _kind(span: dict[str, Any]) -> str | None:
    kind = as_dict(span.get("span_attributes")).get("type")
    return kind if isinstance(kind, str) else None


def _scorer(span: dict[str, Any]) -> bool:
    return _kind(span) == "score" or as_dict(span.get("span_attributes")).get("purpose") == "scorer"


def _parent(span: dict[str, Any]) -> str | None:
    parents = as_list(span.get("span_parents"))
    return str(parents[0]) if parents and parents[0] is not None else None


def _root(spans: list[tuple[dict[str, Any], dict[str, Any]]]) -> int:
    """Which span roots the trace: ``is_root``, else no parents, else the trace's own id."""
    tests = (
        lambda s: s.get("is_root") is True,
        lambda s: not s.get("span_parents"),
        lambda s: s.get("span_id") is not None and s.get("span_id") == s.get("root_span_id"),
    )
    for test in tests:
        for i, (_, span) in enumerate(spans):
            if test(span):
                return i
    return 0


def _trace(spans: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """One trace read: its root's place, task, input, output, error, scores (the root's, then
    its other spans'), the judge model of each score an LLM span graded, the model, and the
    finish reason of the task's last LLM call."""
    where, root = spans[_root(spans)]
    by_id = {str(s["span_id"]): s for _, s in spans if s.get("span_id") is not None}

    def scorer_of(span: dict[str, Any]) -> dict[str, Any] | None:
        seen: set[int] = set()
        node: dict[str, Any] | None = span
        while node is not None and id(node) not in seen:
            if _scorer(node) and node is not root:
                return node
            seen.add(id(node))
            parent = _parent(node)
            node = by_id.get(parent) if parent is not None else None
        return None

    table: dict[str, Any] = dict(as_dict(root.get("scores")))
    judges: dict[str, str] = {}
    calls: list[tuple[float, int, dict[str, Any]]] = []
    for i, (_, span) in enumerate(spans):
        if span is root:
            continue
        for key, value in as_dict(span.get("scores")).items():
            table.setdefault(key, value)
        if _kind(span) != "llm":
            continue
        owner = scorer_of(span)
        if owner is None:
            start = as_dict(span.get("metrics")).get("start")
            at = float(start) if isinstance(start, (int, float)) else float("inf")
            calls.append((at, i, span))
            continue
        judge = as_dict(span.get("metadata")).get("model")
        for key in as_dict(owner.get("scores")):
            judges.setdefault(key, judge if isinstance(judge, str) else "an LLM call")
    calls.sort(key=lambda c: (c[0], c[1]))
    model = as_dict(root.get("metadata")).get("model")
    found: tuple[str, str] | None = (model, "metadata.model") if isinstance(model, str) else None
    for _, _, call in calls:
        called = as_dict(call.get("metadata")).get("model")
        if found is None and isinstance(called, str):
            found = (called, "the task's llm span: metadata.model")
    error = root.get("error")
    return {
        "where": where,
        "task": _task(root),
        "input": root.get("input"),
        "output": root.get("output"),
        "error": None if error in (None, "") else _text(error),
        "scores": table,
        "judges": judges,
        "model": found,
        "finish": _finish(calls[-1][2].get("output")) if calls else None,
    }


def _task(root: dict[str, Any]) -> tuple[str, str | None]:
    """The task, and the field it was read from (None for a hash of ``input``)."""
    record = root.get("dataset_record_id")
    if isinstance(record, (str, int)) and not isinstance(record, bool) and record != "":
        return str(record), "dataset_record_id"
    origin = as_dict(root.get("origin"))
    if origin.get("object_type") == "dataset" and isinstance(origin.get("id"), (str, int)):
        return str(origin["id"]), "origin.id"
    text = json.dumps(root.get("input"), sort_keys=True, default=str)
    return "input:" + prompt_digest(text), None


def _finish(output: Any) -> str | None:
    """The finish reason an LLM span's output records: OpenAI ``choices[0].finish_reason``
    (the wrappers log the choices), or a message's ``finish_reason`` / ``stop_reason``."""
    choice = output[0] if isinstance(output, list) and output else output
    choice = as_dict(choice)
    if not choice.get("finish_reason") and isinstance(choice.get("choices"), list):
        choice = as_dict(choice["choices"][0] if choice["choices"] else None)
    for key in ("finish_reason", "stop_reason"):
        if isinstance(choice.get(key), str):
            return str(choice[key])
    return None


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, default=str)
