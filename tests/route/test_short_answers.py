"""Sampled draws over a small answer space (a letter of four, a number, one short sentence)
agree by chance: a confident model sampled at temperature 1 gives ``B`` eight times of
eight on most tasks. Read as one draw repeated (greedy decoding, a cache), they left the band
unmeasured and routed FlashReinforce with "sample at temperature > 0"; read as one draw
written twice, they left a sampled pool provisional (DESIGN section 1, identical draws).

The generator draws pools from a known truth: per task, a distribution over 2 to 6 answers
(concentrated or flat), k draws, written as the answer alone or in a short sentence.
Sampled, the truth is that every draw is a draw: the band is measured and nothing is said of
repeats. Decoded greedily (every draw of a task the same answer, a few tasks flipped once
by batch nondeterminism), the truth is one draw repeated, whatever the answer space. A cache
that repeats long replies on some tasks of a sampled pool still repeats them: those replies
are each task's own.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.rows_files import finding_kinds, route_rows, write_rows

from whilecli.io.read import read_rows
from whilecli.route.simulate import Tally, Truth, run_truth

MODEL = "Qwen/Qwen3-8B"
REPEATS = {"repeated_draws", "some_repeated_draws", "repeated_rows", "some_repeated_rows"}


def _answer(choice: int, style: str) -> str:
    return {"letter": "ABCDEF"[choice], "number": str(17 * choice + 3)}.get(
        style, f"The answer is ({'ABCDEF'[choice]})."
    )


def _pool(
    seed: int, tasks: int, k: int, options: int, concentration: float, style: str, greedy: bool
) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rows = []
    for t in range(tasks):
        weights = [rng.gammavariate(concentration, 1.0) + 1e-12 for _ in range(options)]
        gold = rng.randrange(options)
        top = max(range(options), key=lambda i: weights[i])
        flipped = greedy and rng.random() < 0.03  # batch nondeterminism, once
        for j in range(k):
            if greedy:
                choice = (top + 1) % options if flipped and j == 0 else top
            else:
                choice = rng.choices(range(options), weights)[0]
            rows.append(
                {
                    "task_id": f"q{t}",
                    "prompt": f"Question {t}: which is right?",
                    "completion": _answer(choice, style),
                    "reward": float(choice == gold),
                    "model": MODEL,
                }
            )
    return rows


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10**6),
    tasks=st.integers(150, 400),
    k=st.sampled_from([4, 8, 16]),
    options=st.integers(2, 6),
    concentration=st.sampled_from([0.1, 0.3, 1.0, 3.0]),
    style=st.sampled_from(["letter", "number", "sentence"]),
    greedy=st.booleans(),
    fmt=st.sampled_from(["jsonl", "parquet"]),
)
def test_short_answers_are_draws_when_sampled_and_one_when_greedy(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    tasks: int,
    k: int,
    options: int,
    concentration: float,
    style: str,
    greedy: bool,
    fmt: str,
) -> None:
    rows = _pool(seed, tasks, k, options, concentration, style, greedy)
    varied = len({(r["task_id"], r["completion"]) for r in rows}) - tasks
    path = write_rows(tmp_path_factory.mktemp("short"), rows, fmt)
    found = read_rows([str(path)]).facts
    route = route_rows(path, MODEL)
    if greedy:
        assert found.repeated_tasks >= 0.9 * tasks
        assert "repeated_draws" in finding_kinds(route), route.headline
        return
    if varied < 0.1 * tasks:  # a sampler this sure of every answer looks greedy: no claim
        return
    assert found.repeated_tasks == 0
    assert found.repeated_rows == 0
    assert not REPEATS & set(finding_kinds(route)), (route.headline, finding_kinds(route))


@pytest.mark.parametrize("cached", [0.5, 0.95])
def test_a_cache_of_long_replies_repeats_them_beside_short_sampled_answers(
    tmp_path: Path, cached: float
) -> None:
    """Tasks whose k replies are one long reply of their own (a cache) are one draw repeated,
    whatever the other tasks' short answers share; where nearly every task is cached, the pool
    shows no sampler, and the short answers' agreement counts as repeats too."""
    rows = _pool(11, 300, 8, 4, 0.3, "letter", False)
    rng = random.Random(5)
    cached_tasks = {f"q{t}" for t in range(300) if rng.random() < cached}
    for row in rows:
        if row["task_id"] in cached_tasks:
            row["completion"] = f"Let me think about {row['task_id']} step by step ... so (B)."
    found = read_rows([str(write_rows(tmp_path, rows, "jsonl"))]).facts
    if cached < 0.9:  # the sampled tasks show a sampler: their agreement is chance
        assert found.repeated_tasks == len(cached_tasks)
    else:  # too few tasks apart to show one: every task of one reply is one draw
        assert found.repeated_tasks > len(cached_tasks)


def test_the_calibration_grid_short_answers_are_firm_where_plentiful_and_never_wrong() -> None:
    """The grid's region of short answers (:attr:`whilecli.route.simulate.Truth.answers`): at
    300 tasks every pool is firm, and no firm verdict disagrees with the truth."""
    total = Tally()
    for i, truth in enumerate([Truth("mid", 4, 300, answers=4), Truth("low", 8, 300, answers=2)]):
        total.add(run_truth(truth, 6, seed=i))
    assert total.firm_wrong == 0, total.wrong
    assert total.firm == total.draws
