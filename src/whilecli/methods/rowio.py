"""Rows for the row-wise methods (GroupwiseGrading, ReinforceAda, the reward model).

These methods work on one number per rollout, so their input is a table, not padded
tensors. The table is read by the one reading layer (:mod:`whilecli.io.table`): the same
sources (files, directories, globs, stdin, gzip/zstd), the same task id and reward (aliases,
Prime RFT key, rewards dict, prompt hash) and the same pass rule (reward ≥
``--pass-threshold``, default 1.0; rewards outside [0, 1] refused without one) as ``route``.
This module adds what only these methods need:

- :func:`table_of`: a :class:`~whilecli.io.table.Table` from a frame built in code (read by
  the same rules as a file) or as given;
- the method-specific extra columns (grader factors, ranks, scores, hack flags), found by
  alias in ``table.frame`` (:func:`find_column`) and read with their bad values located at
  their file and line (:func:`float_column`, :func:`bool_column`);
- writing output rows atomically, Parquet or JSONL by extension, never replacing a file
  without ``force`` (:func:`write_rows`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

from whilecli.fileio import atomic_write_all, output_format
from whilecli.io.table import Table, frame_table, read_table

__all__ = [
    "Table",
    "bool_column",
    "column_expr",
    "find_column",
    "float_column",
    "has_column",
    "read_table",
    "table_of",
    "write_rows",
]


def table_of(
    rows: pl.DataFrame | Table,
    *,
    pass_threshold: float | None = None,
    optional: Sequence[str] = (),
    exclude_reward: Sequence[str] = (),
) -> Table:
    """``rows`` as a table: a :class:`Table` as it is, a frame read by the file rules."""
    if isinstance(rows, Table):
        return rows
    return frame_table(
        rows, pass_threshold=pass_threshold, optional=optional, exclude_reward=exclude_reward
    )


def has_column(frame: pl.DataFrame, name: str) -> bool:
    """Whether ``name`` (dotted for a struct field) exists in ``frame``."""
    head, _, rest = name.partition(".")
    if head not in frame.columns:
        return False
    if not rest:
        return True
    dtype = frame.schema[head]
    return isinstance(dtype, pl.Struct) and rest in {f.name for f in dtype.fields}


def column_expr(name: str) -> pl.Expr:
    """A polars expression for ``name``, following one dot into a struct."""
    head, _, rest = name.partition(".")
    return pl.col(head).struct.field(rest) if rest else pl.col(head)


def find_column(
    frame: pl.DataFrame, aliases: Sequence[str], *, exclude: Sequence[str] = ()
) -> str | None:
    """The first alias present in ``frame`` (and not in ``exclude``), else None."""
    for name in aliases:
        if name not in exclude and has_column(frame, name):
            return name
    return None


def float_column(
    table: Table,
    name: str,
    *,
    allow_null: bool = False,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
) -> pl.Series:
    """Extra column ``name`` as Float64, refusing non-numbers, non-finite values and values
    out of range, each at its file and line.

    Booleans read as 1.0 / 0.0. Nulls are refused unless ``allow_null``. The range is
    ``[low, high]`` (``(low, high]`` with ``low_open``).
    """
    raw = table.frame.select(column_expr(name)).to_series()
    if raw.dtype == pl.String:
        values = raw.str.strip_chars().cast(pl.Float64, strict=False)
    elif raw.dtype.is_numeric() or raw.dtype in (pl.Boolean, pl.Null):
        values = raw.cast(pl.Float64, strict=False)
    else:
        raise table.error(f"expected a number, got {raw.dtype}", field=name)
    unreadable = values.is_null() & raw.is_not_null()
    if unreadable.any():
        i = _first(unreadable)
        raise table.error(f"expected a number, got {raw[i]!r}", row=i, field=name)
    if not allow_null and values.is_null().any():
        raise table.error("value is missing", row=_first(values.is_null()), field=name)
    bad = ~values.is_finite()
    if bad.fill_null(False).any():
        i = _first(bad.fill_null(False))
        raise table.error(f"value is not finite ({values[i]})", row=i, field=name)
    out_low = (values <= low if low_open else values < low) if low is not None else None
    out_high = values > high if high is not None else None
    for out in (out_low, out_high):
        if out is not None and out.fill_null(False).any():
            i = _first(out.fill_null(False))
            lo = "(" if low_open else "["
            raise table.error(f"value {values[i]} is outside {lo}{low}, {high}]", row=i, field=name)
    return values.alias(name)


def bool_column(table: Table, name: str) -> pl.Series:
    """Extra column ``name`` as Boolean (null → False); numbers 0/1 and the strings
    true/false accepted."""
    raw = table.frame.select(column_expr(name)).to_series()
    if raw.dtype == pl.Boolean:
        return raw.fill_null(False)
    if raw.dtype == pl.String:
        low = raw.str.strip_chars().str.to_lowercase()
        values = (
            pl.select(
                pl.when(low.is_in(["true", "1", "yes"]))
                .then(True)
                .when(low.is_in(["false", "0", "no", ""]))
                .then(False)
                .otherwise(None)
            )
            .to_series()
            .alias(name)
        )
    elif raw.dtype.is_numeric() or raw.dtype == pl.Null:
        values = pl.select(
            pl.when(raw == 1).then(True).when(raw == 0).then(False).otherwise(None)
        ).to_series()
    else:
        raise table.error(f"expected true/false, got {raw.dtype}", field=name)
    unreadable = values.is_null() & raw.is_not_null()
    if unreadable.any():
        i = _first(unreadable)
        raise table.error(f"expected true/false, got {raw[i]!r}", row=i, field=name)
    return values.fill_null(False).alias(name)


def _first(mask: pl.Series) -> int:
    """Index of the first True in a boolean series."""
    return int(mask.arg_true()[0])


def write_rows(frame: pl.DataFrame, path: str, *, force: bool = False) -> str:
    """Write ``frame`` to ``path`` atomically: Parquet (``.parquet``/``.pq``) or JSONL.

    ``-`` writes JSONL to stdout. An existing file is replaced only with ``force``.
    Returns the path written (``-`` for stdout).
    """
    write_rows_all([(frame, path)], force=force)
    return path


def write_rows_all(outputs: Sequence[tuple[pl.DataFrame, str]], *, force: bool = False) -> None:
    """Write a command's row outputs as one (:func:`whilecli.fileio.atomic_write_all`): ``-``
    to stdout before any file is moved into place, so a stdout that fails leaves no file."""
    writers = [(path, _row_writer(frame, path)) for frame, path in outputs if path != "-"]
    shown = [frame for frame, path in outputs if path == "-"]

    def to_stdout() -> None:
        for frame in shown:
            sys.stdout.write(frame.write_ndjson())
            sys.stdout.flush()

    atomic_write_all(writers, force=force, stdout=to_stdout if shown else None)


def _row_writer(frame: pl.DataFrame, path: str) -> Callable[[Path], None]:
    """How ``frame`` is written to a file named ``path``: Parquet or JSON Lines by its suffix
    (:func:`whilecli.fileio.output_format`: a device or a pipe takes JSON Lines)."""
    if output_format(path) == "parquet":
        return lambda tmp: frame.write_parquet(tmp)
    return lambda tmp: frame.write_ndjson(tmp)
