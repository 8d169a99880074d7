"""Rows with no task id are keyed by their prompt (DESIGN section 1), and the prompt is every
prompt field the rows carry: a shared instruction template in ``prompt`` beside the task's
own text in ``question`` (``problem``, ``input``, a chat list in ``messages``) is one task per
question, not one per template. The generator writes pools of known tasks with the task text
in one field and 1 to 40 templates in another, in either order of the fields and either
encoding; the tasks read are the tasks written."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rows_files import write_rows
from whilecli.io.read import read_rows
from whilecli.route.pool import summarize

PAIRS = [("prompt", "question"), ("instruction", "input"), ("prompt", "problem")]


@settings(max_examples=12, deadline=None)
@given(
    pair=st.sampled_from(PAIRS),
    templates=st.sampled_from([1, 3, 40]),
    kind=st.sampled_from(["jsonl", "parquet"]),
    seed=st.integers(0, 2**16),
)
def test_every_prompt_field_keys_the_task(
    tmp_path_factory: pytest.TempPathFactory,
    pair: tuple[str, str],
    templates: int,
    kind: str,
    seed: int,
) -> None:
    rnd = random.Random(seed)
    shared, own = pair
    rows: list[dict[str, Any]] = []
    for t in range(120):
        template = f"Template {t % templates}: answer in a box."
        for j in range(4):
            rows.append({shared: template, own: f"What is {t} * {t + 3}?",
                         "reward": float(rnd.random() < 0.5), "completion": f"{t}.{j}"})  # fmt: skip
    got = read_rows([str(write_rows(tmp_path_factory.mktemp("keys"), rows, kind))])
    pool = summarize(got)
    assert pool.n_tasks == 120
    assert sorted(set(pool.tasks["n"].to_list())) == [4]


def test_one_prompt_field_keys_as_before(tmp_path_factory: pytest.TempPathFactory) -> None:
    rows = [{"prompt": f"q{t}", "reward": float(j % 2), "completion": f"{t}.{j}"}
            for t in range(30) for j in range(4)]  # fmt: skip
    got = read_rows([str(write_rows(tmp_path_factory.mktemp("one"), rows, "jsonl"))])
    assert summarize(got).n_tasks == 30
    assert got.sources["task_id"] == "hash of prompt text (prompt)"


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_a_prompt_field_of_its_own_on_every_draw_keys_nothing(
    tmp_path_factory: pytest.TempPathFactory, kind: str
) -> None:
    """Few-shot examples drawn per draw (or the prompt and its reply) in ``input``: a value
    of its own on every row beside a ``question`` that repeats; keyed by it, each draw would
    be a task of its own."""
    rnd = random.Random(4)
    rows = [{"question": f"What is {t} + {t}?", "input": f"shots {t}.{j}.{rnd.random()}",
             "reward": float(rnd.random() < 0.5), "completion": f"{t}.{j}"}
            for t in range(100) for j in range(4)]  # fmt: skip
    got = read_rows([str(write_rows(tmp_path_factory.mktemp("own"), rows, kind))])
    pool = summarize(got)
    assert pool.n_tasks == 100
