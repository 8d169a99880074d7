"""``whilecli route``: route graded rows to a training method, with evidence.

Thin: parse the options, call :func:`whilecli.route.run_route`, render, exit with the
route's exit code (0 routed, 1 nothing can train yet or a ``--strict`` failure, 2 bad
usage or input). ``--fail-on`` (or a repository's ``[tool.while] fail-on``) adds the CI
policies of :mod:`whilecli.route.policies`: a policy that holds also exits 1, on the route
or, with ``--by``, on any slice (:class:`Answer`: one flow for every option and format).

The reading and routing options are module constants so ``whilecli check`` takes the same.
"""

from __future__ import annotations

import io
import os
import stat
import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from whilecli import PROG, jsonout
from whilecli.commands._common import (
    STEP,
    existing_paths,
    option,
    user_errors,
)
from whilecli.errors import UsageError
from whilecli.io.options import ReadOptions
from whilecli.route.options import RouteOptions

if TYPE_CHECKING:
    from whilecli.route.model import Route
    from whilecli.route.policies import Gate, Policies
    from whilecli.route.slices import Slices


#: How the reports name this command.
WHO = "whilecli route"


class OutputFormat(str, Enum):
    """The report formats of ``--format``."""

    text = "text"
    json = "json"
    markdown = "markdown"
    github = "github"


PATHS = typer.Argument(
    ...,
    metavar="PATH...",
    help="Graded rows: JSONL (.gz/.zst) or Parquet files, directories, globs, or - for stdin.",
    callback=existing_paths,
    rich_help_panel="Inputs",
)
TEACHER = typer.Option(
    None,
    "--teacher",
    metavar="ROWS",
    help="The teacher's graded rows (repeatable).",
    callback=existing_paths,
    rich_help_panel="Inputs",
)
MODEL = option(RouteOptions, "model")
SIZE_B = option(RouteOptions, "size_b")
PASS_THRESHOLD = option(ReadOptions, "pass_threshold")
MISSING = option(ReadOptions, "missing")
MAPPING = option(ReadOptions, "mapping")
TEACHER_MAPPING = option(ReadOptions, "teacher_mapping")
INPUT_FORMAT = option(ReadOptions, "input_format")
TEACHER_VOCAB = option(RouteOptions, "teacher_vocab")
STUDENT_VOCAB = option(RouteOptions, "student_vocab")
TEACHER_TOKENIZER = option(RouteOptions, "teacher_tokenizer")
STUDENT_TOKENIZER = option(RouteOptions, "student_tokenizer")
STRICT = option(RouteOptions, "strict")
FORMAT = typer.Option(
    OutputFormat.text,
    "--format",
    help="Report format.",
    case_sensitive=False,
    rich_help_panel="Output",
)
SEED = option(RouteOptions, "seed")
FAIL_ON = typer.Option(
    None,
    "--fail-on",
    metavar="POLICIES",
    help=(
        "Exit 1 when a named condition holds (comma-separated, repeatable): truncated-passes, "
        "unknown-truncation, floor, saturated, off-policy, few-split, judge-unaudited; all; "
        "none."
    ),
    show_default="[tool.while] fail-on of pyproject.toml or while.toml",
    rich_help_panel="Checks",
)
POOL = option(ReadOptions, "pool")
BY = option(ReadOptions, "by")
SUMMARY = option(ReadOptions, "summary")
JUDGE_AUDIT = typer.Option(
    None,
    "--judge-audit",
    metavar="FILE",
    help="The judge's audit (JSON or TOML): ok, or agreement, kappa and n.",
    rich_help_panel="Checks",
)
SHOW = option(RouteOptions, "show")
VERBOSE = typer.Option(
    False,
    "--verbose",
    "-v",
    help="Text: after the answer, every check with what it measured, the methods, the pass"
    " rates and the sources (JSON always carries them).",
    rich_help_panel="Output",
)
QUIET = typer.Option(
    False,
    "--quiet",
    "-q",
    help="Text: print only the headline (one per slice with --by), why it exits 1 and any"
    " --show lists; same exit code. --format json, markdown and github print their whole"
    " report with or without it (a script or CI reads them).",
    rich_help_panel="Output",
)
LIMIT = option(RouteOptions, "limit")


