"""The row facts (DESIGN section 1) against a plain-Python reading of the same rules.

Generated files mix null and NaN grades, error replies at every share, rewards a hair either
side of the threshold, replies that are a missing value written as text (``None``), model
names written as local and Hugging Face cache paths, integer versions, per-row ids, ids
carrying two prompts, greedy repeats and replies logged for some tasks only; what
``read_rows`` counts, leaves out and refuses is compared with :mod:`facts_reference`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import polars as pl
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from facts_check import FOUND_CASE, matches_reference, write_rows
from facts_reference import is_harness_error, model_name
from whilecli.io import facts
from whilecli.io.read import read_rows
from whilecli.route.pool import summarize

REWARDS = [0.0, 1.0] * 6 + [None, math.nan, 1 - 1e-10, 1 - 1e-8, 0.5, 1e-10]
ERRORS = [
    "Error code: 429 - {'error': 'rate limit'}",
    "Request timed out.",
    "Connection error.",
    "openai.RateLimitError: Too Many Requests",
    "HTTP 503 Service Unavailable",
    "BadRequestError: This model's maximum context length is 4096 tokens",
]
REPLIES = ["the answer is 4", "  same draw ", "same draw", "", "Error", "timeout in my code"]
REPLIES += ["None", " nan ", "None of the above"]  # a missing value written as text, or words
# a template's text alone (special tokens, an empty reasoning block, a zero-width space), or
# beside the reply's own
REPLIES += ["<|im_end|>", "</s>", "<think>\n\n</think>\n", "\u200b", "4<|eot_id|>", "<s>x</s>"]
MODELS = [
    "Qwen/Qwen3-0.6B",
    "/root/.cache/huggingface/hub/models--Qwen--Qwen3-0.6B/snapshots/0123abc",
    "/models/Llama-3-8B/",
    "./ckpt/run-1",
    "org/m@7",
]


@st.composite
def pools(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    n_tasks = draw(st.integers(1, 6))
    style = draw(st.sampled_from(["plain", "prompts", "per_row", "conflict"]))
    error_share = draw(st.sampled_from([0.0, 0.0, 0.0, 0.1, 0.6]))
    greedy = draw(st.booleans())
    with_model = draw(st.booleans())
    with_version = draw(st.booleans())
    some_logged = draw(st.booleans())  # the writer logged the replies of some tasks only
    reply_key = draw(st.sampled_from(["completion", "response", "output", "output_response"]))
    rows: list[dict[str, Any]] = []
    for t in range(n_tasks):
        k = draw(st.integers(1, 5))
        fixed = draw(st.sampled_from(REPLIES[:3]))
        logged = not some_logged or draw(st.booleans())
        for _ in range(k):
            row: dict[str, Any] = {"task_id": f"t{t}", "reward": draw(st.sampled_from(REWARDS))}
            if style != "plain":
                row["prompt"] = f"question {t}"
            reply = fixed if greedy else draw(st.sampled_from(REPLIES * 3 + ERRORS[:1]))
            if draw(st.floats(0, 1)) < error_share:
                reply = draw(st.sampled_from(ERRORS))
            row[reply_key] = reply if logged else None
            if with_model:
                row["model"] = draw(st.sampled_from(MODELS))
            if with_version:
                row["policy_version"] = draw(st.integers(0, 3))
            rows.append(row)
    if style == "per_row":
        for i, row in enumerate(rows):
            row["task_id"] = f"uuid-{i}"
    if style == "conflict" and len(rows) >= 2:
        rows[-1]["prompt"] = "another question"
    options = {
        "threshold": draw(st.sampled_from([None, None, 1.0, 0.5])),
        "missing": draw(st.sampled_from(["skip", "fail"])),
        "kind": draw(st.sampled_from(["jsonl", "parquet"])),
    }
    return rows, options


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pools())
# a text-reply field null on every row: a Parquet column typed as text says nothing was
# generated; a JSON Lines key says nothing (an API's object could stand there)
@example(([{"task_id": "t0", "reward": 0.0, "response": None}], FOUND_CASE))
@example(([{"task_id": "t0", "reward": 0.0, "response": None}], {**FOUND_CASE, "kind": "parquet"}))
def test_facts_match_the_slow_reading(tmp_path: Path, case: tuple[list, dict]) -> None:
    matches_reference(tmp_path, case)


#: What a harness or an API client writes in place of a reply: a label first, a failure named.
ERROR_LABELS = [
    "Error: ",
    "ERROR: ",
    "error: ",
    "Error code: 429 - ",
    "Error code: 503 - ",
    "Error 503: ",
    "[ERROR] ",
    "Exception: ",
    "openai.RateLimitError: ",
    "openai.APITimeoutError: ",
    "APIConnectionError: ",
    "httpx.ReadTimeout: ",
    "litellm.ServiceUnavailableError: ",
    "HTTP 503: ",
    "HTTP/1.1 502 - ",
    "HTTP Error 503: ",
    "Status: 502, ",
    "Status code 429: ",
    "Request failed: ",
    'Traceback (most recent call last):\n  File "agent.py", line 12, in run\n    reply = client.chat()\n',
]
FAILURES = [
    "Too Many Requests",
    "Rate limit reached for requests",
    "rate_limit_exceeded",
    "Request timed out.",
    "Connection error.",
    "Connection refused",
    "Internal Server Error",
    "Bad Gateway",
    "Service Unavailable",
    "The server is overloaded, please try again later.",
    "This model's maximum context length is 32768 tokens",
    "context_length_exceeded",
    "ContextWindowExceededError: prompt exceeds 32768 tokens",
    "ServiceUnavailableError: vllm backend unavailable",
    "InternalServerError",
    "bad_gateway",
]


def _json_body(q: str, failure: str, code: int) -> str:
    """An API's JSON error body, in JSON's quotes (q = '"') or Python's (q = "'")."""
    return "{" + f"{q}error{q}: {{{q}message{q}: {q}{failure}{q}, {q}code{q}: {code}}}" + "}"


