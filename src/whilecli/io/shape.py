"""The alias table of DESIGN section 1, the shape of an input, and the leaves a plan reads.

A :class:`Shape` records which keys an input carries and what kinds of values sit under them
(``null``, ``bool``, ``int``, ``float``, ``string``, ``dict``, ``list``), built from the
first rows of a JSONL file or from a Parquet schema. The resolver in
:mod:`whilecli.io.plan` walks the aliases below against a shape (first match wins) and
asks a :class:`Leaves` for one polars expression per value it needs. ``Leaves`` also knows the
narrow schema to read a JSONL file with (only the leaves asked for) and how to coerce one
parsed JSON row to that schema (the line-by-line fallback).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union

import polars as pl

from whilecli import jsonout
from whilecli.errors import UsageError
from whilecli.io import facts, words

if TYPE_CHECKING:
    from polars.datatypes.classes import DataTypeClass

from whilecli.io.aliases import LAG_ALIASES, MODEL_ROLES, VERSION_ALIASES
from whilecli.io.aliases import LOGPROB_ALIASES as LOGPROB_ALIASES

# The shared alias tables, re-exported for the reader's modules.
from whilecli.io.aliases import MODEL_ALIASES as MODEL_ALIASES
from whilecli.io.aliases import PROMPT_ALIASES as PROMPT_ALIASES
from whilecli.io.aliases import REWARD_ALIASES as REWARD_ALIASES
from whilecli.io.aliases import TASK_ALIASES as TASK_ALIASES
from whilecli.io.aliases import TRUNCATION_ALIASES as TRUNCATION_ALIASES
from whilecli.io.aliases import VALUE_ALIASES as VALUE_ALIASES

#: A polars dtype as polars itself accepts one: an instance (``pl.List(pl.String)``) or a class
#: (``pl.String``).
DType = Union["DataTypeClass", pl.DataType]

NUMBER = frozenset({"int", "float"})
#: The longest text :meth:`Shape.add_text` parses for the keys of a JSON object it holds.
ENCODED_CHARS = 1 << 16
SCALAR = frozenset({"int", "float", "string", "bool"})


_STEP = re.compile(r"^(.*?)((?:\[-?\d*\])+)$")


#: A dot inside one key (``"scores.acc"`` written as a key, as a flattened table names its
#: columns), in a path :meth:`Shape.literal` resolved: :func:`split_path` never splits there.
LITERAL_DOT = "\x00"


def escaped_dots(dotted: str) -> str:
    """``dotted`` with each dot written ``\\.`` read as part of its key (:data:`LITERAL_DOT`):
    ``reward\\.x`` is the key ``"reward.x"``, ``scores\\.v2.acc`` the key ``"scores.v2"``,
    then ``acc``."""
    return dotted.replace("\\.", LITERAL_DOT)


@functools.lru_cache(maxsize=8192)
def split_path(dotted: str) -> tuple[str, ...]:
    """``a.b[].c`` → ``("a", "b", "[]", "c")``; ``choices[0].review`` → ``("choices", "[0]",
    "review")`` (``[]``: every element; ``[N]``: element N); a :data:`LITERAL_DOT` stays a
    dot inside its key. Cached: a plan asks the same few hundred paths of every shape."""
    parts: list[str] = []
    for piece in dotted.split("."):
        match = _STEP.match(piece)
        if match and match.group(1):
            parts.append(match.group(1))
            parts.extend(re.findall(r"\[-?\d*\]", match.group(2)))
        else:
            parts.append(piece)
    return tuple(p.replace(LITERAL_DOT, ".") for p in parts)


def _grouped(node: Shape, pieces: list[str]) -> str | None:
    """``pieces`` joined with a plain dot between keys and :data:`LITERAL_DOT` inside one,
    where each key is a child of the one before it; None where no grouping reaches a key."""
    for end in range(len(pieces), 0, -1):
        child = node.children.get(".".join(pieces[:end]))
        if child is None:
            continue
        key = LITERAL_DOT.join(pieces[:end])
        if end == len(pieces):
            return key
        rest = _grouped(child, pieces[end:])
        if rest is not None:
            return f"{key}.{rest}"
    return None


def is_index(key: str) -> bool:
    """``[]`` or ``[N]``: a step into a list."""
    return key.startswith("[") and key.endswith("]")


@dataclass
class Shape:
    """Which keys an input carries, nested, with the kinds of value seen under each."""

    kinds: set[str] = field(default_factory=set)
    children: dict[str, Shape] = field(default_factory=dict)
    item: Shape | None = None  # the shape of list elements
    #: The shape of JSON objects written as *text* here (Prime RFT's ``metrics`` string):
    #: their keys name what they hold (a reward function's score), never a path a plan reads.
    encoded: Shape | None = None

    def get(self, path: Iterable[str]) -> Shape | None:
        node: Shape | None = self
        for key in path:
            if node is None:
                return None
            node = node.item if is_index(key) else node.children.get(key)
        return node

    def has(self, dotted: str) -> bool:
        return self.get(split_path(dotted)) is not None

    def literal(self, dotted: str) -> str:
        """``dotted`` as a path this shape holds: itself where it is one, else the same
        pieces with some dots read as part of a key (``scores.acc`` names the column
        ``"scores.acc"`` of a flattened table, which the hints name so), else itself. A
        nested path wins over a key with a dot; among keys, the longest first. A dot
        written ``\\.`` is part of a key (``reward\\.x``: the key ``"reward.x"``)."""
        found = self.readings(dotted)
        return found[0] if found else escaped_dots(dotted)

    def readings(self, dotted: str) -> list[str]:
        """Every path this shape holds that ``dotted`` names: the nested path, and the
        same pieces with dots read as part of a key (:meth:`literal`), in that order; one
        path where ``dotted`` marks its key's dots (``\\.``) or steps into a list."""
        if "\\." in dotted:
            path = escaped_dots(dotted)
            return [path] if self.has(path) else []
        if "[" in dotted:
            return [dotted] if self.has(dotted) else []
        found = [dotted] if self.has(dotted) else []
        flat = _grouped(self, dotted.split("."))
        if flat is not None and split_path(flat) != split_path(dotted):
            found.append(flat)
        return found

    def kinds_at(self, dotted: str) -> set[str]:
        node = self.get(split_path(dotted))
        return set() if node is None else node.kinds

    def add_value(self, value: Any, depth: int = 0) -> None:
        """Record one JSON value (recursing into objects and lists, a few levels deep)."""
        self.kinds.add(json_kind(value))
        if depth > 6:
            return
        if isinstance(value, str):
            self.add_text(value, depth)
        elif isinstance(value, dict):
            for key, sub in value.items():
                self.children.setdefault(key, Shape()).add_value(sub, depth + 1)
        elif isinstance(value, list):
            for sub in value[:64]:
                if self.item is None:
                    self.item = Shape()
                self.item.add_value(sub, depth + 1)

    def add_text(self, text: str, depth: int = 0) -> None:
        """Record the keys of a JSON object written as text (``"{\"judge_reward\": 1.0}"``)
        in :attr:`encoded`; any other text, or one past :data:`ENCODED_CHARS`, adds nothing."""
        if len(text) > ENCODED_CHARS or not text.lstrip().startswith("{"):
            return
        try:
            value = jsonout.parse(text)
        except ValueError:
            return
        if isinstance(value, dict):
            if self.encoded is None:
                self.encoded = Shape()
            self.encoded.add_value(value, depth + 1)

    @classmethod
    def from_rows(cls, rows: Iterable[dict[str, Any]]) -> Shape:
        shape = cls()
        for row in rows:
            shape.add_value(row)
        return shape

    @classmethod
    def from_dtype(cls, dtype: DType) -> Shape:
        shape = cls()
        if isinstance(dtype, pl.Struct):
            shape.kinds.add("dict")
            for fld in dtype.fields:
                shape.children[fld.name] = cls.from_dtype(fld.dtype)
        elif isinstance(dtype, (pl.List, pl.Array)):
            shape.kinds.add("list")
            shape.item = cls.from_dtype(dtype.inner)
        elif dtype == pl.Boolean:
            shape.kinds.add("bool")
        elif dtype.is_integer():
            shape.kinds.add("int")
        elif dtype.is_float() or dtype.is_decimal():
            shape.kinds.add("float")
        elif dtype == pl.Null:
            shape.kinds.add("null")
        else:
            shape.kinds.add("string")
        return shape

    @classmethod
    def from_schema(cls, schema: pl.Schema) -> Shape:
        return cls.from_dtype(pl.Struct(dict(schema)))


