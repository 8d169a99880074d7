"""Anthropic Message Batches results: what ``GET /v1/messages/batches/{id}/results`` streams
(``results_url``; the API reference's "Retrieve Message Batch results",
https://docs.anthropic.com/en/api/retrieving-message-batch-results), one
``MessageBatchIndividualResponse`` a line (``anthropics/anthropic-sdk-python``,
``src/anthropic/types/messages/message_batch_individual_response.py``), or those lines saved
as one JSON array.

A line: ``custom_id`` (the caller's id of the request, unique within a batch) and ``result``,
one of (``message_batch_result.py``, discriminated by ``type``):

- ``succeeded``: ``message``, the Messages API ``Message`` (``id``, ``model``, ``content[]``
  of blocks, the text ones ``{type: text, text}``, ``stop_reason``, ``usage`` with
  ``output_tokens``);
- ``errored``: ``error``, an ``ErrorResponse`` (``{type: error, error: {type, message},
  request_id}``; ``shared/error_response.py``);
- ``canceled``, ``expired``: the request was never run (the batch was canceled, or reached
  its 24 hours first).

The API writes no grade: a file of these lines alone is refused, saying to write each reply's
grade beside its ``custom_id``. A grade written so (a key of the reward aliases, ``reward``,
``score``, ``correct``, ... on the line) is read, and any other key written beside is kept,
so ``--map reward=KEY`` reads it. The task is ``custom_id``, else a ``task_id`` written beside
it (one batch holding several requests of a task); the same ``custom_id`` in the results of k
batches is k rollouts. A reply is cut off where ``stop_reason`` is ``max_tokens`` (or
``model_context_window_exceeded``); an errored, canceled or expired request is a harness
error, not the model's failure. The model is ``message.model``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from whilecli.errors import InputError
from whilecli.io.aliases import cut_reason
from whilecli.io.formats import Converted, as_dict, as_list
from whilecli.io.formats.batch_grades import custom_id_row, graded_beside, read_lines
from whilecli.io.shape import kind_words

NAME = "anthropic-batch"
#: ``result.type``: the request's outcome.
RESULT_TYPES = ("succeeded", "errored", "canceled", "expired")
#: Why a request that was never run or failed holds no reply: a harness error each.
NOT_RUN = {
    "canceled": "canceled: the batch was canceled before this request ran",
    "expired": "expired: the batch ended (24 hours) before this request ran",
}
#: The keys of a line as the API writes it; any other was written beside them.
API_KEYS = frozenset({"custom_id", "result"})
#: The keys a converted row sets; a key of the same name written beside is not kept.
ROW_KEYS = frozenset(
    {"task_id", "reward", "completion", "truncated", "model", "error", "output_tokens"}
    | {"stop_reason", "custom_id"}
)


def is_result(row: Any) -> bool:
    """One results line: a ``custom_id`` beside a ``result`` of a known ``type``."""
    if not isinstance(row, dict) or not isinstance(row.get("custom_id"), str):
        return False
    return as_dict(row.get("result")).get("type") in RESULT_TYPES


def is_listing(doc: Any) -> bool:
    """Results lines saved as one JSON array."""
    return isinstance(doc, list) and bool(doc) and is_result(doc[0])


def _error(result: dict[str, Any]) -> str:
    """What an errored request's ``ErrorResponse`` says (its inner ``error``, or the error
    object written flat)."""
    outer = as_dict(result.get("error"))
    inner = as_dict(outer.get("error")) or outer
    kind, message = inner.get("type"), inner.get("message")
    words = [str(w) for w in (kind, message) if isinstance(w, str) and w]
    return "errored: " + (": ".join(words) if words else "the request failed")


def _reply(message: dict[str, Any]) -> str:
    """The text blocks of a message's ``content``, joined."""
    blocks = [as_dict(b) for b in as_list(message.get("content"))]
    return "".join(str(b["text"]) for b in blocks if b.get("type") == "text" and "text" in b)


def _read(place: dict[str, Any], line: dict[str, Any], name: str) -> dict[str, Any]:
    """One line as a row; a line that is not one the API writes is refused at its field."""
    row = custom_id_row(place, line, name, API_KEYS | ROW_KEYS)
    result = as_dict(line.get("result"))
    kind = result.get("type")
    if kind not in RESULT_TYPES:
        raise InputError(
            f"must be one of {', '.join(RESULT_TYPES)}, found {kind!r}",
            file=name,
            field="result.type",
            **place,
        )
    if kind == "succeeded":
        message = result.get("message")
        if not isinstance(message, dict):
            raise InputError(
                f"a succeeded result's message is {kind_words(message)}, not a message",
                file=name,
                field="result.message",
                **place,
            )
        reason = message.get("stop_reason")
        usage = as_dict(message.get("usage"))
        row["completion"] = _reply(message)
        row["stop_reason"] = reason if isinstance(reason, str) else None
        row["truncated"] = cut_reason(reason) if isinstance(reason, str) else None
        row["model"] = message.get("model") if isinstance(message.get("model"), str) else None
        tokens = usage.get("output_tokens")
        row["output_tokens"] = tokens if isinstance(tokens, int) else None
    else:
        row["error"] = _error(result) if kind == "errored" else NOT_RUN[kind]
    return row


def convert(lines: Iterable[tuple[dict[str, Any], dict[str, Any]]], name: str) -> Converted:
    """Rows from results lines, each with its place in the file (``{"line": N}``,
    ``{"at": "entry i"}``)."""
    read = read_lines(
        lines, name, lambda place, line, at: (_read(place, line, at), ""), "a results line"
    )
    rows, lines_read, positions = read.rows, read.lines, read.positions
    not_run = sum("error" in row for row in rows)
    grades, notes = graded_beside(
        rows,
        lines_read,
        API_KEYS,
        name=name,
        what="Anthropic Message Batches results",
        where="its custom_id",
        field="result",
        place=positions[0] if positions else {},
    )
    keyed = (
        "task_id" if any("task_id" in r and r["task_id"] != r["custom_id"] for r in rows) else None
    )
    if not_run:
        notes.append(
            f"{not_run} requests errored, were canceled or expired (result.type): harness"
            " errors, never the model's failures"
        )
    cut = [r["truncated"] for r in rows if "error" not in r]
    cut_known = any(c is not None for c in cut)
    origins = {
        "task_id": "task_id written beside custom_id"
        if keyed
        else "custom_id (the same custom_id in k batches' results: k rollouts)",
        "reward": f"{grades[0]} written beside custom_id"
        if grades
        else "none: no grade written beside custom_id (pass --map reward=KEY)",
        "truncated": "result.message.stop_reason == 'max_tokens'" if cut_known else "not recorded",
        "model": "result.message.model",
    }
    spelled = {"task_id": keyed or "custom_id"}
    if grades:
        spelled["reward"] = grades[0]
    return Converted(NAME, rows, origins, notes, positions=positions, spelled=spelled)
