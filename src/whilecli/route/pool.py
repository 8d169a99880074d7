"""Per-task sufficient statistics of the rows: streaming group-bys over the canonical frame.

Every column is a count, so counts add across any split of the rows. The rows are grouped
by task on the streaming engine (memory follows the number of tasks, never of rows), and
tables of several reads are added (:class:`Counts`). ``read_rows`` runs the per-task
group-by in the same streaming pass as its validation when handed a :class:`Counts`
(``aggregate=``), and counts the rows per writer (model, policy version) itself;
``summarize`` groups the frame itself only for rows that do not carry them.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from whilecli.errors import InputError
from whilecli.io import attempts
from whilecli.io.facts import EMPTY, ERROR, REQUEST
from whilecli.io.modelid import match_key
from whilecli.io.read import POLARS_FAILURES
from whilecli.io.rows import AT
from whilecli.io.versions import version_id
from whilecli.route.model import Pool, Rows

#: Integer columns of :attr:`Pool.tasks`, after ``task_id``.
TASK_COLUMNS = ("n", "passes", "truncated", "truncated_known", "truncated_passes")
WRITER = ["model", "policy_version"]
#: Per task, the smallest position of a row (:data:`whilecli.io.rows.AT`) is kept as
#: ``first_at``, for ``--show`` (:mod:`whilecli.route.drill`).
FIRST = "first_at"
#: Per task, the smallest position of a row that was truncated and passed (null: none), so
#: ``--show truncated-passes`` points at the cut-off reply itself.
FIRST_TRUNCATED_PASS = "first_truncated_pass_at"
#: The position columns of :attr:`Pool.tasks`: merged by ``min``, never summed.
POSITIONS = (FIRST, FIRST_TRUNCATED_PASS)
#: Per task, the rows left out of every rate that could be the model's failures (harness
#: errors but requests failed at the API, and ungraded rows under ``--missing skip``) and,
#: of them, the ungraded rows: counted in the read's own pass, so
#: the route can tell what counting them would do (:func:`counted_as`). Summed on merge;
#: moved off :attr:`Pool.tasks` onto :attr:`Pool.left_out` by :func:`summarize`.
LEFT_OUT = "left_out"
LEFT_UNGRADED = "left_ungraded"
#: Per task, the counted rows whose reply is empty (no text generated) and that fail: the
#: model's replies as read, a harness's dropped ones as often (:func:`without_empties`).
#: Kept beside :data:`LEFT_OUT`, on :attr:`Pool.left_out`.
EMPTY_FAILS = "empty_fails"
#: Per task, the counted rows that earned partial credit (a reward strictly between 0 and 1,
#: as a summary's ``partial_rows`` counts them): failures at a pass threshold of 1 by the
#: threshold alone, their rewards unlike a zero's (:func:`credited`). Moved off
#: :attr:`Pool.tasks` onto :attr:`Pool.credit`.
CREDIT_FAILS = "credit_fails"
LEFT_COLUMNS = (LEFT_OUT, LEFT_UNGRADED, EMPTY_FAILS, CREDIT_FAILS)
#: Rows of per-piece tables held before they are added into the running total.
PENDING_ROWS = 4_000_000


def task_aggregates(kept: pl.Expr | None = None) -> list[pl.Expr]:
    """The per-task aggregations: rows, passes, and what is known of truncation, over the
    rows ``kept`` selects (all of them when None).

    ``truncated`` is null where the input records nothing: ``sum`` skips nulls, so
    ``truncated`` counts rows known truncated, ``truncated_known`` rows with a record, and
    ``truncated_passes`` rows known truncated that passed (null ∧ x is null or false, never
    true, under Kleene logic).
    """
    keep = pl.lit(True) if kept is None else kept
    passed = pl.col("passed").fill_null(False) & keep
    truncated = pl.when(keep).then(pl.col("truncated"))
    return [
        (pl.len() if kept is None else keep.sum()).cast(pl.Int64).alias("n"),
        passed.sum().cast(pl.Int64).alias("passes"),
        truncated.sum().cast(pl.Int64).alias("truncated"),
        truncated.count().cast(pl.Int64).alias("truncated_known"),
        (truncated & passed).sum().cast(pl.Int64).alias("truncated_passes"),
    ]


def left_out_aggregates(kept: pl.Expr | None = None) -> list[pl.Expr]:
    """Per task, the rows ``kept`` leaves out that could be the model's failures
    (:data:`LEFT_OUT`: every one but a request failed at the API, :data:`whilecli.io.facts.
    REQUEST`) and, of them, the rows that are not harness errors (:data:`LEFT_UNGRADED`:
    ungraded under ``--missing skip``), and the counted rows whose reply is empty and fails
    (:data:`EMPTY_FAILS`), and those that earned partial credit (:data:`CREDIT_FAILS`); 0
    where every row is kept (``kept`` None: a frame of counts, no replies)."""
    if kept is None:
        zero = pl.lit(0, dtype=pl.Int64)
        return [zero.alias(c) for c in LEFT_COLUMNS]
    out = ~kept
    failed = pl.col(REQUEST).fill_null(False)  # the API's failure: no failure of the model's
    # an earlier attempt of a draw a retry replaced: the harness's, no failure of the model's
    failed = failed | pl.col(attempts.CODE).fill_null(0).is_in(list(attempts.LEFT_OUT_CODES))
    empty_fail = kept & (pl.col("reply") == EMPTY) & ~pl.col("passed").fill_null(False)
    reward = pl.col("reward")
    credit_fail = kept & ((reward > 0) & (reward < 1)).fill_null(False)
    return [
        (out & ~failed).sum().cast(pl.Int64).alias(LEFT_OUT),
        (out & (pl.col("reply") != ERROR)).sum().cast(pl.Int64).alias(LEFT_UNGRADED),
        empty_fail.sum().cast(pl.Int64).alias(EMPTY_FAILS),
        credit_fail.sum().cast(pl.Int64).alias(CREDIT_FAILS),
    ]


def located_aggregates(kept: pl.Expr | None = None, located: bool = True) -> list[pl.Expr]:
    """:func:`task_aggregates`, the rows left out (:func:`left_out_aggregates`) and each
    task's first position (:data:`AT`) as ``first_at`` and first truncated pass, over the
    rows ``kept`` selects; null without positions."""
    none = pl.lit(None, dtype=pl.Int64)
    keep = pl.lit(True) if kept is None else kept
    cut_pass = pl.col("truncated").fill_null(False) & pl.col("passed").fill_null(False) & keep
    first = pl.when(keep).then(pl.col(AT)).min() if located else none
    first_cut_pass = pl.when(cut_pass).then(pl.col(AT)).min() if located else none
    return [
        *task_aggregates(kept),
        *left_out_aggregates(kept),
        first.cast(pl.Int64).alias(FIRST),
        first_cut_pass.cast(pl.Int64).alias(FIRST_TRUNCATED_PASS),
    ]


def count_queries(frame: pl.LazyFrame) -> list[pl.LazyFrame]:
    """[per-task counts, rows per (model, policy_version)] of a frame with the columns
    ``task_id``, ``passed``, ``truncated``, ``model``, ``policy_version``; a frame that also
    carries the rows' positions (:data:`AT`) adds each task's first one as ``first_at``, a
    frame without them a null ``first_at``."""
    located = AT in frame.collect_schema().names()
    return [
        frame.group_by("task_id").agg(located_aggregates(located=located)),
        frame.group_by(WRITER).agg(pl.len().cast(pl.Int64).alias("rows")),
    ]


def _counts(frame: pl.DataFrame, column: str) -> dict[str | None, int]:
    """``{value: rows}`` sorted by value, None (rows that name nothing) last."""
    pairs = {row[0]: int(row[1]) for row in frame.iter_rows()}
    named = sorted(k for k in pairs if k is not None)
    out: dict[str | None, int] = {k: pairs[k] for k in named}
    if None in pairs:
        out[None] = pairs[None]
    return out


def add_counts(
    tables: Sequence[pl.DataFrame], key: str | list[str], *, sort: bool = False
) -> pl.DataFrame:
    """Tables of counts keyed by ``key`` added into one (a key absent from a table adds 0;
    null keys form a group of their own), sorted by ``key`` when asked. A position column
    (``first_at``) is not a count: the smallest one is kept."""
    tables = [t for t in tables if t.height] or list(tables[:1])
    if len(tables) == 1 and not sort:
        return tables[0]
    merged = tables[0].lazy()
    if len(tables) > 1:
        keys = [key] if isinstance(key, str) else key
        columns = [c for c in tables[0].columns if c not in keys]
        merged = (
            pl.concat(tables)
            .lazy()
            .group_by(key)
            .agg(pl.col(c).min() if c in POSITIONS else pl.col(c).sum() for c in columns)
        )
    if sort:
        merged = merged.sort(key, nulls_last=True)
    return merged.collect(engine="streaming")


class _Adder:
    """A running sum of count tables, merged once the pending ones outgrow it."""

    def __init__(self, key: str | list[str], empty: pl.DataFrame) -> None:
        self.key = key
        self.total = empty
        self.pending: list[pl.DataFrame] = []
        self.pending_rows = 0

    def add(self, table: pl.DataFrame) -> None:
        self.pending.append(table)
        self.pending_rows += table.height
        if self.pending_rows > max(PENDING_ROWS, self.total.height):
            self.total = self.result()
            self.pending, self.pending_rows = [], 0

    def result(self, sort: bool = False) -> pl.DataFrame:
        return add_counts([self.total, *self.pending], self.key, sort=sort)


class Counts:
    """The per-task and per-writer counts of the pieces added so far; each task's first
    positions (:data:`POSITIONS`) only when ``located`` (what ``--show`` lists: two minimums
    per task cost a sixth of a large route's reading)."""

    def __init__(self, located: bool = True) -> None:
        self.located = located
        columns = (*TASK_COLUMNS, *LEFT_COLUMNS, *POSITIONS)
        tasks = {"task_id": pl.String(), **{c: pl.Int64() for c in columns}}
        writers = {"model": pl.String(), "policy_version": pl.String(), "rows": pl.Int64()}
        self.tasks = _Adder("task_id", pl.DataFrame(schema=tasks))
        self.writers = _Adder(WRITER, pl.DataFrame(schema=writers))

    def task_aggregations(self, kept: pl.Expr) -> list[pl.Expr]:
        """The per-task counts over the rows ``kept`` selects: what reading runs in its own
        group-by when handed these counts (``read_rows(..., aggregate=Counts())``), which
        counts the writers itself."""
        return located_aggregates(kept, located=self.located)

    def add(self, tables: Sequence[pl.DataFrame]) -> None:
        """Add collected :func:`count_queries`: the per-task counts, and the rows per writer
        when given."""
        self.tasks.add(tables[0])
        if len(tables) > 1:
            self.writers.add(tables[1])

    def result(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """(per-task table, rows per writer), in no particular order: every statistic is a sum
        over tasks, and what lists tasks (``--show``, paired tasks, summaries) sorts them."""
        return self.tasks.result(), self.writers.result()


def collect_counts(queries: list[pl.LazyFrame], paths: Sequence[str]) -> list[pl.DataFrame]:
    """Collect queries on the streaming engine; a failure is an :class:`InputError`."""
    try:
        return pl.collect_all(queries, engine="streaming")
    except POLARS_FAILURES as err:
        what = " ".join(str(err).split())[:200]
        raise InputError(f"cannot read: {what}", file=", ".join(paths)) from None


def summarize(rows: Rows) -> Pool:
    """Collapse graded rows to one line per task plus the writer-model and version counts.

    Uses the counts ``read_rows`` gathered while validating when they belong to this very
    frame; else groups the frame. The per-task frame is in no particular order (sorting a
    million task ids would cost more than the route's statistics, none of which depend on it).
    """
    counted = getattr(rows, "aggregate", None)
    writer_rows = getattr(rows, "writer_rows", None)
    same = getattr(rows, "counted_frame", None) is rows.frame
    cells = getattr(rows, "writer_cells", None) if same else None
    if isinstance(counted, Counts) and writer_rows is not None and same:
        tasks, _ = counted.result()
        writers = writer_rows
    else:
        counts = Counts()
        counts.add(collect_counts(count_queries(rows.frame), rows.paths))
        tasks, writers = counts.result()
    if FIRST in tasks.columns and tasks[FIRST].null_count() == tasks.height:
        tasks = tasks.drop(*POSITIONS)  # rows that carry no positions: the counts alone
    tasks, left_out = _left_out(tasks)
    credit = None
    if left_out is not None:
        credit = left_out.select("task_id", CREDIT_FAILS).filter(pl.col(CREDIT_FAILS) > 0)
        left_out = left_out.drop(CREDIT_FAILS)
    models = writers.group_by("model").agg(pl.col("rows").sum())
    versions = writers.group_by("policy_version").agg(pl.col("rows").sum())
    pool = Pool(
        tasks=tasks,
        rows=int(tasks["n"].sum()) if tasks.height else 0,
        models=_counts(models, "model"),
        versions=_counts(versions, "policy_version"),
        source=rows,
        left_out=left_out,
        credit=credit,
    )
    models = several_writers(pool)
    if models is not None and cells is not None:  # counted in the read's own pass
        pool.split_across = across_writers(
            cells.lazy().rename({"rows": "n"}), rows.paths, models, list(pool.versions)
        )
    elif models is not None:
        pool.split_across = split_across_writers(
            rows.frame, rows.paths, models, list(pool.versions)
        )
    return pool


def _left_out(tasks: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """The tasks with a counted row, and per task the rows left out of every rate
    (``task_id`` and :data:`LEFT_COLUMNS`, tasks with such rows only, those with no counted
    row among them); None where the table does not count them."""
    if LEFT_OUT not in tasks.columns:
        return tasks, None
    some = pl.any_horizontal(pl.col(c) > 0 for c in (LEFT_OUT, EMPTY_FAILS, CREDIT_FAILS))
    left = tasks.filter(some).select("task_id", *LEFT_COLUMNS)
    return tasks.filter(pl.col("n") > 0).drop(*LEFT_COLUMNS), left


def without_empties(pool: Pool) -> Pool | None:
    """The pool without its counted empty replies that fail (:data:`EMPTY_FAILS`): what the
    rows say if the harness dropped those replies rather than the model writing nothing, as
    :func:`counted_as` tells what the rows left out would say counted. A task whose every
    counted row was one is gone. Where the counts do not say which tasks hold them (a
    summary keeps only the number of empty replies), each is taken for a failure and they
    are taken from the tasks they would move most, as :func:`counted_as` spreads the rows
    left out: every failure of the tasks with the fewest failures first, so each such task
    stops splitting. None where no such row is counted."""
    tasks = pool.tasks.select("task_id", *TASK_COLUMNS)
    if pool.left_out is not None and EMPTY_FAILS in pool.left_out.columns:
        drop = pool.left_out.select("task_id", pl.col(EMPTY_FAILS).alias("drop"))
    elif pool.left_out is None and (empty := pool.source.facts.empty):
        fails = (pl.col("n") - pl.col("passes")).alias("fails")
        order = tasks.select("task_id", fails).filter(pl.col("fails") > 0)
        order = order.sort("fails", "task_id")
        before = pl.col("fails").cum_sum() - pl.col("fails")
        taken = pl.min_horizontal(pl.col("fails"), (empty - before).clip(lower_bound=0))
        drop = order.select("task_id", taken.alias("drop"))
    else:
        return None
    drop = drop.filter(pl.col("drop") > 0)
    if drop.height == 0:
        return None
    tasks = tasks.join(drop, on="task_id", how="left")
    n = pl.col("n") - pl.col("drop").fill_null(0)
    kept = (
        tasks.with_columns(n.alias("n"))
        .with_columns(pl.min_horizontal(c, "n").alias(c) for c in ("truncated", "truncated_known"))
        .drop("drop")
        .filter(pl.col("n") > 0)
    )
    return _with_tasks(pool, kept)


def credited(pool: Pool) -> Pool | None:
    """The pool with its counted rows that earned partial credit (:data:`CREDIT_FAILS`)
    counted as passes, where the pass threshold is 1 (or above), at which each fails: what
    the rows say if the pass line ran under their credit (a length penalty on a correct
    reply, a judge's 0.97), as :func:`without_empties` tells for empty replies. None where
    no such row is counted, the threshold lies under 1 (it says what passes), or the counts
    do not say which tasks hold them."""
    if pool.credit is None or pool.source.pass_threshold < 1.0 - 1e-9:
        return None
    add = pool.credit.select("task_id", pl.col(CREDIT_FAILS).alias("add"))
    add = add.filter(pl.col("add") > 0)
    if add.height == 0:
        return None
    tasks = pool.tasks.select("task_id", *TASK_COLUMNS).join(add, on="task_id", how="left")
    passes = pl.min_horizontal(pl.col("n"), pl.col("passes") + pl.col("add").fill_null(0))
    return _with_tasks(pool, tasks.with_columns(passes.alias("passes")).drop("add"))


def _with_tasks(pool: Pool, tasks: pl.DataFrame) -> Pool:
    """``pool`` with other per-task counts (its rows their sum): what the rows would say
    counted another way (:func:`without_empties`, :func:`counted_as`)."""
    return Pool(
        tasks=tasks,
        rows=int(tasks["n"].sum()),
        models=pool.models,
        versions=pool.versions,
        source=pool.source,
        split_across=pool.split_across,
    )


def counted_as(pool: Pool, passes: bool = False) -> Pool | None:
    """The pool with the rows it leaves out counted: as failures (every left-out row, harness
    errors and ungraded rows alike, but requests that failed at the API: a rate limit is no
    failure of the model's), or with ``passes`` as passes (the ungraded rows only: an error
    is no reply to pass). Each task holds its own left-out rows, a task whose every
    row was left out among them; where the counts do not say which tasks hold them (a
    summary keeps only their number), they are spread one per task over the tasks they
    would move most: failures over the tasks that pass most, passes over those that pass
    least. None where no row would be counted."""
    facts = pool.source.facts
    ungraded = facts.left_ungraded
    rows = ungraded if passes else ungraded + facts.errors - facts.request_errors
    column = LEFT_UNGRADED if passes else LEFT_OUT
    tasks = pool.tasks.select("task_id", *TASK_COLUMNS)
    if pool.left_out is not None:
        left = pool.left_out.select("task_id", pl.col(column).alias("add"))
    elif rows and tasks.height:
        rate = (pl.col("passes") / pl.col("n")).alias("rate")
        order = tasks.with_columns(rate).sort("rate", "task_id", descending=not passes)
        even, extra = divmod(rows, tasks.height)
        add = even + (pl.int_range(pl.len()) < extra).cast(pl.Int64)
        left = order.select("task_id", add.alias("add"))
    else:
        return None
    left = left.filter(pl.col("add") > 0)
    if left.height == 0:
        return None
    joined = tasks.join(left, on="task_id", how="full", coalesce=True).with_columns(
        pl.col(c).fill_null(0) for c in (*TASK_COLUMNS, "add")
    )
    moved = joined.with_columns(
        n=pl.col("n") + pl.col("add"),
        passes=pl.col("passes") + (pl.col("add") if passes else 0),
    ).drop("add")
    return _with_tasks(pool, moved)


def split_across_writers(
    frame: pl.LazyFrame,
    paths: Sequence[str],
    models: Sequence[str] = (),
    versions: Sequence[str | None] = (),
) -> pl.Series:
    """The tasks whose rows split only across writers: rows of two or more (model, policy
    version) pairs, passes and fails both, and no pair's rows of the task holding both. A
    group-relative advantage compares one policy's draws of a prompt (an async sampler
    draws a group with one copy of the policy), so such a task gives no group that splits:
    one copy passing where another fails is no gradient (DESIGN section 2, check 3). A query
    of its own over the rows, for rows whose read did not count them per writer
    (:attr:`whilecli.io.read.StreamedRows.writer_cells`); ``models``, the names the rows
    write, each read as its model (one model in two spellings is one); ``versions``, the
    policy versions they write, each read as its version (``step_100`` and ``100`` are one,
    :func:`whilecli.io.versions.version_id`)."""
    cells = frame.group_by("task_id", *WRITER).agg(
        pl.len().cast(pl.Int64).alias("n"),
        pl.col("passed").fill_null(False).sum().cast(pl.Int64).alias("passes"),
    )
    return across_writers(cells, paths, models, versions)


def across_writers(
    cells: pl.LazyFrame,
    paths: Sequence[str],
    models: Sequence[str] = (),
    versions: Sequence[str | None] = (),
) -> pl.Series:
    """:func:`split_across_writers` from rows and passes per (task, model, policy version):
    the columns ``task_id``, ``model``, ``policy_version``, ``n``, ``passes``. A task splits
    only across writers where no writer's rows of it split, and one writer's two rows or more
    all pass while another's two or more all fail."""
    keys = {m: match_key(m) for m in models}
    ids = {v: version_id(v) for v in versions if v is not None}
    cells = (
        cells.with_columns(pl.col("model").replace(keys), pl.col("policy_version").replace(ids))
        .group_by("task_id", *WRITER)
        .agg(pl.col("n").sum(), pl.col("passes").sum())
    )
    inner = (pl.col("passes") > 0) & (pl.col("passes") < pl.col("n"))
    # a writer's cell is unanimous evidence only from two rows: one draw per version (an
    # async run whose every draw has its own weights) says nothing of a group's split
    grouped = pl.col("n") >= 2
    per_task = cells.group_by("task_id").agg(
        pl.len().alias("writers"),
        pl.col("n").sum(),
        pl.col("passes").sum(),
        inner.any().alias("inner"),
        (grouped & (pl.col("passes") == pl.col("n"))).any().alias("all_pass"),
        (grouped & (pl.col("passes") == 0)).any().alias("all_fail"),
    )
    across = per_task.filter(
        (pl.col("writers") >= 2)
        & (pl.col("passes") > 0)
        & (pl.col("passes") < pl.col("n"))
        & ~pl.col("inner")
        & pl.col("all_pass")
        & pl.col("all_fail")
    ).select("task_id")
    (table,) = collect_counts([across], paths)
    return table["task_id"]


def several_writers(pool: Pool) -> list[str] | None:
    """The model names the pool's rows write where they name two or more models or policy
    versions (whose tasks may split only across them, :func:`split_across_writers`); None
    where they name one writer."""
    named_models = sorted(m for m in pool.models if m is not None)
    named_versions = {version_id(v) for v in pool.versions if v is not None}
    if len({match_key(m) for m in named_models}) > 1 or len(named_versions) > 1:
        return named_models
    return None
