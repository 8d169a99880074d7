"""Failures that earned partial credit, too few to be refused (under a tenth of the rows): a
length penalty on a correct reply (0.9), a missed format bonus (0.8), half credit. Under a
pass threshold of 1 each fails; where counting them as passes moves pass@1 past its
interval the report says so (``credit_moves_pass``, listed: the route stands), naming the
pass@1 they would give. Where pass@1 stays inside, nothing is said.

The generator draws a pool from known rates, turns a share of its passes into partial
credit, and computes the pass@1 with those counted as passes by a plain loop.
"""

from __future__ import annotations

import random
from collections import defaultdict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import finding_kinds, write_rows
from whilecli.route import run_route
from whilecli.route.model import Route

MODEL = "Qwen/Qwen3-8B"


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    share=st.floats(0.005, 0.09),
    credit=st.sampled_from([0.5, 0.8, 0.9, 0.99]),
    tasks=st.integers(40, 300),
    seed=st.integers(0, 2**16),
)
def test_partial_credit_that_moves_pass_at_1_is_said(
    tmp_path_factory: pytest.TempPathFactory, share: float, credit: float, tasks: int, seed: int
) -> None:
    rnd = random.Random(seed)
    rows = []
    for t in range(tasks):
        p = rnd.uniform(0.1, 0.9)
        for j in range(4):
            ok = rnd.random() < p
            reward = credit if ok and rnd.random() < share / 0.5 else float(ok)
            rows.append({"task_id": f"t{t}", "completion": f"{t}.{j}", "reward": reward})
    credited: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        credited[r["task_id"]].append(1.0 if r["reward"] > 0 else 0.0)
    then = sum(sum(v) / len(v) for v in credited.values()) / len(credited)
    partial = sum(1 for r in rows if 0 < r["reward"] < 1)
    path = write_rows(tmp_path_factory.mktemp("credit"), rows, "jsonl")
    if partial >= 0.1 * len(rows):
        return  # refused without a threshold: another rule
    got = run_route(str(path), model=MODEL)
    assert isinstance(got, Route)
    rate = got.summary["pass_at_1"]
    said = "credit_moves_pass" in finding_kinds(got)
    if rate.low is None:
        assert not said
        return
    outside = not (rate.low - 1e-9 <= then <= rate.high + 1e-9)
    assert said == (outside and partial > 0)
    if said:
        finding = next(f for f in got.data_quality if f.kind == "credit_moves_pass")
        assert f"pass@1 would be {then:.2f}" in finding.found
        assert finding.count == partial
