"""Amazon Bedrock batch inference output: the ``<input>.jsonl.out`` a model invocation job
writes for each input file under ``<output prefix>/<job id>/`` (beside ``manifest.json.out``,
the job's counts), one record a line ("View the results of a batch inference job",
https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-results.html), or those
lines saved as one JSON array.

A line: ``recordId`` (the input line's, or one Bedrock made), ``modelInput`` (the request
body as the input line wrote it) and either ``modelOutput``, the body of the model's
``InvokeModel`` response (or, for a Converse job, the Converse API's), or ``error``
(``{errorCode, errorMessage}``) where the request failed. The body is the model's own:

- Anthropic Claude (Messages): ``content[]`` text blocks, ``stop_reason`` (``max_tokens``
  when cut), ``model``, ``usage.output_tokens``;
- Amazon Nova and Converse jobs: ``output.message.content[].text``, ``stopReason``,
  ``usage.outputTokens``;
- Meta Llama: ``generation``, ``stop_reason`` (``length`` when cut),
  ``generation_token_count``;
- Amazon Titan Text: ``results[0].outputText``, ``completionReason`` (``LENGTH`` when cut,
  ``FINISH`` ended), ``results[0].tokenCount``;
- Mistral: ``outputs[0].text`` and ``stop_reason``, or ``choices[0].message.content`` (chat);
  OpenAI-style bodies (``choices[0]``, ``finish_reason``) alike;
- an embedding model's ``embedding``: no reply, refused.

A line whose ``error`` is set is a harness error, never the model's failure. The job writes no
grade: a file of these lines alone is refused, saying to write each reply's grade beside its
``recordId`` (a key of the reward aliases, ``reward``, ``score``, ``correct``, ...), and any
other key written beside is kept, so ``--map reward=KEY`` reads it. The task is a ``task_id``
written beside, else the request's text (its digest, as every format keys a prompt without an
id: Bedrock makes a new ``recordId`` in each job where the input wrote none), so the same
prompt in one job or in k jobs' output is k rollouts; a request with no text is keyed by its
``recordId``. Only Anthropic bodies name the model (``model``); the others leave it to the
job's settings, not recorded here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from whilecli.errors import InputError
from whilecli.io.aliases import cut_reason, word
from whilecli.io.formats import Converted, as_dict, as_list, prompt_digest
from whilecli.io.formats.batch_grades import graded_beside, read_lines
from whilecli.io.shape import kind_words

NAME = "bedrock-batch"
#: The keys of a line as the job writes it; any other was written beside them.
API_KEYS = frozenset({"recordId", "modelInput", "modelOutput", "error"})
#: The keys a converted row sets; a key of the same name written beside is not kept.
ROW_KEYS = frozenset(
    {"task_id", "reward", "completion", "truncated", "model", "error", "output_tokens"}
    | {"finish_reason", "prompt", "record_id"}
)
#: Titan Text's ``completionReason`` words for a reply that ended on its own (its cut-off
#: word, ``LENGTH``, is every tool's).
TITAN_FINISHED = frozenset({"finish", "stop_criteria_met"})
#: Where each body keeps the reason a reply ended, as the origins name it.
CUT_PLACES = {
    "anthropic": "modelOutput.stop_reason == 'max_tokens' (Anthropic)",
    "converse": "modelOutput.stopReason == 'max_tokens' (Nova, Converse)",
    "llama": "modelOutput.stop_reason == 'length' (Llama)",
    "titan": "modelOutput.results[0].completionReason == 'LENGTH' (Titan)",
    "outputs": "modelOutput.outputs[0].stop_reason == 'length' (Mistral)",
    "choices": "modelOutput.choices[0].finish_reason == 'length'",
}


def is_record(row: Any) -> bool:
    """One output line: a ``modelInput`` object beside a ``modelOutput`` object, or beside an
    ``error`` object."""
    if not isinstance(row, dict) or not isinstance(row.get("modelInput"), dict):
        return False
    if not isinstance(row.get("recordId", ""), str):
        return False
    return isinstance(row.get("modelOutput"), dict) or isinstance(row.get("error"), dict)


def is_listing(doc: Any) -> bool:
    """Output lines saved as one JSON array."""
    return isinstance(doc, list) and bool(doc) and is_record(doc[0])


def _text(content: Any) -> str:
    """A message's content as text: a string, or its text blocks (``{type: text, text}``,
    Converse's ``{text}``) joined."""
    if isinstance(content, str):
        return content
    blocks = [as_dict(b) for b in as_list(content)]
    return "".join(
        str(b["text"])
        for b in blocks
        if isinstance(b.get("text"), str) and b.get("type", "text") == "text"
    )


def prompt_of(body: dict[str, Any]) -> str:
    """A request body's text: its system text and each message's, one a line (Messages,
    Converse, Nova); else its ``prompt`` (Llama, Mistral) or ``inputText`` (Titan)."""
    if isinstance(body.get("messages"), list):
        system = body.get("system")
        texts = [_text(system)] if system is not None else []
        texts += [_text(as_dict(m).get("content")) for m in body["messages"]]
        return "\n".join(t for t in texts if t)
    for key in ("prompt", "inputText"):
        if isinstance(body.get(key), str):
            return str(body[key])
    return ""


def _first(body: dict[str, Any], key: str) -> dict[str, Any]:
    return as_dict(next(iter(as_list(body.get(key))), None))


