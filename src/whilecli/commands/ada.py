"""`whilecli ada ROWS`: ReinforceAda's next sampling round and balanced selection.

Reads the rollouts drawn so far (files, directories, globs or ``-``, through the one reading
layer: the route's task ids, rewards and pass rule, reward ≥ ``--pass-threshold``), says per task whether it is retired, needs another
round of ``--round-size`` draws, or has run out of rounds, writes the task list to draw
again (``--next-round FILE``) and the balanced ``--keep`` selection with advantage
r − p̂ (``-o FILE``), and prints the stats.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import typer

from whilecli.commands import route as route_cmd
from whilecli.commands._common import STEP, choice, existing_paths, user_errors
from whilecli.commands.rowwise import (
    check_format,
    print_report,
)
from whilecli.errors import UsageError

#: The help panel of ReinforceAda's knobs.
ADA = "ReinforceAda"
#: The note ``--threshold`` prints: the option's old name, with its old strict rule.
THRESHOLD_DEPRECATED = (
    "note: --threshold is deprecated; use --pass-threshold (a rollout passes at reward ≥ T,"
    " the route's rule)"
)


def run_ada(
    path: str | Sequence[str],
    *,
    fmt: str = "text",
    next_round: str | None = None,
    output: str | None = None,
    **options: Any,
) -> int:
    """Plan ReinforceAda on the rows at ``path`` (:func:`whilecli.methods.run.run_ada`),
    print its report as ``fmt``; return 0. Raises :class:`~whilecli.errors.WhileError` on
    bad knobs or bad input."""
    from whilecli.methods.run import run_ada as plan

    check_format(fmt)
    report = plan(path, next_round=next_round, output=output, **options)
    if fmt == "text":
        del report["next_round"]
    print_report(report, fmt=fmt, to_stderr="-" in (next_round, output))
    return 0


@user_errors
def ada_command(
    rows: list[str] = typer.Argument(
        ...,
        metavar="ROWS...",
        help="Rollouts drawn so far: files, directories, globs (JSONL or Parquet; - for stdin).",
        callback=existing_paths,
    ),
    keep: int = typer.Option(
        4, "--keep", metavar="N", help="Rollouts kept per retired task.", rich_help_panel=ADA
    ),
    round_size: int = typer.Option(
        8, "--round-size", metavar="N", help="Draws per task per round.", rich_help_panel=ADA
    ),
    max_rounds: int = typer.Option(
        4,
        "--max-rounds",
        metavar="N",
        help="Rounds before a task is given up.",
        rich_help_panel=ADA,
    ),
    exit: str = typer.Option(
        "balanced",
        "--exit",
        click_type=choice(
            "balanced",
            "positive",
            message="--exit must be balanced or positive (default balanced), got {value!r}",
        ),
        help="Retire rule: balanced (a pass and a fail) or positive (a pass).",
        rich_help_panel=ADA,
    ),
    pass_threshold: float | None = route_cmd.PASS_THRESHOLD,
    threshold: float | None = typer.Option(
        None, "--threshold", hidden=True, help="Deprecated: --pass-threshold."
    ),
    map_: list[str] | None = route_cmd.MAPPING,
    missing: str = route_cmd.MISSING,
    pool: bool = route_cmd.POOL,
    step: int | None = STEP,
    input_format: str | None = route_cmd.INPUT_FORMAT,
    next_round: str | None = typer.Option(
        None,
        "--next-round",
        metavar="FILE",
        help="Write the tasks to draw again here (.parquet, .jsonl; - for stdout).",
        rich_help_panel="Output",
    ),
    output: str | None = typer.Option(
        None,
        "-o",
        "--output",
        metavar="FILE",
        help="Write the balanced selection here (.parquet, .jsonl; - for stdout).",
        rich_help_panel="Output",
    ),
    force: bool = typer.Option(
        False, "--force", help="Overwrite existing files.", rich_help_panel="Output"
    ),
    fmt: str = typer.Option(
        "text",
        "--format",
        click_type=choice("text", "json", message="--format must be text or json, got {value!r}"),
        help="Report format.",
        rich_help_panel="Output",
    ),
) -> None:
    """ReinforceAda: which tasks to draw again, and the balanced selection of the rest."""
    from whilecli.io.read import parse_map

    if threshold is not None:
        if pass_threshold is not None:
            raise UsageError("--threshold is the old name of --pass-threshold: pass one")
        pass_threshold = threshold
    code = run_ada(
        rows,
        keep=keep,
        round_size=round_size,
        max_rounds=max_rounds,
        exit=exit,
        pass_threshold=pass_threshold,
        mapping=parse_map(map_ or []),
        next_round=next_round,
        output=output,
        force=force,
        fmt=fmt,
        missing=missing,
        pool=pool,
        input_format=input_format,
    )
    if threshold is not None:  # after the work: a refusal stays one line
        sys.stderr.write(THRESHOLD_DEPRECATED + "\n")
    raise typer.Exit(code)
