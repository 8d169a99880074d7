"""Rows whose grade sits under a name no alias reads (``result``, ``outcome``, ``verdict``,
``status``), as a number, a boolean or a word (``"PASS"``, ``"correct"``, ``"True"``, ``"1"``):
the refusal names that column in its ``--map reward=`` hint instead of saying the rows hold
no grade, and following the hint reads the passes a plain loop over the words counts.

The generator draws the column's name, the pair of values a harness writes for a pass and a
failure, a key order and JSON Lines or Parquet; the truth is the drawn grades."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from read_helpers import frame_of
from rows_files import write_rows
from whilecli.errors import InputError
from whilecli.io.read import read_rows
from whilecli.io.words import GRADE_FALSE, GRADE_TRUE

NAMES = ("result", "outcome", "verdict", "status", "eval_result", "judgement", "solved")
#: (pass, failure) as harnesses write them.
PAIRS = (
    ("True", "False"),
    ("PASS", "FAIL"),
    ("passed", "failed"),
    ("correct", "incorrect"),
    ("yes", "no"),
    ("success", "failure"),
    ("RESOLVED", "UNRESOLVED"),
    ("1", "0"),
    (True, False),
    (1, 0),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(NAMES),
    pair=st.sampled_from(PAIRS),
    kind=st.sampled_from(("jsonl", "parquet")),
    seed=st.integers(0, 10_000),
)
def test_the_hint_names_a_grade_column_and_following_it_reads_the_grades(
    name: str,
    pair: tuple[object, object],
    kind: str,
    seed: int,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    rng = random.Random(seed)
    rows: list[dict[str, object]] = []
    for task in range(12):
        rate = rng.random()
        for draw in range(4):
            row = {"task_id": f"t{task}", "response": f"reply {task}.{draw}"}
            row[name] = pair[0] if rng.random() < rate else pair[1]
            rows.append(dict(sorted(row.items(), key=lambda _: rng.random())))
    path = write_rows(tmp_path_factory.mktemp("words"), rows, kind)
    with pytest.raises(InputError) as refused:
        frame_of(path)
    said = str(refused.value)
    assert f"--map reward={name}" in said, said
    assert "no true/false value" not in said, said
    frame = read_rows([str(path)], mapping={"reward": name}).frame.collect()
    passes = sum(
        1
        for row in rows
        if str(row[name]).strip().lower() in GRADE_TRUE or row[name] in (1, "1", True)
    )
    failures = sum(
        1
        for row in rows
        if str(row[name]).strip().lower() in GRADE_FALSE or row[name] in (0, "0", False)
    )
    assert passes + failures == len(rows)
    assert int(frame["reward"].sum()) == passes


def test_text_under_a_name_that_says_no_grade_still_says_so(tmp_path: Path) -> None:
    rows = [
        {"task_id": f"t{i // 4}", "response": f"reply {i}", "comment": "looks fine"}
        for i in range(16)
    ]
    with pytest.raises(InputError, match=r"no number and no true/false value"):
        frame_of(write_rows(tmp_path, rows, "jsonl"))
