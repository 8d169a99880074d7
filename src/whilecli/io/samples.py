"""A row of k samples read as k rows: one rule for every per-sample list on the row.

A row holding a prompt's k samples beside its k grades (an ``n=8`` request's ``choices``, a
best-of-n dump's ``responses``, OpenR1-Math's ``generations``) is k rollouts (DESIGN section
1: one row per rollout). :func:`split_of` finds every list on the row that holds one value per
sample (:data:`~whilecli.io.aliases.SAMPLE_HOLDERS`, :data:`~whilecli.io.aliases.SAMPLE_PLURALS`
and the lists under a per-sample field's own name); :meth:`Split.rows` splits them with the
grades, element by element, and each element is then read as the one-row-per-draw reader
reads that field: a list of finish reasons as ``finish_reason``, a list of errors as
``error``, a list of replies as ``completion``, and each sample's object of a ``choices``
list where a one-sample response keeps it (``choices[0]``). A scalar beside the lists applies
to every sample. A list is per sample only where it is one: an empty list (or null) records
nothing for that row's samples; a list whose length differs from the grades' on every row
that records it (a log of retried errors, answer options, a problem's test outputs) is the
row's, left unread as a per-sample field; a list of objects is the samples' only where its
objects look like replies (:func:`holds_replies`). Only a list that is per sample by its
name and fits the grades on some rows but not on others is refused at its row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

import polars as pl

from whilecli.io.aliases import (
    COMPLETION_ALIASES,
    CUT_FLAGS,
    DONE_FLAGS,
    REASON_NAMES,
    REWARD_ALIASES,
    SAMPLE_HOLDERS,
    SAMPLE_LIST_ALIASES,
    SAMPLE_PLURALS,
    SAMPLE_REPLY_LISTS,
    TOKEN_COUNTS,
)
from whilecli.io.shape import SCALAR, Shape, split_path

#: Fields read once per sample where the row holds a list of them under their own name: the
#: truncation flags, finish / stop reasons, errors, token counts and replies a
#: one-row-per-draw row records (``truncated: [false, true, ...]``).
SAMPLE_FIELDS: frozenset[str] = frozenset(
    {"truncated", "is_truncated", *CUT_FLAGS, *DONE_FLAGS, *REASON_NAMES, "stop_type"}
    | {"error", "exception", *TOKEN_COUNTS, *COMPLETION_ALIASES}
)
#: The field each element of a list of replies (:data:`SAMPLE_REPLY_LISTS`) is read as.
REPLY = "completion"
#: The column :meth:`Split.rows` adds: on a row whose per-sample lists do not line up with its
#: grades, the first such list's name and what it holds (``NAME\tWORDS``); else null.
MISFIT = "__split_misfit"
#: Lists that may hold one value per sample or something else of the row (a client's log of
#: the errors it retried past, a problem's expected test outputs, generated code's
#: variants): where their lengths disagree with the grades' they are left unread, never
#: refused.
AMBIGUOUS: frozenset[str] = frozenset(
    {"errors", "exceptions", "error", "exception"}
    | (set(SAMPLE_REPLY_LISTS) - set(SAMPLE_LIST_ALIASES))
)
#: Reply lists named for a model's samples: of several lists of texts on a row, the replies.
REPLY_NAMED: tuple[str, ...] = ("responses", "completions", "generations")
#: Keys that mark an object as a sample of a response (OpenAI's ``index`` and
#: ``finish_reason``, a reply's ``message``), whatever else it holds.
SAMPLE_MARKS: frozenset[str] = frozenset(
    {"index", "message", "logprobs", *REASON_NAMES, "stop_type", *REWARD_ALIASES}
)
#: Keys of a reply's text: an object holding one is a sample unless it also holds a key of
#: :data:`NOT_SAMPLE_KEYS`.
REPLY_KEYS: frozenset[str] = frozenset({"text", "content", "completion", "response", "generation"})
#: Keys of objects that hold text but are not a model's samples: multiple-choice options
#: (``{label, text}``), retrieved passages (``{title, text}``), expected test cases
#: (``{input, output}``).
NOT_SAMPLE_KEYS: frozenset[str] = frozenset(
    {"label", "option", "key", "letter", "title", "input", "expected", "expected_output"}
)


@dataclass(frozen=True)
class Split:
    """The lists a row of k samples is split by (:func:`split_of`)."""

    grade: str  # the file's column holding the grades
    #: File column → the field each element is read as (``finish_reasons`` → ``finish_reason``).
    names: Mapping[str, str]
    #: File columns of per-sample objects: each element kept as a list of one, so that
    #: ``choices[0].finish_reason`` reads that sample's.
    wrapped: tuple[str, ...]

    def columns(self) -> list[str]:
        """Every file column split, the grades' first."""
        rest = [c for c in (*self.names, *self.wrapped) if c != self.grade]
        return [self.grade, *rest]

    def rows(self, lf: pl.LazyFrame) -> pl.LazyFrame:
        """``lf`` with each row split into one row per sample: every list of :meth:`columns`
        the frame holds split element by element (a row that lacks one, or holds it empty,
        records it for none of its samples), the objects re-wrapped, the lists renamed to
        their fields. A list that is not per sample (:meth:`_per_sample`) records nothing for
        any sample. A row whose per-sample list holds another count than its grades is kept
        whole and named in :data:`MISFIT`."""
        schema = lf.collect_schema()
        cols = [c for c in self.columns() if c in schema]
        if self.grade not in cols:
            return lf.with_columns(pl.lit(None, dtype=pl.String).alias(MISFIT))
        grade = pl.col(self.grade)
        k = grade.list.len()
        misfits = [
            pl.when(self._per_sample(c) & _off(c, grade)).then(
                pl.format(
                    "{}\t{} values beside {} grades in " + self.grade,
                    pl.lit(c),
                    pl.col(c).list.len(),
                    k,
                )
            )
            for c in cols[1:]
        ]
        misfit = pl.coalesce(misfits) if misfits else pl.lit(None, dtype=pl.String)
        fits = misfit.is_null() & grade.is_not_null()
        kept = {c: self._per_sample(c) & (pl.col(c).list.len() > 0) for c in cols[1:]}
        kept[self.grade] = pl.lit(True)
        filled = [
            pl.when(fits)
            .then(pl.coalesce(pl.when(kept[c]).then(pl.col(c)), _nulls(schema[c], k)))
            .alias(c)
            for c in cols
        ]
        lf = lf.with_columns(misfit.alias(MISFIT)).with_columns(filled).explode(cols)
        wrapped = [pl.concat_list(pl.col(c)).alias(c) for c in self.wrapped if c in cols]
        if wrapped:
            lf = lf.with_columns(wrapped)
        renamed = {c: n for c, n in self.names.items() if c != n and c in cols}
        return lf.rename(renamed) if renamed else lf

    def _per_sample(self, column: str) -> pl.Expr:
        """Whether the list at ``column`` holds one value per sample, over the whole frame:
        it fits the grades on every row that records it, or it is per sample by its name
        (not :data:`AMBIGUOUS`) and fits them on some rows (the others then misfit)."""
        grade = pl.col(self.grade)
        off = _off(column, grade).any()
        on = (_recorded(column, grade) & ~_off(column, grade)).any()
        return ~off | (on & pl.lit(column not in AMBIGUOUS))

    def one(self, path: str) -> str:
        """A path into a split list as one sample's row reads it: ``rewards[]`` →
        ``rewards``, ``finish_reasons[]`` → ``finish_reason``, ``choices[].finish_reason`` →
        ``choices[0].finish_reason``."""
        head, _, rest = path.partition("[]")
        if head in self.wrapped:
            return f"{head}[0]{rest}"
        return self.names.get(head, head) + rest

    def view(self, shape: Shape) -> Shape:
        """``shape`` as one sample's row holds it: each split list of scalars in its
        element's place, under the field it is read as; a list of objects that is not the
        samples' (answer options beside the replies) left out of every reading."""
        children = {
            name: node
            for name, node in shape.children.items()
            if name in self.wrapped or not _objects_of(shape, name)
        }
        for column, name in self.names.items():
            item = shape.children[column].item
            del children[column]
            children[name] = item if item is not None else Shape()
        return replace(shape, children=children)

    def said(self) -> str:
        """The split lists, as a note names them."""
        return ", ".join(
            c + "[]" + ("" if self.names.get(c, c) == c else f" (as {self.names[c]})")
            for c in self.columns()
        )


