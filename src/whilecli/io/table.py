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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import polars as pl

from whilecli.errors import InputError
from whilecli.io import facts
from whilecli.io.facts import Facts
from whilecli.io.locate import (
    POS,
    binary_columns_parquet,
    locate,
    unreadable,
)
from whilecli.io.plan import Plan
from whilecli.io.read import Keep, nothing_generated, plan_of, read_rows
from whilecli.io.rows import AT, AT_BITS, CANONICAL_SCHEMA
from whilecli.io.shape import BadValue, Leaves, Shape
from whilecli.io.sources import (
    Source,
    expand_paths,
    iter_lines,
)

#: A column no file carries, read as null where a method does not need a field.
ABSENT = "__absent"
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
) -> Table:
    """Read every path as a :class:`Table` (see the module docstring).

    ``optional``: canonical fields (``task_id``, ``reward``) a method can do without; rows
    that carry none read them as null instead of being refused. ``exclude_reward``: columns
    that are never the reward (a reward model's own score); the next reward alias is taken.
    ``missing`` (``--missing``): ungraded rows are left out (``skip``) or fail (``fail``).
    """
    return read_sources(
        expand_paths(paths, stdin, input_format=input_format),
        mapping=mapping,
        pass_threshold=pass_threshold,
        input_format=input_format,
        optional=optional,
        exclude_reward=exclude_reward,
        missing=missing,
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
    }
    keep = Keep(optional=tuple(optional), exclude_reward=tuple(exclude_reward))
    try:
        rows = read_rows(
            [s.name for s in sources],
            sources=sources,
            mapping=mapping,
            pass_threshold=pass_threshold,
            input_format=input_format,
            pool=True,  # a row method reads every file it is given as one table
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
        return _blank(0)
    try:
        return pl.concat(frames, how="diagonal_relaxed") if len(frames) > 1 else frames[0]
    except pl.exceptions.PolarsError:
        raise InputError("the files hold one column with different types") from None


def _refuse_nothing_generated(part: _Part) -> None:
    """Every reply empty is refused, by the rule the route reads replies with (the plan's
    ``generated``: :func:`whilecli.io.read.nothing_generated`)."""
    generated = part.canonical.get_column(GENERATED)
    if generated.count() and not generated.any():
        raise nothing_generated(
            generated.count(), part.plan, None if _memory(part.source) else part.source.name
        )


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


# --- one file ---------------------------------------------------------------------------


@dataclass
class _Part:
    source: Source
    index: int
    plan: Plan
    canonical: pl.DataFrame  # CANONICAL_SCHEMA less passed, plus __passed (and __pos)
    frame: pl.DataFrame
    positions: pl.Series  # each row's 0-based row in the source
    hint: Callable[[], list[str]]
    absent: set[str] = field(default_factory=set)
    graded: int = 0  # graded rows that are not harness errors (:func:`_facts_of`)


def _select(plan: Plan) -> list[pl.Expr]:
    none = pl.lit(None, dtype=pl.String)
    exprs = [
        plan.task_id.cast(pl.String).alias("task_id"),
        plan.reward.cast(pl.Float64).alias("reward"),
        plan.truncated.cast(pl.Boolean).alias("truncated"),
        plan.model.cast(pl.String).alias("model"),
        (plan.policy_version if plan.policy_version is not None else none)
        .cast(pl.String)
        .alias("policy_version"),
        (plan.passed if plan.passed is not None else pl.lit(None, dtype=pl.Boolean))
        .cast(pl.Boolean)
        .alias("__passed"),
        (plan.generated if plan.generated is not None else pl.lit(None, dtype=pl.Boolean))
        .cast(pl.Boolean)
        .alias(GENERATED),
        plan.reply.cast(pl.String).alias("reply"),
        facts.graded(plan.reward.cast(pl.Float64), plan.passed).alias(facts.GRADED),
        pl.col(POS).cast(pl.Int64),
    ]
    return exprs


def _narrow(lf: pl.LazyFrame, plan: Plan) -> pl.LazyFrame:
    if plan.row_filter is not None:
        lf = lf.filter(plan.row_filter.fill_null(False))
    return lf.select(_select(plan))


def _plan(
    shape: Shape,
    source: Source,
    schema: pl.Schema | None,
    mapping: Mapping[str, str],
    forced: str | None,
    first: Mapping[str, object] | None,
    options: Mapping[str, Any],
    sample: Sequence[Mapping[str, object]] = (),
    sample_lines: Sequence[int] = (),
) -> tuple[Plan, Leaves, set[str]]:
    """The one reader's plan (:func:`whilecli.io.read.plan_of`) with the optional fields."""
    keep = Keep(tuple(options.get("optional", ())), tuple(options.get("exclude_reward", ())))
    return plan_of(shape, source, schema, mapping, forced, first, keep, sample, sample_lines)


def _checked(
    part: _Part,
    source: Source,
    absent: set[str],
    line_of: Callable[[pl.DataFrame], pl.DataFrame],
    tolerant: bool = False,
) -> _Part:
    """Refuse the first row with a missing task id or an infinite reward (a null or NaN
    reward is an ungraded row, counted by :func:`_facts_of`)."""
    frame = part.canonical
    if "task_id" in absent:
        frame = frame.with_columns(task_id=pl.lit(""))
    if "reward" in absent:
        frame = frame.with_columns(reward=pl.lit(0.0))
    if tolerant:  # a row without a task id or a grade is refused by what needs it, not here
        frame = frame.with_columns(
            task_id=pl.col("task_id").fill_null(""), reward=pl.col("reward").fill_null(0.0)
        )
    part.absent = set(absent)
    for name in absent:
        part.plan.sources[name] = "not in the rows"
        part.plan.fields.pop(name, None)
    bad = frame.filter(unreadable()).head(1)
    if bad.height:
        locate(line_of(bad), part.plan, source, unreadable())
    part.canonical = part.canonical.drop(POS)
    return part


def _blank(height: int) -> pl.DataFrame:
    """A frame of ``height`` rows and no input column (a reader that needs none)."""
    return pl.select(pl.repeat(None, height, dtype=pl.Null).alias(ABSENT))


def _frame_part(
    lf: pl.LazyFrame,
    source: Source,
    index: int,
    mapping: Mapping[str, str],
    forced: str | None,
    options: Mapping[str, Any],
    line_of: Callable[[pl.DataFrame], pl.DataFrame],
) -> _Part:
    """One source already scanned as a frame (a Parquet file, or rows read by polars): its
    plan from the frame's schema and its canonical columns, checked (``line_of`` turns a bad
    row's 0-based position into what its error names)."""
    schema = lf.collect_schema()
    shape = Shape.from_schema(schema)
    first: dict[str, Any] = {}
    wanted = [c for c in ("metrics", "filter") if c in schema]
    if wanted:
        head = lf.select(wanted).head(1).collect()
        first = head.row(0, named=True) if head.height else {}
    try:
        plan, _, absent = _plan(shape, source, schema, mapping, forced, first, options)
    except BadValue as err:
        top = err.path.split(".")[0].split("[")[0]
        at = int(lf.select(pl.col(top).is_not_null().arg_max()).collect().item())
        place = line_of(pl.DataFrame({POS: [at]}, schema={POS: pl.Int64}))[POS][0]
        where = {"row": int(place)} if source.kind == "parquet" else source.where(int(place))
        raise InputError(err.what, file=source.name, field=err.path, **where) from None
    canonical = _narrow(lf.with_row_index(POS), plan).collect()
    positions = canonical.get_column(POS)
    part = _Part(
        source,
        index,
        plan,
        canonical,
        _blank(canonical.height),
        positions,
        lambda: binary_columns_parquet(lf, schema, plan),
    )
    return _checked(part, source, absent, line_of, bool(options.get("tolerant")))


def canonical_of_rows(
    rows: Sequence[dict[str, Any]],
    source: Source,
    *,
    mapping: Mapping[str, str] | None = None,
    optional: Sequence[str] = ("task_id", "reward"),
    lines: Sequence[int] | None = None,
) -> Canonical:
    """:func:`canonical_rows` of rows parsed one by one (the exact reader; rows already in
    memory): each value coerced to what the plan reads, the first bad one named at its line
    (``lines``) or row."""
    options = {"optional": tuple(optional), "exclude_reward": ()}
    shape = Shape.from_rows(rows)
    try:
        plan, leaves, absent = _plan(
            shape,
            source,
            None,
            dict(mapping or {}),
            None,
            rows[0] if rows else None,
            options,
            rows,  # a field of mixed kinds is refused at its first odd row
            lines or (),
        )
        schema = leaves.read_schema()
        coerced: list[dict[str, Any]] = []
        for i, row in enumerate(rows):
            try:
                coerced.append(leaves.coerce_row(row, schema))
            except BadValue as err:
                where: dict[str, Any] = (
                    dict(source.where(lines[i])) if lines is not None else {"row": i}
                )
                raise InputError(err.what, file=source.name, field=err.path, **where) from None
        frame = pl.DataFrame(coerced, schema=schema) if coerced else pl.DataFrame(schema=schema)
        canonical = _narrow(frame.lazy().with_row_index(POS), plan).collect()
        part = _Part(
            source, 0, plan, canonical, _blank(canonical.height), canonical[POS], lambda: []
        )

        def line_of(bad: pl.DataFrame) -> pl.DataFrame:
            if lines is None:
                return bad
            return bad.with_columns(pl.col(POS).map_elements(lambda i: lines[i], pl.Int64))

        part = _checked(part, source, absent, line_of, tolerant=True)
        _refuse_nothing_generated(part)
    except InputError as err:
        raise _unfiled(err) from None
    except pl.exceptions.PolarsError as err:
        raise InputError(f"cannot read the rows: {_short(err)}", file=source.name) from None
    return _canonical(part)


@dataclass
class Canonical:
    """The canonical columns of one source's rows, in file order (:func:`canonical_rows`)."""

    frame: pl.DataFrame  # task_id, reward, truncated, model, policy_version
    columns: dict[str, str]  # canonical field -> the column (or rule) that fed it
    fields: dict[str, str]  # canonical field -> the column an error cites
    absent: frozenset[str]  # optional fields the rows do not carry (null on every row)


def canonical_rows(
    lf: pl.LazyFrame,
    source: Source,
    *,
    mapping: Mapping[str, str] | None = None,
    input_format: str | None = None,
    optional: Sequence[str] = ("task_id", "reward"),
    line_of: Callable[[pl.DataFrame], pl.DataFrame] | None = None,
) -> Canonical:
    """The canonical fields of rows a reader already holds as a frame (``while update``'s
    batch: the rows and their per-token lists read once by polars), resolved by the same
    plan, aliases and checks as every other command's rows, except that a row without a task
    id or a grade is kept (null), for what needs the field to refuse at that row. ``line_of``
    maps the ``__pos`` column of a bad row (its 0-based row) to its 1-based line, for a JSONL
    source."""
    options = {"optional": tuple(optional), "exclude_reward": (), "tolerant": True}
    try:
        part = _frame_part(
            lf, source, 0, dict(mapping or {}), input_format, options, line_of or (lambda b: b)
        )
    except pl.exceptions.PolarsError as err:
        raise InputError(f"cannot read: {_short(err)}", file=source.name) from None
    _refuse_nothing_generated(part)
    return _canonical(part)


def _canonical(part: _Part) -> Canonical:
    frame = part.canonical
    for name in part.absent:
        frame = frame.with_columns(pl.lit(None, dtype=frame.schema[name]).alias(name))
    return Canonical(
        frame=frame.select(c for c in CANONICAL_SCHEMA if c not in ("passed", "graded", "reply")),
        columns=dict(part.plan.sources),
        fields=dict(part.plan.fields),
        absent=frozenset(part.absent),
    )


def _short(err: BaseException) -> str:
    return " ".join(str(err).split())[:200]


__all__ = [
    "Canonical",
    "Table",
    "canonical_of_rows",
    "canonical_rows",
    "frame_table",
    "read_sources",
    "read_table",
]
