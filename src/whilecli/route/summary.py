"""Per-task sufficient statistics on disk: ``while summarize`` and routing from its output.

The route reads rows only to count them per task (:mod:`whilecli.route.pool`). Those counts
add across shards, so any engine that can GROUP BY (polars, DuckDB, Spark, BigQuery) can
compute them where the rows live, and ``while route`` can decide from the counts alone.

**The summary** (format version :data:`FORMAT_VERSION`) is one Parquet file, one row per
task, columns :data:`SUMMARY_SCHEMA`:

============== ========= ============================================================
column         type      per task
============== ========= ============================================================
task_id        string    the task
n              int64     rows
passes         int64     rows with passed (reward ≥ the pass threshold)
truncated      int64     rows known truncated
truncated_known int64    rows whose truncation is recorded (the rest are unknown)
truncated_passes int64   rows known truncated that passed
partial_rows   int64     rows with 0 < reward < 1
reward_sum     float64   Σ reward
reward_sumsq   float64   Σ reward²
models         list      [{model, policy_version, rows}]: rows per writer model and full
                         policy version (either may be null), sorted, nulls last
============== ========= ============================================================

``models`` keeps the joint (model, policy_version) counts of each task, so the route's
writer-model and policy-version totals (the on-policy and older-copy checks) come out of a
summary exactly as out of the rows. Every column is a sum over rows, so summaries of
disjoint or overlapping shards merge by adding rows of the same ``task_id`` (and of the same
model and version inside ``models``).

**The header** is the Parquet key-value metadata entry :data:`HEADER_KEY`, a JSON object:
``format_version``, ``pass_threshold``, ``threshold_explicit``, ``format``, ``paths``,
``sources`` (canonical field → the column that fed it), ``rows``, ``tasks``,
``partial_rows``, ``has_logprobs``, ``has_values``, and ``inputs`` (one entry per summarised
read: its paths, format, sources and reader notes, which routing recombines exactly as
reading the files together would). A summary written by another engine may lack the header:
it is then detected from its columns, its pass threshold is the route's ``--pass-threshold``
(default 1.0), and the report says the sources are unknown.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from whilecli.errors import InputError, UsageError
from whilecli.fileio import atomic_write
from whilecli.route.model import CANONICAL_SCHEMA, Pool, Rows
from whilecli.route.pool import TASK_COLUMNS, _counts, task_aggregates

FORMAT_VERSION = 1
HEADER_KEY = "whilecli.summary"
#: Integer columns: every per-task count, summed on merge.
COUNT_COLUMNS = (*TASK_COLUMNS, "partial_rows")
SUM_COLUMNS = ("reward_sum", "reward_sumsq")
MODEL_FIELDS = {"model": pl.String(), "policy_version": pl.String(), "rows": pl.Int64()}
SUMMARY_SCHEMA: dict[str, pl.DataType] = {
    "task_id": pl.String(),
    **{c: pl.Int64() for c in COUNT_COLUMNS},
    **{c: pl.Float64() for c in SUM_COLUMNS},
    "models": pl.List(pl.Struct(MODEL_FIELDS)),
}


@dataclass
class Entry:
    """One summarised read (``read_rows`` over some paths), as the header records it."""

    paths: list[str]
    format: str
    sources: dict[str, str]
    notes: list[str] = field(default_factory=list)


@dataclass
class Header:
    """What a summary records besides its counts (the Parquet metadata, see module doc)."""

    pass_threshold: float | None  # None: a header-less summary, threshold unknown
    threshold_explicit: bool
    inputs: list[Entry]
    has_logprobs: bool = False
    has_values: bool = False
    format_version: int = FORMAT_VERSION

    def to_json(self, frame: pl.DataFrame) -> str:
        """The header as written: the recorded fields plus the combined view of the inputs."""
        paths, fmt, sources, _ = _combine(self.inputs, self.pass_threshold)
        return json.dumps(
            {
                "format_version": self.format_version,
                "pass_threshold": self.pass_threshold,
                "threshold_explicit": self.threshold_explicit,
                "format": fmt,
                "paths": paths,
                "sources": sources,
                "rows": int(frame["n"].sum()),
                "tasks": frame.height,
                "partial_rows": int(frame["partial_rows"].sum()),
                "has_logprobs": self.has_logprobs,
                "has_values": self.has_values,
                "inputs": [asdict(e) for e in self.inputs],
            },
            ensure_ascii=False,
        )


# --- computing and merging ----------------------------------------------------------------


def _collapse(tasks: pl.LazyFrame, models: pl.LazyFrame) -> pl.DataFrame:
    """Sum per-task counts by ``task_id`` and writer counts by (task, model, version)."""
    per_task = tasks.group_by("task_id").agg(
        *(pl.col(c).sum().cast(pl.Int64) for c in COUNT_COLUMNS),
        *(pl.col(c).sum().cast(pl.Float64) for c in SUM_COLUMNS),
    )
    keys = ["task_id", "model", "policy_version"]
    nested = (
        models.group_by(keys)
        .agg(pl.col("rows").sum().cast(pl.Int64))
        .sort(keys, nulls_last=True)
        .group_by("task_id", maintain_order=True)
        .agg(models=pl.struct(*MODEL_FIELDS))
    )
    joined = per_task.join(nested, on="task_id", how="left").sort("task_id")
    out = joined.select(list(SUMMARY_SCHEMA)).collect(engine="streaming")
    return out.cast(SUMMARY_SCHEMA)  # type: ignore[arg-type]


def summary_frame(rows: Rows) -> pl.DataFrame:
    """The per-task summary of validated rows (one scan feeds both group-bys)."""
    reward = pl.col("reward")
    tasks = rows.frame.group_by("task_id").agg(
        *task_aggregates(),
        ((reward > 0) & (reward < 1)).sum().cast(pl.Int64).alias("partial_rows"),
        reward.sum().alias("reward_sum"),
        (reward * reward).sum().alias("reward_sumsq"),
    )
    models = rows.frame.group_by("task_id", "model", "policy_version").agg(
        pl.len().cast(pl.Int64).alias("rows")
    )
    return _collapse(tasks, models)


def _partial_note(partial: int, rows: int, threshold: float) -> str:
    """The note :func:`whilecli.route.read.read_rows` appends for partial rewards."""
    return (
        f"{partial} of {rows} rows have a reward strictly between 0 and 1:"
        f" a row passes at reward ≥ {threshold:g}"
    )


def header_of(rows: Rows, frame: pl.DataFrame) -> Header:
    """The header of a summary of ``rows`` (the partial-reward note is recomputed on read)."""
    notes = list(rows.notes)
    n_rows = int(frame["n"].sum()) if frame.height else 0
    if notes and notes[-1] == _partial_note(rows.partial_rows, n_rows, rows.pass_threshold):
        notes.pop()
    entry = Entry(list(rows.paths), rows.format, dict(rows.sources), notes)
    return Header(
        pass_threshold=rows.pass_threshold,
        threshold_explicit=rows.threshold_explicit,
        inputs=[entry],
        has_logprobs=rows.has_logprobs,
        has_values=rows.has_values,
    )


def _write(frame: pl.DataFrame, header: Header, path: str | os.PathLike[str], force: bool) -> Path:
    table = frame.to_arrow()
    table = table.replace_schema_metadata({HEADER_KEY: header.to_json(frame)})
    return atomic_write(path, lambda tmp: pq.write_table(table, tmp), force=force)


def write_summary(rows: Rows, path: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Write the summary of ``rows`` to ``path`` atomically (refusing to overwrite without
    ``force``); return the path."""
    frame = summary_frame(rows)
    return _write(frame, header_of(rows, frame), path, force)


