"""Read graded rows into the canonical frame (DESIGN section 1): ``read_rows`` and ``parse_map``.

Each input file is resolved on its own (its writer recognised, each canonical field mapped
to a column or rule, see :mod:`whilecli.route.formats`) and read through polars: Parquet with
``pl.scan_parquet`` projecting only the columns the plan needs, JSONL with
``pl.scan_ndjson`` under a narrow schema holding only those leaves (nested aliases are struct
fields of it). Each file's narrow projection is collected once, validated (every task id
present, every reward a finite number), and the files are concatenated; ``Rows.frame`` is
that validated frame made lazy again. When polars cannot read a JSONL file under the narrow
schema (a malformed line, a value of the wrong type) or a value fails validation, the file
is walked line by line to name the first bad line and field.

``passed`` = reward ≥ the pass threshold (default 1.0). Rewards inside [0, 1] that are
neither 0 nor 1 are counted as partial rows; a reward outside [0, 1] without an explicit
threshold is refused (a weighted rubric sum is not a pass/fail).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

import polars as pl

from whilecli.errors import InputError, UsageError
from whilecli.route.aliases import TASK_ALIASES, BadValue, Leaves, Shape
from whilecli.route.formats import FORMATS, Plan, build_plan
from whilecli.route.model import CANONICAL_SCHEMA, Rows
from whilecli.route.sources import Source, expand_paths, iter_lines, parse_line, sample_rows

#: Fields ``--map`` can point at a column.
MAPPABLE = ("task_id", "reward", "passed", "truncated", "model", "policy_version")
POS = "__pos"  # a JSONL line (1-based) or Parquet row (0-based), kept only to locate errors
AUX = ("__passed", "__lp", "__vals")
READ_COLUMNS = [c for c in CANONICAL_SCHEMA if c != "passed"]
#: Columns that count rows or rollouts, never a binary rubric outcome.
INDEX_LIKE = ("step", "sample_id", "rollout_index", "_ng_rollout_index", "advantage")


def parse_map(items: Sequence[str]) -> dict[str, str]:
    """``["task_id=my_col", ...]`` → ``{"task_id": "my_col"}`` (``--map``; dotted = nested)."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, column = item.partition("=")
        name, column = name.strip(), column.strip()
        if not sep or not name or not column:
            raise UsageError(f"--map {item!r}: expected FIELD=COLUMN, e.g. task_id=my_col")
        if name not in MAPPABLE:
            raise UsageError(
                f"--map {item!r}: unknown field {name!r}; fields: {', '.join(MAPPABLE)}"
            )
        if name in out and out[name] != column:
            raise UsageError(f"--map {name} given twice ({out[name]!r} and {column!r})")
        out[name] = column
    return out


@dataclass
class _Part:
    """One file's validated rows in the canonical columns plus the auxiliary ones."""

    source: Source
    plan: Plan
    frame: pl.DataFrame
    shape: Shape
    binary_hint: Callable[[], list[str]]  # computed only when a refusal needs it


