"""``whilecli summarize``: graded rows → the per-task summary the route decides from.

``whilecli summarize ROWS... -o tasks.parquet`` reads rows as ``whilecli route`` does (the same
``--map``, ``--pass-threshold`` and ``--input-format``) and writes one line per task (the
schema is in :mod:`whilecli.route.summary`). ``whilecli summarize --merge a.parquet b.parquet
... -o merged.parquet`` adds summaries of shards up, so shards can be summarised anywhere,
in parallel, and routed together.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import typer

from whilecli import textstyle
from whilecli.commands import route as route_cmd
from whilecli.commands._common import STEP, existing_paths, user_errors
from whilecli.errors import UsageError, shown_path
from whilecli.fileio import is_stream
from whilecli.io.options import ReadOptions


@user_errors
def summarize_command(
    paths: list[str] = typer.Argument(
        ...,
        metavar="PATH...",
        help="Graded rows (files, directories, globs, - for stdin); with --merge, summaries.",
        callback=existing_paths,
    ),
    output: str = typer.Option(
        ...,
        "-o",
        "--output",
        metavar="FILE",
        help="Where to write the summary (.parquet; - for stdout).",
        rich_help_panel="Output",
    ),
    force: bool = typer.Option(
        False, "--force", help="Overwrite FILE if it exists.", rich_help_panel="Output"
    ),
    merge: bool = typer.Option(
        False,
        "--merge",
        help="The paths are summaries: add them up by task.",
        rich_help_panel="Inputs",
    ),
    pass_threshold: float | None = route_cmd.PASS_THRESHOLD,
    mapping: list[str] | None = route_cmd.MAPPING,
    step: int | None = STEP,
    input_format: str | None = route_cmd.INPUT_FORMAT,
    missing: str = route_cmd.MISSING,
) -> None:
    """Write the per-task counts `whilecli route` needs (rows, passes, truncation, models)."""
    _check_output(output, force=force, inputs=paths)
    from whilecli.route.summary import write_merged, write_summary  # polars: after the checks

    if merge:
        given = [
            flag
            for flag, value in (
                ("--pass-threshold", pass_threshold),
                ("--map", mapping),
                ("--input-format", input_format),
                ("--missing", missing != "skip"),
            )
            if value
        ]
        if given:
            raise UsageError(f"{', '.join(given)}: applies to rows, not to --merge of summaries")
        if "-" in paths:
            raise UsageError("--merge reads summary files, not stdin (-)")
        path = write_merged(paths, output, force=force)
        warnings = _merged_warnings(path) if output != "-" and not is_stream(path) else []
    else:
        from whilecli.io.read import parse_map, read_rows
        from whilecli.route.pool import Counts

        ReadOptions(pass_threshold=pass_threshold, missing=missing, input_format=input_format)
        rows = read_rows(
            paths,
            mapping=parse_map(mapping or []),
            pass_threshold=pass_threshold,
            input_format=input_format,
            stdin=sys.stdin.buffer if "-" in paths else None,
            aggregate=Counts(),
            missing=missing,
        )
        path = write_summary(rows, output, force=force)
        warnings = rows.facts.warnings()
    said = textstyle.said("warning", warnings, textstyle.width(sys.stderr))
    if output == "-":
        print("wrote the summary (Parquet) to stdout", file=sys.stderr)
        print("".join(f"{line}\n" for line in said), end="", file=sys.stderr)
        return
    if is_stream(path):  # a device or a pipe: nothing to read back
        print(f"wrote {shown_path(path)}", file=sys.stderr)
    else:
        import pyarrow.parquet as pq

        with open(path, "rb") as handle:  # a name that is not UTF-8 is no text for pyarrow
            tasks = pq.read_metadata(handle).num_rows
        print(f"wrote {shown_path(path)}: {tasks} tasks", file=sys.stderr)
    print("".join(f"{line}\n" for line in said), end="", file=sys.stderr)


def _merged_warnings(path: str | os.PathLike[str]) -> list[str]:
    """What the merged summary's inputs found when they were read (its header's row facts)."""
    from whilecli.route.summary_header import facts_of, read_header

    header = read_header(path)
    return facts_of(header.inputs).warnings() if header is not None else []


#: A summary is one Parquet file (``docs/scale.md``); any other name is refused, so a
#: ``tasks.jsonl`` never holds Parquet bytes.
SUFFIXES = (".parquet", ".pq")


def _check_output(output: str, *, force: bool, inputs: Sequence[str] = ()) -> None:
    """Refuse a summary target before reading any row: a name that is not ``.parquet``, a
    path that cannot be written, one of ``inputs``, or ``-`` (stdout) on a terminal."""
    from whilecli.fileio import check_writable

    if output == "-":
        if sys.stdout.isatty():
            raise UsageError(
                "-o -: a summary is Parquet (binary); redirect stdout to a file or a pipe"
            )
        return
    from whilecli.fileio import is_stream

    suffix = os.path.splitext(output)[1].lower()
    if suffix not in SUFFIXES and not is_stream(output):  # a device or a pipe takes Parquet
        shown = f"'{suffix}'" if suffix else "no extension"
        raise UsageError(
            f"{shown_path(output)}: a summary is one Parquet file, name it .parquet (got {shown});"
            " the route reads it back from Parquet only"
        )
    check_writable(output, force=force, inputs=inputs)
