"""The knobs of ``whilecli watch``: each declared once, with its flag, help and range.

:class:`WatchOptions` is what :func:`whilecli.watch.watch_run` reads; the command line's
options are generated from its fields (each field's ``metadata`` holds the flag, the help
line and the help panel), so a default or a help text lives here and nowhere else. The
reading options (``--pass-threshold``, ``--map``) are the route's own declarations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from whilecli import declare
from whilecli.errors import UsageError

#: Alert kinds: what the route would act on when it changes over the last steps.
ALERTS = ("truncated-passes", "floor", "saturated", "errors")
LAYOUTS = ("auto", "prime-rl", "verl")
SPLITS = ("train", "eval")
FORMATS = ("text", "json")
#: The longest wait a time option takes: a year, well inside what every platform's sleep and
#: clock accept (``time.sleep`` overflows past about 9.2e9 s where ``time_t`` is 64 bits).
MAX_SECONDS = 365 * 24 * 3600
#: The shortest poll interval: a millisecond (shorter only spins the CPU).
MIN_INTERVAL_S = 0.001


def seconds(name: str, value: float, low: float) -> float:
    """A time option of ``watch``: a finite number of seconds in [low, :data:`MAX_SECONDS`],
    or one line naming the option and its range (read at parse time, before any wait)."""
    if isinstance(value, bool) or not (math.isfinite(value) and low <= value <= MAX_SECONDS):
        raise UsageError(
            f"{name} must be a number of seconds in [{low:g}, {MAX_SECONDS}] (a year),"
            f" got {value:g}"
        )
    return value


def flag(
    name: str,
    help: str,
    *,
    panel: str = "Watch",
    metavar: str | None = None,
    short: str | None = None,
    show_default: str | bool = True,
    choices: tuple[str, ...] = (),
) -> dict[str, Any]:
    """A field's command-line declaration (:func:`whilecli.declare.flag`), in the Watch
    panel unless another is named."""
    return declare.flag(
        name,
        help,
        panel=panel,
        metavar=metavar,
        short=short,
        show_default=show_default,
        choices=choices,
    )


@dataclass
class WatchOptions:
    """What ``whilecli watch`` reads besides the run directory. Validates itself."""

    follow: bool = field(
        default=False,
        metadata=flag(
            "--follow", "Keep polling for new steps (Ctrl-C ends); without it, report the"
            " steps on disk and exit.", short="-f",
        ),
    )  # fmt: skip
    interval: float = field(
        default=2.0,
        metadata=flag(
            "--interval",
            f"Seconds between two polls under --follow ({MIN_INTERVAL_S:g} to a year).",
            metavar="S",
        ),
    )
    idle_exit: float | None = field(
        default=None,
        metadata=flag(
            "--idle-exit",
            "Under --follow, exit 0 after S seconds without a new step (at most a year).",
            metavar="S",
            show_default="never",
        ),
    )
    layout: str = field(
        default="auto",
        metadata=flag(
            "--layout",
            "The trainer that writes RUN_DIR: prime-rl (metrics.jsonl + rollouts/step_N/),"
            " verl (trainer.rollout_data_dir: N.jsonl per step), or auto (detect).",
            choices=LAYOUTS,
        ),
    )
    split: str = field(
        default="train",
        metadata=flag("--split", "prime-rl: the train or the eval rollouts.", choices=SPLITS),
    )
    window: int = field(
        default=3,
        metadata=flag(
            "--window",
            "Steps pooled for the route behind the alerts (the band over the last N steps).",
            metavar="N",
        ),
    )
    max_errors: float = field(
        default=0.1,
        metadata=flag(
            "--max-errors",
            "Alert when more than this share of the replies over the window are errors.",
            metavar="F",
        ),
    )
    fail_on: tuple[str, ...] = field(
        default=(),
        metadata=flag(
            "--fail-on",
            f"Exit 1 when one of these alerts fires (comma-separated, repeatable):"
            f" {', '.join(ALERTS)}; all; none. Under --follow, exit at the first.",
            metavar="ALERTS",
            show_default="none",
        ),
    )
    trend: int = field(
        default=12,
        metadata=flag("--trend", "Steps in the pass@1 sparkline.", metavar="N", panel="Output"),
    )
    format: str = field(
        default="text",
        metadata=flag(
            "--format",
            "text (a few lines per step) or json (one object per line and step).",
            panel="Output",
            choices=FORMATS,
        ),
    )
    seed: int = 0
    """Seed of the bootstrap intervals (the route's)."""
    bootstrap_draws: int = 2000
    """Resamples of each bootstrap interval (the route's)."""

    def __post_init__(self) -> None:
        self.fail_on = parse_fail_on(self.fail_on)
        if self.layout not in LAYOUTS:
            raise UsageError(f"--layout {self.layout!r}: one of {', '.join(LAYOUTS)}")
        if self.split not in SPLITS:
            raise UsageError(f"--split {self.split!r}: one of {', '.join(SPLITS)}")
        if self.format not in FORMATS:
            raise UsageError(f"--format {self.format!r}: one of {', '.join(FORMATS)}")
        seconds("--interval", self.interval, MIN_INTERVAL_S)
        if self.idle_exit is not None:
            seconds("--idle-exit", self.idle_exit, 0.0)
        if self.window < 1:
            raise UsageError(f"--window must be at least 1 step, got {self.window}")
        if not (math.isfinite(self.max_errors) and 0 <= self.max_errors < 1):
            raise UsageError(f"--max-errors must lie in [0, 1), got {self.max_errors}")
        if self.trend < 1:
            raise UsageError(f"--trend must be at least 1 step, got {self.trend}")
        # a window past any run's steps is every step (and fits a deque's length)
        self.window = min(self.window, MAX_STEPS)
        self.trend = min(self.trend, MAX_STEPS)


#: More steps than any run holds: --window and --trend past it mean every step.
MAX_STEPS = 2**31 - 1


def parse_fail_on(values: Any) -> tuple[str, ...]:
    """``["floor,errors", "all"]`` → the alert kinds, in :data:`ALERTS` order."""
    from whilecli.failon import parse_conditions

    if not isinstance(values, str):
        values = [str(v) for v in values or ()]
    return parse_conditions(values, ALERTS, kind="alert", command="watch")