#: Where a harness records an error on the rows' top level, looked for past the sample (an
#: API that began to fail partway through a run writes them late): each place read on its own
#: (an ``error`` in the sample beside an ``error_type`` past it is read from both), so each is
#: its own table below. The names most writers use; each searched name costs a scan of the
#: file's bytes, so the rarer spellings are read where the sample holds them.
ERROR_PLACES: tuple[str, ...] = (
    *("error", "exception", "error_message", "error_type", "error_code"),
    *("status", "status_code", "finish_reason", "stop_reason"),
)
#: The model's names looked for past the sample: the names on the rows' top level, not the
#: role words (:data:`~whilecli.io.aliases.MODEL_ROLES`) nor their objects.
LATE_MODEL_ALIASES: tuple[str, ...] = tuple(
    a for a in MODEL_ALIASES if "." not in a and "[" not in a and a not in MODEL_ROLES
)
#: The optional fields a JSONL sample may miss when a writer adds their keys only to some rows
#: (a truncation flag only on cut-off replies, an error's fields only once the API began to
#: fail, a policy version or a staleness only once an async sampler began, say): each
#: table's paths, none of them seen.
LATE_FIELD_ALIASES: tuple[tuple[str, ...], ...] = (
    tuple(path for path, _ in TRUNCATION_ALIASES),
    LATE_MODEL_ALIASES,
    (*VERSION_ALIASES, *LAG_ALIASES),
    LOGPROB_ALIASES,
    VALUE_ALIASES,
    *((place,) for place in ERROR_PLACES),
)


