"""The canonical row frame every reader produces (DESIGN section 1): :data:`CANONICAL_SCHEMA`
and :class:`Rows`, the validated lazy frame with what fed each field."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import polars as pl

if TYPE_CHECKING:
    from whilecli.io.judge import JudgeScan
from whilecli.io.facts import Facts

#: Columns of the canonical row frame, in order, with their polars types.
#: ``truncated`` is null where the input records no truncation (unknown, never false).
#: ``model`` is the writer's name with any ``@version`` suffix removed; ``policy_version``
#: keeps the full string when the input has one (an async sampler's older copy).
CANONICAL_SCHEMA: dict[str, pl.DataType] = {
    "task_id": pl.String(),
    "reward": pl.Float64(),
    "passed": pl.Boolean(),
    "truncated": pl.Boolean(),
    "model": pl.String(),
    "policy_version": pl.String(),
    "graded": pl.Boolean(),  # false: no grade (null, NaN, absent), kept by --missing fail
    "reply": pl.String(),  # "ok" or "empty"; error replies are left out of the frame
}


#: A column no file carries: an optional field the rows lack (a method that does not need
#: it) is read from it, as null.
ABSENT = "__absent"
#: A row's position column while reading: ``(source index << AT_BITS) + place`` (the 0-based
#: row of a Parquet file, or the 1-based ordinal among the non-blank lines of a JSONL source).
AT = "__at"
#: Bits of a position that hold the place within its source (the rest: the source index).
AT_BITS = 40


class Aggregate(Protocol):
    """What a consumer wants computed in the read's own streaming pass (e.g. the route's
    per-task counts): per-task aggregations, run in the read's one group-by by ``task_id``
    over every row of a file (the canonical columns, ``passed`` and :data:`AT`), each
    counting only the rows ``kept`` selects (the rows every rate counts); and where the
    collected table of each file goes (one row per task, a task whose every row is left out
    included: what it counts of the rows ``kept`` selects is then 0)."""

    def task_aggregations(self, kept: pl.Expr) -> list[pl.Expr]: ...

    def add(self, tables: Sequence[pl.DataFrame]) -> None: ...


@dataclass
class Rows:
    """Graded rows read from one or more inputs, in the canonical schema.

    ``frame`` is lazy; collecting it yields exactly :data:`CANONICAL_SCHEMA`. Reading has
    already validated it: every ``task_id`` is present, every reward finite or missing. It
    holds the rows every rate counts: harness errors and ungraded rows are left out (under
    ``--missing fail`` ungraded rows stay, as failures) and counted in ``facts``.
    """

    frame: pl.LazyFrame
    paths: list[str]
    format: str  # the recognised input format, e.g. "vf-eval", "nemo-gym", "jsonl", "parquet"
    sources: dict[str, str]  # canonical field -> the column (or rule) that fed it
    pass_threshold: float
    threshold_explicit: bool
    partial_rows: int = 0  # rewards inside [0, 1] that are neither 0 nor 1
    #: Some row carries per-token (behaviour) log-probs; None: unknown (a summary without a
    #: whilecli header does not say).
    has_logprobs: bool | None = False
    #: Some row carries critic values; None: unknown, as above.
    has_values: bool | None = False
    notes: list[str] = field(default_factory=list)
    #: Who grades (:mod:`whilecli.io.judge`), decided by the read; None: not known (a
    #: summary that recorded no count).
    judge: JudgeScan | None = None
    #: What reading found each row to mean: counts left out, first rows, coverage.
    facts: Facts = field(default_factory=Facts)
    #: Per task id, a key of its prompt (``task_id``, ``prompt``), where the rows carry both:
    #: a task shared with other rows (a teacher, the other dump of ``diff``) whose prompt key
    #: differs is not the same task. None: no prompts read.
    prompts: pl.DataFrame | None = None
    #: The lowest and highest graded reward, where the pass is read from the reward (None:
    #: a summary, or pass/fail given by a column): the scale a threshold grades.
    reward_range: tuple[float, float] | None = None
    #: The one evaluation the inputs' sidecars name (vf-eval env, lm-eval task, ...); None:
    #: none, or several (pooled on purpose, each one's tasks keyed apart).
    evaluation: str | None = None
