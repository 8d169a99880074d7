"""A pool read apart by the values of one column (``--by COLUMN``: a model, an environment,
a difficulty): each slice's rows read as if they were the whole input (DESIGN section 1).

What reading finds is a property of the rows it reads: error replies, ungraded rows, partial
credit, ids that are one per row, identical draws and cut-off partial credit are counted over
a slice's own rows, and a slice its rows alone would refuse (most replies errors, no graded
row) is refused. Each slice is read with the column's value as a row filter applied before
any fact is computed (:class:`whilecli.io.read.Slice`), so every fact is the one the same
rows read alone give, and every row keeps its file position for ``--show``. The input is
expanded once (stdin and FIFOs included); the first read validates the pool as a whole and
finds the values in the order they first occur.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, BinaryIO

from whilecli.errors import InputError
from whilecli.io.read import Slice, StreamedRows, read_rows
from whilecli.io.rows import Aggregate
from whilecli.io.sources import expand_paths

#: Slices read at the most (a column with thousands of values is no slicing column).
MAX_SLICES = 64


def read_slices(
    paths: Sequence[str],
    by: str,
    *,
    aggregate: Callable[[], Aggregate | None] = lambda: None,
    stdin: BinaryIO | None = None,
    input_format: str | None = None,
    **read_args: Any,
) -> list[tuple[str | None, StreamedRows]]:
    """Each value of column ``by`` (as text, None for rows without it) with its rows, read
    as :func:`~whilecli.io.read.read_rows` reads a whole input: its own facts, notes,
    positions and a fresh ``aggregate()``. A slice whose rows alone are refused is refused,
    the error naming the slice."""
    notes: list[str] = []
    sources = expand_paths(paths, stdin, notes, input_format=input_format)
    whole = read_rows(paths, by=by, sources=sources, input_format=input_format, **read_args)
    found = whole.slices
    if len(found) > MAX_SLICES:
        raise InputError(
            f"--by: the column has {len(found)} values; at most {MAX_SLICES} slices are routed",
            field=by,
        )
    out: list[tuple[str | None, StreamedRows]] = []
    for value in found:
        try:
            rows = read_rows(
                paths,
                sources=sources,
                input_format=input_format,
                aggregate=aggregate(),
                only=Slice(by, value),
                **read_args,
            )
        except InputError as err:
            said = f" (--by {by}: {'(none)' if value is None else value})"
            err.args = (f"{err.args[0]}{said}", *err.args[1:])
            err.detail += said
            raise
        rows.notes[:0] = notes
        out.append((value, rows))
    return out
