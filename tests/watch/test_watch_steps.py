"""One step's numbers against an independent slow loop over the same rows."""

from __future__ import annotations

import json
import math
import tempfile
from collections import defaultdict
from pathlib import Path

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.io.read import read_rows
from whilecli.route.pool import summarize
from whilecli.watch.steps import measure, off_policy, zero_advantage_rows

ROW = st.tuples(
    st.integers(0, 5),  # task
    st.sampled_from([0.0, 1.0]),  # reward
    st.one_of(st.none(), st.booleans()),  # truncated (None: not recorded on this row)
)


def _wilson(successes: int, n: int) -> tuple[float, float]:
    """The Wilson score interval at z = 1.96 (the route's z; scipy's exact quantile differs in
    the fifth decimal), by its textbook formula."""
    z, p = 1.96, successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@settings(max_examples=30, deadline=None)
@given(st.lists(ROW, min_size=1, max_size=40))
def test_measure_agrees_with_a_slow_loop(rows: list[tuple[int, float, bool | None]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "traces.jsonl"
        lines = []
        for task, reward, cut in rows:
            row: dict[str, object] = {"task_id": f"t{task}", "reward": reward}
            if cut is not None:
                row["truncated"] = cut
            lines.append(json.dumps(row))
        path.write_text("\n".join(lines) + "\n")
        read = read_rows([str(path)])
        stats = measure(3, read, summarize(read), read.frame.collect())

    by_task: dict[int, list[tuple[float, bool | None]]] = defaultdict(list)
    for task, reward, cut in rows:
        by_task[task].append((reward, cut))
    rates = [sum(r >= 1.0 for r, _ in v) / len(v) for v in by_task.values()]
    assert stats.rows == len(rows) and stats.tasks == len(by_task)
    assert stats.pass_at_1 is not None and stats.pass_at_1.value is not None
    assert abs(stats.pass_at_1.value - sum(rates) / len(rates)) < 1e-12
    if stats.pass_at_1.low is not None and stats.pass_at_1.high is not None:
        assert stats.pass_at_1.low <= stats.pass_at_1.value <= stats.pass_at_1.high

    groups = [v for v in by_task.values() if len(v) >= 2]
    split = sum(0 < sum(r >= 1.0 for r, _ in v) < len(v) for v in groups)
    assert stats.split_share is not None
    if groups:
        assert stats.split_share.value == split / len(groups)
        low, high = _wilson(split, len(groups))
        assert stats.split_share.low is not None and stats.split_share.high is not None
        assert abs(stats.split_share.low - low) < 1e-12
        assert abs(stats.split_share.high - high) < 1e-12
    else:
        assert stats.split_share.value is None

    zero = 0
    for v in by_task.values():
        mean = sum(r for r, _ in v) / len(v)
        zero += sum(abs(r - mean) <= 1e-9 for r, _ in v)
    assert stats.zero_advantage_share is not None
    assert stats.zero_advantage_share.value == zero / len(rows)

    known = [(r, c) for r, c in ((r, c) for v in by_task.values() for r, c in v) if c is not None]
    if known:
        cut = sum(bool(c) for _, c in known)
        assert stats.truncated_share is not None and stats.truncated_share.value == cut / len(known)
        assert stats.truncated_passes == sum(bool(c) and r >= 1.0 for r, c in known)
    else:
        assert stats.truncated_share is None and stats.truncated_passes is None


def test_zero_advantage_is_reward_equal_to_its_group_mean() -> None:
    frame = pl.DataFrame(
        {"task_id": ["a", "a", "a", "b", "b", "c"], "reward": [0.0, 0.5, 1.0, 1.0, 1.0, 0.3]}
    )
    # a: only 0.5 sits at the mean; b: unanimous; c: a group of one
    assert zero_advantage_rows(frame) == (1 + 2 + 1, frame.height)


def test_off_policy_lag_from_integer_versions_else_from_the_metrics_row() -> None:
    frame = pl.DataFrame({"policy_version": ["7", "8", "m@6", None]})
    assert off_policy(9, frame, None) == {"mean": 2.0, "max": 3, "from": "rows"}
    named = pl.DataFrame({"policy_version": ["main", None]})
    row = {"off_policy/mean": 0.5, "off_policy/max": 1}
    assert off_policy(9, named, row) == {"mean": 0.5, "max": 1, "from": "metrics.jsonl"}
    assert off_policy(9, named, {"loss/mean": 1.0}) is None


def test_errors_come_from_the_reading_layer() -> None:
    from types import SimpleNamespace

    from whilecli.watch.steps import _errors

    frame = pl.DataFrame({"task_id": ["a", "a"], "reward": [1.0, 0.0]})
    assert _errors(SimpleNamespace(), frame)[:2] == (None, None)  # type: ignore[arg-type]
    counted = SimpleNamespace(facts=SimpleNamespace(errors=2, rows=4))
    n, share, kept = _errors(counted, frame)  # type: ignore[arg-type]
    assert n == 2 and share is not None and share.value == 0.5 and kept.height == 2
    marked = frame.with_columns(reply=pl.Series(["ok", "error"]))
    n, share, kept = _errors(SimpleNamespace(), marked)  # type: ignore[arg-type]
    assert n == 1 and share is not None and share.value == 0.5 and kept["reward"].to_list() == [1.0]
