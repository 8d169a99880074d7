"""Error replies however a harness records them (DESIGN section 1, ``reply``): left out of
every rate, counted, and never a benign value read as an error.

The generator draws a pool where every real reply passes (the truth is "saturated"), turns a
share of its rows into harness errors scored 0 in one encoding (an error field, flag, status
or stop reason; an error text unlabelled, over 600 bytes in an error's shape, or where the
reply sits in a chat transcript or an API response), writes it as JSON Lines and as Parquet
and routes it: the errors finding comes first and the route is the one the pool without the
error rows gives, never GRPO on a split the errors made. The other side: benign values in
those fields on every row, and replies that quote an error inside their own words, route as
the clean pool does, with no errors finding.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from facts_reference import is_harness_error
from rows_files import finding_kinds, route_rows, write_rows
from whilecli.cli import app
from whilecli.io import facts
from whilecli.route.model import Route

MODEL = "Qwen/Qwen3-8B"
Row = dict[str, Any]

HTML_502 = (
    "<!DOCTYPE html>\n<html><head><title>example.com | 502: Bad gateway</title><style>"
    + "body{font-family:sans-serif;margin:0;padding:0}" * 25
    + "</style></head><body><h1>502 Bad Gateway</h1><p>cloudflare</p></body></html>"
)
JSON_BODY = json.dumps(
    {
        "error": {
            "message": "This model's maximum context length is 32768 tokens. However, you"
            " requested 41234 tokens. Please reduce the length of the messages. " + "x" * 500,
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }
)
TRACEBACK = (
    "Traceback (most recent call last):\n"
    + "".join(
        f'  File "/usr/lib/python3.11/site-packages/openai/_base_client.py", line {100 + i},'
        " in _request\n    return self._retry_request(options, cast_to)\n"
        for i in range(8)
    )
    + "openai.RateLimitError: Error code: 429 - {'error': {'message': 'Rate limit reached'}}"
)
#: Error texts no label opens: a client's one-line message, or an error's shape at any length.
ERROR_TEXTS = {
    "openai-rate-limit": "Rate limit reached for gpt-4o in organization org-abc on tokens per"
    " min (TPM): Limit 30000, Used 29800, Requested 1200. Please try again in 2s.",
    "openai-context": "This model's maximum context length is 8192 tokens. However, you"
    " requested 9000 tokens (7000 in the messages, 2000 in the completion).",
    "vllm-timeout": "Request timed out after 600s",
    "anthropic-overloaded": "Overloaded",
    "anthropic-body": '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    "html-502-long": HTML_502,
    "json-body-long": JSON_BODY,
    "traceback-long": TRACEBACK,
}
assert min(len(HTML_502), len(JSON_BODY), len(TRACEBACK)) > facts.ERROR_TEXT_MAX


def _set(**fields: Any) -> Callable[[Row], None]:
    return lambda row: row.update(fields)


def _reply(text: str) -> Callable[[Row], None]:
    return lambda row: row.update(completion=text)


#: Where a harness records that the row is an error, one encoding each.
ENCODINGS: dict[str, Callable[[Row], None]] = {
    # what a harness writes in place of a reply: the error, and no reply beside it
    "status-failed": _set(status="failed", completion=""),
    "status-aborted": _set(status="aborted"),
    "status-error": _set(status="error", completion=None),
    "status-timeout": _set(status="timeout", completion=None),
    "is_error": _set(is_error=True, completion=""),
    "exception": _set(exception="openai.APITimeoutError: Request timed out.", completion=None),
    # a non-null error records one whatever reply stands beside it (DESIGN section 1)
    "error-beside-reply": _set(error="HTTP 503 Service Unavailable"),
    "error-object-beside-reply": _set(error={"message": "sandbox crashed", "code": 500}),
    "error_message": _set(
        error_message="upstream connect error or disconnect/reset before headers",
        completion="",
    ),
    "metadata.error": _set(metadata={"error": "RateLimitError"}, completion=None),
    "response.error": _set(
        response={"error": {"message": "rate limited", "code": "429"}}, completion=""
    ),
    "choices.finish_reason": _set(
        choices=[{"finish_reason": "error", "message": {"role": "assistant", "content": "x"}}]
    ),
    "finish_reason-abort": _set(finish_reason="abort"),
    # an HTTP error status written as a number or its text, beside no reply
    "status_code-429": _set(status_code=429, completion=""),
    "status-503": _set(status=503, completion=None),
    "http_status-text": _set(http_status="HTTP 502", completion=""),
    "response.status_code": _set(response={"status_code": 500}, completion=""),
    # the failure's class, a failed request's status or finish reason in a client's words
    "error_type": _set(error_type="RateLimitError", completion=""),
    "status-rate_limited": _set(status="rate_limited", completion=""),
    "finish_reason-rate-limited": _set(finish_reason="Rate-Limited"),
    "finish_reason-timeout": _set(finish_reason="timeout", completion=""),
    "meta_info.finish_reason-abort": _set(
        meta_info={"finish_reason": {"type": "abort", "message": "aborted by the server"}}
    ),
    "error_code-no-reply": _set(error_code="overloaded_error", completion=None),
    **{f"text:{name}": _reply(text) for name, text in ERROR_TEXTS.items()},
}
#: The same fields beside the model's own reply: what a test runner said of the model's code
#: (its graded failure), never the harness's error.
BESIDE_A_REPLY: dict[str, Callable[[Row], None]] = {
    "exception": _set(exception="TimeoutError: the model's code ran past 10 s"),
    "metadata.error": _set(metadata={"error": "AssertionError: expected 4, got 5"}),
    "is_error": _set(is_error=True),
    "status-error": _set(status="error"),
    "status-failed": _set(status="failed"),
    # the status of what the model's code served, beside its reply
    "status_code-500": _set(status_code=500),
    "finish_reason-timeout": _set(finish_reason="timeout"),
    # a grader's verdict on the model's answer (BFCL's error types)
    "error_type": _set(error_type="simple_function_checker:wrong_func_name"),
}


def pool(seed: int, tasks: int = 32, k: int = 8) -> list[Row]:
    """Every real reply passes: the truth is saturated."""
    rnd = random.Random(seed)
    return [
        {
            "task_id": f"t{t:03d}",
            "prompt": f"Question {t}: compute {t} * {t + 1}?",
            "completion": f"The answer is {t * (t + 1)}. draw {j} {rnd.random():.6f}",
            "reward": 1.0,
            "truncated": False,
            "model": MODEL,
        }
        for t in range(tasks)
        for j in range(k)
    ]


def write(folder: Path, rows: list[Row], kind: str) -> Path:
    return write_rows(folder, rows, kind)


def route(path: Path) -> Route:
    return route_rows(path, MODEL)


kinds = finding_kinds


def _errored(seed: int, share: float, encode: Callable[[Row], None]) -> list[Row]:
    rnd = random.Random(seed)
    rows = pool(seed)
    for row in rows:
        if rnd.random() < share:
            row["reward"] = 0.0
            encode(row)
    return rows


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@pytest.mark.parametrize("name", sorted(ENCODINGS))
def test_error_rows_are_left_out_in_every_encoding(tmp_path: Path, name: str, kind: str) -> None:
    seed = sorted(ENCODINGS).index(name)
    rows = _errored(seed, 0.2, ENCODINGS[name])
    errors = sum(1 for r in rows if r["reward"] == 0.0)
    got = route(write(tmp_path, rows, kind))
    clean = route(write(tmp_path, [r for r in rows if r["reward"] == 1.0], kind))
    assert kinds(got)[0] == "errors", (name, kinds(got))
    assert got.data_quality[0].count == errors
    assert (got.route, got.method) == (clean.route, clean.method) == ("saturated", clean.method)
    assert got.method != "grpo"


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@pytest.mark.parametrize(
    "field,value",
    [
        ("error", False),
        ("error", 0),
        ("error", "None"),
        ("error", "null"),
        ("error", ""),
        ("error", {}),
        ("error", []),
        ("error", {"message": None, "code": None}),
        ("exception", None),
        ("error_message", "<not_executed>"),
        ("error_message", "NameError: name 'x' is not defined"),
        ("is_error", False),
        ("status", "ok"),
        ("status", "success"),
        ("status", "completed"),
        # beside the model's reply, a failed or timed-out status is the graded failure of
        # the model's code (a test harness), not the request's
        ("status", "failed"),
        ("status", "timeout"),
        ("finish_reason", "stop"),
        ("status", 200),
        ("status_code", 200),
        ("status", 0),
        ("status", 1),
        ("error_type", None),
        ("finish_reason", "timeout"),
    ],
)
def test_a_value_that_records_no_error_is_no_error(
    tmp_path: Path, field: str, value: Any, kind: str
) -> None:
    """A split pool with a benign value on every row routes as without it: no errors finding,
    never refused as "most replies are errors"."""
    rnd = random.Random(7)
    rows = pool(7)
    for row in rows:
        row["reward"] = float(rnd.random() < 0.5)
    clean = route(write(tmp_path, rows, kind))
    if kind == "parquet" and value in ({}, []):
        pytest.skip("Parquet holds no empty struct")
    marked = route(write(tmp_path, [dict(r, **{field: value}) for r in rows], kind))
    assert "errors" not in kinds(marked)
    assert (marked.route, marked.method, marked.provisional) == (
        clean.route,
        clean.method,
        clean.provisional,
    )
    assert clean.route == "grpo"


def test_benign_error_values_are_not_refused_on_the_command_line(tmp_path: Path) -> None:
    rnd = random.Random(3)
    rows = [dict(r, error=False, reward=float(rnd.random() < 0.5)) for r in pool(3)]
    result = CliRunner().invoke(app, ["route", str(write(tmp_path, rows, "jsonl")), "-q"])
    assert result.exit_code == 0, result.output
    assert "most replies are errors" not in result.output


#: A model's own words around an error it quotes: prose first, or a code block.
PROSE = [
    "The request failed because the client sent too much. ",
    "Here is what the log says and how to fix it:\n\n",
    "Rate limiting works like this: the server counts requests. ",
    "```python\ntry:\n    call()\nexcept Exception as err:\n    print(err)\n```\nOutput:\n",
]
ENDINGS = ["", "\n\nSo the answer is 42.", "\nRetry with backoff and the job finishes."]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(PROSE), st.sampled_from(sorted(ERROR_TEXTS)), st.sampled_from(ENDINGS))
def test_a_reply_that_quotes_an_error_is_a_reply(opening: str, name: str, ending: str) -> None:
    """An error text inside the model's own words (after them) is part of its reply, at any
    length, in the reading layer and in the slow rule alike."""
    text = opening + ERROR_TEXTS[name] + ending
    assert not is_harness_error(text), text
    assert not pl.select(facts.error_message(pl.lit(text, dtype=pl.String))).item(), text


TRACEBACK_ANSWERS = [
    "Traceback (most recent call last):\n  File \"main.py\", line 3, in <module>\n"
    "    print(1 / 0)\nZeroDivisionError: division by zero",
    "Traceback (most recent call last):\n  File \"a.py\", line 1\nKeyError: 'rate'\n\n"
    "The dict has no key 'rate': add it before the lookup.",
    "<!DOCTYPE html>\n<html><head><title>My shop</title></head><body>" + "<p>item</p>" * 80
    + "<p>Error 502 pages are shown when the upstream times out.</p></body></html>",
    '{"error": null, "answer": 42, "notes": "' + "no rate limit was hit. " * 40 + '"}',
]  # fmt: skip


@pytest.mark.parametrize("text", TRACEBACK_ANSWERS)
def test_a_reply_in_an_error_like_shape_that_names_no_failure_is_a_reply(text: str) -> None:
    assert not is_harness_error(text)
    assert not pl.select(facts.error_message(pl.lit(text, dtype=pl.String))).item()


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(sorted(ERROR_TEXTS)),
    st.sampled_from(["", " ", "\n", "  \n"]),
    st.sampled_from(["", "\n", " \n\n"]),
)
def test_error_texts_are_errors_padded(name: str, before: str, after: str) -> None:
    """Each error text is an error with blanks around it, in the reading layer and in the slow
    rule alike."""
    text = before + ERROR_TEXTS[name] + after
    assert is_harness_error(text), text
    assert pl.select(facts.error_message(pl.lit(text, dtype=pl.String))).item(), text


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@pytest.mark.parametrize("name", sorted(BESIDE_A_REPLY))
def test_an_error_field_beside_the_models_reply_is_its_graded_failure(
    tmp_path: Path, name: str, kind: str
) -> None:
    """DESIGN section 1: an error is recorded *instead of* a reply. A code-execution harness
    writes the model's own exception beside its reply and grades it 0: a failure, counted."""
    seed = sorted(BESIDE_A_REPLY).index(name)
    rows = _errored(seed, 0.3, BESIDE_A_REPLY[name])
    got = route(write(tmp_path, rows, kind))
    plain = route(write(tmp_path, rows_without(rows, name), kind))
    assert "errors" not in kinds(got), (name, kinds(got))
    assert (got.route, got.method) == (plain.route, plain.method)
    assert got.route != "saturated"


