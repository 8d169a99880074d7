"""Rows as a table with extra columns: the canonical fields beside every input column.

The row methods (GroupwiseGrading, ReinforceAda, the reward model) work on one number per
rollout and write every input row back, so they need the whole table, not only the
canonical frame of :func:`whilecli.io.read.read_rows`. :func:`read_table` reads each file
through the same layer as the route: the sources come from
:func:`~whilecli.io.sources.expand_paths` (files, directories, globs, stdin, gzip/zstd), each
file's task id, reward, truncation and model are resolved by
:func:`~whilecli.io.plan.build_plan` (the same aliases, the same Prime RFT key, the same
rewards-dict rule, the same prompt hash), bad values are located by
:func:`~whilecli.io.locate.locate` and rewards outside [0, 1] without an explicit threshold
are refused by :func:`~whilecli.io.locate.refuse_unbounded`. So for any file the task ids,
rewards and passes a row method sees are the ones ``route`` sees.

Beside them, :class:`Table` holds every input column as read (``frame``: the extra columns a
method needs, per-rubric scores, grader factors, prompt text, ...), row for row, and where
each row came from, so :meth:`Table.error` names ``FILE:LINE`` (JSONL, 1-based) or
``FILE: row N`` (Parquet, 0-based).
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import polars as pl

from whilecli.errors import InputError, UsageError
from whilecli.io import facts
from whilecli.io.facts import Facts
from whilecli.io.locate import (
    POS,
    binary_columns_parquet,
    binary_columns_sample,
    locate,
    refuse_unbounded,
    unreadable,
)
from whilecli.io.plan import FORMATS, Plan, build_plan
from whilecli.io.read import MAPPABLE, SAMPLE_ROWS, coerced_lines, nothing_generated
from whilecli.io.rows import CANONICAL_SCHEMA
from whilecli.io.shape import BadValue, DType, Leaves, Shape, keep_paths, unseen_paths
from whilecli.io.sources import (
    Source,
    Where,
    expand_paths,
    iter_lines,
    parse_line,
    rows_with_keys,
    sample_rows,
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
    """:func:`read_table` on sources already expanded."""
    if missing not in facts.MISSING_CHOICES:
        raise UsageError(f"--missing {missing!r}: one of {', '.join(facts.MISSING_CHOICES)}")
    if input_format is not None and input_format not in FORMATS:
        raise UsageError(f"--input-format {input_format!r}: one of {', '.join(FORMATS)}")
    if pass_threshold is not None and not math.isfinite(pass_threshold):
        raise UsageError(f"--pass-threshold {pass_threshold}: must be a finite number")
    mapping = dict(mapping or {})
    bad = sorted(set(mapping) - set(MAPPABLE))
    if bad:
        raise UsageError(f"--map: unknown field(s) {', '.join(bad)}; fields: {', '.join(MAPPABLE)}")
    options: dict[str, Any] = {
        "mapping": mapping,
        "pass_threshold": pass_threshold,
        "input_format": input_format,
        "optional": tuple(optional),
        "exclude_reward": tuple(exclude_reward),
        "missing": missing,
    }
    threshold = 1.0 if pass_threshold is None else float(pass_threshold)
    parts: list[_Part] = []
    notes: list[str] = []
    try:
        for index, source in enumerate(sources):
            part = _read_source(source, index, mapping, input_format, options)
            if part is None or part.canonical.height == 0:
                notes.append(f"{source.name}: no rows")
                continue
            parts.append(part)
    except InputError as err:
        raise _unfiled(err) from None
    if not parts:
        file = None if _memory(sources[0]) else sources[0].name
        raise InputError("no rows: the input is empty", file=file)
    for part in parts:
        _refuse_nothing_generated(part)
    found = facts.Facts(missing=missing)
    try:
        for part in parts:
            found.add(_facts_of(part, missing))
    except InputError as err:
        raise _unfiled(err) from None
    if pass_threshold is None:
        for part in parts:
            graded = part.canonical.filter(pl.col(facts.GRADED))
            if part.plan.passed is None and "reward" not in part.absent and graded.height:
                rewards = graded.get_column("reward")
                low, high = float(rewards.min()), float(rewards.max())  # type: ignore[arg-type]
                try:
                    refuse_unbounded(
                        0.0 if -TOLERANCE <= low < 0.0 else low,
                        1.0 if 1.0 < high <= 1.0 + TOLERANCE else high,
                        part.hint,
                        part.source.name,
                        part.plan.fields.get("reward", "reward"),
                    )
                    partial = int(
                        rewards.to_frame().select(facts.partial(pl.col("reward")).sum()).item()
                    )
                    if partial >= facts.PARTIAL_SHARE * part.graded:  # the hint: refusing
                        facts.refuse_partial(
                            partial,
                            part.graded,
                            part.hint(),
                            part.source.name,
                            part.plan.fields.get("reward", "reward"),
                        )
                except InputError as err:
                    raise _unfiled(err) from None
    canonical = pl.concat([p.canonical for p in parts], how="vertical")
    if canonical.get_column("model").str.contains("@", literal=True).any():
        canonical = canonical.with_columns(_split_model())
    canonical = canonical.with_columns(
        passed=facts.passed_column(threshold), graded=pl.col(facts.GRADED)
    ).with_columns(
        # an ungraded row kept by --missing fail is a failure: reward 0
        reward=pl.when(pl.col(facts.GRADED)).then(pl.col("reward")).otherwise(pl.lit(0.0))
        if missing == "fail"
        else pl.col("reward")
    )
    canonical = canonical.select(*CANONICAL_SCHEMA)
    try:
        frame = pl.concat([p.frame for p in parts], how="diagonal_relaxed")
    except pl.exceptions.PolarsError:
        names = ", ".join(p.source.name for p in parts)
        raise InputError(f"the files hold one column with different types ({names})") from None
    origin = pl.DataFrame(
        {
            SRC: [p.index for p in parts for _ in range(p.positions.len())],
            POS: pl.concat([p.positions for p in parts]).cast(pl.Int64),
        },
        schema={SRC: pl.Int64, POS: pl.Int64},
    )
    reward = canonical.filter(pl.col("graded")).get_column("reward")
    partial = int(reward.to_frame().select(facts.partial(pl.col("reward")).sum()).item())
    for part in parts:
        notes.extend(f"{part.source.name}: {n}" if len(parts) > 1 else n for n in part.plan.notes)
    notes.extend(found.warnings())
    if partial:
        notes.append(
            f"{partial} of {canonical.height} rows have a reward strictly between 0 and 1:"
            f" a row passes at reward ≥ {threshold:g}"
        )
    return Table(
        canonical=canonical,
        frame=frame,
        origin=origin,
        sources=list(sources),
        columns={"passed": f"reward ≥ {threshold:g}", **_merged(parts, "sources")},
        fields=_merged(parts, "fields"),
        format=" + ".join(dict.fromkeys(p.plan.format for p in parts)),
        pass_threshold=threshold,
        threshold_explicit=pass_threshold is not None,
        partial_rows=partial,
        notes=notes,
        absent=frozenset.intersection(*(frozenset(p.absent) for p in parts)),
        facts=found,
        options=options,
    )


def _facts_of(part: _Part, missing: str) -> facts.Facts:
    """One file's row facts (:mod:`whilecli.io.facts`, the rules every command reads by),
    and its rows cut to those every rate counts: error replies left out (refused when they
    are half the rows or more), ungraded rows left out or, under ``--missing fail``, kept as
    failures (a file with no graded row refused). Partial credit is refused by the caller,
    after the reward range, as the route refuses them. A reward the rows do not carry (an
    optional field read as null) grades nothing and leaves nothing out."""
    frame = part.canonical
    if "reward" in part.absent:
        frame = frame.with_columns(pl.lit(True).alias(facts.GRADED))
        part.canonical = frame
    error = pl.col("reply") == facts.ERROR
    ungraded = ~pl.col(facts.GRADED) & ~error
    counts = frame.select(
        rows=pl.len(),
        errors=error.sum(),
        ungraded=ungraded.sum(),
        empty=(pl.col("reply") == facts.EMPTY).sum(),
        graded=(pl.col(facts.GRADED) & ~error).sum(),
        partial=facts.partial(pl.col("reward")).filter(pl.col(facts.GRADED) & ~error).sum(),
        first_error=pl.int_range(pl.len()).filter(error).first(),
        first_ungraded=pl.int_range(pl.len()).filter(ungraded).first(),
        first_empty=pl.int_range(pl.len()).filter(pl.col("reply") == facts.EMPTY).first(),
    ).row(0, named=True)
    rows, errors, graded = int(counts["rows"]), int(counts["errors"]), int(counts["graded"])
    name = None if _memory(part.source) else part.source.name
    field = part.plan.fields.get("reward", "reward")
    facts.refuse_errors(errors, rows, name or MEMORY_NAME, _place(part, counts["first_error"]))
    if graded == 0:
        facts.refuse_ungraded(
            rows, name or MEMORY_NAME, field, **_where_of(part, counts["first_ungraded"])
        )
    partial = int(counts["partial"])
    part.graded = graded
    ungraded_rows, empty = int(counts["ungraded"]), int(counts["empty"])
    found = facts.Facts(
        rows=rows,
        counted=rows - errors - (0 if missing == "fail" else ungraded_rows),
        missing=missing,
        ungraded=ungraded_rows,
        first_ungraded=_place(part, counts["first_ungraded"]) if ungraded_rows else None,
        errors=errors,
        first_error=_place(part, counts["first_error"]) if errors else None,
        empty=empty,
        first_empty=_place(part, counts["first_empty"]) if empty else None,
        partial=partial,
    )
    keep = ~error if missing == "fail" else ~error & pl.col(facts.GRADED)
    mask = frame.select(keep.alias("k")).get_column("k")
    if not mask.all():  # the rows every rate counts, the input columns beside them
        part.canonical = frame.filter(mask)
        part.frame = part.frame.filter(mask)
        part.positions = part.positions.filter(mask)
    return found


def _where_of(part: _Part, index: int | None) -> Where:
    """Where row ``index`` of a part (0-based, in its canonical order) is: its line or row."""
    if index is None:
        return {}
    pos = int(part.positions[int(index)])
    if part.source.kind == "parquet":
        return {"row": pos}
    lines = [n for n, _ in iter_lines(part.source)]
    return part.source.where(lines[pos]) if pos < len(lines) else {}


def _place(part: _Part, index: int | None) -> str | None:
    """Row ``index`` of a part as words: ``rows.jsonl line 12`` or ``rows.parquet row 3``."""
    where = _where_of(part, index)
    if not where:
        return None
    name = part.source.name
    return f"{name} line {where['line']}" if "line" in where else f"{name} row {where.get('row')}"


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


def _split_model() -> list[pl.Expr]:
    """``model`` "M@v" → "M"; ``policy_version`` keeps "M@v" where no column records one."""
    raw = pl.col("model")
    versioned = raw.str.contains("@", literal=True)
    return [
        pl.when(versioned)
        .then(raw.str.splitn("@", 2).struct.field("field_0"))
        .otherwise(raw)
        .alias("model"),
        pl.coalesce(pl.col("policy_version"), pl.when(versioned).then(raw)).alias("policy_version"),
    ]


def _merged(parts: list[_Part], attr: str) -> dict[str, str]:
    keys = list(dict.fromkeys(k for p in parts for k in getattr(p.plan, attr)))
    out: dict[str, str] = {}
    for key in keys:
        seen = list(dict.fromkeys(getattr(p.plan, attr).get(key, "none") for p in parts))
        if len(seen) == 1 or attr == "fields":
            out[key] = seen[0]
        else:
            out[key] = "; ".join(
                f"{p.source.name}: {getattr(p.plan, attr).get(key, 'none')}" for p in parts
            )
    return out


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
    """:func:`build_plan`, with the optional fields read as null where the rows carry none,
    and a reward that is never one of ``exclude_reward``. Returns the fields read as null."""
    mapping = dict(mapping)
    absent: set[str] = set()
    chosen: set[str] = set()  # fields this function mapped, not the user
    excluded = tuple(options.get("exclude_reward", ()))
    while True:
        leaves = Leaves(schema)
        try:
            plan = build_plan(
                shape, source, leaves, mapping, forced, first, sample, sample_lines=sample_lines
            )
        except InputError as err:
            name = err.field
            if (
                name is not None
                and name in options.get("optional", ())
                and name not in mapping
                and err.line is None
                and err.row is None
                and err.at is None
            ):
                shape.children.setdefault(ABSENT, Shape(kinds={"null"}))
                mapping[name] = ABSENT
                absent.add(name)
                chosen.add(name)
                continue
            raise
        used = plan.fields.get("reward")
        if used in excluded and "reward" not in mapping:
            mapping["reward"] = _next_reward(shape, excluded, source, options)
            if mapping["reward"] == ABSENT:
                absent.add("reward")
            chosen.add("reward")
            continue
        for name in chosen:
            plan.sources[name] = plan.sources[name].removesuffix(" (--map)")
        return plan, leaves, absent


def _next_reward(
    shape: Shape, excluded: tuple[str, ...], source: Source, options: Mapping[str, Any]
) -> str:
    from whilecli.io.aliases import REWARD_ALIASES

    for alias in REWARD_ALIASES:
        if alias not in excluded and shape.has(alias):
            return alias
    if "reward" in options.get("optional", ()):
        shape.children.setdefault(ABSENT, Shape(kinds={"null"}))
        return ABSENT
    looked = ", ".join(a for a in REWARD_ALIASES if a not in excluded)
    raise InputError(
        f"no reward column besides {', '.join(repr(e) for e in excluded)} (looked for {looked});"
        " pass --map reward=COLUMN",
        file=source.name,
        field="reward",
    )


def _read_source(
    source: Source,
    index: int,
    mapping: Mapping[str, str],
    forced: str | None,
    options: Mapping[str, Any],
) -> _Part | None:
    if source.kind == "parquet":
        return _read_parquet(source, index, mapping, forced, options)
    return _read_jsonl(source, index, mapping, forced, options)


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


def _read_jsonl(
    source: Source,
    index: int,
    mapping: Mapping[str, str],
    forced: str | None,
    options: Mapping[str, Any],
) -> _Part | None:
    sample = sample_rows(source, SAMPLE_ROWS)
    if not sample:
        return None
    shape = Shape.from_rows(row for _, row in sample)
    if len(sample) == SAMPLE_ROWS:  # more lines follow: keys some rows add late
        paths = unseen_paths(shape)
        late = rows_with_keys(source, dict.fromkeys(p[-1] for p in paths), after=sample[-1][0])
        if late:
            sample += [(n, keep_paths(row, paths)) for n, row in late]
            shape = Shape.from_rows(row for _, row in sample)
    plan, leaves, absent = _plan(
        shape,
        source,
        None,
        mapping,
        forced,
        sample[0][1],
        options,
        [row for _, row in sample],
        [n for n, _ in sample],
    )
    schema = leaves.read_schema()
    try:
        raw = pl.scan_ndjson(source.polars_source(), schema=schema)
        canonical = _narrow(raw.with_row_index(POS), plan).collect()
    except (pl.exceptions.PolarsError, OSError, ValueError):
        canonical = _jsonl_by_line(source, plan, schema)
    positions = canonical.get_column(POS)
    frame = _jsonl_frame(source)
    if positions.len() and int(positions.max()) >= frame.height:  # type: ignore[arg-type]
        raise InputError("cannot read the rows: the lines do not parse alike", file=source.name)

    def lines(bad: pl.DataFrame) -> pl.DataFrame:
        numbers = [n for n, _ in iter_lines(source)]
        return bad.with_columns(pl.col(POS).map_elements(lambda i: numbers[i], pl.Int64))

    part = _Part(
        source,
        index,
        plan,
        canonical,
        frame[positions.to_list()] if positions.len() != frame.height else frame,
        positions,
        lambda: binary_columns_sample(sample, plan),
    )
    return _checked(part, source, absent, lines)


def _jsonl_by_line(source: Source, plan: Plan, schema: Mapping[str, DType]) -> pl.DataFrame:
    """The slow, exact reader: every line parsed by Python, the first bad one named."""
    raw, _ = coerced_lines(source, plan.leaves, schema)
    return _narrow(raw.lazy().with_row_index(POS), plan).collect()


def _jsonl_frame(source: Source) -> pl.DataFrame:
    """Every column of a JSONL source, as polars infers them over all lines (a column whose
    values change type reads as text)."""
    try:
        return pl.read_ndjson(source.polars_source(), infer_schema_length=None)
    except (pl.exceptions.PolarsError, OSError, ValueError):
        pass
    rows = [parse_line(source, n, line) for n, line in iter_lines(source)]
    try:
        return pl.from_dicts(rows, infer_schema_length=None, strict=False)
    except (pl.exceptions.PolarsError, TypeError, ValueError):
        raise InputError(
            "cannot read every column of the rows (a column's values change type)",
            file=source.name,
        ) from None


def _read_parquet(
    source: Source,
    index: int,
    mapping: Mapping[str, str],
    forced: str | None,
    options: Mapping[str, Any],
) -> _Part | None:
    try:
        lf = pl.scan_parquet(source.polars_source())
        lf.collect_schema()
    except (pl.exceptions.PolarsError, OSError) as err:
        raise InputError(f"not a readable Parquet file: {_short(err)}", file=source.name) from None
    try:
        part = _frame_part(lf, source, index, mapping, forced, options, lambda bad: bad)
        frame = lf.collect()
    except pl.exceptions.PolarsError as err:
        raise InputError(f"cannot read: {_short(err)}", file=source.name) from None
    if frame.height == 0:
        return None
    positions = part.positions
    part.frame = frame[positions.to_list()] if positions.len() != frame.height else frame
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
