"""The batch reader: a JSONL or Parquet file of trajectories → the :class:`Columns` that
``while update`` pads into tensors (DESIGN sections 1 and 3).

A batch arrives as rows whose per-token lists have different lengths. :class:`Columns` holds
them flattened (one float64 array per list field plus each row's length, -1 where a row
lacks the list), which :meth:`whilecli.methods.batch.Batch.from_columns` pads into
``[B, T]`` tensors without a Python loop over rows or tokens.

Sources are expanded by :mod:`whilecli.io.sources` (gzip and zstd, directories, globs,
stdin ``-``), so a batch opens the way a route's rows do; a Parquet file is known by its
magic bytes whatever its name. The canonical fields (task id, reward, truncation) are the
one plan's (:func:`whilecli.io.table.canonical_rows`: the same aliases, prompt hash,
``finish_reason``, rewards dict and checks as ``route`` and ``ada``); only the per-token
lists (and rae's ``agent``) are resolved here, from the alias table (first match wins; a
column feeds a field when some row holds a non-null value there).

A JSONL file is read once by polars (every column), handed to Arrow, and the lists
flattened through their offsets, as a Parquet file's are: no Python loop per row. Only when
that read fails (a bad value, invalid UTF-8, a line that is not an object, JSON nested past
the parser's depth, booleans and numbers mixed in one column) are the lines parsed one by
one with :func:`json.loads`, which names the first bad line and field
(``batch.jsonl:17: field 'logprobs': holds the text "x", not a number``) or reads the file
exactly.
"""

from __future__ import annotations

import io
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
from whilecli.io.columns import (
    LIST_FIELDS,
    Columns,
    candidates,
    columns_from_rows,
    render_text,
    resolve,
)
from whilecli.io.locate import POS
from whilecli.io.shape import Shape, unseen_paths
from whilecli.io.sources import (
    COMPRESSIONS,
    JSONL_SUFFIXES,
    PARQUET_MAGIC,
    PARQUET_SUFFIXES,
    TABLE_SUFFIXES,
    ZIP_SUFFIXES,
    Source,
    expand_paths,
    iter_lines,
    parse_line,
    rows_with_keys,
)
from whilecli.io.table import Canonical, canonical_of_rows, canonical_rows

#: The fields a batch file's own columns feed: the per-token lists and rae's ``agent``. The
#: canonical fields (task id, reward, truncation) are the one plan's (:func:`_set_canonical`).
FILE_FIELDS = (*LIST_FIELDS, "agent")
#: The canonical fields a batch carries beside its lists.
CANONICAL_FIELDS = ("reward", "task_id", "truncated")


def _candidates(mapping: Mapping[str, str] | None) -> dict[str, tuple[str, ...]]:
    return {k: v for k, v in candidates(mapping).items() if k in FILE_FIELDS}


def _resolve(held: set[str], mapping: Mapping[str, str] | None) -> dict[str, str]:
    return {k: v for k, v in resolve(held, mapping).items() if k in FILE_FIELDS}


def _canonical_map(mapping: Mapping[str, str] | None) -> dict[str, str]:
    return {k: v for k, v in (mapping or {}).items() if k in CANONICAL_FIELDS}


def _set_canonical(cols: Columns, canon: Canonical) -> None:
    """The canonical fields of the rows, as the one plan read them: reward (NaN where
    null), task ids (None where the rows carry none), truncation (None where unknown on
    every row; unknown rows read as not cut)."""
    frame = canon.frame
    if frame.height != cols.size:
        raise InputError(
            f"the input's format keeps {frame.height} of its {cols.size} rows; a batch needs"
            " one row per trajectory",
            file=cols.file,
        )
    for name in CANONICAL_FIELDS:
        cols.sources.pop(name, None)
        if name not in canon.absent and name in canon.columns:
            cols.sources[name] = canon.fields.get(name, canon.columns[name])
    cols.rewards = cols.reward_present = cols.task_ids = cols.truncated = None
    if "reward" not in canon.absent:
        reward = frame.get_column("reward")
        cols.rewards = reward.fill_null(math.nan).to_numpy().astype(np.float64, copy=False)
        cols.reward_present = reward.is_not_null().to_numpy()
    if "task_id" not in canon.absent:
        cols.task_ids = frame.get_column("task_id").to_list()
    truncated = frame.get_column("truncated")
    if truncated.null_count() < truncated.len():
        cols.truncated = truncated.fill_null(False).to_numpy().astype(bool, copy=False)


