"""Draws a harness tried more than once (DESIGN section 1, "what a row means"): a failed
attempt and its retry both written, under the same task and the same sample index.

Where the rows name each draw's sample index (:data:`~whilecli.io.aliases.SAMPLE_INDEX_NAMES`:
``sample_idx``) and say which attempt a row is (:data:`~whilecli.io.aliases.ATTEMPT_NAMES`:
``attempt``, ``retry_count``, ``is_retry``, ``retry_of``), the last attempt of each (task,
sample index) is the draw; the earlier ones are the harness's, left out of every rate and
counted (:data:`EARLIER`). An attempt at a value that, wherever a draw was retried, marks
only the attempt a retry replaced, standing alone while most lone rows hold a final
attempt's value, is an attempt whose retry is missing (:data:`LOST`): left out too, and
counted apart (the draw it stood for is not in the rows). Where a (task, sample index)
pair repeats with no attempt column to order it, each row still counts as a draw, and the
rows that repeat another row's pair are counted (:data:`AGAIN`): which of them is the draw
the rows cannot say.

Each row carries one code (:data:`CODE`, in the narrow frame); the reader reads the rows of
:data:`LEFT_OUT_CODES` as left out (:mod:`whilecli.io.read`) and
:func:`whilecli.io.facts.row_aggregates` counts each code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import polars as pl

from whilecli.io.aliases import ATTEMPT_NAMES, RETRY_OF_NAMES, SAMPLE_INDEX_NAMES

if TYPE_CHECKING:
    from whilecli.io.shape import Shape

#: A reader of the value at a dotted path.
Reader = Callable[[str], pl.Expr]

__all__ = [
    "AGAIN",
    "CODE",
    "EARLIER",
    "LEFT_OUT_CODES",
    "LOST",
    "Attempts",
    "aggregates",
    "coded",
    "columns",
    "found",
]

#: The narrow frame's column holding each row's code (0: a draw as it stands).
CODE = "__attempt"
#: An earlier attempt of a (task, sample index) a later attempt of which the rows hold.
EARLIER = 1
#: A row whose (task, sample index) another row holds too, no attempt column ordering them.
AGAIN = 2
#: An attempt whose retry is missing (see the module's text).
LOST = 3
#: The codes of rows no rate counts.
LEFT_OUT_CODES = (EARLIER, LOST)


class Attempts:
    """Where a file's rows name their sample index and their attempt: the columns and each
    row's attempt as a number (None: no attempt column)."""

    def __init__(
        self, sample: str, sample_expr: pl.Expr, attempt: str | None, rank: pl.Expr | None
    ) -> None:
        self.sample, self.sample_expr = sample, sample_expr
        self.attempt, self.rank = attempt, rank

    def words(self) -> str:
        """Where the draws were keyed, as the sources name it."""
        if self.attempt is None:
            return f"(task, {self.sample}), no attempt column"
        return f"the last {self.attempt} of each (task, {self.sample})"


def _plain(shape: Shape, name: str) -> set[str]:
    return shape.kinds_at(name) - {"null"}


def found(shape: Shape, text: Reader, number: Reader, flag: Reader) -> Attempts | None:
    """The sample index and attempt columns a file's top level holds (first of each list),
    with their expressions built by the reader's ``text``, ``number`` and ``flag`` readers
    (each ``f(dotted) -> pl.Expr``); None where no sample index is named (an attempt column
    alone keys no draw)."""
    sample = next(
        (
            n
            for n in SAMPLE_INDEX_NAMES
            if _plain(shape, n) and _plain(shape, n) <= {"int", "string"}
        ),
        None,
    )
    if sample is None:
        return None
    sample_expr = text(sample)
    for name in ATTEMPT_NAMES:
        kinds = _plain(shape, name)
        if kinds == {"bool"}:
            return Attempts(sample, sample_expr, name, flag(name).cast(pl.Float64))
        if kinds and kinds <= {"int", "float"}:
            return Attempts(sample, sample_expr, name, number(name))
    for name in RETRY_OF_NAMES:
        if _plain(shape, name):
            marked = text(name)
            said = marked.is_not_null() & (marked.str.strip_chars() != "")
            return Attempts(sample, sample_expr, name, said.cast(pl.Float64))
    return Attempts(sample, sample_expr, None, None)