#: The late keys a JSONL scan reads itself (as any JSON text) where the sample lacks them,
#: instead of searching the file's bytes for their names first: a version's and a staleness's
#: many names, which one search each would cost more than polars' look-up in every row.
SCANNED_LATE = frozenset(a for a in (*VERSION_ALIASES, *LAG_ALIASES) if "." not in a)


#: The objects a field of :data:`LATE_FIELD_ALIASES` is looked for past the sample in, where
#: the sample holds none: a reply's ``response`` and ``choices``, the extras a harness adds to
#: some rows (``metadata``), the sampler's (``sampling``). Other objects (``info``, ``config``,
#: ``agent``, ...) are written on every row of their writer or on none: each searched key
#: costs a scan of the file's bytes.
LATE_CONTAINERS = frozenset({"metadata", "response", "sampling", "choices", "outputs", "steps"})


def unseen_paths(shape: Shape, named: Iterable[str] = ()) -> list[tuple[str, ...]]:
    """Where to look past a sample: for each table of :data:`LATE_FIELD_ALIASES` of which the
    sample carries no path, each path cut after its first key the sample lacks (``a.b.c``
    with ``a`` seen gives ``("a", "b")``), where that key is the path's last, lies in an
    object the sample holds, or is one of :data:`LATE_CONTAINERS`. A table the sample resolves is left alone.
    ``named``: the columns an option names (``--by``, ``--map``), each looked for as it is cut,
    wherever its first unseen key lies: the user said the rows carry it."""
    found: list[tuple[str, ...]] = []
    for table in LATE_FIELD_ALIASES:
        if any(shape.has(path) for path in table):
            continue
        for path in table:
            parts = split_path(path)
            cut = _first_unseen(shape, parts)
            # the path's last key, a seen object's field, or a container a late field sits in
            kept = (
                len(cut) > 1 or len(cut) == len(parts) or bool(cut and cut[-1] in LATE_CONTAINERS)
            )
            if cut and kept and cut not in found:
                found.append(cut)
    for path in named:
        cut = _first_unseen(shape, split_path(path))
        if cut and cut not in found:
            found.append(cut)
    return found


def _first_unseen(shape: Shape, parts: tuple[str, ...]) -> tuple[str, ...]:
    """``parts`` cut after its first key the shape lacks; ``()`` where the shape holds the
    whole path or a list's items hold nothing to look in."""
    node: Shape | None = shape
    for depth, key in enumerate(parts):
        if node is None:
            break
        if key == "[]":
            node = node.item
        elif key in node.children:
            node = node.children[key]
        else:
            return parts[: depth + 1]
    return ()


_SKIP = object()


def keep_paths(value: Any, paths: Iterable[tuple[str, ...]]) -> Any:
    """``value`` trimmed to what lies along ``paths`` (each path's last key kept whole), so
    that a row found for a late key adds that key to a :class:`Shape` and nothing else:
    never a higher alias of a field the sample already resolved, nor a new kind of value
    at a key the sample has seen."""
    paths = [p for p in paths if p]
    if isinstance(value, list):
        rests = [p[1:] for p in paths if p[0] == "[]"]
        if not rests:
            return _SKIP
        items = [item if any(not r for r in rests) else keep_paths(item, rests) for item in value]
        return [item for item in items if item is not _SKIP]
    if not isinstance(value, dict):
        return _SKIP
    out: dict[str, Any] = {}
    for key in dict.fromkeys(p[0] for p in paths):
        if key == "[]" or key not in value:
            continue
        rests = [p[1:] for p in paths if p[0] == key]
        kept = value[key] if any(not r for r in rests) else keep_paths(value[key], rests)
        if kept is not _SKIP:
            out[key] = kept
    return out


def json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "dict"
    return "list"


#: Each :func:`json_kind` as an error message names it: the one table of those words.
KIND_WORDS: dict[str, str] = {
    "null": "null",
    "bool": "a boolean",
    "int": "a number",
    "float": "a number",
    "string": "a string",
    "dict": "a JSON object",
    "list": "a JSON list",
}


def kind_words(value: Any) -> str:
    """What an error message calls ``value``'s JSON kind (``a JSON object``, ``a number``)."""
    return KIND_WORDS[json_kind(value)]


