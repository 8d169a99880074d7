"""What one finished step measures, from the canonical frame of its rollouts.

Every rate is the route's: pass@1 over tasks with the route's bootstrap interval
(:func:`whilecli.route.stats.pass_at_1`), shares with Wilson intervals over the unit they
count (:func:`whilecli.route.stats.wilson`). A step reads its rollouts file through the one
reading layer (:func:`whilecli.io.read.read_rows`) and collapses it to the route's per-task
:class:`~whilecli.route.model.Pool` (:func:`whilecli.route.pool.summarize`).

- **split share**: grouped tasks (≥ 2 rollouts) with both a pass and a fail, over grouped tasks.
- **zero-advantage share**: rollouts whose reward equals their group's mean (|R − mean| ≤
  1e-9, the group being the task's rollouts in this step): a group-baselined method (GRPO,
  prime-rl's default) gives them no gradient. Over rollouts; an ungraded rollout failed under
  ``--missing fail`` has a reward of 0.
- **truncated share** over the rollouts whose truncation is recorded; **truncated passes**:
  rollouts cut off at the cap that still passed.
- **error replies**: rollouts the reading layer marks ``reply = error`` (the harness failed,
  not the model), when the frame carries that column; unknown otherwise.
- **off-policy lag**: step − the policy version that sampled each rollout, when the rollouts
  record versions that state a step (``7``, ``step_7``); else the orchestrator's
  ``off_policy/mean`` and ``off_policy/max``; else not recorded (never a lag made up from the
  step's own number).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from whilecli.errors import MostlyErrorReplies
from whilecli.io.rows import Rows
from whilecli.io.versions import version_step
from whilecli.route import checks, stats
from whilecli.route.model import Pool, Rate

#: |R − group mean| at or under this is a zero advantage (the pass rule's tolerance).
ZERO_ADVANTAGE_TOL = 1e-9


@dataclass
class StepStats:
    """The numbers of one finished step (``rows == 0`` with ``note``: nothing was read)."""

    step: int
    source: str | None
    rows: int = 0
    tasks: int = 0
    pass_at_1: Rate | None = None
    split_share: Rate | None = None
    zero_advantage_share: Rate | None = None
    truncated_share: Rate | None = None  # None: truncation not recorded
    truncated_passes: int | None = None
    error_replies: int | None = None  # None: the frame does not say
    error_share: Rate | None = None
    off_policy: dict[str, Any] | None = None  # mean, max, from
    note: str | None = None
    notes: list[str] = field(default_factory=list)  # what the reading layer noted
    #: What reading found that changes what the numbers mean (the row facts' warnings).
    warnings: list[str] = field(default_factory=list)
    ungraded: int | None = None  # ungraded rows (left out, or failed under --missing fail)
    #: What the watch says with the step: reported late, or read again.
    remark: str | None = None
    #: The lines said before this step since the previous one (a restart, a replaced file).
    notices: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "source": self.source,
            "rows": self.rows,
            "tasks": self.tasks,
            "pass_at_1": _rate(self.pass_at_1),
            "split_share": _rate(self.split_share),
            "zero_advantage_share": _rate(self.zero_advantage_share),
            "truncated_share": _rate(self.truncated_share),
            "truncated_passes": self.truncated_passes,
            "error_replies": self.error_replies,
            "error_share": _rate(self.error_share),
            "off_policy": self.off_policy,
            "note": self.note,
            "notes": list(self.notes),
            "ungraded": self.ungraded,
            "warnings": list(self.warnings),
            "remark": self.remark,
            "notices": list(self.notices),
        }


def _rate(rate: Rate | None) -> dict[str, Any] | None:
    return rate.to_dict() if rate is not None else None


def measure(
    step: int,
    rows: Rows,
    pool: Pool,
    frame: pl.DataFrame,
    metrics: dict[str, Any] | None = None,
    *,
    draws: int = stats.BOOTSTRAP_DRAWS,
    seed: int = 0,
) -> StepStats:
    """The step's numbers from its read rows, their pool and their collected frame."""
    tasks = pool.tasks
    grouped = checks.grouped(pool)
    split = checks.split_tasks(pool, grouped)  # one writer's draws split, as check 3 counts
    grouped_rows = int(grouped["n"].sum()) if grouped.height else 0
    known = int(tasks["truncated_known"].sum()) if tasks.height else 0
    cut = int(tasks["truncated"].sum()) if tasks.height else 0
    known_tasks = int((tasks["truncated_known"] > 0).sum()) if tasks.height else 0
    errors, error_share, kept = _errors(rows, frame)
    zero, rewarded = zero_advantage_rows(kept)
    return StepStats(
        step=step,
        source=rows.paths[0] if rows.paths else None,
        rows=pool.rows,
        tasks=pool.n_tasks,
        pass_at_1=stats.pass_at_1(tasks, draws=draws, seed=seed),
        split_share=stats.wilson(split, grouped.height, n_rows=grouped_rows),
        zero_advantage_share=stats.wilson(zero, rewarded, n_tasks=pool.n_tasks, unit="rows"),
        truncated_share=(
            stats.wilson(cut, known, n_tasks=known_tasks, n_rows=known, unit="rows")
            if known
            else None
        ),
        truncated_passes=int(tasks["truncated_passes"].sum()) if known else None,
        error_replies=errors,
        error_share=error_share,
        off_policy=off_policy(step, kept, metrics),
        notes=list(rows.notes),
        warnings=_said(rows),
        ungraded=getattr(getattr(rows, "facts", None), "ungraded", None),
    )


