"""Check 6 reads how old a row's sampler was however the rows say it (DESIGN section 2:
check 6's versions). An async sampler's rows state it as a version on the sampler's side
(``sampler_step``, ``behavior_version``, ``rollout_step``) beside the trainer's step, or as
how many updates behind the trainer each row was sampled (``off_policy_steps``,
``staleness``). Read as the trainer's step, or not read at all, rows sampled one or two
steps behind were called on-policy: firm GRPO where the seed says Async.

The generator draws pools of the model you train with each field, its lags drawn from
sets with a known truth (every row at lag 0: on-policy; any row behind, even every row one
step behind: an older copy), as JSON Lines or Parquet.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import route_rows, write_rows
from whilecli.io.aliases import LAG_ALIASES

MODEL = "Qwen/Qwen3-8B"
SETTINGS = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
SAMPLER_SIDE = ["sampler_step", "behavior_version", "rollout_step", "generation_step"]


def _rows(seed: int, fields: Any) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    rows = []
    for t in range(120):
        p = rnd.betavariate(0.7, 0.7)
        for _ in range(8):
            row = {"task_id": f"t{t}", "completion": f"{rnd.random()}", "model": MODEL}
            row.update(reward=float(rnd.random() < p), finish_reason="stop", **fields(rnd))
            rows.append(row)
    return rows


@SETTINGS
@given(
    field=st.sampled_from(LAG_ALIASES),
    lags=st.sampled_from([(0,), (1,), (2,), (0, 1), (0, 1, 2), (1, 2, 3)]),
    fmt=st.sampled_from(["jsonl", "parquet"]),
    seed=st.integers(0, 2**16),
)
def test_rows_behind_the_trainer_are_an_older_copy(
    tmp_path_factory: pytest.TempPathFactory, field: str, lags: tuple[int, ...], fmt: str, seed: int
) -> None:
    rows = _rows(seed, lambda rnd: {field: rnd.choice(lags)})
    got = route_rows(write_rows(tmp_path_factory.mktemp("lag"), rows, fmt), MODEL)
    on_policy = next(c for c in got.checks if c.key == "on_policy")
    stale = any(lag > 0 for lag in {r[field] for r in rows})
    assert on_policy.status.value == ("fail" if stale else "pass")
    if stale:
        assert "older copy" in on_policy.why and field in on_policy.why


@SETTINGS
@given(
    field=st.sampled_from(SAMPLER_SIDE),
    behind=st.sampled_from([(0,), (1,), (0, 1), (1, 2)]),
    fmt=st.sampled_from(["jsonl", "parquet"]),
    seed=st.integers(0, 2**16),
)
def test_a_samplers_step_beside_the_trainers_is_the_rows_version(
    tmp_path_factory: pytest.TempPathFactory,
    field: str,
    behind: tuple[int, ...],
    fmt: str,
    seed: int,
) -> None:
    rows = _rows(seed, lambda rnd: {field: 40 - rnd.choice(behind), "trainer_step": 40})
    got = route_rows(write_rows(tmp_path_factory.mktemp("side"), rows, fmt), f"{MODEL}@40")
    on_policy = next(c for c in got.checks if c.key == "on_policy")
    stale = any(b > 0 for b in behind) and any(r[field] < 40 for r in rows)
    assert on_policy.status.value == ("fail" if stale else "pass")
