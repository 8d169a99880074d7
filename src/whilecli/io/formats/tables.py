"""CSV and TSV rows with a header line, each record located by the line it starts on.

Every cell is read as text first. Id columns (the task-id aliases, any ``*_id`` or ``id``) stay
text, so ``7`` and ``07`` (or ``1.1`` and ``1.10``) are two tasks and ``0003`` keeps its zeros;
any other column whose every cell is a number (or ``true``/``false``) is read as one.
"""

from __future__ import annotations

import csv
import io
from typing import Any

import polars as pl

from whilecli.errors import InputError
from whilecli.io.formats import Converted

#: The longest cell read (Python's csv refuses cells past 128 KiB by default; a completion
#: may be longer).
CELL_LIMIT = (1 << 31) - 1


def convert(data: bytes, name: str, separator: str) -> Converted:
    """Rows of a CSV or TSV file, each with the line its record starts on; a record whose
    fields do not match the header, or bad quoting, is refused at its line."""
    separator = _sniffed(data, separator)
    label = _label(separator)
    header, records, lines, kept = _records(data, name, separator, label)
    frame = _cells(data, separator, header, kept)
    if frame is None:  # polars and the csv module part records differently: the module's cells
        columns = {
            column: pl.Series(column, [r[k] for r in records], dtype=pl.String)
            for k, column in enumerate(header)
        }
        frame = pl.DataFrame(columns) if columns else pl.DataFrame()
    frame = frame.with_columns([_typed(frame[c]) for c in frame.columns if not _is_id(c)])
    rows: list[dict[str, Any]] = frame.to_dicts()
    return Converted("csv", rows, {}, positions=[{"line": n} for n in lines])


#: Separators a table's header line may use instead of the one its name says.
SEPARATORS = (",", "\t", ";", "|")


def _sniffed(data: bytes, separator: str) -> str:
    """The separator the header line uses: the one the name says (``,`` for .csv, a tab for
    .tsv) where the header holds it, else the only other one it holds (a tab-separated file
    named .csv, a semicolon CSV)."""
    header = data.split(b"\n", 1)[0]
    if separator.encode() in header:
        return separator
    found = [s for s in SEPARATORS if s.encode() in header]
    return found[0] if len(found) == 1 else separator


def _cells(data: bytes, separator: str, header: list[str], kept: list[int]) -> pl.DataFrame | None:
    """The records' cells as polars reads them (an empty cell is null, a quoted ``""`` the
    empty text, as polars writes them), the records at ``kept`` (the csv module's records,
    blank lines among them, by index); None when the two part the file differently."""
    try:
        frame = pl.read_csv(
            data.decode("utf-8-sig").encode(), separator=separator, infer_schema=False
        )
    except (pl.exceptions.PolarsError, ValueError):
        return None
    if frame.columns != header or frame.height < (kept[-1] + 1 if kept else 0):
        return None
    return frame[kept] if kept else frame.clear()


def _records(
    data: bytes, name: str, separator: str, label: str
) -> tuple[list[str], list[list[str | None]], list[int], list[int]]:
    """The header, every record (an empty cell as None), the line each record starts on, and
    each record's index among the lines after the header, blank ones counted (as polars
    counts them); blank lines skipped."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise InputError(f"not valid UTF-8 (byte {err.start + 1})", file=name, line=line) from None
    csv.field_size_limit(CELL_LIMIT)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=separator, strict=True)
    header: list[str] | None = None
    records: list[list[str | None]] = []
    lines: list[int] = []
    kept: list[int] = []
    index = 0  # records after the header, blank lines included
    start = 1
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as err:
            raise InputError(
                f"not readable as {label}: {_reason(err)}", file=name, line=start
            ) from None
        at, start = start, reader.line_num + 1
        if header is not None:
            index += 1
        if not fields:
            continue  # a blank line
        if header is None:
            header = fields
            twice = next((c for i, c in enumerate(fields) if c in fields[:i]), None)
            if twice is not None:
                raise InputError(f"the header names column {twice!r} twice", file=name, line=at)
            continue
        if len(fields) != len(header):
            raise InputError(
                f"{len(fields)} field{'s' if len(fields) != 1 else ''}, the header has {len(header)} (a ragged row, or a"
                f" separator inside an unquoted cell)",
                file=name,
                line=at,
            )
        records.append([f if f != "" else None for f in fields])
        lines.append(at)
        kept.append(index - 1)
    if header is None:
        raise InputError(f"an empty {label} file: no header line", file=name)
    return header, records, lines, kept


def _reason(err: csv.Error) -> str:
    text = " ".join(str(err).split())
    if text.endswith("expected after '\"'"):
        return "a quote closed in the middle of a cell"
    if text == "unexpected end of data":
        return "a quote opened and never closed"
    return text


def _is_id(column: str) -> bool:
    from whilecli.io.aliases import TASK_ALIASES

    name = column.strip().lower()
    return name in TASK_ALIASES or name == "id" or name.endswith(("_id", ".id"))


#: Cells that say "no value" in a column of numbers or booleans (R's and pandas' writers):
#: read as null, so an ungraded row is left out and counted as in JSON Lines.
MISSING_CELLS = ("na", "n/a", "nan", "null", "none")


def _typed(column: pl.Series) -> pl.Series:
    """A text column as booleans or numbers when every cell reads as one (a missing-value
    cell, :data:`MISSING_CELLS`, as null); as numbers with its odd cells left as text when
    most cells are numbers (so the reader names the first odd cell at its line, as it would
    in JSON Lines); else as it is."""
    text = column.str.strip_chars()
    missing = text.str.to_lowercase().is_in(MISSING_CELLS).fill_null(False)
    cells = pl.select(pl.when(missing).then(None).otherwise(text)).to_series().alias(column.name)
    present = cells.drop_nulls()
    if present.len() == 0:
        return column
    lowered = present.str.to_lowercase()
    if lowered.is_in(["true", "false"]).all():
        return pl.select(cells.str.to_lowercase() == "true").to_series().alias(column.name)
    for dtype in (pl.Int64, pl.Float64):
        cast = present.cast(dtype, strict=False)
        if cast.null_count() == 0:
            return cells.cast(dtype, strict=False).alias(column.name)
    numbers = cells.cast(pl.Float64, strict=False)
    if numbers.null_count() - cells.null_count() < present.len() / 2:
        values: list[object] = [
            v if v is not None else (None if gone else t)
            for v, t, gone in zip(
                numbers.to_list(), column.to_list(), missing.to_list(), strict=True
            )
        ]
        return pl.Series(column.name, values, dtype=pl.Object)
    return column


def _label(separator: str) -> str:
    return "TSV" if separator == "\t" else "CSV"