def rows_without(rows: list[Row], name: str) -> list[Row]:
    """``rows`` without the field ``name`` sets (the same grades)."""
    field = name.split("-")[0].split(".")[0]
    return [{k: v for k, v in r.items() if k != field} for r in rows]


@settings(max_examples=40, deadline=None)
@given(text=st.sampled_from(sorted(ERROR_TEXTS.values())), turns=st.integers(2, 4))
def test_an_error_text_the_grader_passed_or_an_agent_said_last_is_a_reply(
    text: str, turns: int
) -> None:
    """A reply graded a pass is a reply, whatever it says (a "what does this print" task
    whose answer is a traceback); an agent's last turn reporting a tool's error came from a
    model that spoke several times: the harness answered it. Only a reply the grader gave no
    credit, said in one turn, is read as a harness error."""
    replies = pl.DataFrame({"text": [text, text]})
    reply = facts.Reply(pl.col("text"))
    graded = pl.Series([1.0, 0.0])
    state = replies.with_columns(r=graded).select(
        facts.reply_state(reply, credited=pl.col("r") > 0)
    )
    assert state.to_series().to_list() == [facts.OK, facts.ERROR]
    transcript = [{"role": "user", "content": "book a flight"}]
    for i in range(turns - 1):
        transcript.append({"role": "assistant", "content": f"calling the API ({i})"})
        transcript.append({"role": "tool", "content": "503"})
    transcript.append({"role": "assistant", "content": text})
    chat = pl.DataFrame({"text": [json.dumps(transcript)]})
    said = chat.select(facts.reply_state(facts.Reply(pl.col("text"), turns=True)))
    assert said.to_series().to_list() == [facts.OK]


