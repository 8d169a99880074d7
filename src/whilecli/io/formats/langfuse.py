"""Langfuse traces and observations exports: what the traces (or observations) table's
export button writes as JSON or JSONL (https://langfuse.com/docs/api-and-data-platform/features/export-from-ui;
``langfuse/langfuse``, ``worker/src/features/database-read-stream/getDatabaseReadStream.ts``:
the ``traces`` and ``observations`` cases, ``getChunkWithFlattenedScores``).

A traces row: the trace's ``id``, ``timestamp``, ``name``, ``userId``, ``sessionId``,
``release``, ``version``, ``tags``, ``bookmarked``, ``public``, ``input``, ``output``,
``metadata``, ``latency``, ``usage``, costs, level counts, ``observationCount``,
``inputTokens`` / ``outputTokens``, ``comments``, and one column per score name in the export
(``prepareScoresForOutput``): the trace's values of that score as a list (numbers for numeric
and boolean scores, words for categorical ones), null where the trace has none. An
observations row: the observation's ``id``, ``traceId``, ``type`` (``GENERATION``, ``SPAN``,
...), ``startTime``, ``model`` / ``providedModelName``, ``modelParameters``, ``input``,
``output``, ``usageDetails``, ..., and its scores flattened alike.

A trace (an observation) is one rollout. The export names no dataset item, so the task is
the ``input`` (its digest, as every format keys a prompt without an id): the same input in
k traces is k rollouts. The grade is one score column, each row's values averaged (as
Langfuse's tables show them): the only one, else the only one that is 0 or 1 on every row;
with several, every score is kept under ``scores`` and ``--map reward=scores.NAME`` picks
one. An export with no score column is refused: the traces were not scored, or their scores
were exported apart (the scores table), which names no input. A trace row names no model and
no stop reason; an observation row's ``model`` is the model. The dataset run items export
(``datasetItemId``, ``traceId``, ``datasetName``) links traces to items and holds no grade:
refused, naming the traces export to pass. An observation of ``level`` ``ERROR`` (the call
failed) is a harness error; a trace's level is its worst observation's, not the trace's
failure, and is not read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from whilecli.errors import InputError
from whilecli.io.formats import (
    Converted,
    as_dict,
    entries,
    one_text,
    prompt_digest,
    score_origin,
    scores,
)
from whilecli.io.shape import kind_words

NAME = "langfuse"
#: The keys every traces export row carries.
TRACE_KEYS = frozenset({"id", "timestamp", "name", "input", "output", "bookmarked", "public"})
#: Keys only the traces export adds beside them (its metrics and comments).
TRACE_EXTRA = ("observationCount", "latency", "comments", "usage")
#: The keys every observations export row carries.
OBSERVATION_KEYS = frozenset({"id", "traceId", "type", "startTime", "input", "output"})
#: Keys only the observations export adds beside them.
OBSERVATION_EXTRA = ("providedModelName", "modelParameters", "usageDetails", "traceName")
#: Columns of the exports that are lists and not scores.
LIST_COLUMNS = frozenset({"tags", "comments", "traceTags"})


def is_trace(row: Any) -> bool:
    """A traces export row: the trace's keys and its metrics."""
    return isinstance(row, dict) and set(row) >= TRACE_KEYS and any(k in row for k in TRACE_EXTRA)


def is_observation(row: Any) -> bool:
    """An observations export row: the observation's keys and its model fields."""
    return (
        isinstance(row, dict)
        and set(row) >= OBSERVATION_KEYS
        and any(k in row for k in OBSERVATION_EXTRA)
    )


#: The keys of a dataset run items export row (``dataset_run_items``): links, no grade.
RUN_ITEM_KEYS = frozenset({"datasetItemId", "traceId", "datasetName"})
RUN_ITEMS = (
    "a Langfuse dataset run items export (which trace ran which dataset item), no grade or"
    " reply: export the traces table of the run (its score columns) and pass that"
)


def is_run_item(row: Any) -> bool:
    """A dataset run items export row."""
    return isinstance(row, dict) and set(row) >= RUN_ITEM_KEYS and "output" not in row


def is_row(row: Any) -> bool:
    """A row of either export."""
    return is_trace(row) or is_observation(row)


def is_listing(doc: Any) -> bool:
    """An export saved as one JSON array."""
    return isinstance(doc, list) and bool(doc) and is_row(doc[0])


