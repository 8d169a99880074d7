"""Per-task sufficient statistics on disk: ``whilecli summarize`` and routing from its output.

The route reads rows only to count them per task (:mod:`whilecli.route.pool`). Those counts
add across shards, so any engine that can GROUP BY (polars, DuckDB, Spark, BigQuery) can
compute them where the rows live, and ``whilecli route`` can decide from the counts alone.

**The summary** (format version :data:`FORMAT_VERSION`, documented in ``docs/scale.md``) is
one Parquet file, one row per task, columns :data:`SUMMARY_SCHEMA`: ``task_id``; the int64
counts ``n`` (rows), ``passes`` (reward ≥ the pass threshold), ``truncated`` (rows known
truncated), ``truncated_known`` (rows whose truncation is recorded), ``truncated_passes``,
``partial_rows`` (0 < reward < 1); the float64 ``reward_sum`` (Σ reward) and
``reward_sumsq`` (Σ reward²); and ``models``, a list of ``{model, policy_version, rows}``:
rows per writer model and full policy version (either may be null), sorted, nulls last.

``models`` keeps the joint (model, policy_version) counts of each task, so the route's
writer-model and policy-version totals (the on-policy and older-copy checks) come out of a
summary exactly as out of the rows. Every column is a sum over rows, so summaries of
disjoint or overlapping shards merge by adding rows of the same ``task_id`` (and of the same
model and version inside ``models``).

**The header** is the Parquet key-value metadata entry :data:`HEADER_KEY`, a JSON object:
``format_version``, ``pass_threshold``, ``threshold_explicit``, ``format``, ``paths``,
``sources`` (canonical field → the column that fed it), ``rows``, ``tasks``,
``partial_rows``, ``has_logprobs``, ``has_values``, and ``inputs`` (one entry per summarised
read: its paths, format, sources, reader notes and ``judged``, the rows an LLM judge graded
or null when they could not be scanned, which routing recombines exactly as reading the
files together would). A summary written by another engine may lack the header:
it is then detected from its columns, its pass threshold is the route's ``--pass-threshold``
(default 1.0), and the report says the sources are unknown.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from whilecli.errors import InputError, UsageError
from whilecli.fileio import atomic_write, reader_source
from whilecli.io.judge import JudgeScan
from whilecli.io.modelid import path_model, writer_named, writers_in, writers_named
from whilecli.io.read import prefixed_id, prompt_groups
from whilecli.route.model import CANONICAL_SCHEMA, Pool, Rows
from whilecli.route.pool import (
    CREDIT_FAILS,
    TASK_COLUMNS,
    _counts,
    across_writers,
    add_counts,
    several_writers,
    task_aggregates,
)
from whilecli.route.summary_header import (
    FORMAT_VERSION,
    HEADER_KEY,
    Entry,
    Header,
    combine,
    facts_of,
    header_of,
    merge_headers,
    parquet_footer,
    partial_note,
    read_header,
    reward_range_of,
)

__all__ = [
    "FORMAT_VERSION",
    "HEADER_KEY",
    "SUMMARY_SCHEMA",
    "Entry",
    "Header",
    "is_summary",
    "load_summaries",
    "merge_summaries",
    "pool_from_summary",
    "read_header",
    "summary_frame",
    "write_merged",
    "write_summary",
]

#: Integer columns: every per-task count, summed on merge.
COUNT_COLUMNS = (*TASK_COLUMNS, "partial_rows")
SUM_COLUMNS = ("reward_sum", "reward_sumsq")
MODEL_FIELDS = {
    "model": pl.String(),
    "policy_version": pl.String(),
    "rows": pl.Int64(),
    "passes": pl.Int64(),  # null in summaries written before writers' passes were kept
}
SUMMARY_SCHEMA: dict[str, pl.DataType] = {
    "task_id": pl.String(),
    **{c: pl.Int64() for c in COUNT_COLUMNS},
    **{c: pl.Float64() for c in SUM_COLUMNS},
    "models": pl.List(pl.Struct(MODEL_FIELDS)),
}


# --- computing and merging ----------------------------------------------------------------


def _collapse(tasks: pl.LazyFrame, models: pl.LazyFrame, files: Sequence[str]) -> pl.DataFrame:
    """Sum per-task counts by ``task_id`` and writer counts by (task, model, version).

    Each sum is its own streaming query over the inputs, so memory holds the summed tables
    (one line per task, and per task and writer), never the input lines.
    """
    per_task = tasks.group_by("task_id").agg(
        *(pl.col(c).cast(pl.Int128).sum() for c in COUNT_COLUMNS),
        *(pl.col(c).sum().cast(pl.Float64) for c in SUM_COLUMNS),
    )
    keys = ["task_id", "model", "policy_version"]
    passes = pl.col("passes")
    cells = models.group_by(keys).agg(
        pl.col("rows").cast(pl.Int128).sum(),
        pl.when(passes.null_count() == 0).then(passes.cast(pl.Int128).sum()),
    )
    nested = (
        _int64_counts(_collect(cells, files), ["rows", "passes"], files)
        .sort(keys, nulls_last=True)
        .group_by("task_id", maintain_order=True)
        .agg(models=pl.struct(*MODEL_FIELDS))
    )
    # ``nested`` is sorted by task_id; the join keeps its order
    counts = _int64_counts(_collect(per_task, files), list(COUNT_COLUMNS), files)
    joined = nested.join(counts, on="task_id", how="left", maintain_order="left")
    return joined.select(list(SUMMARY_SCHEMA)).cast(SUMMARY_SCHEMA)  # type: ignore[arg-type]


#: The largest count a summary holds (its columns are int64).
INT64_MAX = 2**63 - 1


def _int64_counts(frame: pl.DataFrame, columns: list[str], files: Sequence[str]) -> pl.DataFrame:
    """``frame`` with its summed ``columns`` (added in 128 bits) back in int64; a sum past
    int64 is refused, naming the task, never wrapped to a negative count."""
    over = frame.filter(pl.any_horizontal(pl.col(c) > INT64_MAX for c in columns))
    if over.height:
        line = over.row(0, named=True)
        column = next(c for c in columns if line[c] is not None and line[c] > INT64_MAX)
        raise InputError(
            f"task {line['task_id']!r}: the counts add up to {line[column]}, past the largest"
            f" count a summary holds ({INT64_MAX})",
            file=", ".join(files),
            field=column,
        )
    return frame.with_columns(pl.col(c).cast(pl.Int64) for c in columns)


def _collect(lf: pl.LazyFrame, files: Sequence[str]) -> pl.DataFrame:
    try:
        return lf.collect(engine="streaming")
    except pl.exceptions.PolarsError as err:
        what = " ".join(str(err).split())[:200]
        raise InputError(f"cannot read: {what}", file=", ".join(files)) from None


def summary_frame(rows: Rows) -> pl.DataFrame:
    """The per-task summary of validated rows.

    Each piece of the rows (a file, or a row range of a large one: ``rows.pieces``) is
    grouped by (task, model, version) with every count on the streaming engine, and the
    tables are added as they arrive: memory follows tasks times writers, never rows. The
    result is then summed by task.
    """
    reward = pl.col("reward")
    key = ["task_id", "model", "policy_version"]
    aggregates = [
        *task_aggregates(),
        ((reward > 0) & (reward < 1)).sum().cast(pl.Int64).alias("partial_rows"),
        reward.sum().alias("reward_sum"),
        (reward * reward).sum().alias("reward_sumsq"),
    ]
    cells: pl.DataFrame | None = None
    for piece in list(getattr(rows, "pieces", None) or [rows.frame]):
        table = _collect(piece.group_by(*key).agg(*aggregates), rows.paths)
        cells = table if cells is None else add_counts([cells, table], key)
    assert cells is not None
    if cells["task_id"].n_unique() == cells.height:  # one writer per task: already summed
        model = pl.struct("model", "policy_version", pl.col("n").alias("rows"), "passes")
        one = cells.sort("task_id").with_columns(models=pl.concat_list(model))
        return one.select(list(SUMMARY_SCHEMA)).cast(SUMMARY_SCHEMA)  # type: ignore[arg-type]
    models = cells.lazy().select(
        "task_id", "model", "policy_version", pl.col("n").alias("rows"), "passes"
    )
    return _collapse(cells.lazy(), models, rows.paths)


def _write(frame: pl.DataFrame, header: Header, path: str | os.PathLike[str], force: bool) -> Path:
    rows, partial = (int(frame[c].sum()) for c in ("n", "partial_rows"))
    meta = header.to_json(rows=rows, tasks=frame.height, partial_rows=partial)
    import pyarrow.parquet as pq  # writing a summary only: routing one reads it with polars

    table = frame.to_arrow().replace_schema_metadata({HEADER_KEY: meta})
    if os.fspath(path) == "-":  # Parquet bytes on stdout (the command refuses a terminal)
        sink = sys.stdout.buffer
        pq.write_table(table, sink)
        sink.flush()
        return Path("-")
    return atomic_write(path, lambda tmp: pq.write_table(table, tmp), force=force)


def write_summary(rows: Rows, path: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Write the summary of ``rows`` to ``path`` atomically (refusing to overwrite without
    ``force``); return the path."""
    frame = summary_frame(rows)
    return _write(frame, header_of(rows, int(frame["n"].sum())), path, force)


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


