"""A pool read apart by the values of one column (``--by COLUMN``: a model, an environment,
a difficulty): each slice's rows read as if they were the whole input (DESIGN section 1).

What reading finds is a property of the rows it reads: error replies, ungraded rows, partial
credit, ids that are one per row, identical draws and cut-off partial credit are counted over
a slice's own rows, and a slice its rows alone would refuse (most replies errors, no graded
row) is refused. Each input is read once (:func:`whilecli.io.read.read_by`; stdin and FIFOs
included): its pass groups every fact by the column's value as well as by task, the pool as
a whole is validated from the same pass, and each slice's facts are the ones the same rows
read alone give, every row keeping its file position for ``--show``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, BinaryIO

from whilecli.errors import InputError
from whilecli.io.read import MAX_SLICES, StreamedRows, read_by
from whilecli.io.rows import Aggregate
from whilecli.io.sources import expand_paths

__all__ = ["MAX_SLICES", "read_slices"]


def read_slices(
    paths: Sequence[str],
    by: str,
    *,
    aggregate: Callable[[], Aggregate | None] = lambda: None,
    stdin: BinaryIO | None = None,
    input_format: str | None = None,
    **read_args: Any,
) -> list[tuple[str | None, StreamedRows | InputError]]:
    """Each value of column ``by`` (as text, None for rows without it) with its rows, read
    as :func:`~whilecli.io.read.read_rows` reads a whole input: its own facts, notes,
    positions and a fresh ``aggregate()``; or, for a slice whose rows alone are refused,
    that refusal. What refuses the input as a whole (a file that cannot be read, more than
    :data:`MAX_SLICES` values) is raised."""
    notes: list[str] = []
    sources = expand_paths(paths, stdin, notes, input_format=input_format)
    read = read_by(
        paths, by, sources=sources, input_format=input_format, aggregate=aggregate(), **read_args
    )
    found = read.values
    if len(found) > MAX_SLICES:
        raise InputError(
            f"--by: the column has {len(found)} values; at most {MAX_SLICES} slices are routed",
            field=by,
        )
    out: list[tuple[str | None, StreamedRows | InputError]] = []
    for value in found:
        try:
            rows = read.rows(value, aggregate())
        except InputError as err:
            out.append((value, err))
            continue
        rows.notes[:0] = notes
        out.append((value, rows))
    return out
