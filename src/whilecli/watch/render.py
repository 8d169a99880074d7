"""How ``whilecli watch`` prints a step: one text line (80 columns) or one JSON object.

The text line::

     step  pass@1 [95%]          split 0-adv trunc cut+  err  lag  trend
        7  0.42 [0.35, 0.49] n=64 0.61  0.39  0.02    0    0  1.0  ▃▄▅▆▇

``split``: share of grouped tasks with a pass and a fail; ``0-adv``: share of rollouts with
zero advantage; ``trunc``: truncated share; ``cut+``: truncated passes; ``err``: error
replies; ``lag``: mean off-policy steps; ``trend``: pass@1 of the last steps, ▁ at 0 to █ at
1. ``-``: not recorded. Alerts follow their step's line, prefixed with ``!``.
"""

from __future__ import annotations

import textwrap
from typing import Any

from whilecli import jsonout
from whilecli.route.model import Rate
from whilecli.watch.alerts import Alert, WindowRoute
from whilecli.watch.steps import StepStats

WIDTH = 80
BLOCKS = "▁▂▃▄▅▆▇█"
PASS_WIDTH = 23


def header(root: str, layout: str, split: str, window: int) -> list[str]:
    """The lines before the first step."""
    what = f"{layout}, {split} rollouts" if layout == "prime-rl" else layout
    head = (
        f"{'step':>5}  {'pass@1 [95%] n=tasks':<{PASS_WIDTH}} {'split':>5} {'0-adv':>5}"
        f" {'trunc':>5} {'cut+':>4} {'err':>4} {'lag':>4}  trend"
    )
    title = f"watching {root} ({what}, alerts over {window} steps)"
    return [*textwrap.wrap(title, WIDTH, subsequent_indent="  ", break_on_hyphens=False), head]


def sparkline(values: list[float | None]) -> str:
    """One block per value, ▁ at 0 to █ at 1 (a blank where there is none)."""
    out = []
    for v in values:
        out.append(" " if v is None else BLOCKS[min(len(BLOCKS) - 1, max(0, int(v * len(BLOCKS))))])
    return "".join(out)


def _rate(rate: Rate | None) -> str:
    return "-" if rate is None or rate.value is None else f"{rate.value:.2f}"


def _pass(rate: Rate | None) -> str:
    if rate is None or rate.value is None:
        return "-"
    if rate.low is None or rate.high is None:
        return f"{rate.value:.2f} [no interval] n={rate.n_tasks}"
    return f"{rate.value:.2f} [{rate.low:.2f}, {rate.high:.2f}] n={rate.n_tasks}"


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def _lag(off: dict[str, Any] | None) -> str:
    if not off or not isinstance(off.get("mean"), (int, float)):
        return "-"
    return f"{off['mean']:.1f}"


def step_lines(stats: StepStats, alerts: list[Alert], trend: list[float | None]) -> list[str]:
    """The text lines of one step: its numbers, then its alerts."""
    if stats.rows == 0:
        lines = [f"{stats.step:>5}  {stats.note or 'nothing read'}"]
    else:
        lines = [
            f"{stats.step:>5}  {_pass(stats.pass_at_1):<{PASS_WIDTH}}"
            f" {_rate(stats.split_share):>5} {_rate(stats.zero_advantage_share):>5}"
            f" {_rate(stats.truncated_share):>5} {_count(stats.truncated_passes):>4}"
            f" {_count(stats.error_replies):>4} {_lag(stats.off_policy):>4}  {sparkline(trend)}"
        ]
    for said in stats.warnings:
        lines += textwrap.wrap(
            f"warning: {said}",
            WIDTH,
            initial_indent=" " * 7,
            subsequent_indent=" " * 9,
            break_on_hyphens=False,
        )
    for alert in alerts:
        lines += textwrap.wrap(
            f"! {alert.kind}: {alert.message}",
            WIDTH,
            initial_indent=" " * 7,
            subsequent_indent=" " * 9,
            break_on_hyphens=False,
        )
    return lines


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