def _row_count(path: str) -> int:
    """The rows of the Parquet file at ``path``, from its footer."""
    return int(pl.scan_parquet(reader_source(path), glob=False).select(pl.len()).collect().item())


def is_summary(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a summary: a Parquet file with the header or the summary's columns.

    Reads only the Parquet footer.
    """
    if not os.path.isfile(path):
        return False
    footer = parquet_footer(path)
    if footer is None:
        return False
    if HEADER_KEY in footer.metadata:
        return True
    return set(SUMMARY_SCHEMA) <= set(footer.names)


def _problems() -> dict[str, pl.Expr]:
    """Per line of a summary, one flag per column whose count cannot come from rows."""
    model_rows = pl.col("models").list.eval(pl.element().struct.field("rows")).list.sum()
    within = {
        "passes": ("n",),
        "truncated_known": ("n",),
        "truncated": ("truncated_known",),
        "truncated_passes": ("truncated", "passes"),
        "partial_rows": ("n",),
    }
    flags = {
        "task_id": pl.col("task_id").is_null(),
        "n": (pl.col("n") < 1).fill_null(True),
    }
    for name, bounds in within.items():
        top = pl.min_horizontal(*bounds) if len(bounds) > 1 else pl.col(bounds[0])
        flags[name] = ~pl.col(name).is_between(0, top).fill_null(False)
    flags["models"] = (model_rows != pl.col("n")).fill_null(True)
    # a sum of squares is never below 0 (a line's sums may be an engine's partial ones, so
    # no bound between the two is taken)
    flags["reward_sumsq"] = (pl.col("reward_sumsq") < 0).fill_null(False)
    return flags


#: What a line whose Σ reward² no rewards give is told.
_SUMSQ_WHY = "Σ reward² is below 0: no rewards give it"


_WHY = (
    "missing or out of range (n ≥ 1, passes ≤ n, truncated ≤ truncated_known ≤ n,"
    " truncated_passes ≤ min(truncated, passes), partial_rows ≤ n)"
)


def _scan(path: str) -> pl.LazyFrame:
    """One summary's columns in :data:`SUMMARY_SCHEMA`, lazily, its counts validated by one
    streaming aggregate (the first bad line is located only when there is one)."""
    try:
        raw = pl.scan_parquet(reader_source(path), glob=False).select(list(SUMMARY_SCHEMA))
        _whole_counts(raw, path)
        lf = raw.cast(SUMMARY_SCHEMA)  # type: ignore[arg-type]
        flags = _problems()
        found = lf.select(pl.any_horizontal(*flags.values()).any()).collect(engine="streaming")
        if found.item():
            bad = (
                lf.with_row_index("__row")
                .filter(pl.any_horizontal(*flags.values()))
                .head(1)
                .select("__row", *(e.alias(k) for k, e in flags.items()))
                .collect()
                .row(0, named=True)
            )
            name = next(k for k in flags if bad[k])
            what = {"models": "rows per model do not add up to n", "reward_sumsq": _SUMSQ_WHY}.get(
                name, _WHY
            )
            raise InputError(what, file=path, row=int(bad["__row"]), field=name)
    except (pl.exceptions.PolarsError, OSError) as err:
        msg = " ".join(str(err).split())[:200]
        raise InputError(f"not a readable summary: {msg}", file=path) from None
    return lf


def _whole_counts(raw: pl.LazyFrame, path: str) -> None:
    """Refuse a count column that holds a fraction or a non-finite number (another engine
    may write counts as floats; a cast to int64 would silently truncate 2.5 to 2)."""
    schema = raw.collect_schema()
    checks: dict[str, pl.Expr] = {}
    for name in COUNT_COLUMNS:
        if schema[name].is_float():
            value = pl.col(name)
            checks[name] = value.is_not_null() & ~(value.is_finite() & (value.round(0) == value))
    inner = schema["models"]
    if isinstance(inner, pl.List) and isinstance(inner.inner, pl.Struct):
        fields = {f.name: f.dtype for f in inner.inner.fields}
        if "rows" in fields and fields["rows"].is_float():
            rows = pl.col("models").list.eval(pl.element().struct.field("rows"))
            odd = rows.list.eval(
                pl.element().is_not_null()
                & ~(pl.element().is_finite() & (pl.element().round(0) == pl.element()))
            )
            checks["models"] = odd.list.any().fill_null(False)
    for name in SUM_COLUMNS:
        if schema[name].is_float():
            checks[name] = pl.col(name).is_not_null() & ~pl.col(name).is_finite()
    if not checks:
        return
    found = raw.select(pl.any_horizontal(*checks.values()).any()).collect(engine="streaming")
    if not found.item():
        return
    bad = (
        raw.with_row_index("__row")
        .filter(pl.any_horizontal(*checks.values()))
        .head(1)
        .select("__row", *(e.alias(k) for k, e in checks.items()))
        .collect()
        .row(0, named=True)
    )
    name = next(k for k in checks if bad[k])
    what = "not a finite number" if name in SUM_COLUMNS else "a count must be a whole number"
    raise InputError(what, file=path, row=int(bad["__row"]), field=name)


def _one_line_per_task(frame: pl.DataFrame, path: str) -> None:
    """Refuse a task on two lines of a summary ``whilecli summarize`` wrote (one line per task
    by construction: a repeat is a damaged or edited file, whose counts would be read twice)."""
    if frame["task_id"].n_unique() == frame.height:
        return
    rows = frame.select(pl.col("task_id"), pl.int_range(pl.len()).alias("row"))
    again = (
        rows.filter(pl.col("task_id").is_duplicated())
        .group_by("task_id", maintain_order=True)
        .agg(pl.col("row"))
    )
    task, where = again.row(0)
    raise InputError(
        f"task {task!r} is on more than one line (rows {', '.join(map(str, where[:5]))}): a"
        " whilecli summary has one line per task; summarise the rows again",
        file=path,
        row=int(where[1]),
        field="task_id",
    )


#: Most input lines one merge step adds up. Past it, files are folded in a few at a time
#: into the running sum, so memory follows the tasks, not the lines of every file.
MERGE_STEP_LINES = 16_000_000


def _sum_lines(parts: list[pl.LazyFrame], files: Sequence[str]) -> pl.DataFrame:
    lazy = pl.concat(parts, how="vertical")
    models = (
        lazy.select("task_id", "models")
        .explode("models")
        .unnest("models")
        .select("task_id", *MODEL_FIELDS)
    )
    return _collapse(lazy.drop("models"), models, files)


def _fold(scans: list[pl.LazyFrame], lines: list[int], files: Sequence[str]) -> pl.DataFrame:
    """Add up summaries: all at once when their lines fit one step, else a few files at a
    time into the running sum (sums are associative, so the result is the same)."""
    total: pl.DataFrame | None = None
    batch: list[pl.LazyFrame] = []
    held = 0
    for scan, n in zip(scans, lines, strict=True):
        if batch and held + n > MERGE_STEP_LINES:
            total = _sum_lines([*([total.lazy()] if total is not None else []), *batch], files)
            batch, held = [], total.height
        batch.append(scan)
        held += n
    return _sum_lines([*([total.lazy()] if total is not None else []), *batch], files)


def _distinct(names: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """``names`` with the same file (a path given twice, a link beside its target) or the
    same bytes (a copy) kept once: adding a summary to itself would double its counts.
    Returns the kept names and ``(dropped, kept)`` pairs. Only files of equal size are
    hashed."""
    import hashlib

    kept: list[str] = []
    dropped: list[tuple[str, str]] = []
    by_inode: dict[tuple[int, int], str] = {}
    by_size: dict[int, list[str]] = {}
    digests: dict[str, str] = {}

    def digest(name: str) -> str:
        if name not in digests:
            digests[name] = hashlib.sha256(Path(name).read_bytes()).hexdigest()
        return digests[name]

    for name in names:
        try:
            st = os.stat(name)
        except OSError:
            kept.append(name)  # refused with its reason below
            continue
        same = by_inode.get((st.st_dev, st.st_ino))
        if same is None:
            same = next((o for o in by_size.get(st.st_size, []) if digest(o) == digest(name)), None)
        if same is not None:
            dropped.append((name, same))
            continue
        by_inode[(st.st_dev, st.st_ino)] = name
        by_size.setdefault(st.st_size, []).append(name)
        kept.append(name)
    return kept, dropped


def _keyed_apart(scans: list[pl.LazyFrame], headers: list[Header | None]) -> str | None:
    """Summaries of different evaluations (their reads' sidecars name different ones, or
    their ids meet under different prompts: :func:`whilecli.io.read.prompt_groups`), or of
    different writers (their rows name no model and their paths name different ones:
    :func:`_writers_apart`): each one's tasks keyed ``label:id`` (:meth:`Entry.label`, its
    group's first where prompts tell them apart; the model where paths do), as reading
    their files pooled keys them, so one id of two evaluations or two models is two tasks.
    A summary of several evaluations (its ids keyed so already) or of none named is left as
    it is. Returns a note where writers were keyed apart."""
    entries = [h.inputs[0] if h is not None and len(h.inputs) == 1 else None for h in headers]
    named = {e.evaluation for e in entries if e is not None and e.evaluation is not None}
    labels = [e.label() if e is not None else "" for e in entries]
    note = None
    if len(named) < 2:  # else: summaries whose ids meet under different prompts
        pairs = [list((e.prompts or {}).items()) if e is not None else [] for e in entries]
        conflict, roots = prompt_groups(pairs)
        if conflict is not None:
            labels = [labels[r] if entries[i] is not None else "" for i, r in enumerate(roots)]
        elif (writers := _writers_apart(entries)) is not None:
            labels = writers
            note = (
                "the summarised rows name no model and their paths name different ones ("
                + ", ".join(dict.fromkeys(w for w in writers if w))
                + "): each model's tasks are keyed apart, as --pool keys rows"
            )
        else:
            return None
    for i, label in enumerate(labels):
        if label:
            keyed = prefixed_id(pl.lit(label), pl.col("task_id"))
            scans[i] = scans[i].with_columns(keyed.alias("task_id"))
    return note


def _writers_apart(entries: list[Entry | None]) -> list[str] | None:
    """Each summary's writer where their rows named no model (the read recorded the model
    its path names, ``path_model``) and the paths of their rows name different models
    (:func:`whilecli.io.modelid.writers_named`), as reading the rows pooled
    refuses (:func:`whilecli.io.read.refuse_mixed_pool`); ``""`` for a summary whose paths
    name none. None where at most one model is named."""
    named: list[str | None] = []
    for entry in entries:
        fact = entry.facts.get("path_model") if entry is not None and entry.facts else None
        found: set[str | None] = set()
        if entry is not None and isinstance(fact, str):
            found = {path_model(Path(p)) for p in entry.paths} - {None} or {
                writer_named(w) for w in writers_in(fact)
            }
        named.append(found.pop() if len(found) == 1 else None)
    models, each = writers_named(named)
    return None if len(models) < 2 else [m or "" for m in each]


def load_summaries(paths: Sequence[str | os.PathLike[str]]) -> tuple[pl.DataFrame, Header]:
    """Read and add up the summaries at ``paths``, with their combined header.

    Summaries given together are added by ``task_id`` (shards may split a task), so the
    result, and a ``--merge`` of it, has one line per task, sorted by ``task_id``. Within
    one file: a summary with a whilecli header has one line per task, and a task on two
    of its lines is refused (its counts would be read twice); a header-less summary (another
    engine's) may write a task on several lines, in any order, and they are added. The files are
    scanned, not loaded: memory holds the merged table, not every file's lines.
    """
    names, dropped = _distinct([str(p) for p in paths])
    if not names:
        raise UsageError("give at least one summary")
    scans, headers = [], []
    for name in names:
        if not is_summary(name):
            raise InputError(
                "not a summary (a Parquet file written by `whilecli summarize`, or with its"
                f" columns: {', '.join(SUMMARY_SCHEMA)})",
                file=name,
            )
        headers.append(read_header(name))
        scans.append(_scan(name))
        if headers[-1] is not None and len(names) > 1:
            _one_line_per_task(_collect(scans[-1].select("task_id"), [name]), name)
    apart = _keyed_apart(scans, headers)
    header = merge_headers(names, headers)
    if apart is not None and header.inputs:
        header.inputs[0].notes.append(apart)
    if dropped and header.inputs:
        header.inputs[0].notes.append(
            "read once: "
            + "; ".join(f"{extra} is the same summary as {kept}" for extra, kept in dropped)
        )
    if len(scans) == 1 and headers[0] is not None:
        # one line per task, sorted: as `whilecli summarize` writes
        frame = _collect(scans[0], names)
        _one_line_per_task(frame, names[0])
    else:
        frame = _fold(scans, [_row_count(n) for n in names], names)
    if frame.height == 0:
        raise InputError("no rows: the summary is empty", file=", ".join(names))
    return frame, header


def pool_from_summary(
    paths: Sequence[str | os.PathLike[str]],
    *,
    pass_threshold: float | None = None,
    missing: str = "skip",
) -> Pool:
    """The :class:`Pool` the route would build from the rows behind the summaries at ``paths``.

    ``source`` is a :class:`Rows` with an empty frame carrying the header's format, sources,
    threshold and notes, so the report prints what it prints for the rows. ``pass_threshold``
    (``--pass-threshold``) must match the header's; it sets the threshold of a header-less
    summary. ``missing`` (``--missing``): ``fail`` is refused for summaries made with
    ``skip`` (their counts left ungraded rows out); the summaries' own rule is what they
    count, and the report's facts say it.
    """
    names = [str(p) for p in paths]
    frame, header = load_summaries(names)
    threshold = header.pass_threshold
    if pass_threshold is not None and threshold is not None and pass_threshold != threshold:
        raise UsageError(
            f"--pass-threshold {pass_threshold:g}: the summaries were made at {threshold:g};"
            " summarise the rows again to change it"
        )
    made = {str(e.facts.get("missing")) for e in header.inputs if e.facts and "missing" in e.facts}
    if missing == "fail" and made and made != {"fail"}:
        # ungraded rows were left out of the counts: a summary cannot fail them afterwards
        raise UsageError(
            "--missing fail: the summaries were made with --missing skip (ungraded rows left"
            " out of their counts); summarise the rows again with --missing fail"
        )
    explicit = header.threshold_explicit or (threshold is None and pass_threshold is not None)
    if threshold is None:
        threshold = 1.0 if pass_threshold is None else float(pass_threshold)
    _, fmt, sources, notes = combine(header.inputs, threshold)
    rows = int(frame["n"].sum()) if frame.height else 0
    partial = int(frame["partial_rows"].sum()) if frame.height else 0
    if partial:
        notes.append(partial_note(partial, rows, threshold))
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
        judge=_judged(header, rows),
        facts=facts_of(header.inputs),
        reward_range=reward_range_of(header.inputs),
    )
    writers = frame.select("models").explode("models").unnest("models")
    pool = Pool(
        tasks=frame.select("task_id", *TASK_COLUMNS),
        rows=rows,
        models=_counts(writers.group_by("model").agg(pl.col("rows").sum()), "model"),
        versions=_counts(
            writers.group_by("policy_version").agg(pl.col("rows").sum()), "policy_version"
        ),
        source=source,
        credit=frame.select("task_id", pl.col("partial_rows").alias(CREDIT_FAILS)),
    )
    models = several_writers(pool)
    cells = frame.select("task_id", "models").explode("models").unnest("models")
    if models is not None and cells["passes"].null_count() == 0:  # else: not kept, unknown
        cells = cells.rename({"rows": "n"})
        pool.split_across = across_writers(cells.lazy(), names, models, list(pool.versions))
    return pool


def _judged(header: Header, rows: int) -> JudgeScan | None:
    """Who graded the rows behind the summaries, as each recorded it (None: one did not)."""
    if not header.inputs or any(e.judged is None for e in header.inputs):
        return None
    judged = sum(int(e.judged or 0) for e in header.inputs)
    return JudgeScan(rows=rows, judged=judged, by_kind={"summary": judged})