def _reply(body: dict[str, Any]) -> tuple[str, str, Any, Any] | None:
    """(body kind, reply, end reason, output tokens) of a model's body; None for a body of no
    reply this reader knows."""
    usage = as_dict(body.get("usage"))
    if isinstance(body.get("content"), list) and "stop_reason" in body:
        return "anthropic", _text(body["content"]), body["stop_reason"], usage.get("output_tokens")
    if isinstance(body.get("output"), dict):
        content = as_dict(as_dict(body["output"]).get("message")).get("content")
        return "converse", _text(content), body.get("stopReason"), usage.get("outputTokens")
    if isinstance(body.get("generation"), str):
        tokens = body.get("generation_token_count")
        return "llama", body["generation"], body.get("stop_reason"), tokens
    if isinstance(body.get("results"), list):
        first = _first(body, "results")
        reason = first.get("completionReason")
        return "titan", str(first.get("outputText") or ""), reason, first.get("tokenCount")
    if isinstance(body.get("outputs"), list):
        first = _first(body, "outputs")
        return "outputs", str(first.get("text") or ""), first.get("stop_reason"), None
    if isinstance(body.get("choices"), list):
        first = _first(body, "choices")
        message = first.get("message")
        text = _text(as_dict(message).get("content")) if message else first.get("text")
        reason = first.get("finish_reason", first.get("stop_reason"))
        return "choices", str(text or ""), reason, usage.get("completion_tokens")
    return None


def _cut(kind: str, reason: Any) -> bool | None:
    """Whether a body's end reason says its reply was cut off (Titan's own words for an end
    read as ended)."""
    if kind == "titan" and isinstance(reason, str) and word(reason) in TITAN_FINISHED:
        return False
    return cut_reason(reason) if isinstance(reason, str) else None


def _error(error: dict[str, Any]) -> str:
    """What a failed record's ``error`` says: its code and message."""
    words = [str(error[k]) for k in ("errorCode", "errorMessage") if error.get(k) not in (None, "")]
    return "failed request" + (f": {': '.join(words)}" if words else "")


def _read(place: dict[str, Any], line: dict[str, Any], name: str) -> tuple[dict[str, Any], str]:
    """One line as a row and its body's kind (``error`` for a failed request); a line that
    is not one the job writes is refused at its field."""
    request = line.get("modelInput")
    if not isinstance(request, dict):
        raise InputError(
            f"modelInput is {kind_words(request)}, not the request the line answers",
            file=name,
            field="modelInput",
            **place,
        )
    record = line.get("recordId")
    row: dict[str, Any] = {k: v for k, v in line.items() if k not in API_KEYS | ROW_KEYS}
    row["record_id"] = record
    prompt = prompt_of(request)
    task = line.get("task_id")
    if task is None:
        if prompt:
            task = "request:" + prompt_digest(prompt)
        elif isinstance(record, str) and record:
            task = record
        else:
            raise InputError(
                "the request holds no text and the line no recordId to key its task: write a"
                " task_id beside it",
                file=name,
                field="modelInput",
                **place,
            )
    row["task_id"] = task
    row["prompt"] = prompt or None
    error, body = line.get("error"), line.get("modelOutput")
    if isinstance(error, dict):
        row["error"] = _error(error)
        return row, "error"
    if not isinstance(body, dict):
        raise InputError(
            f"modelOutput is {kind_words(body)} and error is {kind_words(error)}: a line"
            " holds the model's output or an error",
            file=name,
            field="modelOutput",
            **place,
        )
    reply = _reply(body)
    if reply is None:
        found = "an embedding (a vector, no reply)" if "embedding" in body else "no reply"
        raise InputError(
            f"modelOutput holds {found}: while reads the text replies of Anthropic, Nova,"
            " Converse, Llama, Titan Text and Mistral bodies",
            file=name,
            field="modelOutput",
            **place,
        )
    kind, text, reason, tokens = reply
    row["completion"] = text
    row["finish_reason"] = reason if isinstance(reason, str) else None
    row["truncated"] = _cut(kind, reason)
    row["output_tokens"] = tokens if isinstance(tokens, int) else None
    model = body.get("model")
    row["model"] = model if isinstance(model, str) else None
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
        what="Amazon Bedrock batch inference output",
        where="its recordId",
        field="modelOutput",
        place=positions[0] if positions else {},
    )
    keyed = any("task_id" in line for line in lines_read)
    failed = kinds.count("error")
    if failed:
        notes.append(
            f"{failed} records failed (error in place of modelOutput): harness errors, never"
            " the model's failures"
        )
    cut_known = any(r.get("truncated") is not None for r in rows if "error" not in r)
    places = [CUT_PLACES[k] for k in CUT_PLACES if k in kinds]
    named = any(r.get("model") is not None for r in rows)
    origins = {
        "task_id": "task_id written beside the record"
        if keyed
        else "the request's text, modelInput (the same prompt in one job or k jobs: k rollouts)",
        "reward": f"{grades[0]} written beside recordId"
        if grades
        else "none: no grade written beside recordId (pass --map reward=KEY)",
        "truncated": "; ".join(places) if cut_known else "not recorded",
        "model": "modelOutput.model (Anthropic)"
        if named
        else "not recorded (the job's modelId, not in its output)",
    }
    spelled = {"task_id": "task_id"} if keyed else {}
    if grades:
        spelled["reward"] = grades[0]
    return Converted(NAME, rows, origins, notes, positions=positions, spelled=spelled)