def merge_summaries(paths: Sequence[str | os.PathLike[str]]) -> pl.DataFrame:
    """The summaries at ``paths`` added up by ``task_id`` (refused when their pass thresholds
    differ, naming the files)."""
    return load_summaries(paths)[0]


def write_merged(
    paths: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str], *, force: bool = False
) -> Path:
    """Merge the summaries at ``paths`` into one summary file at ``out``."""
    frame, header = load_summaries(paths)
    return _write(frame, header, out, force)


# --- reading ------------------------------------------------------------------------------


def _schema(path: str | os.PathLike[str]) -> pa.Schema | None:
    try:
        return pq.read_schema(path)
    except (OSError, pa.ArrowException, ValueError):
        return None


def is_summary(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a summary: a Parquet file with the header or the summary's columns.

    Reads only the Parquet footer.
    """
    if not os.path.isfile(path):
        return False
    schema = _schema(path)
    if schema is None:
        return False
    if schema.metadata and HEADER_KEY.encode() in schema.metadata:
        return True
    return set(SUMMARY_SCHEMA) <= set(schema.names)


def read_header(path: str | os.PathLike[str]) -> Header | None:
    """The header of the summary at ``path``; None when it has none."""
    schema = _schema(path)
    raw = (schema.metadata or {}).get(HEADER_KEY.encode()) if schema is not None else None
    if raw is None:
        return None
    try:
        data = json.loads(raw)
        version = int(data["format_version"])
        if version > FORMAT_VERSION:
            raise InputError(
                f"summary format version {version} is newer than this while reads"
                f" ({FORMAT_VERSION}): upgrade whilecli",
                file=str(path),
            )
        threshold = data["pass_threshold"]
        return Header(
            pass_threshold=None if threshold is None else float(threshold),
            threshold_explicit=bool(data["threshold_explicit"]),
            inputs=[Entry(**e) for e in data["inputs"]],
            has_logprobs=bool(data["has_logprobs"]),
            has_values=bool(data["has_values"]),
            format_version=version,
        )
    except (ValueError, KeyError, TypeError) as err:
        raise InputError(f"unreadable summary header: {err}", file=str(path)) from None


def _read_frame(path: str) -> pl.DataFrame:
    """One summary's columns in :data:`SUMMARY_SCHEMA`, its counts validated."""
    try:
        frame = pl.read_parquet(path, columns=list(SUMMARY_SCHEMA))
        frame = frame.cast(SUMMARY_SCHEMA)  # type: ignore[arg-type]
    except (pl.exceptions.PolarsError, OSError) as err:
        msg = " ".join(str(err).split())[:200]
        raise InputError(f"not a readable summary: {msg}", file=path) from None
    model_rows = pl.col("models").list.eval(pl.element().struct.field("rows")).list.sum()
    checks = {
        "task_id": pl.col("task_id").is_null(),
        "n": pl.col("n").is_null() | (pl.col("n") < 1),
        "passes": ~pl.col("passes").is_between(0, pl.col("n")).fill_null(False),
        "truncated_known": ~pl.col("truncated_known").is_between(0, pl.col("n")).fill_null(False),
        "truncated": ~pl.col("truncated").is_between(0, pl.col("truncated_known")).fill_null(False),
        "truncated_passes": ~pl.col("truncated_passes")
        .is_between(0, pl.min_horizontal("truncated", "passes"))
        .fill_null(False),
        "partial_rows": ~pl.col("partial_rows").is_between(0, pl.col("n")).fill_null(False),
        "models": (model_rows != pl.col("n")).fill_null(True),
    }
    bad = frame.with_row_index("__row").select("__row", *(e.alias(k) for k, e in checks.items()))
    for name in checks:
        hit = bad.filter(pl.col(name))
        if hit.height:
            what = (
                "rows per model do not add up to n"
                if name == "models"
                else "missing or out of range (0 ≤ truncated_passes ≤ min(truncated, passes),"
                " truncated ≤ truncated_known ≤ n, passes ≤ n, n ≥ 1)"
            )
            raise InputError(what, file=path, row=int(hit["__row"][0]), field=name)
    return frame


def load_summaries(paths: Sequence[str | os.PathLike[str]]) -> tuple[pl.DataFrame, Header]:
    """Read and add up the summaries at ``paths``, with their combined header."""
    names = [str(p) for p in paths]
    if not names:
        raise UsageError("give at least one summary")
    frames, headers = [], []
    for name in names:
        if not is_summary(name):
            raise InputError(
                "not a summary (a Parquet file written by `while summarize`, or with its"
                f" columns: {', '.join(SUMMARY_SCHEMA)})",
                file=name,
            )
        headers.append(read_header(name))
        frames.append(_read_frame(name))
    header = _merge_headers(names, headers)
    if len(frames) == 1:
        return frames[0], header
    lazy = pl.concat([f.lazy() for f in frames], how="vertical")
    models = (
        lazy.select("task_id", "models")
        .explode("models")
        .unnest("models")
        .select("task_id", *MODEL_FIELDS)
    )
    return _collapse(lazy.drop("models"), models), header


def _merge_headers(names: list[str], headers: list[Header | None]) -> Header:
    """One header for summaries read together; different pass thresholds are refused."""
    thresholds: dict[float, list[str]] = {}
    for name, h in zip(names, headers, strict=True):
        if h is not None and h.pass_threshold is not None:
            thresholds.setdefault(h.pass_threshold, []).append(name)
    if len(thresholds) > 1:
        made = "; ".join(f"{', '.join(files)} at {t:g}" for t, files in thresholds.items())
        raise UsageError(
            f"summaries made with different pass thresholds cannot be merged ({made}):"
            " summarise them again with one --pass-threshold"
        )
    inputs: list[Entry] = []
    for name, h in zip(names, headers, strict=True):
        if h is None:
            note = (
                "a summary without a whilecli header: its pass threshold, input format and"
                " source columns are unknown"
            )
            inputs.append(Entry([name], "summary", {}, [note]))
        else:
            inputs.extend(h.inputs)
    known = [h for h in headers if h is not None]
    return Header(
        pass_threshold=next(iter(thresholds), None),
        threshold_explicit=any(h.threshold_explicit for h in known),
        inputs=inputs,
        has_logprobs=any(h.has_logprobs for h in known),
        has_values=any(h.has_values for h in known),
    )


def _joined(values: list[str]) -> str:
    seen = list(dict.fromkeys(values))
    return seen[0] if len(seen) == 1 else " + ".join(seen)


def _combine(
    inputs: list[Entry], threshold: float | None
) -> tuple[list[str], str, dict[str, str], list[str]]:
    """Paths, format, sources and notes of several reads, as one read of all their files
    would give them (:func:`whilecli.route.read.read_rows`): formats joined, a source that
    differs named per file, and notes prefixed with their file when there are several."""
    if len(inputs) == 1:
        e = inputs[0]
        return list(e.paths), e.format, dict(e.sources), list(e.notes)
    names = [", ".join(e.paths) for e in inputs]
    passed = "unknown" if threshold is None else f"reward ≥ {threshold:g}"
    sources: dict[str, str] = {}
    keys = dict.fromkeys(["passed", *(k for e in inputs for k in e.sources)])
    for key in keys:
        default = passed if key == "passed" else "none"
        seen = [e.sources.get(key, default) for e in inputs]
        if len(set(seen)) == 1:
            sources[key] = seen[0]
        else:
            sources[key] = "; ".join(f"{n}: {v}" for n, v in zip(names, seen, strict=True))
    notes = [
        note if len(e.paths) > 1 else f"{name}: {note}"
        for e, name in zip(inputs, names, strict=True)
        for note in e.notes
    ]
    paths = [p for e in inputs for p in e.paths]
    return paths, _joined([e.format for e in inputs]), sources, notes


def pool_from_summary(
    paths: Sequence[str | os.PathLike[str]], *, pass_threshold: float | None = None
) -> Pool:
    """The :class:`Pool` the route would build from the rows behind the summaries at ``paths``.

    ``source`` is a :class:`Rows` with an empty frame carrying the header's format, sources,
    threshold and notes, so the report prints what it prints for the rows. ``pass_threshold``
    (``--pass-threshold``) must match the header's; it sets the threshold of a header-less
    summary.
    """
    names = [str(p) for p in paths]
    frame, header = load_summaries(names)
    threshold = header.pass_threshold
    if pass_threshold is not None and threshold is not None and pass_threshold != threshold:
        raise UsageError(
            f"--pass-threshold {pass_threshold:g}: the summaries were made at {threshold:g};"
            " summarise the rows again to change it"
        )
    explicit = header.threshold_explicit or (threshold is None and pass_threshold is not None)
    if threshold is None:
        threshold = 1.0 if pass_threshold is None else float(pass_threshold)
    _, fmt, sources, notes = _combine(header.inputs, threshold)
    rows = int(frame["n"].sum()) if frame.height else 0
    partial = int(frame["partial_rows"].sum()) if frame.height else 0
    if partial:
        notes.append(_partial_note(partial, rows, threshold))
    source = Rows(
        frame=pl.LazyFrame(schema=CANONICAL_SCHEMA),
        paths=names,
        format=fmt,
        sources=sources,
        pass_threshold=threshold,
        threshold_explicit=explicit,
        partial_rows=partial,
        has_logprobs=header.has_logprobs,
        has_values=header.has_values,
        notes=notes,
    )
    writers = frame.select("models").explode("models").unnest("models")
    return Pool(
        tasks=frame.select("task_id", *TASK_COLUMNS),
        rows=rows,
        models=_counts(writers.group_by("model").agg(pl.col("rows").sum()), "model"),
        versions=_counts(
            writers.group_by("policy_version").agg(pl.col("rows").sum()), "policy_version"
        ),
        source=source,
    )
