"""Parquet decimals past 38 digits (pyarrow's decimal256) in any field: refused in one line
naming the file and the column, never "cannot read: precision must be between 1 and 38"."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app

COLUMNS = {
    "task_id": (pa.string(), ["t0", "t0", "t1", "t1"]),
    "reward": (pa.float64(), [1.0, 0.0, 1.0, 1.0]),
    "truncated": (pa.bool_(), [False, False, True, False]),
}
VALUES = {"task_id": [1, 1, 2, 2], "reward": [1, 0, 1, 1], "truncated": [0, 0, 1, 0]}


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(field=st.sampled_from(sorted(COLUMNS)), precision=st.integers(39, 76))
def test_a_wide_decimal_column_is_named(tmp_path: Path, field: str, precision: int) -> None:
    arrays = {name: pa.array(values, type=kind) for name, (kind, values) in COLUMNS.items()}
    wide = pa.decimal256(precision, 0)
    arrays[field] = pa.array([Decimal(v) for v in VALUES[field]], type=wide)
    path = tmp_path / f"{field}{precision}.parquet"
    pq.write_table(pa.table(arrays), path)
    done = CliRunner().invoke(app, ["route", str(path)])
    said = done.stderr.strip()
    assert done.exit_code == 2 and "\n" not in said, said
    assert f"field '{field}'" in said and f"decimal256({precision}, 0)" in said, said
