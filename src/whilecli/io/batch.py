"""The batch reader: a JSONL or Parquet file of trajectories → the :class:`Columns` that
``while update`` pads into tensors (DESIGN sections 1 and 3).

A batch arrives as rows whose per-token lists have different lengths. :class:`Columns` holds
them flattened (one float64 array per list field plus each row's length, -1 where a row
lacks the list), which :meth:`whilecli.methods.batch.Batch.from_columns` pads into
``[B, T]`` tensors without a Python loop over rows or tokens.

Sources are expanded by :mod:`whilecli.io.sources` (gzip and zstd, directories, globs,
stdin ``-``), so a batch opens the way a route's rows do; a Parquet file is known by its
magic bytes whatever its name. Field aliases are :mod:`whilecli.io.aliases`' (first match
wins); a column feeds a field when some row holds a non-null value there.

JSONL is parsed by polars under a narrow schema holding only the alias columns (the per-token
lists as ``List(Float64)``), handed to Arrow, and flattened through the list offsets, as a
Parquet file is: no Python loop per row. Only when that read fails (a bad value, invalid
UTF-8, a line that is not an object, JSON nested past the parser's depth) are the lines
parsed one by one with :func:`json.loads`, which either names the first bad line and field
(``batch.jsonl:17: field 'logprobs': holds the text "x", not a number``) or, for a file the
fast reader cannot type (booleans and numbers mixed in one column), reads it exactly. Both
ways give the same columns: a repeated JSON key keeps its first value, and a task id that is
a number reads as the route renders it (``1`` and ``1.0`` are both ``"1"``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from whilecli.errors import InputError, UsageError
from whilecli.io.aliases import REWARD_PARTS
from whilecli.io.columns import (
    LIST_FIELDS,
    TEXT_FIELDS,
    Columns,
    candidates,
    columns_from_rows,
    dig,
    render_text,
    resolve,
)
from whilecli.io.shape import DType
from whilecli.io.sources import (
    COMPRESSIONS,
    JSONL_SUFFIXES,
    PARQUET_MAGIC,
    PARQUET_SUFFIXES,
    Source,
    expand_paths,
    iter_lines,
    parse_line,
)

# ------------------------------------------------------------------ files


def _named_kind(path: Path) -> str | None:
    """ "jsonl" or "parquet" from a file name (``.gz``/``.zst`` allowed on JSONL), else None."""
    name = path.name.lower()
    compressed = False
    for suffix in COMPRESSIONS:
        if name.endswith(suffix):
            name, compressed = name[: -len(suffix)], True
            break
    if name.endswith(JSONL_SUFFIXES):
        return "jsonl"
    if name.endswith(PARQUET_SUFFIXES) and not compressed:
        return "parquet"
    return None


def _head(source: Source) -> bytes:
    if source.data is not None:
        return source.data[:4]
    assert source.path is not None
    try:
        with open(source.path, "rb") as fh:
            return fh.read(4)
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}", file=source.name) from None


def batch_sources(path: str | Path) -> list[Source]:
    """The files a batch path names (a file, a directory, a glob, ``-`` for stdin)."""
    p = Path(path)
    if (
        str(path) != "-"
        and p.is_file()
        and _named_kind(p) is None
        and _head(Source(name=str(p), kind="jsonl", path=p)) != PARQUET_MAGIC
    ):
        raise UsageError(f"{p}: unknown file type {p.suffix!r}; use .jsonl or .parquet")
    return expand_paths([str(path)])


def read_jsonl(path: str | Path) -> tuple[list[dict[str, Any]], list[int]]:
    """A JSONL file's objects and their 1-based line numbers (blank lines skipped; a repeated
    key keeps its first value)."""
    out_rows: list[dict[str, Any]] = []
    out_lines: list[int] = []
    for source in batch_sources(path):
        rows, lines = _parse_lines(source)
        out_rows += rows
        out_lines += lines
    return out_rows, out_lines


def read_batch_rows(path: str | Path) -> list[dict[str, Any]]:
    """A JSONL batch file's rows (one JSON object per line; blank lines skipped)."""
    return read_jsonl(path)[0]


def read_batch(path: str | Path, mapping: Mapping[str, str] | None = None) -> Columns:
    """Read a JSONL or Parquet batch (or a directory or glob of them) into :class:`Columns`."""
    parts = [_read_source(s, mapping) for s in batch_sources(path)]
    return parts[0] if len(parts) == 1 else _concat(parts)


def _read_source(source: Source, mapping: Mapping[str, str] | None) -> Columns:
    if source.kind == "jsonl" and source.compression is None and _head(source) == PARQUET_MAGIC:
        source = Source(name=source.name, kind="parquet", path=source.path, data=source.data)
    cols = (
        _read_parquet(source, mapping) if source.kind == "parquet" else _read_jsonl(source, mapping)
    )
    if cols.size == 0:
        raise InputError("the batch is empty: no trajectories", file=source.name)
    return cols


