"""How ``whilecli watch`` prints a step: a few text lines (80 columns) or one JSON object.

The text lines, every rate as the route prints it (``0.42 [0.35, 0.49] n=64 tasks (256
rows)``: the value, its 95% interval and the unit ``n=`` counted)::

        7  pass@1 0.42 [0.35, 0.49] n=64 tasks (256 rows)  ▃▄▅▆▇
           split 0.61 [0.49, 0.72] n=64 tasks (256 rows); zero-adv 0.39 [0.33, 0.45]
             n=256 rows; truncated 0.02 [0.01, 0.04] n=256 rows, 0 passing; errors 0;
             lag 1.0

``split``: share of grouped tasks with a pass and a fail; ``zero-adv``: share of rollouts
with zero advantage; ``truncated``: share of the rollouts that record truncation, and how many
cut-off rollouts passed; ``errors``: error replies; ``lag``: mean off-policy steps; the
sparkline: pass@1 of the last steps, ▁ at 0 to █ at 1. ``not recorded``: the rows do not
say. A step reported late or read again says so in a ``note: ...`` line; alerts follow their
step, prefixed with ``!``; what reading found that changes what the numbers mean follows as
``warning: ...`` lines, the style of every command's report. What the watch says between
steps (the run restarted, ``metrics.jsonl`` was replaced, steps on disk not reported) are
``note: ...`` lines of their own.
"""

from __future__ import annotations

import textwrap
from typing import Any

from whilecli import jsonout, textstyle
from whilecli.route.model import Rate
from whilecli.watch.alerts import Alert, WindowRoute
from whilecli.watch.steps import StepStats

WIDTH = 80
BLOCKS = "▁▂▃▄▅▆▇█"


def header(root: str, layout: str, split: str, window: int) -> list[str]:
    """The lines before the first step."""
    what = f"{layout}, {split} rollouts" if layout == "prime-rl" else layout
    title = f"watching {root} ({what}, alerts over {window} steps)"
    return textwrap.wrap(title, WIDTH, subsequent_indent="  ", break_on_hyphens=False)


def sparkline(values: list[float | None]) -> str:
    """One block per value, ▁ at 0 to █ at 1 (a blank where there is none)."""
    out = []
    for v in values:
        out.append(" " if v is None else BLOCKS[min(len(BLOCKS) - 1, max(0, int(v * len(BLOCKS))))])
    return "".join(out)


def _rate(rate: Rate | None) -> str:
    """A rate as the route prints it, or ``not recorded``."""
    return "not recorded" if rate is None or rate.value is None else rate.format()


def _lag(off: dict[str, Any] | None) -> str:
    if not off or not isinstance(off.get("mean"), (int, float)):
        return "not recorded"
    return f"{off['mean']:.1f}"  # steps behind, not a rate


#: A space a wrapped line never breaks at: a rate is never cut across two lines.
_KEEP = "\u00a0"


def _wrapped(text: str, indent: int, hang: int = 2) -> list[str]:
    lines = textwrap.wrap(
        text,
        WIDTH,
        initial_indent=" " * indent,
        subsequent_indent=" " * (indent + hang),
        break_long_words=False,
        break_on_hyphens=False,
    )
    return [line.replace(_KEEP, " ") for line in lines]


def _measures(stats: StepStats) -> str:
    """The step's other rates, each kept whole on a line."""
    truncated = _rate(stats.truncated_share)
    if stats.truncated_passes is not None:
        truncated += f", {stats.truncated_passes} passing"
    errors = "not recorded" if stats.error_replies is None else str(stats.error_replies)
    if stats.error_replies and stats.error_share is not None:
        errors = _rate(stats.error_share)
    parts = [
        f"split {_rate(stats.split_share)}",
        f"zero-adv {_rate(stats.zero_advantage_share)}",
        f"truncated {truncated}",
        f"errors {errors}",
        f"lag {_lag(stats.off_policy)}",
    ]
    return "; ".join(p.replace(" ", _KEEP) for p in parts)


def step_lines(stats: StepStats, alerts: list[Alert], trend: list[float | None]) -> list[str]:
    """The text lines of one step: pass@1 and the trend, its other rates, its alerts and what
    reading found (``warning: ...``)."""
    if stats.rows == 0:
        lines = [f"{stats.step:>5}  {stats.note or 'nothing read'}"]
    else:
        lines = [f"{stats.step:>5}  pass@1 {_rate(stats.pass_at_1)}  {sparkline(trend)}".rstrip()]
        lines += _wrapped(_measures(stats), 7)
    if stats.remark:
        lines += _wrapped(textstyle.saying("note", stats.remark), 7)
    for alert in alerts:
        lines += _wrapped(f"! {alert.kind}: {alert.message}", 7)
    for said in stats.warnings:
        lines += _wrapped(textstyle.warning(said), 0)
    return lines


def notice(text: str) -> list[str]:
    """A line the watch says between steps (``note: ...``): a restart, a replaced file, the
    steps on disk it did not report."""
    return _wrapped(textstyle.saying("note", text), 0)


def step_json(
    stats: StepStats, window: WindowRoute | None, alerts: list[Alert], layout: str
) -> str:
    """One step as one line of JSON."""
    record: dict[str, Any] = {"schema_version": jsonout.SCHEMA_VERSION, "layout": layout}
    record.update(stats.to_dict())
    record["route"] = window.to_dict() if window is not None else None
    record["alerts"] = [a.to_dict() for a in alerts]
    return jsonout.dumps(record, ensure_ascii=False)


def closing(steps: int, fired: list[Alert]) -> str:
    """The last text line without ``--follow``: how many steps, which alerts fired where."""
    said = ", ".join(f"{a.kind} at step {a.step}" for a in fired) or "none"
    return f"{steps} step{'' if steps == 1 else 's'}; alerts: {said}"
