"""Replies cut at a cap no field records (findings ``cut_at_longest``, ``cut_at_longest_failing``):
a harness that writes ``truncated: false`` (or ``finish_reason: stop``) on every row, or no
flag at all, beside each reply's token count and no ``max_tokens``. Replies that reached the
cap all end at one count, the file's longest; lengths that end on their own spread over the
counts. Read by the flag, a cut-off reply that lands a keyword is a pass and check 1 holds.

The generator draws a pool whose natural lengths (log-normal) are cut at a cap, records
truncation one of three ways, and lets the cut replies pass or fail: where some pass, the
verdict is never firm; where none do, they are listed and the verdict is as without them.
Lengths with no cap never read as cut."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import write_rows
from whilecli.io.facts import longest_pile
from whilecli.route import run_route
from whilecli.route.model import Route

#: Where harnesses write a reply's token count (a dotted path is an object's key).
COUNT_FIELDS = ("completion_tokens", "usage.completion_tokens", "num_tokens", "response_length")
#: How truncation is recorded: a flag false on every row, a finish reason of stop on every
#: row, or nothing.
RECORDS = ("flag", "reason", "none")


def _put(row: dict[str, Any], path: str, value: object) -> None:
    holder = row
    *outer, last = path.split(".")
    for key in outer:
        holder = holder.setdefault(key, {})
    holder[last] = value


def _pool(
    seed: int,
    tasks: int,
    k: int,
    cap: int | None,
    cut_share: float,
    cut_pass: float,
    count_field: str,
    record: str,
) -> tuple[list[dict[str, Any]], int, int]:
    """A pool of ``tasks`` × ``k`` draws, each task at its own rate, whose reply lengths are
    log-normal with about ``cut_share`` of them past ``cap`` (None: no cap, every length as
    drawn); a cut reply passes with chance ``cut_pass``. Returns the rows, the cut rows and
    the cut rows that pass."""
    rng = random.Random(seed)
    sigma = rng.uniform(0.4, 1.0)
    # the median that puts cut_share of the lengths past the cap (a normal quantile)
    z = {0.05: 1.645, 0.1: 1.282, 0.2: 0.842, 0.4: 0.253}[cut_share]
    median = (cap or 2048) / math.exp(z * sigma)
    rows, cut, cut_passes = [], 0, 0
    for task in range(tasks):
        rate = rng.betavariate(0.8, 0.8)
        for draw in range(k):
            length = max(1, round(rng.lognormvariate(math.log(median), sigma)))
            reached = cap is not None and length >= cap
            ok = rng.random() < (cut_pass if reached else rate)
            row: dict[str, Any] = {
                "task_id": f"t{task}",
                "prompt": f"Solve {task}.",
                "completion": f"reply {task} {draw}",
                "reward": float(ok),
            }
            _put(row, count_field, min(length, cap) if cap is not None else length)
            if record == "flag":
                row["truncated"] = False
            elif record == "reason":
                row["finish_reason"] = "stop"
            rows.append(row)
            cut += reached
            cut_passes += reached and ok
    return rows, cut, cut_passes


def _kinds(route: Route) -> list[str]:
    return [f.kind for f in route.data_quality]


@settings(
    max_examples=24, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10_000),
    tasks=st.sampled_from([60, 250]),
    k=st.sampled_from([4, 8]),
    cap=st.sampled_from([256, 1024, 4096, 32768]),
    cut_share=st.sampled_from([0.05, 0.1, 0.2, 0.4]),
    count_field=st.sampled_from(COUNT_FIELDS),
    record=st.sampled_from(RECORDS),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_cut_replies_that_pass_at_an_unrecorded_cap_are_never_firm(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    tasks: int,
    k: int,
    cap: int,
    cut_share: float,
    count_field: str,
    record: str,
    kind: str,
) -> None:
    rows, cut, passes = _pool(seed, tasks, k, cap, cut_share, 0.5, count_field, record)
    # nothing a cut-off pass could hide; or too few cut rows for counts to tell a cap from a
    # long tail (five at the cap beside three just below it pile no higher than a tail does)
    if passes == 0 or cut < 8:
        return
    path = write_rows(tmp_path_factory.mktemp("longest"), rows, kind)
    route = run_route(str(path), model="Qwen/Qwen3-8B")
    assert isinstance(route, Route)
    assert route.provisional
    found = [f for f in route.data_quality if f.kind == "cut_at_longest"]
    assert len(found) == 1 and found[0].count == cut
    assert f"{cap} tokens" in found[0].found and count_field in found[0].found


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10_000),
    cap=st.sampled_from([1024, 4096]),
    record=st.sampled_from(RECORDS),
)
def test_cut_replies_that_all_fail_are_listed_and_move_nothing(
    tmp_path_factory: pytest.TempPathFactory, seed: int, cap: int, record: str
) -> None:
    rows, cut, _ = _pool(seed, 250, 4, cap, 0.2, 0.0, "completion_tokens", record)
    path = write_rows(tmp_path_factory.mktemp("failing"), rows, "jsonl")
    route = run_route(str(path), model="Qwen/Qwen3-8B")
    assert isinstance(route, Route)
    found = [f for f in route.data_quality if f.kind == "cut_at_longest_failing"]
    assert len(found) == 1 and found[0].count == cut
    assert "cut_at_longest" not in _kinds(route)
    for row in rows:  # the same pool without its counts: the verdict is the same
        row.pop("completion_tokens")
    plain = run_route(
        str(write_rows(tmp_path_factory.mktemp("plain"), rows, "jsonl")), model="Qwen/Qwen3-8B"
    )
    assert isinstance(plain, Route)
    assert (plain.route, plain.method) == (route.route, route.method)


@settings(
    max_examples=16, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10_000),
    tasks=st.sampled_from([60, 250, 1000]),
    k=st.sampled_from([1, 4, 8]),
    record=st.sampled_from(RECORDS),
)
def test_lengths_with_no_cap_never_read_as_cut(
    tmp_path_factory: pytest.TempPathFactory, seed: int, tasks: int, k: int, record: str
) -> None:
    rows, _, _ = _pool(seed, tasks, k, None, 0.05, 0.5, "completion_tokens", record)
    path = write_rows(tmp_path_factory.mktemp("natural"), rows, "jsonl")
    route = run_route(str(path), model="Qwen/Qwen3-8B")
    assert isinstance(route, Route)
    assert not {"cut_at_longest", "cut_at_longest_failing"} & set(_kinds(route))


def test_a_recorded_cut_or_cap_leaves_the_lengths_to_the_flag(tmp_path: Path) -> None:
    """A file that flags some row cut, or records the cap, says where its cuts are: the pile
    adds nothing (a count at a recorded cap is :func:`cut_disputed`'s)."""
    rows, _, _ = _pool(11, 250, 4, 1024, 0.2, 0.5, "completion_tokens", "flag")
    rows[0]["truncated"] = True
    route = run_route(str(write_rows(tmp_path, rows, "jsonl")), model="Qwen/Qwen3-8B")
    assert isinstance(route, Route)
    assert not {"cut_at_longest", "cut_at_longest_failing"} & set(_kinds(route))
    rows[0]["truncated"] = False
    for row in rows:
        row["max_tokens"] = 1024
    route = run_route(str(write_rows(tmp_path, rows, "jsonl")), model="Qwen/Qwen3-8B")
    assert isinstance(route, Route)
    assert "cut_disputed" in _kinds(route)
    assert not {"cut_at_longest", "cut_at_longest_failing"} & set(_kinds(route))


@pytest.mark.parametrize(
    ("longest", "at", "below", "tasks", "pile"),
    [
        (2048.0, 5, 0, 3, True),  # five replies at one count, none near: a cap
        (2048.0, 5, 0, 2, False),  # one or two tasks' repeated draws: not a cap
        (2048.0, 4, 0, 4, False),  # too few to tell
        (48.0, 40, 0, 30, False),  # short answers tie as often as not
        (1000.0, 12, 200, 10, False),  # 2 rows per count below it: 12 is no pile
        (1000.0, 15, 200, 10, True),  # 5 × (2 + 1)
        (None, 0, 0, 0, False),
    ],
)
def test_a_pile_stands_above_the_counts_below_it(
    longest: float | None, at: int, below: int, tasks: int, pile: bool
) -> None:
    assert longest_pile(longest, at, below, tasks) is pile
