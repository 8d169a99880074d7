"""Rows for the row-wise methods (GroupwiseGrading, ReinforceAda, the reward model).

These methods work on one number per rollout, so their input is a table, not padded
tensors: JSONL (one JSON object per line) or Parquet, read with polars. This module

- reads a file into a :class:`polars.DataFrame` and remembers where each row came from
  (:class:`RowSource`), so an error names ``FILE:LINE`` (JSONL, 1-based) or
  ``FILE: row N`` (Parquet, 0-based);
- resolves column aliases (:func:`find_column`, :func:`task_ids`, :func:`float_column`),
  with the task id aliases of the canonical schema (DESIGN section 1);
- writes output rows atomically, Parquet or JSONL by extension, never replacing a file
  without ``force`` (:func:`write_rows`).
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from whilecli.errors import InputError, UsageError
from whilecli.fileio import atomic_write
from whilecli.io.aliases import PROMPT_ALIASES, REWARD_ALIASES, REWARD_PARTS, TASK_ALIASES

PARQUET_SUFFIXES = (".parquet", ".pq")
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")


@dataclass
class RowSource:
    """Where a frame's rows came from, to turn a row index into ``FILE:LINE``.

    ``kind`` is ``"jsonl"`` or ``"parquet"`` (``"memory"`` for a frame built in code).
    For JSONL, blank lines are skipped by the reader, so row ``i`` is the ``i``-th
    non-blank line; the mapping is computed only when an error needs it.
    """

    name: str
    kind: str
    text: bytes | None = None
    _lines: list[int] | None = field(default=None, repr=False)

    def line_of(self, row: int) -> int | None:
        """The 1-based line of ``row`` in a JSONL source, else None."""
        if self.kind != "jsonl" or self.text is None:
            return None
        if self._lines is None:
            self._lines = [i + 1 for i, raw in enumerate(self.text.splitlines()) if raw.strip()]
        return self._lines[row] if 0 <= row < len(self._lines) else None

    def error(
        self, message: str, *, row: int | None = None, field: str | None = None
    ) -> InputError:
        """An :class:`InputError` located in this source."""
        file = None if self.kind == "memory" else self.name
        line = self.line_of(row) if row is not None else None
        if line is not None:
            return InputError(message, file=file, line=line, field=field)
        return InputError(message, file=file, row=row, field=field)

    def locate(self, err: InputError) -> InputError:
        """Re-issue an in-memory error (``row=``, no file) with this source's file and line."""
        if err.file is not None or self.kind == "memory":
            return err
        raw = str(err)
        prefix = f"row {err.row}: " if err.row is not None else ""
        prefix += f"field '{err.field}': " if err.field else ""
        message = raw[len(prefix) :] if raw.startswith(prefix) else raw
        return self.error(message, row=err.row, field=err.field)


MEMORY = RowSource(name="<rows>", kind="memory")


def _no_constant(token: str) -> float:
    """JSON has no NaN or Infinity: refuse them as the reader does."""
    raise ValueError(f"{token} is not a JSON number; write null or a finite number")


def _read_jsonl_bytes(data: bytes, name: str) -> pl.DataFrame:
    """Parse JSONL bytes; on failure find the first bad line with the standard library."""
    if not data.strip():
        raise InputError("no rows (the file is empty)", file=name)
    try:
        return pl.read_ndjson(io.BytesIO(data), infer_schema_length=None)
    except pl.exceptions.PolarsError as err:
        for i, raw in enumerate(data.splitlines()):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw, parse_constant=_no_constant)
            except ValueError as bad:
                why = getattr(bad, "msg", str(bad))
                raise InputError(f"not valid JSON ({why})", file=name, line=i + 1) from None
            if not isinstance(obj, dict):
                raise InputError(
                    f"expected a JSON object, got {type(obj).__name__}", file=name, line=i + 1
                ) from None
        raise InputError(f"could not read the rows: {err}", file=name) from None


