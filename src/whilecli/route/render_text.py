"""The Rich text report of ``while route``: verdict first, then the evidence.

Order: the verdict (route, method, why, plan), the six checks, the methods, the per-task
pass-rate histogram with the headline rates, needs, what to do before the GPU, where each
field came from, notes and warnings. Markup is off (user strings print as typed), and a
console that is not a terminal is 100 columns wide, so the output is deterministic.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Mapping
from typing import IO, Any

from rich import box
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from whilecli.route.model import CheckResult, Route, Status
from whilecli.route.report import (
    STATUS_WORDS,
    bar,
    exit_line,
    flatten,
    format_value,
    histogram_bins,
    histogram_title,
    method_label,
    route_reason,
    summary_lines,
)

STATUS_STYLES: dict[Status, str] = {
    Status.PASS: "green",
    Status.FAIL: "bold red",
    Status.UNKNOWN: "yellow",
    Status.NOT_REACHED: "dim",
    Status.NOT_ASKED: "dim",
}


class _Console(Console):
    """Rich's console, but a closed pipe raises ``BrokenPipeError`` (rich exits 1 itself),
    so the command ends quietly with 141, as DESIGN section 2 says."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError


def make_console(file: IO[str] | None = None, *, width: int = 100) -> Console:
    """A console for the report: ``width`` columns unless writing to a terminal; honours NO_COLOR."""
    out = file if file is not None else sys.stdout
    is_tty = bool(getattr(out, "isatty", lambda: False)())
    return _Console(
        file=out,
        width=None if is_tty else width,
        no_color=bool(os.environ.get("NO_COLOR")),
        markup=False,
        highlight=False,
        emoji=False,
        soft_wrap=False,
    )


def text_to_string(route: Route, *, width: int = 100) -> str:
    """The text report as a plain string (no colour), ``width`` columns wide."""
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=width,
        color_system=None,
        force_terminal=False,
        markup=False,
        highlight=False,
        emoji=False,
        soft_wrap=False,
    )
    render_text(route, console)
    return buffer.getvalue()


def render_text(route: Route, console: Console) -> None:
    """Print the whole report to ``console``."""
    _verdict(route, console)
    _checks(route.checks, console)
    _methods(route, console)
    _histogram(route.summary, console)
    _section(console, "Needs", route.needs)
    _before_gpu(route.before_gpu, console)
    _sources(route.inputs, console)
    _lines(console, "Notes", route.notes, "")
    _lines(console, "Warnings", route.warnings, "yellow")


def _heading(console: Console, title: str) -> None:
    console.print()
    console.print(Text(title, style="bold underline"))


def _verdict(route: Route, console: Console) -> None:
    head = Text("while route: ", style="bold")
    if route.provisional:
        head.append("provisional: ", style="bold yellow")
    head.append(method_label(route.method), style="bold green" if route.method else "bold red")
    head.append(f"  (route: {route_reason(route)})")
    console.print(head)
    stop = exit_line(route)
    if stop:
        console.print(Text(stop, style="bold red"))
    if route.provisional_why:
        console.print(Text(route.provisional_why, style="yellow"))
    console.print(Text(route.why))
    if route.plan:
        console.print(Text("Plan:", style="bold"))
        for i, step in enumerate(route.plan, 1):
            _say(console, f"{i}. {step}")


def _check_cells(check: CheckResult) -> tuple[Text, Text, Text]:
    status = Text(STATUS_WORDS[check.status], style=STATUS_STYLES[check.status])
    if not check.reached and check.status is not Status.NOT_REACHED:
        status.append("\n(context)", style="dim")
    if check.decides:
        status.append(f"\n→ {check.decides}", style="bold")
    measured = Text("\n".join(f"{k}: {v}" for k, v in flatten(check.measured)))
    why = Text(check.why)
    for warning in check.warnings:
        why.append(f"\nwarning: {warning}", style="yellow")
    return status, measured, why


