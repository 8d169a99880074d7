"""A value printed beside the limit it is compared with reads as different from it
(:func:`whilecli.route.model.against`): ``0.045 is past 0.04``, never ``0.04 is past 0.04``.
The helper is drawn over values near their limits, and check 4's teacher cut off just past
its limit is read back from the message it prints."""

from __future__ import annotations

import re

import polars as pl
from hypothesis import example, given, settings
from hypothesis import strategies as st

from whilecli.route import checks
from whilecli.route.model import Rows, against
from whilecli.route.options import RouteOptions
from whilecli.route.pool import summarize

LIMITS = st.sampled_from([0.0, 0.04, 0.05, 0.3, 0.5, 0.06, 0.1])  # 0: a signed difference


@settings(max_examples=300, deadline=None)
@given(limit=LIMITS, offset=st.floats(-0.02, 0.02), signed=st.booleans())
@example(limit=0.3, offset=1e-09, signed=False)  # value − limit rounds past 1e-9
def test_a_value_and_its_limit_read_apart(limit: float, offset: float, signed: bool) -> None:
    value = limit + offset
    shown, stated = against(value, limit, signed=signed)
    assert float(stated) == limit
    assert len(shown.partition(".")[2]) >= 2
    if abs(offset) >= 1e-6:
        assert float(shown) != float(stated), (value, shown, stated)
        assert (float(shown) > float(stated)) == (value > limit), (value, shown, stated)
    if abs(offset) <= 1e-9:
        assert len(shown.partition(".")[2]) == 2


def _pool(tasks: int, k: int, passes: int, cut: int = 0) -> object:
    """``tasks`` tasks of ``k`` rows with ``passes`` passes each; the first ``cut`` rows of
    the pool are cut off (never a pass)."""
    rows = []
    for t in range(tasks):
        for i in range(k):
            cut_here = len(rows) < cut
            rows.append((f"t{t}", i < passes and not cut_here, cut_here))
    frame = pl.DataFrame(
        {
            "task_id": [r[0] for r in rows],
            "reward": [float(r[1]) for r in rows],
            "passed": [r[1] for r in rows],
            "truncated": [r[2] for r in rows],
            "model": pl.Series([None] * len(rows), dtype=pl.String),
            "policy_version": pl.Series([None] * len(rows), dtype=pl.String),
        }
    )
    return summarize(
        Rows(frame.lazy(), ["rows.jsonl"], "jsonl", {"task_id": "task_id"}, 1.0, False)
    )


@settings(max_examples=30, deadline=None)
@given(tasks=st.integers(40, 200), extra=st.integers(1, 3))
def test_a_teacher_cut_off_just_past_its_limit_reads_past_it(tasks: int, extra: int) -> None:
    k = 5
    limit = RouteOptions().teacher_max_truncated
    cut = int(limit * tasks * k) + extra  # a share just over the limit
    student = _pool(tasks, k, 1)
    teacher = _pool(tasks, k, 4, cut)
    result = checks.teacher(student, RouteOptions(teacher=teacher))  # type: ignore[arg-type]
    found = re.search(r"([\d.]+) of its rows are cut off \(> ([\d.]+)\)", result.why)
    assert found is not None, result.why
    assert float(found.group(1)) > float(found.group(2)), result.why
