"""`while ada ROWS`: ReinforceAda's next sampling round and balanced selection.

Reads the rollouts drawn so far, says per task whether it is retired, needs another
round of ``--round-size`` draws, or has run out of rounds, writes the task list to draw
again (``--next-round FILE``) and the balanced ``--keep`` selection with advantage
r − p̂ (``-o FILE``), and prints the stats.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from whilecli.commands._common import user_errors
from whilecli.commands.rowwise import check_format, check_output, print_report
from whilecli.errors import InputError, UsageError


def run_ada(
    path: str,
    *,
    keep: int = 4,
    round_size: int = 8,
    max_rounds: int = 4,
    exit: str = "balanced",
    threshold: float = 0.7,
    next_round: str | None = None,
    output: str | None = None,
    force: bool = False,
    fmt: str = "text",
) -> int:
    """Plan ReinforceAda on the rows at ``path``; write the files asked for; return 0.

    Raises :class:`~whilecli.errors.WhileError` on bad knobs or bad input.
    """
    from whilecli.methods import rowio
    from whilecli.methods.ada import ReinforceAda

    ada = ReinforceAda(
        keep=keep, round_size=round_size, max_rounds=max_rounds, exit=exit, threshold=threshold
    )
    check_format(fmt)
    if next_round == "-" and output == "-":
        raise UsageError("--next-round and -o cannot both be '-' (stdout)")
    same = "-" not in (next_round, output) and next_round is not None and output is not None
    if same and Path(next_round).resolve() == Path(output).resolve():  # type: ignore[arg-type]
        raise UsageError("--next-round and -o name the same file")
    check_output(next_round, force=force)
    check_output(output, force=force)
    frame, source = rowio.read_rows(path)
    try:
        result = ada.plan(frame, source)
    except InputError as err:
        raise source.locate(err) from None
    written: dict[str, str] = {}
    notes = list(result.notes)
    if next_round is not None:
        rowio.write_rows(result.next_round, next_round, force=force)
        if next_round != "-":
            written["next round"] = next_round
    elif result.next_round.height:
        notes.append("task list for the sampler not written: pass --next-round FILE")
    if output is not None:
        rowio.write_rows(result.selection, output, force=force)
        if output != "-":
            written["selection"] = output
    elif result.selection.height:
        notes.append("selection not written: pass -o FILE (.parquet or .jsonl)")
    report: dict[str, Any] = {
        "title": f"ada (ReinforceAda, exit {ada.exit}, keep {ada.keep})",
        "method": "ada",
        "input": path,
        "knobs": {
            "keep": ada.keep,
            "round_size": ada.round_size,
            "max_rounds": ada.max_rounds,
            "exit": ada.exit,
            "threshold": ada.threshold,
        },
        "columns": result.columns,
        "stats": result.stats,
        "warnings": [],
        "notes": notes,
        "next_round": result.next_round.get_column("task_id").to_list(),
        "written": written,
    }
    if fmt == "text":
        del report["next_round"]
    print_report(report, fmt=fmt, to_stderr="-" in (next_round, output))
    return 0


@user_errors
def ada_command(
    rows: str = typer.Argument(..., help="Rollouts drawn so far (JSONL or Parquet; - for stdin)."),
    keep: int = typer.Option(4, "--keep", help="Rollouts kept per retired task."),
    round_size: int = typer.Option(8, "--round-size", help="Draws per task per round."),
    max_rounds: int = typer.Option(4, "--max-rounds", help="Rounds before a task is given up."),
    exit: str = typer.Option("balanced", "--exit", help="Retire rule: balanced or positive."),
    threshold: float = typer.Option(
        0.7, "--threshold", help="A rollout is right iff reward > this."
    ),
    next_round: str | None = typer.Option(
        None,
        "--next-round",
        help="Write the tasks to draw again here (.parquet, .jsonl; - for stdout).",
    ),
    output: str | None = typer.Option(
        None,
        "-o",
        "--output",
        help="Write the balanced selection here (.parquet, .jsonl; - for stdout).",
    ),
    force: bool = typer.Option(False, "--force", help="Overwrite existing files."),
    fmt: str = typer.Option("text", "--format", help="text or json."),
) -> None:
    """ReinforceAda: which tasks to draw again, and the balanced selection of the rest."""
    code = run_ada(
        rows,
        keep=keep,
        round_size=round_size,
        max_rounds=max_rounds,
        exit=exit,
        threshold=threshold,
        next_round=next_round,
        output=output,
        force=force,
        fmt=fmt,
    )
    raise typer.Exit(code)
