"""Bad input, located and explained: the first bad row of a file, and the refusal of rewards
outside [0, 1] with the binary-looking columns the rows do carry (DESIGN section 1).

Reading (:mod:`whilecli.io.read`) finds *that* a file holds a bad value with one aggregate
query; these helpers run only then, to name *where* (file, line or row, field) or to say
what to pass instead.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from whilecli.errors import InputError
from whilecli.io.aliases import (
    ATTEMPT_NAMES,
    SAMPLE_INDEX_NAMES,
    correctness_first,
    error_named,
)
from whilecli.io.facts import PASS_TOLERANCE
from whilecli.io.plan import MISSING_TEXTS, Plan
from whilecli.io.shape import TASK_ALIASES
from whilecli.io.sources import Source, Where, iter_lines
from whilecli.io.words import grade_text

#: Rounding forgiven at both ends of [0, 1]: the pass rule's tolerance (float32's), so a rubric
#: sum of 1.0000000001, or of 1.0000001 in float32, is 1.
UNIT_TOLERANCE = PASS_TOLERANCE
NUL_ID = (
    "the task id holds U+0000 (a NUL, or a lone UTF-16 surrogate escape such as \\ud800, which"
    " is no character): not an id, and two such ids would be one task"
)
POS = "__pos"  # a JSONL line (1-based) or Parquet row (0-based), kept only to locate errors
#: Columns that count rows or rollouts, never a binary rubric outcome.
INDEX_LIKE = ("step", "sample_id", "rollout_index", "_ng_rollout_index", "advantage")
#: Flags that are no grade: a cut-off reply, an error, a failure's kind.
NOT_GRADES = ("truncated", "is_truncated", "error", "failureReason", "failure_reason")


#: An infinite number as a text column holds it (a JSON ``1e400`` or ``Infinity`` among text
#: ids reads as ``Infinity``): no id, as the number itself is none.
INFINITE_TEXTS = ("inf", "+inf", "-inf", "infinity", "+infinity", "-infinity")


def no_id() -> pl.Expr:
    """A row no task keys: no id, a missing value written as text (:data:`MISSING_TEXTS`), or
    an id holding U+0000 (a NUL, or a lone UTF-16 surrogate escape such as ``\\ud800``, which is
    no character and every JSON reader here reads as U+0000: two such ids would silently be
    one task)."""
    task = pl.col("task_id")
    return (
        task.is_null()
        | task.str.contains("\x00", literal=True).fill_null(False)
        | task.str.to_lowercase().is_in(MISSING_TEXTS + INFINITE_TEXTS).fill_null(False)
    )


def id_problem(task: str | None, origin: str) -> str | None:
    """What is wrong with a task id (``origin``: where it was read), or None."""
    if task is None or task.lower() in INFINITE_TEXTS:
        return f"no task id ({origin})"  # an infinite number is none, wherever it is read
    if "\x00" in task:
        return NUL_ID
    if task.lower() in MISSING_TEXTS:
        return (
            f"the task id is the text {task!r}, what a writer leaves where a value was missing:"
            " not an id (every such row would be one task)"
        )
    return None


#: A JSON string's body, escapes included.
_JSON_STRING = r'"((?:[^"\\]|\\.)*)"'
#: One escape of a JSON string (``\\n``, ``\\\\``, ``\\u00e9``), or a raw NUL byte.
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)|\x00")


def _nul_id_as_written(source: Source, lineno: int, key: str) -> str | None:
    """The refusal of an id read as U+0000, naming what line ``lineno`` of the JSON Lines
    ``source`` writes there: the lone surrogate escape (``\\ud800``, which every JSON
    reader here reads as U+0000) or the NUL (``\\u0000``, or the byte). None when the id's
    text cannot be told (a nested key, a line past the end): the general refusal stands."""
    for at, raw in iter_lines(source):
        if at < lineno:
            continue
        if at > lineno:
            return None
        text = raw.decode("utf-8", "replace")
        found = re.search(rf'"{re.escape(key)}"\s*:\s*{_JSON_STRING}', text)
        return None if found is None else _nul_in(found.group(1))
    return None


def _nul_in(body: str) -> str | None:
    """What in the JSON string ``body`` reads as U+0000: a NUL, or a lone surrogate escape."""
    tokens = list(_ESCAPE.finditer(body))
    codes = [-1 if t.group(1) is None else int(t.group(1), 16) for t in tokens]

    def joined(i: int, j: int, low: int, high: int) -> bool:
        """Token ``j`` (in range) touches token ``i`` and is a surrogate in [low, high]."""
        if not 0 <= j < len(tokens):
            return False
        first, second = sorted((tokens[i], tokens[j]), key=lambda t: t.start())
        return first.end() == second.start() and low <= codes[j] <= high

    for i, (token, code) in enumerate(zip(tokens, codes, strict=True)):
        if token.group(0) == "\x00" or code == 0:
            return "the task id holds U+0000 (a NUL): not an id, and two such ids would be one task"
        if not 0xD800 <= code <= 0xDFFF:
            continue
        if code < 0xDC00 and joined(i, i + 1, 0xDC00, 0xDFFF):
            continue  # a high surrogate with its low one: one character
        if code >= 0xDC00 and joined(i, i - 1, 0xD800, 0xDBFF):
            continue
        return (
            f"the task id holds the escape {token.group(0)}, a lone UTF-16 surrogate, which is"
            " no character (every JSON reader here reads it as U+0000): not an id, and two such"
            " ids would be one task"
        )
    return None


def problems() -> pl.Expr:
    return no_id() | pl.col("reward").is_null() | ~pl.col("reward").is_finite().fill_null(False)


def infinite_reward() -> pl.Expr:
    """A row whose reward is infinite, which no reading takes (a null or NaN reward is an
    ungraded row, which :mod:`whilecli.io.facts` counts; a row without a task id is refused
    where a rate counts it, ``whilecli.io.read._Pass.idless``)."""
    return pl.col("reward").is_infinite().fill_null(False)


def first_row(lf: pl.LazyFrame, rows: pl.Expr) -> int | None:
    """The 0-based index of the first row of ``lf`` where ``rows`` holds, or None. (A lazy
    ``arg_max`` of a boolean column may name a later row than the first true one: polars
    2.1 gives 8 for a column true from row 0.)"""
    found = lf.with_row_index(POS).filter(rows).select(pl.col(POS).first()).collect()
    return None if found.height == 0 else found.item()


def refuse_bytes_not_text(lf: pl.LazyFrame, schema: pl.Schema, name: str) -> None:
    """Refuse, at its row and column, the first value of a Parquet binary column that is not
    UTF-8 text (a reader takes a binary column's values as text: polars fails the whole read
    with "invalid utf8"); nothing when every binary value is text."""
    for column, dtype in schema.items():
        if dtype != pl.Binary:
            continue
        # polars' cast fails the whole column, strict or not: each value is tried here, on
        # the error's path only
        values = lf.select(column).collect().to_series()
        for at, value in enumerate(values):
            try:
                None if value is None else value.decode("utf-8")
            except UnicodeDecodeError:
                raise InputError(
                    "holds bytes that are not UTF-8 text (a binary column read as text)",
                    file=name,
                    row=at,
                    field=column,
                ) from None


def locate(
    frame: pl.DataFrame, plan: Plan, source: Source, bad_rows: pl.Expr | None = None
) -> None:
    """Raise on the first row with a missing task id or a missing or non-finite reward (or
    the first of ``bad_rows``). An infinite reward is named before the row's task id: a
    reading that needs no task id (``update --method flash_reinforce``) refuses the row for
    its reward, which is what is wrong with it there."""
    bad = frame.filter(problems() if bad_rows is None else bad_rows).head(1)
    if bad.height == 0:
        return
    row = bad.row(0, named=True)
    pos = int(row[POS])
    where: Where = {"row": pos} if source.kind == "parquet" else source.where(pos)
    reward = row["reward"]
    infinite = isinstance(reward, float) and math.isinf(reward)
    what = None if infinite else id_problem(row["task_id"], plan.sources["task_id"])
    if what is not None:
        field = plan.fields.get("task_id", "task_id")
        if what == NUL_ID and "line" in where and source.format is None:
            what = _nul_id_as_written(source, where["line"], field) or what
        raise InputError(what, file=source.name, field=field, **where)
    field = plan.fields.get("reward", "reward")
    if row["reward"] is None:
        raise InputError("reward is missing (null)", file=source.name, field=field, **where)
    raise InputError(
        f"reward is {row['reward']}, not a finite number", file=source.name, field=field, **where
    )


def refuse_unbounded(
    low: float, high: float, hint: Callable[[], list[str]], file: str, field: str
) -> None:
    """Refuse rewards outside [0, 1] without an explicit ``--pass-threshold`` (exit 2)."""
    if low >= -UNIT_TOLERANCE and high <= 1.0 + UNIT_TOLERANCE:
        return
    columns = hint()
    cols = (
        "binary-looking columns the rows carry: " + ", ".join(columns)
        if columns
        else "the rows carry no binary-looking column"
    )
    raise InputError(
        f"rewards run from {_exact(low)} to {_exact(high)}, outside [0, 1], so pass/fail is not"
        " defined"
        f" (a weighted rubric sum is not a pass/fail); {cols}. Pass --pass-threshold T, or"
        f" --map reward={columns[0] if columns else 'COLUMN'}",
        file=file,
        field=field,
    )


def refuse_one_grade_threshold(
    threshold: float, low: float, high: float, file: str, field: str
) -> None:
    """Refuse an explicit ``--pass-threshold`` at 0 or below where every reward lies in [0, 1]
    and they differ (exit 2): each row would pass, a total regression read as no change. (A
    threshold above every reward is read: a scale may reach past this file's rewards, a
    bonus none of its rows earned; the route says the band rests on it,
    :func:`whilecli.route.quality.findings`.)"""
    unit = low >= -UNIT_TOLERANCE and high <= 1.0 + UNIT_TOLERANCE
    if not unit or high - low <= UNIT_TOLERANCE or threshold > UNIT_TOLERANCE:
        return
    said = "0 or below, so every reward in [0, 1] passes: every row would pass"
    raise InputError(
        f"--pass-threshold {threshold:g} is {said}, though the rewards run from {_exact(low)}"
        f" to {_exact(high)}; pass a threshold in (0, 1] (a reward at or above it passes)",
        file=file,
        field=field,
    )


def refuse_scales_apart(threshold: float, ranges: Sequence[tuple[str, str, float, float]]) -> None:
    """Refuse files whose rewards lie on different scales under one ``--pass-threshold``
    (exit 2): each (file, field, lowest, highest) graded reward; a file whose rewards all lie
    in [0, 1] beside one whose rewards run past 1 (a 0/1 file beside a 0-100 one, or a
    rubric's 1-5): one threshold grades one scale, so the other file's passes read as
    failures (a threshold of 50 on 0/1 rows) or its low scores as passes."""
    unit = [r for r in ranges if r[2] >= -UNIT_TOLERANCE and r[3] <= 1.0 + UNIT_TOLERANCE]
    wide = [r for r in ranges if r[3] > 1.0 + UNIT_TOLERANCE]
    if not unit or not wide:
        return
    (ufile, _, ulow, uhigh), (wfile, wfield, wlow, whigh) = unit[0], wide[0]
    raise InputError(
        f"--pass-threshold {threshold:g} grades files on different scales: {ufile}'s rewards"
        f" run from {_exact(ulow)} to {_exact(uhigh)}, {wfile}'s from {_exact(wlow)} to"
        f" {_exact(whigh)}; one threshold cannot grade both: route each file apart with its"
        " own --pass-threshold, or put them on one scale",
        file=wfile,
        field=wfield,
    )


def _exact(value: float) -> str:
    """A bound as short as it reads, but never rounded into [0, 1] (``1.0000001``, not ``1``)."""
    short = f"{value:g}"
    return short if float(short) == value or not 0 <= float(short) <= 1 else repr(value)


def _skip_binary(name: str, plan: Plan) -> bool:
    """Columns never offered as a grade: ids, indices, a draw's attempt or sample index
    (:data:`~whilecli.io.aliases.ATTEMPT_NAMES`), what the plan reads as another field
    (a truncation flag, an error, a version) and what is named as an error
    (:func:`~whilecli.io.aliases.error_named`: ``crashed``, ``is_error``); a part of a summed
    reward is offered."""
    return (
        name in TASK_ALIASES
        or name in INDEX_LIKE
        or name in NOT_GRADES
        or name in ATTEMPT_NAMES
        or name in SAMPLE_INDEX_NAMES
        or error_named(name.rsplit(".", 1)[-1])
        or name in {v for k, v in plan.fields.items() if k != "reward"}
        or name.endswith(("_id", "_index", "_ms", "Idx", "Index"))
    )


def binary_columns_sample(sample: list[tuple[int, dict[str, Any]]], plan: Plan) -> list[str]:
    """Columns whose sampled values are all booleans, or all numbers in {0, 1}, at the top
    level or inside an object (``rewards.correctness``, :func:`_leaves_of`), correctness
    first (:func:`~whilecli.io.aliases.correctness_first`)."""
    seen: dict[str, set[str]] = {}
    for _, row in sample:
        for key, value in _leaves_of(row).items():
            kinds = seen.setdefault(key, set())
            if value is None:
                continue
            if isinstance(value, bool):
                kinds.add("bool")
            elif isinstance(value, (int, float)) and value in (0, 1):
                kinds.add("01")
            else:
                kinds.add("other")
    found = [k for k, v in seen.items() if v and "other" not in v and not _skip_binary(k, plan)]
    return correctness_first(found)


def binary_columns_parquet(lf: pl.LazyFrame, schema: pl.Schema, plan: Plan) -> list[str]:
    """:func:`binary_columns_sample` of a Parquet file's columns and its struct columns'
    fields (:func:`_struct_leaves`), from the whole file."""
    inner, inner_types = _struct_leaves(schema)
    exprs = {name: pl.col(name) for name in schema} | inner
    types = dict(schema) | dict(inner_types)
    cols = [
        name
        for name, dtype in types.items()
        if (dtype == pl.Boolean or dtype.is_numeric()) and not _skip_binary(name, plan)
    ]
    if not cols:
        return []

    def binary(name: str) -> pl.Expr:
        c = exprs[name]
        if types[name] == pl.Boolean:
            return pl.lit(True).alias(name)
        return (c.is_null() | (c == 0) | (c == 1)).all().alias(name)

    try:
        flags = lf.select([binary(c) for c in cols]).collect().row(0, named=True)
    except pl.exceptions.PolarsError:
        return []
    return correctness_first([c for c in cols if flags[c]])


#: Words a text column's name says it holds a grade with (``is_correct``, ``verdict``,
#: ``judgement``): where a placeholder reward may stand beside it (:func:`grade_beside_sample`).
#: Not ``status`` or ``result``, which as often hold a request's state or the answer.
TEXT_GRADE_WORDS = ("correct", "pass", "resolved", "solved", "verdict", "judg", "grade", "acc")


def _graded(values: list[Any]) -> tuple[int, int] | None:
    """(passes, graded) of values read as grades: booleans, numbers at 0 or 1, or grade
    words (:func:`~whilecli.io.words.grade_text`); None where any value is another number,
    text that is no grade, or anything else."""
    ones = known = 0
    for value in values:
        if isinstance(value, str):
            try:
                value = grade_text(value)
            except ValueError:
                return None
        if value is None:
            continue
        if isinstance(value, bool) or (isinstance(value, int | float) and value in (0, 1)):
            ones, known = ones + int(value == 1), known + 1
        else:
            return None
    return ones, known


def _text_grade_named(name: str, plan: Plan) -> bool:
    return any(w in name.lower() for w in TEXT_GRADE_WORDS) and not _skip_binary(name, plan)


#: How deep :func:`grade_beside_sample` and :func:`grade_beside_frame` look into objects
#: for a grade (``metrics.exact_match``, ``scores.accuracy.value``).
GRADE_DEPTH = 3


def _leaves_of(row: dict[str, Any], depth: int = GRADE_DEPTH) -> dict[str, Any]:
    """A row's values by dotted path through its objects (``metrics.exact_match``), to
    ``depth`` keys; a list is one value, and a key with a dot in it is not followed (its path
    would read as two keys)."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, dict) and depth > 1:
            inner = _leaves_of(value, depth - 1)
            out.update({f"{key}.{k}": v for k, v in inner.items() if "." not in key})
        else:
            out[key] = value
    return out


def grade_beside_sample(
    sample: list[tuple[int, dict[str, Any]]], plan: Plan, field: str
) -> tuple[str, int, int] | None:
    """The first column beside ``field`` (the reward read), at the top level or inside an
    object (``metrics.exact_match``, :func:`_leaves_of`), whose sampled values grade both
    ways: a binary-looking column (:func:`binary_columns_sample`) or a text one whose name
    says grade (:data:`TEXT_GRADE_WORDS`), with its passes and graded values."""
    sample = [(i, _leaves_of(row)) for i, row in sample]
    texts = {k for _, row in sample for k, v in row.items() if isinstance(v, str)}
    named = [k for k in correctness_first(sorted(texts)) if _text_grade_named(k, plan)]
    for column in dict.fromkeys([*binary_columns_sample(sample, plan), *named]):
        counted = _graded([row.get(column) for _, row in sample]) if column != field else None
        if counted is not None and 0 < counted[0] < counted[1]:
            return column, *counted
    return None


#: Names that say a column beside the reward is a grade of its own (a binary column of
#: another name, ``format_ok``, ``has_code``, grades something else).
GRADE_WORDS = (*TEXT_GRADE_WORDS, "match", "success", "score", "reward", "right", "win")
#: A grade beside the reward that disagrees with the pass rule on at least this share of
#: the sampled rows both grade, and this many rows, is another reading of the rows.
DISAGREE_SHARE, DISAGREE_ROWS = 0.1, 5


def grade_disagrees(
    sample: list[dict[str, Any]], plan: Plan, field: str, threshold: float
) -> tuple[str, int, int] | None:
    """The first binary column beside ``field`` (the reward read) whose name says grade
    (:data:`GRADE_WORDS`: ``correct``, ``is_correct``, ``accuracy_reward``, ``resolved``)
    and whose sampled grades disagree with the pass rule on the reward (reward ≥
    ``threshold``) on :data:`DISAGREE_SHARE` of the rows both grade or more: ``score``
    read as the reward where ``correct`` says otherwise, a sum of an accuracy and a format
    reward (``accuracy_reward + format_reward``, TRL's) thresholded where
    ``accuracy_reward`` says otherwise. With (disagreeing rows,
    rows both grade); None where no such column disagrees."""
    rows = [_leaves_of(row) for row in sample]
    indexed = list(enumerate(rows))
    summed = field.split(" + ")  # a reward kept in named columns is their sum (TRL's)
    for column in binary_columns_sample(indexed, plan):
        if column == field or not any(w in column.lower() for w in GRADE_WORDS):
            continue
        disagree = compared = 0
        for row in rows:
            grade, reward = _graded([row.get(column)]), _summed(row, summed)
            if grade is None or grade[1] == 0 or reward is None:
                continue
            compared += 1
            disagree += (reward >= threshold - PASS_TOLERANCE) != bool(grade[0])
        if compared and disagree >= max(DISAGREE_ROWS, DISAGREE_SHARE * compared):
            return column, disagree, compared
    return None


def grade_disagrees_frame(
    lf: pl.LazyFrame, schema: pl.Schema, plan: Plan, field: str, threshold: float, rows: int
) -> tuple[str, int, int] | None:
    """:func:`grade_disagrees` over a frame's first ``rows`` rows (a Parquet file), counted
    in one aggregate (no row is collected): its top-level binary columns
    (:func:`binary_columns_parquet`) whose names say grade, against the plan's reward."""
    columns = [
        c
        for c in binary_columns_parquet(lf, schema, plan)
        if c != field and c in schema and any(w in c.lower() for w in GRADE_WORDS)
    ]
    if not columns:
        return None
    reward = plan.reward
    passed = reward >= threshold - PASS_TOLERANCE
    exprs: list[pl.Expr] = []
    for i, column in enumerate(columns):
        grade = pl.col(column).cast(pl.Float64)
        both = grade.is_not_null() & reward.is_not_null()
        exprs += [
            (both & ((grade >= 0.5) != passed)).sum().alias(f"apart{i}"),
            both.sum().alias(f"both{i}"),
        ]
    try:
        counts = lf.head(rows).select(exprs).collect().row(0)
    except pl.exceptions.PolarsError:
        return None
    for i, column in enumerate(columns):
        apart, compared = int(counts[2 * i] or 0), int(counts[2 * i + 1] or 0)
        if compared and apart >= max(DISAGREE_ROWS, DISAGREE_SHARE * compared):
            return column, apart, compared
    return None


def _summed(row: dict[str, Any], columns: list[str]) -> float | None:
    """The reward of a sampled row: its column's, or the sum of its named columns' (None
    where any is none)."""
    parts = [_reward_number(row.get(c)) for c in columns]
    return None if any(p is None for p in parts) else math.fsum(p for p in parts if p is not None)


def _reward_number(value: Any) -> float | None:
    """A sampled reward as a number: a number, a boolean, or text that reads as either."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            found = grade_text(value)
        except ValueError:
            return None
        return None if found is None else float(found)
    return None


def _struct_leaves(
    schema: pl.Schema, depth: int = GRADE_DEPTH
) -> tuple[dict[str, pl.Expr], pl.Schema]:
    """The fields inside a frame's struct columns, to ``depth`` keys, as dotted names
    (``metrics.exact_match``) with the expression that reads each and their types."""
    exprs: dict[str, pl.Expr] = {}
    types: dict[str, Any] = {}

    def walk(name: str, expr: pl.Expr, dtype: Any, left: int) -> None:
        if isinstance(dtype, pl.Struct) and left > 1:
            for f in dtype.fields:
                if "." not in f.name:
                    walk(f"{name}.{f.name}", expr.struct.field(f.name), f.dtype, left - 1)
        elif name not in schema:
            exprs[name], types[name] = expr.alias(name), dtype

    for name, dtype in schema.items():
        if isinstance(dtype, pl.Struct) and "." not in name:
            walk(name, pl.col(name), dtype, depth)
    return exprs, pl.Schema(types)


def grade_beside_frame(
    lf: pl.LazyFrame, schema: pl.Schema, plan: Plan, field: str
) -> tuple[str, int, int] | None:
    """:func:`grade_beside_sample` over a whole frame (a Parquet file): its binary-looking
    columns (:func:`binary_columns_parquet`), then its text columns whose names say grade,
    each read through its distinct values; the fields of its struct columns too
    (``metrics.exact_match``, :func:`_struct_leaves`)."""
    inner, inner_schema = _struct_leaves(schema)
    if inner:
        lf = lf.with_columns(list(inner.values()))
        schema = pl.Schema({**dict(schema), **dict(inner_schema)})
    named = [n for n, t in schema.items() if t == pl.String and _text_grade_named(n, plan)]
    for column in dict.fromkeys(
        [*binary_columns_parquet(lf, schema, plan), *correctness_first(named)]
    ):
        if column == field:
            continue
        try:
            counts = lf.select(pl.col(column).value_counts()).collect().to_series()
        except pl.exceptions.PolarsError:
            continue
        ones = known = 0
        for entry in counts.to_list():
            graded = _graded([entry[column]])
            if graded is None:
                break
            ones, known = ones + graded[0] * entry["count"], known + graded[1] * entry["count"]
        else:
            if 0 < ones < known:
                return column, ones, known
    return None
