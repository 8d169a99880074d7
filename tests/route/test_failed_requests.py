"""Requests that failed at the API (a rate limit, an overloaded or failing server, a lost
connection) are harness errors that no reading counts as the model's failures (DESIGN
section 2, "Data quality first"): a saturated or floor pool with a few of them is as firm as
without them, while errors that can be the model's (a context overflow, a timeout) still
leave such a pool provisional where, counted as failures, they would split it
(``left_out_decides``).

The generator draws a pool at every task's pass rate 1 (or 0), k draws each, and writes a
share of the rows as errors in each place harnesses record them: an error field's text, a
client's message as the reply, an error class, an HTTP status beside no reply, a status or
finish reason word. The truth: the band the draws give (saturated, floor), firm.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rows_files import finding_kinds, route_rows, write_rows
from whilecli.io import facts

MODEL = "Qwen/Qwen3-8B"
#: (where, what) a failed request is written as, beside an empty reply.
FAILED = [
    ({"error": "RateLimitError: 429 Too Many Requests"}, ""),
    ({"error": {"type": "overloaded_error", "message": "Overloaded"}}, ""),
    ({"error_type": "RateLimitError"}, ""),
    ({"status_code": 502}, ""),
    ({"status": "rate_limited"}, ""),
    ({"finish_reason": "overloaded"}, ""),
    ({"error": "Internal Server Error"}, ""),
]
#: Errors that can be the model's own (a reply that ran too long; a reply that reads as an
#: error message, which an agent's last words can be: "Error: the weather API returned 503").
MODELS_OWN = [
    ({"error": "ContextWindowExceededError: prompt exceeds 32768 tokens"}, ""),
    ({"error": "TimeoutError: generation exceeded 600 s"}, ""),
    ({}, "Error code: 503 - {'error': 'Service Unavailable'}"),
    ({}, "openai.APIConnectionError: Connection error."),
]


def pool(seed: int, passes: bool, errors: list[Any], share: float) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    rows = []
    for t in range(1500):
        for j in range(8):
            row: dict[str, Any] = {
                "task_id": f"t{t:05d}",
                "reward": float(passes),
                "completion": f"reply {j} to {t}: {rnd.random():.6f}",
                "model": MODEL,
                "truncated": False,
            }
            if rnd.random() < share:
                put, reply = rnd.choice(errors)
                row.update(put, reward=None, completion=reply)
            rows.append(row)
    return rows


@settings(max_examples=8, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    passes=st.booleans(),
    share=st.sampled_from([0.005, 0.01, 0.03]),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_failed_requests_leave_a_saturated_or_floor_pool_firm(
    tmp_path_factory: pytest.TempPathFactory, seed: int, passes: bool, share: float, kind: str
) -> None:
    # a Parquet column holds one type: the error object is JSON Lines' own
    errors = (
        FAILED
        if kind == "jsonl"
        else [f for f in FAILED if not isinstance(f[0].get("error"), dict)]
    )
    rows = pool(seed, passes, errors, share)
    got = route_rows(write_rows(tmp_path_factory.mktemp("failed"), rows, kind), MODEL)
    assert got.route == ("saturated" if passes else "floor")
    assert not got.provisional, got.provisional_why
    assert "left_out_decides" not in finding_kinds(got)
    errors = next(f for f in got.data_quality if f.kind == "errors")
    assert "failed at the API" in errors.found


@pytest.mark.parametrize("passes", [True, False])
def test_errors_that_can_be_the_models_still_decide(tmp_path: Path, passes: bool) -> None:
    rows = pool(7, passes, MODELS_OWN, 0.03)
    got = route_rows(write_rows(tmp_path, rows, "jsonl"), MODEL)
    if passes:  # counted as failures they split the saturated tasks
        assert got.provisional and "left_out_decides" in finding_kinds(got)
    else:  # a floor's failures counted as failures leave it a floor
        assert (got.route, got.provisional) == ("floor", False)


@pytest.mark.parametrize(
    ("text", "failed"),
    [
        ("RateLimitError: 429 Too Many Requests", True),
        ("Error code: 529 - overloaded", True),
        ("HTTP 502", True),
        ("503", True),
        ("rate_limited", True),
        ('{"type": "overloaded_error"}', True),
        ("APIConnectionError: Connection reset by peer", True),
        ("Resource has been exhausted (e.g. check quota).", True),
        ("ContextWindowExceededError: maximum context length is 8192 tokens", False),
        ("Request timed out.", False),
        ("TimeoutError", False),
        ("NameError: name 'x' is not defined", False),
        ("400 Bad Request", False),
        ("expected 500 rows, got 3", False),
    ],
)
def test_which_errors_name_a_failed_request(text: str, failed: bool) -> None:
    got = pl.select(facts.failed_request(pl.lit(text))).item()
    assert got is failed


@pytest.mark.parametrize("place", range(len(FAILED)))
def test_errors_first_written_past_the_sample_are_errors(tmp_path: Path, place: int) -> None:
    """An API that began to fail partway through a run writes its error fields only on rows
    well past the first thousand: each place is read wherever it first appears."""
    put, reply = FAILED[place]
    rows = pool(3, True, [], 0.0)
    late = list(range(4000, 12000, 97))
    for i in late:
        rows[i].update(put, reward=None, completion=reply)
    got = route_rows(write_rows(tmp_path, rows, "jsonl"), MODEL)
    errors = next(f for f in got.data_quality if f.kind == "errors")
    assert errors.count == len(late), (put, reply)
    assert "ungraded" not in finding_kinds(got)
