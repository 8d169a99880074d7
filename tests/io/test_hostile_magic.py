"""Hostile table bytes: an Arrow IPC (Feather) file, or Parquet bytes under a JSON Lines name,
is named by what its magic bytes say, not refused as text that is not UTF-8 at byte 9."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from whilecli.cli import app


@pytest.mark.parametrize(
    ("name", "write", "said"),
    [
        ("rows.feather", "ipc", "Arrow IPC (Feather)"),
        ("rows.ipc", "ipc", "Arrow IPC (Feather)"),
        ("rows.jsonl", "ipc", "Arrow IPC (Feather)"),
        ("rows.jsonl", "parquet", "Parquet file"),
        ("rows.json", "parquet", "Parquet file"),
        ("rows.ndjson", "parquet", "Parquet file"),
    ],
)
def test_table_bytes_are_named_by_their_magic(
    tmp_path: Path, name: str, write: str, said: str
) -> None:
    frame = pl.DataFrame({"task_id": ["a", "b"], "reward": [1.0, 0.0]})
    path = tmp_path / name
    frame.write_ipc(path) if write == "ipc" else frame.write_parquet(path)
    result = CliRunner().invoke(app, ["route", str(path), "-q"])
    assert result.exit_code == 2 and name in result.output and said in result.output, result.output
    assert "UTF-8" not in result.output