def read_rows(path: str) -> tuple[pl.DataFrame, RowSource]:
    """Read ``path`` (JSONL or Parquet by extension; ``-`` is JSONL on stdin)."""
    if path == "-":
        data = sys.stdin.buffer.read()
        return _read_jsonl_bytes(data, "<stdin>"), RowSource("<stdin>", "jsonl", data)
    p = Path(path)
    if not p.exists():
        raise InputError("no such file", file=path)
    if p.is_dir():
        raise InputError("is a directory; pass one JSONL or Parquet file", file=path)
    suffix = p.suffix.lower()
    if suffix in PARQUET_SUFFIXES:
        try:
            frame = pl.read_parquet(p)
        except (pl.exceptions.PolarsError, OSError) as err:
            raise InputError(f"not a readable Parquet file ({err})", file=path) from None
        if frame.height == 0:
            raise InputError("no rows", file=path)
        return frame, RowSource(path, "parquet")
    if suffix in JSONL_SUFFIXES:
        data = p.read_bytes()
        return _read_jsonl_bytes(data, path), RowSource(path, "jsonl", data)
    raise UsageError(f"{path}: unknown extension '{suffix}'; use .jsonl or .parquet")


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


def task_ids(
    frame: pl.DataFrame, source: RowSource = MEMORY, *, column: str | None = None
) -> tuple[pl.Series, str]:
    """The task id of every row as strings, and the column it came from.

    A row with no id is refused, naming its row and the column.
    """
    name = column or find_column(frame, TASK_ALIASES)
    if name is None:
        prompt = find_column(frame, PROMPT_ALIASES)
        if prompt is None:
            looked = ", ".join(TASK_ALIASES + PROMPT_ALIASES)
            raise source.error(f"no task id column (looked for {looked})", field="task_id")
        text = frame.select(column_expr(prompt)).to_series()
        missing = text.is_null()
        if missing.any():
            raise source.error("prompt is missing", row=_first(missing), field=prompt)
        ids = text.hash(seed=0).cast(pl.String).alias("task_id")
        name = f"hash({prompt})"
    else:
        if not has_column(frame, name):
            raise source.error("column not found", field=name)
        ids = frame.select(column_expr(name).cast(pl.String, strict=False)).to_series()
        ids = ids.alias("task_id")
    missing = ids.is_null()
    if missing.any():
        raise source.error("task id is missing", row=_first(missing), field=name)
    return ids, name


def reward_column(
    frame: pl.DataFrame, source: RowSource = MEMORY, *, exclude: Sequence[str] = ()
) -> tuple[pl.Series, str]:
    """The reward of every row and its column: the first of :data:`REWARD_ALIASES` present,
    else Σ score × weight over a ``rewards`` dict of ``{score, weight}`` parts (DESIGN
    section 1, as the route and the batch reader take it)."""
    name = find_column(frame, REWARD_ALIASES, exclude=exclude)
    if name is None and REWARD_PARTS not in exclude:
        parts = reward_parts(frame, source)
        if parts is not None:
            values = frame.select(parts.alias("reward")).to_series()
            if values.is_null().any():
                i = _first(values.is_null())
                raise source.error("value is missing", row=i, field=REWARD_PARTS)
            bad = ~values.is_finite()
            if bad.any():
                i = _first(bad)
                raise source.error(f"value is not finite ({values[i]})", row=i, field=REWARD_PARTS)
            return values, REWARD_PARTS
    if name is None:
        looked = [a for a in REWARD_ALIASES if a not in exclude]
        raise source.error(
            "no reward column (looked for " + ", ".join(looked) + ", a rewards dict)",
            field="reward",
        )
    return float_column(frame, name, source).alias("reward"), name


def reward_parts(frame: pl.DataFrame, source: RowSource = MEMORY) -> pl.Expr | None:
    """Σ score × weight over the ``rewards`` struct's parts (weight 1 when null or absent; a
    null part or score adds nothing, so no scored part is 0; null where the whole struct is
    null), or None when the frame has no such struct."""
    dtype = frame.schema.get(REWARD_PARTS)
    if not isinstance(dtype, pl.Struct):
        return None
    terms: list[pl.Expr] = []
    for part in dtype.fields:
        where = f"{REWARD_PARTS}.{part.name}"
        inner = part.dtype
        if inner == pl.Null:  # never scored
            continue
        names = {f.name: f.dtype for f in inner.fields} if isinstance(inner, pl.Struct) else {}
        if "score" not in names:
            raise source.error(f"must be {{score, weight}}, got {inner}", field=where)
        for label in ("score", "weight"):
            kind = names.get(label, pl.Null)
            if not (kind.is_numeric() or kind in (pl.Boolean, pl.Null)):
                raise source.error(f"{label} must be a number, got {kind}", field=where)
        col = pl.col(REWARD_PARTS).struct.field(part.name)
        score = col.struct.field("score").cast(pl.Float64)
        weight = col.struct.field("weight").cast(pl.Float64) if "weight" in names else None
        terms.append(score if weight is None else score * weight.fill_null(1.0))
    total = pl.sum_horizontal(terms) if terms else pl.lit(0.0, dtype=pl.Float64)
    return pl.when(pl.col(REWARD_PARTS).is_not_null()).then(total)


