"""The Rich text report of ``whilecli route``: the answer first, then the evidence.

By default the report answers (DESIGN section 2, "The report answers first"): the verdict,
the plan, the deciding evidence with its interval and n, and what reading found that moves
the verdict, then one line of check statuses, what is needed and the held-out size: at
most :data:`BRIEF_LINES` lines at 80 columns. ``-v`` (``verbose``) prints everything after
the answer: every check with what it measured, the methods, the pass rates with the
histogram, needs, what to do before the GPU, where each field came from, notes and
warnings. Markup is off (user strings print as typed), and a console that is not a terminal
is 100 columns wide, so the output is deterministic.
"""

from __future__ import annotations

import io
import os
import re
import sys
import textwrap
from collections.abc import Mapping
from typing import IO, Any

from rich.console import Console
from rich.text import Text

from whilecli import textstyle
from whilecli.route.drill import show_sections
from whilecli.route.model import CheckResult, Route, Status, requirements
from whilecli.route.report import (
    STATUS_WORDS,
    bar,
    evidence_items,
    exit_line,
    format_value,
    histogram_bins,
    histogram_title,
    measured_lines,
    method_label,
    quality_lines,
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


def console_width(default: int = 100) -> int:
    """The report's width off a terminal: ``COLUMNS`` when it is a positive integer, else
    ``default``, so a pipe or a file gets the same report every time."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        return default
    return columns if columns > 0 else default


def make_console(file: IO[str] | None = None, *, width: int | None = None) -> Console:
    """A console for the report: the terminal's width on a terminal, else ``width`` columns
    (default :func:`console_width`); honours NO_COLOR."""
    out = file if file is not None else sys.stdout
    is_tty = bool(getattr(out, "isatty", lambda: False)())
    return _Console(
        file=out,
        width=None if is_tty else (width or console_width()),
        no_color=bool(os.environ.get("NO_COLOR")),
        markup=False,
        highlight=False,
        emoji=False,
        soft_wrap=False,
    )


def text_to_string(route: Route, *, width: int = 100, verbose: bool = False) -> str:
    """The text report as a plain string (no colour), ``width`` columns wide."""
    buffer, console = text_console(width)
    render_text(route, console, verbose=verbose)
    return buffer.getvalue()


def text_console(width: int | None = None) -> tuple[io.StringIO, Console]:
    """A plain console (no colour) writing into a string, ``width`` (default
    :func:`console_width`) columns wide."""
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=width or console_width(),
        color_system=None,
        force_terminal=False,
        markup=False,
        highlight=False,
        emoji=False,
        soft_wrap=False,
    )
    return buffer, console


#: The most lines the report prints without ``-v`` (``--show`` lists come after them).
BRIEF_LINES = 25
#: The program's name in every report's first line.
PROGRAM = "whilecli"


def render_text(route: Route, console: Console, *, verbose: bool = False) -> None:
    """Print the report to ``console``: the answer (at most :data:`BRIEF_LINES` lines), and
    with ``verbose`` everything else."""
    if not verbose:
        for line in brief_lines(route, console.width):
            _print(console, line)
        show_text(route.show, console)
        return
    _verdict(route, console)
    _evidence(route, console)
    _quality(route, console)
    _checks(route.checks, console, route.warnings)
    _methods(route, console)
    _histogram(route.summary, console)
    _requirements(console, route.needs, route.route)
    _before_gpu(route.before_gpu, console)
    _sources(route.inputs, console)
    _said(console, "note", route.notes, "")
    _said(console, "warning", route.warnings, "yellow")
    show_text(route.show, console)


def show_string(show: Mapping[str, Any], width: int) -> str:
    """The ``--show`` lists as plain text, ``width`` columns wide."""
    buffer, console = text_console(width)
    show_text(show, console)
    return buffer.getvalue()


def show_text(show: Mapping[str, Any], console: Console) -> None:
    """``--show``: each count asked for, then one line per task (where its first row is)."""
    if not show:
        return
    _heading(console, "Tasks behind the counts (--show)")
    for head, items in show_sections(dict(show), keep_together):
        _say(console, head + (":" if items else ""), style="bold")
        for item in items:
            _say(console, item, indent=4, hang=2, bullet=True)


#: A Rate's spaces while a line is wrapped: textwrap breaks only at ASCII whitespace, so a
#: rate (``0.62 [0.50, 0.73] n=64 tasks (512 rows)``) is never cut across two lines.
_KEEP = "\u00a0"


def keep_together(text: str) -> str:
    """``text`` that a wrapped line never cuts (its spaces made unbreakable)."""
    return text.replace(" ", _KEEP)


def wrap(text: str, width: int, indent: int = 2, hang: int = 0, bullet: bool = False) -> list[str]:
    """``text`` wrapped at spaces to ``width`` columns: the first line indented ``indent``
    (``- `` after it for a bullet), the others ``indent + hang``. A word (a number, a path)
    is never split; a rate is never cut (:func:`keep_together`)."""
    lead = " " * indent + ("- " if bullet else "")
    lines = textwrap.wrap(
        text,
        width=max(width, len(lead) + 20),
        initial_indent=lead,
        subsequent_indent=" " * (indent + hang),
        break_long_words=False,
        break_on_hyphens=False,
    ) or [lead.rstrip()]
    return [line.replace(_KEEP, " ") for line in lines]


def path_lines(path: str, width: int, indent: int) -> list[str]:
    """A path on one line, or, when longer than the line, broken after a ``/`` (the rest
    indented two more), so a long path never runs past the width where it can be cut."""
    lead, more = " " * indent, " " * (indent + 2)
    lines: list[str] = []
    line = lead
    for part in path.split("/"):
        cut = len(line) + len(part) + 1 > width and line.strip()
        if cut:
            lines.append(line)
            line = more
        line += part + "/"
    lines.append(line[:-1])
    return lines


def _heading(console: Console, title: str) -> None:
    console.print()
    console.print(Text(title, style="bold underline"))


def _print(console: Console, line: str | Text) -> None:
    """One line as it is: already wrapped, so the console neither wraps nor pads it."""
    console.print(line, soft_wrap=True)


def _verdict(route: Route, console: Console) -> None:
    for line in _verdict_lines(route, console.width):
        _print(console, line)


#: Why a verdict is provisional when the brief has no room for the reasons.
PROVISIONAL_SHORT = "provisional: the evidence is thin; which, and what would make it firm, with -v"


def _verdict_lines(route: Route, width: int, *, why: bool = True, thin: bool = True) -> list[Text]:
    """The verdict, why it exits 1, why it is provisional (in a few words with ``thin``
    False), why (left out with ``why`` False: the checks say it under ``-v``), and the
    plan."""
    out: list[Text] = []
    reason = f"(route: {route_reason(route)})"
    word = "provisional: " if route.provisional else ""
    method = method_label(route.method)
    lead = f"{PROGRAM} route: "
    lines = wrap(f"{lead}{word}{method}  {reason}", width, indent=0, hang=2)
    first = Text(lines[0])
    first.stylize("bold", 0, len(lead))
    at = len(lead)
    if word:
        first.stylize("bold yellow", at, at + len(word))
    at += len(word)
    first.stylize("bold green" if route.method else "bold red", at, at + len(method))
    out.append(first)
    out += [Text(line) for line in lines[1:]]
    stop = exit_line(route)
    if stop:
        out += _texts(stop, width, indent=0, hang=2, style="bold red")
    if route.provisional_why:
        said = route.provisional_why if thin else PROVISIONAL_SHORT
        out += _texts(said, width, indent=0, hang=2, style="yellow")
    if why:
        out += _texts(route.why, width, indent=0, hang=2)
    if route.plan:
        steps = "  ".join(f"{i}. {step}" for i, step in enumerate(route.plan, 1))
        plan = _texts(f"Plan: {steps}", width, indent=0, hang=6)
        plan[0].stylize("bold", 0, len("Plan:"))
        out += plan
    return out


def _texts(text: str, width: int, indent: int = 2, hang: int = 0, style: str = "") -> list[Text]:
    return [Text(line, style=style) for line in wrap(text, width, indent=indent, hang=hang)]


def evidence_lines(route: Route) -> list[str]:
    """The deciding evidence, one line each (:func:`whilecli.route.report.evidence_items`),
    a rate never cut across two lines."""
    return evidence_items(route, keep_together)


#: Where a finding's first row is: the brief leaves it to ``-v`` when short of room.
_FIRST = re.compile(r" \(first: [^)]*\)")


def _quality_block(route: Route, width: int, level: int) -> list[Text]:
    """The data-quality findings at ``level``: 0 each with what it moves, 1 what was found
    only, 2 one line naming the findings (each one's sentence under ``-v``)."""
    found = quality_lines(route)
    short = [_FIRST.sub("", f.found) for f in route.data_quality]
    if not found:
        quality = [Text("Data quality: nothing found that moves the verdict")]
    elif level >= 2:
        head = f"Data quality (moves the verdict; how, with -v): {'; '.join(short)}"
        quality = [Text(x, style="yellow") for x in wrap(head, width, indent=0, hang=2)]
    else:
        quality = [Text("Data quality (moves the verdict):", style="bold")]
        for item in found if level == 0 else short:
            quality += [Text(x, style="yellow") for x in wrap(item, width, hang=2, bullet=True)]
    quality[0].stylize("bold", 0, len("Data quality"))
    return quality


def check_summary(route: Route) -> str:
    """Every check's status on one line: ``1 pass, 2 pass, 3 fail → floor, 4 not asked``."""
    parts = []
    for i, check in enumerate(route.checks, 1):
        word = STATUS_WORDS[check.status]
        if check.decides:
            word += f" → {check.decides}"
        parts.append(keep_together(f"{i} {word}"))
    return "Checks: " + ", ".join(parts)


def brief_lines(route: Route, width: int) -> list[Text]:
    """The answer, at most :data:`BRIEF_LINES` lines: the verdict and plan, the deciding
    evidence and the data-quality findings always (shortened, most detail first, until they
    fit), then the checks on one line, what is needed, the held-out size and the warnings
    while they fit; what does not fit is left to ``-v`` and says so."""
    evidence = [Text("Evidence:", style="bold")]
    for line in evidence_lines(route):
        evidence += _texts(line, width, indent=2, hang=4)
    more = Text("More: every check, the methods and the sources with -v (--verbose).", style="dim")
    # the answer itself, shortened until it fits: the findings' detail, then the why
    levels = ((True, 0, True), (True, 1, True), (True, 2, True), (False, 2, True))
    for why, level, thin in (*levels, (False, 2, False)):
        head = _verdict_lines(route, width, why=why, thin=thin)
        answer = head + evidence + _quality_block(route, width, level)
        if len(answer) + 1 <= BRIEF_LINES:
            break
    blocks: list[list[Text]] = [_texts(check_summary(route), width, indent=0, hang=2)]
    if route.needs:
        blocks.append(
            _texts(f"Needs: {needs_line(route.needs, route.route)}", width, indent=0, hang=2)
        )
    advice = route.before_gpu.get("random_control") if route.before_gpu else None
    if isinstance(advice, (list, tuple)) and advice:
        first = str(advice[0])
        first = first[:1].lower() + first[1:]
        blocks.append(_texts(f"Before the GPU: {first}", width, indent=0, hang=2))
    for warning in route.warnings:
        blocks.append(_texts(textstyle.warning(warning), width, indent=0, hang=2, style="yellow"))
    room = BRIEF_LINES - len(answer) - 1
    out = list(answer)
    left = 0
    for block in blocks:
        if left or len(block) > room:
            left += 1
            continue
        out += block
        room -= len(block)
    if left:
        more = Text(
            f"More: {left} more item(s) and every check, the methods and the sources"
            " with -v (--verbose).",
            style="dim",
        )
        if len(wrap(more.plain, width, indent=0)) > 1:
            more = Text(f"More: {left} more with -v (--verbose).", style="dim")
    out.append(more)
    return out


def needs_line(needs: Mapping[str, Any], route: str | None = None) -> str:
    """What is needed on one line, each requirement apart (:func:`whilecli.route.model.
    requirements`): ``k=8 rollouts per task; 120 tasks``."""
    return "; ".join(requirements(needs, route))


def _evidence(route: Route, console: Console) -> None:
    _heading(console, "Evidence")
    for line in evidence_lines(route):
        _say(console, line, hang=4)


def _quality(route: Route, console: Console) -> None:
    _heading(console, "Data quality")
    found = quality_lines(route)
    if not found:
        _say(console, "nothing found that moves the verdict")
    for item in found:
        _say(console, item, style="yellow", hang=2, bullet=True)


def _status(check: CheckResult) -> Text:
    status = Text(STATUS_WORDS[check.status], style=STATUS_STYLES[check.status])
    if not check.reached and check.status is not Status.NOT_REACHED:
        status.append(" (context)", style="dim")
    if check.decides:
        status.append(f" → {check.decides}", style="bold")
    return status


def _checks(checks: list[CheckResult], console: Console, listed: list[str]) -> None:
    """Each check: number, question and status on one line; then why and what it measured,
    one value a line. A warning is printed once: among the ``warning:`` lines when the route
    lists it (``listed``), else under its check."""
    _heading(console, "Checks")
    for i, check in enumerate(checks, 1):
        status = _status(check)
        lead = f"{i}. {check.title}"
        head = wrap(f"{lead}  {keep_together(status.plain)}", console.width, hang=3)
        for line in head[:-1]:
            _print(console, Text(line))
        last = Text(head[-1])
        at = head[-1].rfind(status.plain)
        if at >= 0:
            for span in status.spans:
                last.stylize(span.style, at + span.start, at + span.end)
            last.stylize(STATUS_STYLES[check.status], at, at + len(STATUS_WORDS[check.status]))
        _print(console, last)
        _say(console, check.why, indent=5, hang=2)
        for label, value in measured_lines(check.measured, check.key):
            _say(console, f"{label}: {keep_together(value)}", indent=5, hang=4, style="dim")
        for warning in check.warnings:
            if warning not in listed:
                _say(console, textstyle.warning(warning), indent=5, hang=2, style="yellow")


def _methods(route: Route, console: Console) -> None:
    """One method a line: name, ok or no, why (wrapped under the why)."""
    _heading(console, "Methods")
    name_width = max((len(m.name) for m in route.methods), default=0)
    for score in route.methods:
        fits = "ok" if score.ok else "no"
        lead = f"{score.name:<{name_width}}  {fits}  "
        lines = wrap(lead + score.why, console.width, hang=len(lead))
        first = Text(lines[0])
        start = 2
        if score.name == route.method:
            first.stylize("bold", start, start + len(score.name))
        at = start + name_width + 2
        first.stylize("green" if score.ok else "red", at, at + 2)
        _print(console, first)
        for line in lines[1:]:
            _print(console, Text(line))


def _histogram(summary: Mapping[str, Any], console: Console) -> None:
    _heading(console, "Pass rates")
    for label, value in summary_lines(summary):
        _say(console, f"{label}: {keep_together(value)}", hang=4)
    rows = histogram_bins(summary.get("histogram"))
    if not rows:
        return
    _print(console, Text(f"  {histogram_title(summary.get('histogram'))}:", style="bold"))
    biggest = max(count for _, count in rows)
    label_width = max(len(label) for label, _ in rows)
    count_width = max(len(str(count)) for _, count in rows)
    for label, count in rows:
        drawn = bar(count, biggest)
        line = Text(f"    {label:>{label_width}}  {count:>{count_width}}" + ("  " if drawn else ""))
        line.append(drawn, style="cyan")
        _print(console, line)


def _say(
    console: Console,
    text: str,
    indent: int = 2,
    style: str = "",
    hang: int = 0,
    bullet: bool = False,
) -> None:
    """Print ``text`` wrapped to the console's width, indented; wrapped lines keep the
    indent plus ``hang``."""
    for line in wrap(text, console.width, indent=indent, hang=hang, bullet=bullet):
        _print(console, Text(line, style=style))


def _requirements(console: Console, needs: Mapping[str, Any], route: str) -> None:
    """The requirement, one plain phrase a line (:func:`whilecli.route.model.requirements`)."""
    if not needs:
        return
    _heading(console, "Needs")
    for item in requirements(needs, route):
        _say(console, item, indent=2, hang=2)


def _before_gpu(before: Mapping[str, Any], console: Console) -> None:
    if not before:
        return
    _heading(console, "Before the GPU")
    advice = before.get("random_control")
    if isinstance(advice, (list, tuple)) and advice:  # its first line says the holdout size
        for item in advice:
            _say(console, str(item), indent=2, hang=2, bullet=True)
        return
    for key, value in before.items():
        _say(console, f"{key}: {format_value(value)}", hang=2)


def _sources(inputs: Mapping[str, Any], console: Console, indent: int = 2) -> None:
    if not inputs:
        return
    if indent == 2:
        _heading(console, "Sources")
    for key, value in inputs.items():
        if key == "paths" and isinstance(value, (list, tuple)):
            _say(console, f"{key}:", indent=indent)
            for path in value:
                for line in path_lines(str(path), console.width, indent + 2):
                    _print(console, Text(line))
        elif isinstance(value, Mapping) and key == "sources":
            for field, column in value.items():
                _say(console, f"{field} ← {format_value(column)}", indent=indent)
        elif isinstance(value, Mapping):
            _say(console, f"{key}:", indent=indent)
            _sources(value, console, indent=indent + 2)
        else:
            _say(console, f"{key}: {format_value(value)}", indent=indent)


def _said(console: Console, kind: str, lines: list[str], style: str) -> None:
    """``note: ...`` or ``warning: ...`` lines after a blank line: the one style every
    command's report says them in (:func:`whilecli.textstyle.said`)."""
    if not lines:
        return
    console.print()
    for line in lines:
        _say(console, textstyle.saying(kind, line), indent=0, style=style, hang=2)