class Leaves:
    """The values a plan reads, each a path into the row with the dtype it is read as.

    For Parquet (``schema`` given) a leaf is an expression on the file's own columns, cast
    to the dtype; a path the file lacks (or that runs through an all-null column) reads as
    null. For JSONL the leaves make up the narrow schema the file is scanned with.
    """

    def __init__(self, schema: pl.Schema | None = None) -> None:
        self.schema = schema
        self.paths: dict[tuple[str, ...], DType] = {}
        #: Leaves whose text means what its words say: path → ``"grade"`` or ``"flag"``
        #: (:mod:`whilecli.io.facts`, values written as text).
        self.words: dict[tuple[str, ...], str] = {}
        #: A row of samples read one sample a row (:class:`whilecli.io.samples.Split`): the
        #: field each split list is read as → the file's list column holding it.
        self.listed: dict[str, str] = {}

    def split(self, names: Mapping[str, str]) -> None:
        """Read each file column of ``names`` (a list, one value per sample) as the field it
        names, one element a row (:meth:`whilecli.io.samples.Split.rows`): the leaves read
        there so far (as lists) are dropped, and the scan reads the column as a list of what
        the field is read as."""
        self.paths = {p: d for p, d in self.paths.items() if p[0] not in names}
        self.words = {p: k for p, k in self.words.items() if p[0] not in names}
        self.listed = {name: column for column, name in names.items()}
        if self.schema is not None:
            schema: dict[str, Any] = dict(self.schema)
            for column, name in names.items():
                found = schema.pop(column)
                schema[name] = found.inner if isinstance(found, (pl.List, pl.Array)) else found
            self.schema = pl.Schema(schema)

    def grade(self, dotted: str, kinds: set[str]) -> pl.Expr:
        """A grade at ``dotted``: a number (a boolean as 1.0 / 0.0), or text read by
        :func:`~whilecli.io.words.grade_text` (``kinds``: what the rows hold there)."""
        return self._worded(dotted, kinds, "grade", pl.Float64, facts.grade_of_text)

    def flag(self, dotted: str, kinds: set[str]) -> pl.Expr:
        """A truncation flag at ``dotted``: true/false, 0/1, or text read by
        :func:`~whilecli.io.words.flag_text` (unknown, null, where it says so)."""
        return self._worded(dotted, kinds, "flag", pl.Boolean, facts.flag_of_text)

    def _worded(
        self, dotted: str, kinds: set[str], kind: str, dtype: DType, of_text: Any
    ) -> pl.Expr:
        path = split_path(dotted)
        if any(is_index(step) for step in path):
            return self.expr(dotted, dtype)
        self.words[path] = kind
        if self.schema is None:
            if "string" in kinds:
                return of_text(self.expr(dotted, pl.String))
            return self.expr(dotted, dtype)
        found = _dtype_at(self.schema, path)
        if found is not None and found in (pl.String, pl.Categorical, pl.Enum):
            self.paths[path] = pl.String
            return of_text(_chain(path).cast(pl.String))
        if kind == "flag" and found is not None and found.is_numeric():
            return facts.flag_of_number(self.expr(dotted, pl.Float64))
        return self.expr(dotted, dtype)

    def bad_words(self) -> list[tuple[str, pl.Expr]]:
        """Per text leaf of a Parquet file, its dotted path and the rows whose text says
        nothing (the rows :meth:`grade` and :meth:`flag` fail the query on)."""
        out: list[tuple[str, pl.Expr]] = []
        if self.schema is None:
            return out
        for path, kind in self.words.items():
            found = _dtype_at(self.schema, path)
            if found in (pl.String, pl.Categorical, pl.Enum):
                text = _chain(path).cast(pl.String)
                bad = facts.bad_grade_text(text) if kind == "grade" else facts.bad_flag_text(text)
                out.append((".".join(path), bad))
            elif kind == "flag" and found is not None and found.is_numeric():
                out.append((".".join(path), facts.bad_flag_number(_chain(path))))
        return out

    def expr(self, dotted: str, dtype: DType) -> pl.Expr:
        """The value at ``dotted`` read as ``dtype`` (null where the row lacks it)."""
        path = split_path(dotted)
        if self.schema is None:
            return self._scanned(dotted, path, dtype)
        self.paths[path] = dtype
        found = _dtype_at(self.schema, path)
        if found is None or found == pl.Null:
            return pl.lit(None, dtype=dtype)
        listed = isinstance(found, (pl.List, pl.Array)) and _numeric_or_bool(found.inner)
        if dtype == pl.Float64 and listed and "[" not in dotted:
            raise BadValue(
                dotted, f"is a column of lists of numbers, not a number; {list_hint(dotted)}"
            )
        if dtype in (pl.Float64, pl.Boolean) and not _numeric_or_bool(found):
            parts = (
                [f.name for f in found.fields if _numeric_or_bool(f.dtype)]
                if isinstance(found, pl.Struct) and dtype == pl.Float64 and "[]" not in path
                else []
            )
            if parts:  # named grades (a reward function each), as a JSON object is named
                raise BadValue(
                    dotted,
                    f"is a column of named grades ({', '.join(parts[:4])}), not a number:"
                    f" pass --map reward={dotted}.{parts[0]} (or another of its fields)",
                )
            raise BadValue(
                dotted,
                f"is a column of {found}, not {'a number' if dtype == pl.Float64 else 'true/false'}",
            )
        if dtype == pl.String and isinstance(found, _NOT_TEXT):
            raise BadValue(
                dotted,
                f"is a column of {found}, not text or a number: no id, name or version is"
                " read from it",
            )
        if "[]" in path:  # every element: a list of the dtype
            return _chain(path).cast(pl.List(dtype))
        return _chain(path).cast(dtype)

    def _scanned(self, dotted: str, path: tuple[str, ...], dtype: DType) -> pl.Expr:
        """A JSON Lines leaf read as ``dtype``: the scan reads each leaf as one type, the
        first a field asked of it (``--map reward=truncated`` reads the truncation flag's
        leaf as the reward too); a later field reads that as its own type: a flag from a
        number as :func:`~whilecli.io.facts.flag_of_number` reads one, a flag or a grade from
        text as their words say (as a Parquet column of text is read)."""
        known = self.paths.get(path)
        if known is None or known == dtype or "[]" in path:
            self.paths[path] = dtype
            return _chain(path)
        if known == pl.String and dtype == pl.Boolean:  # its text read as a flag's words
            return facts.flag_of_text(_chain(path))
        if known == pl.String and dtype == pl.Float64:  # ... as a grade's
            return facts.grade_of_text(_chain(path))
        if known == pl.String:
            raise UsageError(
                f"--map: the column '{dotted}' is read as text by one field and as {dtype} by"
                " another; map a column to one field"
            )
        if dtype == pl.Boolean and known == pl.Float64:
            return facts.flag_of_number(_chain(path))
        return _chain(path).cast(dtype)

    def text(self, dotted: str) -> pl.Expr:
        """The value at ``dotted`` as text: strings as they are, anything else as JSON. A
        leaf another field reads as a number or a flag (``--by reward``) is read as that, and
        its value written as text: a JSON Lines scan reads each leaf as one type."""
        if self.schema is None:
            known = self.paths.get(split_path(dotted))
            if known is not None and known != pl.String:
                return self.expr(dotted, known).cast(pl.String)
            return self.expr(dotted, pl.String)
        path = split_path(dotted)
        self.paths[path] = pl.String
        found = _dtype_at(self.schema, path)
        if found is None or found == pl.Null:
            return pl.lit(None, dtype=pl.String)
        if found.is_nested():
            encoded = pl.struct(_chain(path).alias("v")).struct.json_encode()
            return encoded.str.strip_prefix('{"v":').str.strip_suffix("}")
        return _chain(path).cast(pl.String)

    def nonempty(self, dotted: str) -> pl.Expr:
        """True where the row holds a non-empty list at ``dotted``."""
        if self.schema is None:
            text = self.expr(dotted, pl.String)
            return text.is_not_null() & text.str.starts_with("[") & (text.str.strip_chars() != "[]")
        found = _dtype_at(self.schema, split_path(dotted))
        if not isinstance(found, (pl.List, pl.Array)):
            return pl.lit(False)
        return (_chain(split_path(dotted)).list.len() > 0).fill_null(False)

    def logprob_values(self, dotted: str) -> pl.Expr:
        """True where the list at ``dotted`` holds log-probs: no value above 0 (a probability,
        not a log-prob) and not every value exactly 0 (a placeholder a writer fills in where it
        kept none); null where the row holds no list. A JSON Lines row's list is read from its
        text, a Parquet file's from its numbers (a list of anything else is taken as it is)."""
        return self._held_values(dotted, log_probs=True)

    def critic_values(self, dotted: str) -> pl.Expr:
        """True where the list at ``dotted`` holds a critic's values: not every value exactly
        0 (a placeholder a writer fills in where it ran no critic, as
        :meth:`logprob_values` reads log-probs); null where the row holds no list."""
        return self._held_values(dotted, log_probs=False)

    def _held_values(self, dotted: str, log_probs: bool) -> pl.Expr:
        """:meth:`logprob_values` (``log_probs``: no value above 0 either) and
        :meth:`critic_values`: not every value of the list exactly 0."""
        if self.schema is None:
            text = self.expr(dotted, pl.String).str.strip_chars()
            held = ~text.str.contains(_ALL_ZERO)
            if log_probs:
                held = held & ~text.str.contains(_ABOVE_ZERO)
            return pl.when(text.str.starts_with("[")).then(held)
        found = _dtype_at(self.schema, split_path(dotted))
        if not isinstance(found, (pl.List, pl.Array)) or not found.inner.is_numeric():
            return pl.lit(True)
        values = _chain(split_path(dotted)).cast(pl.List(pl.Float64))
        zeros = values.list.eval(pl.element() == 0).list.all() & (values.list.len() > 0)
        if log_probs:
            return ~values.list.eval(pl.element() > 0).list.any() & ~zeros
        return ~zeros

    def list_len(self, dotted: str) -> pl.Expr:
        """The length of the list at ``dotted``; null where the row holds none, or where a
        JSON Lines row's list is not a flat list of numbers (its text is not parsed here)."""
        if self.schema is None:
            text = self.expr(dotted, pl.String).str.strip_chars()
            flat = text.str.starts_with("[") & text.str.ends_with("]")
            flat = flat & (text.str.count_matches(r"[\[\]{}\"]") == 2)
            inner = text.str.strip_prefix("[").str.strip_suffix("]").str.strip_chars()
            count = pl.when(inner == "").then(0).otherwise(inner.str.count_matches(",") + 1)
            return pl.when(flat).then(count.cast(pl.Int64))
        found = _dtype_at(self.schema, split_path(dotted))
        if not isinstance(found, (pl.List, pl.Array)):
            return pl.lit(None, dtype=pl.Int64)
        return _chain(split_path(dotted)).list.len().cast(pl.Int64)

    def reachable(self, dotted: str) -> bool:
        """Whether a Parquet file has this path (a JSONL scan reads any declared leaf)."""
        if self.schema is None:
            return True
        found = _dtype_at(self.schema, split_path(dotted))
        return found is not None and found != pl.Null

    def read_schema(self) -> dict[str, DType]:
        """The nested schema that reads exactly these leaves from JSONL."""
        tree: dict[str, Any] = {}
        for path, dtype in self.paths.items():
            node = tree
            for i, step in enumerate(path):
                key = "[]" if is_index(step) else step
                last = i == len(path) - 1
                if last:
                    node[key] = dtype
                else:
                    child = node.get(key)
                    if not isinstance(child, dict):
                        child = {}
                        node[key] = child
                    node = child
        out = {k: _to_dtype(v) for k, v in tree.items()}
        for name, column in self.listed.items():  # a split list: a list of its field
            if name in out:
                out[column] = pl.List(out.pop(name))
        return out

    def coerce_row(self, row: dict[str, Any], schema: Mapping[str, DType]) -> dict[str, Any]:
        """One parsed JSON row reduced to ``schema`` (raises ``ValueError(path)`` on a bad value);
        a grade or a flag written as text is read by its words first."""
        for path, kind in self.words.items():
            column = self.listed.get(path[0])
            values = None if column is None else row.get(column)
            if column is not None and isinstance(values, list):  # each element as the field
                one = [_read_words({path[0]: v}, path, kind).get(path[0]) for v in values]
                row = {**row, column: one}
            elif column is None:
                row = _read_words(row, path, kind)
        return {k: _coerce(row.get(k), dtype, k) for k, dtype in schema.items()}