def float_column(
    frame: pl.DataFrame,
    name: str,
    source: RowSource = MEMORY,
    *,
    allow_null: bool = False,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
) -> pl.Series:
    """Column ``name`` as Float64, refusing non-numbers, non-finite values and values out of range.

    Booleans read as 1.0 / 0.0. Nulls are refused unless ``allow_null``. The range is
    ``[low, high]`` (``(low, high]`` with ``low_open``).
    """
    raw = frame.select(column_expr(name)).to_series()
    if raw.dtype == pl.String:
        values = raw.str.strip_chars().cast(pl.Float64, strict=False)
    else:
        try:
            values = raw.cast(pl.Float64, strict=False)
        except pl.exceptions.PolarsError:
            raise source.error(f"expected a number, got {raw.dtype}", field=name) from None
    unreadable = values.is_null() & raw.is_not_null()
    if unreadable.any():
        i = _first(unreadable)
        raise source.error(f"expected a number, got {raw[i]!r}", row=i, field=name)
    if not allow_null and values.is_null().any():
        raise source.error("value is missing", row=_first(values.is_null()), field=name)
    bad = ~values.is_finite()
    if bad.fill_null(False).any():
        i = _first(bad.fill_null(False))
        raise source.error(f"value is not finite ({values[i]})", row=i, field=name)
    out_low = (values <= low if low_open else values < low) if low is not None else None
    out_high = values > high if high is not None else None
    for out in (out_low, out_high):
        if out is not None and out.fill_null(False).any():
            i = _first(out.fill_null(False))
            lo = "(" if low_open else "["
            raise source.error(
                f"value {values[i]} is outside {lo}{low}, {high}]", row=i, field=name
            )
    return values.alias(name)


def bool_column(frame: pl.DataFrame, name: str, source: RowSource = MEMORY) -> pl.Series:
    """Column ``name`` as Boolean (null → False); numbers 0/1 and the strings true/false accepted."""
    raw = frame.select(column_expr(name)).to_series()
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
    elif raw.dtype.is_numeric():
        values = pl.select(
            pl.when(raw == 1).then(True).when(raw == 0).then(False).otherwise(None)
        ).to_series()
    else:
        raise source.error(f"expected true/false, got {raw.dtype}", field=name)
    unreadable = values.is_null() & raw.is_not_null()
    if unreadable.any():
        i = _first(unreadable)
        raise source.error(f"expected true/false, got {raw[i]!r}", row=i, field=name)
    return values.fill_null(False).alias(name)


def _first(mask: pl.Series) -> int:
    """Index of the first True in a boolean series."""
    return int(mask.arg_true()[0])


def write_rows(frame: pl.DataFrame, path: str, *, force: bool = False) -> str:
    """Write ``frame`` to ``path`` atomically: Parquet (``.parquet``/``.pq``) or JSONL.

    ``-`` writes JSONL to stdout. An existing file is replaced only with ``force``.
    Returns the path written (``-`` for stdout).
    """
    if path == "-":
        sys.stdout.write(frame.write_ndjson())
        sys.stdout.flush()
        return path
    suffix = Path(path).suffix.lower()
    if suffix in PARQUET_SUFFIXES:
        atomic_write(path, lambda tmp: frame.write_parquet(tmp), force=force)
    elif suffix in (".jsonl", ".ndjson"):
        atomic_write(path, lambda tmp: frame.write_ndjson(tmp), force=force)
    else:
        raise UsageError(f"{path}: unknown output extension '{suffix}'; use .parquet or .jsonl")
    return path
