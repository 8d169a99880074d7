"""Vertex AI batch prediction output for Gemini: the ``predictions.jsonl`` a batch job writes
to its Cloud Storage destination ("Batch prediction from Cloud Storage", "Retrieve batch
output", https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/batch-prediction-from-cloud-storage),
one request a line, or those lines saved as one JSON array.

A line: ``status`` (empty for a succeeded request, else the error's text, ``"Bad Request:
{...}"``), ``processed_time``, ``request`` (the input line's request: ``contents[]`` of
``{role, parts: [{text}]}``, ``generationConfig``) and, for a succeeded request, ``response``,
a ``GenerateContentResponse`` (``candidates[0].content.parts[].text``,
``candidates[0].finishReason``, ``modelVersion``, ``usageMetadata.candidatesTokenCount``;
a prompt the model refused to read has no candidate and ``promptFeedback.blockReason``).

A line whose ``status`` holds an error, or whose prompt was blocked, is a harness error, never
the model's failure. The job writes no id of a request and no grade: the task is a
``task_id`` written beside the request, else the request's text (its digest, as every format
keys a prompt without an id), so the same prompt in k jobs' output is k rollouts; a file of
these lines alone is refused, saying to write each reply's grade beside its request (a key of
the reward aliases, ``reward``, ``score``, ``correct``, ...), and any other key written beside
is kept, so ``--map reward=KEY`` reads it. A reply is cut off where ``finishReason`` is
``MAX_TOKENS``. The model is ``response.modelVersion``.

The Gemini API's batch mode (``client.batches.create`` with an input file; "Batch API",
https://ai.google.dev/gemini-api/docs/batch-api) writes a results file of the same responses,
one a line beside the ``key`` the input line gave its request (``{"key", "response"}``, or
``{"key", "error"}`` for a failed request, a ``google.rpc.Status``): read alike, the task a
``task_id`` written beside, else the ``key`` (the same key in k jobs' output is k rollouts).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from whilecli.errors import InputError
from whilecli.io.aliases import cut_reason
from whilecli.io.formats import Converted, as_dict, as_list, prompt_digest
from whilecli.io.formats.batch_grades import graded_beside, read_lines
from whilecli.io.shape import kind_words

NAME = "vertex-batch"
#: The keys of a line as the job writes it; any other was written beside them.
API_KEYS = frozenset({"status", "processed_time", "request", "response", "key", "error"})
#: The keys a converted row sets; a key of the same name written beside is not kept.
ROW_KEYS = frozenset(
    {"task_id", "reward", "completion", "truncated", "model", "error", "output_tokens"}
    | {"finish_reason", "prompt", "key"}
)


def is_prediction(row: Any) -> bool:
    """One output line: a ``request`` holding ``contents`` beside a ``response`` holding
    ``candidates`` (or ``promptFeedback``), or beside a ``status`` that holds an error; or a
    Gemini API line, a ``key`` beside such a ``response`` or an ``error``."""
    if isinstance(row, dict) and "request" not in row and isinstance(row.get("key"), str):
        response = row.get("response")
        if isinstance(response, dict):
            return "candidates" in response or "promptFeedback" in response
        return isinstance(row.get("error"), dict)
    if not isinstance(row, dict) or not isinstance(row.get("request"), dict):
        return False
    if "contents" not in row["request"] or not isinstance(row.get("status", ""), str):
        return False
    response = row.get("response")
    if isinstance(response, dict):
        return "candidates" in response or "promptFeedback" in response
    return response is None and bool(row.get("status"))


def is_listing(doc: Any) -> bool:
    """Output lines saved as one JSON array."""
    return isinstance(doc, list) and bool(doc) and is_prediction(doc[0])


def _text(parts: Any) -> str:
    """The text parts of a content's ``parts`` (a list, or one part written bare), joined."""
    listed = parts if isinstance(parts, list) else [parts]
    return "".join(str(p["text"]) for p in map(as_dict, listed) if isinstance(p.get("text"), str))


def prompt_of(request: dict[str, Any]) -> str:
    """The request's text: each content's text parts, one content a line."""
    contents = [as_dict(c) for c in as_list(request.get("contents"))]
    return "\n".join(t for t in (_text(c.get("parts")) for c in contents) if t)


