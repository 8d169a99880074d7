"""``while route``: route graded rows to a training method, with evidence.

Thin: parse the options, call :func:`whilecli.route.run_route`, render, exit with the
route's exit code (0 routed, 1 nothing can train yet or a ``--strict`` failure, 2 bad
usage or input).
"""

from __future__ import annotations

import math
import os
import sys
from enum import Enum
from pathlib import Path
from typing import Any

import typer

from whilecli.commands._common import user_errors
from whilecli.errors import UsageError


class OutputFormat(str, Enum):
    """The report formats of ``--format``."""

    text = "text"
    json = "json"
    markdown = "markdown"
    github = "github"


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
    """The RouteOptions fields the flags set (only those given)."""
    if size_b is not None and not (math.isfinite(size_b) and size_b > 0):
        raise UsageError(f"--size-b must be a positive number of billions, got {size_b}")
    for flag, vocab in (("--teacher-vocab", teacher_vocab), ("--student-vocab", student_vocab)):
        if vocab is not None and vocab <= 0:
            raise UsageError(f"{flag} must be a positive vocabulary size, got {vocab}")
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
    return out


@user_errors
def route_command(
    paths: list[str] = typer.Argument(
        ...,
        metavar="PATH",
        help="Graded rows: JSONL (.gz/.zst) or Parquet files, directories, globs, or - for stdin.",
    ),
    teacher: list[str] | None = typer.Option(
        None, "--teacher", metavar="ROWS", help="The teacher's graded rows (repeatable)."
    ),
    model: str | None = typer.Option(
        None, "--model", metavar="M", help="The model you will train (checks on-policy)."
    ),
    size_b: float | None = typer.Option(
        None, "--size-b", metavar="F", help="The model's size in billions of parameters."
    ),
    pass_threshold: float | None = typer.Option(
        None, "--pass-threshold", metavar="F", help="A row passes when reward >= F (default 1.0)."
    ),
    mapping: list[str] | None = typer.Option(
        None, "--map", metavar="FIELD=COLUMN", help="Read FIELD from COLUMN (repeatable)."
    ),
    input_format: str | None = typer.Option(
        None, "--input-format", metavar="NAME", help="Force the input format (default: detect)."
    ),
    teacher_vocab: int | None = typer.Option(
        None, "--teacher-vocab", metavar="N", help="The teacher tokenizer's vocabulary size."
    ),
    student_vocab: int | None = typer.Option(
        None, "--student-vocab", metavar="N", help="The student tokenizer's vocabulary size."
    ),
    teacher_tokenizer: str | None = typer.Option(
        None,
        "--teacher-tokenizer",
        metavar="PATH",
        help="The teacher's tokenizer.json or local model directory.",
    ),
    student_tokenizer: str | None = typer.Option(
        None,
        "--student-tokenizer",
        metavar="PATH",
        help="The student's tokenizer.json or local model directory.",
    ),
    strict: bool = typer.Option(
        False, "--strict", help="Exit 1 when any check reached is unknown or fails."
    ),
    output: OutputFormat = typer.Option(
        OutputFormat.text, "--format", help="Report format.", case_sensitive=False
    ),
    seed: int | None = typer.Option(
        None, "--seed", metavar="N", help="Seed of the bootstrap intervals (default 0)."
    ),
) -> None:
    """Route graded rows to a training method: six checks, intervals with n, exit 0/1/2."""
    from whilecli.route import run_route
    from whilecli.route.read import parse_map
    from whilecli.route.report import render

    if pass_threshold is not None and not math.isfinite(pass_threshold):
        raise UsageError(f"--pass-threshold must be a finite number, got {pass_threshold}")
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
    route = run_route(
        paths,
        teacher=teacher or None,
        mapping=parse_map(mapping or []),
        pass_threshold=pass_threshold,
        input_format=input_format,
        stdin=sys.stdin.buffer if "-" in paths + (teacher or []) else None,
        **overrides,
    )
    fmt = output.value
    if fmt == "text":
        from whilecli.route.render_text import make_console, render_text

        render_text(route, make_console())
    else:
        sys.stdout.write(render(route, fmt))
        sys.stdout.flush()
    if fmt == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
        _append_summary(os.environ["GITHUB_STEP_SUMMARY"], render(route, "markdown"))
    raise typer.Exit(route.exit_code)


def _append_summary(path: str, markdown: str) -> None:
    """Append the Markdown report to the job summary file GitHub names."""
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(markdown + "\n")
    except OSError as err:
        raise UsageError(f"GITHUB_STEP_SUMMARY={path}: cannot append: {err.strerror}") from None
