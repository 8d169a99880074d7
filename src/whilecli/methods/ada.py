"""ReinforceAda: keep sampling a task until its group can carry a gradient.

Reinforce-Ada (arXiv:2510.04996). A grouped update learns nothing from a task whose
rollouts all pass or all fail. Instead of a fixed k, each active task is drawn
``round_size`` more times per round until it retires:

- ``exit="balanced"``: at least ``keep // 2`` right and ``keep − keep // 2`` wrong;
- ``exit="positive"``: at least one right,

where a rollout is right iff it passes: ``reward ≥ pass_threshold`` (default 1.0, the
route's rule; rewards outside [0, 1] need an explicit threshold). A task that has not retired after
``max_rounds`` rounds is *exhausted*. Rounds drawn so far = ⌈draws / round_size⌉.

A retired task keeps ``keep`` rollouts, balanced and first drawn first kept: the first
``n_r = min(right, max(keep // 2, keep − wrong))`` right ones and the first
``keep − n_r`` wrong ones, in file order. (With the balanced exit this is exactly
``keep // 2`` right and ``keep − keep // 2`` wrong.) Each kept rollout gets the advantage

    A = r − p̂,   p̂ = right / drawn over all of the task's draws (no std division),

with r the right indicator (1 or 0), which equals ``reward − p̂`` for binary rewards.

Stats: draws per task, retired share, no-gradient share (finished tasks whose selection
has no nonzero advantage, exhausted ones included), GRPO's expected flat share at
k = keep, Σ(p̂^keep + (1 − p̂)^keep)/N, and mean p̂.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from whilecli.errors import UsageError
from whilecli.methods import rowio
from whilecli.methods.rowio import Table

EXITS = ("balanced", "positive")
RETIRED, ANOTHER_ROUND, EXHAUSTED = "retired", "another_round", "exhausted"


@dataclass(frozen=True)
class AdaResult:
    """The per-task plan, the tasks to draw again, the kept selection, stats and notes.

    ``tasks``: task_id, drawn, right, wrong, rounds, p_hat, status, keep_right,
    keep_wrong. ``next_round``: task_id, drawn, right, rounds, p_hat, draws (the
    ``round_size`` to draw). ``selection``: the kept input rows of retired tasks with
    task_id, draw (0-based draw index within the task), right, p_hat, advantage.
    """

    tasks: pl.DataFrame
    next_round: pl.DataFrame
    selection: pl.DataFrame
    stats: dict[str, Any]
    columns: dict[str, str]
    notes: list[str] = field(default_factory=list)


def _int_knob(value: object, name: str, low: int, default: int, rule: str) -> None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= low
    if not ok:
        raise UsageError(
            f"{name} must be an integer {rule} (default {default}), got {value!r}", knob=name
        )
    if value > _MAX_DRAWS:  # type: ignore[operator]
        raise UsageError(
            f"{name} must be at most {_MAX_DRAWS} (draws per task), got {value!r}", knob=name
        )


#: Most draws a round or a selection may name: the counts are int64 columns, and past this
#: a sum of them could wrap.
_MAX_DRAWS = 2**31 - 1


@dataclass(frozen=True)
class ReinforceAda:
    """Plan the next sampling round and the balanced selection (see the module docstring)."""

    keep: int = 4
    round_size: int = 8
    max_rounds: int = 4
    exit: str = "balanced"
    pass_threshold: float | None = None  # None: 1.0, and rewards must lie in [0, 1]

    def __post_init__(self) -> None:
        _int_knob(self.keep, "keep", 2, 4, ">= 2")
        _int_knob(self.round_size, "round_size", self.keep, 8, f">= keep ({self.keep})")
        _int_knob(self.max_rounds, "max_rounds", 1, 4, ">= 1")
        if self.exit not in EXITS:
            raise UsageError(
                f"exit must be balanced or positive (default balanced), got {self.exit!r}",
                knob="exit",
            )
        t = self.pass_threshold
        if t is not None and (
            isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t)
        ):
            raise UsageError(
                f"pass_threshold must be a finite number (default 1.0), got {t!r}",
                knob="pass_threshold",
            )

    def retire_expr(self) -> pl.Expr:
        """The retirement rule over per-task columns ``right`` and ``wrong``."""
        if self.exit == "balanced":
            half = self.keep // 2
            return (pl.col("right") >= half) & (pl.col("wrong") >= self.keep - half)
        return pl.col("right") >= 1

    def plan(self, rows: pl.DataFrame | Table) -> AdaResult:
        """Decide, per task, retired / another round / exhausted, and select the kept rows.

        ``rows``: a :class:`~whilecli.io.table.Table` read by :func:`whilecli.io.table.read_table`
        (its pass rule applies), or a frame, read by the same rules with ``pass_threshold``.
        """
        table = rowio.table_of(rows, pass_threshold=self.pass_threshold)
        frame = table.frame
        columns = {k: table.columns[k] for k in ("task_id", "reward", "passed")}
        keep, half = self.keep, self.keep // 2
        work = table.canonical.select("task_id", "reward", right=pl.col("passed"))
        tasks = (
            work.group_by("task_id", maintain_order=True)
            .agg(drawn=pl.len().cast(pl.Int64), right=pl.col("right").sum().cast(pl.Int64))
            .with_columns(wrong=pl.col("drawn") - pl.col("right"))
            .with_columns(
                rounds=(pl.col("drawn") + self.round_size - 1) // self.round_size,
                p_hat=pl.col("right") / pl.col("drawn"),
                retired=self.retire_expr(),
            )
            .with_columns(
                status=pl.when(pl.col("retired"))
                .then(pl.lit(RETIRED))
                .when(pl.col("rounds") >= self.max_rounds)
                .then(pl.lit(EXHAUSTED))
                .otherwise(pl.lit(ANOTHER_ROUND)),
                keep_right=pl.min_horizontal(
                    pl.col("right"), pl.max_horizontal(pl.lit(half), keep - pl.col("wrong"))
                ),
            )
            .with_columns(
                keep_wrong=pl.min_horizontal(pl.col("wrong"), keep - pl.col("keep_right")),
            )
            .with_columns(
                keep_right=pl.when(pl.col("retired")).then(pl.col("keep_right")).otherwise(0),
                keep_wrong=pl.when(pl.col("retired")).then(pl.col("keep_wrong")).otherwise(0),
            )
            .drop("retired")
        )
        rows = work.with_columns(
            draw=pl.int_range(pl.len()).over("task_id"),
            nth_right=pl.col("right").cast(pl.Int64).cum_sum().over("task_id"),
            nth_wrong=(~pl.col("right")).cast(pl.Int64).cum_sum().over("task_id"),
        ).join(
            tasks.select("task_id", "p_hat", "keep_right", "keep_wrong"),
            on="task_id",
            how="left",
            maintain_order="left",
        )
        kept = (pl.col("right") & (pl.col("nth_right") <= pl.col("keep_right"))) | (
            ~pl.col("right") & (pl.col("nth_wrong") <= pl.col("keep_wrong"))
        )
        mask = rows.select(kept).to_series()
        picked = rows.filter(mask)
        selection = frame.filter(mask).with_columns(
            picked.get_column("task_id"),
            draw=picked.get_column("draw"),
            right=picked.get_column("right"),
            p_hat=picked.get_column("p_hat"),
            advantage=picked.get_column("right").cast(pl.Float64) - picked.get_column("p_hat"),
        )
        next_round = tasks.filter(pl.col("status") == ANOTHER_ROUND).select(
            "task_id", "drawn", "right", "rounds", "p_hat", draws=pl.lit(self.round_size, pl.Int64)
        )
        stats, notes = self._stats(tasks, selection)
        return AdaResult(tasks, next_round, selection, stats, columns, notes)

    def _stats(
        self, tasks: pl.DataFrame, selection: pl.DataFrame
    ) -> tuple[dict[str, Any], list[str]]:
        n = tasks.height
        status = tasks.get_column("status")
        n_retired = int((status == RETIRED).sum())
        n_exhausted = int((status == EXHAUSTED).sum())
        n_next = int((status == ANOTHER_ROUND).sum())
        graded = (
            selection.group_by("task_id").agg(g=(pl.col("advantage") != 0).any())
            if selection.height
            else pl.DataFrame(
                {"task_id": [], "g": []}, schema={"task_id": pl.String, "g": pl.Boolean}
            )
        )
        with_gradient = int(graded.get_column("g").sum())
        finished = n_retired + n_exhausted
        p = tasks.get_column("p_hat")
        drawn = tasks.get_column("drawn")
        k = self.keep
        stats: dict[str, Any] = {
            "tasks": n,
            "rows": int(drawn.sum()),
            "draws_per_task_mean": float(drawn.mean()),  # type: ignore[arg-type]
            "draws_per_task_min": int(drawn.min()),  # type: ignore[arg-type]
            "draws_per_task_max": int(drawn.max()),  # type: ignore[arg-type]
            "rounds_max": int(tasks.get_column("rounds").max()),  # type: ignore[arg-type]
            "retired": n_retired,
            "another_round": n_next,
            "exhausted": n_exhausted,
            "retired_share": n_retired / n,
            "no_gradient_share": (finished - with_gradient) / finished if finished else None,
            "grpo_flat_share": float((p**k + (1.0 - p) ** k).sum()) / n,
            "mean_p_hat": float(p.mean()),  # type: ignore[arg-type]
            "selected_rows": selection.height,
            "next_round_draws": n_next * self.round_size,
        }
        notes: list[str] = []
        if n_next:
            notes.append(
                f"{n_next} task(s) need another round of {self.round_size} draws "
                f"({n_next * self.round_size} rollouts)"
            )
        if n_exhausted:
            notes.append(
                f"{n_exhausted} task(s) reached max_rounds = {self.max_rounds} without retiring: "
                "no selection for them"
            )
        return stats, notes