def _server_body(q: str, failure: str, key: str) -> str:
    """A server's JSON error body: vLLM's ``{"object": "error", ...}``, a web framework's
    ``{"detail": ...}``, a gateway's ``{"message": ...}``."""
    if key == "object":
        return (
            "{"
            + f"{q}object{q}: {q}error{q}, {q}message{q}: {q}{failure}{q}, {q}code{q}: 503"
            + "}"
        )
    return "{" + f"{q}{key}{q}: {q}{failure}{q}" + "}"


#: What a web server's error body says: a client's whole message, or a label and a failure.
SERVER_MESSAGES = st.one_of(
    st.sampled_from(["Internal Server Error", "Too Many Requests", "Request timed out.",
                     "Service Unavailable", "Bad Gateway", "Overloaded",
                     "Rate limit reached for requests"]),
    st.builds(lambda label, failure: label + failure,
              st.sampled_from([lb for lb in ERROR_LABELS if "\n" not in lb]),
              st.sampled_from(FAILURES)),
)  # fmt: skip
ERROR_BODIES = st.one_of(
    st.builds(lambda label, failure: label + failure, st.sampled_from(ERROR_LABELS),
              st.sampled_from(FAILURES)),
    st.builds(lambda code, reason: f"{code} {reason}",
              st.sampled_from(["429", "502", "503", "504"]),
              st.sampled_from(["Too Many Requests", "Bad Gateway", "Service Unavailable",
                               "Gateway Timeout"])),
    st.builds(_json_body, st.sampled_from(['"', "'"]), st.sampled_from(FAILURES),
              st.sampled_from([429, 503])),
    st.builds(_server_body, st.sampled_from(['"', "'"]), st.sampled_from(FAILURES),
              st.just("object")),
    st.builds(_server_body, st.sampled_from(['"', "'"]), SERVER_MESSAGES,
              st.sampled_from(["detail", "message", "errorMessage", "error_message"])),
    st.builds(lambda code, reason: f"<html>\r\n<head><title>{code} {reason}</title></head>\r\n"
              f"<body><center><h1>{code} {reason}</h1></center></body></html>",
              st.sampled_from(["502", "503", "504"]),
              st.sampled_from(["Bad Gateway", "Service Temporarily Unavailable", "Gateway Time-out"])),
    st.builds(lambda message, advice: message + advice,
              st.sampled_from(["Request timed out.", "Rate limit exceeded.", "Connection error.",
                               "Too many requests", "Service unavailable"]),
              st.sampled_from(["", " Please retry after 20s.", " Try again later."])),
)  # fmt: skip

#: Model text that opens the way an error does, and talks about failures: never a label.
PROSE_OPENINGS = [
    "Error analysis: ",
    "Error handling ",
    "Errors like these ",
    "Error 502 usually means ",
    "HTTP 502 errors happen when ",
    "502 errors ",
    "Exception safety: ",
    "Status update: ",
    "Timeouts ",
    "Rate limiting ",
    "Traceback analysis: ",
    "Request failures ",
    "The error ",
    "",
]
PROSE_SENTENCES = [
    "the timeout in step 2 comes from the loop that never exits.",
    "a 502 error means the gateway got no answer from the server behind it.",
    "when the API returns 429 Too Many Requests, the client should back off.",
    "we saw HTTP 503 service unavailable twice, so the cache must be warmed first.",
    "the connection error was raised because the socket closed early.",
    "the rate limit is 10 requests per second, and the answer is 42.",
    "so the maximum context length of the model decides how much of the file fits.",
    "the final answer is \\boxed{7}.",
]
PROSE = st.builds(
    lambda opening, sentences: opening + " ".join(sentences),
    st.sampled_from(PROSE_OPENINGS),
    st.lists(st.sampled_from(PROSE_SENTENCES), min_size=1, max_size=12),
)


