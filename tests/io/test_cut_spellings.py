"""More spellings of "cut off at the token cap" (DESIGN section 1, truncation): llama.cpp
server's ``stop_type: "limit"`` and ``stopped_limit``, OpenR1's ``is_reasoning_complete``
(false: the reasoning never ended), ``response_clipped``, ``exceed_max_length``; each read at
the top level and in the row's extras. A seeded pool whose cut rows pass at 0.5 must route
"fix the reward" (a truncated pass), the same pool whose cut rows never pass must not; a bare
``clipped`` (a reward's or a ratio's as often) is not read.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rows_files import route_rows, write_rows

MODEL = "Qwen/Qwen3-8B"

SPELLINGS: dict[str, Callable[[bool], dict[str, Any]]] = {
    "stop_type": lambda cut: {"stop_type": "limit" if cut else "eos"},
    "llama.cpp": lambda cut: {"stopped_limit": cut, "stopped_eos": not cut},
    "is_reasoning_complete": lambda cut: {"is_reasoning_complete": not cut},
    "response_clipped": lambda cut: {"response_clipped": cut},
    "exceed_max_length": lambda cut: {"exceed_max_length": cut},
}


def pool(
    seed: int, spell: Callable[[bool], dict[str, Any]], cut_pass: float, place: str
) -> list[dict[str, Any]]:
    """300 tasks of 8 draws at a mid rate; 5% of draws cut, passing at ``cut_pass``."""
    rnd = random.Random(seed)
    rows = []
    for t in range(300):
        p = rnd.uniform(0.2, 0.8)
        for j in range(8):
            cut = rnd.random() < 0.05
            ok = rnd.random() < (cut_pass if cut else p)
            row = {"task_id": f"q{t}", "reward": float(ok), "model": MODEL}
            row["completion"] = f"{t} {j} {rnd.random():.9f}"
            flags = spell(cut)
            rows.append({**row, **({place: flags} if place else flags)})
    return rows


@pytest.mark.parametrize("place", ["", "metadata"])
@pytest.mark.parametrize("name", list(SPELLINGS))
def test_cut_spellings_are_read(
    tmp_path_factory: pytest.TempPathFactory, name: str, place: str
) -> None:
    spell = SPELLINGS[name]
    folder = tmp_path_factory.mktemp(name)
    got = route_rows(write_rows(folder, pool(5, spell, 0.5, place), "jsonl"), MODEL)
    assert got.route == "fix-reward", (name, got.route)
    never = route_rows(write_rows(folder, pool(5, spell, 0.0, place), "jsonl"), MODEL)
    assert never.route == "grpo" and not never.provisional, (name, never.route)


def test_a_bare_clipped_is_not_read(tmp_path: Path) -> None:
    rows = pool(5, lambda cut: {"clipped": cut}, 0.5, "")
    got = route_rows(write_rows(tmp_path, rows, "jsonl"), MODEL)
    assert got.route == "grpo"
