"""The alerts: which fires, at which step, naming which method, over generated step sequences."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.io.rows import Rows
from whilecli.route.model import Pool
from whilecli.watch.alerts import Alerts, pooled
from whilecli.watch.options import WatchOptions
from whilecli.watch.steps import StepStats

TASKS, K = 6, 4
#: passes per task for each kind of step (the same task ids every step)
KINDS = {
    "mixed": [1, 2, 3, 0, 4, 2],
    "floor": [0] * TASKS,
    "saturated": [K] * TASKS,
    "cut": [1, 2, 3, 0, 4, 2],  # mixed, and one truncated reply passed
}


def _rows() -> Rows:
    return Rows(
        frame=pl.LazyFrame(),
        paths=["x.jsonl"],
        format="jsonl",
        sources={},
        pass_threshold=1.0,
        threshold_explicit=False,
    )


def _pool(kind: str) -> Pool:
    passes = KINDS[kind]
    tasks = pl.DataFrame(
        {
            "task_id": [f"t{i}" for i in range(TASKS)],
            "n": [K] * TASKS,
            "passes": passes,
            "truncated": [1 if kind == "cut" and i == 0 else 0 for i in range(TASKS)],
            "truncated_known": [K] * TASKS,
            "truncated_passes": [1 if kind == "cut" and i == 0 else 0 for i in range(TASKS)],
        },
        schema_overrides={c: pl.Int64 for c in ("n", "passes", "truncated")},
    ).with_columns(pl.col("truncated_known", "truncated_passes").cast(pl.Int64))
    return Pool(tasks=tasks, rows=TASKS * K, models={}, versions={}, source=_rows())


def _stats(step: int, errors: int | None = None, cut: int = 0) -> StepStats:
    return StepStats(
        step=step, source="x", rows=TASKS * K, error_replies=errors, truncated_passes=cut
    )


def _expected(kinds: list[str], window: int) -> list[tuple[str, int]]:
    """The slow reference: each step's state from the window's kinds, alerts on entering."""
    fired: list[tuple[str, int]] = []
    before: set[str] = set()
    for i in range(len(kinds)):
        last = kinds[max(0, i - window + 1) : i + 1]
        now: set[str] = set()
        if "cut" in last:
            now.add("truncated-passes")
        elif len(last) == window and all(k == "floor" for k in last):
            now.add("floor")
        elif len(last) == window and all(k == "saturated" for k in last):
            now.add("saturated")
        fired += [(k, i + 1) for k in sorted(now - before)]
        before = now
    return fired


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(sorted(KINDS)), min_size=1, max_size=9), st.integers(1, 4))
def test_alerts_fire_where_the_route_of_the_window_changes(kinds: list[str], window: int) -> None:
    alerts = Alerts(WatchOptions(window=window, bootstrap_draws=200))
    for step, kind in enumerate(kinds, start=1):
        alerts.add(_stats(step, cut=int(kind == "cut")), _pool(kind))
    assert [(a.kind, a.step) for a in alerts.fired] == _expected(kinds, window)
    methods = {a.kind: a.method for a in alerts.fired}
    assert methods.get("floor", "opsd") == "opsd"
    assert methods.get("saturated", "groupwise") == "groupwise"
    assert methods.get("truncated-passes") is None


def test_floor_alert_names_the_window_and_the_method() -> None:
    alerts = Alerts(WatchOptions(window=2, bootstrap_draws=200))
    route, fired = alerts.add(_stats(1), _pool("mixed"))
    assert route is not None and route.route == "grpo" and fired == []
    alerts.add(_stats(2), _pool("floor"))
    route, fired = alerts.add(_stats(3), _pool("floor"))
    assert route is not None and (route.first, route.last, route.route) == (2, 3, "floor")
    assert [a.kind for a in fired] == ["floor"]
    assert "steps 2-3" in fired[0].message and "→ opsd" in fired[0].message


def test_error_alert_when_the_window_share_passes_the_limit() -> None:
    alerts = Alerts(WatchOptions(window=2, max_errors=0.1, bootstrap_draws=200))
    rows = TASKS * K  # 24 replies that are not errors per step
    assert alerts.add(_stats(1, errors=0), _pool("mixed"))[1] == []
    assert alerts.add(_stats(2, errors=5), _pool("mixed"))[1] == []  # 5 of 53 <= 0.1
    _, fired = alerts.add(_stats(3, errors=8), _pool("mixed"))  # 13 of 61 > 0.1
    assert [a.kind for a in fired] == ["errors"]
    assert f"13 of {2 * rows + 13} replies over steps 2-3" in fired[0].message
    assert fired[0].method == "grpo"
    assert alerts.add(_stats(4, errors=9), _pool("mixed"))[1] == []  # still holding: once
    assert alerts.add(_stats(5, errors=0), _pool("mixed"))[1] == []
    assert alerts.add(_stats(6, errors=0), _pool("mixed"))[1] == []  # stopped holding
    assert [a.kind for a in alerts.add(_stats(7, errors=20), _pool("mixed"))[1]] == ["errors"]


def test_a_step_with_nothing_read_leaves_the_window_alone() -> None:
    alerts = Alerts(WatchOptions(window=2, bootstrap_draws=200))
    alerts.add(_stats(1), _pool("floor"))
    assert alerts.add(StepStats(step=2, source=None, note="none"), None) == (None, [])
    _, fired = alerts.add(_stats(3), _pool("floor"))
    assert [(a.kind, a.step) for a in fired] == [("floor", 3)]


def test_pooled_adds_task_counts_across_steps() -> None:
    both = pooled([_pool("floor"), _pool("saturated")])
    assert both.rows == 2 * TASKS * K
    assert both.tasks["n"].to_list() == [2 * K] * TASKS
    assert both.tasks["passes"].to_list() == [K] * TASKS


def test_a_step_refused_for_its_errors_counts_in_the_window() -> None:
    from whilecli.errors import MostlyErrorReplies
    from whilecli.io import facts
    from whilecli.watch.steps import refused_for_errors

    alerts = Alerts(WatchOptions(window=2, bootstrap_draws=200))
    alerts.add(_stats(1, errors=0), _pool("mixed"))
    with pytest.raises(MostlyErrorReplies) as raised:
        facts.refuse_errors(20, 24, "2.jsonl", "2.jsonl line 1")
    refused = refused_for_errors(2, "2.jsonl", raised.value)
    assert refused.error_replies == 20 and refused.rows == 0
    route, fired = alerts.add(refused, None)
    assert route is not None and route.route == "grpo"  # routed on step 1's replies
    assert [a.kind for a in fired] == ["errors"] and "20 of 48 replies" in fired[0].message
    lone = Alerts(WatchOptions(window=1, bootstrap_draws=200))
    route, fired = lone.add(refused, None)
    assert route is None and fired[0].method is None and "nothing to route" in fired[0].message
