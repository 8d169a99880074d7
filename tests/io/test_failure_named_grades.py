"""A grade column whose name says it marks a failure (``incorrect``, ``is_wrong``,
``unsolved``, ``not_passed``, ``rewards.hasError``): its true is a fail. A ``--map reward=``
hint that offered it led the user to a report with every rate inverted (a floor read as
saturated, firm GroupwiseGrading), so no hint offers one; a hint that finds only such a
column says what it marks, and a ``--map reward=`` that names one leaves a note.

The generator draws a failure word or a negated correctness word, the case style and
separators a harness writes it in, where it sits (top level or inside an object), beside or
without a column that grades the pass, and JSON Lines or Parquet."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from read_helpers import frame_of
from rows_files import write_rows
from whilecli.errors import InputError
from whilecli.io.aliases import REWARD_ALIASES, correctness_first, says_failure
from whilecli.io.read import read_rows

FAILURE = ("incorrect", "wrong", "failed", "fail", "unsolved", "unresolved", "error", "invalid")
NEGATED = (("not", "correct"), ("no", "pass"), ("not", "passed"), ("non", "success"))
PASSING = ("correct", "passed", "solved", "resolved", "success", "accuracy", "exact_match")


def _styled(words: list[str], style: str) -> str:
    if style == "snake":
        return "_".join(words)
    if style == "kebab":
        return "-".join(words)
    return words[0] + "".join(w.capitalize() for w in words[1:])


@st.composite
def failure_names(draw: st.DrawFn) -> str:
    words = (
        [draw(st.sampled_from(("is", "has", "answer", "")))]
        + (
            [draw(st.sampled_from(FAILURE))]
            if draw(st.booleans())
            else list(draw(st.sampled_from(NEGATED)))
        )
        + [draw(st.sampled_from(("", "answer", "flag")))]
    )
    return _styled([w for w in words if w], draw(st.sampled_from(("snake", "kebab", "camel"))))


@settings(max_examples=200)
@given(name=failure_names())
def test_every_failure_name_says_failure(name: str) -> None:
    assert says_failure(name), name
    assert correctness_first([name, "is_correct"]) == ["is_correct"]


@pytest.mark.parametrize("name", [*PASSING, "is_correct", "isCorrect", "pass_rate", "verdict"])
def test_a_name_that_grades_the_pass_is_offered(name: str) -> None:
    assert not says_failure(name) and correctness_first([name]) == [name]


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=failure_names(),
    nested=st.booleans(),
    beside=st.sampled_from((None, *PASSING)),
    kind=st.sampled_from(("jsonl", "parquet")),
    seed=st.integers(0, 10_000),
)
# `error` mapped as the grade is the grade, not a harness's error field beside it
@example(name="error", nested=False, beside=None, kind="jsonl", seed=0)
def test_no_hint_offers_a_column_that_marks_failures(
    name: str,
    nested: bool,
    beside: str | None,
    kind: str,
    seed: int,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    rng = random.Random(seed)
    rows: list[dict[str, object]] = []
    for task in range(12):
        rate = rng.random()
        for draw in range(4):
            passed = rng.random() < rate
            grades: dict[str, object] = {name: not passed}
            if beside is not None:
                grades[beside] = passed
            row: dict[str, object] = {"task_id": f"t{task}", "response": f"reply {task}.{draw}"}
            row |= {"checks": grades} if nested else grades
            rows.append(row)
    path = write_rows(tmp_path_factory.mktemp("failure"), rows, kind)
    column = f"checks.{name}" if nested else name
    right = f"checks.{beside}" if nested else beside
    if right in REWARD_ALIASES:  # read as the grade without a hint
        assert read_rows([str(path)]).sources["reward"] == right
    else:
        with pytest.raises(InputError) as refused:
            frame_of(path)
        said = str(refused.value)
        assert f"reward={column}" not in said, said
        if beside is not None:
            assert f"--map reward={right}" in said, said
    mapped = read_rows([str(path)], mapping={"reward": column})
    assert any("marks failures" in note for note in mapped.notes), mapped.notes