def show_overrides(show: list[str] | None, limit: int) -> dict[str, Any]:
    """The RouteOptions fields ``--show`` and ``--limit`` set (none without ``--show``)."""
    from whilecli.route.drill import check_limit, parse_show

    check_limit(limit)
    kinds = parse_show(show)
    return {"show": kinds, "limit": limit} if kinds else {}


def _overrides(
    model: str | None,
    size_b: float | None,
    teacher_vocab: int | None,
    student_vocab: int | None,
    teacher_tokenizer: str | None,
    student_tokenizer: str | None,
    strict: bool,
    seed: int | None,
) -> dict[str, Any]:
    """The RouteOptions fields the flags set (only those given), checked by RouteOptions."""
    given: dict[str, Any] = {
        "model": model,
        "size_b": size_b,
        "teacher_vocab": teacher_vocab,
        "student_vocab": student_vocab,
        "teacher_tokenizer": Path(teacher_tokenizer) if teacher_tokenizer else None,
        "student_tokenizer": Path(student_tokenizer) if student_tokenizer else None,
        "seed": seed,
    }
    out = {k: v for k, v in given.items() if v is not None}
    if strict:
        out["strict"] = True
    RouteOptions(**out)  # every value checked before the read
    return out


def read_stdin(paths: list[str], teacher: list[str] | None) -> bytes | None:
    """stdin's bytes when a path is ``-`` (read once: the route and the judge scan share it)."""
    return sys.stdin.buffer.read() if "-" in paths + (teacher or []) else None


def route_rows(
    paths: list[str],
    stdin_data: bytes | None,
    *,
    teacher: list[str] | None,
    mapping: list[str] | None,
    pass_threshold: float | None,
    input_format: str | None,
    overrides: dict[str, Any],
    missing: str = "skip",
    summary: bool | None = None,
    pool: bool = False,
    by: str | None = None,
    teacher_mapping: list[str] | None = None,
) -> Route:
    """Read and route the rows with the command line's reading and routing options
    (with ``by``, the :class:`~whilecli.route.slices.Slices` of every slice)."""
    from whilecli.io.read import parse_map
    from whilecli.route import run_route

    ReadOptions(pass_threshold=pass_threshold, missing=missing, input_format=input_format)
    return run_route(
        paths,
        teacher=teacher or None,
        mapping=parse_map(mapping or []),
        teacher_mapping=parse_map(teacher_mapping or []),
        pass_threshold=pass_threshold,
        missing=missing,
        input_format=input_format,
        stdin=io.BytesIO(stdin_data) if stdin_data is not None else None,
        summary=summary,
        pool=pool,
        by=by,
        **overrides,
    )  # type: ignore[return-value]


@user_errors
def route_command(
    paths: list[str] = PATHS,
    teacher: list[str] | None = TEACHER,
    model: str | None = MODEL,
    size_b: float | None = SIZE_B,
    pass_threshold: float | None = PASS_THRESHOLD,
    missing: str = MISSING,
    mapping: list[str] | None = MAPPING,
    teacher_mapping: list[str] | None = TEACHER_MAPPING,
    step: int | None = STEP,
    input_format: str | None = INPUT_FORMAT,
    teacher_vocab: int | None = TEACHER_VOCAB,
    student_vocab: int | None = STUDENT_VOCAB,
    teacher_tokenizer: str | None = TEACHER_TOKENIZER,
    student_tokenizer: str | None = STUDENT_TOKENIZER,
    strict: bool = STRICT,
    output: OutputFormat = FORMAT,
    seed: int | None = SEED,
    fail_on: list[str] | None = FAIL_ON,
    judge_audit: str | None = JUDGE_AUDIT,
    summary: bool = SUMMARY,
    pool: bool = POOL,
    by: str | None = BY,
    quiet: bool = QUIET,
    verbose: bool = VERBOSE,
    show: list[str] | None = SHOW,
    limit: int = LIMIT,
) -> None:
    """Route graded rows to a training method: six checks, intervals with n, exit 0/1/2."""
    from whilecli.route.policies import named_policies

    overrides = _overrides(
        model,
        size_b,
        teacher_vocab,
        student_vocab,
        teacher_tokenizer,
        student_tokenizer,
        strict,
        seed,
    )
    overrides.update(show_overrides(show, limit))
    policies = named_policies(fail_on=fail_on, judge_audit=judge_audit)
    inputs = [*paths, *(teacher or []), judge_audit, teacher_tokenizer, student_tokenizer]
    summary_to = step_summary(output.value, inputs)
    stdin_data = read_stdin(paths, teacher)
    route = route_rows(
        paths,
        stdin_data,
        teacher=teacher,
        mapping=mapping,
        teacher_mapping=teacher_mapping,
        pass_threshold=pass_threshold,
        missing=missing,
        input_format=input_format,
        overrides=overrides,
        summary=summary or None,
        pool=pool,
        by=by,
    )
    answer = Answer.of(route, policies)
    text_quiet = quiet and output.value == "text"  # json, markdown, github: whole
    answer.write(output.value, verbose=verbose, quiet=text_quiet)
    if summary_to is not None:
        append_summary(summary_to, answer.markdown(), inputs=inputs)
    raise typer.Exit(answer.exit_code)