def _is_error(text: str) -> bool:
    return bool(pl.select(facts.error_message(pl.lit(text, dtype=pl.String))).item())


@settings(max_examples=300, deadline=None)
@given(ERROR_BODIES, st.sampled_from(["", " ", "\n", "  \n"]))
def test_harness_error_replies_are_errors(text: str, pad: str) -> None:
    """What a harness or an API client writes in place of a reply is an error reply, in the
    reading layer and in the slow rule alike."""
    assert is_harness_error(pad + text), text
    assert _is_error(pad + text), text


@settings(max_examples=300, deadline=None)
@given(PROSE)
def test_model_prose_about_errors_is_a_reply(text: str) -> None:
    """Model text that opens like an error ("Error analysis: the timeout ...", "HTTP 502 errors
    happen when ...") and talks of timeouts, 502s and rate limits is the model's reply."""
    assert not is_harness_error(text), text
    assert not _is_error(text), text


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.sampled_from(REPLIES + ERRORS),
        st.text(max_size=40),
        ERROR_BODIES,
        PROSE,
        st.builds(lambda a, b: a + b, st.sampled_from(ERROR_LABELS + PROSE_OPENINGS),
                  st.text(max_size=40)),
    )
)  # fmt: skip
def test_harness_errors_match_the_slow_rule(text: str) -> None:
    got = pl.select(facts.error_message(pl.lit(text, dtype=pl.String))).item()
    assert got == is_harness_error(text)


PATHS = st.builds(
    lambda org, name, sha, how: {
        "hf": f"/home/u/.cache/huggingface/hub/models--{org}--{name}/snapshots/{sha}",
        "models": f"/models/{name}/",
        "local": f"./out/{name}",
        "name": f"{org}/{name}",
    }[how],
    st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,8}", fullmatch=True),
    st.from_regex(r"[A-Za-z][A-Za-z0-9_.-]{0,10}", fullmatch=True),
    st.from_regex(r"[0-9a-f]{6,12}", fullmatch=True),
    st.sampled_from(["hf", "models", "local", "name"]),
)


@settings(max_examples=100, deadline=None)
@given(PATHS)
@example("/models/jt__G/")  # lm-eval's Org__Name folder
@example("./out/Qwen--Qwen3-8B")
@example("./out/run_Qwen3-8B")
def test_model_names_from_paths_match_the_slow_rule(raw: str) -> None:
    got = pl.select(facts.model_name(pl.lit(raw, dtype=pl.String))).item()
    assert got == model_name(raw)


@settings(max_examples=100, deadline=None)
@given(
    st.floats(-2, 2, allow_nan=False),
    st.sampled_from([-1e-10, 0.0, 1e-10, -2e-9, 2e-9, -(2.0**-24), -2e-7, -3e-7, 3e-7]),
)
def test_the_pass_rule_forgives_float32_rounding_below_the_threshold(
    threshold: float, off: float
) -> None:
    """A reward float32's rounding (two units in the last place at 1, 2⁻²²) below the
    threshold passes; one further below fails."""
    reward = threshold + off
    got = pl.select(facts.passed(pl.lit(reward), threshold)).item()
    assert got == (reward >= threshold - 2.0**-22)


def test_one_null_grade_among_300_rows_is_left_out_and_named(tmp_path: Path) -> None:
    rows = [{"task_id": f"t{i // 4}", "reward": float(i % 2)} for i in range(300)]
    rows[17]["reward"] = None
    path = write_rows(tmp_path, rows, "jsonl")
    got = read_rows([str(path)])
    assert got.facts.ungraded == 1 and got.facts.first_ungraded == f"{path} line 18"
    assert got.frame.collect().height == 299
    assert any("1 of 300 rows are ungraded" in w for w in got.facts.warnings())
    failed = read_rows([str(path)], missing="fail")
    assert failed.frame.collect().height == 300
    assert summarize(failed).tasks["passes"].sum() == summarize(got).tasks["passes"].sum()


def test_integer_steps_are_versions(tmp_path: Path) -> None:
    rows = [
        {"task_id": f"t{i // 4}", "reward": float(i % 2), "model": "m", "step": i % 3}
        for i in range(12)
    ]
    got = summarize(read_rows([str(write_rows(tmp_path, rows, "jsonl"))]))
    assert got.versions == {"0": 4, "1": 4, "2": 4}
