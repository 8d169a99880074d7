"""Truncation is read wherever the rows record it (DESIGN section 1, ``truncated``): an OpenAI
Responses API's ``status: "incomplete"`` (at the top level or in ``response``, with or
without its ``incomplete_details``), a multi-turn row's list of turns or steps (the last
turn's finish reason decides the episode), and a finish reason filed in any object a sampler
keeps beside the reply (``generation_metadata``, ``response_metadata``, a harness's own).
Before, each read as "not recorded", and cut-off replies that passed went unseen.

The generator draws pools from a known truth (each row cut off or not, some cut rows
passing), writes each row's end the ways writers record it, and routes them: a cut-off pass
is always found (fix the reward), and the number of cut rows is the truth's. Neighbours hold
too: a Responses API response left incomplete by a content filter is not cut, an earlier
turn's cut is not the episode's, and a finish reason the reader does not follow (a judge's)
leaves truncation unknown in words that say the field was not read, never "not recorded".
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import route_rows, write_rows

MODEL = "Qwen/Qwen3-8B"
SETTINGS = settings(
    max_examples=16,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _reason(cut: bool) -> str:
    return "length" if cut else "stop"


#: How writers record whether a row was cut off (``cut``) and what it says.
WRITERS: dict[str, Callable[[bool], dict[str, Any]]] = {
    "status_details": lambda cut: {
        "status": "incomplete" if cut else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
    },
    "response_status": lambda cut: {
        "response": {"status": "incomplete" if cut else "completed", "output_text": "x"}
    },
    "turns": lambda cut: {
        "turns": [{"role": "assistant", "finish_reason": "stop"}, {"finish_reason": _reason(cut)}]
    },
    "steps": lambda cut: {"steps": [{"finish_reason": "stop"}, {"finish_reason": _reason(cut)}]},
    "trajectory_stop_reason": lambda cut: {
        "trajectory": [
            {"stop_reason": "end_turn"},
            {"stop_reason": "max_tokens" if cut else "end_turn"},
        ]
    },
    "generation_metadata": lambda cut: {"generation_metadata": {"finish_reason": _reason(cut)}},
    "response_metadata": lambda cut: {"response_metadata": {"finish_reason": _reason(cut)}},
    "own_object": lambda cut: {"sampler_out": {"stop_reason": "max_tokens" if cut else "eos"}},
}
#: Neighbours whose cut-looking record is no cut of the reply: (writer, what it says).
NOT_CUT: dict[str, dict[str, Any]] = {
    "content_filter": {"status": "incomplete", "incomplete_details": {"reason": "content_filter"}},
    "earlier_turn": {"turns": [{"finish_reason": "length"}, {"finish_reason": "stop"}]},
    "earlier_step": {"steps": [{"finish_reason": "length"}, {"finish_reason": "stop"}]},
}


def _pool(
    seed: int, tasks: int, write: Callable[[int, bool], dict[str, Any]]
) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    rows = []
    for t in range(tasks):
        p = rnd.uniform(0.2, 0.8)
        for s in range(4):
            cut = rnd.random() < 0.15
            rows.append(
                {
                    "task_id": f"t{t}",
                    "prompt": f"Solve {t}.",
                    "completion": f"reply {t} {s} {rnd.random():.6f}",
                    "reward": float(rnd.random() < p),
                    "model": MODEL,
                    **write(s, cut),
                    "__cut": cut,
                }
            )
    return rows


def _holds(row: dict[str, Any], record: dict[str, Any]) -> bool:
    """Whether ``row`` holds ``record``'s every field as written."""
    return all(row.get(k) == v for k, v in record.items())


def _check(route: Any, key: str) -> Any:
    return next(c for c in route.checks if c.key == key)


