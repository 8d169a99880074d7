"""A truncation signal of weaker standing never outvotes a finish reason the row records,
nor a token count under its cap (``io/plan.py::_truncation``; DESIGN section 1).

``is_reasoning_complete`` (about a ``<think>`` block), ``stop_type`` (an agent's turn limit as
often), ``response_clipped`` (text trimmed after the answer), ``exceed_max_length`` (a prompt
filter's flag) and ``stopped_limit`` are names other tools give to other things. A seeded
pool of clean draws, every row ``finish_reason: "stop"`` and/or ``completion_tokens`` well
under ``max_tokens``, each flag saying "cut" on a share of rows that pass, at the top level
and in ``metadata``, must route firm GRPO as it does without the flag. Neighbours: the same
flag beside a recorded ``finish_reason: "length"`` or a count at the cap is a cut (the reason
and the count decide, whatever the flag says), and where neither is recorded the flag still
cuts (``test_cut_spellings``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rows_files import route_rows, write_rows

MODEL = "Qwen/Qwen3-8B"
CAP = 2048

#: Each weak spelling of "cut off", as it says cut.
WEAK: dict[str, Callable[[], dict[str, Any]]] = {
    "is_reasoning_complete": lambda: {"is_reasoning_complete": False},
    "stop_type": lambda: {"stop_type": "limit"},
    "response_clipped": lambda: {"response_clipped": True},
    "exceed_max_length": lambda: {"exceed_max_length": True},
    "stopped_limit": lambda: {"stopped_limit": True},
}
#: What the row records beside the flag: a reason, a count under the cap, or both.
RECORDS: dict[str, Callable[[random.Random], dict[str, Any]]] = {
    "reason": lambda rnd: {"finish_reason": "stop"},
    "count": lambda rnd: {"completion_tokens": rnd.randint(80, 400), "max_tokens": CAP},
    "both": lambda rnd: {
        "finish_reason": "stop",
        "completion_tokens": rnd.randint(80, 400),
        "max_tokens": CAP,
    },
}


def pool(seed: int, flag: str, record: str, share: float, place: str) -> list[dict[str, Any]]:
    """120 tasks of 4 clean draws at mixed rates; ``flag`` says cut on ``share`` of them."""
    rnd = random.Random(seed)
    rows = []
    for t in range(120):
        p = rnd.choice([0.0, 0.25, 0.5, 0.75, 1.0, rnd.random()])
        for j in range(4):
            row = {"task_id": f"t{t}", "reward": float(rnd.random() < p), "model": MODEL}
            row |= {"completion": f"{t} {j} {rnd.random():.9f}", **RECORDS[record](rnd)}
            if rnd.random() < share:
                said = WEAK[flag]()
                row |= {place: said} if place else said
            rows.append(row)
    return rows


@pytest.mark.parametrize("place", ["", "metadata"])
@pytest.mark.parametrize("record", sorted(RECORDS))
@pytest.mark.parametrize("flag", sorted(WEAK))
@pytest.mark.parametrize("share", [0.25, 1.0])
def test_a_weak_flag_never_outvotes_a_normal_stop(
    tmp_path: Path, flag: str, record: str, place: str, share: float
) -> None:
    rows = pool(int(share * 100) + len(flag), flag, record, share, place)
    got = route_rows(write_rows(tmp_path, rows, "jsonl"), MODEL)
    assert got.route == "grpo" and not got.provisional, (flag, record, got.route)


@pytest.mark.parametrize("flag", sorted(WEAK))
def test_a_recorded_cut_still_cuts_beside_a_weak_flag(tmp_path: Path, flag: str) -> None:
    """The reason (``length``) or the count (at the cap) decides: cut passes → fix-reward."""
    for record in ({"finish_reason": "length"}, {"completion_tokens": CAP, "max_tokens": CAP}):
        rows = pool(7, flag, "reason", 0.0, "")
        for row in rows[::9]:
            if "max_tokens" in record:  # the count alone speaks (a reason would decide)
                row.pop("finish_reason")
            row.update({"reward": 1.0, **record, **WEAK[flag]()})
        folder = tmp_path / str(len(record))
        folder.mkdir()
        got = route_rows(write_rows(folder, rows, "jsonl"), MODEL)
        assert got.route == "fix-reward", (flag, record, got.route)


@pytest.mark.parametrize("flag", ["truncated", "is_truncated", "was_truncated", "hit_max_tokens"])
@pytest.mark.parametrize("place", ["", "metadata"])
def test_a_long_standing_flag_beside_a_stop_reason_still_cuts(
    tmp_path: Path, flag: str, place: str
) -> None:
    """A harness's own cut flag beside the API's ``stop`` (the context ran out around the
    reply, the API saw none): the two are of one standing, and a cut either records is a cut,
    so passes so flagged route fix-reward."""
    rows = pool(11, "stopped_limit", "reason", 0.0, "")
    for row in rows[::9]:
        said = {flag: True}
        row.update({"reward": 1.0, **({place: said} if place else said)})
    got = route_rows(write_rows(tmp_path, rows, "jsonl"), MODEL)
    assert got.route == "fix-reward", (flag, place, got.route)
