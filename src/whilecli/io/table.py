"""Rows as a table with extra columns: the canonical fields beside every input column.

The row methods (GroupwiseGrading, ReinforceAda, the reward model) work on one number per
rollout and write every input row back, so they need the whole table, not only the
canonical frame. :func:`read_table` is a view of the one reader,
:func:`whilecli.io.read.read_rows`, asked to keep the rows (:class:`~whilecli.io.read.Keep`):
the same sources, plan, row facts, refusals and canonical frame as ``route``, with the kept
rows' positions and every input column of each source. So for any file the task ids,
rewards and passes a row method sees are the ones ``route`` sees.

Beside them, :class:`Table` holds every input column as read (``frame``: the extra columns a
method needs, per-rubric scores, grader factors, prompt text, ...), row for row, and where
each row came from, so :meth:`Table.error` names ``FILE:LINE`` (JSONL, 1-based) or
``FILE: row N`` (Parquet, 0-based).
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import polars as pl

from whilecli.errors import InputError
from whilecli.io.facts import Facts
from whilecli.io.locate import (
    POS,
)
from whilecli.io.read import Keep, read_rows
from whilecli.io.rows import AT, AT_BITS, CANONICAL_SCHEMA
from whilecli.io.sources import (
    Source,
    expand_paths,
    iter_lines,
)

#: "Inside [0, 1]" allows this much rounding at either end.
TOLERANCE = 1e-12
SRC = "__src"
#: Per row: the reply holds something (the plan's ``generated``; null: no reply field).
GENERATED = "__generated"
OPTIONAL = ("task_id", "reward")


@dataclass
class Table:
    """Graded rows: the canonical columns, every input column, and where each row came from.

    ``canonical`` holds :data:`~whilecli.io.rows.CANONICAL_SCHEMA` (``task_id`` null on every
    row when it was not needed and the rows carry none; ``reward`` likewise). ``frame`` holds
    the input columns as read, row ``i`` beside canonical row ``i``. ``origin`` holds, per
    row, the index of its source and its row in that source (0-based, blank lines skipped).
    """

    canonical: pl.DataFrame
    frame: pl.DataFrame
    origin: pl.DataFrame
    sources: list[Source]
    columns: dict[str, str]  # canonical field -> the column (or rule) that fed it
    fields: dict[str, str]  # canonical field -> the column an error cites
    format: str
    pass_threshold: float
    threshold_explicit: bool
    partial_rows: int = 0
    notes: list[str] = field(default_factory=list)
    #: Optional fields no file carried (read as null on every row).
    absent: frozenset[str] = frozenset()
    #: What reading found the rows to mean (:class:`whilecli.io.facts.Facts`): the error
    #: replies and ungraded rows left out (or, under ``--missing fail``, kept as failures).
    facts: Facts = field(default_factory=Facts)
    options: dict[str, Any] = field(default_factory=dict, repr=False)
    _lines: dict[int, list[int]] = field(default_factory=dict, repr=False)

    @property
    def height(self) -> int:
        return self.canonical.height

    def reread(self, **changes: Any) -> Table:
        """The same sources read again with some options changed (e.g. ``exclude_reward``)."""
        return read_sources(self.sources, **{**self.options, **changes})

    def _where(self, row: int) -> tuple[Source, dict[str, Any]]:
        src, pos = self.origin.row(row)
        source = self.sources[src]
        if source.kind == "parquet":
            return source, {"row": int(pos)}
        lines = self._lines.get(src)
        if lines is None:
            lines = [n for n, _ in iter_lines(source)]
            self._lines[src] = lines
        return source, dict(source.where(lines[int(pos)]))

    def file(self) -> str | None:
        """The file an error without a row names: the one source, or the first of several."""
        names = [s.name for s in self.sources if not _memory(s)]
        if not names:
            return None
        return names[0] if len(names) == 1 else f"{names[0]} (and {len(names) - 1} more)"

    def error(
        self, message: str, *, row: int | None = None, field: str | None = None
    ) -> InputError:
        """An :class:`InputError` that names the file and line (or row) of ``row``."""
        if row is None or not 0 <= row < self.height:
            return InputError(message, file=self.file(), row=row, field=field)
        source, where = self._where(row)
        if _memory(source):
            return InputError(message, row=row, field=field)
        return InputError(message, file=source.name, field=field, **where)

    def locate(self, err: InputError) -> InputError:
        """Re-issue an error raised with a table row (``row=``, no file) at its file and line."""
        if err.file is not None:
            return err
        raw = str(err)
        prefix = f"row {err.row}: " if err.row is not None else ""
        prefix += f"field '{err.field}': " if err.field else ""
        message = raw[len(prefix) :] if raw.startswith(prefix) else raw
        return self.error(message, row=err.row, field=err.field)


def read_table(
    paths: Sequence[str],
    *,
    mapping: Mapping[str, str] | None = None,
    pass_threshold: float | None = None,
    input_format: str | None = None,
    stdin: BinaryIO | None = None,
    optional: Sequence[str] = (),
    exclude_reward: Sequence[str] = (),
    missing: str = "skip",
    pool: bool = False,
) -> Table:
    """Read every path as a :class:`Table` (see the module docstring).

    ``optional``: canonical fields (``task_id``, ``reward``) a method can do without; rows
    that carry none read them as null instead of being refused. ``exclude_reward``: columns
    that are never the reward (a reward model's own score); the next reward alias is taken.
    ``missing`` (``--missing``): ungraded rows are left out (``skip``) or fail (``fail``).
    ``pool`` (``--pool``): files of different evaluations, or one task id carrying different
    prompts in two files, are read as one table (refused without it, as the route refuses).
    """
    return read_sources(
        expand_paths(paths, stdin, input_format=input_format),
        mapping=mapping,
        pass_threshold=pass_threshold,
        input_format=input_format,
        optional=optional,
        exclude_reward=exclude_reward,
        missing=missing,
        pool=pool,
    )


def frame_table(
    frame: pl.DataFrame,
    *,
    pass_threshold: float | None = None,
    optional: Sequence[str] = (),
    exclude_reward: Sequence[str] = (),
    missing: str = "skip",
) -> Table:
    """A frame built in code read as a table, by the same rules as a file (errors name rows)."""
    buf = io.BytesIO()
    try:
        frame.write_parquet(buf)
    except (pl.exceptions.PolarsError, OSError) as err:
        raise InputError(f"cannot read the rows: {_short(err)}") from None
    source = Source(name=MEMORY_NAME, kind="parquet", data=buf.getvalue())
    return read_sources(
        [source],
        pass_threshold=pass_threshold,
        optional=optional,
        exclude_reward=exclude_reward,
        missing=missing,
    )


MEMORY_NAME = "<rows>"


def _memory(source: Source) -> bool:
    return source.path is None and source.name == MEMORY_NAME


def read_sources(
    sources: Sequence[Source],
    *,
    mapping: Mapping[str, str] | None = None,
    pass_threshold: float | None = None,
    input_format: str | None = None,
    optional: Sequence[str] = (),
    exclude_reward: Sequence[str] = (),
    missing: str = "skip",
    pool: bool = False,
) -> Table:
    """:func:`read_table` on sources already expanded: the one reader
    (:func:`whilecli.io.read.read_rows`) keeping the rows, their positions and every input
    column (:class:`whilecli.io.read.Keep`)."""
    options: dict[str, Any] = {
        "mapping": dict(mapping or {}),
        "pass_threshold": pass_threshold,
        "input_format": input_format,
        "optional": tuple(optional),
        "exclude_reward": tuple(exclude_reward),
        "missing": missing,
        "pool": pool,
    }
    keep = Keep(optional=tuple(optional), exclude_reward=tuple(exclude_reward))
    try:
        rows = read_rows(
            [s.name for s in sources],
            sources=sources,
            mapping=mapping,
            pass_threshold=pass_threshold,
            input_format=input_format,
            pool=pool,
            missing=missing,
            keep=keep,
        )
    except InputError as err:
        raise _unfiled(err) from None
    assert rows.kept_rows is not None
    kept = rows.kept_rows
    at = pl.col(AT)
    place = at.and_(pl.lit((1 << AT_BITS) - 1, dtype=pl.Int64))
    origin = kept.select(
        (at // (1 << AT_BITS)).alias(SRC),
        place.alias(POS),
    ).with_columns(  # a JSON Lines place counts lines from 1; a Parquet row from 0
        pl.when(pl.col(SRC).replace_strict(_line_based(sources), default=False))
        .then(pl.col(POS) - 1)
        .otherwise(pl.col(POS))
        .alias(POS)
    )
    frame = _inputs(rows.inputs, origin)
    canonical = kept.drop(AT)
    if missing == "fail":  # an ungraded row kept by --missing fail is a failure: reward 0
        canonical = canonical.with_columns(
            reward=pl.when(pl.col("graded")).then(pl.col("reward")).otherwise(pl.lit(0.0))
        )
    for name in rows.absent:
        canonical = canonical.with_columns(pl.lit(None, dtype=CANONICAL_SCHEMA[name]).alias(name))
    notes = [*rows.notes, *rows.facts.warnings()]
    return Table(
        canonical=canonical,
        frame=frame,
        origin=origin,
        sources=list(sources),
        columns=dict(rows.sources),
        fields=dict(rows.fields),
        format=rows.format,
        pass_threshold=rows.pass_threshold,
        threshold_explicit=rows.threshold_explicit,
        partial_rows=rows.partial_rows,
        notes=notes,
        absent=rows.absent,
        facts=rows.facts,
        options=options,
    )


def _line_based(sources: Sequence[Source]) -> dict[int, bool]:
    return {i: s.kind != "parquet" for i, s in enumerate(sources)}


def _inputs(inputs: Mapping[int, pl.DataFrame], origin: pl.DataFrame) -> pl.DataFrame:
    """Every input column of the kept rows, row ``i`` beside canonical row ``i``."""
    frames: list[pl.DataFrame] = []
    for src, rows in origin.group_by(SRC, maintain_order=True):
        whole = inputs[int(src[0])]
        positions = rows.get_column(POS)
        if positions.len() and int(positions.max()) >= whole.height:  # type: ignore[arg-type]
            raise InputError("cannot read the rows: the lines do not parse alike")
        if positions.len() == whole.height and positions.equals(
            pl.int_range(whole.height, eager=True)
        ):
            frames.append(whole)
        else:
            frames.append(whole[positions.to_list()])
    if not frames:
        return pl.DataFrame()
    try:
        return pl.concat(frames, how="diagonal_relaxed") if len(frames) > 1 else frames[0]
    except pl.exceptions.PolarsError:
        raise InputError("the files hold one column with different types") from None


def _unfiled(err: InputError) -> InputError:
    """An error about a frame built in code names its row, never the placeholder file."""
    if err.file != MEMORY_NAME:
        return err
    raw = str(err)
    prefix = f"{MEMORY_NAME}: " if raw.startswith(f"{MEMORY_NAME}: ") else f"{MEMORY_NAME}"
    where = f"row {err.row}: " if err.row is not None else ""
    message = raw[len(prefix) :]
    message = message[len(where) :] if where and message.startswith(where) else message
    lead = f"field '{err.field}': "
    message = message[len(lead) :] if err.field and message.startswith(lead) else message
    return InputError(message, row=err.row, field=err.field)


def _short(err: BaseException) -> str:
    return " ".join(str(err).split())[:200]


__all__ = [
    "Table",
    "frame_table",
    "read_sources",
    "read_table",
]