@SETTINGS
@given(
    writer=st.sampled_from(sorted(WRITERS)),
    tasks=st.integers(40, 120),
    fmt=st.sampled_from(["jsonl", "parquet"]),
    seed=st.integers(0, 2**16),
)
def test_a_cut_recorded_anywhere_is_read(
    tmp_path_factory: pytest.TempPathFactory, writer: str, tasks: int, fmt: str, seed: int
) -> None:
    rows = _pool(seed, tasks, lambda _s, cut: WRITERS[writer](cut))
    cut = sum(r.pop("__cut") for r in rows)
    cut_passes = sum(1 for r in rows if _holds(r, WRITERS[writer](True)) and r["reward"])
    got = route_rows(write_rows(tmp_path_factory.mktemp("cut"), rows, fmt), MODEL)
    measured = _check(got, "truncated_passes").measured
    assert measured["rows_with_truncation_recorded"] == len(rows)
    assert measured["truncated_rows"] == cut
    assert measured["truncated_passes"] == cut_passes
    assert (got.route == "fix-reward") == (cut_passes > 0)


@SETTINGS
@given(
    neighbour=st.sampled_from(sorted(NOT_CUT)),
    writer=st.sampled_from(sorted(WRITERS)),
    tasks=st.integers(40, 120),
    seed=st.integers(0, 2**16),
)
def test_a_record_that_is_no_cut_is_not_read_as_one(
    tmp_path_factory: pytest.TempPathFactory, neighbour: str, writer: str, tasks: int, seed: int
) -> None:
    """The neighbours on some rows, the writer's own record of the rest (a pool of both):
    only the writer's cut rows are cut."""

    def write(s: int, cut: bool) -> dict[str, Any]:
        return dict(NOT_CUT[neighbour]) if s == 0 else WRITERS[writer](cut)

    rows = _pool(seed, tasks, write)
    for r in rows:
        r.pop("__cut")
    cut = sum(1 for r in rows if _holds(r, WRITERS[writer](True)))
    got = route_rows(write_rows(tmp_path_factory.mktemp("near"), rows, "jsonl"), MODEL)
    assert _check(got, "truncated_passes").measured["truncated_rows"] == cut


@pytest.mark.parametrize("neighbour", sorted(NOT_CUT))
def test_each_neighbour_alone_reads_as_not_cut(
    tmp_path_factory: pytest.TempPathFactory, neighbour: str
) -> None:
    rows = _pool(1, 60, lambda _s, _cut: dict(NOT_CUT[neighbour]))
    for r in rows:
        r.pop("__cut")
    got = route_rows(write_rows(tmp_path_factory.mktemp("alone"), rows, "jsonl"), MODEL)
    measured = _check(got, "truncated_passes").measured
    assert measured["truncated_rows"] == 0
    assert measured["rows_with_truncation_recorded"] == len(rows)


@pytest.mark.parametrize("holder", ["judge", "grader_output", "tool_result"])
def test_a_reason_not_followed_is_said_not_read(
    tmp_path_factory: pytest.TempPathFactory, holder: str
) -> None:
    """A finish reason under a judge's or a tool's object is not the reply's: truncation stays
    unknown, and the headline names the field as not read, never "not recorded"."""
    rows = _pool(2, 60, lambda _s, cut: {holder: {"finish_reason": _reason(cut)}})
    for r in rows:
        r.pop("__cut")
    got = route_rows(write_rows(tmp_path_factory.mktemp("unread"), rows, "jsonl"), MODEL)
    check = _check(got, "truncated_passes")
    assert check.measured["rows_with_truncation_recorded"] == 0
    assert check.measured["truncation_unread"] == f"{holder}.finish_reason"
    assert "not recorded" not in got.headline
    assert f"{holder}.finish_reason not read" in got.headline


@pytest.mark.parametrize("word", ["completed", "incomplete", "success"])
def test_a_top_level_status_alone_is_any_harness_word(tmp_path: Path, word: str) -> None:
    """A ``status`` at the top level with no Responses API ``incomplete_details`` beside it
    is a harness's word (an episode ``completed``), not a record of the reply's end:
    truncation stays unknown, never read as "not cut"."""
    rows = _pool(5, 60, lambda _s, _cut: {"status": word})
    for row in rows:
        row.pop("__cut")
    got = route_rows(write_rows(tmp_path, rows, "jsonl"), MODEL)
    assert _check(got, "truncated_passes").measured["rows_with_truncation_recorded"] == 0
