"""Helpers the reading tests share: write rows as JSON Lines, read a file to its frame, and
the readers of every command, to hold them to one answer."""

from __future__ import annotations

import json
from collections.abc import Callable
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


def every_reader(path: Path | str) -> tuple[Callable[[], Any], ...]:
    """The reading each command does of ``path``: route/check (``read_rows``), diff/size
    (``read_tasks``), ada and the row methods (``read_table``) and update (``read_batch``)."""
    from whilecli.commands.diff import read_tasks
    from whilecli.io.batch import read_batch
    from whilecli.io.table import read_table

    return (
        lambda: read_rows([str(path)]),
        lambda: read_tasks(str(path), mapping=None, pass_threshold=None, input_format=None),
        lambda: read_table([str(path)]),
        lambda: read_batch(Path(path)),
    )
