"""Helpers the reading tests share: write rows as JSON Lines, read a file to its frame."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from whilecli.io.read import read_rows
from whilecli.route.model import CANONICAL_SCHEMA


def jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    """``rows`` written to ``path`` one JSON object per line; returns ``path``."""
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def frame_of(path: Path | str, **kwargs: Any) -> tuple[pl.DataFrame, Any]:
    """The canonical frame ``read_rows`` gives for ``path`` (its schema checked), and the rows."""
    rows = read_rows([str(path)], **kwargs)
    frame = rows.frame.collect()
    assert frame.schema == pl.Schema(CANONICAL_SCHEMA)
    return frame, rows
