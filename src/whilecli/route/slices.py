"""Routes of a pool taken apart: ``--by source`` (one route per input file) and ``--by COLUMN``
(one route per value of a column: a difficulty, a subset, an environment's name).

:func:`~whilecli.route.run_route` reads each slice's rows as a whole input
(:func:`whilecli.io.slices.read_slices`: its own data-quality findings, counts and file
positions) or each source apart (``--by source``), decides every slice with the same
options and returns :class:`Slices`: one summary table across slices, then each slice's
full Route. A slice its rows alone refuse (most replies errors, no graded row) is listed
as refused, with the one line that says why, beside the slices that route: one bad slice
does not hide the others. Every output format renders it (:func:`render_slices`, every slice
value escaped by :func:`shown`); the exit code is the worst slice's under the named policies
(``gates``), 2 where one is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from whilecli.errors import WhileError, shown_path
from whilecli.route.model import SCHEMA_VERSION, Route
from whilecli.route.policies import Gate, gated_exit_code, gated_report
from whilecli.route.render_markdown import annotation, escape_data, md_cell

#: One slice's report in a format, for :func:`render_slices` (the command's, with its gate).
Body = Callable[[str, Route], str]


@dataclass(frozen=True)
class Refused:
    """A slice its rows alone refuse: the error's one line, and the exit code it carries."""

    message: str
    exit_code: int = 2

    @classmethod
    def of(cls, err: WhileError) -> Refused:
        return cls(str(err), err.exit_code)

    def to_dict(self) -> dict[str, Any]:
        return {"refused": self.message, "exit_code": self.exit_code}


@dataclass
class Slices:
    """The route of every slice of a pool (or why it was refused), in the order the slices
    were found."""

    by: str  # "source" or the column
    routes: list[tuple[str, Route | Refused]]
    gates: dict[str, Gate] = field(default_factory=dict)  # the named policies on each slice

    def code_of(self, name: str, route: Route | Refused) -> int:
        """One slice's exit code: a refusal's, or its route's under its gate."""
        if isinstance(route, Refused):
            return route.exit_code
        return gated_exit_code(route, self.gates.get(name))

    @property
    def exit_code(self) -> int:
        """The worst slice's exit code, its gate counted: the process's."""
        return max((self.code_of(n, r) for n, r in self.routes), default=0)

    @property
    def shown_by(self) -> str:
        """The column's name as every text line shows it (:func:`shown`)."""
        return shown(self.by)

    def shown(self, name: str) -> str:
        """A slice's value as every text line shows it (:func:`shown`)."""
        return shown(name)

    def report_of(self, name: str, route: Route | Refused) -> dict[str, Any]:
        """One slice's JSON report: a refusal's, or its route's under its gate."""
        if isinstance(route, Refused):
            return route.to_dict()
        return gated_report(route, self.gates.get(name))

    @property
    def refused(self) -> list[tuple[str, Refused]]:
        """The slices refused, with why."""
        return [(name, r) for name, r in self.routes if isinstance(r, Refused)]

    def refusal_lines(self) -> list[str]:
        """One error line per refused slice, naming it (what the CLI prints on stderr)."""
        return [f"{r.message} (--by {self.shown_by}: {shown(name)})" for name, r in self.refused]

    def table(self) -> list[dict[str, Any]]:
        """One line per slice: what a reader compares across slices."""
        out: list[dict[str, Any]] = []
        for name, route in self.routes:
            if isinstance(route, Refused):
                out.append(
                    {
                        "slice": name,
                        "route": "refused",
                        "method": None,
                        "tasks": None,
                        "rows": None,
                        "k": None,
                        "pass_at_1": None,
                        "exit_code": route.exit_code,
                        "provisional": False,
                        "refused": route.message,
                    }
                )
                continue
            p1 = route.summary.get("pass_at_1")
            out.append(
                {
                    "slice": name,
                    "route": route.route,
                    "method": route.method,
                    "tasks": route.summary.get("tasks"),
                    "rows": route.summary.get("rows"),
                    "k": route.summary.get("k"),
                    "pass_at_1": None if p1 is None else p1.to_dict(),
                    "exit_code": self.code_of(name, route),
                    "provisional": route.provisional,
                }
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "by": self.by,
            "exit_code": self.exit_code,
            "summary": self.table(),
            "slices": [
                {"slice": name, **self.report_of(name, route)} for name, route in self.routes
            ],
        }


def shown(value: Any) -> str:
    """A slice value, a file name or the column as every format prints it: each control
    character (a newline, ESC) written as an escape (:func:`whilecli.errors.shown_path`, as
    error lines and file names are), so a data value never makes a line of its own; markdown
    and github escape the result further (:func:`md_cell`, :func:`annotation`)."""
    return shown_path(str(value))


