"""CSV and TSV rows with a header line, read by polars (types inferred from the whole file)."""

from __future__ import annotations

from typing import Any

import polars as pl

from whilecli.errors import InputError
from whilecli.io.formats import Converted


def convert(data: bytes, name: str, separator: str) -> Converted:
    try:
        frame = pl.read_csv(data, separator=separator, infer_schema_length=None)
    except (pl.exceptions.PolarsError, ValueError) as err:
        first = " ".join(str(err).split())[:160]
        raise InputError(f"not readable as {_label(separator)}: {first}", file=name) from None
    rows: list[dict[str, Any]] = frame.to_dicts()
    return Converted("csv", rows, {})


def _label(separator: str) -> str:
    return "TSV" if separator == "\t" else "CSV"