@dataclass
class Answer:
    """What ``route`` answers, with or without ``--by``: the route (or every slice's) and the
    gate of the named policies on each. One flow renders every format, writes the side
    outputs and gives the one exit code, so no option skips the gate (DESIGN section 2)."""

    route: Route | Slices
    gate: Gate | None = None

    @classmethod
    def of(cls, route: Route | Slices, policies: Policies | None) -> Answer:
        """The gate of ``policies`` on the route, or on every slice that routes."""
        from whilecli.route.slices import Refused, Slices

        if policies is None:
            return cls(route)
        if isinstance(route, Slices):
            gates = {n: policies.on(r) for n, r in route.routes if not isinstance(r, Refused)}
            return cls(replace(route, gates=gates))
        return cls(route, policies.on(route))

    @property
    def exit_code(self) -> int:
        """The process's exit code, the value every JSON report states too."""
        from whilecli.route.policies import gated_exit_code
        from whilecli.route.slices import Slices

        if isinstance(self.route, Slices):
            return self.route.exit_code
        return gated_exit_code(self.route, self.gate)

    def write(self, fmt: str, *, verbose: bool, quiet: bool) -> None:
        """Print the report in ``fmt`` (``quiet``: text's headlines only); a refused slice's
        line goes to stderr too, as any refusal's."""
        from whilecli.route.slices import Slices

        if isinstance(self.route, Slices):
            sys.stdout.write(self.sliced(fmt, verbose=verbose, quiet=quiet))
            sys.stdout.flush()
            for line in self.route.refusal_lines():
                print(f"{PROG}: error: {line}", file=sys.stderr)
            return
        write_one(self.route, self.gate, fmt, verbose=verbose, quiet=quiet)

    def sliced(self, fmt: str, *, verbose: bool = False, quiet: bool = False) -> str:
        """``--by``: every slice rendered as one route is, with its gate."""
        from whilecli.route.slices import Slices, render_slices

        slices = self.route
        assert isinstance(slices, Slices)

        def body(name: str, route: Route) -> str:
            who = f"{WHO} ({slices.shown_by} {slices.shown(name)})"
            return one_report(route, slices.gates.get(name), fmt, verbose=verbose, quiet=quiet,
                              who=who)  # fmt: skip

        return render_slices(slices, fmt, verbose=verbose, quiet=quiet, body=body)

    def markdown(self) -> str:
        """The Markdown report (the job summary of ``--format github``)."""
        from whilecli.route.slices import Slices

        if isinstance(self.route, Slices):
            return self.sliced("markdown")
        return _markdown(self.route, self.gate)