@pytest.mark.parametrize(
    "answer",
    [
        '{"error": null, "data": {"id": 7, "timeout": 30}}',
        '<html><body><form><input name="timeout" value="30"></form></body></html>',
        '{"status": "ok", "retry": {"timeout": 5}}',
        '{"message": "Hello! The answer is 4."}',
        '{"detail": "the loop sets timeout = 30 before it calls the API"}',
        '{"answer": 4, "message": "a timeout of 30s is enough"}',
    ],
)
def test_a_json_or_html_answer_naming_a_timeout_is_a_reply(answer: str) -> None:
    """A JSON answer whose ``error`` holds nothing, or a page's form with a timeout field, is
    no error body or error page (their shapes: :data:`whilecli.io.facts.ERROR_SHAPE`)."""
    got = pl.select(facts.error_message(pl.lit(answer))).item()
    assert got is False, answer


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@pytest.mark.parametrize("field", ["completion", "generation"])
@pytest.mark.parametrize("credited", [False, True])
def test_a_reply_field_null_on_every_row_is_nothing_generated(
    tmp_path: Path, field: str, kind: str, credited: bool
) -> None:
    """A reply field that holds null on every row saved no reply, as an empty one: routed, the
    zeros read as a floor (firm OPSD). Where rows were given credit the grader saw replies the
    file did not keep: those are routed."""
    rows = [
        {"task_id": f"t{t}", field: None, "reward": float(credited and j == 0), "model": MODEL}
        for t in range(300)
        for j in range(4)
    ]
    path = write(tmp_path, rows, kind)
    done = CliRunner().invoke(app, ["route", str(path), "--model", MODEL, "-q"])
    if credited:
        assert done.exit_code == 0, done.output
    else:
        assert done.exit_code == 2 and "nothing was generated" in done.output, done.output


