"""The canonical row frame every reader produces (DESIGN section 1): :data:`CANONICAL_SCHEMA`
and :class:`Rows`, the validated lazy frame with what fed each field."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

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
}


@dataclass
class Rows:
    """Graded rows read from one or more inputs, in the canonical schema.

    ``frame`` is lazy; collecting it yields exactly :data:`CANONICAL_SCHEMA`. Reading has
    already validated it: every ``task_id`` and ``reward`` is present, every reward finite.
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