def _said(rows: Rows) -> list[str]:
    """The row facts' warnings (what reading the step's rollouts found)."""
    found = getattr(rows, "facts", None)
    return list(found.warnings()) if found is not None else []


def skipped(step: int, source: Path | None, note: str) -> StepStats:
    """A finished step with nothing to read (its rollouts are not on disk, or empty)."""
    return StepStats(step=step, source=str(source) if source else None, note=note)


def _errors(rows: Rows, frame: pl.DataFrame) -> tuple[int | None, Rate | None, pl.DataFrame]:
    """(error replies, their share of the replies, the rows that are not errors).

    The reading layer decides what an error reply is: it counts them in ``rows.facts`` (and
    leaves them out of the frame), or marks them ``reply = error`` in the frame. Neither:
    unknown (None)."""
    facts = getattr(rows, "facts", None)
    counted = getattr(facts, "errors", None)
    if isinstance(counted, int):
        total = getattr(facts, "rows", None)
        total = total if isinstance(total, int) and total >= counted else frame.height + counted
        if "reply" in frame.columns:
            frame = frame.filter(pl.col("reply").fill_null("ok") != "error")
        return counted, stats.wilson(counted, total, unit="rows"), frame
    if "reply" not in frame.columns:
        return None, None, frame
    is_error = (frame["reply"] == "error").fill_null(False)
    count = int(is_error.sum())
    return count, stats.wilson(count, frame.height, unit="rows"), frame.filter(~is_error)


def refused_for_errors(step: int, source: str | None, refusal: MostlyErrorReplies) -> StepStats:
    """The step the reading layer refused for its error replies: reported, and it raises the
    errors alert, rather than stopping the watch."""
    errors, rows = refusal.errors, refusal.rows
    note = f"{errors} of {rows} replies are errors: the harness failed, not the model"
    return StepStats(
        step=step,
        source=source,
        rows=0,
        error_replies=errors,
        error_share=stats.wilson(errors, rows, unit="rows"),
        note=note,
    )


def zero_advantage_rows(frame: pl.DataFrame) -> tuple[int, int]:
    """(rollouts whose reward is their task's mean reward in this frame, within 1e-9; the
    rollouts with a reward). A row with no reward has the reward its pass says (1 or 0): an
    ungraded row failed under ``--missing fail`` is a reward of 0, a pass-only format's row
    its pass; a row with neither is not counted."""
    if frame.height == 0:
        return 0, 0
    reward = pl.col("reward").cast(pl.Float64)
    if "passed" in frame.columns:
        reward = pl.coalesce(reward, pl.col("passed").cast(pl.Float64))
    counted = frame.select(reward.alias("r"), "task_id").drop_nulls("r")
    mean = pl.col("r").mean().over("task_id")
    flat = counted.select(((pl.col("r") - mean).abs() <= ZERO_ADVANTAGE_TOL).sum())
    return int(flat.item()), counted.height


def off_policy(
    step: int, frame: pl.DataFrame, metrics: dict[str, Any] | None
) -> dict[str, Any] | None:
    """Mean and max of step − policy version over the rollouts whose version states a step
    (:func:`whilecli.io.versions.version_step`: ``7``, ``step_7``, ``m@7``);
    else the orchestrator's ``off_policy/mean`` and ``off_policy/max``; else None."""
    if "policy_version" in frame.columns and frame.height:
        written = frame["policy_version"].cast(pl.String).drop_nulls().to_list()
        versions = [v for v in map(version_step, written) if v is not None]
        if versions:  # in Python's ints: step − version can leave an int64
            lags = [step - v for v in versions]
            return {"mean": sum(lags) / len(lags), "max": max(lags), "from": "rows"}
    if metrics:
        mean, most = metrics.get("off_policy/mean"), metrics.get("off_policy/max")
        if isinstance(mean, (int, float)) or isinstance(most, (int, float)):
            return {"mean": mean, "max": most, "from": "metrics.jsonl"}
    return None
