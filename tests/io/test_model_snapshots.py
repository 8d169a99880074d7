"""A date at a model name's end is one snapshot of it: two dates are two models
(``gpt-4o-2024-05-13`` and ``gpt-4o-2024-08-06``, ``claude-3-5-sonnet-20240620`` and
``-20241022``), whatever the writing; the same date written two ways is one. Beside the undated
name, the date is that alias's snapshot on an API's model (``gpt-4o-2024-08-06`` is what
``gpt-4o`` served), and a build's on an open model's name (``Qwen3-8B-20250601``: unsure, never
the model, never another). ``-latest`` is the alias itself.

The generator draws a name, where it comes from (an API's or open weights') and two dates in
the spellings APIs and people use; the truth is computed from the drawn dates and origin."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.io.modelid import OTHER, SAME, UNSURE, same_model, weights_relation

API = ("gpt-4o", "gpt-4o-mini", "claude-3-5-sonnet", "claude-3-opus", "o1", "gemini-1.5-pro")
OPEN = ("Qwen3-8B", "Qwen/Qwen3-8B", "my-org/Qwen3-8B", "Llama-3.1-8B-Instruct", "gemma-2-9b-it")
DATES = st.tuples(st.integers(2023, 2026), st.integers(1, 12), st.integers(1, 28)).map(
    lambda d: f"{d[0]:04d}{d[1]:02d}{d[2]:02d}"
)


def _dated(name: str, date: str, dashed: bool) -> str:
    return f"{name}-{date[:4]}-{date[4:6]}-{date[6:]}" if dashed else f"{name}-{date}"


@settings(max_examples=300)
@given(
    name=st.sampled_from(API + OPEN),
    first=DATES,
    second=DATES,
    dashes=st.tuples(st.booleans(), st.booleans()),
)
def test_two_dated_snapshots_are_one_model_only_on_one_date(
    name: str, first: str, second: str, dashes: tuple[bool, bool]
) -> None:
    a, b = _dated(name, first, dashes[0]), _dated(name, second, dashes[1])
    truth = SAME if first == second else OTHER
    assert weights_relation(a, b) == truth, (a, b)
    assert same_model(a, b) == (truth == SAME), (a, b)


@settings(max_examples=300)
@given(name=st.sampled_from(API + OPEN), date=DATES, dashed=st.booleans())
def test_a_dated_name_beside_its_undated_alias(name: str, date: str, dashed: bool) -> None:
    dated = _dated(name, date, dashed)
    truth = SAME if name in API else UNSURE
    assert weights_relation(dated, name) == truth, dated
    assert weights_relation(name, dated) == truth, dated
    assert same_model(dated, name) == (truth == SAME), dated


@given(name=st.sampled_from(API + OPEN))
def test_latest_is_the_alias(name: str) -> None:
    assert same_model(f"{name}-latest", name)
