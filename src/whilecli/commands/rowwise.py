"""`while update --method groupwise|rm ROWS`: the row-wise methods, end to end.

Read the rows through the one reading layer (files, directories, globs, ``-``; the route's
task ids, rewards and pass rule), apply GroupwiseGrading (GRS / GAR) or the reward
model's Bradley–Terry loss, print the stats (Rich text, or one JSON object), and write
one row per input row back (Parquet or JSONL by the output's extension; ``-o -`` writes
JSONL to stdout and the report to stderr).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from whilecli import jsonout
from whilecli.errors import InputError, UsageError
from whilecli.fileio import check_writable

if TYPE_CHECKING:  # polars, rich and the methods load when a command runs, not at startup
    import polars as pl

    from whilecli.methods.rowio import Table

ROW_METHODS = ("groupwise", "rm")
FORMATS = ("text", "json")
OUTPUT_SUFFIXES = (".parquet", ".pq", ".jsonl", ".ndjson")


def check_output(output: str | None, *, force: bool) -> None:
    """Refuse a bad output path before any work: unknown extension, or a file without force."""
    if output is None or output == "-":
        return
    suffix = Path(output).suffix.lower()
    if suffix not in OUTPUT_SUFFIXES:
        raise UsageError(f"{output}: unknown output extension '{suffix}'; use .parquet or .jsonl")
    check_writable(output, force=force)


def check_format(fmt: str) -> None:
    """Refuse an unknown ``--format``."""
    if fmt not in FORMATS:
        raise UsageError(f"--format must be text or json, got {fmt!r}")


def _show(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def print_report(report: dict[str, Any], *, fmt: str, to_stderr: bool = False) -> None:
    """Print ``report`` (title, stats, notes, warnings, output) as Rich text or one JSON object."""
    stream = sys.stderr if to_stderr else sys.stdout
    if fmt == "json":
        stream.write(jsonout.dumps(report, indent=2, sort_keys=False) + "\n")
        stream.flush()
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(file=stream, highlight=False, soft_wrap=True)
    console.print(Text(report["title"], style="bold"))
    console.print(Text(f"rows: {report['input']}  ({report['stats'].get('rows', '-')} rows)"))
    if report.get("columns"):
        used = ", ".join(f"{k} <- {v}" for k, v in report["columns"].items())
        console.print(Text(f"columns: {used}", style="dim"))
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column("stat")
    table.add_column("value", justify="right")
    for key, value in report["stats"].items():
        table.add_row(Text(key.replace("_", " ")), Text(_show(value)))
    console.print(table)
    for warning in report.get("warnings", []):
        console.print(Text(f"warning: {warning}", style="yellow"))
    for note in report.get("notes", []):
        console.print(Text(f"note: {note}"))
    for line in report.get("extra", []):
        console.print(Text(line, style="dim"))
    for label, path in report.get("written", {}).items():
        console.print(Text(f"wrote {label}: {path}"))


def read_inputs(
    paths: str | Sequence[str],
    *,
    mapping: dict[str, str] | None = None,
    pass_threshold: float | None = None,
    **options: Any,
) -> Table:
    """The rows at ``paths`` as a table (:func:`whilecli.io.table.read_table`)."""
    from whilecli.methods import rowio

    listed = [paths] if isinstance(paths, str) else list(paths)
    return rowio.read_table(listed, mapping=mapping, pass_threshold=pass_threshold, **options)


def input_label(paths: str | Sequence[str]) -> str:
    return paths if isinstance(paths, str) else " ".join(paths)


def _groupwise(table: Table, **knobs: Any) -> tuple[dict, pl.DataFrame]:
    from whilecli.methods.groupwise import GroupwiseGrading

    result = GroupwiseGrading(**knobs).apply(table)
    spread = result.spread
    warnings = [spread.why] if spread.no_spread else []
    what = "GRS, reshaped reward" if result.mode == "reward" else "GAR, reshaped advantage"
    report: dict[str, Any] = {
        "title": f"groupwise ({what})",
        "method": "groupwise",
        "mode": result.mode,
        "columns": result.columns,
        "stats": result.stats,
        "spread": {
            "n": spread.n,
            "std": spread.std,
            "cluster_share": spread.cluster_share,
            "no_spread": spread.no_spread,
            "why": spread.why,
        },
        "warnings": warnings,
        "notes": result.notes,
        "extra": [f"spread: {spread.why}"] if not spread.no_spread else [],
    }
    return report, result.frame


def _rm(table: Table, pass_threshold: float | None) -> tuple[dict, pl.DataFrame]:
    from whilecli.methods.reward_model import RewardModel, why_rarely

    result = RewardModel(pass_threshold=pass_threshold).pairs(table)
    report: dict[str, Any] = {
        "title": f"rm (Bradley-Terry loss on pairs from {result.source})",
        "method": "rm",
        "columns": result.columns,
        "stats": result.stats,
        "warnings": [],
        "notes": result.notes,
        "why_rarely": why_rarely,
        "extra": [why_rarely],
    }
    return report, result.frame


def run_row_method(
    method: str,
    path: str | Sequence[str],
    *,
    mode: str = "advantage",
    floor: float = 0.0,
    cap: float = 3.0,
    min_factor: float = 0.5,
    hack_zero: bool = True,
    pass_threshold: float | None = None,
    mapping: dict[str, str] | None = None,
    output: str | None = None,
    force: bool = False,
    fmt: str = "text",
) -> int:
    """Run ``while update --method groupwise|rm`` on the rows at ``path``; return the exit code.

    Raises :class:`~whilecli.errors.WhileError` (one line, with its exit code) on bad usage
    or bad input; the command layer prints it. ``mode``, ``floor``, ``cap``, ``min_factor``
    and ``hack_zero`` act on groupwise only; ``pass_threshold`` (reward ≥ T passes; None:
    1.0, and rewards outside [0, 1] are refused as the route refuses them) and ``mapping``
    (``--map FIELD=COLUMN``) on both.
    """
    if method not in ROW_METHODS:
        raise UsageError(f"row-wise method must be groupwise or rm, got {method!r}")
    check_format(fmt)
    check_output(output, force=force)
    from whilecli.methods import rowio
    from whilecli.methods.groupwise import GroupwiseGrading
    from whilecli.methods.reward_model import READ_OPTIONS

    if method == "groupwise":
        knobs: dict[str, Any] = {
            "mode": mode,
            "floor": floor,
            "cap": cap,
            "min_factor": min_factor,
            "hack_zero": hack_zero,
            "pass_threshold": pass_threshold,
        }
        options = GroupwiseGrading(**knobs).read_options()
    else:
        options = dict(READ_OPTIONS)
    table = read_inputs(path, mapping=mapping, pass_threshold=pass_threshold, **options)
    try:
        if method == "groupwise":
            report, rows = _groupwise(table, **knobs)
        else:
            report, rows = _rm(table, pass_threshold)
    except InputError as err:
        raise table.locate(err) from None
    report["input"] = input_label(path)
    report["format"] = table.format
    report["notes"] = [*table.notes, *report["notes"]]
    written: dict[str, str] = {}
    if output is not None:
        rowio.write_rows(rows, output, force=force)
        if output != "-":
            written["rows"] = output
    else:
        report["notes"] = [*report["notes"], "no rows written: pass -o FILE (.parquet or .jsonl)"]
    report["written"] = written
    report["output"] = output
    extra = report.pop("extra")
    to_stderr = output == "-"
    if fmt == "text":
        report["extra"] = extra
    print_report(report, fmt=fmt, to_stderr=to_stderr)
    return 0
