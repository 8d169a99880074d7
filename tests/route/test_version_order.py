"""The latest policy version of a pool (check 6) is the largest in number order, whatever the
versions' spelling: integers, floats, and names whose digit runs count (``step_100`` after
``step_90``, ``v1.10`` after ``v1.9``, ``global_step_9`` before ``global_step_10``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from whilecli.route.checks import version_order

PREFIXES = st.sampled_from(["", "step_", "step-", "global_step_", "v", "ckpt", "iter "])


@given(PREFIXES, st.lists(st.integers(0, 10**6), min_size=1, max_size=12, unique=True))
def test_named_steps_sort_as_their_numbers(prefix: str, steps: list[int]) -> None:
    names = [f"{prefix}{n}" for n in steps]
    assert sorted(names, key=version_order) == [f"{prefix}{n}" for n in sorted(steps)]
    assert max(names, key=version_order) == f"{prefix}{max(steps)}"


@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), min_size=1, max_size=8,
                unique=True))  # fmt: skip
def test_dotted_versions_sort_by_each_part(parts: list[tuple[int, int]]) -> None:
    names = [f"v{a}.{b}" for a, b in parts]
    assert sorted(names, key=version_order) == [f"v{a}.{b}" for a, b in sorted(parts)]


@given(st.lists(st.one_of(st.integers(-10, 10**9).map(str), st.text(max_size=12)), min_size=1))
def test_any_versions_have_one_order(versions: list[str]) -> None:
    """Every text has a key, and keys compare: numbers first, in number order."""
    ordered = sorted(versions, key=version_order)
    numbers = [v for v in ordered if version_order(v)[0] == 0]
    assert ordered[: len(numbers)] == numbers
    assert [float(v) for v in numbers] == sorted(float(v) for v in numbers)


def test_the_route_names_the_latest_step_written_as_text() -> None:
    assert max(["step_90", "step_100", "step_95"], key=version_order) == "step_100"
    assert max(["9", "10", "9.5"], key=version_order) == "10"