def read_rows(
    paths: Sequence[str],
    *,
    mapping: Mapping[str, str] | None = None,
    pass_threshold: float | None = None,
    input_format: str | None = None,
    stdin: BinaryIO | None = None,
) -> Rows:
    """Read every path into one validated frame in :data:`CANONICAL_SCHEMA`."""
    if input_format is not None and input_format not in FORMATS:
        raise UsageError(f"--input-format {input_format!r}: one of {', '.join(FORMATS)}")
    if pass_threshold is not None and not math.isfinite(pass_threshold):
        raise UsageError(f"--pass-threshold {pass_threshold}: must be a finite number")
    mapping = dict(mapping or {})
    bad = sorted(set(mapping) - set(MAPPABLE))
    if bad:
        raise UsageError(f"--map: unknown field(s) {', '.join(bad)}; fields: {', '.join(MAPPABLE)}")
    sources = expand_paths(paths, stdin)
    parts: list[_Part] = []
    notes: list[str] = []
    for source in sources:
        part = _read_source(source, mapping, input_format)
        if part is None or part.frame.height == 0:
            notes.append(f"{source.name}: no rows")
            continue
        part.frame = _split_model(part.frame)
        parts.append(part)
    if not parts:
        raise InputError("no rows: the input is empty", file=sources[0].name)
    if pass_threshold is None:
        for part in parts:
            if part.plan.passed is None:  # --map passed=COLUMN defines pass/fail itself
                _refuse_unbounded(part)
    threshold = 1.0 if pass_threshold is None else float(pass_threshold)
    frame = pl.concat([p.frame.select(*READ_COLUMNS, *AUX) for p in parts], how="vertical")
    stats = frame.select(
        partial=((pl.col("reward") > 0) & (pl.col("reward") < 1)).sum(),
        lp=pl.col("__lp").any(),
        vals=pl.col("__vals").any(),
    ).row(0, named=True)
    frame = frame.with_columns(
        passed=pl.col("__passed").fill_null(pl.col("reward") >= threshold)
    ).select(*CANONICAL_SCHEMA)
    frame = frame.cast(CANONICAL_SCHEMA)  # type: ignore[arg-type]
    partial = int(stats["partial"] or 0)
    for part in parts:
        notes.extend(f"{part.source.name}: {n}" if len(parts) > 1 else n for n in part.plan.notes)
    if partial:
        notes.append(
            f"{partial} of {frame.height} rows have a reward strictly between 0 and 1:"
            f" a row passes at reward ≥ {threshold:g}"
        )
    return Rows(
        frame=frame.lazy(),
        paths=[p.name for p in sources],
        format=_joined([p.plan.format for p in parts]),
        sources={"passed": f"reward ≥ {threshold:g}", **_merged_sources(parts)},
        pass_threshold=threshold,
        threshold_explicit=pass_threshold is not None,
        partial_rows=partial,
        has_logprobs=bool(stats["lp"]),
        has_values=bool(stats["vals"]),
        notes=notes,
    )


def _split_model(frame: pl.DataFrame) -> pl.DataFrame:
    """``model`` "M@v" → "M"; ``policy_version`` keeps "M@v" where no column records one.

    Works on the distinct writers (a handful), so it costs one ``unique`` per file.
    """
    writers = [w for w in frame.get_column("model").unique().to_list() if w is not None]
    versioned = {w: w.split("@", 1)[0] for w in writers if "@" in w}
    if not versioned:
        return frame
    raw = pl.col("model")
    return frame.with_columns(
        model=raw.replace(versioned),
        policy_version=pl.coalesce(
            pl.col("policy_version"), pl.when(raw.is_in(list(versioned))).then(raw)
        ),
    )


def _joined(values: list[str]) -> str:
    seen = list(dict.fromkeys(values))
    return seen[0] if len(seen) == 1 else " + ".join(seen)


def _merged_sources(parts: list[_Part]) -> dict[str, str]:
    keys = list(dict.fromkeys(k for p in parts for k in p.plan.sources))
    out: dict[str, str] = {}
    for key in keys:
        seen = list(dict.fromkeys(p.plan.sources.get(key, "none") for p in parts))
        if len(seen) == 1:
            out[key] = seen[0]
        else:
            out[key] = "; ".join(
                f"{p.source.name}: {p.plan.sources.get(key, 'none')}" for p in parts
            )
    return out


def _select(plan: Plan, keep_pos: bool) -> list[pl.Expr]:
    exprs = [
        plan.task_id.alias("task_id"),
        plan.reward.alias("reward"),
        plan.truncated.cast(pl.Boolean).alias("truncated"),
        plan.model.alias("model"),
        (
            plan.policy_version
            if plan.policy_version is not None
            else pl.lit(None, dtype=pl.String)
        ).alias("policy_version"),
        (plan.passed if plan.passed is not None else pl.lit(None, dtype=pl.Boolean)).alias(
            "__passed"
        ),
        (plan.has_logprobs if plan.has_logprobs is not None else pl.lit(False)).alias("__lp"),
        (plan.has_values if plan.has_values is not None else pl.lit(False)).alias("__vals"),
    ]
    if keep_pos:
        exprs.append(pl.col(POS))
    return exprs


