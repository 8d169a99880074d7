"""An ``error`` field that holds what the model's own program did (the traceback of its code,
a failed test, a judge's verdict, a compile error) beside the model's reply is the model's
graded failure, not a harness error (DESIGN section 1: a harness error is recorded *instead
of* a reply). A harness error needs no reply, or a harness's words (HTTP 429/5xx, a rate
limit, a timeout, a lost connection, the context's length).

The generator is a seeded simulator of code-RL dumps with a known truth: tasks at rates
across the band, k draws each; each failing draw keeps its reply and carries one of the
program's errors (in several spellings) under an error field, and some draws are harness
failures (no reply, or a harness error text beside a reply). Read as JSON Lines and Parquet:
exactly the harness rows are errors, every program failure stays a graded failure; and the
probe's pools (most draws failing) route as the mixed band they are.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from read_helpers import frame_of
from rows_files import route_rows, write_rows

#: What the model's own program did, as code runners and judges write it.
PROGRAM = [
    'Traceback (most recent call last):\n  File "solution.py", line 3, in <module>\n'
    "NameError: name 'n' is not defined",
    'Traceback (most recent call last):\n  File "<string>", line 7, in solve\n'
    "IndexError: list index out of range",
    "AssertionError: expected 42, got 41",
    "AssertionError",
    "SyntaxError: invalid syntax (solution.py, line 2)",
    "ZeroDivisionError: division by zero",
    "RecursionError: maximum recursion depth exceeded in comparison",
    "Wrong Answer",
    "wrong answer on test 3",
    "Time Limit Exceeded",
    "Memory Limit Exceeded",
    "Runtime Error",
    "Compilation Error",
    "WA",
    "TLE",
    "FAILED tests/test_solution.py::test_edge - assert 3 == 4",
    "=== 2 failed, 5 passed in 0.31s ===",
    "main.cpp:3:5: error: 'x' was not declared in this scope",
    "error[E0308]: mismatched types",
]
#: A harness's own failure: an error whatever stands beside it.
HARNESS = [
    "Error code: 429 - rate limit exceeded",
    "openai.RateLimitError: Error code: 429",
    "ConnectionError: connection refused",
    "Request timed out.",
    "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.",
    'Traceback (most recent call last):\n  File "client.py", line 9, in call\n'
    "openai.APIConnectionError: Connection error.",
    "503 Service Unavailable",
]


def _pool(seed: int, field: str, low: float, high: float) -> tuple[list[dict], int, int]:
    """Rows of 60 tasks × 8 draws at rates in [low, high]; returns the rows, the harness
    error rows and the graded failures among the kept rows."""
    rnd = random.Random(seed)
    rows, harness, failures = [], 0, 0
    for t in range(60):
        p = rnd.uniform(low, high)
        for j in range(8):
            ok = rnd.random() < p
            row = {
                "task_id": f"q{t}",
                "reward": 1.0 if ok else 0.0,
                "completion": f"```python\n# {t} {j} {rnd.random():.6f}\n```",
                field: None,
            }
            roll = rnd.random()
            if roll < 0.05:  # the harness failed before any reply
                row[field], row["completion"], row["reward"] = (
                    rnd.choice(HARNESS + PROGRAM),
                    "",
                    0.0,
                )
                harness += 1
            elif roll < 0.08:  # the harness failed beside a reply, in its own words
                row[field], row["reward"] = rnd.choice(HARNESS), 0.0
                harness += 1
            elif not ok:
                row[field] = rnd.choice(PROGRAM)
                failures += 1
            rows.append(row)
    return rows, harness, failures


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@pytest.mark.parametrize("seed", range(4))
def test_program_errors_beside_a_reply_are_graded_failures(
    tmp_path: Path, kind: str, seed: int
) -> None:
    rows, harness, failures = _pool(seed, "error", 0.05, 0.95)
    frame, read = frame_of(write_rows(tmp_path, rows, kind))
    assert read.facts.errors == harness
    assert frame.height == len(rows) - harness
    assert int((frame["reward"] == 0).sum()) == failures


@pytest.mark.parametrize("seed", range(3))
def test_a_hard_code_pool_routes_as_its_band(tmp_path: Path, seed: int) -> None:
    """The probe's C3 pool: most draws fail, each with the model's error: a mixed band, GRPO;
    and its B3 neighbour at higher rates, not saturated."""
    for low, high in ((0.05, 0.6), (0.2, 0.95)):
        rows, _, _ = _pool(seed, "error", low, high)
        rows = [r for r in rows if r["completion"]]  # no harness failure at all
        for r in rows:
            if r["error"] in HARNESS:
                r["error"] = None
        route = route_rows(write_rows(tmp_path, rows, "jsonl"), "Qwen/Qwen3-8B")
        assert route.method == "grpo", (low, high, route.method)
        assert "errors" not in [f.kind for f in route.data_quality]


@pytest.mark.parametrize("text", PROGRAM)
def test_a_program_error_with_no_reply_is_a_harness_error(tmp_path: Path, text: str) -> None:
    """No reply: whatever the error says, the harness recorded it instead of one."""
    rows = [
        {"task_id": f"t{i // 4}", "reward": float(i % 3 == 0), "completion": f"r{i}", "error": None}
        for i in range(40)
    ]
    rows[5].update(error=text, completion="")
    frame, read = frame_of(write_rows(tmp_path, rows, "jsonl"))
    assert read.facts.errors == 1 and frame.height == 39
