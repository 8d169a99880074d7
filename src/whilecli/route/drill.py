"""``--show``: the task ids behind a count, with where their first rows are (DESIGN section 2,
"Drill-down").

Reading keeps two positions per task, the smallest of its rows and the smallest of its
truncated passing rows (``first_at`` and ``first_truncated_pass_at`` of :attr:`Pool.tasks`,
see :data:`whilecli.io.rows.AT_BITS`): no per-row list is held. ``truncated-passes`` shows
where each task's first cut-off passing reply is, every other count where its first row is. Here the few tasks shown are
picked with a filter on the per-task table, in the order of their first rows, and only their
positions are turned into what the reader saw: the row of a Parquet file (0-based), the line
of a JSON Lines file (1-based), or the row of a document converted in memory
(:meth:`whilecli.io.sources.Source.where`). A JSON Lines file is walked line by line only
as far as the last line shown, and only when ``--show`` asks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from whilecli.errors import UsageError
from whilecli.io.rows import AT_BITS
from whilecli.io.sources import Source, iter_lines
from whilecli.route.model import Pool
from whilecli.route.pool import FIRST, FIRST_TRUNCATED_PASS, POSITIONS

#: What ``--show`` lists, as typed, and the key each list has in the JSON report.
SHOW_KINDS: dict[str, str] = {
    "truncated-passes": "truncated_passes",
    "floor": "floor",
    "saturated": "saturated",
    "split": "split",
    "singles": "singles",
}
#: Tasks listed per kind when ``--limit`` is not given.
DEFAULT_LIMIT = 20

#: What each kind counts, in words (one task, several tasks).
KIND_WORDS: dict[str, tuple[str, str]] = {
    "truncated_passes": ("task with a truncated pass", "tasks with a truncated pass"),
    "floor": ("grouped task at 0", "grouped tasks at 0"),
    "saturated": ("grouped task at 1", "grouped tasks at 1"),
    "split": ("split task", "split tasks"),
    "singles": ("single task", "single tasks"),
}


def _filters() -> dict[str, pl.Expr]:
    n, passes = pl.col("n"), pl.col("passes")
    grouped = n >= 2
    return {
        "truncated_passes": pl.col("truncated_passes") > 0,
        "floor": grouped & (passes == 0),
        "saturated": grouped & (passes == n),
        "split": grouped & (passes > 0) & (passes < n),
        "singles": n == 1,
    }


def parse_show(values: Sequence[str] | None) -> tuple[str, ...]:
    """``--show`` values (repeatable, or comma-separated) → JSON keys, in the order of
    :data:`SHOW_KINDS`; an unknown name is a usage error."""
    named: set[str] = set()
    for value in values or ():
        for part in value.split(","):
            name = part.strip().lower().replace("_", "-")
            if not name:
                continue
            if name not in SHOW_KINDS:
                raise UsageError(f"--show {part.strip()!r}: one of {', '.join(SHOW_KINDS)}")
            named.add(SHOW_KINDS[name])
    return tuple(k for k in SHOW_KINDS.values() if k in named)


def check_limit(limit: int) -> int:
    """``--limit N``: tasks listed per kind, at least 1."""
    if limit < 1:
        raise UsageError(f"--limit must be at least 1, got {limit}")
    return limit


def drill_down(pool: Pool, kinds: Sequence[str], limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
    """``{kind: {"count", "shown", "left_out"}}`` for each JSON key in ``kinds``.

    ``shown`` holds at most ``limit`` tasks in the order of their first rows (ties and tasks
    without a recorded position by task id), each ``{"task_id", "rows", "passes", "file",
    "line", "row"}``: ``line`` for a JSON Lines file, ``row`` for Parquet or a converted
    document, the other null; all three null for a pool read from summaries.
    """
    if not kinds:
        return {}
    tasks = pool.tasks
    for column in POSITIONS:
        if column not in tasks.columns:
            tasks = tasks.with_columns(pl.lit(None, dtype=pl.Int64).alias(column))
    filters = _filters()
    picked: dict[str, tuple[int, pl.DataFrame]] = {}
    for kind in kinds:
        # a truncated pass is shown where the cut-off reply that passed is, any other task
        # where its first row is
        at = FIRST_TRUNCATED_PASS if kind == "truncated_passes" else FIRST
        chosen = tasks.filter(filters[kind]).with_columns(pl.col(at).alias("__shown_at"))
        # a --limit past int64 lists every task, as any --limit past the count does
        top = chosen.sort(["__shown_at", "task_id"], nulls_last=True).head(min(limit, 2**63 - 1))
        picked[kind] = (chosen.height, top)
    wanted = {int(a) for _, top in picked.values() for a in top["__shown_at"].drop_nulls()}
    places = _places(wanted, list(getattr(pool.source, "located", None) or []))
    out: dict[str, Any] = {}
    for kind, (count, top) in picked.items():
        shown = [
            {
                "task_id": task,
                "rows": int(n),
                "passes": int(passes),
                **places.get(at, {"file": None, "line": None, "row": None}),
            }
            for task, n, passes, at in top.select(
                "task_id", "n", "passes", "__shown_at"
            ).iter_rows()
        ]
        out[kind] = {"count": count, "shown": shown, "left_out": count - len(shown)}
    return out


def _places(positions: set[int], sources: list[Source]) -> dict[int, dict[str, Any]]:
    """Each position → ``{"file", "line", "row"}`` as the reader names it."""
    by_source: dict[int, set[int]] = {}
    for at in positions:
        by_source.setdefault(at >> AT_BITS, set()).add(at & ((1 << AT_BITS) - 1))
    out: dict[int, dict[str, Any]] = {}
    for index, places in by_source.items():
        if index >= len(sources):
            continue
        source = sources[index]
        base = index << AT_BITS
        if source.kind == "parquet":
            for place in places:
                out[base + place] = {"file": source.name, "line": None, "row": place}
            continue
        for place, lineno in _line_numbers(source, places).items():
            where = source.where(lineno)
            out[base + place] = {
                "file": source.name,
                "line": where.get("line"),
                # a converted document's row keeps its ordinal; "at" names its place there
                "row": where.get("row", lineno - 1 if "at" in where else None),
                **({"at": where["at"]} if "at" in where else {}),
            }
    return out


def _line_numbers(source: Source, ordinals: set[int]) -> dict[int, int]:
    """The 1-based line of each 1-based ordinal among a JSON Lines source's non-blank lines
    (the numbering ``iter_lines`` and polars' reader share), reading no further than needed."""
    last = max(ordinals)
    out: dict[int, int] = {}
    for ordinal, (lineno, _) in enumerate(iter_lines(source), 1):
        if ordinal in ordinals:
            out[ordinal] = lineno
        if ordinal >= last:
            break
    return out


def plural(n: int, one: str, many: str | None = None) -> str:
    """``1 row``, ``2 rows``: a count with its noun agreeing."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


def place_words(item: dict[str, Any]) -> str:
    """Where a task's first row is: ``rows.jsonl line 12``, ``rows.parquet row 0``, or
    ``position not recorded`` (a pool read from summaries)."""
    if item.get("file") is None:
        return "position not recorded"
    if item.get("line") is not None:
        return f"{item['file']} line {item['line']}"
    if item.get("at") is not None:
        return f"{item['file']} {item['at']}"
    return f"{item['file']} row {item['row']}"


def show_heading(kind: str, entry: dict[str, Any]) -> str:
    """``2 split tasks (1 listed, 1 left out: raise --limit)``; ``1 split task``."""
    one, many = KIND_WORDS[kind]
    count, shown, left = entry["count"], len(entry["shown"]), entry["left_out"]
    head = plural(count, one, many)
    if left:
        head += f" ({shown} listed, {left} left out: raise --limit)"
    return head


def show_item(item: dict[str, Any], keep: Callable[[str], str] = str) -> str:
    """``task-7: rows.jsonl line 12 (8 rows, 3 passing)``: where the task's first row is.
    ``keep`` marks the parts a wrapped line must not cut (the place, the counts)."""
    counts = f"({plural(item['rows'], 'row')}, {item['passes']} passing)"
    return f"{item['task_id']}: {keep(place_words(item))} {keep(counts)}"


def show_sections(
    show: dict[str, Any], keep: Callable[[str], str] = str
) -> list[tuple[str, list[str]]]:
    """(heading, item lines) per count shown, in :data:`SHOW_KINDS` order."""
    return [
        (show_heading(kind, entry), [show_item(item, keep) for item in entry["shown"]])
        for kind, entry in show.items()
    ]
