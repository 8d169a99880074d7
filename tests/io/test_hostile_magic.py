"""Hostile table bytes: an Arrow IPC (Feather) file is named by what its magic bytes say, not
refused as text that is not UTF-8 at byte 9; Parquet bytes under a JSON Lines name are read
as the Parquet they are (as a stream's bytes are, and as ``update`` reads them)."""

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


@pytest.mark.parametrize("name", ["rows.jsonl", "rows.json", "rows.ndjson", "rows.csv"])
def test_parquet_bytes_under_a_text_name_are_read_as_parquet(tmp_path: Path, name: str) -> None:
    frame = pl.DataFrame(
        {
            "task_id": [f"t{i // 4}" for i in range(80)],
            "reward": [float(i % 3 == 0) for i in range(80)],
        }
    )
    frame.write_parquet(tmp_path / name)
    frame.write_parquet(tmp_path / "same.parquet")
    got = CliRunner().invoke(app, ["route", str(tmp_path / name), "-q"])
    want = CliRunner().invoke(app, ["route", str(tmp_path / "same.parquet"), "-q"])
    assert got.exit_code == want.exit_code == 0, got.output
    assert got.output == want.output
