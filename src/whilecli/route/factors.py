"""A condition each task's draws were made under in equal parts (a column of
:mod:`whilecli.io.factors`: a checkpoint, a sampler, a temperature, a template) whose values
pass at different rates within the same tasks.

A group-relative advantage compares one policy's draws of one prompt. Where a harness draws
every task under each value of such a column, a task whose values pass at different rates
splits across them, and the split share, k and every rate describe a mixture of conditions,
not the policy you train. Draws made under one condition are exchangeable within a task, so
the test conditions on the task: per value, its passes against the passes its rows would
hold if every row of the task were alike, the Cochran-Mantel-Haenszel statistic of the value
against the rest, stratified by task (Mantel and Haenszel 1959, JNCI 22:719):

    E_v = sum_t n_tv * x_t / n_t
    V_v = sum_t n_tv * (n_t - n_tv) * x_t * (n_t - x_t) / (n_t^2 * (n_t - 1))
    z_v = (O_v - E_v) / sqrt(V_v)

over the tasks of two rows or more (``n_t`` rows, ``x_t`` passes, ``n_tv`` rows and ``O_v``
passes under value ``v``). A column is read as a condition only where the tasks hold its
values in one layout (the same rows under each value, or some of them where a harness
dropped rows: two values or more, none past the layout, half its rows or more) on most
grouped tasks, those whose rows all agree and those that split alike: a harness's loop, not
an outcome of the reply, whose values fall as the replies do. It moves the verdict only
where its chance under exchangeable draws, two-sided, Bonferroni over its values and the
columns weighed, is at most :data:`CHANCE`, and two values' rates differ by :data:`MIN_GAP`
or more.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import polars as pl

from whilecli.io.factors import MAX_LEVELS

__all__ = ["CHANCE", "Crossed", "crossed"]

#: The chance under exchangeable draws at or under which a condition moves the verdict. It
#: only ever leaves a verdict provisional, and is weighed only on the few columns the reader
#: carries, so it is looser than the even-count rule's 1e-6: two checkpoints a logit apart
#: on 200 tasks of one draw each read at about z = 4.4 at the least.
CHANCE = 1e-4
#: The least difference between two values' pass rates that moves the verdict.
MIN_GAP = 0.05
#: The share of grouped tasks that must hold the column's values in one layout.
LAYOUT_SHARE = 0.75


@dataclass(frozen=True)
class Crossed:
    """A column whose values each task's draws were made under, and how they pass."""

    column: str
    #: Each value with its counted rows and pass rate over the weighed tasks, most rows first.
    values: tuple[tuple[str, int, float], ...]
    tasks: int  # tasks of two counted rows or more, weighed
    layout: int  # grouped tasks holding the most common layout, or part of it (rows dropped)
    grouped: int  # tasks of two rows or more
    z: float  # the largest |z_v|
    chance: float  # two-sided, Bonferroni over values and columns

    @property
    def gap(self) -> float:
        rates = [rate for _, _, rate in self.values]
        return max(rates) - min(rates)

    @property
    def moves(self) -> bool:
        return self.chance <= CHANCE and self.gap >= MIN_GAP


def crossed(column: str, cells: pl.DataFrame, columns: int = 1) -> Crossed | None:
    """The column's reading from its cells (``task_id``, ``value``, ``all``: rows read,
    ``rows``: rows counted, ``passes``), ``columns`` columns weighed in all; None where it
    takes one value or more than :data:`~whilecli.io.factors.MAX_LEVELS`, or its values do
    not stand in one layout on :data:`LAYOUT_SHARE` of the grouped tasks."""
    values = sorted(cells["value"].unique().to_list())
    if not 2 <= len(values) <= MAX_LEVELS:
        return None
    names = [f"v{i}" for i in range(len(values))]  # a value may spell any column's name
    named = cells.with_columns(pl.col("value").replace_strict(values, names).alias("at"))
    counts = named.pivot(on="at", index="task_id", values="all").fill_null(0)
    counts = counts.with_columns(pl.lit(0, pl.Int64).alias(v) for v in names if v not in counts)
    layout = pl.concat_str([pl.col(v).cast(pl.String) for v in names], separator=",")
    per_task = cells.group_by("task_id").agg(
        pl.col("rows").sum().alias("n_t"), pl.col("passes").sum().alias("x_t")
    )
    unanimous = (pl.col("x_t") == 0) | (pl.col("x_t") == pl.col("n_t"))
    shown = (
        counts.join(per_task, on="task_id")
        .select(
            *names,
            layout.alias("layout"),
            pl.sum_horizontal(names).alias("n"),
            pl.sum_horizontal((pl.col(v) > 0).cast(pl.Int64) for v in names).alias("held"),
            unanimous.alias("unanimous"),
        )
        .filter(pl.col("n") >= 2)
    )
    grouped = shown.height
    common = shown.filter(pl.col("held") >= 2)["layout"].value_counts(sort=True)
    if grouped == 0 or common.height == 0:
        return None
    layouts = [
        ([int(c) for c in str(shape).split(",")], int(count)) for shape, count in common.iter_rows()
    ]
    top, most_held = layouts[0]
    # the harness's layout: the most common one, or a fuller one nearly as common (a few
    # rows dropped from every task make a layout short of one row the most common)
    for shape, count in layouts[1:]:
        fuller = all(a >= b for a, b in zip(shape, top, strict=True))
        if fuller and 2 * count >= most_held:
            top = shape
    # a task holds the layout where its rows are that layout's, or some of them (a harness
    # that dropped a failed request's row): two values or more, none over the layout's
    # count, at least half its rows
    fits = (
        pl.all_horizontal(pl.col(v) <= c for v, c in zip(names, top, strict=True))
        & (pl.col("held") >= 2)
        & (2 * pl.col("n") >= sum(top))
    )
    shown = shown.with_columns(fits.alias("fits"))
    most = int(shown["fits"].sum())
    # a condition is laid out before the draw: as often on the tasks that split as on those
    # whose rows all agree (a column that follows the grades lays out as the passes fall)
    for side in shown.partition_by("unanimous"):
        if side["fits"].sum() < LAYOUT_SHARE * side.height:
            return None
    n, x, m = pl.col("n_t"), pl.col("x_t"), pl.col("rows")
    weighed = cells.join(per_task, on="task_id").filter((n >= 2) & (m > 0))
    if weighed.height == 0:
        return None
    per_value = (
        weighed.group_by("value")
        .agg(
            pl.col("rows").sum().alias("N"),
            pl.col("passes").sum().alias("O"),
            (m * x / n).sum().alias("E"),
            (m * (n - m) * x * (n - x) / (n * n * (n - 1))).sum().alias("V"),
        )
        .sort("N", "value", descending=[True, False])
    )
    z = 0.0
    for row in per_value.iter_rows(named=True):
        if row["V"] > 0:
            z = max(z, abs(row["O"] - row["E"]) / math.sqrt(row["V"]))
    chance = min(1.0, math.erfc(z / math.sqrt(2)) * per_value.height * columns)
    return Crossed(
        column=column,
        values=tuple(
            (str(r["value"]), int(r["N"]), r["O"] / r["N"]) for r in per_value.iter_rows(named=True)
        ),
        tasks=weighed["task_id"].n_unique(),
        layout=most,
        grouped=grouped,
        z=z,
        chance=chance,
    )