def _narrow(lf: pl.LazyFrame, plan: Plan, keep_pos: bool) -> pl.LazyFrame:
    if plan.row_filter is not None:
        lf = lf.filter(plan.row_filter.fill_null(False))
    return lf.select(_select(plan, keep_pos))


# --- one file ---------------------------------------------------------------------------


def _read_source(source: Source, mapping: Mapping[str, str], forced: str | None) -> _Part | None:
    if source.kind == "parquet":
        return _read_parquet(source, mapping, forced)
    return _read_jsonl(source, mapping, forced)


def _read_jsonl(source: Source, mapping: Mapping[str, str], forced: str | None) -> _Part | None:
    sample = sample_rows(source)
    if not sample:
        return None
    shape = Shape.from_rows(row for _, row in sample)
    leaves = Leaves()
    plan = build_plan(shape, source, leaves, mapping, forced, sample[0][1])
    schema = leaves.read_schema()

    def hint() -> list[str]:
        return _binary_columns_sample(sample, plan)

    try:
        lf = pl.scan_ndjson(source.polars_source(), schema=schema)  # type: ignore[arg-type]
        frame = _narrow(lf, plan, keep_pos=False).collect()
    except (pl.exceptions.PolarsError, OSError, ValueError):
        frame = None
    if frame is None or _has_problem(frame):
        frame = _jsonl_by_line(source, plan, schema)
        _locate(frame, plan, source)
        frame = frame.drop(POS)
    return _Part(source, plan, frame, shape, hint)


