"""Rows that keep no reply (null) beside replies of their own task, in a file that keeps
replies. A harness that wrote nothing on a timeout or a crash, scored 0 and said no error,
leaves a saturated pool's tasks split: it routed GRPO firmly on failures the model never
had. A writer that logs some replies only (some tasks', a sample of rows) leaves the same
nulls on graded draws. The grades tell them apart: where none of those rows passes while
their tasks' replies pass often enough that several passes were due, nothing was recorded.

The generator draws pools from a known writer: per task a pass rate, k draws, and one of
these writers: timeouts (a share of rows null and scored 0), some tasks logged, some rows
logged, only passing replies kept, a request's failure filed beside a partial reply scored 0
(under ``exception`` or a name of its own), or the same failure left beside replies graded
as they were (a retry's leftover). What reading finds is held to the plain-Python rule of
:mod:`facts_reference`; the truth is held where it is known: a writer that logged at random
rows that pass changes nothing, and a saturated pool's timeouts never route GRPO firmly.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.rows_files import finding_kinds, route_rows, write_rows

from facts_check import matches_reference
from whilecli.io.read import read_rows
from whilecli.route.pool import summarize

MODEL = "Qwen/Qwen3-8B"
WRITERS = ("timeouts", "some_tasks", "some_rows", "passes_only", "cut_short", "leftover")
#: Where a harness files a request's failure beside the reply (a name of its own, or
#: ``exception``), and what it says.
FAILURE_FIELDS = ("exception", "api_error", "llm_error", "metadata.error")
FAILURES = ("RateLimitError: Error code: 429", "APIConnectionError: Connection error.")


def _pool(
    seed: int, tasks: int, k: int, rates: list[float], writer: str, share: float
) -> list[dict[str, Any]]:
    rng, writes = random.Random(seed), random.Random(seed + 1)  # the grades, the writer
    rows = []
    for t in range(tasks):
        rate = rng.choice(rates)
        logged = writer != "some_tasks" or writes.random() >= share
        for j in range(k):
            passed = rng.random() < rate
            row: dict[str, Any] = {
                "task_id": f"t{t}",
                "prompt": f"question {t}",
                "completion": f"reply {t}.{j}",
                "reward": float(passed),
                "model": MODEL,
            }
            dropped = writes.random() < share
            if writer in ("cut_short", "leftover") and dropped:
                _file_failure(row, writes)
                if writer == "cut_short":  # the stream cut short, scored 0
                    row["completion"], row["reward"] = row["completion"][:7], 0.0
            elif writer == "timeouts" and dropped:
                row["completion"], row["reward"] = None, 0.0
            elif (
                (writer == "some_rows" and dropped)
                or (writer == "passes_only" and not passed)
                or not logged
            ):
                row["completion"] = None
            rows.append(row)
    return rows


def _file_failure(row: dict[str, Any], rng: random.Random) -> None:
    """A request's failure filed beside the row's reply, under one of :data:`FAILURE_FIELDS`."""
    name, said = rng.choice(FAILURE_FIELDS), rng.choice(FAILURES)
    if name.startswith("metadata."):
        row["metadata"] = {name.removeprefix("metadata."): said}
    else:
        row[name] = said


@st.composite
def pools(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    rates = draw(st.sampled_from([[1.0], [0.95, 1.0], [0.0, 0.5, 1.0], [0.2], [0.0]]))
    rows = _pool(
        draw(st.integers(0, 2**16)),
        draw(st.integers(2, 24)),
        draw(st.integers(2, 8)),
        rates,
        draw(st.sampled_from(WRITERS)),
        draw(st.sampled_from([0.05, 0.2, 0.4, 0.6])),
    )
    options = {
        "threshold": draw(st.sampled_from([None, 1.0, 0.5])),
        "missing": draw(st.sampled_from(["skip", "fail"])),
        "kind": draw(st.sampled_from(["jsonl", "parquet"])),
    }
    return rows, options


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pools())
def test_rows_without_reply_match_the_slow_reading(tmp_path: Path, case: tuple) -> None:
    matches_reference(tmp_path, case)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.integers(0, 2**16),
    st.sampled_from([[0.0, 0.5, 1.0], [0.3, 0.7], [0.9, 1.0]]),
    st.sampled_from(["some_tasks", "some_rows"]),
    st.sampled_from(["jsonl", "parquet"]),
)
def test_a_writer_that_logs_some_replies_changes_nothing(
    tmp_path: Path, seed: int, rates: list[float], writer: str, kind: str
) -> None:
    """Replies dropped at random, a passing one among them: the same counts as every reply
    kept."""
    kept = _pool(seed, 40, 6, rates, "none", 0.0)
    dropped = _pool(seed, 40, 6, rates, writer, 0.3)
    passing = next(r for r in dropped if r["reward"] == 1.0)
    passing["completion"] = None  # a pass the writer logged no reply of
    counts = []
    for name, rows in (("kept", kept), ("dropped", dropped)):
        (tmp_path / name).mkdir(exist_ok=True)
        read = read_rows([str(write_rows(tmp_path / name, rows, kind))])
        assert read.facts.errors == 0
        counts.append(sorted(summarize(read).tasks.select("task_id", "n", "passes").rows()))
    assert counts[0] == counts[1]


def test_a_saturated_pool_with_timeouts_is_not_split(tmp_path: Path) -> None:
    """Every task passes every draw the model wrote; a fifth of the rows are timeouts scored 0
    with no reply. Counted, they split nearly every task (GRPO, firm); left out, the pool is
    saturated, and the rows' share left out is listed before the checks."""
    for seed in range(3):
        rows = _pool(seed, 64, 8, [1.0], "timeouts", 0.2)
        (tmp_path / f"s{seed}").mkdir()
        route = route_rows(write_rows(tmp_path / f"s{seed}", rows, "jsonl"), MODEL)
        assert route.method != "grpo" or route.provisional
        assert "errors" in finding_kinds(route)