def _read(place: dict[str, Any], line: dict[str, Any], name: str) -> dict[str, Any]:
    """One line as a row; a line that is not one the job writes is refused at its field."""
    request = line.get("request")
    key = line.get("key")
    if not isinstance(request, dict) and not (request is None and isinstance(key, str)):
        raise InputError(
            f"request is {kind_words(request)}, not the request the line answers",
            file=name,
            field="request",
            **place,
        )
    row: dict[str, Any] = {k: v for k, v in line.items() if k not in API_KEYS | ROW_KEYS}
    prompt = prompt_of(request) if isinstance(request, dict) else ""
    task = line.get("task_id")
    if task is None and request is None:
        task = key  # a Gemini API line: the caller's key of its request
    if task is None:
        if not prompt:
            raise InputError(
                "the request holds no text to key its task: write a task_id beside it",
                file=name,
                field="request.contents",
                **place,
            )
        task = "request:" + prompt_digest(prompt)
    row["task_id"] = task
    row["prompt"] = prompt or None
    status, response = line.get("status"), line.get("response")
    if isinstance(status, str) and status:
        row["error"] = f"failed request: {status}"
        return row
    error = line.get("error")
    if isinstance(error, dict) and not isinstance(response, dict):
        said = [str(error[k]) for k in ("code", "message") if error.get(k) not in (None, "")]
        row["error"] = "failed request" + (f": {': '.join(said)}" if said else "")
        return row
    if not isinstance(response, dict):
        raise InputError(
            f"response is {kind_words(response)} and status is empty: a succeeded request"
            " holds a response",
            file=name,
            field="response",
            **place,
        )
    model = response.get("modelVersion")
    row["model"] = model if isinstance(model, str) else None
    candidates = as_list(response.get("candidates"))
    if not candidates:
        blocked = as_dict(response.get("promptFeedback")).get("blockReason")
        row["error"] = "prompt blocked" + (f": {blocked}" if isinstance(blocked, str) else "")
        return row
    first = as_dict(candidates[0])
    reason = first.get("finishReason")
    tokens = as_dict(response.get("usageMetadata")).get("candidatesTokenCount")
    row["completion"] = _text(as_dict(first.get("content")).get("parts"))
    row["finish_reason"] = reason if isinstance(reason, str) else None
    row["truncated"] = cut_reason(reason) if isinstance(reason, str) else None
    row["output_tokens"] = tokens if isinstance(tokens, int) else None
    return row


def convert(lines: Iterable[tuple[dict[str, Any], dict[str, Any]]], name: str) -> Converted:
    """Rows from output lines, each with its place in the file (``{"line": N}``,
    ``{"at": "entry i"}``)."""
    read = read_lines(lines, name, lambda place, line, at: (_read(place, line, at), ""))
    rows, lines_read, positions = read.rows, read.lines, read.positions
    grades, notes = graded_beside(
        rows,
        lines_read,
        API_KEYS,
        name=name,
        what="Vertex AI batch prediction output",
        where="its request",
        field="response",
        place=positions[0] if positions else {},
    )
    keyed = any("task_id" in line for line in lines_read)
    by_key = not keyed and any("request" not in line for line in lines_read)
    failed = sum("error" in r for r in rows)
    if failed:
        notes.append(
            f"{failed} requests failed (an error in status or error, or a blocked prompt):"
            " harness errors, never the model's failures"
        )
    cut_known = any(r.get("truncated") is not None for r in rows if "error" not in r)
    origins = {
        "task_id": "task_id written beside the request"
        if keyed
        else "key (the Gemini API's id of the request: the same key in k jobs' output, k rollouts)"
        if by_key
        else "the request's text (the same prompt in k jobs' output: k rollouts)",
        "reward": f"{grades[0]} written beside the request"
        if grades
        else "none: no grade written beside the request (pass --map reward=KEY)",
        "truncated": "response.candidates[0].finishReason == 'MAX_TOKENS'"
        if cut_known
        else "not recorded",
        "model": "response.modelVersion",
    }
    spelled = {"task_id": "task_id"} if keyed else {"task_id": "key"} if by_key else {}
    if grades:
        spelled["reward"] = grades[0]
    return Converted(NAME, rows, origins, notes, positions=positions, spelled=spelled)
