"""``whilecli route``: read graded rows, run the six checks, decide, report.

The pipeline (DESIGN section 2)::

    read_rows(paths) → Rows → summarize(rows) → Pool → decide(pool, options) → Route → render

:func:`run_route` runs it end to end, reading a teacher's rows the same way when given. A
Pool is already a per-task summary: paths that hold summaries (``whilecli summarize``, see
:mod:`whilecli.route.summary`) skip reading and go straight to ``pool_from_summary``.
The stages are re-exported lazily (PEP 562), so importing this package stays cheap and
never imports torch. ``decide`` names both a stage and the module that holds it: the
package attribute is always the function (``from whilecli.route.decide import ...`` still
reaches the module).
"""

from __future__ import annotations

import dataclasses
import importlib
import io
import sys
import types
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

from whilecli.errors import InputError, UsageError

if TYPE_CHECKING:
    from whilecli.io.read import StreamedRows
    from whilecli.route.model import Pool, Route
    from whilecli.route.options import RouteOptions
    from whilecli.route.slices import Slices

__all__ = [
    "Route",
    "RouteOptions",
    "decide",
    "read_rows",
    "render",
    "is_summary",
    "merge_summaries",
    "pool_from_summary",
    "run_route",
    "summarize",
    "write_summary",
]

_EXPORTS: dict[str, str] = {
    "read_rows": "whilecli.io.read",
    "parse_map": "whilecli.io.read",
    "summarize": "whilecli.route.pool",
    "decide": "whilecli.route.decide",
    "RouteOptions": "whilecli.route.options",
    "Route": "whilecli.route.model",
    "render": "whilecli.route.report",
    "write_summary": "whilecli.route.summary",
    "merge_summaries": "whilecli.route.summary",
    "is_summary": "whilecli.route.summary",
    "pool_from_summary": "whilecli.route.summary",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'whilecli.route' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


class _Package(types.ModuleType):
    """This package's module type: importing a submodule never hides a re-exported stage.

    Importing ``whilecli.route.decide`` makes Python set the package attribute ``decide``
    to that module; here the attribute takes the module's function of the same name.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _EXPORTS and isinstance(value, types.ModuleType) and hasattr(value, name):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def _as_paths(value: str | Sequence[str] | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def _summary_files(paths: list[str], summary: bool | None, what: str) -> list[str] | None:
    """The summary files behind ``paths``, or None when they are rows to read.

    ``summary`` None detects: every file the paths name (directories and globs expanded)
    is a summary. True requires that; False reads rows whatever the files hold.
    """
    from whilecli.errors import WhileError
    from whilecli.io.sources import expand_paths

    if summary is False:
        return None
    if "-" in paths:
        if summary:
            raise UsageError(f"{what}: a summary is read from a file, not from stdin (-)")
        return None
    try:
        sources = [s for s in expand_paths(paths, resolve_formats=False) if s.path is not None]
    except WhileError:
        if summary:
            raise
        return None
    files = [str(s.path) for s in sources]
    found: list[str] = []
    if any(s.kind == "parquet" for s in sources):  # only Parquet can hold a summary
        from whilecli.route.summary import is_summary

        found = [
            str(s.path)
            for s in sources
            if s.kind == "parquet" and s.path is not None and is_summary(s.path)
        ]
    if found and len(found) == len(files):
        return files
    if summary:
        rows = next(f for f in files if f not in found)
        raise UsageError(f"{what}: {rows} is not a summary (made by `whilecli summarize`)")
    if found:
        rows = next(f for f in files if f not in found)
        raise UsageError(
            f"{what}: {found[0]} is a summary but {rows} holds rows; summarise every shard"
            " (`whilecli summarize`) or route the rows alone"
        )
    return None


def _teacher_hint(err: InputError) -> InputError:
    """A teacher's refusal whose hint names ``--map``, naming ``--teacher-map`` instead: the
    option that reads the teacher's rows alone (``--map`` reads the student's too)."""
    if "--map " not in err.detail or type(err) is not InputError:
        return err
    return InputError(
        err.detail.replace("--map ", "--teacher-map "),
        file=err.file,
        line=err.line,
        row=err.row,
        field=err.field,
        at=err.at,
    )


def run_route(
    paths: str | Sequence[str],
    *,
    teacher: str | Sequence[str] | None = None,
    mapping: Mapping[str, str] | None = None,
    teacher_mapping: Mapping[str, str] | None = None,
    pass_threshold: float | None = None,
    input_format: str | None = None,
    options: RouteOptions | None = None,
    missing: str = "skip",
    stdin: BinaryIO | None = None,
    summary: bool | None = None,
    pool: bool = False,
    by: str | None = None,
    **option_overrides: Any,
) -> Route | Slices:
    """Route graded rows: read → summarize → decide.

    ``pool`` merges files that look like different evaluations on purpose; ``by`` routes each
    input file (``"source"``) or each value of a column apart and returns
    :class:`~whilecli.route.slices.Slices` (see :mod:`whilecli.route.slices`).

    ``paths`` (files, directories, globs, ``-`` for ``stdin``) are the rows of the model to
    train; ``teacher`` the teacher's rows on the same tasks, read with the same ``mapping``
    (``teacher_mapping``'s fields over it: a teacher in another layout has its own map),
    ``pass_threshold`` and ``input_format`` and summarized into ``options.teacher``.
    ``missing`` (``skip`` / ``fail``): ungraded rows are left out of every rate, or fail.
    ``option_overrides`` replace fields of ``options`` (default :class:`RouteOptions`), e.g.
    ``run_route("rows.parquet", model="Qwen/Qwen3-0.6B", strict=True)``.

    Summaries (``whilecli summarize``) are routed without reading rows, for the student and
    the teacher alike: detected when every file is one (``summary=None``), required with
    ``summary=True`` (``--summary``), never with ``summary=False``. The route is the one the
    rows behind them give.
    """
    from whilecli.io.read import read_rows
    from whilecli.route.decide import decide
    from whilecli.route.options import RouteOptions
    from whilecli.route.pool import Counts, summarize

    student_paths = _as_paths(paths)
    teacher_paths = _as_paths(teacher)
    if not student_paths:
        raise UsageError("give at least one path of graded rows (or - for stdin)")
    if "-" in student_paths and "-" in teacher_paths:
        raise UsageError("stdin (-) can feed the rows or --teacher, not both")

    base = options if options is not None else RouteOptions()
    known = {f.name for f in dataclasses.fields(base)}
    unknown = sorted(set(option_overrides) - known)
    if unknown:
        raise UsageError(f"unknown route option(s): {', '.join(unknown)}")
    opts = dataclasses.replace(base, **option_overrides) if option_overrides else base

    read_args: dict[str, Any] = {
        "mapping": mapping,
        "pass_threshold": pass_threshold,
        "missing": missing,
        "input_format": input_format,
        "stdin": stdin,
        "pool": pool,
    }

    teacher_map = {**(mapping or {}), **(teacher_mapping or {})}

    def pool_of(given: list[str], what: str, key_envs: bool = False) -> Pool:
        files = _summary_files(given, summary, what)
        is_teacher = what == "--teacher"
        if files is None:  # the tasks' first rows are found only for --show
            counts = Counts(located=bool(opts.show))
            args = {**read_args, "mapping": teacher_map or None} if is_teacher else read_args
            try:
                read = read_rows(given, **args, aggregate=counts, key_envs=key_envs)
            except InputError as err:
                raise (_teacher_hint(err) if is_teacher else err) from None
            return summarize(read)
        if teacher_mapping and is_teacher:
            raise UsageError("--teacher-map applies to rows; --teacher are summaries, already read")
        if mapping or input_format is not None:
            flag = "--map" if mapping else "--input-format"
            raise UsageError(f"{flag} applies to rows; {what} are summaries, already read")
        from whilecli.route.summary import pool_from_summary

        return pool_from_summary(files, pass_threshold=pass_threshold, missing=missing)

    student = pool_of(student_paths, "the rows") if by is None else None
    if teacher_paths:
        from whilecli.route.shared import graded_alike, keyed_as

        teacher_pool = pool_of(teacher_paths, "--teacher")
        if student is not None:  # refused even where check 4 is not reached
            graded_alike(student, teacher_pool)
        if student is not None and keyed_as(teacher_pool, student) and "-" not in teacher_paths:
            teacher_pool = pool_of(teacher_paths, "--teacher", key_envs=True)
        if student is not None and keyed_as(student, teacher_pool) and "-" not in student_paths:
            student = pool_of(student_paths, "the rows", key_envs=True)
        opts = dataclasses.replace(opts, teacher=teacher_pool)
    if student is not None:
        return decide(student, opts)
    from whilecli.route.slices import Refused, Slices

    if by == "source":
        from whilecli.io.sources import expand_paths

        routes: list[tuple[str, Route | Refused]] = []
        for source in expand_paths(student_paths, stdin):
            try:
                if source.path is None:  # stdin, already read: route its bytes
                    stdin_rows = {**read_args, "stdin": io.BytesIO(source.data or b"")}
                    counts = Counts(located=bool(opts.show))
                    one = summarize(read_rows(["-"], **stdin_rows, aggregate=counts))
                else:
                    one = pool_of([source.name], "the rows")
                routes.append((source.name, decide(one, opts)))
            except InputError as err:  # this file alone is refused: the others still route
                routes.append((source.name, Refused.of(err)))
        return Slices("source", routes)
    assert by is not None  # by is None routed the pool above
    from whilecli.io.slices import read_slices

    def slice_counts() -> Counts:  # the tasks' first rows are found only for --show
        return Counts(located=bool(opts.show))

    def routed(part: StreamedRows | InputError) -> Route | Refused:
        if isinstance(part, InputError):
            return Refused.of(part)
        try:
            return decide(summarize(part), opts)
        except InputError as err:  # these rows alone are refused: the other slices still route
            return Refused.of(err)

    parts = read_slices(student_paths, by, aggregate=slice_counts, **read_args)
    return Slices(by, [("(none)" if v is None else v, routed(part)) for v, part in parts])