def exact_columns(
    rows: Sequence[Mapping[str, Any]],
    mapping: Mapping[str, str] | None,
    source: Source,
    lines: Sequence[int] | None,
) -> Columns:
    """Rows parsed one by one (the exact reader): the canonical fields by the one plan
    (:func:`whilecli.io.table.canonical_of_rows`, its refusals first), the lists flattened by
    :func:`whilecli.io.columns.columns_from_rows`."""
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            where = {"line": lines[i]} if lines is not None else {"row": i}
            raise InputError(
                f"expected an object, got {type(row).__name__}", file=source.name, **where
            )
    canon = canonical_of_rows(
        [dict(r) for r in rows], source, mapping=_canonical_map(mapping), lines=lines
    )
    lists = {k: v for k, v in (mapping or {}).items() if k in FILE_FIELDS}
    cols = columns_from_rows(
        [{k: v for k, v in r.items() if k in _list_keys(rows, mapping)} for r in rows],
        lists,
        file=source.name,
        lines=lines,
    )
    _set_canonical(cols, canon)
    return cols


def _list_keys(rows: Sequence[Mapping[str, Any]], mapping: Mapping[str, str] | None) -> set[str]:
    """The top-level keys that may feed a list field or ``agent`` (the rest is left out, so
    the in-memory reader resolves nothing else)."""
    wanted = {c.split(".")[0] for cols in _candidates(mapping).values() for c in cols}
    return wanted


# ------------------------------------------------------------------ files


def _named_kind(path: Path) -> str | None:
    """ "jsonl" (rows: JSON Lines, a JSON document, CSV/TSV, an inspect log) or "parquet" from
    a file name (``.gz``/``.zst`` allowed on text), else None: the files every command reads."""
    name = path.name.lower()
    compressed = False
    for suffix in COMPRESSIONS:
        if name.endswith(suffix):
            name, compressed = name[: -len(suffix)], True
            break
    if name.endswith((*JSONL_SUFFIXES, *TABLE_SUFFIXES)) or (
        name.endswith(ZIP_SUFFIXES) and not compressed
    ):
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
        raise UsageError(
            f"{p}: unknown file type {p.suffix!r}; use .jsonl, .json, .csv, .tsv or .parquet"
        )
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


def _read_jsonl(source: Source, mapping: Mapping[str, str] | None) -> Columns:
    """One polars read of every column (Arrow underneath, no Python loop per row): the
    canonical fields by the one plan over that frame, the per-token lists flattened through
    its list offsets. A file polars cannot read is parsed line by line (the exact reader)."""
    try:
        schema = _schema(source)
        frame = pl.read_ndjson(source.polars_source(), schema=schema, infer_schema_length=None)
        if frame.height:
            cols = _jsonl_columns(source, frame, mapping)
            if not _json_ids(cols.task_ids):
                return cols
            # polars typed a list or object id as its JSON text: the exact reader refuses it
    except _FAST_READ_ERRORS:
        pass  # the exact reader names the line, or reads what polars could not type
    rows, lines = _parse_lines(source)
    return exact_columns(rows, mapping, source, lines)


def _json_ids(ids: Sequence[str | None] | None) -> bool:
    """Whether a task id read as text looks like a JSON list or object (polars reads a list
    in a text column as its JSON)."""
    return any(t is not None and t[:1] in ("[", "{") for t in ids or ())


#: Rows whose values type a JSONL batch's columns (the per-token lists make typing every row
#: cost about as much as reading it).
TYPE_ROWS = 16


def _schema(source: Source) -> pl.Schema | None:
    """The columns of a JSONL batch, typed from its first :data:`TYPE_ROWS` rows; None (type
    every row) when a column is null throughout them, or when a later row carries a key of
    the late-field alias tables those rows lack (a truncation flag only on cut-off replies).
    A later value that does not fit its column fails the read, and the exact reader takes
    the file."""
    lines = iter_lines(source)
    first: list[bytes] = []
    try:
        for _, line in lines:
            first.append(line)
            if len(first) > TYPE_ROWS:
                break
    finally:
        lines.close()  # type: ignore[attr-defined]
    if len(first) <= TYPE_ROWS:
        return None  # a short file: typed whole
    head = pl.read_ndjson(io.BytesIO(b"\n".join(first[:TYPE_ROWS])), infer_schema_length=None)
    schema = head.collect_schema()
    if any(_has_null(dtype) for dtype in schema.values()):
        return None
    paths = unseen_paths(Shape.from_schema(schema))
    if paths and rows_with_keys(source, dict.fromkeys(p[-1] for p in paths), TYPE_ROWS, 1):
        return None
    return schema


