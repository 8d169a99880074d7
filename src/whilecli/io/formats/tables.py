"""CSV and TSV rows with a header line, read by polars.

Every cell is read as text first. Id columns (the task-id aliases, any ``*_id`` or ``id``) stay
text, so ``7`` and ``07`` (or ``1.1`` and ``1.10``) are two tasks and ``0003`` keeps its zeros;
any other column whose every cell is a number (or ``true``/``false``) is read as one.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from whilecli.errors import InputError
from whilecli.io.formats import Converted


def convert(data: bytes, name: str, separator: str) -> Converted:
    try:
        frame = pl.read_csv(data, separator=separator, infer_schema=False)
    except (pl.exceptions.PolarsError, ValueError) as err:
        first = " ".join(str(err).split())[:160]
        raise InputError(f"not readable as {_label(separator)}: {first}", file=name) from None
    frame = frame.with_columns([_typed(frame[c]) for c in frame.columns if not _is_id(c)])
    rows: list[dict[str, Any]] = frame.to_dicts()
    return Converted("csv", rows, {})


def _is_id(column: str) -> bool:
    from whilecli.io.aliases import TASK_ALIASES

    name = column.strip().lower()
    return name in TASK_ALIASES or name == "id" or name.endswith(("_id", ".id"))


def _typed(column: pl.Series) -> pl.Series:
    """A text column as booleans or numbers when every cell reads as one, else as it is."""
    text = column.str.strip_chars()
    present = text.drop_nulls()
    if present.len() == 0:
        return column
    lowered = present.str.to_lowercase()
    if lowered.is_in(["true", "false"]).all():
        return text.str.to_lowercase().eq("true").alias(column.name)
    for dtype in (pl.Int64, pl.Float64):
        cast = present.cast(dtype, strict=False)
        if cast.null_count() == 0:
            return text.cast(dtype, strict=False).alias(column.name)
    return column


def _label(separator: str) -> str:
    return "TSV" if separator == "\t" else "CSV"
