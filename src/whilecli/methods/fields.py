"""Batch fields, held by :mod:`whilecli.io.columns` (numpy only; the file readers are :mod:`whilecli.io.batch`); these names
stay importable from here."""

from __future__ import annotations

from whilecli.io.columns import (
    LIST_ALIASES,
    LIST_FIELDS,
    LOGPROB_FIELDS,
    SCALAR_ALIASES,
    SCALAR_FIELDS,
    Columns,
    columns_from_rows,
    parse_map,
    resolve,
)

__all__ = [
    "LIST_ALIASES",
    "LIST_FIELDS",
    "LOGPROB_FIELDS",
    "SCALAR_ALIASES",
    "SCALAR_FIELDS",
    "Columns",
    "columns_from_rows",
    "parse_map",
    "resolve",
]
