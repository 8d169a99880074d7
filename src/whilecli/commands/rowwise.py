"""`whilecli update --method groupwise|rm ROWS`: print what the row-wise methods report.

:func:`whilecli.methods.run.run_rowwise` reads the rows through the one reading layer,
applies GroupwiseGrading (GRS / GAR) or the reward model's Bradley–Terry loss and writes one
row per input row back; this module prints its stats (text, or one JSON object; with
``-o -`` the rows go to stdout and the report to stderr). ``whilecli ada`` shares the printing.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from whilecli import jsonout
from whilecli.errors import UsageError, shown_path
from whilecli.methods.registry import ROW_METHODS
from whilecli.methods.run import check_rows_output as check_output
from whilecli.methods.run import input_label, read_inputs

__all__ = [
    "ROW_METHODS",
    "check_output",
    "input_label",
    "print_report",
    "print_rowwise",
    "read_inputs",
    "run_row_method",
]
FORMATS = ("text", "json")


def check_format(fmt: str) -> None:
    """Refuse an unknown ``--format``."""
    if fmt not in FORMATS:
        raise UsageError(f"--format must be text or json, got {fmt!r}")


def print_report(report: dict[str, Any], *, fmt: str, to_stderr: bool = False) -> None:
    """Print ``report`` (title, stats, notes, warnings, output) as text in the reports' style
    or as one JSON object."""
    stream = sys.stderr if to_stderr else sys.stdout
    if fmt == "json":
        stream.write(jsonout.dumps(jsonout.versioned(report), indent=2, sort_keys=False) + "\n")
        stream.flush()
        return
    from whilecli import textstyle

    columns = textstyle.width(stream)
    lines = [report["title"]]
    lines += textstyle.wrap(
        f"rows: {report['input']} ({textstyle.number(report['stats'].get('rows'))} rows)", columns
    )
    if report.get("columns"):
        used = ", ".join(f"{k} {textstyle.FROM} {v}" for k, v in report["columns"].items())
        lines += textstyle.wrap(f"columns: {used}", columns)
    stats = [(textstyle.label(k), textstyle.number(v)) for k, v in report["stats"].items()]
    lines += textstyle.pairs(stats, columns)
    lines += textstyle.said("warning", report.get("warnings", []), columns)
    lines += textstyle.said("note", report.get("notes", []), columns)
    for line in report.get("extra", []):
        lines += textstyle.wrap(line, columns)
    for name, path in report.get("written", {}).items():
        lines.append(
            f"wrote {name}: {shown_path(path)}"
        )  # a path is never wrapped: it must copy whole
    stream.write("".join(f"{line}\n" for line in lines))
    stream.flush()


def run_row_method(
    method: str,
    path: str | Sequence[str],
    *,
    output: str | None = None,
    fmt: str = "text",
    **options: Any,
) -> int:
    """Run ``whilecli update --method groupwise|rm`` on the rows at ``path``, print the report,
    and return the exit code; ``options`` are :func:`whilecli.methods.run.run_rowwise`'s
    (``mode``, ``floor``, ``cap``, ``min_factor``, ``hack_zero``, ``pass_threshold``,
    ``mapping``, ``force``).

    Raises :class:`~whilecli.errors.WhileError` (one line, with its exit code) on bad usage
    or bad input; the command layer prints it.
    """
    check_format(fmt)
    from whilecli.methods.run import run_rowwise

    result = run_rowwise(method, path, output=output, **options)
    print_rowwise(result.report, fmt=fmt, to_stderr=output == "-")
    return 0


def print_rowwise(report: dict[str, Any], *, fmt: str, to_stderr: bool) -> None:
    """Print a row-wise method's report: its extra lines in text only."""
    extra = report.pop("extra")
    if fmt == "text":
        report["extra"] = extra
    print_report(report, fmt=fmt, to_stderr=to_stderr)
