"""A harness's placeholder in place of the reply (``ERROR``, ``timeout``, ``<failed>``),
scored 0, with no error field and no more text than a word or two naming the failure. Counted as the
model's, a saturated pool's placeholders split its tasks: it routed GRPO firmly on failures
the model never had. The same text written in many tasks and passing in none, where its
tasks' other replies pass often, answers none of their prompts: read as the harness's errors,
as a null reply is. The same reply naming no failure (``The answer is 7.``) is the model's.

The generator draws pools of known truth: per task a pass rate, k draws, a share of draws
replaced by one placeholder (or by short answers that recur across tasks by chance, which
some task credits: ``B``, ``42``), JSON Lines or Parquet. What reading finds is held to the
plain-Python rule of :mod:`facts_reference`; the truth where it is known: a saturated pool's
placeholders never route GRPO firmly, and short answers stay the model's.
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

MODEL = "Qwen/Qwen3-8B"
#: What harnesses write in place of a reply they did not get.
PLACEHOLDERS = ("ERROR", "error", "[ERROR]", "<failed>", "TIMEOUT", "no response", "N/A ")
#: Replies a model writes alike in many tasks, failing, that name no failure: its own.
ANSWERS = ("The answer is 7.", "a1")


def _pool(
    seed: int, tasks: int, k: int, rates: list[float], share: float, put: str | None
) -> list[dict[str, Any]]:
    """``put``: the placeholder written in ``share`` of the draws (scored 0); None: short
    answers, a letter each, the task's own where the draw passes."""
    rng, writes = random.Random(seed), random.Random(seed + 1)
    rows = []
    for t in range(tasks):
        rate, gold = rng.choice(rates), "ABCD"[t % 4]
        for j in range(k):
            passed = rng.random() < rate
            if put is None:
                text = gold if passed else rng.choice([c for c in "ABCD" if c != gold])
            else:
                text = f"reply {t}.{j}: the answer is {rng.randrange(10**6)}"
            row = {"task_id": f"t{t}", "prompt": f"question {t}", "completion": text,
                   "reward": float(passed), "model": MODEL}  # fmt: skip
            if put is not None and writes.random() < share:
                row["completion"], row["reward"] = put, 0.0
            rows.append(row)
    return rows


@st.composite
def pools(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    rates = draw(st.sampled_from([[1.0], [0.95, 1.0], [0.0, 0.5, 1.0], [0.2], [0.0]]))
    rows = _pool(
        draw(st.integers(0, 2**16)),
        draw(st.integers(2, 40)),
        draw(st.integers(2, 8)),
        rates,
        draw(st.sampled_from([0.05, 0.2, 0.4])),
        draw(st.sampled_from([*PLACEHOLDERS, *ANSWERS, None])),
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
def test_placeholder_replies_match_the_slow_reading(tmp_path: Path, case: tuple) -> None:
    matches_reference(tmp_path, case)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 2**16),
    put=st.sampled_from(PLACEHOLDERS),
    share=st.sampled_from([0.05, 0.1, 0.2]),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_a_saturated_pool_with_placeholders_is_not_split(
    tmp_path: Path, seed: int, put: str, share: float, kind: str
) -> None:
    """Every draw the model wrote passes; a share of the rows are a placeholder scored 0.
    Counted, they split the tasks (GRPO, firm); read as errors, the pool is saturated."""
    rows = _pool(seed, 200, 8, [1.0], share, put)
    route = route_rows(write_rows(tmp_path, rows, kind), MODEL)
    assert route.method != "grpo" or route.provisional, route.headline
    assert "errors" in finding_kinds(route)


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**16), kind=st.sampled_from(["jsonl", "parquet"]))
def test_short_answers_that_recur_across_tasks_stay_the_models(
    tmp_path: Path, seed: int, kind: str
) -> None:
    """A wrong letter recurs in many tasks and fails there, but is another task's answer:
    credited somewhere, so no placeholder; every row is counted."""
    rows = _pool(seed, 200, 8, [0.3, 0.6, 0.9], 0.0, None)
    read = read_rows([str(write_rows(tmp_path, rows, kind))])
    assert read.facts.errors == 0


def test_a_repeated_answer_that_names_no_failure_stays_the_models(tmp_path: Path) -> None:
    """A wrong answer written alike in every task, scored 0 beside passing draws: the
    model's own failure, counted (the grades alone would read it as a placeholder)."""
    rows = _pool(3, 200, 8, [1.0], 0.2, "The answer is 7.")
    read = read_rows([str(write_rows(tmp_path, rows, "jsonl"))])
    assert read.facts.errors == 0