def _jsonl_by_line(source: Source, plan: Plan, schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """The slow, exact reader: every line parsed by Python, the first bad one named."""
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    for lineno, line in iter_lines(source):
        row = parse_line(source, lineno, line)
        try:
            rows.append(plan.leaves.coerce_row(row, schema))
        except BadValue as err:
            raise InputError(err.what, file=source.name, line=lineno, field=err.path) from None
        lines.append(lineno)
    raw = pl.DataFrame(rows, schema=schema) if rows else pl.DataFrame(schema=schema)
    raw = raw.with_columns(pl.Series(POS, lines, dtype=pl.Int64))
    return _narrow(raw.lazy(), plan, keep_pos=True).collect()


def _read_parquet(source: Source, mapping: Mapping[str, str], forced: str | None) -> _Part | None:
    try:
        lf = pl.scan_parquet(source.polars_source())  # type: ignore[arg-type]
        schema = lf.collect_schema()
    except (pl.exceptions.PolarsError, OSError) as err:
        raise InputError(f"not a readable Parquet file: {_short(err)}", file=source.name) from None
    shape = Shape.from_schema(schema)
    first: dict[str, Any] = {}
    wanted = [c for c in ("metrics", "filter") if c in schema]
    try:
        if wanted:
            head = lf.select(wanted).head(1).collect()
            first = head.row(0, named=True) if head.height else {}
        leaves = Leaves(schema)
        try:
            plan = build_plan(shape, source, leaves, mapping, forced, first)
        except BadValue as err:
            top = err.path.split(".")[0].split("[")[0]
            at = lf.select(pl.col(top).is_not_null().arg_max()).collect().item()
            raise InputError(err.what, file=source.name, row=at, field=err.path) from None
        frame = _narrow(lf, plan, keep_pos=False).collect(engine="streaming")
        if _has_problem(frame):
            located = _narrow(lf.with_row_index(POS), plan, keep_pos=True).collect()
            _locate(located, plan, source)
    except pl.exceptions.PolarsError as err:
        raise InputError(f"cannot read: {_short(err)}", file=source.name) from None
    return _Part(source, plan, frame, shape, lambda: _binary_columns_parquet(lf, schema, plan))


def _short(err: BaseException) -> str:
    return " ".join(str(err).split())[:200]


# --- validation ---------------------------------------------------------------------------


def _problems() -> pl.Expr:
    return (
        pl.col("task_id").is_null()
        | pl.col("reward").is_null()
        | ~pl.col("reward").is_finite().fill_null(False)
    )


def _has_problem(frame: pl.DataFrame) -> bool:
    return bool(frame.select(_problems().any()).item())


def _locate(frame: pl.DataFrame, plan: Plan, source: Source) -> None:
    """Raise on the first row with a missing task id or a missing or non-finite reward."""
    bad = frame.filter(_problems()).head(1)
    if bad.height == 0:
        return
    row = bad.row(0, named=True)
    pos = int(row[POS])
    where: dict[str, int] = {"row": pos} if source.kind == "parquet" else {"line": pos}
    if row["task_id"] is None:
        field = plan.fields.get("task_id", "task_id")
        raise InputError(
            f"no task id ({plan.sources['task_id']})", file=source.name, field=field, **where
        )
    field = plan.fields.get("reward", "reward")
    if row["reward"] is None:
        raise InputError("reward is missing (null)", file=source.name, field=field, **where)
    raise InputError(
        f"reward is {row['reward']}, not a finite number", file=source.name, field=field, **where
    )


def _refuse_unbounded(part: _Part) -> None:
    """Refuse rewards outside [0, 1] without an explicit ``--pass-threshold`` (exit 2)."""
    low, high = part.frame.select(lo=pl.col("reward").min(), hi=pl.col("reward").max()).row(0)
    if low >= 0.0 and high <= 1.0:
        return
    hint = part.binary_hint()
    cols = (
        "binary-looking columns the rows carry: " + ", ".join(hint)
        if hint
        else "the rows carry no binary-looking column"
    )
    raise InputError(
        f"rewards run from {low:g} to {high:g}, outside [0, 1], so pass/fail is not defined"
        f" (a weighted rubric sum is not a pass/fail); {cols}. Pass --pass-threshold T, or"
        " --map reward=COLUMN",
        file=part.source.name,
        field=part.plan.fields.get("reward", "reward"),
    )


def _skip_binary(name: str, plan: Plan) -> bool:
    return (
        name in TASK_ALIASES
        or name in INDEX_LIKE
        or name == plan.fields.get("reward")
        or name.endswith(("_id", "_index", "_ms"))
    )


def _binary_columns_sample(sample: list[tuple[int, dict[str, Any]]], plan: Plan) -> list[str]:
    """Top-level columns whose sampled values are all booleans, or all numbers in {0, 1}."""
    seen: dict[str, set[str]] = {}
    for _, row in sample:
        for key, value in row.items():
            kinds = seen.setdefault(key, set())
            if value is None:
                continue
            if isinstance(value, bool):
                kinds.add("bool")
            elif isinstance(value, (int, float)) and value in (0, 1):
                kinds.add("01")
            else:
                kinds.add("other")
    return [k for k, v in seen.items() if v and "other" not in v and not _skip_binary(k, plan)]


def _binary_columns_parquet(lf: pl.LazyFrame, schema: pl.Schema, plan: Plan) -> list[str]:
    cols = [
        name
        for name, dtype in schema.items()
        if (dtype == pl.Boolean or dtype.is_numeric()) and not _skip_binary(name, plan)
    ]
    if not cols:
        return []

    def binary(name: str) -> pl.Expr:
        c = pl.col(name)
        if schema[name] == pl.Boolean:
            return pl.lit(True).alias(name)
        return (c.is_null() | c.is_in([0, 1])).all().alias(name)

    try:
        flags = lf.select([binary(c) for c in cols]).collect().row(0, named=True)
    except pl.exceptions.PolarsError:
        return []
    return [c for c in cols if flags[c]]