def _read_words(row: dict[str, Any], path: tuple[str, ...], kind: str) -> dict[str, Any]:
    """``row`` with the value at ``path`` read as a grade or a flag (text by its words, a
    number or boolean checked), copied along the path; a value that is neither is refused."""
    node: Any = row
    for key in path[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
    if not isinstance(node, dict) or node.get(path[-1]) is None:
        return row
    value = node[path[-1]]
    dotted = ".".join(path)
    if isinstance(value, str):
        try:
            read: Any = words.grade_text(value) if kind == "grade" else words.flag_text(value)
        except ValueError as err:
            raise BadValue(dotted, str(err)) from None
    else:
        read = _coerce(value, pl.Float64 if kind == "grade" else pl.Boolean, dotted)
    if read == value and type(read) is type(value):
        return row

    def put(node: dict[str, Any], rest: tuple[str, ...]) -> dict[str, Any]:
        inner = read if len(rest) == 1 else put(node[rest[0]], rest[1:])
        return {**node, rest[0]: inner}

    return put(row, path)


def _to_dtype(node: Any) -> DType:
    if not isinstance(node, dict):
        return node
    if "[]" in node:
        return pl.List(_to_dtype(node["[]"]))
    return pl.Struct({k: _to_dtype(v) for k, v in node.items()})


#: A JSON list's text holding a number above 0 (an element with no sign whose digits before
#: any exponent are not all 0), and one whose every element is a zero (``0``, ``-0.0``, ``0e0``).
_ABOVE_ZERO = r"(?:^\[|,)\s*\+?[0-9.]*[1-9]"
_ZERO = r"\s*[+-]?(?:0+\.?0*|\.0+)(?:[eE][+-]?[0-9]+)?\s*"
_ALL_ZERO = rf"^\[{_ZERO}(?:,{_ZERO})*\]$"


def list_hint(path: str) -> str:
    """What to pass for a grade written as a list of numbers: its two readings, each element a
    rollout's grade (``PATH[]``), or one episode's grade per turn, whose last is the episode's
    (``PATH[-1]``); only the writer knows which."""
    return (
        f"one grade per rollout: pass --map reward={path}[] (each element a rollout);"
        f" one episode's rewards per turn: pass --map reward={path}[-1] (the last turn's)"
    )


def _chain(path: tuple[str, ...]) -> pl.Expr:
    expr = pl.col(path[0])
    i = 1
    while i < len(path):
        if path[i] == "[]":
            inner = _chain_element(path[i + 1 :])
            return expr.list.eval(inner)
        if is_index(path[i]):
            expr = expr.list.get(int(path[i][1:-1]), null_on_oob=True)
        else:
            expr = expr.struct.field(path[i])
        i += 1
    return expr


def _chain_element(rest: tuple[str, ...]) -> pl.Expr:
    expr = pl.element()
    for key in rest:
        if key == "[]":
            raise BadValue("".join(rest), "one [] at the most in a path")
        if is_index(key):
            expr = expr.list.get(int(key[1:-1]), null_on_oob=True)
        else:
            expr = expr.struct.field(key)
    return expr


def _dtype_at(schema: pl.Schema, path: tuple[str, ...]) -> DType | None:
    dtype: DType | None = schema.get(path[0])
    for key in path[1:]:
        if is_index(key):
            if not isinstance(dtype, (pl.List, pl.Array)):
                return None
            dtype = dtype.inner
        elif isinstance(dtype, pl.Struct):
            dtype = next((f.dtype for f in dtype.fields if f.name == key), None)
        else:
            return None
    return dtype


def _numeric_or_bool(dtype: DType) -> bool:
    return dtype == pl.Boolean or dtype.is_numeric()


#: Parquet column types a text field (a task id, a model name) is never read from: polars
#: casts none of them to text (a duration, an Arrow extension type, a list).
_NOT_TEXT = (pl.Duration, pl.Extension, pl.List, pl.Array)


class BadValue(ValueError):
    """A value that does not fit the dtype its field is read as; ``path`` names the field."""

    def __init__(self, path: str, what: str) -> None:
        super().__init__(what)
        self.path, self.what = path, what


def _coerce(value: Any, dtype: DType, path: str) -> Any:
    if value is None:
        return None
    if isinstance(dtype, pl.Struct):
        if not isinstance(value, dict):
            return None
        return {
            f.name: _coerce(value.get(f.name), f.dtype, f"{path}.{f.name}") for f in dtype.fields
        }
    if isinstance(dtype, pl.List):
        if not isinstance(value, list):
            return None
        return [_coerce(v, dtype.inner, f"{path}[]") for v in value]
    if dtype == pl.String:
        if isinstance(value, (bool, int, float)):
            # as polars' reader renders a number read as text, ids then one rule: 7.0 is 7
            # (imported here: it loads numpy, which a plain route never needs)
            from whilecli.io.columns import render_text

            return render_text(value)
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if dtype == pl.Float64:
        if isinstance(value, bool):
            return 1.0 if value else 0.0
        if isinstance(value, (int, float)):
            try:
                return float(value)
            except OverflowError:  # an integer beyond float range
                return math.inf if value > 0 else -math.inf
        if isinstance(value, list) and value and all(isinstance(v, (int, float)) for v in value):
            raise BadValue(  # a grade per sample, per turn or per token: only the user knows
                path, f"is a JSON list of {len(value)} numbers, not a number; {list_hint(path)}"
            )
        numbers = (
            [k for k, v in value.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
            if isinstance(value, dict) and "[]" not in path
            else []
        )
        if numbers:  # named grades (a reward function each): only the user knows which passes
            raise BadValue(
                path,
                f"is a JSON object of named grades ({', '.join(numbers[:4])}), not a number:"
                f" pass --map reward={path}.{numbers[0]} (or another of its keys)",
            )
        raise BadValue(path, f"is {_describe(value)}, not a number")
    if dtype == pl.Boolean:
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)) and value in (0, 1):
            return bool(value)
        raise BadValue(path, f"is {_describe(value)}, not true/false")
    if dtype.is_integer():
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int):
            raise BadValue(path, f"is {_describe(value)}, not a whole number")
        if not -(1 << 63) <= value < 1 << 63:
            raise BadValue(path, "is an integer past 64 bits, not one this field can hold")
    return value