#: The narrow frame's helper columns: each row's task, sample index and attempt number.
TASK, SAMPLE, RANK = "__attempt_task", "__attempt_sample", "__attempt_rank"


def columns(task: pl.Expr, found: Attempts) -> list[pl.Expr]:
    """The helper columns :func:`coded` reads, over a file's rows keyed by ``task``."""
    rank = found.rank if found.rank is not None else pl.lit(None, dtype=pl.Float64)
    return [
        task.cast(pl.String).alias(TASK),
        found.sample_expr.cast(pl.String).alias(SAMPLE),
        rank.cast(pl.Float64).alias(RANK),
    ]


def coded(frame: pl.LazyFrame, ranked: bool) -> pl.LazyFrame:
    """``frame`` (holding :func:`columns`) with each row's code in :data:`CODE`
    (:data:`EARLIER`, :data:`AGAIN`, :data:`LOST`, else 0) and the helper columns dropped:
    window expressions over (task, sample index), one stage each (a window over a window's
    result is its own stage). ``ranked``: the rows carry an attempt column."""
    keys = [TASK, SAMPLE]
    held = pl.col(TASK).is_not_null() & pl.col(SAMPLE).is_not_null()
    if not ranked:
        again = held & (pl.int_range(pl.len()).over(keys) > 0)
        code = pl.when(again).then(pl.lit(AGAIN)).otherwise(pl.lit(0)).cast(pl.Int8)
        return frame.with_columns(code.alias(CODE)).drop(TASK, SAMPLE, RANK)
    rank = pl.col(RANK).fill_null(0.0)
    frame = frame.with_columns(
        rank.alias(RANK), rank.max().over(keys).alias("__last"), pl.len().over(keys).alias("__n")
    )
    at_last = held & (pl.col(RANK) == pl.col("__last"))
    frame = frame.with_columns(
        (held & (pl.col(RANK) < pl.col("__last"))).alias("__earlier"),
        at_last.alias("__at_last"),
        (at_last & (pl.col("__n") > 1)).alias("__final"),
    )
    # a value that marks only attempts a retry replaced, wherever a draw was retried
    replaced_only = pl.col("__earlier").any().over(RANK) & ~pl.col("__final").any().over(RANK)
    lone = held & (pl.col("__n") == 1)
    frame = frame.with_columns(
        (lone & replaced_only).alias("__lost"),
        (pl.col("__at_last").cast(pl.Int64).cum_sum().over(keys) > 1).alias("__again"),
    )
    lost = pl.col("__lost")
    lost = lost & (lost.sum() < (lone & ~lost).sum())  # most lone rows hold a final value
    code = (
        pl.when(pl.col("__earlier"))
        .then(pl.lit(EARLIER))
        .when(lost)
        .then(pl.lit(LOST))
        .when(pl.col("__at_last") & pl.col("__again"))
        .then(pl.lit(AGAIN))
        .otherwise(pl.lit(0))
        .cast(pl.Int8)
    )
    helpers = [TASK, SAMPLE, RANK, "__last", "__n", "__earlier", "__at_last", "__final"]
    return frame.with_columns(code.alias(CODE)).drop(*helpers, "__lost", "__again")


def aggregates(at: str) -> list[pl.Expr]:
    """Over a narrow frame: the rows of each code and the first of the left-out ones."""
    code = pl.col(CODE).fill_null(0)
    left = code.is_in(list(LEFT_OUT_CODES))
    return [
        (code == EARLIER).sum().alias("f_retried"),
        (code == LOST).sum().alias("f_retry_lost"),
        (code == AGAIN).sum().alias("f_sample_again"),
        pl.when(left).then(pl.col(at)).min().alias("f_first_retried"),
        pl.when(code == AGAIN).then(pl.col(at)).min().alias("f_first_sample_again"),
    ]
