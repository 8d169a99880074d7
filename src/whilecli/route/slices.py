"""Routes of a pool taken apart: ``--by source`` (one route per input file) and ``--by COLUMN``
(one route per value of a column: a difficulty, a subset, an environment's name).

:func:`~whilecli.route.run_route` reads each slice's rows as a whole input
(:func:`whilecli.io.slices.read_slices`: its own data-quality findings, counts and file
positions) or each source apart (``--by source``), decides every slice with the same
options and returns :class:`Slices`: one summary table across slices, then each slice's
full Route. A slice its rows alone refuse (most replies errors, no graded row) is listed
as refused, with the one line that says why, beside the slices that route: one bad slice
does not hide the others. Every output format renders it (:func:`render_slices`); the exit
code is the worst slice's, 2 where one is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whilecli.errors import WhileError
from whilecli.route.model import SCHEMA_VERSION, Route


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

    @property
    def exit_code(self) -> int:
        return max((r.exit_code for _, r in self.routes), default=0)

    @property
    def refused(self) -> list[tuple[str, Refused]]:
        """The slices refused, with why."""
        return [(name, r) for name, r in self.routes if isinstance(r, Refused)]

    def refusal_lines(self) -> list[str]:
        """One error line per refused slice, naming it (what the CLI prints on stderr)."""
        return [f"{r.message} (--by {self.by}: {name})" for name, r in self.refused]

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
                    "exit_code": route.exit_code,
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
            "slices": [{"slice": name, **route.to_dict()} for name, route in self.routes],
        }


def render_slices(slices: Slices, fmt: str, *, verbose: bool = False, quiet: bool = False) -> str:
    """The report of every slice in ``fmt`` (text, json, markdown, github), the table first.

    Text: each slice's answer (``verbose``: its whole report); ``quiet``: the table, then one
    headline per slice with why it exits 1 and any ``--show`` lists."""
    import json

    from whilecli.route.report import render

    if fmt == "json":
        return json.dumps(slices.to_dict(), indent=2, allow_nan=False) + "\n"
    table = slices.table()
    if fmt == "markdown":
        lines = [
            f"## Routes by {slices.by}",
            "",
            "| slice | route | tasks | rows | pass@1 |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {t['slice']} | {_route_word(t)} | {_count(t['tasks'])} | {_count(t['rows'])} "
            f"| {_p1(t)} |"
            for t in table
        ]
        body = [
            f"### {slices.by}: {name}\n\n**Refused:** {route.message}"
            if isinstance(route, Refused)
            else render(route, "markdown")
            for name, route in slices.routes
        ]
        return "\n".join(lines) + "\n\n" + "\n\n".join(body)
    if fmt == "github":
        out = [
            f"::notice title=whilecli route ({slices.by} {t['slice']})::{_route_word(t)}: pass@1 {_p1(t)}"
            for t in table
        ]
        for name, route in slices.routes:
            if isinstance(route, Refused):
                out.append(f"::error title=whilecli route ({slices.by} {name})::{route.message}")
                continue
            out += [f"{line} [{slices.by} {name}]" if line.startswith("::") else line
                    for line in render(route, "github").splitlines()]  # fmt: skip
        return "".join(f"{line}\n" for line in out)
    from whilecli.route.render_text import console_width, show_string, text_to_string

    width = max(len(str(t["slice"])) for t in table)
    head = [f"Routes by {slices.by} ({len(table)} slices)"]
    routes = [_route_word(t) for t in table]
    column = max(15, *(len(r) for r in routes))
    head += [
        f"  {str(t['slice']).ljust(width)}  {r:<{column}} {_p1(t)}"
        for t, r in zip(table, routes, strict=True)
    ]
    parts = ["\n".join(head)]
    if quiet:
        said: list[str] = []
        for name, route in slices.routes:
            if isinstance(route, Refused):
                said.append(f"whilecli route ({slices.by} {name}): refused: {route.message}")
                continue
            said.append(f"whilecli route ({slices.by} {name}): {route.headline or route.why}")
            said += [f"exit 1: {reason}" for reason in route.exit_reasons]
            if route.show:
                said.append(show_string(route.show, console_width()).rstrip("\n"))
        return "\n".join(head + said) + "\n"
    for name, route in slices.routes:
        said_of = (
            f"Refused: {route.message}\n"
            if isinstance(route, Refused)
            else text_to_string(route, width=console_width(), verbose=verbose)
        )
        parts.append(f"── {slices.by}: {name} " + "─" * 20 + "\n" + said_of)
    return "\n\n".join(parts) + "\n"


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