def _describe(value: Any) -> str:
    if isinstance(value, str):
        text = value if len(value) <= 24 else value[:21] + "..."
        return f"the text {json.dumps(text, ensure_ascii=False)}"
    if isinstance(value, (dict, list)):
        return f"a JSON {'object' if isinstance(value, dict) else 'list'}"
    return repr(value)


def canonical_text(text: str) -> str:
    """A prompt in the one form its task key is taken from, whichever file type or writer
    held it (DESIGN section 1, "Task ids are checked against prompts"): text with its line
    ends written as LF and the whitespace around it dropped (whitespace inside it kept); JSON
    (a message list or an object) re-encoded with sorted keys, compact separators and null
    members dropped, each message's text in that form. A message list that is one user
    message and nothing else is that message's text, so a chat prompt and the same prompt
    written as a string are one task; a system message is part of the prompt and kept."""
    text = plain_text(text)
    if text[:1] not in ("[", "{"):
        return text
    try:
        value = jsonout.parse(text, controls=True)
    except ValueError:  # not JSON, or nested past the guard: the text as it is
        return text
    value = _drop_nulls(value)
    if isinstance(value, list):
        value = [_message(m) for m in value]
        if len(value) == 1 and (user := _user_text(value[0])) is not None:
            return user
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def plain_text(text: str) -> str:
    """``text`` with CRLF and CR line ends written as LF and the whitespace around it dropped,
    in Unicode's composed form (NFC) where it holds a non-ASCII character (an accent written
    as a combining mark is the accented letter)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def _message(value: Any) -> Any:
    """A chat message with its text in :func:`plain_text` form: a string content, or a
    content list of text parts (one text part alone is its text)."""
    if not isinstance(value, dict) or "content" not in value:
        return value
    content = value["content"]
    if isinstance(content, str):
        return {**value, "content": plain_text(content)}
    if isinstance(content, list):
        parts = [
            {**part, "text": plain_text(part["text"])}
            if isinstance(part, dict) and isinstance(part.get("text"), str)
            else part
            for part in content
        ]
        one = parts[0] if len(parts) == 1 else None
        if (
            isinstance(one, dict)
            and set(one) <= {"type", "text"}
            and one.get("type", "text") == "text"
        ):
            return {**value, "content": one.get("text")}
        return {**value, "content": parts}
    return value


def _user_text(message: Any) -> str | None:
    """The text of a message that is a user's text and nothing else, or None."""
    if not isinstance(message, dict) or set(message) != {"role", "content"}:
        return None
    content = message["content"]
    return content if message["role"] == "user" and isinstance(content, str) else None


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _before_reply(text: str) -> str:
    """A message list cut before its first assistant turn (a transcript's prompt)."""
    value = facts.chat_list(text)
    if value is None:
        return text
    from whilecli.io.formats import first_assistant_cut

    return json.dumps(first_assistant_cut(value), ensure_ascii=False)


