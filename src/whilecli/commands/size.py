"""``whilecli size``: how many held-out tasks it takes to see a gain, before the GPU.

From assumptions (DESIGN section 2): n = ⌈((z₁₋α/₂ + z_power)·sd/effect)²⌉ with
sd = √((p(1−p) + q(1−q))/k), p = ``--base``, q = p + ``--effect``; 367 tasks at effect 0.05
with the defaults (base 0.6, k 4, power 0.8, alpha 0.05), half-width 0.035. This is
:func:`whilecli.route.stats.holdout_size`, the same function as the route report's "before
the GPU" section. With ``--before ROWS --after ROWS`` (two dumps of the same tasks) the sd is
measured instead: the sample sd of the per-task differences, with a bootstrap range of n
(:func:`whilecli.route.paired.paired_size`).
"""

from __future__ import annotations

import math
import sys
from typing import Any

import typer

from whilecli import jsonout
from whilecli.commands import route as route_cmd
from whilecli.commands._common import (
    DRAWS,
    SEED,
    STEP,
    check_draws,
    check_exists,
    check_seed,
    choice,
    user_errors,
)
from whilecli.errors import UsageError

#: The help panel of the assumptions a held-out test is sized from.
DESIGN = "Design"
#: The smallest gain ``size`` sizes for: below it the count runs to millions of tasks (and
#: at 1e-300 past any float), which no held-out test has.
MIN_EFFECT = 1e-3
#: How close to 0 or 1 power and alpha may come: the normal quantile of 1 - 1e-300 is 1.0's.
EDGE = 1e-9


def _validate(effect: float, base: float, k: int, power: float, alpha: float) -> None:
    """Refuse designs that cannot be (DESIGN section 2): base and base + effect inside (0, 1),
    power and alpha inside (0, 1), an effect of at least :data:`MIN_EFFECT`."""
    if not (math.isfinite(effect) and 0 < effect <= 1):
        raise UsageError(f"--effect must lie in (0, 1], got {effect}")
    if effect < MIN_EFFECT:
        raise UsageError(
            f"--effect {effect:g} is too small to size for: a gain under {MIN_EFFECT:g} in"
            " pass@1 needs millions of tasks"
        )
    if not (math.isfinite(base) and 0 < base < 1):
        raise UsageError(f"--base must lie in (0, 1), got {base}")
    if not base + effect < 1:
        raise UsageError(
            f"--base {base:g} + --effect {effect:g} = {base + effect:g}: the improved pass rate"
            " must lie in (0, 1)"
        )
    if k < 1:
        raise UsageError(f"--k must be at least 1, got {k}")
    for flag, value in (("--power", power), ("--alpha", alpha)):
        if not (math.isfinite(value) and 0 < value < 1):
            raise UsageError(f"{flag} must lie in (0, 1), got {value}")
        if not EDGE <= value <= 1 - EDGE:
            raise UsageError(
                f"{flag} {value!r} is too close to {0 if value < 0.5 else 1} to size for"
                f" (use a value in [{EDGE:g}, 1 - {EDGE:g}])"
            )


#: Beside the sd where the draws' noise gives it (:attr:`MeasuredSize.from_draws`).
DRAWS_NOISE = " (the draws' noise: see the note)"


def size_report(
    holdout: Any,
    measured: Any | None,
    fmt: str,
    warnings: list[str] | None = None,
    pairing: Any | None = None,
) -> str:
    """The text or JSON report: the measured size first when two dumps were given, then the
    size the model assumes, then what reading the dumps found (``warnings``; ``pairing``:
    where the two dumps' tasks fall, :class:`whilecli.route.shared.Tally`)."""
    warnings = list(warnings or [])
    if fmt == "json":
        out: dict[str, Any] = {"holdout": holdout.to_dict()}
        if measured is not None:
            out["measured"] = measured.to_dict()
            if pairing is not None:
                out["pairing"] = pairing.to_dict("before", "after")
            out["warnings"] = warnings
        return jsonout.dumps(jsonout.versioned(out), indent=2) + "\n"
    from whilecli import textstyle

    h = holdout
    design = f"at power {h.power:g} (two-sided alpha {h.alpha:g})"
    num = textstyle.fraction
    assumed = f"from base {h.base:g}: sd {num(h.sd)} per task, half-width {num(h.half_width)}."
    if measured is None:
        lines = [
            f"Hold out {h.n} tasks (k={h.k} rollouts each) to see a gain of {h.effect:g} in "
            f"pass@1 {design}, {assumed}"
        ]
    else:
        m = measured
        rng = (
            f"[{m.low}, {m.high}] (95% range over tasks)"
            if m.low is not None
            else f"(no range: {m.why_no_range})"
        )
        lines = [
            f"Hold out {m.n} tasks {rng} to see a gain of {h.effect:g} in pass@1 {design}, "
            f"measured on {m.paired_tasks} paired tasks: sd {num(m.sd)} of the per-task "
            f"differences{'' if m.from_draws is None else DRAWS_NOISE},"
            f" half-width {num(m.half_width)}.",
            f"Assumed, without the dumps: {h.n} tasks (k={h.k} rollouts each) {assumed}",
        ]
        if pairing is not None:
            lines.insert(1, f"Tasks: {pairing.words('before', 'after')}.")

    columns = textstyle.width(sys.stdout)
    wrapped = [w for line in lines for w in textstyle.wrap(line, columns)]
    if measured is not None and measured.from_draws is not None:
        wrapped += textstyle.said("note", [measured.from_draws], columns)
    if measured is None and h.caveat is not None:
        wrapped += textstyle.said("note", [h.caveat], columns)
    wrapped += textstyle.said("warning", warnings, columns)
    return "\n".join(wrapped) + "\n"