def render_slices(
    slices: Slices,
    fmt: str,
    *,
    verbose: bool = False,
    quiet: bool = False,
    body: Body | None = None,
) -> str:
    """The report of every slice in ``fmt`` (text, json, markdown, github), the table first.

    Text: each slice's answer (``verbose``: its whole report); ``quiet``: the table, then one
    headline per slice with why it exits 1 and any ``--show`` lists. ``body`` renders one
    slice's route in ``fmt`` (the command passes its own, with the slice's gate). Every slice
    value and the column go through :func:`shown` and the format's escaping."""
    import json

    if fmt == "json":
        return json.dumps(slices.to_dict(), indent=2, allow_nan=False) + "\n"
    each = body or _default_body(fmt, verbose=verbose, quiet=quiet, by=slices.by)
    if fmt == "markdown":
        return _markdown(slices, each)
    if fmt == "github":
        return _github(slices, each)
    return _text(slices, each, quiet=quiet)


def _default_body(fmt: str, *, verbose: bool, quiet: bool, by: str) -> Body:
    """One slice's route in ``fmt`` with no gate (the report layer's own renderers)."""
    from whilecli.route.report import render

    def body(name: str, route: Route) -> str:
        if fmt != "text":
            return render(route, fmt)
        from whilecli.route.render_text import console_width, show_string, text_to_string

        if not quiet:
            return text_to_string(route, width=console_width(), verbose=verbose)
        said = [f"whilecli route ({shown(by)} {shown(name)}): {route.headline or route.why}"]
        said += [f"exit 1: {reason}" for reason in route.exit_reasons]
        text = "".join(f"{line}\n" for line in said)
        return text + (show_string(route.show, console_width()) if route.show else "")

    return body


def _markdown(slices: Slices, body: Body) -> str:
    """Markdown: the table of slices, then each slice's report under its heading."""
    by = md_cell(slices.shown_by)
    lines = [f"## Routes by {by}", "", "| slice | route | tasks | rows | pass@1 |", "|---|---|---|---|---|"]  # fmt: skip
    lines += [
        f"| {md_cell(shown(t['slice']))} | {_route_word(t)} | {_count(t['tasks'])} "
        f"| {_count(t['rows'])} | {_p1(t)} |"
        for t in slices.table()
    ]
    parts = [
        f"### {by}: {md_cell(shown(name))}\n\n**Refused:** {md_cell(route.message)}"
        if isinstance(route, Refused)
        else body(name, route)
        for name, route in slices.routes
    ]
    return "\n".join(lines) + "\n\n" + "\n\n".join(parts)


def _github(slices: Slices, body: Body) -> str:
    """Workflow commands: a notice per slice, then each slice's annotations, each message
    ending with the slice it is about (escaped as a message is)."""
    out: list[str] = []
    for t in slices.table():
        title = f"whilecli route ({slices.shown_by} {shown(t['slice'])})"
        out.append(annotation("notice", f"{_route_word(t)}: pass@1 {_p1(t)}", title=title))
    for name, route in slices.routes:
        title = f"whilecli route ({slices.shown_by} {shown(name)})"
        if isinstance(route, Refused):
            out.append(annotation("error", route.message, title=title))
            continue
        tag = escape_data(f" [{slices.shown_by} {shown(name)}]")
        out += [line + tag if line.startswith("::") else line
                for line in body(name, route).splitlines()]  # fmt: skip
    return "".join(f"{line}\n" for line in out)


def _text(slices: Slices, body: Body, *, quiet: bool) -> str:
    """Text: the table of slices, then each slice's report (``quiet``: its headline)."""
    table = slices.table()
    names = [shown(t["slice"]) for t in table]
    width = max(len(n) for n in names)
    head = [f"Routes by {slices.shown_by} ({len(table)} slices)"]
    routes = [_route_word(t) for t in table]
    column = max(15, *(len(r) for r in routes))
    head += [
        f"  {n.ljust(width)}  {r:<{column}} {_p1(t)}"
        for n, t, r in zip(names, table, routes, strict=True)
    ]
    if quiet:
        said = [
            f"whilecli route ({slices.shown_by} {shown(name)}): refused: {route.message}\n"
            if isinstance(route, Refused)
            else body(name, route)
            for name, route in slices.routes
        ]
        return "\n".join(head) + "\n" + "".join(said)
    parts = ["\n".join(head)]
    for name, route in slices.routes:
        said_of = _refused_text(route) if isinstance(route, Refused) else body(name, route)
        parts.append(f"── {slices.shown_by}: {shown(name)} " + "─" * 20 + "\n" + said_of)
    return "\n\n".join(parts) + "\n"


def _refused_text(route: Refused) -> str:
    """A refused slice's report: why, wrapped to the terminal as every brief is."""
    from whilecli.route.render_text import console_width, wrap

    return "\n".join(wrap(f"Refused: {route.message}", console_width(), indent=0, hang=2)) + "\n"


def _route_word(line: dict[str, Any]) -> str:
    """A slice's route as its report's headline qualifies it (``provisional: grpo``)."""
    return ("provisional: " if line.get("provisional") else "") + str(line["route"])


def _count(value: Any) -> str:
    return "n/a" if value is None else str(value)


def _p1(line: dict[str, Any]) -> str:
    from whilecli.route.model import Rate

    p1 = line["pass_at_1"]
    if p1 is None or p1["value"] is None:
        return "n/a"
    return Rate(**p1).format()
