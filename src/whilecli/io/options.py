"""The reading options every command that reads rows takes, each declared once.

``--pass-threshold``, ``--missing``, ``--map``, ``--teacher-map``, ``--input-format``, ``--step``, ``--pool``,
``--by`` and ``--summary``: the
default, the names taken, the help line and the check of each live here (the command line
generates its options from these fields, :func:`whilecli.commands._common.option`), and
:func:`whilecli.io.read.read_rows` reads with the values. Imports nothing heavy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from whilecli.declare import flag
from whilecli.errors import UsageError
from whilecli.io.aliases import MISSING_CHOICES
from whilecli.io.formats.registry import NAMES as FORMAT_NAMES

INPUTS = "Inputs"


@dataclass(frozen=True)
class ReadOptions:
    """How rows are read. Validates itself."""

    pass_threshold: float | None = field(
        default=None,
        metadata=flag(
            "--pass-threshold",
            "A row passes when reward >= F.",
            metavar="F",
            show_default="1.0",
            panel=INPUTS,
        ),
    )
    """A row passes when its reward is at least this. None: 1.0 (a pass/fail grade)."""

    missing: str = field(
        default="skip",
        metadata=flag(
            "--missing",
            "An ungraded row (no grade, or NaN) is left out of every rate (skip) or fails (fail).",
            metavar="skip|fail",
            choices=MISSING_CHOICES,
            panel=INPUTS,
        ),
    )
    """An ungraded row (no grade, or NaN): left out of every rate (``skip``) or a fail."""

    mapping: tuple[str, ...] = field(
        default=(),
        metadata=flag(
            "--map", "Read FIELD from COLUMN (repeatable).", metavar="FIELD=COLUMN", panel=INPUTS
        ),
    )
    """``FIELD=COLUMN`` pairs: read the canonical field from that column (or dotted path)."""

    teacher_mapping: tuple[str, ...] = field(
        default=(),
        metadata=flag(
            "--teacher-map",
            "Read the teacher's FIELD from COLUMN (repeatable; over --map for that field).",
            metavar="FIELD=COLUMN",
            panel=INPUTS,
        ),
    )
    """``FIELD=COLUMN`` pairs for the ``--teacher`` rows alone, over ``mapping``'s for the
    fields they name: a teacher written in another layout than the student (``choices[]``
    beside one row per draw) is read with its own map, the student with its own."""

    input_format: str | None = field(
        default=None,
        metadata=flag(
            "--input-format",
            f"Force the input format, one of: {', '.join(FORMAT_NAMES)} ('whilecli formats').",
            metavar="NAME",
            show_default="detect",
            choices=FORMAT_NAMES,
            refusal="--input-format {value!r}: one of " + ", ".join(FORMAT_NAMES),
            panel=INPUTS,
        ),
    )
    """The input format, forced (``whilecli formats`` lists them). None: detected."""

    step: int | None = field(
        default=None,
        metadata=flag(
            "--step",
            "Read step N of a prime-rl run directory.",
            metavar="N",
            show_default="the latest step",
            panel=INPUTS,
        ),
    )
    """The step a prime-rl run directory is read at. None: its latest step."""

    pool: bool = field(
        default=False,
        metadata=flag(
            "--pool",
            "Pool files whose sidecars name different evaluations, or whose task ids carry"
            " different prompts (refused without it).",
            panel=INPUTS,
        ),
    )
    """Read files of different evaluations (or prompts under one task id) as one pool."""

    by: str | None = field(
        default=None,
        metadata=flag(
            "--by",
            "Route each input file (source) or each value of COLUMN apart, with one summary"
            " table across slices first.",
            metavar="source|COLUMN",
            panel=INPUTS,
        ),
    )
    """Slice the rows by input file (``source``) or by a column's values. None: one pool."""

    summary: bool = field(
        default=False,
        metadata=flag(
            "--summary",
            "PATH and --teacher are per-task summaries (whilecli summarize); detected without it.",
            panel=INPUTS,
        ),
    )
    """The inputs are per-task summaries (``whilecli summarize``). False: detected."""

    def __post_init__(self) -> None:
        threshold = self.pass_threshold
        if threshold is not None and (
            isinstance(threshold, bool)
            or not isinstance(threshold, (int, float))
            or not math.isfinite(threshold)
        ):
            raise UsageError(
                f"--pass-threshold must be a finite number (default 1.0), got {threshold!r}"
            )
        if self.missing not in MISSING_CHOICES:
            raise UsageError(f"--missing {self.missing!r}: one of {', '.join(MISSING_CHOICES)}")
        if self.input_format is not None and self.input_format not in FORMAT_NAMES:
            raise UsageError(
                f"--input-format {self.input_format!r}: one of {', '.join(FORMAT_NAMES)}"
            )
        if self.step is not None and self.step < 0:
            raise UsageError(f"--step must be 0 or more, got {self.step}")
