"""Read graded rows into the canonical frame (DESIGN section 1): ``read_rows`` and ``parse_map``.

Each input file is resolved on its own (its writer recognised, each canonical field mapped
to a column or rule, see :mod:`whilecli.io.plan`) and read through polars: Parquet with
``pl.scan_parquet`` projecting only the columns the plan needs, JSONL with
``pl.scan_ndjson`` under a narrow schema holding only those leaves (nested aliases are struct
fields of it). Reading streams: each file is scanned once, by one query of the streaming
engine whose narrow frame is shared (``cache``) by every aggregate computed from it: what
reading validates (rows, missing task ids or rewards, non-finite rewards, the reward range,
partial rows, log-probs and critic values present, the judge rule's rows), the rows per
writer (model, policy version), the per-task facts, and the aggregate the consumer passes
in (``aggregate=``: the route's per-task counts); ``io`` imports nothing from the route. No
row-level frame is materialised: ``Rows.frame`` is the concatenated lazy scans (callers may
collect it), and the consumer reads its aggregate back. Who grades
(:mod:`whilecli.io.judge`) is decided here, from the keys the plan saw and the rule's
counts, as ``Rows.judge``. Only when an
aggregate finds a bad value is the first bad row located: a lazy filter on the row index of
a Parquet file, or, for JSONL (whose line numbers polars does not keep), a walk line by line
that names the first bad line and field. A JSONL file polars cannot read under the narrow
schema (a malformed line, a value of the wrong type) is walked the same way.

This is the one reading function: ``route``, ``check``, ``diff``, ``size``, ``summarize`` and
``watch`` read its frame; the row methods' table (:mod:`whilecli.io.table`) and update's
batch (:mod:`whilecli.io.batch`) are views of what it keeps on request (:class:`Keep`: the
counted rows with their positions, the input columns, optional fields). A JSON Lines file
past its sampled rows is held to the JSON parser's depth guard too (:func:`refuse_deep`,
beside polars' read); the same walk of its bytes looks for the keys of optional fields the
sample lacks, and polars reads them (as one more column each, looked up in every row) only
where some line past the sample spells one.

``passed`` = reward ≥ the pass threshold (default 1.0). Rewards inside [0, 1] that are
neither 0 nor 1 are counted as partial rows; a reward outside [0, 1] without an explicit
threshold is refused (a weighted rubric sum is not a pass/fail).
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import polars as pl

from whilecli import jsonout
from whilecli.errors import InputError, UsageError
from whilecli.io import attempts, decoding, factors, facts, splits, subtasks, words
from whilecli.io import judge as judges
from whilecli.io.aliases import (
    LOGPROB_ALIASES,
    PROMPT_ALIASES,
    REWARD_ALIASES,
    TASK_ALIASES,
    TOKEN_CAP_ALIASES,
    TOKEN_COUNT_ALIASES,
    TURN_ALIASES,
    names_a_prompts_id,
    parse_field_map,
)
from whilecli.io.formats.selected import selection
from whilecli.io.judge import JUDGE_COLUMN, JudgeScan
from whilecli.io.locate import (
    INFINITE_TEXTS,
    MISSING_TEXTS,
    POS,
    binary_columns_parquet,
    binary_columns_sample,
    first_row,
    grade_beside_frame,
    grade_beside_sample,
    grade_disagrees,
    grade_disagrees_frame,
    infinite_reward,
    locate,
    no_id,
    refuse_bytes_not_text,
    refuse_one_grade_threshold,
    refuse_scales_apart,
    refuse_unbounded,
)
from whilecli.io.modelid import path_model, version_split, writer_named, writers_named
from whilecli.io.options import ReadOptions
from whilecli.io.plan import Plan, build_plan, maybe_blank, no_blank, unread_of
from whilecli.io.rows import ABSENT, AT, AT_BITS, CANONICAL_SCHEMA, Aggregate, Rows
from whilecli.io.samples import MISFIT
from whilecli.io.shape import (
    SCANNED_LATE,
    BadValue,
    DType,
    Leaves,
    Shape,
    keep_paths,
    kind_words,
    split_path,
    unseen_paths,
)
from whilecli.io.sources import (
    KeyCount,
    KeySearch,
    Source,
    Where,
    bracketed_lines,
    count_keys,
    expand_paths,
    iter_lines,
    memory_bound,
    parse_line,
    refuse_repeated_keys,
    refuse_repeated_lines,
    rows_with_keys,
    runs_apart,
    sample_rows,
    settings_model,
)

#: What polars raises when a file it reads is corrupt: its errors, and a Rust panic inside
#: polars, which surfaces as ``PanicException`` (a ``BaseException``, not an ``Exception``).
POLARS_FAILURES: tuple[type[BaseException], ...] = (
    pl.exceptions.PolarsError,
    getattr(pl.exceptions, "PanicException", pl.exceptions.PolarsError),
)

#: The column of a narrow frame holding the plan's task key (:attr:`Plan.task_key`).
TASK_KEY = "__task_key"
#: The narrow frame's column holding the row's dataset or environment
#: (:attr:`~whilecli.io.plan.Plan.row_env`), for the pass to see ids that stand under two.
ENV = "__env"
#: :attr:`_Pass.env_ids` of rows keyed (dataset, id) because the pool they are paired with is.
PAIRED = -1
#: Per task of a pass: one dataset its rows name (:attr:`_Scanned.task_envs`).
ENV_OF = "__env_of"

#: Fields ``--map`` can point at a column.
MAPPABLE = ("task_id", "reward", "passed", "truncated", "model", "policy_version")
READ_COLUMNS = [c for c in CANONICAL_SCHEMA if c not in ("passed", "graded")]


def parse_map(items: Sequence[str]) -> dict[str, str]:
    """``["task_id=my_col", ...]`` → ``{"task_id": "my_col"}`` (``--map``; dotted = nested)."""
    return parse_field_map(items, MAPPABLE)


#: Columns only a summary holds (:data:`whilecli.route.summary.SUMMARY_SCHEMA`): a Parquet
#: file of them is per-task counts, not rows.
SUMMARY_COLUMNS = frozenset({"n", "passes", "truncated_known", "truncated_passes", "models"})

#: The narrow frame's columns holding the values of the columns that may name a condition of
#: the draws (:attr:`~whilecli.io.plan.Plan.factors`), as text; null past those a file has.
FACTORS = tuple(f"__factor{i}" for i in range(factors.MAX_FACTORS))
#: The dtypes of one file's narrow frame: the canonical columns read plus the auxiliary ones.
PART_SCHEMA: dict[str, pl.DataType] = {
    **{c: CANONICAL_SCHEMA[c] for c in READ_COLUMNS},
    "__passed": pl.Boolean(),
    "__lp": pl.Boolean(),
    "__vals": pl.Boolean(),
    "__slice": pl.String(),
    JUDGE_COLUMN: pl.String(),
    facts.GRADED: pl.Boolean(),
    facts.DRAW: pl.UInt64(),
    facts.PROMPT: pl.UInt64(),
    facts.EPISODE: pl.UInt64(),
    facts.TURN: pl.Float64(),
    facts.DISPUTED: pl.Boolean(),
    facts.REQUEST: pl.Boolean(),
    facts.CUT: pl.Boolean(),
    facts.WORDED: pl.Boolean(),
    facts.CAP: pl.Float64(),
    facts.TOKENS: pl.Float64(),
    **{name: pl.String() for name in FACTORS},
    subtasks.SUBTASK: pl.String(),
    attempts.CODE: pl.Int8(),
}


#: JSONL rows whose keys choose the columns; later rows are searched only for the keys of
#: optional fields none of these carried (:func:`whilecli.io.shape.unseen_paths`).
SAMPLE_ROWS = 1000
#: A row's position (:data:`~whilecli.io.rows.AT`) is ``(source index << AT_BITS) +
#: place``: the place is the 0-based row of a Parquet file, or the 1-based ordinal among the
#: non-blank lines of a JSONL source (what ``iter_lines`` yields, and polars' reader counts;
#: :mod:`whilecli.route.drill` turns it into the line, or the converted document's row, the
#: reader saw). Each task keeps only its smallest.


@dataclass(frozen=True)
class Keep:
    """What a consumer needs kept row for row beside the canonical frame (the row methods'
    table): the kept rows with their positions (:data:`AT`), every input column of each
    source, and the canonical fields it can do without (``optional``: read as null where
    the rows carry none) or must not take (``exclude_reward``: columns that are never the
    reward, e.g. a reward model's own score)."""

    optional: tuple[str, ...] = ()
    exclude_reward: tuple[str, ...] = ()
    #: The top-level input columns kept (None: every one).
    columns: tuple[str, ...] | None = None
    #: Read a JSON Lines file whole, every column in one polars read (update's per-token
    #: lists come with it), its input columns kept only where that read succeeds; a file it
    #: cannot read goes the usual way (named at its line).
    whole: bool = False
    #: The consumer reads ``passed``: rewards outside [0, 1] or partial credit on many rows
    #: are refused without an explicit threshold. False: rewards are used as numbers.
    pass_rule: bool = True
    #: A row without a task id is kept (null), for what needs the field to refuse at it.
    tolerant: bool = False


@dataclass
class StreamedRows(Rows):
    """:class:`Rows` whose ``frame`` is the concatenation of the files' lazy scans, with what
    the one streaming pass over each file gathered: the consumer's aggregate and the rows per
    writer. Both belong to ``counted_frame``: a consumer that replaces ``frame`` aggregates
    the new frame itself."""

    #: The consumer's aggregate of ``counted_frame``, gathered while validating.
    aggregate: Aggregate | None = None
    #: Rows per writer of ``counted_frame``: ``model`` (named, ``@version`` split off),
    #: ``policy_version``, ``rows``.
    writer_rows: pl.DataFrame | None = None
    #: Where ``writer_rows`` names several writers: the rows every rate counts and their
    #: passes per (task, model, policy version) of ``counted_frame`` (``task_id``, ``model``,
    #: ``policy_version``, ``rows``, ``passes``), the tasks the aggregate counts; None where
    #: one writer wrote every row, or a file's pass did not group them.
    writer_cells: pl.DataFrame | None = None
    counted_frame: pl.LazyFrame | None = None
    #: Every source read, by index: the source index of a task's ``first_at`` position.
    located: list[Source] = field(default_factory=list)
    #: Under ``keep=``: the rows every rate counts, collected, in :data:`CANONICAL_SCHEMA`
    #: plus their positions (:data:`AT`), in file order.
    kept_rows: pl.DataFrame | None = None
    #: Under ``keep=``: every input column of each source read, by source index, row ``i``
    #: being the source's ``i``-th row (0-based; blank lines skipped).
    inputs: dict[int, pl.DataFrame] = field(default_factory=dict)
    #: Under ``keep=``: the rows no rate counts (``task_id``, :data:`LEFT_OUT` naming why,
    #: their positions :data:`AT`), in file order.
    left_out_rows: pl.DataFrame | None = None
    #: Canonical field -> the column an error about it cites.
    fields: dict[str, str] = field(default_factory=dict)
    #: Under ``keep=``: the optional fields no source carried (read as null).
    absent: frozenset[str] = frozenset()
    #: Tasks keyed ``dataset:id`` (an id under two datasets, or paired with rows keyed so).
    env_keyed: bool = False
    #: Rows name a dataset (:attr:`~whilecli.io.plan.Plan.row_env`), keyed by it or not.
    names_env: bool = False
    #: Per task, a dataset its rows name (``task_id`` as keyed, :data:`ENV_OF`): what
    #: pairs this pool with another keyed alike
    #: (:func:`whilecli.route.shared.keyed_as`); None where no row names one.
    task_envs: pl.DataFrame | None = None
    #: Read by a column (:func:`read_by`): its values (as text; None: rows without it) over
    #: every row read, errors and ungraded rows included, in the order they first occur.
    slices: list[str | None] = field(default_factory=list)
    #: Per column that may name a condition of the draws (a checkpoint, a sampler's setting:
    #: :mod:`whilecli.io.factors`), over every file that carries it: per (task, value as
    #: text) every row read (``all``), the rows every rate counts (``rows``) and their
    #: ``passes`` (:func:`whilecli.route.factors.crossed`). Empty: none, or read with ``by``.
    factor_cells: dict[str, pl.DataFrame] = field(default_factory=dict)


#: The column of :attr:`StreamedRows.left_out_rows` naming why a row is left out: a harness
#: error instead of a reply, or no grade.
LEFT_OUT = "left_out"
LEFT_OUT_ERROR = "error reply"
LEFT_OUT_UNGRADED = "ungraded"


#: The narrow frame's column holding the ``--by`` column's value, as text.
SLICE = "__slice"
#: Slices read at the most (a column with thousands of values is no slicing column).
MAX_SLICES = 64


@dataclass
class _Part:
    """One file: its plan, its narrow lazy frame (:data:`PART_SCHEMA`) and its aggregates."""

    source: Source
    plan: Plan
    frame: pl.LazyFrame
    stats: dict[str, Any]  # see _stats(): rows, bad, lo, hi, partial, lp, vals, versioned
    judge: JudgeScan  # who grades this file's rows
    binary_hint: Callable[[], list[str]]  # computed only when a refusal needs it
    tables: list[pl.DataFrame] = field(default_factory=list)  # the consumer's aggregate
    writers: pl.DataFrame | None = None  # rows per raw (model, policy_version), counted rows
    raw: pl.LazyFrame | None = None  # the file as scanned, before narrowing (pooling checks)
    #: Per task: rows, prompt keys, draw keys (:func:`whilecli.io.facts.task_facts`).
    task_table: pl.DataFrame | None = None
    #: Per (task, reply): rows and passes (:func:`whilecli.io.facts.draw_counts`).
    draws: pl.DataFrame | None = None
    facts: facts.Facts = field(default_factory=facts.Facts)
    keep: Keep | None = None
    #: The narrow frame with each row's position (:data:`AT`), for ``keep=``.
    located: pl.LazyFrame | None = None
    inputs: pl.DataFrame | None = None  # the input columns, where the read holds them
    absent: set[str] = field(default_factory=set)  # optional fields the rows lack
    shape: Shape | None = None  # the keys the plan saw (who grades names them)
    #: Read with ``by``: the pass's facts per value of the column (:class:`_Sliced`).
    sliced: _Sliced | None = None
    #: Beside the reward read (the field given), a column that grades both ways, its passes,
    #: its graded values and the rows they were counted in: a JSON Lines file's sample, a
    #: Parquet file whole (:func:`_grade_beside`); None: not looked for.
    beside: Callable[[str], tuple[str, int, int, str] | None] | None = None
    #: Beside the reward read (the field given), a grade that disagrees with the pass rule
    #: at the threshold given on the sampled rows (:func:`_grade_disagrees`); None: not
    #: looked for.
    disagree: Callable[[str, float], tuple[str, int, int] | None] | None = None
    cells: pl.DataFrame | None = None  # :attr:`_Scanned.cells`
    task_envs: pl.DataFrame | None = None  # :attr:`_Scanned.task_envs`
    factor_cells: dict[str, pl.DataFrame] = field(default_factory=dict)  # :attr:`_Scanned`'s
    env_keyed: bool = False  # its tasks are keyed (dataset, id) (:func:`_keyed_by_env`)
    #: Read with ``by``: per value whose ids are one per row while prompts repeat, those ids
    #: (None: every id of the value) and its :attr:`whilecli.io.facts.Facts` rekey counts.
    rekeyed: dict[str | None, tuple[pl.Series | None, tuple[int, int, int]]] = field(
        default_factory=dict
    )
    #: The splits the rows belong to (:func:`_split_of`), once looked at.
    split_found: _SplitFound | None = None


def read_rows(
    paths: Sequence[str],
    *,
    mapping: Mapping[str, str] | None = None,
    pass_threshold: float | None = None,
    input_format: str | None = None,
    stdin: BinaryIO | None = None,
    pool: bool = False,
    aggregate: Aggregate | None = None,
    missing: str = "skip",
    keep: Keep | None = None,
    sources: Sequence[Source] | None = None,
    key_envs: bool = False,
) -> StreamedRows:
    """Read every path into one validated lazy frame in :data:`CANONICAL_SCHEMA`.

    Files are pooled only when they plausibly hold one evaluation (DESIGN section 1,
    "Pooling"): files whose sidecars name different environments, or one task id with
    different prompts in different files, are refused (:class:`PoolingError`) unless ``pool``.
    ``aggregate`` (e.g. the route's per-task counts) is computed in the same streaming pass
    that validates the rows, and handed back on the result.
    ``missing`` (``skip`` or ``fail``): whether ungraded rows are left out or fail.
    ``keep`` (:class:`Keep`): the rows themselves and every input column are kept too.
    ``sources``: sources already expanded, read instead of ``paths``.
    ``key_envs``: rows that name a dataset are keyed ``dataset:id`` whether or not an id
    stands under two (the pool they are paired with is keyed so: a teacher's rows of one of
    the student's datasets).
    """
    notes: list[str] = []
    sources, parts = _read_parts(
        paths, mapping, pass_threshold, input_format, stdin, None, aggregate, missing, keep,
        sources, notes, pool, key_envs,
    )  # fmt: skip
    return _assembled(parts, sources, notes, pass_threshold, missing, aggregate, keep, pool=pool)


@dataclass
class SlicedRows:
    """A pool read once with ``by`` (:func:`read_by`): the column's values in the order they
    first occur, and each value's rows as :func:`read_rows` reads a file of them alone
    (:meth:`rows`)."""

    values: list[str | None]
    sources: Sequence[Source]
    parts: list[_Part]
    pass_threshold: float | None
    missing: str

    def rows(self, value: str | None, aggregate: Aggregate | None = None) -> StreamedRows:
        """One value's rows, with its own facts, notes, positions and ``aggregate`` (from
        the pass already made); refused where those rows alone are."""
        parts = []
        for part in self.parts:
            one = _slice_part(part, value, self.missing, pooled=len(self.sources) > 1)
            if one is not None and one.stats["rows"]:
                parts.append(one)
        return _assembled(
            parts, self.sources, [], self.pass_threshold, self.missing, aggregate, None, whole=False
        )


def read_by(
    paths: Sequence[str],
    by: str,
    *,
    mapping: Mapping[str, str] | None = None,
    pass_threshold: float | None = None,
    input_format: str | None = None,
    stdin: BinaryIO | None = None,
    pool: bool = False,
    aggregate: Aggregate | None = None,
    missing: str = "skip",
    sources: Sequence[Source] | None = None,
) -> SlicedRows:
    """Read every path once, grouping what its pass finds by the value of column ``by``
    (``--by COLUMN``: a model, an environment, a difficulty), and validate the pool as a
    whole as :func:`read_rows` does. ``aggregate`` supplies the per-task aggregations the
    pass groups by value too (each value's own aggregate is handed to
    :meth:`SlicedRows.rows`, which adds that value's tables to it)."""
    notes: list[str] = []
    sources, parts = _read_parts(
        paths, mapping, pass_threshold, input_format, stdin, by, aggregate, missing, None, sources,
        notes,
    )  # fmt: skip
    whole = _assembled(parts, sources, notes, pass_threshold, missing, None, None, pool=pool)
    return SlicedRows(whole.slices, sources, parts, pass_threshold, missing)


def _read_parts(
    paths: Sequence[str],
    mapping: Mapping[str, str] | None,
    pass_threshold: float | None,
    input_format: str | None,
    stdin: BinaryIO | None,
    by: str | None,
    aggregate: Aggregate | None,
    missing: str,
    keep: Keep | None,
    sources: Sequence[Source] | None,
    notes: list[str],
    pool: bool = False,
    key_envs: bool = False,
) -> tuple[Sequence[Source], list[_Part]]:
    """Each source read in its one pass (:func:`_read_source`): the sources and their parts.
    Files of one pool whose ids stand under two datasets are keyed by (dataset, id), as one
    file's are; with ``pool``, files of different evaluations keep their tasks apart."""
    ReadOptions(pass_threshold=pass_threshold, missing=missing, input_format=input_format)
    mapping = dict(mapping or {})
    bad = sorted(set(mapping) - set(MAPPABLE))
    if bad:
        raise UsageError(f"--map: unknown field(s) {', '.join(bad)}; fields: {', '.join(MAPPABLE)}")
    if sources is None:
        sources = expand_paths(paths, stdin, notes, input_format=input_format)
    threshold = 1.0 if pass_threshold is None else float(pass_threshold)
    parts: list[_Part] = []
    runs: list[_Pass] = []
    digest = len(sources) > 1  # one pool in two encodings is only looked for among files
    for index, source in enumerate(sources):
        run = _Pass(threshold, aggregate, by, index << AT_BITS, missing, pass_threshold is not None)
        run.digest, run.keep = digest, keep
        run.env_ids = PAIRED if key_envs else 0
        with memory_bound(source.name):
            part = _read_source(source, mapping, input_format, run)
        if part is None or part.stats["rows"] == 0:
            notes.append(f"{source.name}: no rows")
            continue
        parts.append(part)
        runs.append(run)
    if len(parts) > 1 and by is None:
        parts = _keyed_across_envs(parts, runs, mapping, input_format)
        if pool:
            parts = _labelled_evaluations(parts, runs, mapping, input_format)
        parts = _rekeyed_across(parts, runs, mapping, input_format)
    if by is not None:
        _rekeyed_slices(parts, runs, mapping, input_format)
    return sources, parts


def _read_again(part: _Part, run: _Pass, mapping: Mapping[str, str], forced: str | None) -> _Part:
    """A part read again under what ``run`` now says (a key it was found to need)."""
    with memory_bound(part.source.name):
        try:
            again = _read_source(part.source, mapping, forced, run)
        except InputError as err:
            raise part.source.as_written(err) from None
    assert again is not None
    return again


def _keyed_across_envs(
    parts: list[_Part], runs: list[_Pass], mapping: Mapping[str, str], forced: str | None
) -> list[_Part]:
    """Ids that stand under two datasets in the pool (each file of one dataset: verl's
    ``data_source`` per file, ids from 0 in each), or a file already keyed by (dataset, id)
    beside others: every file whose rows name a dataset is keyed so, as one file holding
    them all is (:func:`_keyed_by_env`)."""
    named = [i for i, p in enumerate(parts) if p.task_envs is not None]
    if len(named) < 2:
        return parts
    plain = [parts[i].task_envs for i in named if not runs[i].env_ids]
    pairs = pl.concat([t for t in plain if t is not None]) if plain else None
    ids = 0
    if pairs is not None and pairs.height:
        per_id = pairs.group_by("task_id").agg(pl.col(ENV_OF).n_unique())
        ids = int((per_id[ENV_OF] > 1).sum())
    keyed = max((runs[i].env_ids for i in named), default=0)
    if not (ids or keyed):
        return parts
    out = list(parts)
    for i in named:
        if not runs[i].env_ids:
            runs[i].env_ids = ids or keyed
            out[i] = _read_again(parts[i], runs[i], mapping, forced)
    return out


def _labelled_evaluations(
    parts: list[_Part], runs: list[_Pass], mapping: Mapping[str, str], forced: str | None
) -> list[_Part]:
    """Files of different evaluations pooled on purpose (``--pool``): each evaluation's
    tasks are keyed by its name (:func:`_labelled`), so one id of two evaluations is two
    tasks, not one task whose draws are another task's (:func:`evaluations`)."""
    labels = evaluations(parts)
    if labels is None:
        return parts
    out = []
    for part, run, label in zip(parts, runs, labels, strict=True):
        run.label = label
        out.append(_read_again(part, run, mapping, forced))
    return out


def _rekeyed_across(
    parts: list[_Part], runs: list[_Pass], mapping: Mapping[str, str], forced: str | None
) -> list[_Part]:
    """Ids one per row whose prompt repeats in other files (one file per seed, each row its
    own uuid; one benchmark's ids spelled ``7`` in one file and ``0007`` in another): those
    rows are keyed by the prompt, as in one file (:func:`whilecli.io.facts.per_row_ids` over
    the pool's per-task facts). A file already keyed so is left as it is."""
    pooled = _pooled_task_table(parts, PROMPT_FACTS)
    per_row = None if pooled is None else facts.per_row_ids(pooled)
    if per_row is None:
        return parts
    out: list[_Part] = []
    for part, run in zip(parts, runs, strict=True):
        table = part.task_table
        set_aside = part.plan.by_prompt[1] if part.plan.by_prompt is not None else None
        if table is None or set_aside is None or run.rekey:
            out.append(part)
            continue
        own = table.filter(pl.col("task_id").is_in(per_row.implode()))["task_id"]
        if own.len() == 0:
            out.append(part)
            continue
        rekeyed = _rekeyed(table, own)
        run.rekey, run.rekey_ids = True, None if own.len() == table.height else own
        again = _read_again(part, run, mapping, forced)
        _set_rekeyed(again.facts, set_aside, rekeyed)
        out.append(again)
    return out


def _rekeyed_slices(
    parts: list[_Part], runs: list[_Pass], mapping: Mapping[str, str], forced: str | None
) -> None:
    """With ``by``: per value of the column, its rows' ids one per row while prompts repeat,
    found as for a pool of that value's rows alone (in each file, :func:`_per_row_slices`,
    then over the files, :func:`_slice_across`), and each file with such ids read again
    once, every value's such rows keyed by the prompt. The pool as a whole is held to its
    ids as they are, as a file of its rows alone is before its ids are found one per row;
    its values, to their own."""
    found: list[_Found] = [
        _per_row_slices(p.sliced) if p.sliced is not None and p.plan.by_prompt else {}
        for p in parts
    ]
    values = _slice_values(parts) if all(p.sliced is not None for p in parts) else []
    if len(parts) > 1 and len(values) <= MAX_SLICES:
        for value in values:
            _slice_across(value, parts, found)
    for part, run, own in zip(parts, runs, found, strict=True):
        if not own:
            continue
        run.rekey = True
        run.rekey_slices = {value: ids for value, (ids, _) in own.items()}
        read = _read_parquet if part.source.kind == "parquet" else _read_jsonl
        with memory_bound(part.source.name):
            try:
                again = read(part.source, mapping, forced, run)
            except InputError as err:
                raise part.source.as_written(err) from None
            except POLARS_FAILURES as err:
                raise InputError(f"cannot read: {_short(err)}", file=part.source.name) from None
        assert again is not None
        part.sliced, part.frame, part.located = again.sliced, again.frame, again.located
        part.rekeyed = own


#: Per value of the ``--by`` column whose ids are one per row: those ids (None: every id of
#: the value) and the counts :func:`_rekeyed` gives (:attr:`_Part.rekeyed`).
_Found = dict[str | None, tuple[pl.Series | None, tuple[int, int, int]]]


def _slice_across(value: str | None, parts: list[_Part], found: list[_Found]) -> None:
    """One value's ids one per row over its rows in every file, as :func:`_rekeyed_across`
    finds them for a pool of those rows alone: added to ``found`` for each file whose own
    rows of the value did not show them. Ids a file's own rows showed are keyed by the
    prompt there, tasks of two rows or more that no other file's id is one per row beside,
    so they are left out of the pool's table."""
    tables: list[pl.DataFrame | None] = []
    for part, own in zip(parts, found, strict=True):
        assert part.sliced is not None
        table = part.sliced.one(value).task_table if value in part.sliced.firsts() else None
        if table is not None and value in own:
            ids = own[value][0]
            kept = pl.lit(False) if ids is None else ~pl.col("task_id").is_in(ids.implode())
            table = table.filter(kept)
        tables.append(table)
    present = [t for t in tables if t is not None]
    if len(present) < 2 or any(not set(PROMPT_FACTS) <= set(t.columns) for t in present):
        return
    pooled = facts.merged_task_facts(
        pl.concat([t.select(PROMPT_FACTS) for t in present], how="vertical_relaxed")
    )
    per_row = facts.per_row_ids(pooled)
    if per_row is None:
        return
    for part, own, table in zip(parts, found, tables, strict=True):
        if table is None or value in own or part.plan.by_prompt is None:
            continue
        assert part.sliced is not None
        whole = part.sliced.one(value).task_table
        assert whole is not None
        mine = whole.filter(pl.col("task_id").is_in(per_row.implode()))["task_id"]
        if mine.len():
            own[value] = (None if mine.len() == whole.height else mine, _rekeyed(whole, mine))


def _assembled(
    parts: list[_Part],
    sources: Sequence[Source],
    notes: list[str],
    pass_threshold: float | None,
    missing: str,
    aggregate: Aggregate | None,
    keep: Keep | None,
    *,
    pool: bool = False,
    whole: bool = True,
) -> StreamedRows:
    """The parts read as one input: refused where it cannot be routed, else its frame, facts,
    notes and aggregate. ``whole``: the parts are the sources' every row; False: one value's
    rows of each (:func:`read_by`), whose sources' sidecars and first rows the whole input's
    read has already held to the pooling and nothing-generated checks."""
    threshold = 1.0 if pass_threshold is None else float(pass_threshold)
    if not parts:
        raise InputError("no rows: the input is empty", file=sources[0].name)
    parts = _one_encoding(parts, notes)
    if whole and not pool:
        for part in parts:
            refuse_split_rows(part)
    if whole and not pool and len(parts) > 1:
        refuse_mixed_pool(parts)
    if aggregate is not None:
        for part in parts:
            aggregate.add(part.tables)
    for part in parts if whole else ():
        refuse_nothing_generated(part)
    if pass_threshold is None and (keep is None or keep.pass_rule):
        for part in parts:
            # --map passed=COLUMN defines pass/fail itself; a file of errors alone grades none
            if part.plan.passed is None and part.stats["lo"] is not None:
                field_name = part.source.field(part.plan.fields.get("reward", "reward"))
                refuse_unbounded(
                    part.stats["lo"],
                    part.stats["hi"],
                    part.binary_hint,
                    part.source.name,
                    field_name,
                )
                graded_rows = int(part.stats["f_graded"] or 0)
                if int(part.stats["partial"] or 0) >= facts.PARTIAL_SHARE * graded_rows:
                    facts.refuse_partial(
                        int(part.stats["partial"]),
                        graded_rows,
                        part.binary_hint(),
                        part.source.name,
                        field_name,
                    )
    if pass_threshold is not None and (keep is None or keep.pass_rule):
        ranges = [
            (
                part.source.name,
                part.source.field(part.plan.fields.get("reward", "reward")),
                float(part.stats["lo"]),
                float(part.stats["hi"]),
            )
            for part in parts
            if part.plan.passed is None and part.stats["lo"] is not None
        ]
        for file, field_name, low, high in ranges:
            refuse_one_grade_threshold(threshold, low, high, file, field_name)
        if not pool:  # evaluations pooled on purpose may each keep their own scale
            refuse_scales_apart(threshold, ranges)
    for part in parts:  # one id, two prompts: after the grades, which say more
        if part.task_table is not None:
            mixed = facts.ids_with_prompts(part.task_table)
            if mixed is None or (part.source.grouped and part.plan.task_mapped is None):
                continue  # the writer's own group of draws: a prompt varied per draw
            if part.plan.task_mapped is None:
                _refuse_two_prompts(part, mixed)
            part.facts.mapped_prompts = f"{mixed.words()}, keyed by {part.plan.task_mapped}"
    versioned = any(p.stats["versioned"] for p in parts)
    seen = {m for p in parts if p.writers is not None for m in p.writers["model"].drop_nulls()}
    rewrite = _split_model(seen) if versioned else _named_model(seen)
    found = facts.Facts(missing=missing)
    for part in parts:
        found.add(part.facts)
    if len(parts) > 1:  # a task's rows in several files: its draws compared across them
        pooled = _pooled_task_table(parts, DRAW_FACTS)
        merged = None
        if all(p.draws is not None for p in parts):
            merged = facts.merged_draws([p.draws for p in parts if p.draws is not None])
        if pooled is not None:
            drawn = facts.draws_found(pooled, merged)
            found.compared_tasks, found.repeated_tasks, found.graded_apart = drawn
        if merged is not None:  # a reply written or graded in two files
            written = facts.replies_written(merged)
            found.repeated_rows, found.apart_replies, found.graded_apart = written
    if len(sources) > 1:  # the error share of the pool (or of one value's rows), not a file's
        facts.refuse_errors(found.errors, found.rows, _names(parts), found.first_error)

    def canonical(frames: list[pl.LazyFrame]) -> pl.LazyFrame:
        # a part keyed by a column of its own carries TASK_KEY, one keyed by its ids does not
        frames = [f.drop(TASK_KEY, ENV, strict=False) for f in frames]
        frame = pl.concat(frames, how="vertical") if len(frames) > 1 else frames[0]
        frame = frame.filter(facts.kept(missing))
        frame = frame.with_columns(rewrite)
        frame = frame.with_columns(
            passed=_passed(threshold), graded=pl.col(facts.GRADED), reward=facts.reward_column()
        )
        return frame.select(*CANONICAL_SCHEMA)

    height = found.counted
    partial = sum(int(p.stats["partial"] or 0) for p in parts)
    for part in parts:
        notes.extend(f"{part.source.name}: {n}" if len(parts) > 1 else n for n in part.plan.notes)
    if partial:
        notes.append(
            f"{partial} of {height} rows have a reward strictly between 0 and 1:"
            f" a row passes at reward ≥ {threshold:g}"
        )
    frame = canonical([p.frame for p in parts])
    writer_rows = _writer_rows([p.writers for p in parts if p.writers is not None], rewrite)
    several = writer_rows is not None and writer_rows.height > 1
    kept_rows: pl.DataFrame | None = None
    left_out_rows: pl.DataFrame | None = None
    inputs: dict[int, pl.DataFrame] = {}
    if keep:
        try:
            kept_rows, left_out_rows, inputs = _kept(parts, sources, missing, rewrite, threshold)
        except POLARS_FAILURES as err:
            names = ", ".join(p.source.name for p in parts)
            raise InputError(f"cannot read: {_short(err)}", file=names) from None
    return StreamedRows(
        frame=frame,
        paths=[p.name for p in sources],
        format=_joined([p.plan.format for p in parts]),
        sources={"passed": f"reward ≥ {threshold:g}", **_merged_sources(parts)},
        pass_threshold=threshold,
        threshold_explicit=pass_threshold is not None,
        partial_rows=partial,
        has_logprobs=any(bool(p.stats["lp"]) for p in parts),
        has_values=any(bool(p.stats["vals"]) for p in parts),
        notes=notes,
        facts=found,
        prompts=_prompts(parts),
        reward_range=_reward_range(parts),
        evaluation=_evaluation(parts),
        env_keyed=any(p.env_keyed for p in parts),
        names_env=any(p.plan.row_env is not None for p in parts),
        task_envs=_task_envs(parts),
        aggregate=aggregate,
        writer_rows=writer_rows,
        writer_cells=_writer_cells(parts, rewrite) if several else None,
        counted_frame=frame,
        located=list(sources),
        judge=judges.combined(p.judge for p in parts),
        kept_rows=kept_rows,
        left_out_rows=left_out_rows,
        inputs=inputs,
        fields={k: v for p in reversed(parts) for k, v in p.plan.fields.items()},
        absent=frozenset.intersection(*(frozenset(p.absent) for p in parts)),
        slices=_slice_values(parts) if all(p.sliced is not None for p in parts) else [],
        factor_cells=_factor_tables(parts),
    )


def _factor_tables(parts: list[_Part]) -> dict[str, pl.DataFrame]:
    """:attr:`StreamedRows.factor_cells` over every file: a column's cells added up across
    the files that carry it."""
    names = list(dict.fromkeys(n for p in parts for n in p.factor_cells))
    out: dict[str, pl.DataFrame] = {}
    for name in names:
        tables = [p.factor_cells[name] for p in parts if name in p.factor_cells]
        joined = pl.concat(tables) if len(tables) > 1 else tables[0]
        if len(tables) > 1:
            joined = joined.group_by("task_id", "value").agg(pl.col("all", "rows", "passes").sum())
        out[name] = joined
    return out


def _task_envs(parts: list[_Part]) -> pl.DataFrame | None:
    """Per task of the parts, a dataset its rows name (:attr:`StreamedRows.task_envs`);
    None where none names one."""
    tables = [p.task_envs for p in parts if p.task_envs is not None]
    return pl.concat(tables).unique() if tables else None


def _evaluation(parts: list[_Part]) -> str | None:
    """The one evaluation every part's sidecars name; None: none, or several."""
    envs = {p.plan.env for p in parts}
    return envs.pop() if len(envs) == 1 else None


def _slice_values(parts: list[_Part]) -> list[str | None]:
    """The ``--by`` column's values over every row of ``parts``, errors and ungraded rows
    included, in the order they first occur (each value's first position, from the pass)."""
    firsts: dict[str | None, int] = {}
    for part in parts:
        assert part.sliced is not None
        for value, first in part.sliced.firsts().items():
            firsts[value] = min(first, firsts.get(value, first))
    return sorted(firsts, key=lambda value: firsts[value])


def _kept(
    parts: list[_Part],
    sources: Sequence[Source],
    missing: str,
    rewrite: list[pl.Expr],
    threshold: float,
) -> tuple[pl.DataFrame, pl.DataFrame, dict[int, pl.DataFrame]]:
    """The rows every rate counts with their positions, the rows it leaves out (with why),
    and every input column of each source (``keep=``)."""
    names = [*PART_SCHEMA, AT]
    frames = [p.located.select(names) for p in parts if p.located is not None]
    every = pl.concat(frames, how="vertical") if len(frames) > 1 else frames[0]
    why = (
        pl.when(facts.kept(missing))
        .then(pl.lit(None, pl.String))
        .when(pl.col("reply") == facts.ERROR)
        .then(pl.lit(LEFT_OUT_ERROR))
        .otherwise(pl.lit(LEFT_OUT_UNGRADED))
    )
    read = every.with_columns(why.alias(LEFT_OUT)).collect()  # one pass for both
    left_out = read.filter(pl.col(LEFT_OUT).is_not_null()).select(
        "task_id", LEFT_OUT, pl.col(AT).cast(pl.Int64)
    )
    frame = (
        read.lazy()
        .filter(pl.col(LEFT_OUT).is_null())
        .with_columns(rewrite)
        .with_columns(
            passed=_passed(threshold), graded=pl.col(facts.GRADED), reward=facts.reward_column()
        )
        .select(*CANONICAL_SCHEMA, pl.col(AT).cast(pl.Int64))
    )
    index = {id(s): i for i, s in enumerate(sources)}
    inputs: dict[int, pl.DataFrame] = {}
    keep = next(p.keep for p in parts if p.keep is not None)
    for part in parts:
        if part.inputs is not None:
            held = part.inputs
        elif part.source.kind == "parquet":
            assert part.raw is not None
            held = part.raw.select(_tops(part.raw.collect_schema().names(), keep)).collect()
        elif keep.whole:  # the whole read failed: the consumer reads the rows itself
            continue
        else:
            held = _jsonl_frame(part.source)
        inputs[index[id(part.source)]] = held
    return frame.collect(), left_out, inputs


def _tops(names: Sequence[str], keep: Keep) -> list[str]:
    """The top-level columns ``keep`` keeps, in the file's order."""
    return list(names) if keep.columns is None else [n for n in names if n in keep.columns]


def _jsonl_frame(source: Source) -> pl.DataFrame:
    """Every column of a JSONL source, as polars infers them over all lines (a column whose
    values change type reads as text)."""
    try:
        return pl.read_ndjson(source.polars_source(), infer_schema_length=None)
    except (pl.exceptions.PolarsError, OSError, ValueError):
        pass
    rows = [parse_line(source, n, line) for n, line in iter_lines(source)]
    try:
        return pl.from_dicts(rows, infer_schema_length=None, strict=False)
    except (pl.exceptions.PolarsError, TypeError, ValueError):
        raise InputError(
            "cannot read every column of the rows (a column's values change type)",
            file=source.name,
        ) from None


@dataclass
class _Pass:
    """What reading a file needs beyond the file: the pass threshold, and the running
    per-task counts that each validated file adds its own to."""

    threshold: float
    aggregate: Aggregate | None = None
    by: str | None = None
    at: int = 0  # this source's position base (its index << AT_BITS)
    missing: str = "skip"  # --missing: ungraded rows left out (skip) or failed (fail)
    explicit: bool = False  # the pass threshold was given
    rekey: bool = False  # key tasks by the prompt (the id column is one per row)
    #: Ids found standing under several datasets (:attr:`Plan.row_env`): a task is then
    #: keyed by (dataset, id). 0: keyed by the id.
    env_ids: int = 0  # PAIRED: keyed so because the pool paired with it is
    #: The evaluation a file pooled with others of other evaluations holds (``--pool``): its
    #: tasks are keyed ``label:id``, apart from theirs. None: one evaluation.
    label: str | None = None
    rekey_ids: pl.Series | None = None  # ... on these ids' rows only (None: every row)
    digest: bool = False  # compute the rows' digest (other files may hold the same rows)
    search_late: bool = False  # look for keys the sample lacks before scanning, not in it
    keep: Keep | None = None  # what the consumer keeps row for row (:class:`Keep`)
    no_ids: bool = False  # the rows carry no task id, which the consumer reads as optional
    #: With ``by``: per value of the column whose ids are one per row, those ids (None:
    #: every id of the value), its rows keyed by the prompt (``rekey``).
    rekey_slices: dict[str | None, pl.Series | None] | None = None
    #: Tasks keyed by the prompt for want of an id whose prompt one id's rows carry, with
    #: that id (:func:`whilecli.io.facts.idless_owners`): their rows are read as its.
    owners: pl.DataFrame | None = None
    #: Tasks whose rows that keep no reply are the harness's failures, with how many such
    #: rows (:func:`whilecli.io.facts.absent_failures`): those rows read as errors.
    absent: tuple[pl.Series, int] | None = None
    #: Tasks whose replies beside an error naming a failed request were cut short by it, with
    #: how many such rows (:func:`whilecli.io.facts.cut_failures`): those rows read as errors.
    cut: tuple[pl.Series, int] | None = None
    #: The draw keys of a harness's placeholder replies, with how many rows hold them
    #: (:func:`whilecli.io.facts.placeholder_failures`): those rows read as errors.
    placeholder: tuple[pl.Series, int] | None = None

    def bad(self, ids: bool = True) -> pl.Expr:
        """The rows no reading takes: an infinite reward, or a counted row without a task id
        (:meth:`idless`; without ``ids``, only an infinite reward: the ids are checked on the
        distinct ids of the rows counted, :meth:`bad_id`); a row without a task id is taken
        when the consumer keeps such rows (``Keep.tolerant``)."""
        if not ids:
            return infinite_reward()
        return self.idless() | infinite_reward()

    def idless(self) -> pl.Expr:
        """A row without a task id that a rate counts (:func:`~whilecli.io.facts.kept`): an
        ungraded row, or a harness error, is left out and counted whatever its id, so it
        needs none (DESIGN section 1, "graded"); ``--missing fail`` counts an ungraded row as
        a failure of its task, which it must name."""
        return self.bad_id() & facts.kept(self.missing)

    def bad_id(self) -> pl.Expr:
        """A task id no reading takes (:func:`~whilecli.io.locate.no_id`; a null one is taken
        under ``Keep.tolerant``)."""
        if self.tolerant:
            return no_id() & pl.col("task_id").is_not_null()
        return no_id()

    @property
    def tolerant(self) -> bool:
        return self.no_ids or (self.keep is not None and self.keep.tolerant)


def _passed(threshold: float) -> pl.Expr:
    return facts.passed_column(threshold)


def _prompts(parts: list[_Part]) -> pl.DataFrame | None:
    """Per task id, its prompt key, from every file whose rows carry both. A file whose
    ids carry several prompts each, as ``--map task_id=`` keys them (a prompt varied per
    draw) or as their writer groups its draws (:attr:`~whilecli.io.sources.Source.grouped`),
    gives none: its ids are its tasks, and another pool pairs with them by id."""
    tables = [
        p.task_table.select("task_id", pl.col("p_lo").alias("prompt"))
        for p in parts
        if p.task_table is not None
        and "p_lo" in p.task_table.columns
        and p.facts.mapped_prompts is None
        and p.source.grouped is None
    ]
    if not tables:
        return None
    return pl.concat(tables).group_by("task_id").agg(pl.col("prompt").min()).sort("task_id")


#: The writer columns of a frame, counted per pair.
WRITER = ["model", "policy_version"]
#: The columns of a file's cells (:attr:`_Scanned.cells`).
CELLS = ["task_id", *WRITER, "rows", "passes"]


def _writer_rows(tables: list[pl.DataFrame], rewrite: list[pl.Expr]) -> pl.DataFrame | None:
    """Rows per writer over every file (the raw names rewritten as the frame rewrites them)."""
    if not tables:
        return None
    joined = pl.concat(tables) if len(tables) > 1 else tables[0]
    return joined.with_columns(rewrite).group_by(WRITER).agg(pl.col("rows").sum())


def _writer_cells(parts: list[_Part], rewrite: list[pl.Expr]) -> pl.DataFrame | None:
    """Rows and passes per (task, writer) over every file (:attr:`StreamedRows.writer_cells`);
    None where a file's pass did not group them."""
    if any(p.cells is None for p in parts):
        return None
    tables = [p.cells for p in parts if p.cells is not None]
    joined = pl.concat(tables) if len(tables) > 1 else tables[0]
    cells = joined.with_columns(rewrite).group_by("task_id", *WRITER)
    return cells.agg(pl.col("rows").sum(), pl.col("passes").sum())


def _named_model(seen: set[str]) -> list[pl.Expr]:
    """``model`` as the model it names (:func:`whilecli.io.facts.model_name`; ``seen``: the
    raw names); ``policy_version``, where no column records one, the step of a checkpoint
    folder in the model path (:func:`whilecli.io.facts.model_step`)."""
    out = [facts.model_name(pl.col("model"), seen).alias("model")]
    step = facts.model_step(pl.col("model"), seen)
    if step is not None:
        out.append(pl.coalesce(pl.col("policy_version"), step).alias("policy_version"))
    return out


def _split_model(seen: set[str]) -> list[pl.Expr]:
    """``model`` "M@v" → "M" (named as :func:`_named_model` does); ``policy_version`` keeps
    "M@v" where no column records one (else a checkpoint folder's step). Which ``@`` is a
    version's the name reader says (:func:`whilecli.io.modelid.version_split`: not
    Cloudflare's ``@cf/``, nor LM Studio's ``@q4_k_m``, a precision)."""
    split = {s: version_split(s) for s in seen}
    versioned = sorted(s for s, (_, v) in split.items() if v is not None)
    heads = {s: facts.name_of(split[s][0]) for s in versioned}
    raw = facts.model_name(pl.col("model"), seen)
    at = pl.col("model").is_in(versioned)
    step = facts.model_step(pl.col("model"), seen)
    steps = [step] if step is not None else []
    return [
        pl.when(at).then(pl.col("model").replace(heads)).otherwise(raw).alias("model"),
        pl.coalesce(pl.col("policy_version"), pl.when(at).then(pl.col("model")), *steps).alias(
            "policy_version"
        ),
    ]


def _joined(values: list[str]) -> str:
    seen = list(dict.fromkeys(values))
    return seen[0] if len(seen) == 1 else " + ".join(seen)


def _merged_sources(parts: list[_Part]) -> dict[str, str]:
    keys = list(dict.fromkeys(k for p in parts for k in p.plan.sources))
    out: dict[str, str] = {}
    for key in keys:
        seen = list(dict.fromkeys(p.plan.sources.get(key, "none") for p in parts))
        if len(seen) == 1:
            out[key] = seen[0]
        else:
            out[key] = "; ".join(
                f"{p.source.name}: {p.plan.sources.get(key, 'none')}" for p in parts
            )
    return out


def _select(plan: Plan, judge: pl.Expr, keep_pos: bool) -> list[pl.Expr]:
    exprs = [
        plan.task_id.alias("task_id"),
        plan.reward.alias("reward"),
        (plan.truncated if plan.explode_truncated else plan.truncated.cast(pl.Boolean)).alias(
            "truncated"
        ),
        plan.model.alias("model"),
        (
            plan.policy_version
            if plan.policy_version is not None
            else pl.lit(None, dtype=pl.String)
        ).alias("policy_version"),
        plan.reply.alias("reply"),
        (plan.passed if plan.passed is not None else pl.lit(None, dtype=pl.Boolean)).alias(
            "__passed"
        ),
        (plan.has_logprobs if plan.has_logprobs is not None else pl.lit(False)).alias("__lp"),
        (plan.has_values if plan.has_values is not None else pl.lit(False)).alias("__vals"),
        (plan.slice if plan.slice is not None else pl.lit(None, dtype=pl.String)).alias("__slice"),
        judge.alias(JUDGE_COLUMN),
        facts.graded(plan.reward, plan.passed).alias(facts.GRADED),
        (plan.draw if plan.draw is not None else pl.lit(None, dtype=pl.UInt64)).alias(facts.DRAW),
        (plan.prompt_key if plan.prompt_key is not None else pl.lit(None, dtype=pl.UInt64)).alias(
            facts.PROMPT
        ),
        (plan.episode if plan.episode is not None else pl.lit(None, dtype=pl.UInt64)).alias(
            facts.EPISODE
        ),
        (plan.turn if plan.turn is not None else pl.lit(None, dtype=pl.Float64)).alias(facts.TURN),
        (
            plan.cut_disputed if plan.cut_disputed is not None else pl.lit(None, dtype=pl.Boolean)
        ).alias(facts.DISPUTED),
        (plan.request_failed if plan.request_failed is not None else pl.lit(False)).alias(
            facts.REQUEST
        ),
        (plan.cut if plan.cut is not None else pl.lit(False)).alias(facts.CUT),
        (plan.worded if plan.worded is not None else pl.lit(False)).alias(facts.WORDED),
        (plan.token_cap if plan.token_cap is not None else pl.lit(None, dtype=pl.Float64)).alias(
            facts.CAP
        ),
        (
            plan.reply_tokens if plan.reply_tokens is not None else pl.lit(None, dtype=pl.Float64)
        ).alias(facts.TOKENS),
    ]
    exprs += [
        (plan.factors[i][1] if i < len(plan.factors) else pl.lit(None, dtype=pl.String)).alias(name)
        for i, name in enumerate(FACTORS)
    ]
    sub = plan.subtask[1] if plan.subtask is not None else pl.lit(None, dtype=pl.String)
    exprs.append(sub.alias(subtasks.SUBTASK))
    exprs.append(pl.lit(0, dtype=pl.Int8).alias(attempts.CODE))  # set by :func:`_narrow`
    listed = {"reward"} | ({"truncated"} if plan.explode_truncated else set())
    exploded = plan.explode and plan.split is None  # a list exploded after the select
    exprs = [
        e if exploded and name in listed else e.cast(PART_SCHEMA[name])
        for e, name in zip(exprs, PART_SCHEMA, strict=True)
    ]
    if keep_pos:
        exprs.append(pl.col(POS))
    return exprs


def _narrow(
    lf: pl.LazyFrame,
    plan: Plan,
    judge: pl.Expr,
    keep_pos: bool,
    at: int | None = None,
    probe: Sequence[str] = (),
    named: Mapping[str, pl.Expr] | None = None,
) -> pl.LazyFrame:
    """The plan's columns of a scanned frame, with the judge rule's kind per row (``judge``,
    :func:`whilecli.io.judge.rule_expr`); ``at`` (a position base) also keeps the rows'
    positions (the frame's :data:`AT` column, offset by ``at``) and the plan's task key
    (:data:`TASK_KEY`, where it has one) for the per-task counts;
    each ``probe`` key (a top-level column of ``lf``) adds whether the row carries it, and
    each of ``named`` how many values the row holds under that key (:func:`named_values`)."""
    if plan.row_filter is not None:
        lf = lf.filter(plan.row_filter.fill_null(False))
    if plan.split is not None:  # a row of samples: one row a sample, every list split alike
        lf = plan.split.rows(lf)
    exprs = _select(plan, judge, keep_pos)
    if at is not None:
        exprs.append((pl.col(AT).cast(pl.Int64) + at).alias(AT))
        if plan.task_key is not None:
            exprs.append(plan.task_key.cast(pl.String).alias(TASK_KEY))
        if plan.row_env is not None:
            exprs.append(plan.row_env.alias(ENV))
    exprs += [pl.col(k).is_not_null().alias(_probed(k)) for k in probe]
    exprs += [expr.alias(_named(k)) for k, expr in (named or {}).items()]
    if at is not None and plan.split is not None:
        exprs.append(pl.col(MISFIT))
    if plan.attempts is not None:
        exprs += plan.attempts[0]
    narrow = lf.select(exprs)
    if plan.attempts is not None:  # earlier attempts of a draw: left out of every rate
        narrow = attempts.coded(narrow.drop(attempts.CODE), plan.attempts[1])
        left_out = pl.col(attempts.CODE).is_in(list(attempts.LEFT_OUT_CODES))
        reply = pl.when(left_out).then(pl.lit(facts.ERROR)).otherwise(pl.col("reply"))
        narrow = narrow.with_columns(reply.alias("reply"))
    if plan.explode and plan.split is None:  # one rollout per element of the mapped list
        listed = ["reward", "truncated"] if plan.explode_truncated else ["reward"]
        narrow = narrow.explode(listed).with_columns(
            pl.col("reward").cast(pl.Float64), pl.col("truncated").cast(pl.Boolean)
        )
        narrow = narrow.with_columns(facts.graded(pl.col("reward")).alias(facts.GRADED))
    return narrow


@dataclass
class _Scanned:
    """What one pass over a file gathered (:func:`_scan`)."""

    stats: dict[str, Any]
    writers: pl.DataFrame
    tables: list[pl.DataFrame]  # the consumer's aggregate
    task_table: pl.DataFrame | None  # the per-task facts, where the rows carry them
    sliced: _Sliced | None = None  # read with ``by``: the same, per value of the column
    #: Rows and passes per (task, model, policy version), where the pass grouped by task
    #: (None: read with ``by``, or without a per-task group-by).
    cells: pl.DataFrame | None = None
    #: Rows and passes per (task, reply) (:func:`whilecli.io.facts.draw_counts`), where the
    #: rows carry replies (None: none, or one value's rows of a read with ``by``).
    draws: pl.DataFrame | None = None
    #: Per task, a dataset its rows name (``task_id``, :data:`ENV_OF`), where the rows carry
    #: one (:attr:`~whilecli.io.plan.Plan.row_env`); None: they do not.
    task_envs: pl.DataFrame | None = None
    #: Per column that may name a condition of the draws (:attr:`Plan.factors`), its cells
    #: (:func:`_factor_cells`).
    factor_cells: dict[str, pl.DataFrame] = field(default_factory=dict)


def _within(column: pl.Expr, value: str | None) -> pl.Expr:
    """The rows of one value of the ``--by`` column (None: the rows without it)."""
    return column.is_null() if value is None else column == value


@dataclass
class _Sliced:
    """One pass's aggregates grouped by the ``--by`` column's value (:data:`SLICE`) as well:
    :func:`_stats` per value (with its first row's position), the per-task table per (value,
    task) and the rows per writer per value. :meth:`one` is one value's :class:`_Scanned`,
    what a pass over that value's rows alone gathers."""

    stats: pl.DataFrame
    tasks: pl.DataFrame
    writers: pl.DataFrame
    names: list[str]  # the consumer's aggregate columns of ``tasks``
    own: bool  # ``tasks`` carries the per-task facts
    #: Rows and passes per (value, task, reply) (:attr:`_Scanned.draws`); None: no replies.
    draws: pl.DataFrame | None = None

    def firsts(self) -> dict[str | None, int]:
        """Each value with its first row's position (:data:`AT`)."""
        return dict(self.stats.select(SLICE, "__first").iter_rows())

    def one(self, value: str | None) -> _Scanned:
        def rows(frame: pl.DataFrame) -> pl.DataFrame:
            return frame.filter(_within(pl.col(SLICE), value)).drop(SLICE)

        stats = rows(self.stats).row(0, named=True)
        writers = rows(self.writers)
        stats["versioned"] = bool(writers["model"].str.contains("@", literal=True).any())
        table = rows(self.tasks)
        task_table = table.drop(self.names) if self.own else None
        tables = [table.select("task_id", *self.names)]
        draws = None if self.draws is None else rows(self.draws)
        named = tables if self.names else []
        return _Scanned(stats, writers, named, task_table, draws=draws)


def _scan(narrow: pl.LazyFrame, run: _Pass, plan: Plan) -> _Scanned:
    """One streaming pass over a narrow frame: the file is scanned once and its narrow frame
    shared (``cache``) by every aggregate: the reading checks (:func:`_stats`), the
    consumer's aggregate over the rows every rate counts (added to ``run.aggregate`` by the
    caller once valid) and, where the rows carry prompts or completions, the per-task facts
    (:func:`whilecli.io.facts.task_facts`). The rows per writer come from the checks' bounds
    when one writer wrote every row (the usual file); rows of several writers are grouped
    in a second pass. With ``run.by`` the same pass groups every aggregate by the column's
    value too (:class:`_Sliced`), and the file's own are added up from those."""
    counted = narrow.with_columns(passed=_passed(run.threshold)).cache()
    keep = facts.kept(run.missing)
    prompt, draw = plan.prompt_key is not None, plan.draw is not None
    own = facts.task_facts(run.missing, prompt, draw) if prompt or draw else []
    theirs = run.aggregate.task_aggregations(keep) if run.aggregate is not None else []
    sliced = run.by is not None
    columns = counted.collect_schema().names()
    # rows of several datasets are grouped by task whoever reads them: an id under two is
    # two tasks for every consumer
    by_task = bool(own or theirs) or sliced or ENV in columns
    keys = [SLICE, "task_id"] if sliced else ["task_id"]
    # the ids are checked on the group-by's distinct ids where it runs, not on every row
    tokens = plan.reply_tokens is not None
    bad = run.bad(ids=not by_task)
    sub = plan.subtask is not None and not sliced
    queries = [
        _stats(counted, run.digest, run.missing, bad, ids=not by_task, tokens=tokens, sub=sub)
    ]
    kept_passes = (keep & pl.col("passed").fill_null(False)).sum().cast(pl.Int64).alias("kp")
    counts = [pl.len().cast(pl.Int64).alias("n_all"), keep.sum().cast(pl.Int64).alias("k")]
    counts.append(kept_passes)
    aggs = [*counts, *own[2:], *theirs]
    keyed = TASK_KEY in columns
    if ENV in columns:  # how many datasets each id stands under, and one of them
        aggs.append(pl.col(ENV).drop_nulls().n_unique().cast(pl.Int64).alias(ENV))
        aggs.append(pl.col(ENV).drop_nulls().first().alias(ENV_OF))
    if by_task:  # one group-by by task serves both
        key = pl.col(TASK_KEY).alias("task_id") if keyed else pl.col("task_id")
        queries.append(counted.group_by(*keys[:-1], key).agg(aggs))
    if sliced:
        queries.append(
            _stats(
                counted, run.digest, run.missing, pl.lit(False), by=SLICE, ids=False, tokens=tokens
            )
        )
        rows = pl.len().cast(pl.Int64).alias("rows")
        queries.append(counted.filter(keep).group_by(SLICE, *WRITER).agg(rows))
    if plan.episode is not None:  # rows that repeat an episode: its turns, not rollouts
        queries.append(_turns(counted))
    elif plan.turn is not None:  # rows of one task at several turn indices: turns
        queries.append(_turn_indices(counted, strict=plan.turn_strict))
    if draw:  # each reply's rows and passes: one reply written twice, or graded two ways
        replied = counted.filter(keep & facts.replied_draw())
        task_hash = pl.col("task_id").hash(seed=0).alias("t")
        reply_keys = [task_hash, pl.col(facts.DRAW).alias("d")]
        by_reply = replied.group_by(*([SLICE] if sliced else []), *reply_keys)
        queries.append(by_reply.agg(facts.draw_counts(run.missing)))
    factored = plan.factors if by_task and not sliced else ()
    task = pl.col(TASK_KEY).alias("task_id") if keyed else pl.col("task_id")
    queries += [_factor_cells(counted, keep, task, i) for i in range(len(factored))]
    stats, *grouped = pl.collect_all(queries, engine="streaming")
    # the last queries: each column's cells, taken off before the rest are read
    at = len(grouped) - len(factored)
    cells_of = dict(zip((name for name, _ in factored), grouped[at:], strict=True))
    del grouped[at:]
    draws = grouped.pop() if draw else None
    turned = plan.episode is not None or plan.turn is not None
    turns = grouped.pop().row(0, named=True) if turned else {}
    regrouped = keyed and bool(grouped) and _any_blank(grouped[0])
    if regrouped:  # grouped again by the ids as read
        grouped[0] = counted.group_by(keys).agg(aggs).collect(engine="streaming")
    found = stats.row(0, named=True)
    task_envs: pl.DataFrame | None = None
    if grouped and ENV in grouped[0].columns:
        several = pl.col(ENV) > 1
        if "p_lo" in grouped[0].columns:  # one prompt under every value: one task, not two
            one_prompt = pl.col("p_lo").is_not_null() & (pl.col("p_lo") == pl.col("p_hi"))
            several = several & ~one_prompt
        found["env_ids"] = int(grouped[0].select(several.sum()).item())
        named = grouped[0].filter(pl.col(ENV_OF).is_not_null())
        task_envs = named.select("task_id", ENV_OF).unique()
        grouped[0] = grouped[0].drop(ENV, ENV_OF)
    found["f_turns"] = int(turns.get("f_turns") or 0)
    found["f_first_turn"] = turns.get("f_first_turn")
    if grouped and not found["bad"]:
        found["bad"] = _any_bad_id(grouped[0], run)
    if grouped:
        found["json_id"] = bool(grouped[0].select(_json_looking(pl.col("task_id")).any()).item())
    names = [e.meta.output_name() for e in theirs]
    split: _Sliced | None = None
    writer_rows: pl.DataFrame | None
    if sliced:
        split = _Sliced(grouped[1], grouped[0], grouped[2], names, bool(own), draws)
        writer_rows = split.writers.group_by(WRITER).agg(pl.col("rows").sum())
        if draws is not None:  # the file's own: each reply's rows over every value
            draws = facts.merged_draws([draws.drop(SLICE)])
    else:
        writer_rows = _one_writer(found)
    cells: pl.DataFrame | None = None
    if writer_rows is None and by_task and not sliced:  # the same tasks as the counts
        cells = _cells(counted, keep, key if keyed and not regrouped else pl.col("task_id"))
        writer_rows = cells.group_by(WRITER).agg(pl.col("rows").sum())
    elif writer_rows is None:
        writers = counted.filter(keep).group_by(WRITER).agg(pl.len().cast(pl.Int64).alias("rows"))
        writer_rows = writers.collect(engine="streaming")
    elif by_task and not sliced:  # one writer: its cells are the per-task counts
        counted_tasks = grouped[0].filter(pl.col("k") > 0).select("task_id", rows="k", passes="kp")
        cells = counted_tasks.join(writer_rows.select(WRITER), how="cross").select(CELLS)
    found["versioned"] = bool(writer_rows["model"].str.contains("@", literal=True).any())
    task_table: pl.DataFrame | None = None
    tables: list[pl.DataFrame] = []
    if grouped:
        table = grouped[0]
        if own:
            task_table = table.drop(names)
            if sliced:  # the file's own: each task's facts over every value
                task_table = facts.merged_task_facts(task_table.drop(SLICE))
        if theirs and not sliced:  # with ``by`` each value's rows are aggregated apart
            tables = [table.select("task_id", *names)]
    return _Scanned(
        found, writer_rows, tables, task_table, split, cells, draws, task_envs, cells_of
    )


def _turns(frame: pl.LazyFrame) -> pl.LazyFrame:
    """How many rows repeat the (task, episode id) of an earlier row (:data:`facts.EPISODE`),
    and the first such row's position: one row of ``f_turns``, ``f_first_turn``."""
    episode = pl.col(facts.EPISODE)
    per = (
        frame.filter(episode.is_not_null())
        .group_by(episode)
        .agg(n=pl.len(), second=pl.col(AT).bottom_k(2).max())
        .filter(pl.col("n") >= 2)
    )
    return per.select(
        f_turns=(pl.col("n") - 1).sum().cast(pl.Int64), f_first_turn=pl.col("second").min()
    )


def _turn_indices(frame: pl.LazyFrame, strict: bool = False) -> pl.LazyFrame:
    """Rows of one task under several turn indices (:data:`facts.TURN`), where every such task
    holds each index from its first (0 or 1) on, each on as many rows as the one before or
    fewer (every episode has a first turn, fewer reach a later one), and the indices count
    from 0 or some task holds three: one row of ``f_turns``
    (the rows past each task's first index; 0 where any task breaks that order, as a count
    of turns would) and ``f_first_turn`` (the first such row's position). ``strict`` (a plain
    ``step``, :data:`~whilecli.io.aliases.STEP_TURN_ALIASES`): also most tasks hold several
    indices, and a fifth of those or more hold fewer rows at a later one."""
    turn = pl.col(facts.TURN)
    per_index = (
        frame.filter(turn.is_not_null())
        .group_by(pl.col("task_id").alias("t"), turn.alias("v"))
        .agg(n=pl.len(), at=pl.col(AT).min())
    )
    v, n = pl.col("v"), pl.col("n")
    per_task = per_index.group_by("t").agg(
        indices=pl.len(),
        lo=v.min(),
        hi=v.max(),
        whole=(v == v.round()).all(),
        falling=n.sort_by(v).diff().max().fill_null(0) <= 0,
        fewer=n.sort_by(v).diff().min().fill_null(0) < 0,
        later=n.filter(v != v.min()).sum(),
        second=pl.col("at").filter(v != v.min()).min(),
    )
    several = per_task.filter(pl.col("indices") >= 2)
    ordered = (
        pl.col("lo").is_in([0.0, 1.0])
        & (pl.col("hi") - pl.col("lo") + 1 == pl.col("indices"))
        & pl.col("whole")
        & pl.col("falling")
    )
    # from 1, a count of the turns each episode took reads alike where no task shows three
    # (two rows of a task, one episode of 1 turn and one of 2): an index counts from 0, or
    # runs past 2 somewhere
    indexed = (pl.col("lo") == 0).all() | (pl.col("indices").max() >= 3)
    every = ordered.all() & (pl.len() > 0) & indexed
    if strict:  # and some task runs to a third step: two versions can fall, as turns do
        tasks = per_task.select(pl.len().alias("tasks"))
        several = several.join(tasks, how="cross")
        most = 2 * pl.len() > pl.col("tasks").first()
        third = pl.col("indices").max() >= 3
        every = every & most & third & (5 * pl.col("fewer").sum() >= pl.len())
    return several.select(
        f_turns=pl.when(every).then(pl.col("later").sum()).otherwise(0).cast(pl.Int64),
        f_first_turn=pl.when(every).then(pl.col("second").min()),
    )


def _factor_cells(counted: pl.LazyFrame, keep: pl.Expr, task: pl.Expr, i: int) -> pl.LazyFrame:
    """Per (task, value of the ``i``-th column that may name a condition of the draws,
    :data:`FACTORS`): every row read (``all``), the rows every rate counts (``rows``) and
    their passes; rows without a value left out."""
    value = pl.col(FACTORS[i])
    passed = (keep & pl.col("passed").fill_null(False)).sum().cast(pl.Int64)
    query = counted.filter(value.is_not_null()).group_by(
        task.alias("task_id"), value.alias("value")
    )
    return query.agg(all=pl.len().cast(pl.Int64), rows=keep.sum().cast(pl.Int64), passes=passed)


def _cells(counted: pl.LazyFrame, keep: pl.Expr, task: pl.Expr) -> pl.DataFrame:
    """The rows every rate counts, and their passes, per (task, model, policy version): a
    group is one writer's draws (:func:`whilecli.route.pool.across_writers`)."""
    passed = (keep & pl.col("passed").fill_null(False)).sum().cast(pl.Int64)
    rows = keep.sum().cast(pl.Int64)
    query = counted.group_by(task.alias("task_id"), *WRITER).agg(rows=rows, passes=passed)
    return query.filter(pl.col("rows") > 0).select(CELLS).collect(engine="streaming")


#: The longest text no id can be (:data:`MISSING_TEXTS`, :data:`INFINITE_TEXTS`), in characters.
_MISSING_CHARS = max(len(text) for text in MISSING_TEXTS + INFINITE_TEXTS)


def maybe_bad_id() -> pl.Expr:
    """True for every task id :func:`~whilecli.io.locate.no_id` can refuse, and for few
    others: a null id, one holding a NUL, or one no longer than the longest missing-value
    text (lower-casing never makes a text shorter in characters). The ids past it are not
    lower-cased at all."""
    task = pl.col("task_id")
    return (
        task.is_null()
        | (task.str.len_chars() <= _MISSING_CHARS)
        | task.str.contains("\x00", literal=True)
    ).fill_null(True)


def _any_blank(table: pl.DataFrame) -> bool:
    """Whether a group-by by the task key (:attr:`~whilecli.io.plan.Plan.task_key`) met an id
    that the task id reads otherwise (blank, a missing value's text, or whitespace around it:
    :func:`~whilecli.io.plan.no_blank`): only then do the key's tasks differ from the id's."""
    task = pl.col("task_id")
    near = table.filter(maybe_blank(task))  # the ids no_blank may read otherwise
    return bool(near.select((task.is_not_null() & no_blank(task).ne_missing(task)).any()).item())


def _any_bad_id(table: pl.DataFrame, run: _Pass) -> bool:
    """Whether a distinct task id of a group-by's table is one no reading takes
    (:meth:`_Pass.bad_id`), looking only at the ids :func:`maybe_bad_id` keeps."""
    return bool(table.filter(maybe_bad_id() & (pl.col("k") > 0)).select(run.bad_id().any()).item())


def _writer_bounds(missing: str) -> list[pl.Expr]:
    """Per writer column: its smallest and largest value and its nulls (one writer when the
    bounds meet and the column is full or empty), and the rows every rate counts."""
    out = [facts.kept(missing).sum().cast(pl.Int64).alias("w_kept")]
    for name in WRITER:
        col = pl.col(name)
        out += [
            col.min().alias(f"w_{name}_lo"),
            col.max().alias(f"w_{name}_hi"),
            col.null_count().cast(pl.Int64).alias(f"w_{name}_nulls"),
        ]
    return out


def _one_writer(stats: Mapping[str, Any]) -> pl.DataFrame | None:
    """The rows-per-writer table of a file one writer wrote, from its bounds; None: several."""
    values: dict[str, Any] = {}
    for name in WRITER:
        lo, hi, nulls = (stats[f"w_{name}_{k}"] for k in ("lo", "hi", "nulls"))
        if nulls == stats["rows"]:
            values[name] = None
        elif nulls == 0 and lo == hi:
            values[name] = lo
        else:
            return None
    kept = int(stats["w_kept"] or 0)
    data = {k: [v] for k, v in values.items()} if kept else {k: [] for k in values}
    schema = {"model": pl.String(), "policy_version": pl.String(), "rows": pl.Int64()}
    return pl.DataFrame({**data, "rows": [kept] if kept else []}, schema=schema)


def _named(key: str) -> str:
    """The column (and stats key) counting the values rows hold under the key ``key``."""
    return f"__named:{key}"


def named_values(schema: Mapping[str, DType]) -> dict[str, pl.Expr]:
    """Per key name on the way to each value a JSON Lines scan with ``schema`` reads (each
    object that holds one, top-level or nested, in a list's objects too), how many values a
    row holds under that name: what :class:`~whilecli.io.sources.KeyCount` is held to."""
    counted: dict[str, list[pl.Expr]] = {}

    def within(expr: pl.Expr, dtype: Any, into: dict[str, list[pl.Expr]]) -> None:
        if isinstance(dtype, pl.Struct):
            for sub in dtype.fields:
                walk(expr.struct.field(sub.name), sub.name, sub.dtype, into)
        elif isinstance(dtype, (pl.List, pl.Array)):
            inner: dict[str, list[pl.Expr]] = {}
            within(pl.element(), dtype.inner, inner)
            for name, exprs in inner.items():  # the values under ``name`` in the elements
                each = pl.sum_horizontal(e.cast(pl.Int64) for e in exprs)
                into.setdefault(name, []).append(expr.list.eval(each).list.sum().fill_null(0))

    def walk(expr: pl.Expr, name: str, dtype: Any, into: dict[str, list[pl.Expr]]) -> None:
        into.setdefault(name, []).append(expr.is_not_null())
        within(expr, dtype, into)

    for name, dtype in schema.items():
        walk(pl.col(name), name, dtype, counted)
    return {
        name: exprs[0] if len(exprs) == 1 else pl.sum_horizontal(e.cast(pl.Int64) for e in exprs)
        for name, exprs in counted.items()
    }


def _reward_range(parts: list[_Part]) -> tuple[float, float] | None:
    """The lowest and highest graded reward over the files whose pass is read from the
    reward (not from a ``--map passed=COLUMN``); None where none is, or none is graded."""
    bounds = [
        (float(p.stats["lo"]), float(p.stats["hi"]))
        for p in parts
        if p.plan.passed is None and p.stats["lo"] is not None and p.stats["hi"] is not None
    ]
    if not bounds:
        return None
    return min(lo for lo, _ in bounds), max(hi for _, hi in bounds)


def _refuse_repeated(
    source: Source, count: KeyCount | None, stats: Mapping[str, Any], every: bool
) -> None:
    """Refuse, at its line, a key written twice in one object with different values past
    the rows parsed by Python, where polars takes the first in silence: every key whose
    name the rows write more often than polars read values under it (``count`` against the
    scan's ``stats``; ``every``: each key, where rows were dropped or unrolled) has the
    lines that write it twice parsed (:func:`~whilecli.io.sources.refuse_repeated_lines`)."""
    if count is None:
        return
    read = {k: int(stats.get(_named(k)) or 0) for k in count.quoted}
    if not count.names:
        if count.colons == sum(read.values()) and not every:
            return  # every key of every row read once
        count = count_keys(source, count.quoted)
    refuse_repeated_lines(source, count, list(count.quoted) if every else count.differ(read))


def _probed(key: str) -> str:
    """The column (and stats key) saying whether a row carries the probed top-level ``key``."""
    return f"__probe:{key}"


def _stats(
    frame: pl.LazyFrame,
    digest: bool,
    missing: str,
    bad: pl.Expr,
    by: str | None = None,
    ids: bool = True,
    tokens: bool = True,
    sub: bool = False,
) -> pl.LazyFrame:
    """One row of aggregates over a narrow frame: everything reading checks or reports
    (``tokens``: whether its rows carry reply token counts, :func:`facts.row_aggregates`;
    ``sub``: how a column that may key tasks finer parts the ids,
    :func:`whilecli.io.subtasks.aggregates`).

    Every column is touched (``null_count``), so a value that cannot be read fails here,
    not later in :func:`~whilecli.route.pool.summarize`. ``bad`` covers the rows' task ids
    too unless ``ids`` is false (the caller checks the distinct ids of its group-by), and so
    does ``json_id`` (an id that reads as JSON text, :func:`_json_looking`). ``by``: one row
    per value of that column instead, with its first row's position (``__first``).
    """
    names = frame.collect_schema().names()
    probes = [c for c in names if c.startswith("__probe:")]
    misfit = (
        {
            "misfit": pl.col(MISFIT).drop_nulls().first(),
            "misfit_at": pl.col(AT).filter(pl.col(MISFIT).is_not_null()).first(),
        }
        if MISFIT in names
        else {}
    )
    # each graded row's reward, and its partial credit, once per row (null on other rows):
    # the bounds and the grids read these columns, not a filter of the rows each
    reward = pl.when(pl.col(facts.GRADED) & (pl.col("reply") != facts.ERROR)).then("reward")
    frame = frame.with_columns(
        reward.alias(_GRADED_REWARD),
        pl.when(facts.partial(reward)).then(reward).alias(_PARTIAL_REWARD),
    )
    graded = pl.col(_GRADED_REWARD)
    aggregate = frame.select if by is None else frame.group_by(by).agg
    first = {} if by is None else {"__first": pl.col(AT).min()}
    return aggregate(
        *[pl.col(c).any() for c in probes],
        *[pl.col(c).sum() for c in names if c.startswith("__named:")],
        *judges.rule_counts(),
        *facts.row_aggregates(AT, tokens),
        *_writer_bounds(missing),
        *facts.grid_aggregates(pl.col(_PARTIAL_REWARD)),
        *(subtasks.aggregates(pl.col("task_id")) if sub else []),
        rows=pl.len(),
        bad=bad.any(),
        json_id=_json_looking(pl.col("task_id")).any() if ids else pl.lit(False),
        lo=graded.min(),
        hi=graded.max(),
        partial=facts.partial(graded).sum(),
        lp=pl.col("__lp").any(),
        vals=pl.col("__vals").any(),
        digest=_row_digest() if digest else pl.lit(0, dtype=pl.Int64),
        touched=pl.sum_horizontal(
            pl.col(c).null_count() for c in ("truncated", "policy_version", "__passed")
        ),
        **first,
        **misfit,
    )


#: The columns :func:`_stats` adds to a narrow frame: a graded row's reward, and its partial
#: credit (:func:`whilecli.io.facts.partial`), null on every other row.
_GRADED_REWARD, _PARTIAL_REWARD = "__graded_reward", "__partial_reward"


def _row_digest() -> pl.Expr:
    """An order-free digest of a frame's canonical rows, their prompt and reply keys with them:
    the sum of row hashes (each cut to 40 bits, so a piece of 8M rows cannot overflow)."""
    # a copy keeps its prompts and replies too: two evaluations whose ids and grades agree
    # row for row (the same ids under other prompts) are no copy of each other
    row = pl.struct(*READ_COLUMNS, facts.PROMPT, facts.DRAW).hash(seed=0)
    return (row % (1 << 40)).cast(pl.Int64).sum()


#: Files of identical canonical rows this large are flagged even under different names.
SAME_ROWS_WARN = 32


#: The per-task facts a pool's draws are compared by, and its prompts.
DRAW_FACTS = ("task_id", "n_all", "k", "d_n", "d_lo", "d_hi", "d_pass")
PROMPT_FACTS = ("task_id", "n_all", "p_lo", "p_hi")


def _pooled_task_table(parts: Sequence[_Part], names: Sequence[str]) -> pl.DataFrame | None:
    """The per-task facts ``names`` of :func:`whilecli.io.facts.task_facts` over every part's
    rows (a task whose rows lie in several files: a resumed run's shards, one file per seed),
    where every part carries them; None where one does not."""
    tables = [p.task_table for p in parts]
    if any(t is None or not set(names) <= set(t.columns) for t in tables):
        return None
    both = pl.concat([t.select(names) for t in tables if t is not None], how="vertical_relaxed")
    return facts.merged_task_facts(both)


#: How many of a pool's files a refusal of the whole pool names, before counting the rest.
NAMED_FILES = 3


def _names(parts: Sequence[_Part]) -> str:
    """The pool's files as a refusal names them: the first :data:`NAMED_FILES`, then how many
    more (a Harbor job or an AgentLab study is a file per rollout: hundreds)."""
    names = [p.source.name for p in parts]
    if len(names) <= NAMED_FILES:
        return ", ".join(names)
    return f"{', '.join(names[:NAMED_FILES])} and {len(names) - NAMED_FILES} more files"


def _one_encoding(parts: list[_Part], notes: list[str]) -> list[_Part]:
    """One pool written twice (``mixed.jsonl`` and ``mixed.parquet``, or a copy under another
    name, gzipped or its keys reordered) is read once: a file whose canonical rows equal an
    earlier file's is dropped with a note, where it is another encoding of one name or holds
    :data:`SAME_ROWS_WARN` rows or more (fewer identical rows may be two runs' by chance)."""
    kept: list[_Part] = []
    for part in parts:
        twin = next(
            (
                k
                for k in kept
                if k.stats["rows"] == part.stats["rows"]
                and k.stats["digest"] == part.stats["digest"]
            ),
            None,
        )
        if twin is None or runs_apart(twin.source, part.source):
            kept.append(part)
            continue
        # another encoding of one pool: one name, two kinds (never two folders' result.json)
        same_stem = _stem(twin.source.name) == _stem(part.source.name)
        if same_stem and _base(twin.source.name) != _base(part.source.name):
            notes.append(
                f"{part.source.name} holds the same rows as {twin.source.name} (another"
                " encoding of one pool): read once"
            )
            continue
        if part.stats["rows"] >= SAME_ROWS_WARN and _telling(part):
            # as many rows, each task's ids and grades the same row for row: a copy (no two
            # runs that sample draw the same grades on so many rows), its rows one pool's
            notes.append(
                f"{part.source.name} holds the same {part.stats['rows']} rows as"
                f" {twin.source.name} (a copy: the same tasks, grades and writers row for"
                " row): read once"
            )
            continue
        kept.append(part)
    return kept


def _telling(part: _Part) -> bool:
    """Whether rows equal to another file's row for row say it is a copy: they keep replies
    (two runs that sample draw other replies), or their grades differ (two runs of a pool
    that splits grade it otherwise). Two runs of a floor that keep no reply agree on every
    grade as a copy does."""
    lo, hi = part.stats["lo"], part.stats["hi"]
    return part.plan.draw is not None or (lo is not None and hi is not None and lo < hi)


def _base(name: str) -> str:
    return name.rsplit("/", 1)[-1].lower()


def _stem(name: str) -> str:
    base = name.rsplit("/", 1)[-1].lower()
    for suffix in (".gz", ".zst", ".zstd"):
        base = base.removesuffix(suffix)
    return base.rsplit(".", 1)[0]


#: Rows whose replies are looked at first; the whole file only when all of them are empty.
REPLY_SAMPLE = 1000


def refuse_nothing_generated(part: _Part) -> None:
    """Refuse a file whose every reply is empty (an interrupted or intermediate save): routed,
    it would read as a floor. The first rows are checked, the whole file only if all of those
    are empty, so a file with replies pays for a glance."""
    plan = part.plan
    if plan.generated is None or part.raw is None:
        return
    try:
        head = part.raw.head(REPLY_SAMPLE).select(g=plan.generated).collect()["g"]
        if head.any():
            return
        credited = facts.credited(plan.reward).any()
        full = part.raw.select(
            g=plan.generated.any(), n=plan.generated.count(), c=credited, rows=pl.len()
        ).collect()
    except pl.exceptions.PolarsError:
        return
    if full["g"][0]:
        return
    replies = int(full["n"][0])
    # a reply field null on every row is no reply saved, as an empty one is, where no row was
    # given credit (a file that grades rows it kept no reply of has passes)
    if replies == 0 and full["c"][0]:
        return
    raise nothing_generated(replies or int(full["rows"][0]), plan, part.source.name)


def nothing_generated(replies: int, plan: Plan, file: str | None) -> InputError:
    """The refusal of a file whose every reply is empty (the same words in every command)."""
    return InputError(
        f"nothing was generated: all {replies} replies ({plan.completion_field}) are"
        " empty, as in an interrupted or intermediate save; route a file whose rows hold the"
        " model's replies",
        file=file,
        field=plan.completion_field,
    )


class PoolingError(InputError):
    """Files that do not plausibly hold one evaluation, refused unless pooled on purpose."""


#: Rows per file whose (task id, prompt) pairs the pooling check compares.
POOL_SAMPLE = 5000


def _sampled_prompts(part: _Part) -> list[tuple[str, str]]:
    """The distinct (task id, prompt) pairs of a file's first :data:`POOL_SAMPLE` rows (none
    where the rows carry no prompt)."""
    if part.raw is None or part.plan.prompt is None:
        return []
    try:
        pairs = (
            part.raw.head(POOL_SAMPLE)
            .select(t=part.plan.task_id.cast(pl.String), p=part.plan.prompt)
            .unique()
            .collect()
        )
    except pl.exceptions.PolarsError:
        return []
    return [(t, p) for t, p in pairs.iter_rows() if t is not None and p is not None]


def _mixed(parts: list[_Part]) -> tuple[str, list[str]] | None:
    """Whether the files hold different evaluations, and each file's evaluation: files
    whose sidecars name different environments (named by them); else files of training rows
    beside files of held-out rows (:func:`_splits_apart`); else files where one task
    id carries different prompts (the files that share an id under one prompt are one
    evaluation, named by its first file). None: one evaluation, as far as they show."""
    envs = [p.plan.env for p in parts]
    if len({e for e in envs if e is not None}) > 1:
        named = "; ".join(f"{p.source.name} ({p.plan.env})" for p in parts if p.plan.env)
        why = f"these files hold different evaluations: {named}"
        return why, [
            e if e is not None else p.source.name for p, e in zip(parts, envs, strict=True)
        ]
    for apart in (_splits_apart(parts), _decoded_apart(parts)):
        if apart is not None:
            return apart
    conflict, roots = prompt_groups([_sampled_prompts(part) for part in parts])
    if conflict is not None:
        task, first, other = conflict
        why = (
            f"task id {task!r} carries different prompts in {parts[first].source.name} and"
            f" {parts[other].source.name}: these look like different evaluations"
        )
        return why, [parts[r].source.name for r in roots]
    return _writers_in_paths(parts)


@dataclass(frozen=True)
class _SplitFound:
    """The splits a file's rows belong to (:mod:`whilecli.io.splits`): each kind (``train``,
    ``eval``) with the values that name it as written and their rows, and what names them:
    the column (``column``), or a name in the file's path. No kinds: none is named, or the
    rows are read apart by the column (``--by``)."""

    kinds: dict[str, dict[str, int]]
    named_by: str = ""
    column: bool = False

    def words(self) -> str:
        """What the file's rows are, as a refusal names them: ``mode: train``, ``eval/``."""
        values = ", ".join(v for k in sorted(self.kinds, key=_train_first) for v in self.kinds[k])
        return f"{self.named_by}: {values}" if self.column else self.named_by


def _train_first(kind: str) -> int:
    return 0 if kind == "train" else 1


def _split_of(part: _Part) -> _SplitFound:
    """The splits ``part``'s rows belong to: the values of its split column over every row
    (:attr:`Plan.split_column`), else the split its path names; looked at once."""
    if part.split_found is not None:
        return part.split_found
    found = _SplitFound({})
    col, value = part.plan.split_column or (None, None)
    if col is not None and value is not None and part.plan.slice_field != col:
        assert part.raw is not None
        try:
            counts = part.raw.group_by(value.alias(col)).len().collect()
        except POLARS_FAILURES:
            counts = None
        kinds: dict[str, dict[str, int]] = {}
        for written, rows in counts.iter_rows() if counts is not None else ():
            kind = splits.kind(written)
            if kind is not None:
                kinds.setdefault(kind, {})[written] = int(rows)
        found = _SplitFound(kinds, col, column=True)
    elif col is None:
        named = splits.of_path(part.source.path)
        if named is not None:
            found = _SplitFound({named[0]: {named[1]: int(part.stats["rows"])}}, named[1])
    part.split_found = found
    return found


def refuse_split_rows(part: _Part) -> None:
    """Refuse a file whose split column names training rows and held-out rows (exit 2):
    two evaluations in one file, read apart by that column (``--by``) or pooled on
    purpose (``--pool``)."""
    found = _split_of(part)
    if len(found.kinds) < 2:
        return
    shown = ", ".join(
        f"{value} {rows} rows"
        for kind in sorted(found.kinds, key=_train_first)
        for value, rows in found.kinds[kind].items()
    )
    raise PoolingError(
        f"this file holds training rows and held-out rows ({found.named_by}: {shown}):"
        " different evaluations; pooled, the held-out tasks would read as the training"
        f" pool's band. Route each apart (route --by {found.named_by}), or pool them on purpose"
        " with --pool",
        file=part.source.name,
        field=found.named_by,
    )


#: Files a pooling refusal names at the most (the rest counted).
SHOWN_FILES = 4


def _splits_apart(parts: list[_Part]) -> tuple[str, list[str]] | None:
    """Files of training rows beside files of held-out rows (:func:`_split_of`: a column's
    values, else the path: ``train/`` beside ``eval/``, ``train_*`` beside ``eval_*``): two
    evaluations, each file's named by its split (a file that names none, by itself). None
    where the files name one split at most."""
    found = [_split_of(p) for p in parts]
    if len({k for f in found if len(f.kinds) == 1 for k in f.kinds}) < 2:
        return None
    named = [f"{p.source.name} ({f.words()})" for p, f in zip(parts, found, strict=True) if f.kinds]
    if len(named) > SHOWN_FILES:
        named = [*named[:SHOWN_FILES], f"and {len(named) - SHOWN_FILES} more"]
    columns = sorted({f.named_by for f in found if f.column})
    by = f" (route --by {columns[0]} routes each split apart)" if len(columns) == 1 else ""
    why = (
        "these files hold training rows and held-out rows, different evaluations:"
        f" {'; '.join(named)}{by}"
    )
    labels = [
        "+".join(sorted(f.kinds, key=_train_first)) if f.kinds else p.source.name
        for p, f in zip(parts, found, strict=True)
    ]
    return why, labels


def _decoded_apart(parts: list[_Part]) -> tuple[str, list[str]] | None:
    """Files decoded greedily beside files sampled (:attr:`whilecli.io.plan.Plan.decoded_as`:
    as their rows, the settings beside them or their writer's names say): two evaluations,
    each file's named by its decoding (a file that says none, by itself). Pooled, a greedy
    draw reads as one more of the sampler's, and a task it passes where the sampler fails
    as a split task. None where the files name one decoding at most."""
    said = [p.plan.decoded_as for p in parts]
    if len({d[0] for d in said if d is not None}) < 2:
        return None
    groups = []
    for kind in ("greedy", "sampled"):
        files = [(p, d) for p, d in zip(parts, said, strict=True) if d and d[0] == kind]
        names = [p.source.name for p, _ in files[:2]]
        more = f" and {len(files) - 2} more" if len(files) > 2 else ""
        groups.append(f"{kind}: {', '.join(names)}{more} ({files[0][1][1]})")
    why = (
        "these files were decoded apart, different evaluations: "
        + "; ".join(groups)
        + "; pooled, a greedy draw would read as one more sample (route the sampled files"
        " alone to measure the sampler's band)"
    )
    labels = [d[0] if d else p.source.name for p, d in zip(parts, said, strict=True)]
    return why, labels


def _writers_in_paths(parts: list[_Part]) -> tuple[str, list[str]] | None:
    """Files whose rows name no model, under paths or beside settings files that name
    different models (the read's ``path_model``: ``runs/Qwen3-8B/`` beside
    ``runs/Llama-3.1-8B/``, a ``config.yaml`` of ``model: Qwen/Qwen3-8B`` beside one of
    another): pooled, one model's passes and another's fails of a task would read as a split
    task, and one model's draws as another's. Each file's evaluation is the model named (the
    files naming one model are one); files where none is named say nothing. None where at
    most one model is named."""
    named: list[str | None] = [
        writer_named(p.facts.path_model) if p.facts.path_model is not None else None for p in parts
    ]
    models, each = writers_named(named)
    if len(models) < 2:
        return None
    first = [next(p for p, n in zip(parts, named, strict=True) if n == m) for m in models]
    shown = "; ".join(
        f"{p.source.name} ({p.facts.path_model})" for p in first if p.facts.path_model
    )
    why = (
        "the rows name no model, and their paths or settings files name different ones:"
        f" {shown}; pooled, one model's passes and another's fails of a task would read as"
        " split tasks"
    )
    labels = [m or p.source.name for p, m in zip(parts, each, strict=True)]
    return why, labels


def prompt_groups(
    pairs: Sequence[Iterable[tuple[str, Any]]],
) -> tuple[tuple[str, int, int] | None, list[int]]:
    """Which of several reads are one evaluation, from each read's (task id, prompt) pairs:
    reads that share an id under one prompt are one (union-find); one id under different
    prompts in two reads says the reads hold different evaluations. Returns the first such
    (id, the read it was first seen in, the read that differs), None where no id differs,
    and each read's group, named by its first read. The rule for rows (:func:`_mixed`) and
    for summaries (:func:`whilecli.route.summary.load_summaries`) alike."""
    group = list(range(len(pairs)))

    def root(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    seen: dict[tuple[str, Any], int] = {}
    prompts: dict[str, tuple[Any, int]] = {}
    conflict: tuple[str, int, int] | None = None
    for index, read in enumerate(pairs):
        for task, prompt in read:
            other = seen.setdefault((task, prompt), index)
            group[root(index)] = root(other)
            first = prompts.setdefault(task, (prompt, index))
            if first[0] != prompt and first[1] != index and conflict is None:
                conflict = (task, first[1], index)
    roots = [root(i) for i in range(len(pairs))]
    firsts = {r: min(i for i, q in enumerate(roots) if q == r) for r in set(roots)}
    return conflict, [firsts[r] for r in roots]


def evaluations(parts: list[_Part]) -> list[str] | None:
    """Each file's evaluation where the files hold several (:func:`_mixed`); None: one."""
    mixed = _mixed(parts)
    return None if mixed is None else mixed[1]


def refuse_mixed_pool(parts: list[_Part]) -> None:
    """Refuse files of different evaluations (their sidecars name different environments or
    tasks, or their splits differ: training rows beside held-out rows), and one task id that
    carries different prompts in different files."""
    mixed = _mixed(parts)
    if mixed is not None:
        raise PoolingError(
            f"{mixed[0]}. Read each apart (route --by source routes each), or pool them on"
            " purpose with --pool (each evaluation's tasks kept apart)"
        )


# --- one file ---------------------------------------------------------------------------


def _read_source(
    source: Source, mapping: Mapping[str, str], forced: str | None, run: _Pass
) -> _Part | None:
    read = _read_parquet if source.kind == "parquet" else _read_jsonl
    if read is _read_jsonl and run.keep is not None and run.keep.whole:
        read = _read_jsonl_whole
    rekeyed: tuple[int, int, int] | None = None
    try:
        part = read(source, mapping, forced, run)
        if part is None or part.stats["rows"] == 0:
            return part
        if part.stats.get("env_ids") and not run.env_ids:  # one id in two datasets
            run.env_ids = int(part.stats["env_ids"])
            part = read(source, mapping, forced, run)
            assert part is not None
        refuse_turns(part)
        set_aside = part.plan.by_prompt[1] if part.plan.by_prompt is not None else None
        owners = None
        if set_aside is not None and part.task_table is not None:
            owners = facts.idless_owners(part.task_table)
        if owners is not None:  # rows without an id whose prompt one id carries: read again
            run.owners = owners
            part = read(source, mapping, forced, run)
            assert part is not None
        table = part.task_table
        if part.sliced is not None:  # each value's ids: over its rows in every file
            table = None  # (:func:`_rekeyed_slices`, once every source is read)
        per_row = None if table is None or set_aside is None else facts.per_row_ids(table)
        if table is not None and per_row is not None:
            # ids one per row while prompts repeat: read again, those rows keyed by the prompt
            rekeyed = _rekeyed(table, per_row)
            run.rekey = True
            run.rekey_ids = None if per_row.len() == table.height else per_row
            part = read(source, mapping, forced, run)
            assert part is not None
        table = part.task_table
        absent = None if table is None else facts.absent_failures(table)
        cut = None if table is None else facts.cut_failures(table)
        alike = None if part.draws is None else facts.placeholder_failures(part.draws)
        unread = run.absent is None and run.cut is None and run.placeholder is None
        if (absent or cut or alike) and unread:  # harness failures
            run.absent, run.cut, run.placeholder = absent, cut, alike
            part = read(source, mapping, forced, run)
            assert part is not None
    except InputError as err:  # a converted document's field, named as the file names it
        raise source.as_written(err) from None
    except POLARS_FAILURES as err:  # what the rows hold defeats a reading (a --map path)
        raise InputError(f"cannot read: {_short(err)}", file=source.name) from None
    part.facts = _facts_of(part, run)
    part.env_keyed = bool(run.env_ids) and part.plan.row_env is not None
    part.keep = run.keep
    if run.rekey and part.sliced is None:
        _set_rekeyed(part.facts, set_aside, rekeyed)
    return part


def refuse_turns(part: _Part) -> None:
    """Refuse rows that repeat an episode (exit 2): two rows of one task with one episode id
    are turns of that episode (or the episode written twice), and counting each as a rollout
    multiplies k and grades every turn as a draw. Named: the file, the first row that
    repeats an earlier row's episode, the field; and where a turn index is read as the
    policy version (``step``), that it counts turns."""
    turns, plan = int(part.stats.get("f_turns") or 0), part.plan
    if turns and plan.episode_field is None and plan.turn_field is not None:
        versions = (
            f" (were {plan.turn_field} a policy's version, --map"
            f" policy_version={plan.turn_field} reads it so)"
            if plan.turn_strict
            else ""
        )
        raise InputError(
            f"rows are turns: this row's {plan.turn_field} is past the first of its task's"
            f" ({turns} of {int(part.stats['rows'])} rows are later turns, each index on as"
            " many rows as the one before it or fewer), and no episode id says which rows"
            " are one rollout. Give one row per episode: e.g. keep each episode's last turn,"
            " with its final reward, truncated if any turn was; or, where each turn is a task"
            f" graded on its own, an id per (task, turn){versions}",
            file=part.source.name,
            field=plan.turn_field,
            **_where(part.source, part.stats.get("f_first_turn")),
        )
    if not turns or plan.episode_field is None:
        return
    rows, field_name = int(part.stats["rows"]), plan.episode_field
    version = plan.sources.get("policy_version", "").split(" ")[0]
    step = (
        f"; {version} counts turns here, not a policy version: drop it"
        if version in TURN_ALIASES
        else ""
    )
    raise InputError(
        f"rows repeat an episode: this row's {field_name} is an earlier row's of the same task"
        f" ({turns} of {rows} rows repeat one), so rows are turns of episodes (or episodes"
        " written twice), not rollouts. Give one row per episode: e.g. keep each episode's"
        f" last turn, with its final reward, truncated if any turn was{step}",
        file=part.source.name,
        field=field_name,
        **_where(part.source, part.stats.get("f_first_turn")),
    )


def _rekeyed(table: pl.DataFrame, per_row: pl.Series) -> tuple[int, int, int]:
    """The rows keyed by the prompt for ``per_row`` ids, the prompts they form, and the rows
    under ids (:attr:`whilecli.io.facts.Facts.rekeyed_rows` and the two beside it)."""
    chosen = table.filter(pl.col("task_id").is_in(per_row.implode()))
    return (
        int(chosen["n_all"].sum()),
        chosen["p_lo"].n_unique(),
        int(table.filter(pl.col("task_id").is_not_null())["n_all"].sum()),
    )


def _set_rekeyed(
    found: facts.Facts, column: str | None, rekeyed: tuple[int, int, int] | None
) -> None:
    found.per_row_ids = column
    if rekeyed is not None:
        found.rekeyed_rows, found.rekeyed_prompts, found.id_rows = rekeyed


def _per_row_slices(sliced: _Sliced) -> _Found:
    """Per value of the ``--by`` column whose rows' ids are one per row while prompts repeat
    (:func:`whilecli.io.facts.per_row_ids` over that value's rows), those ids (None: every
    id of the value) and the counts :func:`_rekeyed` gives; none past :data:`MAX_SLICES`
    values, which are refused."""
    firsts = sliced.firsts()
    if len(firsts) > MAX_SLICES:
        return {}
    out: _Found = {}
    for value in firsts:
        table = sliced.one(value).task_table
        per_row = None if table is None else facts.per_row_ids(table)
        if table is not None and per_row is not None:
            ids = None if per_row.len() == table.height else per_row
            out[value] = (ids, _rekeyed(table, per_row))
    return out


def _rekey(plan: Plan, run: _Pass) -> None:
    """Rows without an id read as the task whose id carries their prompt (``run.owners``),
    and tasks keyed by the prompt where the id column was found to be one per row (with
    ``by``: on each value's rows where its own ids were, :func:`_per_row_slices`; what the
    plan says of it is each value's, :func:`_rekey_words`)."""
    if run.env_ids and plan.row_env is not None:
        _keyed_by_env(plan, run.env_ids)
    if run.label is not None:
        _labelled(plan, run.label)
    if run.owners is not None and plan.by_prompt is not None:
        _adopt(plan, run.owners)
    if run.rekey and plan.by_prompt is not None:
        _rekeyed_by_prompt(plan, run)
    if run.absent is not None:
        _absent_errors(plan, *run.absent)
    if run.cut is not None:
        _cut_errors(plan, *run.cut)
    if run.placeholder is not None:
        _placeholder_errors(plan, *run.placeholder)


def _within_tasks(plan: Plan, tasks: pl.Series) -> pl.Expr:
    """The rows of ``tasks`` (ids of a per-task table), keyed as its counts were."""
    ids = tasks.implode()
    within = plan.task_id.cast(pl.String).is_in(ids)
    if plan.task_key is not None:
        within = within | plan.task_key.cast(pl.String).is_in(ids)
    return within.fill_null(False)


def _cut_errors(plan: Plan, tasks: pl.Series, rows: int) -> None:
    """The rows of ``tasks`` whose reply stands beside an error naming a failed request read
    as harness errors, requests that failed at the API (``rows`` of them:
    :func:`whilecli.io.facts.cut_failures`)."""
    if plan.cut is None:
        return
    cut = _within_tasks(plan, tasks) & plan.cut.fill_null(False)
    failed = plan.request_failed if plan.request_failed is not None else pl.lit(False)
    plan.request_failed = failed | cut
    _read_as_errors(
        plan,
        cut,
        "an error naming a failed request beside a reply, where such replies never pass",
        f"{rows} repl{'ies' if rows != 1 else 'y'} beside an error naming a request that"
        " failed at the API never pass where their tasks' other replies pass often: read as"
        " streams the failure cut short (harness errors), left out of every rate",
    )


def _absent_errors(plan: Plan, tasks: pl.Series, rows: int) -> None:
    """The rows of ``tasks`` that keep no reply read as harness errors (``rows`` of them:
    :func:`whilecli.io.facts.absent_failures`), keyed as the per-task counts were."""
    if plan.generated is None:
        return
    _read_as_errors(
        plan,
        _within_tasks(plan, tasks) & plan.generated.is_null(),
        "no reply (null) beside replies of its task, where none such passes",
        f"{rows} row{'s' if rows != 1 else ''} keep no reply beside replies of their task,"
        " and none passes where those replies pass often: read as the harness's errors"
        " (nothing recorded), left out of every rate",
    )


def _placeholder_errors(plan: Plan, keys: pl.Series, rows: int) -> None:
    """The rows whose reply is a harness's placeholder (``keys``, their draw keys: ``rows``
    of them, :func:`whilecli.io.facts.placeholder_failures`) read as harness errors."""
    if plan.draw is None:
        return
    _read_as_errors(
        plan,
        plan.draw.is_in(keys.implode()).fill_null(False),
        "one reply written alike in many tasks, where it never passes",
        f"{rows} row{'s' if rows != 1 else ''} write one reply alike in many tasks and"
        " never pass where their tasks' other replies pass often: read as a harness's"
        " placeholder for a failed request (harness errors), left out of every rate",
    )


def _read_as_errors(plan: Plan, rows: pl.Expr, source: str, note: str) -> None:
    """``rows`` read as harness errors: the error's sources name ``source``, the notes
    ``note``."""
    plan.reply = pl.when(rows).then(pl.lit(facts.ERROR)).otherwise(plan.reply)
    said = plan.sources.get("error")
    plan.sources["error"] = source if said is None else f"{said}; or {source}"
    plan.notes.append(note)


def _rekeyed_by_prompt(plan: Plan, run: _Pass) -> None:
    """Tasks keyed by the prompt where the id column was found to be one per row."""
    assert plan.by_prompt is not None
    plan.task_key = None  # the id is no longer the column's, blank or not
    expr = plan.by_prompt[0]
    if run.rekey_slices is not None:
        column = plan.slice if plan.slice is not None else pl.lit(None, dtype=pl.String)
        chosen = pl.lit(False)
        for value, ids in run.rekey_slices.items():
            rows = _within(column, value)
            if ids is not None:
                rows = rows & plan.task_id.is_in(ids.implode())
            chosen = chosen | rows.fill_null(False)
        plan.task_id = pl.when(chosen).then(expr).otherwise(plan.task_id)
        return
    if run.rekey_ids is not None:
        chosen = plan.task_id.is_in(run.rekey_ids.implode())
        expr = pl.when(chosen).then(expr).otherwise(plan.task_id)
    plan.task_id = expr
    _rekey_words(plan, run.rekey_ids)


def _keyed_by_env(plan: Plan, ids: int) -> None:
    """Tasks keyed ``dataset:id`` (:attr:`Plan.row_env`), where ``ids`` ids stand under two
    or more datasets: verl numbers each dataset's rows from 0, so one id is a task of each
    (a row without a dataset keeps its id)."""
    assert plan.row_env is not None
    env = plan.fields.get("env", "dataset")
    _prefixed(plan, plan.row_env)
    plan.sources["task_id"] = f"({env}, {plan.sources.get('task_id', 'task id')})"
    if ids == PAIRED:
        why = "as the pool it is paired with is"
    else:
        why = f"{ids} task id{'s' if ids != 1 else ''} stand under two or more values of {env}"
    plan.notes.append(f"{why}: a task is keyed by ({env}, id), read as {env}:id")


def _labelled(plan: Plan, label: str) -> None:
    """Tasks keyed ``label:id``: the file's evaluation, pooled on purpose with others whose
    ids it shares (``--pool``), so one id of two evaluations is two tasks."""
    _prefixed(plan, pl.lit(label))


def prefixed_id(prefix: pl.Expr, task: pl.Expr) -> pl.Expr:
    """A task id keyed apart as ``prefix:id`` (a dataset, an evaluation); a row whose prefix
    is null keeps its id. The one form of a key by dataset or evaluation, in rows and in
    summaries alike."""
    both = pl.concat_str([prefix, task], separator=":")
    return pl.when(prefix.is_not_null()).then(both).otherwise(task)


def _prefixed(plan: Plan, prefix: pl.Expr) -> None:
    """The plan's task id (and its key as written) keyed by ``prefix`` (:func:`prefixed_id`)."""
    plan.task_id = prefixed_id(prefix, plan.task_id)
    if plan.task_key is not None:
        plan.task_key = prefixed_id(prefix, plan.task_key)


def _adopt(plan: Plan, owners: pl.DataFrame) -> None:
    """The rows keyed by their prompt for want of an id (their task id is their prompt's
    hash) read as the task of ``owners``' id for that prompt, with a note counting them."""
    assert plan.by_prompt is not None
    prompt, column = plan.by_prompt
    by_prompt = plan.task_id == prompt
    owned = plan.task_id.replace(owners["task_id"], owners["to"])
    plan.task_id = pl.when(by_prompt.fill_null(False)).then(owned).otherwise(plan.task_id)
    plan.task_key = None  # the rows without an id no longer form tasks of their own
    rows, tasks = int(owners["n_all"].sum()), owners.height
    plan.notes.append(
        f"{rows} row{'s' if rows != 1 else ''} without a {column} carry the prompt of one"
        f" {column}'s rows: read as {'its task' if tasks == 1 else f'those {tasks} tasks'}"
    )


def _rekey_words(plan: Plan, ids: pl.Series | None) -> None:
    """What the plan says where the ids were found one per row: whence the task comes and a
    note, for every id (``ids`` None) or those ``ids``."""
    assert plan.by_prompt is not None
    column = plan.by_prompt[1]
    if ids is None:  # every id
        plan.sources["task_id"] = f"hash of prompt text ({column} is one per row)"
        plan.notes.append(
            f"{column} holds one id per row while prompts repeat: tasks are keyed by the prompt"
        )
        return
    plan.sources["task_id"] = (
        f"{plan.sources['task_id']}; a hash of prompt text where {column} is one per row"
    )
    plan.notes.append(
        f"{column} holds one id per row on {ids.len()} rows whose prompts repeat: those"
        " rows are keyed by the prompt, the other tasks by their id"
    )


def _names_a_model(part: _Part) -> bool:
    """Whether any row of the file names a model: a model field the rows carry whose every
    value names none (blank, ``None``, a served-model name such as ``default``) names none,
    as a field they do not carry."""
    if part.plan.sources.get("model", "").startswith("not recorded"):
        return False
    if part.writers is None:
        return True
    return bool(part.writers["model"].drop_nulls().len())


def _grade_disagrees(part: _Part, threshold: float) -> str | None:
    """Where the reward read (not named by ``--map``) grades both ways, a grade beside it that
    disagrees with the pass rule on it (:func:`~whilecli.io.locate.grade_disagrees`:
    ``correct`` beside a ``score`` read as the reward, ``accuracy_reward`` beside a summed
    reward): which is the grade the rows do not say. None: none disagrees."""
    lo, hi = part.stats["lo"], part.stats["hi"]
    if part.plan.passed is not None or part.plan.reward_given or part.disagree is None:
        return None
    if lo is None or hi is None or float(lo) == float(hi):  # one value: _grade_beside's
        return None
    field = part.plan.fields.get("reward", "reward")
    found = part.disagree(field, threshold)
    if found is None:
        return None
    column, apart, compared = found
    return f"{column} disagrees with the pass on {field} on {apart} of {compared} rows sampled"


def _grade_beside(part: _Part) -> str | None:
    """Where the reward read (not named by ``--map``) holds one value on every graded row, a
    binary-looking column beside it (:func:`~whilecli.io.locate.binary_columns_sample`) that
    holds both values, or a text column whose name says grade and whose words do
    (:func:`~whilecli.io.locate.grade_beside_sample`: ``is_correct (412 of 800 rows at 1)``;
    of the ``rows sampled`` in a JSON Lines file): the grade a placeholder reward may stand
    in for. None: none does."""
    lo, hi, beside = part.stats["lo"], part.stats["hi"], part.beside
    if part.plan.passed is not None or part.plan.reward_given or beside is None:
        return None
    if lo is None or hi is None or float(lo) != float(hi):
        return None
    found = beside(part.plan.fields.get("reward", "reward"))
    if found is None:
        return None
    column, ones, known, unit = found
    return f"{column} ({ones} of {known} {unit} at 1)"


def _cut_at_longest(part: _Part) -> dict[str, Any]:
    """The :class:`~whilecli.io.facts.Facts` of replies piled at the file's longest token
    count (:func:`~whilecli.io.facts.longest_pile`) not read as cut off, where the file
    records no cap and flags no row cut: a cap no field names stacked them there."""
    st = part.stats
    uncut, longest = int(st["f_longest_uncut"] or 0), st["f_longest"]
    if longest is None or st["f_cut"] or st["f_cap"] is not None:
        return {}
    at, below = int(st["f_at_longest"] or 0), int(st["f_below"] or 0)
    if not facts.longest_pile(float(longest), at, below, facts.PILE_TASKS):
        return {}
    # the tasks those rows fall in: read only where the counts alone make a pile
    rows = part.frame.filter(facts.longest_rows(float(longest)))
    tasks = int(rows.select(pl.col("task_id").n_unique()).collect().item())
    if not facts.longest_pile(float(longest), at, below, tasks):
        return {}
    return {
        "cut_at_longest": uncut,
        "cut_at_longest_passes": int(st["f_longest_passes"] or 0),
        "longest_tokens": float(longest),
        "longest_field": part.plan.reply_tokens_field,
        "first_cut_at_longest": _place(part.source, st["f_first_longest"]),
    }


def _counted(found: tuple[str, int, int] | None, unit: str) -> tuple[str, int, int, str] | None:
    """A column beside the reward (:func:`~whilecli.io.locate.grade_beside_sample`) with
    the rows its counts come from."""
    return None if found is None else (*found, unit)


def _coarse_ids(part: _Part) -> tuple[str, int, int, int] | None:
    """The column that parts the file's ids into groups of draws, with (ids, groups, rows)
    (:func:`whilecli.io.subtasks.parts_ids`); None: no such column."""
    if part.plan.subtask is None:
        return None
    parted = subtasks.parts_ids(part.stats)
    return None if parted is None else (part.plan.subtask[0], *parted)


def _facts_of(part: _Part, run: _Pass) -> facts.Facts:
    """One file's facts from its aggregates, refusing what cannot be routed: most replies
    errors, no graded row, one task id carrying two prompts."""
    st, source = part.stats, part.source
    rows, errors, ungraded = int(st["rows"]), int(st["f_errors"]), int(st["f_ungraded"])
    first_error = _place(source, st["f_first_error"])
    if not run.digest:  # one file; a pool's share is held to the pool (:func:`_assembled`)
        facts.refuse_errors(errors, rows, source.name, first_error)
    # a file of harness errors alone (one trial or episode a file) is ungraded by no fault of
    # its rows: in a pool, the pool's share of errors says whether to refuse
    if int(st["f_graded"]) == 0 and not (run.digest and errors == rows):
        field_name = part.plan.fields.get("reward", "reward")
        facts.refuse_ungraded(
            rows,
            source.name,
            field_name,
            **_where(source, st["f_first_ungraded"]),
            spelled=facts.spelled_otherwise(field_name, part.plan.reward_spelled, none_graded=True),
            binary=[c for c in part.binary_hint() if c != field_name],
        )
    table = part.task_table
    drawn = facts.draws_found(table, part.draws) if table is not None else (0, 0, 0)
    compared, repeated, apart = drawn
    again, replies = 0, apart
    if part.draws is not None:  # any reply graded both ways, not only a task's one reply
        again, replies, apart = facts.replies_written(part.draws)
    # a file that records no cut anywhere may be a harness writing false on every row
    disputed = 0 if st["f_cut"] else int(st["f_disputed"] or 0)
    retried, lost = int(st["f_retried"] or 0), int(st["f_retry_lost"] or 0)
    again_samples = int(st["f_sample_again"] or 0)
    return facts.Facts(
        rows=rows,
        counted=rows - errors - retried - lost - (0 if run.missing == "fail" else ungraded),
        cut_unread=unread_of(part.plan.sources.get("truncated", "")),
        retried=retried,
        retry_lost=lost,
        first_retried=_place(source, st["f_first_retried"]) if retried or lost else None,
        attempts_field=part.plan.attempts_field if retried or lost or again_samples else None,
        repeated_samples=again_samples,
        first_repeated_sample=_place(source, st["f_first_sample_again"]) if again_samples else None,
        missing=run.missing,
        ungraded=ungraded,
        first_ungraded=_place(source, st["f_first_ungraded"]) if ungraded else None,
        ungraded_spelled=facts.spelled_otherwise(
            part.plan.fields.get("reward", "reward"), part.plan.reward_spelled
        )
        if ungraded
        else None,
        errors=errors,
        first_error=first_error if errors else None,
        request_errors=int(st["f_request"] or 0),
        unrecorded=0 if run.absent is None else run.absent[1],
        coarse_ids=_coarse_ids(part),
        model_unsure=part.plan.model_unsure,
        prompt_unsure=part.plan.prompt_unsure,
        version_lag=part.plan.version_lag,
        prompt_masked=part.plan.prompt_masked,
        prompt_reordered=part.plan.prompt_reordered,
        greedy_sampled=part.plan.greedy_sampled,
        grade_beside=_grade_beside(part),
        grade_disagrees=_grade_disagrees(part, run.threshold),
        token_cap=float(st["f_cap"]) if st["f_cap"] is not None else None,
        path_model=(path_model(source.path) or settings_model(source))
        if source.path is not None and not _names_a_model(part)
        else None,
        empty=int(st["f_empty"]),
        empty_passes=int(st["f_empty_passes"]),
        first_empty=_place(source, st["f_first_empty"]) if st["f_empty"] else None,
        partial=int(st["partial"] or 0),
        partial_grid=[k for k in facts.MEAN_KS if st[f"grid_k{k}"]] if st["partial"] else None,
        partial_values=int(st["partial_values"] or 0),
        cut_disputed=disputed,
        cut_disputed_passes=int(st["f_disputed_passes"] or 0) if disputed else 0,
        first_cut_disputed=_place(source, st["f_first_disputed"]) if disputed else None,
        **_cut_at_longest(part),
        cut_partial=int(st["f_cut_partial"] or 0),
        first_cut_partial=_place(source, st["f_first_cut_partial"])
        if st["f_cut_partial"]
        else None,
        compared_tasks=compared,
        repeated_tasks=repeated,
        greedy_rows=int(st["f_greedy"] or 0),
        graded_apart=apart,
        apart_replies=replies,
        repeated_rows=again,
        selected=rows if selection(source.name, source.format) else 0,
        selected_by=selection(source.name, source.format),
        coverage={
            "truncated": int(st["f_cov_truncated"]),
            "model": int(st["f_cov_model"]),
            "policy_version": int(st["f_cov_policy_version"]),
            "logprobs": int(st["f_cov_logprobs"] or 0),
            "values": int(st["f_cov_values"] or 0),
        },
    )


def _where(source: Source, at: int | None) -> Where:
    """A row position (:data:`AT`) as an error locates it: a line or a row."""
    if at is None:
        return {}
    place = int(at) & ((1 << AT_BITS) - 1)
    if source.kind == "parquet":
        return {"row": place}
    for ordinal, (lineno, _) in enumerate(iter_lines(source), 1):
        if ordinal == place:
            return source.where(lineno)
    return {}


def _place(source: Source, at: int | None, named: bool = True) -> str | None:
    """A row position (:data:`AT`) as words: ``rows.jsonl line 12``, ``rows.parquet row 3``
    (without the file's name unless ``named``)."""
    if at is None:
        return None
    place = int(at) & ((1 << AT_BITS) - 1)
    name = f"{source.name} " if named else ""
    if source.kind == "parquet":
        return f"{name}row {place}"
    for ordinal, (lineno, _) in enumerate(iter_lines(source), 1):
        if ordinal == place:
            where = source.where(lineno)
            if "line" in where:
                return f"{name}line {where['line']}"
            if "at" in where:
                return f"{name}{where['at']}"
            return f"{name}row {where.get('row')}"
    return source.name


def _refuse_two_prompts(part: _Part, several: facts.IdsWithPrompts) -> None:
    """One task id carrying different prompts in one file: refused, naming two rows. Where
    the prompts differ from draw to draw (:attr:`~whilecli.io.facts.IdsWithPrompts.
    per_draw`), keying by the prompt would leave most rows alone (one-rollout tasks): the
    id is offered, with ``--map``, not the prompt."""
    plan, source, task = part.plan, part.source, several.first
    places = ""
    if part.raw is not None and plan.prompt_key is not None:
        offset = 0 if source.kind == "parquet" else 1
        lf = part.raw.with_row_index(AT, offset=offset)
        if plan.row_filter is not None:
            lf = lf.filter(plan.row_filter.fill_null(False))
        try:
            found = (
                lf.select(pl.col(AT), t=plan.task_id.cast(pl.String), k=plan.prompt_key)
                .filter(pl.col("t") == task)
                .unique(subset="k", keep="first", maintain_order=True)
                .head(2)
                .collect()
            )
            at = [_place(source, int(a), named=False) for a in found[AT]]
            places = " and ".join(p for p in at if p) + "; "
        except pl.exceptions.PolarsError:
            places = ""
    id_field = plan.fields.get("task_id", "task_id")
    field_name = part.source.field(id_field)
    same = ""
    if several.per_draw:
        mean = several.rows / several.prompts
        hint = (
            f" Keyed by the prompt, those rows would be {several.prompts} tasks of"
            f" {mean:.1f} rows on average: if the prompt varies from draw to draw (shuffled"
            f" options, few-shot examples drawn per draw), pass --map task_id={id_field} to"
            " key the draws by their id; if the ids name different tasks (two datasets'),"
            " key by another column"
        )
    else:
        same = ": these are not the same task"
        hint = f" Key tasks by the prompt (--map task_id={plan.prompt_field}) or by another column"
    count = f"{several.first_prompts} prompts in {several.first_rows} rows"
    raise InputError(
        f"task id {task!r} carries different prompts ({places}{count}){same}; {several.ids}"
        f" ids carry several ({several.prompts} prompts in {several.rows} rows).{hint}",
        file=source.name,
        field=field_name,
    )


def _read_jsonl(
    source: Source, mapping: Mapping[str, str], forced: str | None, run: _Pass
) -> _Part | None:
    sample = sample_rows(source, SAMPLE_ROWS)
    if not sample:
        return None
    shape = Shape.from_rows(row for _, row in sample)
    probe: list[str] = []  # top-level keys the sample lacks, looked for past it
    more = len(sample) == SAMPLE_ROWS  # more lines follow: the sample's guard, then late keys
    if more:
        given = [*mapping.values(), *([run.by] if run.by not in (None, "source") else [])]
        paths = unseen_paths(shape, given)
        # a column an option names is looked for now: the plan refuses an option's column
        # the sample lacks, where an optional field's is probed for in the one scan
        asked = any(not shape.has(c) for c in given)
        if not run.search_late and not asked and all(len(p) == 1 for p in paths):
            probe = [p[0] for p in paths]
        else:
            keys = dict.fromkeys(p[-1] for p in paths)
            late = rows_with_keys(source, keys, after=sample[-1][0])
            if late:  # each found row adds the keys looked for, and nothing else
                sample += [(n, keep_paths(row, paths)) for n, row in late]
                shape = Shape.from_rows(row for _, row in sample)
    plan, leaves, absent = _planned(
        shape,
        source,
        None,
        mapping,
        forced,
        sample[0][1],
        run,
        [row for _, row in sample],
        [n for n, _ in sample],
    )
    judge = judges.rule_expr(shape, leaves)
    _rekey(plan, run)
    _choose_subtask(plan, shape, leaves, run)  # before the factors read their columns
    _choose_attempts(plan, shape, leaves, run)
    _choose_factors(plan, shape, leaves, [row for _, row in sample], run)
    _choose_split(plan, shape, leaves, lambda _: [row for _, row in sample])
    schema = leaves.read_schema()
    named = named_values(schema)

    def hint() -> list[str]:
        return binary_columns_sample(sample, plan)

    located_rows: pl.LazyFrame | None = None
    lf: pl.LazyFrame | None = None

    def scan(probe: Sequence[str]) -> tuple[_Scanned | None, pl.LazyFrame | None]:
        """The one streaming pass over the file (:func:`_scan`); each ``probe`` key is read
        as any JSON text, and whether a row carries it counted. None: polars cannot read it."""
        nonlocal lf, located_rows
        try:
            raw = pl.scan_ndjson(source.polars_source(), schema=schema)
            lf = _narrow(raw, plan, judge, keep_pos=False)
            # blank lines are skipped, as iter_lines does
            probed = pl.scan_ndjson(
                source.polars_source(), schema={**schema, **{k: pl.String() for k in probe}}
            )
            located = probed.with_row_index(AT, offset=1)
            narrow = _narrow(
                located, plan, judge, keep_pos=False, at=run.at, probe=probe, named=named
            )
            located_rows = narrow
            return _scan(narrow, run, plan), raw
        except (pl.exceptions.PolarsError, OSError, ValueError):
            return None, None

    probe = [k for k in probe if k not in schema]
    # keys of many names that share endings are looked up by the scan itself, for less than
    # a search of the bytes for each; the others' names are searched first
    polled = [k for k in probe if k in SCANNED_LATE]
    probe = [k for k in probe if k not in SCANNED_LATE]
    # the guard walks the bytes past the sample beside polars' read: lines nested too deep,
    # the probed keys' names (a key no line past the sample spells is in no row there) and
    # how often the read keys' names are written (a key written twice in one row)
    count = KeyCount(named, names=False) if more else None
    guard = _DepthGuard(source, after=sample[-1][0], keys=probe, count=count) if more else None
    try:
        scanned, raw = scan(polled)
    finally:
        spelled = guard.check() if guard is not None else set()
    if scanned is not None and not scanned.stats["bad"]:
        every = plan.explode or plan.row_filter is not None
        _refuse_repeated(source, count, scanned.stats, every)
    probe = [k for k in probe if k in spelled]
    if probe and scanned is not None and not scanned.stats["bad"]:
        scanned, raw = scan(probe)  # whether a row past the sample carries a key it lacks
    probe += polled
    found_late = scanned is not None and any(scanned.stats.get(_probed(k)) for k in probe)
    if probe and (scanned is None or scanned.stats["bad"] or found_late):
        # a row past the sample carries a key it lacks (or the fast read failed): the keys'
        # rows are looked for, and the file read again with the plan they give
        return _read_jsonl(source, mapping, forced, dataclasses.replace(run, search_late=True))
    if scanned is None or scanned.stats["bad"]:
        frame, coerced = _jsonl_by_line(source, plan, judge, schema, run.at)
        locate(frame, plan, source, run.bad())
        lf = frame.drop(POS, AT, MISFIT, strict=False).lazy()
        located_rows = frame.drop(POS).lazy()
        scanned = _scan(located_rows, run, plan)
        raw = coerced.lazy()  # the plan's leaves, as the exact reader coerced them
    if more and scanned.stats.get("json_id"):
        _refuse_late_json_ids(source, plan, after=sample[-1][0])
    assert raw is not None and lf is not None
    part = _part_of(source, plan, lf, scanned, shape, hint, raw)
    part.located, part.absent = located_rows, absent
    part.beside = lambda field: _counted(grade_beside_sample(sample, plan, field), "rows sampled")
    rows = [row for _, row in sample]
    part.disagree = lambda field, cut: grade_disagrees(rows, plan, field, cut)
    return part


def _part_of(
    source: Source,
    plan: Plan,
    frame: pl.LazyFrame,
    scanned: _Scanned,
    shape: Shape,
    hint: Callable[[], list[str]],
    raw: pl.LazyFrame,
) -> _Part:
    """One file's part from what its pass gathered; a row of samples whose list does not
    line up with its grades refused at that row (:mod:`whilecli.io.samples`)."""
    stats = scanned.stats
    if stats.get("misfit") is not None:
        field, what = str(stats["misfit"]).split("\t", 1)
        raise InputError(
            f"field {field!r} holds {what}: a list beside a row's grades holds one value"
            " per sample",
            file=source.name,
            field=field,
            **_where(source, stats.get("misfit_at")),
        )
    if plan.split is not None:  # every reading of the raw rows reads one sample a row
        raw = plan.split.rows(raw)
    scan = judges.scan_of(int(stats["rows"]), stats, judges.named(shape, plan.sources))
    part = _Part(source, plan, frame, stats, scan, hint, scanned.tables, scanned.writers)
    part.task_table = scanned.task_table
    part.draws = scanned.draws
    part.task_envs = scanned.task_envs
    part.raw = raw
    part.shape, part.sliced, part.cells = shape, scanned.sliced, scanned.cells
    part.factor_cells = scanned.factor_cells
    return part


def _slice_part(part: _Part, value: str | None, missing: str, pooled: bool = False) -> _Part | None:
    """The rows of one value of the ``--by`` column in a file read once with ``by``
    (:class:`_Sliced`), as a file of those rows alone reads: its own stats, writers, judge
    counts, per-task tables and consumer aggregate, its ids keyed by the prompt where its own
    are one per row, and its facts (:func:`_facts_of`, which refuses what those rows alone
    cannot route). None: the file holds no row of the value."""
    assert part.sliced is not None and part.shape is not None
    if value not in part.sliced.firsts():
        return None
    scanned = part.sliced.one(value)
    plan = dataclasses.replace(
        part.plan, sources=dict(part.plan.sources), notes=list(part.plan.notes)
    )
    if plan.slice is not None:  # the rows a refusal names are the value's
        within = _within(plan.slice, value)
        old = plan.row_filter
        plan.row_filter = within if old is None else old.fill_null(False) & within
    rekeyed = part.rekeyed.get(value)
    if rekeyed is not None:
        _rekey_words(plan, rekeyed[0])
    rows = _within(pl.col(SLICE), value)
    frame = part.frame.filter(rows)
    assert part.raw is not None
    one = _part_of(part.source, plan, frame, scanned, part.shape, part.binary_hint, part.raw)
    one.sliced = None
    one.absent, one.beside = part.absent, part.beside
    one.located = None if part.located is None else part.located.filter(rows)
    one.facts = _facts_of(one, _Pass(threshold=1.0, missing=missing, digest=pooled))
    if rekeyed is not None:
        assert plan.by_prompt is not None
        _set_rekeyed(one.facts, plan.by_prompt[1], rekeyed[1])
    return one


def coerced_lines(
    source: Source, leaves: Leaves, schema: Mapping[str, DType]
) -> tuple[pl.DataFrame, list[int]]:
    """Every line of a JSONL source parsed by Python and coerced to ``schema``, with the line
    numbers: the slow, exact reading, whose first bad value is named with its line (or row)."""
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    for lineno, line in iter_lines(source):
        row = parse_line(source, lineno, line)
        try:
            rows.append(leaves.coerce_row(row, schema))
        except BadValue as err:
            raise InputError(
                err.what, file=source.name, field=err.path, **source.where(lineno)
            ) from None
        lines.append(lineno)
    frame = pl.DataFrame(rows, schema=schema) if rows else pl.DataFrame(schema=schema)
    return frame, lines


def _jsonl_by_line(
    source: Source, plan: Plan, judge: pl.Expr, schema: Mapping[str, DType], at: int
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The slow, exact reader: every line parsed by Python, the first bad one named. Returns
    the narrow frame and the coerced leaves it was read from (the reply and pooling checks
    read those, as they read the fast scan)."""
    raw, lines = coerced_lines(source, plan.leaves, schema)
    located = raw.with_columns(pl.Series(POS, lines, dtype=pl.Int64)).with_row_index(AT, offset=1)
    return _narrow(located.lazy(), plan, judge, keep_pos=True, at=at).collect(), raw


#: The most decimal digits a column polars reads holds (a Parquet decimal256 may hold 76).
DECIMAL_DIGITS = 38


def refuse_wide_decimals(parquet: Any, name: str) -> None:
    """Refuse, naming it, a Parquet column of decimals past :data:`DECIMAL_DIGITS` digits
    (pyarrow's decimal256): polars fails the whole read without naming the column. Read
    from the file's schema, on the error's path only."""
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(parquet)
    except (OSError, ValueError, TypeError):
        return
    for column in schema:
        precision = getattr(column.type, "precision", None)
        if isinstance(precision, int) and precision > DECIMAL_DIGITS:
            raise InputError(
                f"is a column of {column.type}, past the {DECIMAL_DIGITS} digits a decimal"
                " is read with: write it as float64 (a reward) or text (an id)",
                file=name,
                field=column.name,
            )


def _read_parquet(
    source: Source, mapping: Mapping[str, str], forced: str | None, run: _Pass
) -> _Part | None:
    try:
        lf = pl.scan_parquet(source.polars_source())
        schema = lf.collect_schema()
    except POLARS_FAILURES + (OSError,) as err:
        raise InputError(f"not a readable Parquet file: {_short(err)}", file=source.name) from None
    if set(schema.names()) >= SUMMARY_COLUMNS:
        raise InputError(
            "a summary (per-task counts written by whilecli summarize), not rows: route, check,"
            " diff and size read summaries; this command needs the rows it was made from",
            file=source.name,
        )
    try:
        return _read_frame(source, lf, schema, mapping, forced, run)
    except POLARS_FAILURES as err:
        refuse_bytes_not_text(lf, schema, source.name)
        refuse_wide_decimals(source.polars_source(), source.name)
        raise InputError(f"cannot read: {_short(err)}", file=source.name) from None


def _json_looking(task: pl.Expr) -> pl.Expr:
    """Task ids that begin as a JSON list or object does (``[``, ``{``): polars reads a list
    or an object in a text column as its JSON text (:func:`_refuse_late_json_ids`)."""
    return (task.str.starts_with("[") | task.str.starts_with("{")).fill_null(False)


def _refuse_late_json_ids(source: Source, plan: Plan, after: int) -> None:
    """Refuse, at its line, the first task id past the sample (line ``after``) that is a JSON
    list or object, as the sample's rule refuses one in the sample
    (:func:`whilecli.io.plan._refuse_mixed`); polars read it as its JSON text, a task of its
    own. A text id that only looks like one (``"[a]"``) is left as it is. The lines past the
    sample are parsed only when a grouped id looks like JSON."""
    field = plan.fields.get("task_id")
    if field is None or plan.sources.get("task_id") not in (field, f"{field} (--map)"):
        return  # a hash of the prompt or a pair of fields: never JSON
    path = split_path(field)
    if any("[" in key for key in path):
        return
    lines = iter_lines(source)
    try:
        for lineno, line in lines:
            if lineno <= after:
                continue
            value: Any = parse_line(source, lineno, line)
            for key in path:
                value = value.get(key) if isinstance(value, dict) else None
            if isinstance(value, (list, dict)):
                raise InputError(
                    f"holds {kind_words(value)} here and plain values on other rows: a task id"
                    " is a string or a number",
                    file=source.name,
                    field=field,
                    **source.where(lineno),
                )
    finally:
        lines.close()  # type: ignore[attr-defined]


def _json_ids(frame: pl.LazyFrame) -> bool:
    """Whether a task id read as text holds a JSON list or object (polars reads a list in a
    text column as its JSON): the usual read refuses it at its line."""
    first = pl.col("task_id").str.slice(0, 1)
    return bool(frame.select(first.is_in(["[", "{"]).any()).collect().item())


def refuse_deep(
    source: Source, after: int = 0, keys: Sequence[str] = (), count: KeyCount | None = None
) -> set[str]:
    """Refuse the first line past ``after`` nested deeper than the one JSON parser takes
    (:data:`whilecli.jsonout.MAX_DEPTH`), at its line, as the sample's lines are: polars'
    fast read has no such guard. Only a line with more opening brackets than the limit can
    be; each such line is walked by :func:`whilecli.jsonout.deep_line`. The same walk looks
    for ``keys`` past ``after`` (:class:`~whilecli.io.sources.KeySearch`): returns those the
    lines may hold, a superset of those a JSON parser reads there; and ``count`` counts the
    names of keys in every line (:class:`~whilecli.io.sources.KeyCount`)."""
    search = KeySearch(keys, after) if keys else None
    for lineno, line in bracketed_lines(source, jsonout.MAX_DEPTH, after, search, count):
        if jsonout.deep_line(line) is not None:
            raise InputError(str(jsonout.TooDeep(None)), file=source.name, **source.where(lineno))
    return search.found if search is not None else set()


class _DepthGuard:
    """:func:`refuse_deep` in a thread beside polars' read of the same file (which runs
    without the interpreter's lock), so the guard costs little time; :meth:`check` waits for
    it, raises what it found, and returns the keys it found (``keys``)."""

    def __init__(
        self,
        source: Source,
        after: int,
        keys: Sequence[str] = (),
        count: KeyCount | None = None,
    ) -> None:
        import threading

        self.error: BaseException | None = None
        self.found: set[str] = set()
        self.thread = threading.Thread(
            target=self._run, args=(source, after, tuple(keys), count), daemon=True
        )
        self.thread.start()

    def _run(self, source: Source, after: int, keys: Sequence[str], count: KeyCount | None) -> None:
        try:
            self.found = refuse_deep(source, after, keys, count)
        except BaseException as err:  # raised in the reading thread by check()
            self.error = err

    def check(self) -> set[str]:
        self.thread.join()
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        return self.found


def _past_exact_floats(frame: pl.DataFrame) -> bool:
    """Whether a top-level float column holds a value of 2^53 or more in size: polars reads an
    integer past 2^63 beside a float as a float, which keeps 53 bits (two task ids 2^63 and
    2^63 + 1 would be one task). The usual read takes such a column as text, digits kept."""
    floats = [name for name, dtype in frame.schema.items() if dtype == pl.Float64]
    if not floats:
        return False
    big = pl.any_horizontal((pl.col(name).abs() >= 2.0**53).any() for name in floats)
    return bool(frame.select(big.fill_null(False)).item())


class _NotWhole(Exception):
    """A JSON Lines file the whole read cannot take: read the usual way, which names the line."""


def _read_jsonl_whole(
    source: Source, mapping: Mapping[str, str], forced: str | None, run: _Pass
) -> _Part | None:
    """A JSON Lines file read whole by polars (every column, once), planned like a Parquet
    file over the columns read; what that read cannot take (a bad value, a line that is not
    an object, a value polars types otherwise than the plan reads it) goes the usual way."""
    refuse_repeated_keys(source, TYPE_ROWS)  # polars would take the first value in silence
    guard = _DepthGuard(source, after=0)
    try:
        try:
            frame = pl.read_ndjson(
                source.polars_source(), schema=_typed(source), infer_schema_length=None
            )
        finally:
            guard.check()  # a line nested too deep is refused first, read or not
        if frame.height == 0 or _past_exact_floats(frame):
            raise _NotWhole
        if frame.height > TYPE_ROWS:  # the rows past those parsed by Python
            named = named_values(frame.schema)
            read = frame.select(expr.alias(k) for k, expr in named.items()).sum()
            stats = {_named(k): v for k, v in read.row(0, named=True).items()}
            _refuse_repeated(source, count_keys(source, named, names=False), stats, every=False)
        part = _read_frame(source, frame.lazy(), frame.schema, mapping, forced, run)
    except _WHOLE_ERRORS:
        return _read_jsonl(source, mapping, forced, run)
    if part is not None:
        keep = run.keep or Keep()
        part.inputs = frame.select(_tops(frame.columns, keep))
    return part


#: What the whole read may raise on a file the usual reader must look at line by line
#: (a Rust panic inside polars surfaces as ``PanicException``, a ``BaseException``).
_FAST_READ_ERRORS: tuple[type[BaseException], ...] = (
    *POLARS_FAILURES,
    OSError,
    ValueError,
    BadValue,
)
_WHOLE_ERRORS: tuple[type[BaseException], ...] = (_NotWhole, *_FAST_READ_ERRORS)
#: Rows whose values type a JSON Lines file read whole (per-token lists make typing every
#: row cost about as much as reading it).
TYPE_ROWS = 16


def _typed(source: Source) -> pl.Schema | None:
    """The columns of a JSON Lines file, typed from its first :data:`TYPE_ROWS` rows; None
    (type every row) when a column is null throughout them, or when a later row carries a
    key of the late-field alias tables those rows lack. A later value that does not fit its
    column fails the read, and the file goes the usual way."""
    lines = iter_lines(source)
    first: list[bytes] = []
    try:
        for _, line in lines:
            first.append(line)
            if len(first) > TYPE_ROWS:
                break
    finally:
        lines.close()  # type: ignore[attr-defined]
    if len(first) <= TYPE_ROWS:
        return None  # a short file: typed whole
    head = pl.read_ndjson(io.BytesIO(b"\n".join(first[:TYPE_ROWS])), infer_schema_length=None)
    schema = head.collect_schema()
    if any(_has_null(dtype) for dtype in schema.values()):
        return None
    paths = unseen_paths(Shape.from_schema(schema))
    if paths and rows_with_keys(source, dict.fromkeys(p[-1] for p in paths), TYPE_ROWS, 1):
        return None
    return schema


def _has_null(dtype: Any) -> bool:
    if dtype == pl.Null:
        return True
    if isinstance(dtype, (pl.List, pl.Array)):
        return _has_null(dtype.inner)
    if isinstance(dtype, pl.Struct):
        return any(_has_null(f.dtype) for f in dtype.fields)
    return False


def _read_frame(
    source: Source,
    lf: pl.LazyFrame,
    schema: pl.Schema,
    mapping: Mapping[str, str],
    forced: str | None,
    run: _Pass,
) -> _Part | None:
    """One source already scanned as a frame (a Parquet file, or a JSON Lines file read
    whole): its plan from the frame's columns, its one streaming pass, its first bad row
    named (a Parquet row; a JSON Lines file read whole goes the usual way instead)."""
    whole = source.kind != "parquet"
    shape = Shape.from_schema(schema)
    first: dict[str, Any] = {}
    wanted = [c for c in ("metrics", "metric", "filter") if c in schema]
    metric_rows: list[dict[str, Any]] = []
    if wanted:  # which metric is 0/1 is read on the first rows, not on the first alone
        metric_rows = lf.select(wanted).head(SAMPLE_ROWS).collect().to_dicts()
        first = metric_rows[0] if metric_rows else {}
    try:
        ids = _head_rows(lf, shape, schema)
        plan, leaves, absent = _planned(
            shape,
            source,
            schema,
            mapping,
            forced,
            first,
            run,
            id_rows=ids,
            metric_rows=metric_rows,
        )
        _rekey(plan, run)
        keys = factors.possible(shape, _used(plan, leaves))
        columns = [pl.col(key) if key in schema else _column_at(key) for key in keys]
        head = lf.select(columns).head(SAMPLE_ROWS).collect().to_dicts() if keys else []
        _choose_subtask(plan, shape, leaves, run)  # before the factors read their columns
        _choose_attempts(plan, shape, leaves, run)
        _choose_factors(plan, shape, leaves, head, run)
        _choose_split(
            plan,
            shape,
            leaves,
            lambda keys: (
                lf.select(_column_at(k) for k in keys).head(SAMPLE_ROWS).collect().to_dicts()
            ),
        )
    except BadValue as err:
        if whole:
            raise _NotWhole from None
        top = err.path.split(".")[0].split("[")[0]
        at = first_row(lf, pl.col(top).is_not_null())
        raise InputError(err.what, file=source.name, row=at, field=err.path) from None
    judge = judges.rule_expr(shape, leaves)
    _encoded_objects(lf, schema, plan, shape)
    # a JSON Lines row's place is its ordinal among the lines (from 1), as the usual read's
    located_rows = _narrow(
        lf.with_row_index(AT, offset=1 if whole else 0), plan, judge, False, run.at
    )
    try:
        scanned = _scan(located_rows, run, plan)
    except POLARS_FAILURES:
        if not whole:
            _refuse_words(lf if plan.split is None else plan.split.rows(lf), leaves, source)
        raise
    if whole and (scanned.stats["bad"] or _json_ids(located_rows)):
        raise _NotWhole
    if scanned.stats["bad"]:
        located = _narrow(lf.with_row_index(POS), plan, judge, keep_pos=True)
        bad = run.bad()
        locate(located.filter(bad).head(1).collect(), plan, source, bad)

    def hint() -> list[str]:
        return binary_columns_parquet(lf, schema, plan)

    frame = _narrow(lf, plan, judge, keep_pos=False)
    part = _part_of(source, plan, frame, scanned, shape, hint, lf)
    part.located, part.absent = located_rows, absent
    part.beside = lambda field: _counted(grade_beside_frame(lf, schema, plan, field), "rows")
    part.disagree = lambda field, cut: grade_disagrees_frame(
        lf, schema, plan, field, cut, DISAGREE_SAMPLE
    )
    return part


#: The rows of a frame (a Parquet file) a grade beside the reward is compared on.
DISAGREE_SAMPLE = 1000


#: The rows of a frame (a Parquet file) whose text columns are looked at for JSON objects
#: written as text (:meth:`~whilecli.io.shape.Shape.add_text`), as a JSON Lines sample's are.
ENCODED_ROWS = 16


def _encoded_objects(lf: pl.LazyFrame, schema: pl.Schema, plan: Plan, shape: Shape) -> None:
    """The keys of JSON objects a frame's first rows write as text in its text columns
    (a ``metrics`` string of reward-function scores), added to ``shape`` where the judge
    detector looks for names; the columns the plan reads as its fields are not looked at."""
    read = set(plan.fields.values())
    texts = [c for c, d in schema.items() if d == pl.String and c not in read]
    if not texts:
        return
    objects = [
        pl.col(c).filter(pl.col(c).str.strip_chars_start().str.starts_with("{")).implode()
        for c in texts
    ]
    try:
        # one row of lists: only the texts that open an object leave the scan
        head = lf.head(ENCODED_ROWS).select(objects).collect()
    except POLARS_FAILURES:
        return
    for name in texts:
        node = shape.children.get(name)
        if node is None:
            continue
        for text in head.get_column(name).item():
            node.add_text(text)


def _refuse_words(lf: pl.LazyFrame, leaves: Leaves, source: Source) -> None:
    """Name the first row of a Parquet file whose grade or flag is text that says nothing
    (``"maybe"``): the scan failed on it (:meth:`~whilecli.io.shape.Leaves.grade`)."""
    for dotted, bad in leaves.bad_words():
        top = dotted.split(".")[0]
        found = (
            lf.with_row_index(POS).filter(bad).select(pl.col(POS), pl.col(top)).head(1).collect()
        )
        if found.height:
            row, value = found.row(0)
            for key in dotted.split(".")[1:]:
                value = value.get(key) if isinstance(value, dict) else None
            kind = leaves.words[tuple(dotted.split("."))]
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                said = f"is {value:g}, not true/false (0 or 1)"
                raise InputError(said, file=source.name, row=int(row), field=dotted)
            try:
                (words.grade_text if kind == "grade" else words.flag_text)(str(value))
            except ValueError as err:
                raise InputError(str(err), file=source.name, row=int(row), field=dotted) from None


#: How many of a frame's first rows :func:`_head_rows` reads where they hold token lists.
LIST_HEAD_ROWS = 100


def _head_rows(lf: pl.LazyFrame, shape: Shape, schema: pl.Schema) -> list[dict[str, Any]]:
    """A frame's first rows, as a JSON Lines file's sample holds them, for what the plan reads
    from its sample: the task-id alias columns (and columns named for a prompt's id,
    :func:`~whilecli.io.aliases.names_a_prompts_id`) where it carries two or more (which of them
    keys the tasks), the prompt fields where it carries no id (which of them key the tasks,
    and which part of a chat prompt: plan._repeating_part), the token counts and caps (whether a
    count runs past its cap), and the first log-prob list (whether it holds log-probs). Only
    those columns (and the sampling settings: whether it records greedy decoding),
    :data:`SAMPLE_ROWS` rows (:data:`LIST_HEAD_ROWS` beside a list); none
    where it carries neither."""
    ids = [a for a in TASK_ALIASES if shape.has(a)]
    if ids:  # a prompt's id under a name no alias lists, beside one id per row
        ids += [c for c in schema if c not in ids and names_a_prompts_id(c)]
    tops = list(dict.fromkeys(split_path(a)[0] for a in ids)) if len(ids) >= 2 else []
    prompts = [a for a in PROMPT_ALIASES if shape.has(a)]
    if not ids and prompts:  # which prompt fields (or parts) key the tasks (plan._prompt_keys)
        tops += [split_path(a)[0] for a in prompts]
    # whether a token count runs past its cap (plan._count_at_cap): the cap is another's
    counts = [a for a in (*TOKEN_COUNT_ALIASES, *TOKEN_CAP_ALIASES) if shape.has(a)]
    tops += [split_path(a)[0] for a in counts]
    # whether the rows record greedy decoding (plan._greedy_sampled)
    tops += [split_path(a)[0] for a in decoding.aliases() if shape.has(a)]
    # whether a column named as the reward in another case grades otherwise (plan._twins)
    graded = {a.casefold() for a in REWARD_ALIASES if "." not in a}
    cased = [c for c in schema if c.casefold() in graded]
    tops += cased if len(cased) > len({c.casefold() for c in cased}) else []
    lp = next((a for a in LOGPROB_ALIASES if "list" in shape.kinds_at(a)), None)
    if lp is not None:
        tops.append(split_path(lp)[0])
    tops = [t for t in dict.fromkeys(tops) if t in schema]
    if not tops:
        return []
    rows = SAMPLE_ROWS if lp is None else LIST_HEAD_ROWS
    return lf.select(tops).head(rows).collect().to_dicts()


def _column_at(dotted: str) -> pl.Expr:
    """A frame's column at a dotted path into its struct columns, named by the path."""
    head, *rest = split_path(dotted)
    column = pl.col(head)
    for step in rest:
        column = column.struct.field(step)
    return column.alias(dotted)


def _used(plan: Plan, leaves: Leaves) -> set[str]:
    """The dotted paths the plan reads (each leaf read, each field an error cites); a sampling
    setting read only as evidence of greedy decoding (:data:`~whilecli.io.factors.SETTINGS`)
    is none."""
    read = {".".join(path) for path in leaves.paths if path} - factors.SETTINGS
    return read | {".".join(split_path(name)) for name in plan.fields.values()}


def _choose_subtask(plan: Plan, shape: Shape, leaves: Leaves, run: _Pass) -> None:
    """Set :attr:`Plan.subtask` where the rows carry no prompt to check their ids against
    (:mod:`whilecli.io.subtasks`): none where the rows are read by a column or a row holds
    several rollouts."""
    if run.by is not None or plan.explode or plan.split is not None:
        return
    if plan.prompt_key is not None or plan.by_prompt is not None:
        return
    key = subtasks.candidate(shape, _used(plan, leaves))
    if key is not None:
        text = leaves.text(key)
        plan.subtask = (key, pl.when(text.str.strip_chars() == "").then(None).otherwise(text))


def _choose_attempts(plan: Plan, shape: Shape, leaves: Leaves, run: _Pass) -> None:
    """Set :attr:`Plan.attempts` where the rows name each draw's sample index
    (:mod:`whilecli.io.attempts`): the earlier attempts of a draw, and attempts whose retry
    is missing, read as left out of every rate. None where the rows are read by a column, a
    row holds several rollouts, or rows are turns of an episode (its turns share the
    draw's index)."""
    if run.by is not None or plan.explode or plan.split is not None:
        return
    if plan.episode is not None or plan.turn is not None:
        return
    found = attempts.found(
        shape,
        leaves.text,
        lambda name: leaves.expr(name, pl.Float64),
        lambda name: leaves.expr(name, pl.Boolean),
    )
    if found is None:
        return
    plan.attempts = (attempts.columns(plan.task_id, found), found.rank is not None)
    plan.attempts_field = found.words()


def _choose_factors(
    plan: Plan, shape: Shape, leaves: Leaves, rows: Sequence[Mapping[str, object]], run: _Pass
) -> None:
    """Set :attr:`Plan.factors` from the sampled ``rows``: none where the rows are read by a
    column (each value's rows apart) or a row holds several rollouts."""
    if run.by is not None or plan.explode or plan.split is not None:
        return
    keys = factors.candidates(shape, rows, _used(plan, leaves))
    texts = ((key, leaves.text(key)) for key in keys)
    plan.factors = tuple(
        (key, pl.when(text.str.strip_chars() == "").then(None).otherwise(text))
        for key, text in texts
    )


def _choose_split(
    plan: Plan, shape: Shape, leaves: Leaves, head: Callable[[list[str]], list[dict[str, Any]]]
) -> None:
    """Set :attr:`Plan.split_column`: the column that names each row's split
    (:func:`whilecli.io.splits.column`) among those the plan reads for no field (a factor and
    the ``--by`` column read none, and a dataset column whose values are splits' words names a
    split: ``subset: test``), from the first rows ``head`` gives of those columns."""
    unread = {key for key, _ in plan.factors} | {plan.slice_field, plan.fields.get("env")}
    used = _used(plan, leaves) - unread
    candidates = [c for c in splits.paths(shape) if c not in used]
    if not candidates:
        return
    try:
        column = splits.column(head(candidates), candidates)
    except POLARS_FAILURES:
        return
    if column is not None:
        plan.split_column = (column, leaves.text(column).str.strip_chars())


def _planned(
    shape: Shape,
    source: Source,
    schema: pl.Schema | None,
    mapping: Mapping[str, str],
    forced: str | None,
    first: Mapping[str, object] | None,
    run: _Pass,
    sample: Sequence[Mapping[str, object]] = (),
    sample_lines: Sequence[int] = (),
    id_rows: Sequence[Mapping[str, object]] = (),
    metric_rows: Sequence[Mapping[str, object]] = (),
) -> tuple[Plan, Leaves, set[str]]:
    plan, leaves, absent = plan_of(
        shape,
        source,
        schema,
        mapping,
        forced,
        first,
        run.keep,
        sample,
        sample_lines,
        run.by,
        id_rows,
        metric_rows,
    )
    if "task_id" in absent:  # no id on any row: null, as a row without one reads
        run.no_ids = True
    return plan, leaves, absent


def plan_of(
    shape: Shape,
    source: Source,
    schema: pl.Schema | None,
    mapping: Mapping[str, str],
    forced: str | None,
    first: Mapping[str, object] | None,
    keep: Keep | None = None,
    sample: Sequence[Mapping[str, object]] = (),
    sample_lines: Sequence[int] = (),
    by: str | None = None,
    id_rows: Sequence[Mapping[str, object]] = (),
    metric_rows: Sequence[Mapping[str, object]] = (),
) -> tuple[Plan, Leaves, set[str]]:
    """:func:`build_plan`; under ``keep=``, a field of ``optional`` the rows lack is read as
    null (returned among the absent fields), and the reward is never a column of
    ``exclude_reward`` (the next reward alias is taken)."""
    keep = keep or Keep()
    mapping = dict(mapping)
    absent: set[str] = set()
    chosen: set[str] = set()  # fields mapped here, not by the user
    while True:
        leaves = Leaves(schema)
        try:
            plan = build_plan(
                shape,
                source,
                leaves,
                mapping,
                forced,
                first,
                sample,
                by,
                sample_lines,
                id_rows,
                metric_rows,
            )
        except InputError as err:
            name = err.field
            located = err.line is not None or err.row is not None or err.at is not None
            if name in keep.optional and name not in mapping and not located:
                shape.children.setdefault(ABSENT, Shape(kinds={"null"}))
                mapping[name] = ABSENT
                absent.add(name)
                chosen.add(name)
                continue
            raise
        if plan.fields.get("reward") in keep.exclude_reward and "reward" not in mapping:
            mapping["reward"] = _next_reward(shape, keep, source)
            if mapping["reward"] == ABSENT:
                absent.add("reward")
            chosen.add("reward")
            continue
        break
    for name in chosen:
        plan.sources[name] = plan.sources[name].removesuffix(" (--map)")
    for name in absent:  # read as one task, every row graded; the consumer sees null
        plan.sources[name] = "not in the rows"
        plan.fields.pop(name, None)
    if "task_id" in absent:  # no id on any row: null, as a row without one reads
        plan.task_id, plan.by_prompt = pl.lit(None, dtype=pl.String), None
    if "reward" in absent:
        plan.reward = pl.lit(0.0)
    return plan, leaves, absent


def _next_reward(shape: Shape, keep: Keep, source: Source) -> str:
    """The first reward alias the rows carry outside ``exclude_reward``."""
    excluded = keep.exclude_reward
    for alias in REWARD_ALIASES:
        if alias not in excluded and shape.has(alias):
            return alias
    if "reward" in keep.optional:
        shape.children.setdefault(ABSENT, Shape(kinds={"null"}))
        return ABSENT
    looked = ", ".join(a for a in REWARD_ALIASES if a not in excluded)
    raise InputError(
        f"no reward column besides {', '.join(repr(e) for e in excluded)} (looked for {looked});"
        " pass --map reward=COLUMN",
        file=source.name,
        field="reward",
    )


def _short(err: BaseException) -> str:
    return " ".join(str(err).split())[:200]
