"""Batch fields, now read by :mod:`whilecli.io.batch` (the one reading layer); these names
stay importable from here."""

from __future__ import annotations

from whilecli.io.batch import (
    LIST_ALIASES,
    LIST_FIELDS,
    LOGPROB_FIELDS,
    SCALAR_ALIASES,
    SCALAR_FIELDS,
    Columns,
    columns_from_rows,
    parse_map,
    resolve,
    reward_of_parts,
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
    "reward_of_parts",
]
