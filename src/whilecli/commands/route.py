"""``whilecli route``: route graded rows to a training method, with evidence.

Thin: parse the options, call :func:`whilecli.route.run_route`, render, exit with the
route's exit code (0 routed, 1 nothing can train yet or a ``--strict`` failure, 2 bad
usage or input). ``--fail-on`` (or a repository's ``[tool.while] fail-on``) adds the CI
policies of :mod:`whilecli.route.policies`: a policy that holds also exits 1.

The reading and routing options are module constants so ``whilecli check`` takes the same.
"""

from __future__ import annotations

import io
import os
import stat
import sys
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
    from whilecli.commands.check import (
        enforce,
        github_policy_lines,
        policy_lines,
    )
    from whilecli.route.report import render

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
    if by is not None:  # --by: every slice's route; exit with the worst slice's code
        from whilecli.route.slices import Slices, render_slices

        assert isinstance(route, Slices)
        text_quiet = quiet and output.value == "text"  # -q trims text only
        sys.stdout.write(render_slices(route, output.value, verbose=verbose, quiet=text_quiet))
        sys.stdout.flush()
        for line in route.refusal_lines():  # a refused slice's line, as any refusal's
            print(f"{PROG}: error: {line}", file=sys.stderr)
        raise typer.Exit(route.exit_code)
    gate = enforce(route, fail_on=fail_on, judge_audit=judge_audit)
    if quiet and output.value == "text":  # json, markdown, github: whole, as with --by
        sys.stdout.write(quiet_lines(route, gate))
        if route.show:  # asked for: --quiet keeps the lists
            from whilecli.route.render_text import make_console, show_text

            show_text(route.show, make_console())
        sys.stdout.flush()
        raise typer.Exit(max(route.exit_code, gate.exit_code if gate is not None else 0))
    fmt = output.value
    if fmt == "text":
        from whilecli.route.render_text import make_console, render_text

        render_text(route, make_console(), verbose=verbose)
        if gate is not None:
            sys.stdout.write("".join(f"{line}\n" for line in policy_lines(gate, WHO)))
    elif fmt == "json":
        report = route.to_dict()
        if gate is not None:
            report["policies"] = gate.to_dict()
        sys.stdout.write(jsonout.dumps(report, indent=2) + "\n")
    elif fmt == "github":
        lines = render(route, "github").splitlines()
        if gate is not None:
            extra = github_policy_lines(gate, route, WHO)
            lines = lines[:-1] + extra + lines[-1:]
        sys.stdout.write("".join(f"{line}\n" for line in lines))
    else:
        sys.stdout.write(_markdown(route, gate))
    sys.stdout.flush()
    if fmt == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
        append_summary(os.environ["GITHUB_STEP_SUMMARY"], _markdown(route, gate))
    code = route.exit_code
    if gate is not None:
        code = max(code, gate.exit_code)
    raise typer.Exit(code)


def quiet_lines(route: Route, gate: Any) -> str:
    """``--quiet``: the headline, then one line per reason the command exits 1."""
    from whilecli.commands.check import policy_lines

    lines = [f"{WHO}: {route.headline or route.why}"]
    lines += [f"exit 1: {reason}" for reason in route.exit_reasons]
    if gate is not None and gate.exit_code:
        lines += policy_lines(gate, WHO)
    return "".join(f"{line}\n" for line in lines)


def _markdown(route: Route, gate: Any) -> str:
    from whilecli.commands.check import policies_markdown
    from whilecli.route.report import render

    text = render(route, "markdown")
    if gate is not None:
        text += "\n" + policies_markdown(gate, "### Policies")
    return text


def append_summary(path: str, markdown: str) -> None:
    """Append the Markdown report to the job summary file GitHub names."""
    from whilecli.fileio import file_kind

    try:  # a FIFO would wait for a reader forever, a device is no summary
        mode = os.stat(path).st_mode
    except OSError:
        mode = None  # missing (appending creates it), or the open below says why
    if mode is not None and not stat.S_ISREG(mode):
        raise UsageError(f"GITHUB_STEP_SUMMARY={path}: it is {file_kind(mode)}, not a file")
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(markdown + "\n")
    except OSError as err:
        raise UsageError(f"GITHUB_STEP_SUMMARY={path}: cannot append: {err.strerror}") from None
