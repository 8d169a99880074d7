"""A reward of partial credit (a rubric sum, 0.5 for the format alone) is refused without a
threshold, and the refusal names the columns that look like a pass/fail so ``--map
reward=COLUMN`` can take one. A grade kept inside an object (``rewards.correctness``,
``metrics.exact_match``) is such a column as much as a top-level one: the hint said the rows
carried none. The generator writes the grade at the top level or one or two objects deep,
as JSON Lines or Parquet; the refusal names its dotted path, and mapping it routes."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import write_rows
from whilecli.errors import InputError
from whilecli.io.read import read_rows

PATHS = ["correct", "rewards.correctness", "metrics.exact_match", "info.grades.is_correct"]


def _put(row: dict[str, Any], path: str, value: Any) -> None:
    *outer, last = path.split(".")
    for key in outer:
        row = row.setdefault(key, {})
    row[last] = value


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    path=st.sampled_from(PATHS),
    fmt=st.sampled_from(["jsonl", "parquet"]),
    as_bool=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_a_grade_inside_an_object_is_offered_beside_partial_credit(
    tmp_path_factory: pytest.TempPathFactory, path: str, fmt: str, as_bool: bool, seed: int
) -> None:
    rnd = random.Random(seed)
    rows = []
    for t in range(60):
        for _ in range(4):
            ok = rnd.random() < 0.5
            row: dict[str, Any] = {"task_id": f"t{t}", "completion": f"{rnd.random()}"}
            row["reward"] = 1.0 if ok else rnd.choice([0.0, 0.5])
            _put(row, path, ok if as_bool else int(ok))
            rows.append(row)
    file = str(write_rows(tmp_path_factory.mktemp("hint"), rows, fmt))
    with pytest.raises(InputError) as refused:
        read_rows([file])
    assert f"--map reward={path}" in str(refused.value)
    frame = read_rows([file], mapping={"reward": path}).frame.collect()
    assert frame["passed"].sum() == sum(1 for r in rows if r["reward"] == 1.0)
