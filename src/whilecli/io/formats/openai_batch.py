"""OpenAI Batch API output: the batch's ``output_file_id`` (and ``error_file_id``) content,
one ``BatchRequestOutput`` a line ("The request output object" of the API reference,
https://platform.openai.com/docs/api-reference/batch/request-output; ``openai/openai-openapi``,
``openapi.yaml``, ``BatchRequestOutput``), or those lines saved as one JSON array.

A line: ``id`` (``batch_req_...``), ``custom_id`` (the caller's id of the request, unique
within a batch), ``response`` (null, or ``{status_code, request_id, body}``, ``body`` the
endpoint's JSON reply) and ``error`` (null, or ``{code, message}`` for a request that failed
with a non-HTTP error). The body is the endpoint's:

- ``/v1/chat/completions``: a ``chat.completion`` (``model``, ``choices[0].message.content``,
  ``choices[0].finish_reason``, ``usage.completion_tokens``);
- ``/v1/completions``: a ``text_completion`` (``choices[0].text``, the same finish reason);
- ``/v1/responses``: a ``response`` (``model``, ``status``, ``output[]`` whose ``message``
  items hold ``output_text`` parts, ``incomplete_details.reason``, ``usage.output_tokens``);
- ``/v1/embeddings``: a ``list`` of vectors, no reply: refused, nothing there is graded.

A line whose ``error`` is set, or whose ``status_code`` is 400 or more (its body an
``{"error": {message, type, code}}``; 429 and 5xx a failed request, another 4xx one the API
refused), or whose Responses API body ``failed``, is a harness error, never the model's
failure.

The API writes no grade: a file of these lines alone is refused, saying to write each reply's
grade beside its ``custom_id``. A grade written so (a key of the reward aliases, ``reward``,
``score``, ``correct``, ... on the line) is read, and any other key written beside is kept,
so ``--map reward=KEY`` reads it. The task is ``custom_id``, else a ``task_id`` written beside
it (one batch holding several requests of a task); the same ``custom_id`` in the output of k
batches is k rollouts. A reply is cut off where ``finish_reason`` is ``length``, or the
Responses API's ``status`` is ``incomplete`` for ``max_output_tokens``. The model is the
body's ``model``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from whilecli.errors import InputError
from whilecli.io.aliases import cut_reason
from whilecli.io.formats import Converted, as_dict, as_list
from whilecli.io.formats.batch_grades import custom_id_row, graded_beside, read_lines
from whilecli.io.shape import kind_words

NAME = "openai-batch"
#: The keys of a line as the API writes it; any other was written beside them.
API_KEYS = frozenset({"id", "custom_id", "response", "error"})
#: The keys a converted row sets; a key of the same name written beside is not kept.
ROW_KEYS = frozenset(
    {"task_id", "reward", "completion", "truncated", "model", "error", "output_tokens"}
    | {"finish_reason", "custom_id"}
)
#: Where each body kind keeps the reason a reply ended, as the origins name it.
CUT_PLACES = {
    "chat": "response.body.choices[0].finish_reason == 'length'",
    "completion": "response.body.choices[0].finish_reason == 'length'",
    "responses": "response.body.status == 'incomplete' for"
    " incomplete_details.reason 'max_output_tokens'",
}


def is_output(row: Any) -> bool:
    """One output line: a ``custom_id`` beside a ``response`` holding ``status_code`` and
    ``body``, or beside a null ``response`` and an ``error`` object."""
    if not isinstance(row, dict) or not isinstance(row.get("custom_id"), str):
        return False
    if "result" in row:  # an Anthropic Message Batches result
        return False
    response = row.get("response")
    if response is None:
        return "response" in row and isinstance(row.get("error"), dict)
    return (
        isinstance(response, dict)
        and isinstance(response.get("status_code"), int)
        and "body" in response
        and (row.get("error") is None or isinstance(row.get("error"), dict))
    )


def is_listing(doc: Any) -> bool:
    """Output lines saved as one JSON array."""
    return isinstance(doc, list) and bool(doc) and is_output(doc[0])


def _words(error: dict[str, Any]) -> str:
    """An error object's code (or type) and message, joined."""
    words = [error.get(k) for k in ("code", "type", "message")]
    said = [w for w in words if isinstance(w, str) and w]
    if len(said) == 3:  # code and type both written: the code says more
        said = [said[0], said[2]]
    return ": ".join(said)


def _http_error(status: int, body: dict[str, Any]) -> str:
    """What a response of status 400 or more says: 429 and 5xx a failed request."""
    kind = "failed request" if status == 429 or status >= 500 else "request refused"
    said = _words(as_dict(body.get("error")))
    return f"{kind}: HTTP {status}" + (f": {said}" if said else "")


def _kind(body: dict[str, Any]) -> str | None:
    """The endpoint a body came from: chat, completion, responses or embeddings."""
    kind = body.get("object")
    if kind == "chat.completion":
        return "chat"
    if kind == "text_completion":
        return "completion"
    if kind == "response":
        return "responses"
    if kind == "list" or kind == "embedding":
        return "embeddings"
    choice = as_dict(next(iter(as_list(body.get("choices"))), None))
    if "message" in choice:
        return "chat"
    if "text" in choice:
        return "completion"
    return "responses" if isinstance(body.get("output"), list) else None