def one_report(
    route: Route, gate: Gate | None, fmt: str, *, verbose: bool, quiet: bool, who: str = WHO
) -> str:
    """One route's report with its gate, as a string, in text, json, markdown or github."""
    from whilecli.commands.check import github_policy_lines, policy_lines
    from whilecli.route.policies import gated_report
    from whilecli.route.report import render

    if fmt == "json":
        return jsonout.dumps(gated_report(route, gate), indent=2) + "\n"
    if fmt == "markdown":
        return _markdown(route, gate)
    if fmt == "github":
        lines = render(route, "github").splitlines()
        if gate is not None:
            lines = lines[:-1] + github_policy_lines(gate, route, WHO) + lines[-1:]
        return "".join(f"{line}\n" for line in lines)
    from whilecli.route.render_text import console_width, show_string, text_to_string

    if quiet:
        text = quiet_lines(route, gate, who)
        return text + (show_string(route.show, console_width()) if route.show else "")
    text = text_to_string(route, width=console_width(), verbose=verbose)
    if gate is not None:
        text += "".join(f"{line}\n" for line in policy_lines(gate, who))
    return text


def write_one(route: Route, gate: Gate | None, fmt: str, *, verbose: bool, quiet: bool) -> None:
    """Print one route's report: text on the terminal's console (its colours and width), every
    other format as :func:`one_report` gives it."""
    if fmt == "text":
        from whilecli.commands.check import policy_lines
        from whilecli.route.render_text import make_console, render_text, show_text

        if quiet:
            sys.stdout.write(quiet_lines(route, gate, WHO))
            if route.show:  # asked for: --quiet keeps the lists
                show_text(route.show, make_console())
        else:
            render_text(route, make_console(), verbose=verbose)
            if gate is not None:
                sys.stdout.write("".join(f"{line}\n" for line in policy_lines(gate, WHO)))
    else:
        sys.stdout.write(one_report(route, gate, fmt, verbose=verbose, quiet=quiet))
    sys.stdout.flush()


def quiet_lines(route: Route, gate: Gate | None, who: str = WHO) -> str:
    """``--quiet``: the headline, then one line per reason the command exits 1."""
    from whilecli.commands.check import policy_lines

    lines = [f"{who}: {route.headline or route.why}"]
    lines += [f"exit 1: {reason}" for reason in route.exit_reasons]
    if gate is not None and gate.exit_code:
        lines += policy_lines(gate, who)
    return "".join(f"{line}\n" for line in lines)


def _markdown(route: Route, gate: Any) -> str:
    from whilecli.commands.check import policies_markdown
    from whilecli.route.report import render

    text = render(route, "markdown")
    if gate is not None:
        text += "\n" + policies_markdown(gate, "### Policies")
    return text


def step_summary(fmt: str, inputs: Iterable[str | None]) -> str | None:
    """The job summary file ``--format github`` appends to (``GITHUB_STEP_SUMMARY``), checked
    before any work (:func:`check_summary_target`); None when nothing is appended."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if fmt != "github" or not path:
        return None
    check_summary_target(path, inputs)
    return path


def check_summary_target(path: str, inputs: Iterable[str | None]) -> None:
    """Refuse a job summary file that is not a regular file (a FIFO would wait for a reader
    forever, a device is no summary) or that is one of the command's inputs, or its
    repository's policy file (:func:`whilecli.fileio.refuse_input`, the check every ``-o``
    passes): appending would change what the user owns."""
    from whilecli.fileio import file_kind, refuse_input
    from whilecli.route.policies import find_config

    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None  # missing (appending creates it), or the open says why
    if mode is not None and not stat.S_ISREG(mode):
        raise UsageError(f"GITHUB_STEP_SUMMARY={path}: it is {file_kind(mode)}, not a file")
    owned = [str(p) for p in (*inputs, find_config()) if p]
    try:
        refuse_input(path, owned)
    except UsageError:
        raise UsageError(
            f"GITHUB_STEP_SUMMARY={path}: it is an input of this command; appending the"
            " report would change it: name another file"
        ) from None


def append_summary(path: str, markdown: str, *, inputs: Iterable[str | None]) -> None:
    """Append the Markdown report to the job summary file GitHub names, once
    :func:`check_summary_target` clears it."""
    check_summary_target(path, inputs)
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(markdown + "\n")
    except OSError as err:
        raise UsageError(f"GITHUB_STEP_SUMMARY={path}: cannot append: {err.strerror}") from None