def _checks(checks: list[CheckResult], console: Console) -> None:
    _heading(console, "Checks")
    table = Table(box=box.SIMPLE_HEAD, show_lines=False, expand=True, pad_edge=False)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("check", ratio=3)
    table.add_column("status", no_wrap=True)
    table.add_column("measured", ratio=6)
    table.add_column("why", ratio=5)
    for i, check in enumerate(checks, 1):
        status, measured, why = _check_cells(check)
        table.add_row(Text(str(i)), Text(check.title), status, measured, why)
    console.print(table)


def _methods(route: Route, console: Console) -> None:
    _heading(console, "Methods")
    table = Table(box=box.SIMPLE_HEAD, expand=True, pad_edge=False)
    table.add_column("method", no_wrap=True)
    table.add_column("fits", no_wrap=True)
    table.add_column("why", ratio=1)
    for score in route.methods:
        name = Text(score.name, style="bold" if score.name == route.method else "")
        fits = Text("ok", style="green") if score.ok else Text("no", style="red")
        table.add_row(name, fits, Text(score.why))
    console.print(table)


def _histogram(summary: Mapping[str, Any], console: Console) -> None:
    _heading(console, "Pass rates")
    for label, value in summary_lines(summary):
        _say(console, f"{label}: {value}")
    rows = histogram_bins(summary.get("histogram"))
    if not rows:
        return
    console.print(Text(f"  {histogram_title(summary.get('histogram'))}:", style="bold"))
    biggest = max(count for _, count in rows)
    label_width = max(len(label) for label, _ in rows)
    count_width = max(len(str(count)) for _, count in rows)
    for label, count in rows:
        line = Text(f"    {label:>{label_width}}  {count:>{count_width}}  ")
        line.append(bar(count, biggest), style="cyan")
        console.print(line)


def _say(console: Console, text: str, indent: int = 2, style: str = "", hang: int = 0) -> None:
    """Print ``text`` indented; wrapped lines keep the indent (plus ``hang`` for bullets)."""
    body = Text(text, style=style)
    console.print(
        Padding(body, (0, 0, 0, indent + hang), expand=False)
        if not hang
        else _hanging(body, indent, hang)
    )


def _hanging(body: Text, indent: int, hang: int) -> Table:
    """A bullet with a hanging indent: marker column, then the wrapped text."""
    grid = Table.grid(padding=(0, 0))
    grid.add_column(width=indent + hang, no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_row(Text(" " * indent + "- "), body)
    return grid


def _section(console: Console, title: str, mapping: Mapping[str, Any]) -> None:
    if not mapping:
        return
    _heading(console, title)
    for label, value in flatten(mapping):
        _say(console, f"{label}: {value}")


def _before_gpu(before: Mapping[str, Any], console: Console) -> None:
    if not before:
        return
    _heading(console, "Before the GPU")
    for key, value in before.items():
        if isinstance(value, (list, tuple)):
            _say(console, f"{key}:")
            for item in value:
                _say(console, format_value(item), indent=4, hang=2)
        else:
            _say(console, f"{key}: {format_value(value)}")


def _sources(inputs: Mapping[str, Any], console: Console, indent: int = 2) -> None:
    if not inputs:
        return
    if indent == 2:
        _heading(console, "Sources")
    for key, value in inputs.items():
        if isinstance(value, Mapping) and key == "sources":
            for field, column in value.items():
                _say(console, f"{field} ← {format_value(column)}", indent=indent)
        elif isinstance(value, Mapping):
            _say(console, f"{key}:", indent=indent)
            _sources(value, console, indent=indent + 2)
        else:
            _say(console, f"{key}: {format_value(value)}", indent=indent)


def _lines(console: Console, title: str, lines: list[str], style: str) -> None:
    if not lines:
        return
    _heading(console, title)
    for line in lines:
        _say(console, line, style=style, hang=2)