def _responses_text(body: dict[str, Any]) -> str:
    """The ``output_text`` parts of a Responses API body's ``message`` items, joined."""
    items = [as_dict(i) for i in as_list(body.get("output"))]
    parts = [
        as_dict(p) for i in items if i.get("type") == "message" for p in as_list(i.get("content"))
    ]
    return "".join(str(p["text"]) for p in parts if p.get("type") == "output_text" and "text" in p)


def _reply(row: dict[str, Any], kind: str, body: dict[str, Any]) -> None:
    """A succeeded body's reply, end, model and length, set on ``row``."""
    usage = as_dict(body.get("usage"))
    if kind == "responses":
        row["completion"] = _responses_text(body)
        status = body.get("status")
        reason = as_dict(body.get("incomplete_details")).get("reason")
        if status == "incomplete":
            row["finish_reason"] = reason if isinstance(reason, str) else "incomplete"
            row["truncated"] = cut_reason(reason) if isinstance(reason, str) else None
        else:
            row["finish_reason"] = status if isinstance(status, str) else None
            row["truncated"] = False if status == "completed" else None
        tokens = usage.get("output_tokens")
    else:
        choice = as_dict(next(iter(as_list(body.get("choices"))), None))
        if kind == "chat":
            content = as_dict(choice.get("message")).get("content")
        else:
            content = choice.get("text")
        row["completion"] = content if isinstance(content, str) else ""
        reason = choice.get("finish_reason")
        row["finish_reason"] = reason if isinstance(reason, str) else None
        row["truncated"] = cut_reason(reason) if isinstance(reason, str) else None
        tokens = usage.get("completion_tokens")
    model = body.get("model")
    row["model"] = model if isinstance(model, str) else None
    row["output_tokens"] = tokens if isinstance(tokens, int) else None


def _read(place: dict[str, Any], line: dict[str, Any], name: str) -> tuple[dict[str, Any], str]:
    """One line as a row and its body's kind (``error`` for a failed request); a line that
    is not one the API writes is refused at its field."""
    row = custom_id_row(place, line, name, API_KEYS | ROW_KEYS)
    error, response = line.get("error"), line.get("response")
    if isinstance(error, dict):
        said = _words(error)
        row["error"] = "failed request" + (f": {said}" if said else "")
        return row, "error"
    if not isinstance(response, dict):
        raise InputError(
            f"response is {kind_words(response)} and error is {kind_words(error)}: a line"
            " holds a response or an error",
            file=name,
            field="response",
            **place,
        )
    status, body = response.get("status_code"), as_dict(response.get("body"))
    if not isinstance(status, int):
        raise InputError(
            f"status_code is {kind_words(status)}, not the response's HTTP status",
            file=name,
            field="response.status_code",
            **place,
        )
    if status >= 400:
        row["error"] = _http_error(status, body)
        return row, "error"
    kind = _kind(body)
    if kind is None or kind == "embeddings":
        found = "an embeddings list (vectors, no reply)" if kind else "no reply the API writes"
        raise InputError(
            f"the body holds {found}: while reads chat completions, completions and"
            " Responses API output",
            file=name,
            field="response.body",
            **place,
        )
    if kind == "responses" and body.get("status") in ("failed", "cancelled"):
        said = _words(as_dict(body.get("error")))
        row["error"] = f"response {body['status']}" + (f": {said}" if said else "")
        model = body.get("model")
        row["model"] = model if isinstance(model, str) else None
        return row, "error"
    _reply(row, kind, body)
    return row, kind


def convert(lines: Iterable[tuple[dict[str, Any], dict[str, Any]]], name: str) -> Converted:
    """Rows from output lines, each with its place in the file (``{"line": N}``,
    ``{"at": "entry i"}``)."""
    read = read_lines(lines, name, _read)
    rows, kinds, lines_read, positions = read.rows, read.kinds, read.lines, read.positions
    grades, notes = graded_beside(
        rows,
        lines_read,
        API_KEYS,
        name=name,
        what="OpenAI Batch API output",
        where="its custom_id",
        field="response",
        place=positions[0] if positions else {},
    )
    keyed = (
        "task_id" if any("task_id" in r and r["task_id"] != r["custom_id"] for r in rows) else None
    )
    failed = kinds.count("error")
    if failed:
        notes.append(
            f"{failed} requests failed (error set, status_code 400 or more, or a failed"
            " response): harness errors, never the model's failures"
        )
    cut_known = any(r.get("truncated") is not None for r in rows if "error" not in r)
    places = sorted({CUT_PLACES[k] for k in kinds if k in CUT_PLACES})
    origins = {
        "task_id": "task_id written beside custom_id"
        if keyed
        else "custom_id (the same custom_id in k batches' output: k rollouts)",
        "reward": f"{grades[0]} written beside custom_id"
        if grades
        else "none: no grade written beside custom_id (pass --map reward=KEY)",
        "truncated": "; ".join(places) if cut_known else "not recorded",
        "model": "response.body.model",
    }
    spelled = {"task_id": keyed or "custom_id"}
    if grades:
        spelled["reward"] = grades[0]
    return Converted(NAME, rows, origins, notes, positions=positions, spelled=spelled)