def _recorded(column: str, grade: pl.Expr) -> pl.Expr:
    """Rows whose list at ``column`` records a value beside their grades (neither null nor
    empty)."""
    return pl.col(column).is_not_null() & (pl.col(column).list.len() > 0) & grade.is_not_null()


def _off(column: str, grade: pl.Expr) -> pl.Expr:
    """Rows whose list at ``column`` records values of another count than their grades."""
    return _recorded(column, grade) & (pl.col(column).list.len() != grade.list.len())


def holds_replies(node: Shape | None) -> bool:
    """Whether ``node`` is a list of objects that look like a model's samples: each with a
    reply's text (:data:`REPLY_KEYS`, not beside :data:`NOT_SAMPLE_KEYS`) or a sample's mark
    (:data:`SAMPLE_MARKS`: ``index``, ``finish_reason``, ``message``, a grade). Answer
    options (``{label, text}``), test cases and strings are not."""
    if node is None or node.kinds - {"null"} != {"list"} or node.item is None:
        return False
    if node.item.kinds - {"null"} != {"dict"}:
        return False
    keys = set(node.item.children)
    if keys & SAMPLE_MARKS:
        return True
    return bool(keys & REPLY_KEYS) and not keys & NOT_SAMPLE_KEYS


def sole_reply_view(shape: Shape, keep: Iterable[str] = ()) -> Shape:
    """``shape`` as a row of one draw reads it (no grade list: not a row of samples): the
    lists of objects where a response keeps its samples are read at their first element
    only where they look like one (:func:`holds_replies`) and are not a list of other drafts
    or examples (:data:`SAMPLE_LIST_ALIASES`: a one-draw row's ``generations`` are drafts,
    its ``samples`` few-shot examples); the others are left out of every reading, but for
    the paths of ``keep`` (what ``--map`` names)."""
    kept = {split_path(p)[0] for p in keep if p}
    children = {
        name: node
        for name, node in shape.children.items()
        if not _objects_of(shape, name)
        or name in kept
        or (name not in SAMPLE_LIST_ALIASES and holds_replies(node))
    }
    return replace(shape, children=children)