def _parse_lines(source: Source) -> tuple[list[dict[str, Any]], list[int]]:
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    for lineno, line in iter_lines(source):
        rows.append(parse_line(source, lineno, line))
        lines.append(lineno)
    return rows, lines


class _LineNumbers(Sequence[int]):
    """The 1-based line of each row of a JSONL source, counted only when an error asks."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self._lines: list[int] | None = None

    def _all(self) -> list[int]:
        if self._lines is None:
            self._lines = [n for n, _ in iter_lines(self.source)]
        return self._lines

    def __getitem__(self, i: Any) -> Any:
        return self._all()[i]

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self) -> Iterator[int]:
        return iter(self._all())


def _first_row(source: Source) -> dict[str, Any] | None:
    """The first row of a JSONL source (None when the file has none or it does not parse:
    the exact reader then names the problem)."""
    lines = iter_lines(source)
    try:
        for lineno, line in lines:
            try:
                return parse_line(source, lineno, line)
            except InputError:
                return None
    finally:
        lines.close()  # type: ignore[attr-defined]
    return None


def _list_dtype(name: str, sample: Any) -> DType:
    if sample is not None and not isinstance(sample, list):
        return pl.String  # not a list on the first row: refused if it feeds the field
    if (
        name == "action_mask"
        and isinstance(sample, list)
        and sample
        and isinstance(sample[0], bool)
    ):
        return pl.List(pl.Boolean)
    return pl.List(pl.Float64)


def _scalar_dtype(name: str, sample: Any) -> DType:
    if name in TEXT_FIELDS or name == REWARD_PARTS:
        return pl.String
    if sample is not None and not isinstance(sample, (bool, int, float)):
        return pl.String  # not a number on the first row: refused if it feeds the field
    if name == "truncated":
        return pl.Boolean if sample is None or isinstance(sample, bool) else pl.Float64
    return pl.Boolean if isinstance(sample, bool) else pl.Float64


def _jsonl_schema(
    first: dict[str, Any], wanted: dict[str, tuple[str, ...]]
) -> tuple[dict[str, DType], dict[str, tuple[str, ...]]]:
    """The narrow schema that reads the candidate columns (each typed by its field and by
    the first row's value), and each column's path into the row."""
    tree: dict[str, Any] = {}
    paths: dict[str, tuple[str, ...]] = {}
    for name, columns in wanted.items():
        for column in columns:
            if column in paths:
                continue
            path = (column,) if column in first or "." not in column else tuple(column.split("."))
            _, sample = dig(first, column)
            if name == "reward" and column == REWARD_PARTS:
                dtype: DType = pl.String
            elif name in LIST_FIELDS:
                dtype = _list_dtype(name, sample)
            else:
                dtype = _scalar_dtype(name, sample)
            node = tree
            ok = True
            for key in path[:-1]:
                parent = first.get(key) if node is tree else None
                if node is tree and parent is not None and not isinstance(parent, dict):
                    ok = False  # a label, not an object, on the first row
                    break
                child = node.setdefault(key, {})
                if not isinstance(child, dict):
                    ok = False
                    break
                node = child
            if not ok or isinstance(node.get(path[-1]), dict):
                continue
            node.setdefault(path[-1], dtype)
            paths[column] = path
    return {k: _to_dtype(v) for k, v in tree.items()}, paths


def _to_dtype(node: Any) -> pl.DataType:
    if isinstance(node, dict):
        return pl.Struct({k: _to_dtype(v) for k, v in node.items()})
    return node


def _read_jsonl(source: Source, mapping: Mapping[str, str] | None) -> Columns:
    first = _first_row(source)
    if first is not None:
        wanted = candidates(mapping)
        schema, paths = _jsonl_schema(first, wanted)
        try:
            frame = pl.read_ndjson(source.polars_source(), schema=schema)
            # only the columns that hold something travel to Arrow
            counts = frame.select(pl.all().null_count()).row(0)
            kept = [
                c for c, nulls in zip(frame.columns, counts, strict=True) if nulls < frame.height
            ]
            table = frame.select(kept).to_arrow()
            arrays = {c: _at(table, path) for c, path in paths.items() if path[0] in kept}
            held = {c for c, arr in arrays.items() if arr.null_count < len(arr)}
            src = resolve(held, mapping)
            cols = Columns(size=table.num_rows, sources=src, file=source.name)
            cols.lines = _LineNumbers(source)
            _fill(cols, {name: arrays[column] for name, column in src.items()})
            return cols
        except _FAST_READ_ERRORS:
            pass  # the exact reader names the line, or reads what polars could not type
    rows, lines = _parse_lines(source)
    return columns_from_rows(rows, mapping, file=source.name, lines=lines)


#: What the fast JSONL read may raise on a file the exact reader must look at line by line
#: (a Rust panic inside polars surfaces as ``PanicException``, a ``BaseException``).
_FAST_READ_ERRORS: tuple[type[BaseException], ...] = (
    pl.exceptions.PolarsError,
    pa.ArrowException,
    OSError,
    ValueError,
    InputError,
    getattr(pl.exceptions, "PanicException", ValueError),
)


def _at(table: pa.Table, path: tuple[str, ...]) -> pa.Array:
    arr = table.column(path[0]).combine_chunks()
    for key in path[1:]:
        arr = pc.struct_field(arr, [key])
    return arr


def _names(schema: pa.Schema) -> list[str]:
    out: list[str] = []
    for f in schema:
        out.append(f.name)
        if pa.types.is_struct(f.type):
            out.extend(f"{f.name}.{sub.name}" for sub in f.type)
    return out


def _column(table: pa.Table, name: str) -> pa.Array:
    top, _, child = name.partition(".") if name not in table.column_names else (name, "", "")
    arr = table.column(top).combine_chunks()
    if child:
        arr = pc.struct_field(arr, [child])
    return arr


def _read_parquet(source: Source, mapping: Mapping[str, str] | None) -> Columns:
    """A Parquet batch: only the alias columns are read; lists flatten through their offsets."""
    wanted = {c for columns in candidates(mapping).values() for c in columns}
    try:
        schema = pq.read_schema(source.polars_source())
        tops = sorted({c.split(".")[0] for c in _names(schema) if c in wanted})
        table = pq.read_table(
            source.polars_source(), columns=[t for t in tops if t in schema.names]
        )
    except (OSError, pa.ArrowException) as err:
        raise InputError(f"cannot read Parquet: {err}", file=source.name) from None
    names = _names(table.schema)
    arrays = {c: _column(table, c) for c in names if c in wanted}
    held = {c for c, arr in arrays.items() if arr.null_count < len(arr)}
    src = resolve(held, mapping)
    cols = Columns(size=table.num_rows, sources=src, file=source.name)
    _fill(cols, {name: arrays[column] for name, column in src.items()})
    return cols


def _fill(cols: Columns, arrays: Mapping[str, pa.Array]) -> None:
    """Set ``cols``' fields from Arrow columns (canonical field → its source column)."""
    src = cols.sources
    for name in LIST_FIELDS:
        if name in arrays:
            cols.lists[name] = _list_column(arrays[name], name, src[name], cols)
    if "reward" in arrays:
        arr = arrays["reward"]
        if src["reward"] == REWARD_PARTS:
            if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
                arr = _decoded(arr)
            cols.rewards, cols.reward_present = _reward_parts(arr, src["reward"], cols)
        else:
            values = _numbers(arr, src["reward"], cols)
            cols.rewards = np.asarray(
                values.fill_null(math.nan).to_numpy(zero_copy_only=False), dtype=np.float64
            )
            cols.reward_present = ~np.asarray(
                arr.is_null().to_numpy(zero_copy_only=False), dtype=bool
            )
    for name in TEXT_FIELDS:
        if name in arrays:
            vals = _text(arrays[name]).to_pylist()
            if name == "task_id":
                cols.task_ids = vals
            else:
                cols.agents = vals
    if "truncated" in arrays:
        cols.truncated = _flags(arrays["truncated"], src["truncated"], cols)


def _decoded(arr: pa.Array) -> pa.Array:
    """A column of JSON texts (the ``rewards`` dicts) as a struct over every row's keys."""
    series = pl.from_arrow(arr)
    assert isinstance(series, pl.Series)
    return series.str.json_decode(infer_schema_length=None).to_arrow()


def _text(arr: pa.Array) -> pa.Array:
    """Ids as text (a JSONL id is read as text already; a Parquet number column is rendered
    by :func:`render_text`, so ``1.0`` is ``"1"`` in both)."""
    if pa.types.is_floating(arr.type):
        return pa.array(
            [None if v is None else render_text(v) for v in arr.to_pylist()], pa.string()
        )
    if pa.types.is_boolean(arr.type):
        return pc.if_else(arr, "true", "false")
    return arr.cast(pa.string())


def _flags(arr: pa.Array, column: str, cols: Columns) -> np.ndarray:
    if pa.types.is_floating(arr.type) or pa.types.is_integer(arr.type):
        values = np.asarray(arr.cast(pa.float64()).fill_null(0.0).to_numpy(zero_copy_only=False))
        bad = (values != 0) & (values != 1)
        if bad.any():
            raise InputError(
                "must be true or false", **cols.where(int(np.flatnonzero(bad)[0])), field=column
            )
        return values == 1
    if not pa.types.is_boolean(arr.type):
        raise InputError(f"must be booleans, not {arr.type}", file=cols.file, field=column)
    return np.asarray(arr.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)


def _reward_parts(arr: pa.Array, name: str, cols: Columns) -> tuple[np.ndarray, np.ndarray]:
    """Σ score × weight over a struct of ``{score, weight}`` parts (weight 1 when null; a null
    part or score adds nothing, so no scored part is 0); NaN and absent where the struct is
    null."""
    if not pa.types.is_struct(arr.type):
        raise InputError(
            f"must be a struct of {{score, weight}} parts, not {arr.type}",
            file=cols.file,
            field=name,
        )
    total = np.zeros(len(arr))
    for part in arr.type:
        where = f"{name}.{part.name}"
        child = pc.struct_field(arr, [part.name])
        if pa.types.is_null(child.type):  # never scored
            continue
        if not (pa.types.is_struct(child.type) and child.type.get_field_index("score") >= 0):
            raise InputError(
                f"must be {{score, weight}}, not {child.type}", file=cols.file, field=where
            )
        score = _numbers(pc.struct_field(child, ["score"]), where, cols)
        terms = score
        if child.type.get_field_index("weight") >= 0:
            weight = _numbers(pc.struct_field(child, ["weight"]), where, cols)
            terms = pc.multiply(score, pc.fill_null(weight, 1.0))
        total += np.asarray(pc.fill_null(terms, 0.0).to_numpy(zero_copy_only=False), dtype=float)
    present = ~np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    return np.where(present, total, math.nan), present


def _numbers(arr: pa.Array, name: str, cols: Columns) -> pa.Array:
    if not (
        pa.types.is_integer(arr.type)
        or pa.types.is_floating(arr.type)
        or pa.types.is_boolean(arr.type)
        or pa.types.is_null(arr.type)
    ):
        raise InputError(f"must be numbers, not {arr.type}", file=cols.file, field=name)
    return arr.cast(pa.float64())


def _list_column(
    arr: pa.Array, name: str, column: str, cols: Columns
) -> tuple[np.ndarray, np.ndarray]:
    """Flat float64 values and per-row lengths (-1 for a null list) of a list column."""
    if not (
        pa.types.is_list(arr.type)
        or pa.types.is_large_list(arr.type)
        or pa.types.is_fixed_size_list(arr.type)
    ):
        raise InputError(f"must be a list column, not {arr.type}", file=cols.file, field=column)
    lengths = np.asarray(
        pc.list_value_length(arr).fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64
    )
    flat = pc.list_flatten(arr)
    vtype = flat.type
    numeric = pa.types.is_integer(vtype) or pa.types.is_floating(vtype)
    allowed = numeric or (pa.types.is_boolean(vtype) and name == "action_mask")
    if not allowed and not (pa.types.is_null(vtype) and len(flat) == 0):
        raise InputError(f"entries must be numbers, not {vtype}", file=cols.file, field=column)
    if flat.null_count:
        k = int(np.flatnonzero(flat.is_null().to_numpy(zero_copy_only=False))[0])
        row = int(np.searchsorted(np.cumsum(np.maximum(lengths, 0)), k, side="right"))
        raise InputError("holds a null entry", **cols.where(row), field=column)
    values = np.asarray(flat.cast(pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)
    return values, lengths


def _concat(parts: list[Columns]) -> Columns:
    """One batch from several files' columns, in order; a field some file lacks is missing
    (length -1, reward absent, id None) on that file's rows."""
    n = sum(p.size for p in parts)
    out = Columns(size=n, parts=[], file=parts[0].file)
    start = 0
    for p in parts:
        assert out.parts is not None
        out.parts.append((start, p))
        start += p.size
        for name, column in p.sources.items():
            out.sources.setdefault(name, column)
    for name in LIST_FIELDS:
        if any(name in p.lists for p in parts):
            flats, lens = [], []
            for p in parts:
                flat, own = p.lists.get(name, (np.zeros(0), np.full(p.size, -1, np.int64)))
                flats.append(flat)
                lens.append(own)
            out.lists[name] = (np.concatenate(flats), np.concatenate(lens))
    if any(p.rewards is not None for p in parts):
        out.rewards = np.concatenate(
            [p.rewards if p.rewards is not None else np.full(p.size, math.nan) for p in parts]
        )
        out.reward_present = np.concatenate(
            [
                p.reward_present if p.reward_present is not None else np.zeros(p.size, bool)
                for p in parts
            ]
        )
    for name in ("task_ids", "agents"):
        if any(getattr(p, name) is not None for p in parts):
            merged: list[str | None] = []
            for p in parts:
                own = getattr(p, name)
                merged += own if own is not None else [None] * p.size
            setattr(out, name, merged)
    if any(p.truncated is not None for p in parts):
        out.truncated = np.concatenate(
            [p.truncated if p.truncated is not None else np.zeros(p.size, bool) for p in parts]
        )
    return out