def test_passing_replies_kept_only_is_never_firm(tmp_path: Path) -> None:
    """A writer that keeps passing replies only reads as one whose failures are all nothing
    recorded: what those rows are decides, so the verdict is provisional."""
    rows = _pool(0, 64, 8, [0.3, 0.6, 0.9], "passes_only", 0.0)
    route = route_rows(write_rows(tmp_path, rows, "jsonl"), MODEL)
    assert route.provisional


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 2**16),
    rates=st.sampled_from([[1.0], [0.9, 1.0], [0.3, 0.7, 1.0]]),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_a_failed_request_beside_a_reply_it_cut_short(
    tmp_path: Path, seed: int, rates: list[float], kind: str
) -> None:
    """A rate limit or a lost connection filed beside a partial reply scored 0: a harness
    error, a request that failed at the API, whichever field holds it; the same failure
    filed beside replies graded as they were (a retry's leftover) changes nothing."""
    clean = _pool(seed, 60, 8, rates, "none", 0.0)
    counts = {}
    for writer in ("cut_short", "leftover"):
        (tmp_path / writer).mkdir(exist_ok=True)
        rows = _pool(seed, 60, 8, rates, writer, 0.2)
        read = read_rows([str(write_rows(tmp_path / writer, rows, kind))])
        filed = sum(
            1
            for r in rows
            if any(k in r for k in ("exception", "api_error", "llm_error", "metadata"))
        )
        if writer == "cut_short":
            assert read.facts.errors == read.facts.request_errors == filed
        else:
            assert read.facts.errors == 0
            counts[writer] = sorted(summarize(read).tasks.select("task_id", "n", "passes").rows())
    (tmp_path / "clean").mkdir(exist_ok=True)
    read = read_rows([str(write_rows(tmp_path / "clean", clean, kind))])
    assert counts["leftover"] == sorted(
        summarize(read).tasks.select("task_id", "n", "passes").rows()
    )