@user_errors
def size_command(
    effect: float = typer.Option(
        0.05, "--effect", metavar="F", help="The gain in pass@1 to see.", rich_help_panel=DESIGN
    ),
    base: float = typer.Option(
        0.6, "--base", metavar="P", help="The assumed base pass rate.", rich_help_panel=DESIGN
    ),
    k: int = typer.Option(
        4, "--k", metavar="K", help="Rollouts per held-out task.", rich_help_panel=DESIGN
    ),
    power: float = typer.Option(
        0.8, "--power", metavar="F", help="Power of the comparison.", rich_help_panel=DESIGN
    ),
    alpha: float = typer.Option(
        0.05, "--alpha", metavar="F", help="Two-sided level.", rich_help_panel=DESIGN
    ),
    before: str | None = typer.Option(
        None,
        "--before",
        metavar="ROWS",
        help="A dump before the change (with --after).",
        rich_help_panel="Inputs",
    ),
    after: str | None = typer.Option(
        None,
        "--after",
        metavar="ROWS",
        help="A dump after the change, of the same tasks.",
        rich_help_panel="Inputs",
    ),
    pass_threshold: float | None = route_cmd.PASS_THRESHOLD,
    mapping: list[str] | None = route_cmd.MAPPING,
    step: int | None = STEP,
    input_format: str | None = route_cmd.INPUT_FORMAT,
    output: str = typer.Option(
        "text",
        "--format",
        click_type=choice("text", "json", message="--format {value!r}: use text or json"),
        help="Report format.",
        rich_help_panel="Output",
    ),
    seed: int = SEED,
    draws: int = DRAWS,
    missing: str = route_cmd.MISSING,
) -> None:
    """Size the held-out test: tasks to see a gain of --effect, from assumptions or two dumps."""
    _validate(effect, base, k, power, alpha)
    fmt = output.lower()
    if fmt not in ("text", "json"):
        raise UsageError(f"--format {output!r}: use text or json")
    if (before is None) != (after is None):
        raise UsageError("--before and --after go together: two dumps of the same tasks")
    check_exists(before)  # before the reader loads
    check_exists(after)
    check_seed(seed)
    check_draws(draws)
    from whilecli.route.stats import holdout_size  # polars, numpy, scipy: after the checks

    holdout = holdout_size(effect, base=base, k=k, power=power, alpha=alpha)
    measured = None
    warnings: list[str] = []
    pairing = None
    if before is not None and after is not None:
        from whilecli.commands.diff import dump_warnings, paired_dumps
        from whilecli.route.paired import paired_size

        if before == "-" and after == "-":
            raise UsageError("stdin (-) can feed --before or --after, not both")
        read: dict[str, Any] = {
            "mapping": mapping,
            "pass_threshold": pass_threshold,
            "input_format": input_format,
            "missing": missing,
        }
        dumps = paired_dumps(before, after, **read)
        warnings, pairing = dump_warnings(dumps), dumps[1].pairing
        measured = paired_size(
            dumps[0].tasks,
            dumps[1].tasks,
            effect,
            power=power,
            alpha=alpha,
            draws=draws,
            seed=seed,
        )
    sys.stdout.write(size_report(holdout, measured, fmt, warnings, pairing))
    sys.stdout.flush()