def _objects_of(shape: Shape, name: str) -> bool:
    """Whether ``name`` is a list of objects where a response may keep its samples
    (:data:`SAMPLE_HOLDERS`)."""
    item = _item(shape, name)
    return name in SAMPLE_HOLDERS and item is not None and item.kinds - {"null"} == {"dict"}


def _nulls(dtype: pl.DataType, k: pl.Expr) -> pl.Expr:
    """A list of ``k`` nulls of a list column's element type."""
    inner = dtype.inner if isinstance(dtype, (pl.List, pl.Array)) else pl.Null()
    return pl.lit(None, dtype=inner).repeat_by(k)


def _item(shape: Shape, name: str) -> Shape | None:
    """The element shape of a top-level list (None: not a list on every row)."""
    node = shape.children.get(name)
    if node is None or node.kinds - {"null"} != {"list"}:
        return None
    return node.item


def split_of(shape: Shape, grade_path: str, cut_path: str | None = None) -> Split:
    """Every top-level list a row of samples is split by, beside its grades at
    ``grade_path`` (and a mapped list of flags, ``cut_path``): lists of per-sample objects
    (:data:`SAMPLE_HOLDERS`), a list of replies (:data:`SAMPLE_REPLY_LISTS`, each read as
    :data:`REPLY` where the row has no such field), the plurals of
    :data:`SAMPLE_PLURALS`, and lists under a per-sample field's own name
    (:data:`SAMPLE_FIELDS`, where their elements are of that field's kind: a list of stop
    token ids is not finish reasons). Of several lists of replies, one named for them
    (:data:`REPLY_NAMED`) first, whatever the key order. Lists of anything else (a prompt's
    chat, gold answers, per-token log-probs, answer options) are the row's, left whole."""
    grade = split_path(grade_path)[0]
    mapped = {grade} | ({split_path(cut_path)[0]} if cut_path else set())
    names: dict[str, str] = {}
    wrapped: list[str] = []
    for column in sorted(shape.children, key=lambda c: c not in REPLY_NAMED):
        item = _item(shape, column)
        if item is None:
            continue
        kinds = item.kinds - {"null"}
        if kinds == {"dict"}:
            node = shape.children[column]
            if column in mapped or (column in SAMPLE_HOLDERS and holds_replies(node)):
                wrapped.append(column)
            continue
        if not kinds <= SCALAR:
            continue
        name = _name(column, kinds) if column not in mapped else column
        if name is None or name in names.values():
            continue
        if name != column and name in shape.children:
            continue  # the row records the field itself: the list is not its samples'
        names[column] = name
    return Split(grade, names, tuple(wrapped))


def _name(column: str, kinds: set[str]) -> str | None:
    """The field a list of scalars at ``column`` holds one of per sample, or None."""
    if column in SAMPLE_PLURALS:
        return SAMPLE_PLURALS[column]
    if column in REASON_NAMES and kinds != {"string"}:
        return None
    if column in SAMPLE_REPLY_LISTS and kinds == {"string"}:
        return column if column in COMPLETION_ALIASES else REPLY
    return column if column in SAMPLE_FIELDS else None
