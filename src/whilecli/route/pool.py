"""Per-task sufficient statistics of the rows: one lazy group-by over the canonical frame."""

from __future__ import annotations

import polars as pl

from whilecli.route.model import Pool, Rows

#: Integer columns of :attr:`Pool.tasks`, after ``task_id``.
TASK_COLUMNS = ("n", "passes", "truncated", "truncated_known", "truncated_passes")


def task_aggregates() -> list[pl.Expr]:
    """The per-task aggregations: rows, passes, and what is known of truncation.

    ``truncated`` is null where the input records nothing: ``sum`` skips nulls, so
    ``truncated`` counts rows known truncated, ``truncated_known`` rows with a record, and
    ``truncated_passes`` rows known truncated that passed (null ∧ x is null or false, never
    true, under Kleene logic).
    """
    passed = pl.col("passed").fill_null(False)
    return [
        pl.len().cast(pl.Int64).alias("n"),
        passed.sum().cast(pl.Int64).alias("passes"),
        pl.col("truncated").sum().cast(pl.Int64).alias("truncated"),
        pl.col("truncated").count().cast(pl.Int64).alias("truncated_known"),
        (pl.col("truncated") & passed).sum().cast(pl.Int64).alias("truncated_passes"),
    ]


def _counts(frame: pl.DataFrame, column: str) -> dict[str | None, int]:
    """``{value: rows}`` sorted by value, None (rows that name nothing) last."""
    pairs = {row[0]: int(row[1]) for row in frame.iter_rows()}
    named = sorted(k for k in pairs if k is not None)
    out: dict[str | None, int] = {k: pairs[k] for k in named}
    if None in pairs:
        out[None] = pairs[None]
    return out


def summarize(rows: Rows) -> Pool:
    """Collapse graded rows to one line per task plus the writer-model and version counts.

    One scan of the lazy frame feeds three group-bys (``collect_all`` shares the scan); the
    per-task frame is sorted by ``task_id`` so every later stage sees the same order.
    """
    frame = rows.frame
    per_task = frame.group_by("task_id").agg(task_aggregates()).sort("task_id")
    models = frame.group_by("model").agg(pl.len().alias("rows"))
    versions = frame.group_by("policy_version").agg(pl.len().alias("rows"))
    tasks, model_counts, version_counts = pl.collect_all([per_task, models, versions])
    return Pool(
        tasks=tasks,
        rows=int(tasks["n"].sum()) if tasks.height else 0,
        models=_counts(model_counts, "model"),
        versions=_counts(version_counts, "policy_version"),
        source=rows,
    )
