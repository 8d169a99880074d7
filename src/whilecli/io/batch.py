"""The batch reader: a JSONL or Parquet file of trajectories → the :class:`Columns` that
``while update`` pads into tensors (DESIGN sections 1 and 3).

A batch arrives as rows whose per-token lists have different lengths. :class:`Columns` holds
them flattened (one float64 array per list field plus each row's length, -1 where a row
lacks the list), which :meth:`whilecli.methods.batch.Batch.from_columns` pads into
``[B, T]`` tensors without a Python loop over rows or tokens.

:func:`read_batch` is a view of the one reader, :func:`whilecli.io.read.read_rows`, asked
to keep the rows and the columns that may feed a per-token list or rae's ``agent``
(:class:`~whilecli.io.read.Keep`): the same sources, plan, aliases, row facts and refusals
as ``route`` and ``ada`` (an ungraded row is left out and counted, or kept as a failure
under ``--missing fail``; error replies are left out). A JSON Lines batch is read whole by
polars, once, and its lists flattened through their Arrow offsets, as a Parquet file's are:
no Python loop per row. Only a file that read cannot take is read the usual way (which
names the first bad line and field) and its lists parsed line by line by
:func:`whilecli.io.columns.columns_from_rows`
(``batch.jsonl:17: field 'logprobs': holds the text "x", not a number``).
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

from whilecli.errors import InputError, UsageError, shown_path
from whilecli.io.columns import (
    LIST_FIELDS,
    Columns,
    InputRows,
    candidates,
    columns_from_rows,
    dig,
    render_text,
    resolve,
)
from whilecli.io.read import LEFT_OUT, Keep, StreamedRows, read_rows
from whilecli.io.rows import AT, AT_BITS
from whilecli.io.sources import (
    COMPRESSIONS,
    JSONL_SUFFIXES,
    PARQUET_MAGIC,
    PARQUET_SUFFIXES,
    TABLE_SUFFIXES,
    ZIP_MAGIC,
    ZIP_SUFFIXES,
    Source,
    expand_paths,
    iter_lines,
    parse_line,
    refuse_unread_compression,
)

#: The fields a batch file's own columns feed: the per-token lists and rae's ``agent``. The
#: canonical fields (task id, reward, truncation) are the one reader's.
FILE_FIELDS = (*LIST_FIELDS, "agent")
#: The canonical fields a batch carries beside its lists.
CANONICAL_FIELDS = ("reward", "task_id", "truncated")


def _candidates(mapping: Mapping[str, str] | None) -> dict[str, tuple[str, ...]]:
    return {k: v for k, v in candidates(mapping).items() if k in FILE_FIELDS}


def _resolve(held: set[str], mapping: Mapping[str, str] | None) -> dict[str, str]:
    return {k: v for k, v in resolve(held, mapping).items() if k in FILE_FIELDS}


def _wanted(mapping: Mapping[str, str] | None) -> set[str]:
    """The columns (dotted: nested) that may feed a list field or ``agent``."""
    return {c for columns in _candidates(mapping).values() for c in columns}


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


def _head(source: Source, size: int = 4) -> bytes:
    if source.data is not None:
        return source.data[:size]
    assert source.path is not None
    try:
        with open(source.path, "rb") as fh:
            return fh.read(size)
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}", file=source.name) from None


def batch_sources(path: str | Path, input_format: str | None = None) -> list[Source]:
    """The files a batch path names (a file, a directory, a glob, ``-`` for stdin);
    ``input_format`` (``--input-format``) forces how they read, whatever their names."""
    p = Path(path)
    if (
        input_format is None
        and str(path) != "-"
        and p.is_file()
        and _named_kind(p) is None
        # Parquet, or a zip (an inspect_ai log, a slime torch.save dump), under any name
        and _head(Source(name=str(p), kind="jsonl", path=p)) not in (PARQUET_MAGIC, ZIP_MAGIC)
    ):
        refuse_unread_compression(_head(Source(name=str(p), kind="jsonl", path=p), 6), str(p))
        raise UsageError(
            f"{shown_path(p)}: unknown file type {p.suffix!r};"
            " use .jsonl, .json, .csv, .tsv or .parquet"
            " (or an inspect_ai .eval log, a slime .pt dump)"
        )
    return expand_paths([str(path)], input_format=input_format)


def read_jsonl(path: str | Path) -> tuple[list[dict[str, Any]], list[int]]:
    """A JSONL file's objects and their 1-based line numbers (blank lines skipped; a key
    written twice with different values is refused at its line)."""
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


def read_batch(
    path: str | Path,
    mapping: Mapping[str, str] | None = None,
    *,
    missing: str = "skip",
    input_format: str | None = None,
    named_by: Mapping[str, str] | None = None,
    pool: bool = False,
) -> Columns:
    """Read a JSONL or Parquet batch (or a directory or glob of them) into :class:`Columns`
    through the one reader. ``missing`` (``--missing``): an ungraded row is left out
    (``skip``) or kept as a failure, reward 0 (``fail``); ``input_format``
    (``--input-format``): the format forced, as every command forces it. A column that
    ``mapping`` names for a field is refused where a file holds none of it, as the reader
    refuses a mapped canonical field; ``named_by`` says which option named it (field → the
    option as the user wrote it; ``--map FIELD=COLUMN`` where absent)."""
    sources = [_by_magic(s) for s in batch_sources(path, input_format)]
    wanted = _wanted(mapping)
    keep = Keep(
        optional=("task_id", "reward"),
        columns=tuple(sorted({c.split(".")[0] for c in wanted})),
        whole=True,
        pass_rule=False,  # rewards are numbers to the update, not passes
        tolerant=True,  # a row without a task id is refused by what groups by it
    )
    try:
        rows = read_rows(
            [s.name for s in sources],
            sources=sources,
            mapping={k: v for k, v in (mapping or {}).items() if k in CANONICAL_FIELDS},
            input_format=input_format,
            pool=pool,  # shards of one run pool; two evaluations only with --pool
            missing=missing,
            keep=keep,
        )
    except InputError as err:
        if str(err).startswith("no rows") or str(err).endswith("no rows: the input is empty"):
            raise InputError("the batch is empty: no trajectories", file=err.file) from None
        raise
    assert rows.kept_rows is not None
    kept = rows.kept_rows.with_columns(
        (pl.col(AT) // (1 << AT_BITS)).alias("__src"),
        pl.col(AT).and_(pl.lit((1 << AT_BITS) - 1, dtype=pl.Int64)).alias("__place"),
    )
    parts: list[Columns] = []
    for (src,), own in kept.group_by("__src", maintain_order=True):
        source = sources[int(src)]
        line_based = source.kind != "parquet"
        places = own.get_column("__place") - (1 if line_based else 0)
        held = rows.inputs.get(int(src))
        lines = _LineNumbers(source, places.to_list()) if line_based else None
        cols = None
        if held is not None:
            try:
                cols = _arrow_columns(held, places, source, mapping, lines)
            except (InputError, pa.ArrowException, pl.exceptions.PolarsError):
                if not line_based:
                    raise
                # a value the types polars gave cannot name: the exact reader names it
        if cols is None:
            cols = _parsed_columns(source, places.to_list(), mapping)
        parts.append(cols)
        _check_mapped(cols, source, mapping, named_by)
    cols = parts[0] if len(parts) == 1 else _concat(parts)
    _set_canonical(cols, rows, missing)
    cols.input_rows = _input_rows(rows, sources, mapping)
    return cols


def _input_rows(
    rows: StreamedRows, sources: Sequence[Source], mapping: Mapping[str, str] | None
) -> InputRows:
    """Every input row in input order: the batch's rows (the kept rows, in their order) and
    the rows the read left out, each at its place in its source."""
    assert rows.kept_rows is not None
    left = rows.left_out_rows if rows.left_out_rows is not None else pl.DataFrame()
    kept_at = rows.kept_rows.get_column(AT).to_numpy().astype(np.int64)
    left_at = (
        left.get_column(AT).to_numpy().astype(np.int64) if left.height else np.zeros(0, np.int64)
    )
    b = len(kept_at)
    every = np.concatenate([kept_at, left_at])
    order = np.argsort(every, kind="stable")
    at = every[order]
    src = at >> AT_BITS
    place = at & ((1 << AT_BITS) - 1)
    line_based = np.array([s.kind != "parquet" for s in sources], dtype=bool)
    place = place - line_based[src].astype(np.int64)  # a JSONL place counts lines from 1
    why: list[str | None] = [None] * len(order)
    task_id: list[str | None] = [None] * len(order)
    tokens = np.zeros(len(order), np.int64)
    if left.height:
        left_why = left.get_column(LEFT_OUT).to_list()
        left_task = left.get_column("task_id").to_list()
        for k in np.flatnonzero(order >= b):
            why[k] = left_why[order[k] - b]
            task_id[k] = left_task[order[k] - b]
        out = np.flatnonzero(order >= b)
        for s in np.unique(src[out]):
            mine = out[src[out] == s]
            tokens[mine] = _token_counts(rows, sources, int(s), place[mine], mapping)
    several = len({int(s) for s in src}) > 1
    return InputRows(
        row=place,
        file=[sources[int(s)].name for s in src] if several else None,
        batch=np.where(order < b, order, -1).astype(np.int64),
        left_out=why,
        task_id=task_id,
        tokens=tokens,
    )


def _token_counts(
    rows: StreamedRows,
    sources: Sequence[Source],
    index: int,
    places: np.ndarray,
    mapping: Mapping[str, str] | None,
) -> np.ndarray:
    """How many entries the ``logprobs`` list holds on the rows at ``places`` of source
    ``index`` (rows left out of the batch, whose lists are never checked): 0 where a row has
    no list, or the list is not one."""
    aliases = _candidates(mapping)["logprobs"]
    held = rows.inputs.get(index)
    if held is not None:  # every input column the read kept (none: the rows carry no list)
        names = set(_names(held.head(0).to_arrow().schema))
        column = next((c for c in aliases if c in names), None)
        if column is None or not len(places):
            return np.zeros(len(places), np.int64)
        table = held[places.tolist()].to_arrow()
        arr = _column(table, column)
        if not (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)):
            return np.zeros(len(places), np.int64)
        counts = pc.list_value_length(arr).fill_null(0).to_numpy(zero_copy_only=False)
        return np.asarray(counts, dtype=np.int64)
    parsed, _ = _parse_lines(sources[index])
    out = np.zeros(len(places), np.int64)
    for k, i in enumerate(places.tolist()):
        for column in aliases:
            found, value = dig(parsed[i], column)
            if found and value is not None:
                out[k] = len(value) if isinstance(value, list) else 0
                break
    return out


def _by_magic(source: Source) -> Source:
    """A Parquet file is known by its magic bytes, whatever its name."""
    if source.kind == "jsonl" and source.compression is None and _head(source) == PARQUET_MAGIC:
        return Source(name=source.name, kind="parquet", path=source.path, data=source.data)
    return source


def _set_canonical(cols: Columns, rows: StreamedRows, missing: str) -> None:
    """The canonical fields of the kept rows, as the one reader read them: reward (an
    ungraded row kept by ``--missing fail`` is a failure: 0), task ids (None where the rows
    carry none), truncation (None where unknown on every row; unknown rows read as not cut)."""
    assert rows.kept_rows is not None
    frame = rows.kept_rows
    for name in CANONICAL_FIELDS:
        cols.sources.pop(name, None)
        if name not in rows.absent and name in rows.sources:
            cols.sources[name] = rows.fields.get(name, rows.sources[name])
    cols.rewards = cols.reward_present = cols.task_ids = cols.truncated = None
    if "reward" not in rows.absent:
        reward = frame.select(
            pl.when(pl.col("graded")).then(pl.col("reward")).otherwise(pl.lit(0.0))
            if missing == "fail"
            else pl.col("reward")
        ).to_series()
        cols.rewards = reward.fill_null(math.nan).to_numpy().astype(np.float64, copy=False)
        cols.reward_present = reward.is_not_null().to_numpy()
    if "task_id" not in rows.absent:
        cols.task_ids = frame.get_column("task_id").to_list()
    truncated = frame.get_column("truncated")
    if truncated.null_count() < truncated.len():
        cols.truncated = truncated.fill_null(False).to_numpy().astype(bool, copy=False)
    cols.notes = [*rows.notes, *rows.facts.warnings()]


def _check_mapped(
    cols: Columns,
    source: Source,
    mapping: Mapping[str, str] | None,
    named_by: Mapping[str, str] | None,
) -> None:
    """Refuse a file where a column ``mapping`` names for a list field or ``agent`` holds no
    value: an optional field read from nowhere would change the numbers in silence."""
    for name, column in (mapping or {}).items():
        if name in FILE_FIELDS and name not in cols.sources:
            option = (named_by or {}).get(name, f"--map {name}={column}")
            raise InputError(f"{option}: the rows have no column {column!r}", file=source.name)


def _arrow_columns(
    held: pl.DataFrame,
    places: pl.Series,
    source: Source,
    mapping: Mapping[str, str] | None,
    lines: Sequence[int] | None,
) -> Columns:
    """The lists (and agents) of the kept rows from the columns the read holds, flattened
    through their Arrow offsets."""
    if held.width == 0:  # no column that feeds a list or an agent
        return Columns(size=places.len(), file=source.name, lines=lines)
    every = np.arange(held.height)
    if places.len() != held.height or not np.array_equal(places.to_numpy(), every):
        held = held[places.to_list()]
    table = held.to_arrow()
    wanted = _wanted(mapping)
    arrays = {c: _column(table, c) for c in _names(table.schema) if c in wanted}
    present = {c for c, arr in arrays.items() if arr.null_count < len(arr)}
    cols = Columns(size=places.len(), sources=_resolve(present, mapping), file=source.name)
    cols.lines = lines
    _fill(cols, {name: arrays[column] for name, column in cols.sources.items()})
    return cols


def _parsed_columns(
    source: Source, places: list[int], mapping: Mapping[str, str] | None
) -> Columns:
    """The lists (and agents) of the kept rows of a file polars could not read whole: its
    lines parsed one by one (the exact reader names the first bad line and field)."""
    rows, lines = _parse_lines(source)
    tops = {c.split(".")[0] for c in _wanted(mapping)}
    return columns_from_rows(
        [{k: v for k, v in rows[i].items() if k in tops} for i in places],
        {k: v for k, v in (mapping or {}).items() if k in FILE_FIELDS},
        file=source.name,
        lines=[lines[i] for i in places],
    )


def _parse_lines(source: Source) -> tuple[list[dict[str, Any]], list[int]]:
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    for lineno, line in iter_lines(source):
        rows.append(parse_line(source, lineno, line))
        lines.append(lineno)
    return rows, lines


class _LineNumbers(Sequence[int]):
    """The 1-based line of each kept row of a JSONL source (``places``: its 0-based place
    among the non-blank lines), counted only when an error asks."""

    def __init__(self, source: Source, places: list[int]) -> None:
        self.source = source
        self.places = places
        self._lines: list[int] | None = None

    def _all(self) -> list[int]:
        if self._lines is None:
            every = [n for n, _ in iter_lines(self.source)]
            self._lines = [every[i] for i in self.places]
        return self._lines

    def __getitem__(self, i: Any) -> Any:
        return self._all()[i]

    def __len__(self) -> int:
        return len(self.places)

    def __iter__(self) -> Iterator[int]:
        return iter(self._all())


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