def _has_null(dtype: Any) -> bool:
    if dtype == pl.Null:
        return True
    if isinstance(dtype, (pl.List, pl.Array)):
        return _has_null(dtype.inner)
    if isinstance(dtype, pl.Struct):
        return any(_has_null(f.dtype) for f in dtype.fields)
    return False


def _jsonl_columns(
    source: Source, frame: pl.DataFrame, mapping: Mapping[str, str] | None
) -> Columns:
    """The columns of a JSONL batch polars read whole; any refusal (a value the inferred
    types cannot name at its line) sends the file to the exact reader."""
    numbers = _LineNumbers(source)

    def line_of(bad: pl.DataFrame) -> pl.DataFrame:
        return bad.with_columns(pl.col(POS).map_elements(lambda i: numbers[i], pl.Int64))

    canon = canonical_rows(frame.lazy(), source, mapping=_canonical_map(mapping), line_of=line_of)
    wanted = {c for columns in _candidates(mapping).values() for c in columns}
    tops = [c for c in frame.columns if c in wanted or any(w.startswith(f"{c}.") for w in wanted)]
    table = frame.select(tops).to_arrow()
    names = _names(table.schema)
    arrays = {c: _column(table, c) for c in names if c in wanted}
    held = {c for c, arr in arrays.items() if arr.null_count < len(arr)}
    cols = Columns(size=frame.height, sources=_resolve(held, mapping), file=source.name)
    cols.lines = numbers
    _fill(cols, {name: arrays[column] for name, column in cols.sources.items()})
    _set_canonical(cols, canon)
    return cols


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


def _arrow(source: Source) -> Any:
    """What pyarrow reads: the bytes of a stream, or the file's path as it is."""
    return io.BytesIO(source.data) if source.data is not None else source.file_path()


def _read_parquet(source: Source, mapping: Mapping[str, str] | None) -> Columns:
    """A Parquet batch: the canonical fields by the one plan over the file's scan; only the
    list (and agent) columns are read besides, and flattened through their offsets."""
    wanted = {c for columns in _candidates(mapping).values() for c in columns}
    try:
        schema = pq.read_schema(_arrow(source))
        tops = sorted({c.split(".")[0] for c in _names(schema) if c in wanted})
        table = pq.read_table(_arrow(source), columns=[t for t in tops if t in schema.names])
        lf = pl.scan_parquet(source.polars_source())
        lf.collect_schema()
    except (OSError, ValueError, pa.ArrowException, pl.exceptions.PolarsError) as err:
        # ValueError: pyarrow decodes a damaged footer's column names (UnicodeDecodeError)
        raise InputError(f"cannot read Parquet: {err}", file=source.name) from None
    canon = canonical_rows(lf, source, mapping=_canonical_map(mapping))
    names = _names(table.schema)
    arrays = {c: _column(table, c) for c in names if c in wanted}
    held = {c for c, arr in arrays.items() if arr.null_count < len(arr)}
    size = table.num_rows if table.num_columns else canon.frame.height
    cols = Columns(size=size, sources=_resolve(held, mapping), file=source.name)
    _fill(cols, {name: arrays[column] for name, column in cols.sources.items()})
    _set_canonical(cols, canon)
    return cols


def _fill(cols: Columns, arrays: Mapping[str, pa.Array]) -> None:
    """Set ``cols``' per-token lists and agents from Arrow columns (field → its column)."""
    src = cols.sources
    for name in LIST_FIELDS:
        if name in arrays:
            cols.lists[name] = _list_column(arrays[name], name, src[name], cols)
    if "agent" in arrays:
        cols.agents = _text(arrays["agent"]).to_pylist()


def _text(arr: pa.Array) -> pa.Array:
    """Agents as text (a number rendered by :func:`render_text`, so ``1.0`` is ``"1"``)."""
    if pa.types.is_floating(arr.type):
        return pa.array(
            [None if v is None else render_text(v) for v in arr.to_pylist()], pa.string()
        )
    if pa.types.is_boolean(arr.type):
        return pc.if_else(arr, "true", "false")
    return arr.cast(pa.string())


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
