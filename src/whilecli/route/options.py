"""The knobs of ``whilecli route``: every field typed, defaulted and documented."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from whilecli.declare import flag
from whilecli.errors import UsageError

if TYPE_CHECKING:
    from whilecli.route.model import Pool

CHECKS = "Checks"


#: Fewest bootstrap resamples: a 95% range needs a draw beyond each 2.5% tail (40 draws),
#: or its ends are one draw and may not hold the estimate.
MIN_DRAWS = 40
#: Most bootstrap resamples a command takes: each is a draw over every task, held at once.
MAX_DRAWS = 1_000_000


@dataclass
class RouteOptions:
    """What the decision reads besides the student's rows.

    Defaults are the thresholds of DESIGN section 2 (and the reference SDK's constants).
    """

    model: str | None = field(
        default=None,
        metadata=flag(
            "--model", "The model you will train (checks on-policy).", metavar="M", panel=CHECKS
        ),
    )
    """The model you will train. Rows naming another model route to ``sft``; several
    versions of it (or one other than ``model@version``) suggest Async. None: on-policy is
    unknown."""

    teacher: Pool | None = None
    """The teacher's graded rows on the same tasks, summarized. None: the teacher check is
    not asked."""

    teacher_vocab: int | None = field(
        default=None,
        metadata=flag(
            "--teacher-vocab",
            "The teacher tokenizer's vocabulary size.",
            metavar="N",
            panel=CHECKS,
        ),
    )
    """The teacher tokenizer's vocabulary size (``len(tokenizer)``)."""

    student_vocab: int | None = field(
        default=None,
        metadata=flag(
            "--student-vocab",
            "The student tokenizer's vocabulary size.",
            metavar="N",
            panel=CHECKS,
        ),
    )
    """The student tokenizer's vocabulary size."""

    teacher_tokenizer: Path | None = field(
        default=None,
        metadata=flag(
            "--teacher-tokenizer",
            "The teacher's tokenizer.json or local model directory.",
            metavar="PATH",
            panel=CHECKS,
        ),
    )
    """A teacher ``tokenizer.json`` or local model directory; read when no vocab is given."""

    student_tokenizer: Path | None = field(
        default=None,
        metadata=flag(
            "--student-tokenizer",
            "The student's tokenizer.json or local model directory.",
            metavar="PATH",
            panel=CHECKS,
        ),
    )
    """A student ``tokenizer.json`` or local model directory."""

    size_b: float | None = field(
        default=None,
        metadata=flag(
            "--size-b", "The model's size in billions of parameters.", metavar="F", panel=CHECKS
        ),
    )
    """The student's size in billions of parameters. Under 7, a floor routes to ``sft`` on a
    stronger model's completions instead of ``opsd``."""

    strict: bool = field(
        default=False,
        metadata=flag(
            "--strict", "Exit 1 when any check reached is unknown or fails.", panel=CHECKS
        ),
    )
    """Treat any unknown or failed check that was reached, and a provisional verdict, as
    "nothing can train yet" (exit 1); an unchecked tokenizer becomes a failure."""

    judges: Any = None
    """A :class:`~whilecli.io.judge.JudgeScan` that overrides the one the read made of the
    rows (:attr:`whilecli.io.rows.Rows.judge`). None: the read's answer."""

    firm_tasks: int = 30
    """Fewest tasks in the deciding check for a firm (not provisional) verdict."""

    firm_width: float = 0.3
    """Widest deciding interval for a firm (not provisional) verdict."""

    firm_error: float = 0.01
    """Largest one-sided chance that a firm verdict's deciding difference lies on the other
    side of its threshold (DESIGN section 2, "Calibrated": firm verdicts agree with the
    truth in at least 99% of draws). A signed (paired) interval must clear its threshold at
    this one-sided level (z = 2.33), not only at the printed 95% interval's 2.5%. Range
    (0, 0.5)."""

    unseen_split: float = 0.01
    """The split share a floor or a saturated band may hide (none of its grouped tasks
    split): the verdict is firm once the split share's Wilson upper bound at the one-sided
    ``firm_error`` (z 2.33) is under it (about 540 grouped tasks at 0.01). Under it, a mixed pool whose few splittable tasks all
    failed (or all passed) their k draws is common: 90% of tasks at 0 and 10% passing once
    in 7 leaves 30 tasks at k = 2 all at 0 about half the time. Range (0, 1); measured by
    ``benchmarks/calibration.py`` (the band floor and near-floor regions)."""

    cut_pass_ratio: float = 0.25
    """How often, relative to the other draws of their tasks, cut-off replies may pass
    unseen: "no cut-off reply passes" (check 1) is firm once, had cut-off replies passed that
    often, a pass among them would have been missed with chance at most ``firm_error``: the
    cut-off rows' expected passes at their tasks' rates, times this, reach −ln(firm_error).
    Thirty cut-off rows of tasks that pass one draw in ten expect 3 passes: none seen is
    common. Range (0, 1]; measured by ``benchmarks/calibration.py --offgrid``."""

    effect: float = 0.05
    """The smallest gain worth proving: the teacher's pass@1 lead and the held-out size."""

    effect_margin: float = 0.02
    """How near ``effect`` a teacher's lead is too close to call: a firm verdict on the
    teacher needs the lead's one-sided bound past ``effect ± effect_margin``, and the
    calibration's truth takes either answer for a true lead inside that zone (as
    ``unseen_split`` for the split share). At the threshold itself a one-sided 1% rule is
    wrong in up to 1% of draws, and nearly every firm verdict there is one of them: 7 of 8
    firm-and-wrong teacher verdicts of ``benchmarks/calibration.py --offgrid --region
    "teacher gap"`` had a true lead of exactly 0.05. Range [0, ``effect``)."""

    min_split_tasks: int = 32
    """Fewest split tasks (a pass and a fail) for a grouped update and for DPO's pairs."""

    min_split_share: float = 0.3
    """Smallest share of grouped tasks that are split before the band warns."""

    band: tuple[float, float] = (0.2, 0.8)
    """The in-band pass rates, both ends inclusive."""

    teacher_min_coverage: float = 0.5
    """Share of the student's tasks the teacher's rows must cover."""

    teacher_max_truncated: float = 0.05
    """Largest share of the teacher's rows that may be cut off at the student's max_tokens."""

    truncated_margin: float = 0.01
    """How near ``teacher_max_truncated`` the teacher's truncated share is too close to call.
    The share is an estimate over the teacher's rows; as for the lead (``effect_margin``), a
    firm verdict needs the share's one-sided bound (Wilson, ``firm_error``) past the zone
    ``teacher_max_truncated ± truncated_margin``: under its low edge for a teacher that
    clears, over its high edge for one that fails on it, and the calibration's truth takes
    either answer for a true share inside it. Read as exact, a teacher cut off 2% of the
    time failed on 35 rows one pool in six (``benchmarks/calibration.py --offgrid --region
    "teacher cut off"``: 185 of 1180 firm verdicts wrong); with the bound alone, not past the
    zone, firm verdicts just outside it were wrong about as often as they were firm. Range
    [0, ``teacher_max_truncated``]."""

    max_k: int = 32
    """Largest rollouts per task the band's ``need`` may ask for."""

    bootstrap_draws: int = field(
        default=2000,
        metadata=flag("--draws", "Bootstrap resamples.", metavar="N", panel=CHECKS),
    )
    """Resamples of every bootstrap interval."""

    seed: int = field(
        default=0,
        metadata=flag("--seed", "Seed of the bootstrap intervals.", metavar="N", panel=CHECKS),
    )
    """Seed of every bootstrap: the same rows always print the same intervals."""

    split_ks: tuple[int, ...] = field(default=(4, 8, 16))
    """The k at which the band reports the expected split share."""

    floor_share: float = 0.5
    """Share of grouped tasks at 0 from which OPSD joins the plan (a partial floor)."""

    ceiling_pass: float = 0.9
    """pass@1 from which GroupwiseGrading joins the plan."""

    opsd_min_size_b: float = 7.0
    """Smallest student (billions of parameters) for which OPSD is advised."""

    show: tuple[str, ...] = field(
        default=(),
        metadata=flag(
            "--show",
            "List the tasks behind a count, with the file and line (or row) of each task's first"
            " row: truncated-passes, floor, saturated, split, singles (repeatable, or"
            " comma-separated).",
            metavar="COUNT",
            panel="Output",
        ),
    )
    """``--show``: the counts whose tasks the report lists (JSON keys of
    :data:`whilecli.route.drill.SHOW_KINDS`: ``truncated_passes``, ``floor``, ``saturated``,
    ``split``, ``singles``)."""

    limit: int = field(
        default=20,
        metadata=flag(
            "--limit",
            "Tasks listed per --show count; the report says how many were left out.",
            metavar="N",
            panel="Output",
        ),
    )
    """``--limit``: tasks listed per count asked for by ``show``."""

    def __post_init__(self) -> None:
        from whilecli.io.modelid import check_model_option

        check_model_option(self.model, "--model")
        low, high = self.band
        if not 0 <= low <= high <= 1:
            raise UsageError(f"band must satisfy 0 <= low <= high <= 1, got {self.band}")
        if not 0 < self.effect <= 1:
            raise UsageError(f"effect must lie in (0, 1], got {self.effect}")
        if not 0 <= self.effect_margin < self.effect:
            raise UsageError(f"effect_margin must lie in [0, effect), got {self.effect_margin}")
        if not 0 <= self.truncated_margin <= self.teacher_max_truncated:
            raise ValueError("truncated_margin must lie in [0, teacher_max_truncated]")
        if not 0 < self.firm_error < 0.5:
            raise UsageError(f"firm_error must lie in (0, 0.5), got {self.firm_error}")
        if not 0 < self.unseen_split < 1:
            raise UsageError(f"unseen_split must lie in (0, 1), got {self.unseen_split}")
        if not 0 < self.cut_pass_ratio <= 1:
            raise UsageError(f"cut_pass_ratio must lie in (0, 1], got {self.cut_pass_ratio}")
        if self.max_k < 2:
            raise UsageError(f"max_k must be at least 2, got {self.max_k}")
        if not MIN_DRAWS <= self.bootstrap_draws <= MAX_DRAWS:
            raise UsageError(
                f"--draws must lie in [{MIN_DRAWS}, {MAX_DRAWS}], got {self.bootstrap_draws}"
            )
        if self.limit < 1:
            raise UsageError(f"--limit must be at least 1, got {self.limit}")
        if self.seed < 0:
            raise UsageError(f"--seed must be 0 or more, got {self.seed}")
        if self.size_b is not None and not (math.isfinite(self.size_b) and self.size_b > 0):
            raise UsageError(f"--size-b must be a positive number of billions, got {self.size_b}")
        for name, vocab in (("teacher", self.teacher_vocab), ("student", self.student_vocab)):
            if vocab is not None and vocab <= 0:
                raise UsageError(f"--{name}-vocab must be a positive vocabulary size, got {vocab}")