@settings(max_examples=30, deadline=None)
@given(
    field=st.sampled_from(["status", "status_code", "http_status"]),
    code=st.sampled_from([0, 1, 2, 124, 137, 200, 204, 301, 399, 400, 401, 404, 408, 413])
    | st.sampled_from([422, 429, 499, 500, 502, 503, 504, 529, 599, 600, 1000, -1]),
    written=st.sampled_from(["number", "float", "text"]),
    kind=st.sampled_from(["jsonl", "parquet"]),
    seed=st.integers(0, 2**16),
)
def test_a_numeric_status_is_an_error_where_it_is_an_http_error_code(
    tmp_path_factory: pytest.TempPathFactory,
    field: str,
    code: int,
    written: str,
    kind: str,
    seed: int,
) -> None:
    """A pool whose every real reply passes, with a share of rows that hold no reply, score 0
    and carry a numeric status (every other row ``200``, or the same code where the code is
    no HTTP code). An HTTP error code (400-599) there is the request's failure: the rows are
    errors, left out, and the pool routes saturated as it is. Any other number (0 and 1 for a
    tool's fail and pass, an exit status, 2xx, 3xx, past 599) says nothing: the empty replies
    are the model's failures, counted, and the pool is split."""
    rnd = random.Random(seed)
    value: Any = {"number": code, "float": float(code), "text": str(code)}[written]
    rows = pool(seed)
    failed = 0
    for row in rows:
        row[field] = {"number": 200, "float": 200.0, "text": "200"}[written]
        if rnd.random() < 0.15:
            row.update({"reward": 0.0, "completion": "", field: value})
            failed += 1
    if not failed:
        return
    folder = tmp_path_factory.mktemp("status")
    got = route(write(folder, rows, kind))
    if 400 <= code <= 599:
        assert kinds(got)[0] == "errors", (code, kinds(got))
        assert got.data_quality[0].count == failed
        assert got.route == "saturated", (code, got.route)
    else:
        assert "errors" not in kinds(got), (code, kinds(got))
        assert got.route != "saturated", (code, got.route)


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@pytest.mark.parametrize(
    "value,harness",
    [
        ("RateLimitError", True),
        ("openai.APIConnectionError", True),
        ("overloaded_error", True),
        (503, True),
        ("simple_function_checker:wrong_func_name", False),
        ("AssertionError", False),
        ("type_error:simple", False),
    ],
)
def test_an_error_class_in_rows_that_keep_no_reply(
    tmp_path: Path, value: Any, harness: bool, kind: str
) -> None:
    """Rows that keep no reply at all, a share of them scored 0 beside an ``error_type``: a
    class that names a failed request (a rate limit, a lost connection, an overloaded
    server, a 5xx) is the harness's error, left out, and the pool routes saturated as it is;
    a grader's verdict on the model's answer is its graded failure, counted."""
    rows = [{k: v for k, v in r.items() if k != "completion"} for r in _errored(5, 0.2, _set())]
    for row in rows:
        row["error_type"] = value if row["reward"] == 0.0 else None
    got = route(write(tmp_path, rows, kind))
    if harness:
        assert kinds(got)[0] == "errors", kinds(got)
        assert got.route == "saturated"
    else:
        assert "errors" not in kinds(got), kinds(got)
        assert got.route != "saturated"