def _score_columns(rows: list[dict[str, Any]]) -> list[str]:
    """The score columns: the keys whose value is a list of numbers or words on some row."""
    found: set[str] = set()
    for row in rows:
        for key, value in row.items():
            if key in LIST_COLUMNS or not isinstance(value, list) or not value:
                continue
            if all(isinstance(v, (int, float, str)) for v in value):
                found.add(key)
    return sorted(found)


def _mean(value: Any) -> float | None:
    """A score column's numbers, averaged (booleans as 1 / 0); None where it holds none."""
    found = (
        [n for v in value if (n := scores.number(v)) is not None] if isinstance(value, list) else []
    )
    return sum(found) / len(found) if found else None


def _words(value: list[Any]) -> Any:
    """A categorical score column's words: its one word, else the list."""
    return value[0] if len(value) == 1 else value


def _text(value: Any) -> Any:
    """An input or output as the report shows it: its one text, else as it is."""
    return one_text(value)


def _task(row: Mapping[str, Any], place: Mapping[str, Any], name: str) -> str:
    """The task: a digest of the row's ``input``."""
    value = row.get("input")
    if value is None or value == "":
        raise InputError(
            "input is empty: the export names no dataset item, so a trace's input keys its"
            " task; write a task_id on each row",
            file=name,
            field="input",
            **place,
        )
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return "input:" + prompt_digest(text)


def convert(items: Iterable[tuple[dict[str, Any], Any]], name: str) -> Converted:
    """Rows from export rows, each with its place in the file (``{"line": N}``,
    ``{"at": "entry i"}``)."""
    read: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    for place, row in items:
        if not isinstance(row, dict):
            raise InputError(
                f"an export row must be a JSON object, found {kind_words(row)}",
                file=name,
                **place,
            )
        read.append(row)
        positions.append(place)
    kind = "observations" if read and not is_trace(read[0]) else "traces"
    columns = _score_columns(read)
    if not columns:
        raise InputError(
            f"the Langfuse {kind} export holds no score column: its {kind} were not scored, or"
            " their scores were exported apart (the scores table names no input); score them"
            " and export again",
            file=name,
            field="scores",
            **(positions[0] if positions else {}),
        )
    tables: list[Mapping[str, Any]] = [{c: _mean(row.get(c)) for c in columns} for row in read]
    found = scores.names(tables)
    chosen = scores.pick(tables)
    labels_only = [c for c in columns if c not in found]
    out: list[dict[str, Any]] = []
    for row, table, place in zip(read, tables, positions, strict=True):
        model = row.get("model") or row.get("providedModelName")
        converted: dict[str, Any] = {
            "task_id": _task(row, place, name),
            "trace_id": row.get("traceId", row.get("id")),
            "reward": table.get(chosen) if chosen is not None else None,
            "prompt": _text(row.get("input")),
            "completion": _text(row.get("output")),
            "scores": {k: v for k, v in table.items() if v is not None} or None,
            "labels": {c: _words(row[c]) for c in labels_only if isinstance(row.get(c), list)}
            or None,
            "model": model if isinstance(model, str) and model else None,
            "judge_name": chosen if chosen is not None and scores.judged(chosen) else None,
        }
        tokens = row.get("outputTokens", as_dict(row.get("usageDetails")).get("output"))
        converted["output_tokens"] = tokens if isinstance(tokens, int) else None
        if kind == "observations" and row.get("level") == "ERROR":
            message = row.get("statusMessage")
            converted["error"] = message if isinstance(message, str) and message else "ERROR"
        out.append(converted)
    notes = []
    if chosen is not None and len(found) > 1:
        notes.append(
            f"{len(found)} score columns ({', '.join(found)}): {chosen} grades, the only one"
            " that is 0 or 1; --map reward=scores.NAME picks another"
        )
    if labels_only:
        notes.append(
            f"categorical scores ({', '.join(labels_only)}) hold words, kept under labels;"
            " --map reward=labels.NAME reads one"
        )
    named = any(r["model"] for r in out)
    origins = {
        "task_id": "the input (the export names no dataset item: the same input in k"
        f" {kind} is k rollouts)",
        "reward": score_origin(chosen, found, lambda c: f"{c} (its values averaged)", "scores")
        if found
        else f"none: the scores hold words alone ({', '.join(labels_only)});"
        " --map reward=labels.NAME reads one",
        "truncated": "not recorded",
        "model": "model (the observation's)" if named else "not recorded (pass --model)",
    }
    spelled = {"reward": chosen} if chosen is not None else {}
    return Converted(NAME, out, origins, notes, positions=positions, spelled=spelled)


def from_document(doc: list[Any], name: str) -> Converted:
    """An export saved as one JSON array."""
    return convert(zip(entries(len(doc)), doc, strict=True), name)