#: The parts of a chat prompt a task may be keyed by where the whole prompt varies per draw
#: (:func:`prompt_part`): the messages without their system (or developer) turns, and the
#: last user turn alone.
PROMPT_PARTS: tuple[str, ...] = ("without system turns", "last user turn")
_SYSTEM_ROLES = frozenset({"system", "developer"})


def prompt_part(text: str, part: str, before_reply: bool = False) -> tuple[str, str] | None:
    """A chat prompt (a message list as JSON text; cut before its first assistant turn where
    ``before_reply``) split into the ``part`` of :data:`PROMPT_PARTS` it keeps and the rest,
    each as JSON text; None where the text is no message list, or the part is all of it or
    none of it."""
    value = facts.chat_list(text)
    if value is None:
        return None
    if before_reply:
        from whilecli.io.formats import first_assistant_cut

        value = first_assistant_cut(value)

    def role(message: Any) -> object:
        return message.get("role") if isinstance(message, dict) else None

    if part == PROMPT_PARTS[0]:
        kept = [m for m in value if role(m) not in _SYSTEM_ROLES]
        rest = [m for m in value if role(m) in _SYSTEM_ROLES]
    else:
        users = [i for i, m in enumerate(value) if role(m) == "user"]
        if not users:
            return None
        kept = [value[users[-1]]]
        rest = value[: users[-1]] + value[users[-1] + 1 :]
    if not kept or not rest:
        return None
    return json.dumps(kept, ensure_ascii=False), json.dumps(rest, ensure_ascii=False)