def _app_status_pool(seed: int, rate: tuple[float, float], field: str) -> list[Row]:
    """An API-building task's rows, summarized: no reply column at all, the tested app's
    response status on each row (200 where the task passed, a 4xx or 5xx where it failed)."""
    rnd = random.Random(seed)
    rows: list[Row] = []
    for t in range(300):
        p = rnd.uniform(*rate)
        for _ in range(8):
            ok = rnd.random() < p
            rows.append(
                {
                    "task_id": f"t{t:04d}",
                    "model": MODEL,
                    "reward": float(ok),
                    "truncated": False,
                    field: 200 if ok else rnd.choice([400, 404, 422, 500, 502]),
                }
            )
    return rows


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@pytest.mark.parametrize("field", ["status_code", "status", "http_status"])
@pytest.mark.parametrize("rate", [(0.2, 0.8), (0.85, 1.0)], ids=["mixed", "easy"])
def test_an_http_status_in_rows_that_keep_no_reply_is_the_tasks_observable(
    tmp_path: Path, kind: str, field: str, rate: tuple[float, float]
) -> None:
    """Rows that keep no reply column at all: a 4xx or 5xx status is what the tested app (or
    a browsed page) answered with, the task's observable, beside the model's graded failure;
    never a harness error. The failures are counted and the pool routes as it does without
    the status (a mixed band is not refused as mostly errors, an easy one is not read as
    saturated). A status beside a recorded empty reply stays a harness error
    (``ENCODINGS``)."""
    rows = _app_status_pool(7, rate, field)
    got = route(write(tmp_path, rows, kind))
    plain = route(write(tmp_path, [{k: v for k, v in r.items() if k != field} for r in rows], kind))
    assert "errors" not in kinds(got), kinds(got)
    want = (plain.route, plain.method, plain.provisional)
    assert (got.route, got.method, got.provisional) == want
    assert got.route != "saturated"
