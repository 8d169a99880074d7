"""A prompt's draws keyed one id each (DESIGN section 1: rows are counted after they are
looked at). Where the key is per draw only in a part of its own, a request's uuid or hash, a
run's timestamp, that part is no part of the task:

- a prompt text that differs per draw only in such a part (``[request 9f3a…] Solve 12``) is
  keyed without it, so a k = 8 pool is not read as 1600 one-rollout tasks;
- an id alias holding one id per row beside a column named for a prompt's id that no alias
  lists (``problem_idx``, ``questionIndex``) is keyed by that column.

The generator draws pools with a known k and the per-draw part in any of the forms and
places writers use; the other side holds prompts whose id-like part is the task's own (a
commit to review, one draw each), which stay one task each.
"""

from __future__ import annotations

import random
import re
import uuid
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import write_rows
from whilecli.io.draw_parts import DRAW_TIME, DRAW_TOKEN, DRAW_UUID, masked
from whilecli.io.read import read_rows
from whilecli.route import run_route
from whilecli.route.model import Route

SETTINGS = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
KINDS = ["uuid", "hash", "request", "time"]
PLACES = [
    "[request {own}] Solve problem {t}: what is {t} times {t3}?",
    "Solve problem {t}: what is {t} times {t3}? (trace {own})",
    "session={own}\nSolve problem {t}: what is {t} times {t3}?",
]


def _own(kind: str, rnd: random.Random) -> str:
    """A part one draw holds alone."""
    if kind == "uuid":
        return str(uuid.UUID(int=rnd.getrandbits(128)))
    if kind == "hash":
        return f"{rnd.getrandbits(64):016x}"[: rnd.choice([8, 12, 16])]
    if kind == "request":
        return "req_" + "".join(rnd.choice("ABCDEFGHJKabcdefghjk0123456789") for _ in range(20))
    return f"2026-11-{rnd.randint(1, 28):02d} {rnd.randint(0, 23):02d}:{rnd.randint(0, 59):02d}:07"


def _pool(seed: int, tasks: int, k: int, kind: str, place: str, chat: bool) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    rows = []
    for t in range(tasks):
        p = rnd.random()
        for _ in range(k):
            text = place.format(own=_own(kind, rnd), t=t, t3=t + 3)
            prompt: Any = [{"role": "user", "content": text}] if chat else text
            rows.append(
                {
                    "prompt": prompt,
                    "completion": f"{rnd.random()}",
                    "reward": float(rnd.random() < p),
                }
            )
    rnd.shuffle(rows)
    return rows


def _tasks(path: Path) -> pl.DataFrame:
    frame = read_rows([str(path)]).frame.collect()
    return frame.group_by("task_id").len()


@SETTINGS
@given(
    kind=st.sampled_from(KINDS),
    place=st.sampled_from(PLACES),
    k=st.integers(2, 8),
    tasks=st.integers(30, 120),
    chat=st.booleans(),
    fmt=st.sampled_from(["jsonl", "parquet"]),
    seed=st.integers(0, 2**16),
)
def test_a_prompts_draws_that_differ_in_a_part_of_their_own_are_one_task(
    tmp_path_factory: pytest.TempPathFactory,
    kind: str,
    place: str,
    k: int,
    tasks: int,
    chat: bool,
    fmt: str,
    seed: int,
) -> None:
    rows = _pool(seed, tasks, k, kind, place, chat)
    got = _tasks(write_rows(tmp_path_factory.mktemp("parts"), rows, fmt))
    assert got.height == tasks
    assert set(got["len"].to_list()) == {k}


@pytest.mark.parametrize("k", [1, 4])
def test_prompts_whose_hash_is_the_task_stay_tasks(tmp_path: Path, k: int) -> None:
    rnd = random.Random(k)
    commits = [f"{rnd.getrandbits(40):010x}" for _ in range(300)]
    rows = [
        {
            "prompt": f"Review commit {c} of the repository.",
            "completion": f"{rnd.random()}",
            "reward": float(rnd.random() < 0.5),
        }
        for c in commits
        for _ in range(k)
    ]
    got = _tasks(write_rows(tmp_path, rows, "jsonl"))
    assert got.height == 300 and set(got["len"].to_list()) == {k}


@pytest.mark.parametrize("column", ["problem_idx", "questionIndex", "item_no", "prompt_key"])
@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_a_prompts_id_under_an_unlisted_name_keys_per_row_ids(
    tmp_path: Path, column: str, fmt: str
) -> None:
    rnd = random.Random(5)
    rows = [
        {
            "id": str(uuid.UUID(int=rnd.getrandbits(128))),
            column: t,
            "completion": f"{rnd.random()}",
            "reward": float(rnd.random() < 0.5),
        }
        for t in range(100)
        for _ in range(6)
    ]
    got = _tasks(write_rows(tmp_path, rows, fmt))
    assert got.height == 100 and set(got["len"].to_list()) == {6}


@pytest.mark.parametrize("column", ["sample_idx", "seed_id", "step_index", "batch_no"])
def test_a_draws_own_index_never_keys_tasks(tmp_path: Path, column: str) -> None:
    rnd = random.Random(6)
    rows = [
        {
            "id": f"t{t}-{j}",
            column: j,
            "completion": f"{rnd.random()}",
            "reward": float(rnd.random() < 0.5),
        }
        for t in range(100)
        for j in range(6)
    ]
    got = _tasks(write_rows(tmp_path, rows, "jsonl"))
    assert got.height == 600


def _masked_slowly(text: str) -> str:
    """The masking by Python's ``re``, one pattern after the other, as the module states it."""
    text = re.sub(DRAW_TIME, "#", re.sub(DRAW_UUID, "#", text))
    return re.sub(DRAW_TOKEN, r"\g<1>#\g<2>", text)


@given(st.text(max_size=60), st.sampled_from(KINDS), st.integers(0, 2**16))
def test_the_mask_is_its_patterns_applied_in_turn(text: str, kind: str, seed: int) -> None:
    for probe in (text, f"{text} {_own(kind, random.Random(seed))} {text}"):
        assert pl.select(masked(pl.lit(probe))).item() == _masked_slowly(probe)


def test_a_prompt_keyed_without_its_own_part_leaves_the_route_provisional(tmp_path: Path) -> None:
    rows = _pool(7, 120, 8, "uuid", PLACES[0], False)
    got = run_route(str(write_rows(tmp_path, rows, "jsonl")), model=None)
    assert isinstance(got, Route)
    assert got.route == "grpo" and got.provisional
    assert "prompt_ids_masked" in [f.kind for f in got.data_quality]


def test_commits_to_review_under_one_template_are_never_firm(tmp_path: Path) -> None:
    """Each commit a task of its own, one draw each, a few commits per repository: keyed
    without the hash they read as each repository's draws; either way, never firm."""
    rnd = random.Random(8)
    rows = [
        {
            "prompt": f"Review commit {rnd.getrandbits(40):010x} of repository {r}.",
            "completion": f"{rnd.random()}",
            "reward": float(rnd.random() < 0.5),
        }
        for r in range(150)
        for _ in range(rnd.randint(2, 6))
    ]
    got = run_route(str(write_rows(tmp_path, rows, "jsonl")), model=None)
    assert isinstance(got, Route)
    assert got.provisional
