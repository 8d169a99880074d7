"""``--map FIELD=COLUMN`` reads alike in JSON Lines and Parquet, whichever other field reads
the column too (``--map reward=truncated`` beside the truncation flag's own reading of
``truncated``): the JSON Lines scan reads a leaf as one type, and leaked a polars error
(``is_nan`` on a bool) where the Parquet file routed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLES
from whilecli.cli import app

FIELDS = ("reward", "task_id", "model", "truncated", "passed")
COLUMNS = ("truncated", "reward", "task_id", "model")


def _said(path: Path, mapping: str) -> tuple[int, object]:
    res = CliRunner().invoke(app, ["route", str(path), "--map", mapping, "--format", "json"])
    assert "Traceback" not in res.output and "internal error" not in res.output, res.output
    if res.exit_code == 2:
        return 2, res.output.split("error: ", 1)[-1].split(":")[-1].strip()[:40]
    doc = json.loads(res.stdout)
    return res.exit_code, (doc["method"], doc["route"], doc["summary"])


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("column", COLUMNS)
def test_a_mapped_column_reads_alike_in_every_encoding(field: str, column: str) -> None:
    if field == column:
        return
    mapping = f"{field}={column}"
    jsonl = _said(EXAMPLES / "mixed.jsonl", mapping)
    parquet = _said(EXAMPLES / "mixed.parquet", mapping)
    assert jsonl[0] == parquet[0], (jsonl, parquet)
    if jsonl[0] != 2:
        assert jsonl == parquet
