"""A column named as the reward in another case (``Reward`` beside ``reward``, ``SCORE``
beside ``score``): read as it was, the reward column alone was read and the other's grades
dropped without a word, whichever one the grader wrote. Where the two grade a row looked at
otherwise, which one grades is not said: refused in one line naming both and how to choose.
Where they agree, they are one grade, read as before."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError
from whilecli.io.read import read_rows

PAIRS = [("reward", "Reward"), ("reward", "REWARD"), ("score", "Score"), ("correct", "Correct")]


def _write(folder: Path, rows: list[dict[str, Any]], kind: str) -> Path:
    path = folder / f"rows.{kind}"
    if kind == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        pl.DataFrame(rows).write_parquet(path)
    return path


@settings(
    max_examples=16, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    pair=st.sampled_from(PAIRS),
    differ=st.sampled_from([0.0, 0.05, 1.0]),
    kind=st.sampled_from(["jsonl", "parquet"]),
    seed=st.integers(0, 2**16),
)
def test_a_grade_twin_in_another_case(
    tmp_path: Path, pair: tuple[str, str], differ: float, kind: str, seed: int
) -> None:
    rng = random.Random(seed)
    name, twin = pair
    rows = []
    for t in range(30):
        for j in range(4):
            grade = float(rng.random() < 0.5)
            other = 1.0 - grade if rng.random() < differ else grade
            rows.append({"task_id": f"t{t}", "completion": f"a{t}.{j}", name: grade, twin: other})
    path = _write(tmp_path, rows, kind)
    differs = any(r[name] != r[twin] for r in rows)  # a file the plan's sample holds whole
    if differs:
        with pytest.raises(InputError) as err:
            read_rows([str(path)])
        said = str(err.value)
        assert repr(name) in said and repr(twin) in said and "--map reward=" in said
        assert "\n" not in said
        for chosen in (name, twin):
            read = read_rows([str(path)], mapping={"reward": chosen})
            assert read.frame.select(pl.col("reward").sum()).collect().item() == sum(
                r[chosen] for r in rows
            )
    else:
        read = read_rows([str(path)])
        assert read.frame.select(pl.col("reward").sum()).collect().item() == sum(
            r[name] for r in rows
        )