def prompt_part_hash(series: pl.Series, part: str, before_reply: bool = False) -> pl.Series:
    """:func:`prompt_hash` of each chat prompt's ``part`` (:func:`prompt_part`); a text that
    is no message list, or holds nothing else, is hashed whole."""

    def kept(text: str) -> str:
        split = prompt_part(text, part)
        return text if split is None else split[0]

    whole = series.map_elements(_before_reply, return_dtype=pl.String) if before_reply else series
    return prompt_hash(whole.map_elements(kept, return_dtype=pl.String))


def prompt_hash_before_reply(series: pl.Series) -> pl.Series:
    """:func:`prompt_hash` of the messages before the first assistant turn."""
    return prompt_hash(series.map_elements(_before_reply, return_dtype=pl.String))


def canonical_series(series: pl.Series) -> pl.Series:
    """Each text of ``series`` in its :func:`canonical_text` form (JSON re-encoded compact
    with sorted keys), so one value reads as one text whichever reader or writer held it."""
    uniq = [v for v in series.unique().to_list() if v is not None]
    table = {v: canonical_text(v) for v in uniq}
    return series.replace_strict(table, default=None, return_dtype=pl.String)


#: Prompts in :func:`canonical_text`'s form (in lower case) that hold no text: empty, an
#: empty message, a missing value written as text (a writer's ``str(None)``), or a
#: placeholder a harness writes where it kept no prompt (``N/A``, ``TBD``, ``<prompt>``). A
#: prompt of no letter and no digit (``-``, ``...``, ``?``) holds none either
#: (:func:`blank_prompt`).
_BLANK_PROMPTS = frozenset(
    {"", '""', "[]", "{}", "none", "null", "nan", "undefined", "n/a", "na", "n.a.", "tbd"}
    | {"todo", "placeholder", "<prompt>", "<none>", "<empty>", "<missing>", "missing", "empty"}
    | {"unknown", "<unknown>", "(none)", "(empty)", "(missing)", "(unknown)", "<null>", "nil"}
)


def blank_prompt(text: str) -> bool:
    """Whether a prompt in :func:`canonical_text`'s form holds no text to key a task by."""
    return text.lower() in _BLANK_PROMPTS or not any(c.isalnum() for c in text)


def prompt_hash(series: pl.Series) -> pl.Series:
    """A stable id per prompt: ``p:`` + the first 16 hex digits of the SHA-256 of its
    :func:`canonical_text`; none for a prompt that is blank in that form (an empty or
    whitespace-only text, an empty message's, ``"None"``, a placeholder, ``N/A``, ``-``:
    :func:`blank_prompt`): no prompt to key a task by, as a null one."""
    canon = {v: canonical_text(v) for v in series.unique().to_list() if v is not None}
    table = {
        v: "p:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
        for v, text in canon.items()
        if not blank_prompt(text)
    }
    if not table:
        return pl.Series(series.name, [None] * len(series), dtype=pl.String)
    return series.replace_strict(table, default=None, return_dtype=pl.String)
