"""A harness that retries a failed attempt writes both rows, under the same task and the same
sample index (DESIGN section 1, what a row means). Counted as two draws, the failed attempt
splits a task its draws all pass: a pool of tasks that always pass read as firm GRPO.

The generator draws pools from a known truth (tasks that always pass, always fail, or pass
at a drawn rate; k draws each, numbered by ``sample_idx``), writes a failed attempt before
a share of the draws the ways harnesses mark one (``attempt`` from 1 or from 0,
``retry_count``, ``is_retry``, ``retry_of``), and routes them:

- with an attempt column, the last attempt of each (task, sample index) is the draw: the
  route is the route of the truth's rows, and the earlier attempts are counted and listed;
- where the failed attempts carry a value no final attempt holds and some retries are lost
  (the failed attempt stands alone), those attempts are left out too and the verdict is
  provisional (the draws they stood for are missing);
- with no attempt column, a repeated (task, sample index) is counted as a draw, never
  firmly: the ``repeated_rows`` finding leaves the verdict provisional;
- neighbours: an attempt column with no retry, and a sample index with no repeat, change
  nothing.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from facts_reference import expected
from rows_files import finding_kinds, route_rows, write_rows
from whilecli.io.read import read_rows

MODEL = "Qwen/Qwen3-8B"
SETTINGS = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

#: How a harness marks a failed attempt and its retry: (failed, retry, a draw not retried).
STYLES: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {
    "attempt": ({"attempt": 1}, {"attempt": 2}, {"attempt": 1}),
    "attempt_from_0": ({"attempt_idx": 0}, {"attempt_idx": 1}, {"attempt_idx": 0}),
    "retry_count": ({"retry_count": 0}, {"retry_count": 1}, {"retry_count": 0}),
    "is_retry": ({"is_retry": False}, {"is_retry": True}, {"is_retry": False}),
    "retry_of": ({"retry_of": None}, {"retry_of": "first"}, {"retry_of": None}),
    # a value that marks failed attempts only, every other row at the final one
    "marked": ({"attempt": 0}, {"attempt": 1}, {"attempt": 1}),
    "none": ({}, {}, {}),
}
#: What a failed attempt keeps: a stream cut short, or nothing.
FAILED_REPLIES = ["Let me think about problem {t}. First I compute", ""]


def _pool(
    seed: int, tasks: int, k: int, mix: str, share: float, style: str, lost: float
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the rows written, the truth's rows: each draw once, the lost ones left out)."""
    rnd = random.Random(seed)
    failed, retry, plain = STYLES[style]
    rows: list[dict[str, Any]] = []
    truth: list[dict[str, Any]] = []
    for t in range(tasks):
        u = rnd.random()
        if mix == "saturated":
            p = 1.0 if u < 0.85 else rnd.uniform(0.2, 0.8)
        elif mix == "ends":
            p = float(u < 0.5)
        else:
            p = rnd.uniform(0.2, 0.8)
        for s in range(k):
            base = {"task_id": f"t{t}", "prompt": f"Solve {t}.", "sample_idx": s, "model": MODEL}
            draw = {**base, "completion": f"reply {t} {s} {rnd.random():.8f}"}
            draw["reward"] = float(rnd.random() < p)
            if rnd.random() < share:
                text = rnd.choice(FAILED_REPLIES).format(t=t)
                rows.append({**base, "completion": text, "reward": 0.0, **failed})
                if rnd.random() < lost:
                    continue  # the retry was never written: its draw is missing
                rows.append({**draw, **retry})
            else:
                rows.append({**draw, **plain})
            truth.append(draw)
    return rows, truth


@SETTINGS
@given(
    style=st.sampled_from(sorted(STYLES)),
    mix=st.sampled_from(["saturated", "ends", "split"]),
    share=st.sampled_from([0.0, 0.1, 0.3]),
    lost=st.sampled_from([0.0, 0.5]),
    tasks=st.integers(60, 160),
    k=st.sampled_from([4, 8]),
    fmt=st.sampled_from(["jsonl", "parquet"]),
    seed=st.integers(0, 2**16),
)
def test_a_retried_draw_is_its_last_attempt(
    tmp_path_factory: pytest.TempPathFactory,
    style: str,
    mix: str,
    share: float,
    lost: float,
    tasks: int,
    k: int,
    fmt: str,
    seed: int,
) -> None:
    # a lost retry is told apart only where failed attempts carry a value of their own
    lost = lost if style == "marked" else 0.0
    rows, truth_rows = _pool(seed, tasks, k, mix, share, style, lost)
    path = write_rows(tmp_path_factory.mktemp("tried"), rows, fmt)
    facts = read_rows([str(path)]).facts
    want = expected(rows, kind=fmt)
    assert (facts.retried, facts.retry_lost) == (want.retried, want.retry_lost)
    assert facts.repeated_samples == want.repeated_samples
    assert facts.counted == sum(n for n, _ in want.tasks.values())
    assert facts.errors == want.errors
    got = route_rows(path, MODEL)
    truth = route_rows(write_rows(tmp_path_factory.mktemp("truth"), truth_rows, fmt), MODEL)
    kinds = finding_kinds(got)
    if style == "none":  # no column says which row is the draw: never firm on both
        assert facts.retried == facts.retry_lost == 0
        if facts.repeated_samples >= 0.05 * facts.counted:
            assert got.provisional and "repeated_rows" in kinds
        return
    assert facts.repeated_samples == 0
    assert ("earlier_attempts" in kinds) == (facts.retried > 0)
    assert got.method == truth.method
    assert got.route == truth.route
    if facts.retry_lost:
        assert got.provisional and "lost_retries" in kinds
    elif not truth.provisional:
        assert not got.provisional


def test_turns_sharing_a_sample_index_are_no_retries(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Rows that are the turns of one episode share its sample index: read as turns, never as
    attempts of the draw."""
    rows = [
        {
            "task_id": f"t{t}",
            "prompt": f"Solve {t}.",
            "sample_idx": s,
            "turn": turn,
            "completion": f"turn {turn} of {t} {s}",
            "reward": float(s % 2) if turn == 2 else 0.0,
            "model": MODEL,
        }
        for t in range(40)
        for s in range(4)
        for turn in range(3)
    ]
    path = write_rows(tmp_path_factory.mktemp("turns"), rows, "jsonl")
    try:
        facts = read_rows([str(path)]).facts
    except Exception:  # a file of turns may be refused as such: never read as retries
        return
    assert facts.retried == facts.retry_lost == facts.repeated_samples == 0
