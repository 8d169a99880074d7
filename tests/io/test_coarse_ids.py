"""Task ids coarser than the tasks: an id that names a dataset or a category (``task_id:
"aime24"`` on every row, ``task_id: "algebra"``) beside a column that numbers the questions,
in rows with no prompt to check the ids against. Read by the ids, each task mixes several
questions' draws and splits wherever they differ: a pool of questions each solved always or
never routed GRPO firmly on 40 "split tasks" that give no gradient.

The generator draws pools from a known truth: questions with a pass rate at 0 or 1 (or
spread), k draws each, keyed by a dataset, by a category, or by the question itself, and a
column numbering the questions under a harness's name (at the top level or under
``metadata``), numbered across the pool or anew within each id. The column holds
whole numbers or text (``item-12``). A per-draw number (``sample_idx``) or a per-row id beside right ids is the control. The truth: the ids are
coarse where they key a dataset or a category; the route then names the column and is never
firm, and with right ids nothing is said.
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

MODEL = "Qwen/Qwen3-8B"
#: A prompt's id under names no alias lists (:func:`whilecli.io.aliases.names_a_prompts_id`).
ITEM_NAMES = ["question_idx", "problem_idx", "doc_num", "itemIndex", "query_no", "prompt_index"]


def _pool(
    seed: int,
    questions: int,
    k: int,
    keyed: str,
    name: str,
    restart: bool,
    nested: bool,
    spread: bool,
    text: bool = False,
) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    ids = {"benchmark": 1, "dataset": 2, "category": max(2, questions // 8)}.get(keyed, questions)
    rows = []
    counts: dict[int, int] = {}
    for q in range(questions):
        group = q % ids
        count = counts.get(group, 0) if restart else q
        number: int | str = f"item-{count}" if text else count  # numbered, or named in text
        counts[group] = counts.get(group, 0) + 1
        rate = rng.random() if spread else float(rng.random() < 0.5)
        for j in range(k):
            row: dict[str, Any] = {
                "task_id": f"set{group}" if keyed != "question" else f"q{q}",
                "completion": f"reply {q}.{j}",
                "reward": float(rng.random() < rate),
                "model": MODEL,
            }
            if keyed == "question":  # the control: a per-draw number beside right ids
                row["sample_idx"], row["request_id"] = j, f"r{q}-{j}"
            elif nested:
                row["metadata"] = {name: number}
            else:
                row[name] = number
            rows.append(row)
    rng.shuffle(rows)
    return rows


@st.composite
def pools(draw: st.DrawFn) -> tuple[list[dict[str, Any]], str, str]:
    keyed = draw(st.sampled_from(["dataset", "category", "question"]))
    name = draw(st.sampled_from(ITEM_NAMES))
    nested = draw(st.booleans())
    rows = _pool(
        draw(st.integers(0, 2**16)),
        draw(st.integers(40, 240)),
        draw(st.sampled_from([2, 4, 8])),
        keyed,
        name,
        draw(st.booleans()),
        nested,
        draw(st.booleans()),
        draw(st.booleans()),
    )
    return rows, keyed, f"metadata.{name}" if nested else name


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pools(), st.sampled_from(["jsonl", "parquet"]))
def test_coarse_ids_are_named_and_never_firm(tmp_path: Path, drawn: tuple, kind: str) -> None:
    rows, keyed, column = drawn
    path = write_rows(tmp_path, rows, kind)
    found = read_rows([str(path)]).facts.coarse_ids
    route = route_rows(path, MODEL)
    if keyed == "question":
        assert found is None, found
        assert "coarse_ids" not in finding_kinds(route)
        return
    assert found is not None and found[0] == column, (found, column)
    assert "coarse_ids" in finding_kinds(route)
    assert route.provisional, route.headline


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 2**16),
    name=st.sampled_from(ITEM_NAMES),
    k=st.sampled_from([2, 4, 8]),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_one_benchmark_name_on_every_row_keys_by_the_prompts_id(
    tmp_path: Path, seed: int, name: str, k: int, kind: str
) -> None:
    """``task_id: "aime24"`` on every row beside ``question_idx``: the id is a label, and the
    tasks are keyed by the prompt's id, with a note (as a later id alias would be)."""
    rows = _pool(seed, 60, k, "benchmark", name, False, False, False)
    got = read_rows([str(write_rows(tmp_path, rows, kind))])
    assert got.facts.coarse_ids is None
    assert got.sources["task_id"] == name
    assert any("holds one value on every row" in note for note in got.notes)


@pytest.mark.parametrize(
    "extra",
    [
        {"turn_idx": 0},  # a draw's own number, constant: one value per id
        {"request_id": None},  # filled per row below: one row per value
    ],
)
def test_columns_that_do_not_part_the_ids_say_nothing(
    tmp_path: Path, extra: dict[str, Any]
) -> None:
    """Right ids beside a column constant over the pool or unique to each row: no finding."""
    rows = _pool(0, 80, 4, "question", "question_idx", False, False, False)
    for i, row in enumerate(rows):
        row.update(extra)
        if "request_id" in extra:
            row["request_id"] = f"req-{i}"
        row.pop("sample_idx", None)
    path = write_rows(tmp_path, rows, "jsonl")
    assert read_rows([str(path)]).facts.coarse_ids is None


def test_a_prompt_keeps_the_ids_checked_instead(tmp_path: Path) -> None:
    """With a prompt the ids are checked against it (an id over several prompts is refused):
    no column is weighed."""
    rows = _pool(1, 60, 4, "category", "question_idx", False, False, False)
    for row in rows:
        row["prompt"] = f"question {row['question_idx']}"
        row["task_id"] = f"q{row['question_idx']}"
    path = write_rows(tmp_path, rows, "jsonl")
    assert read_rows([str(path)]).facts.coarse_ids is None
