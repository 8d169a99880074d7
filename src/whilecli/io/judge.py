"""Who grades: the one judge detector (DESIGN section 1, "Who grades").

Decided from what the one read of a file saw, never by reading it again:

- **names**: a column, metric, reward-function or scorer name of the rows (any key, nested
  keys included, the keys of a JSON object written as text (Prime RFT's ``metrics`` string,
  ``{"judge_reward": 1.0}``), and the column that fed the reward) that names a judge: ``judge``,
  ``annotator``, ``judgment``, ``preference``, ``model_graded``, ``llm-as-judge``,
  ``grader_model`` (a grading model's name beside the grade, as simple-evals writes it)
  (verifiers' ``judge_reward_func``, NeMo-Skills' ``judge_correct``, inspect_ai's
  ``model_graded_fact``/``model_graded_qa`` scorers, AlpacaEval's annotator fields,
  arena-hard's judgments). Every row of such a file is judge-graded.
- **the reference SDK rule** (``spec/reference-sdk.md`` (a), v2), per row: its
  ``judge_meta.scorer_kind`` is ``"judge"`` or ``"reward_model"``; or it has no
  ``judge_meta.scorer_kind`` (absent or null) and a truthy ``judge_name`` (present, not
  null, not empty, not ``false`` and not ``0``). ``scorer_kind: "rule"`` is not a judge, and
  ``judge_meta``/``judge_name`` are read by this rule alone, never by their names.
- **a grader named by value**, per row, where the rule says nothing (no ``scorer_kind``):
  a top-level text field that says who graded (``grader``, ``scorer``, ``evaluator``,
  ``graded_by``, ``grader_type``, ...: :data:`GRADER_KEYS`) whose value names a model or a
  judge (``gpt-4o-2024-08-06``, ``claude-3-5-sonnet``, ``llm``, ``reward_model``,
  ``model_graded_qa``: :data:`GRADER_VALUE`). ``"grader": "exact_match"`` or ``"regex"`` is a
  program.

:func:`rule_expr` is evaluated in the read's own streaming pass; :func:`named` looks at the
keys the read resolved the file's fields from. The answer is a :class:`JudgeScan` on
:class:`whilecli.io.rows.Rows`; the route's headline, ``check``'s ``judge-unaudited``
policy and summaries all read that one answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from whilecli.io.shape import Leaves, Shape, is_index

#: Scorer kinds that are judges (reference SDK rule).
JUDGE_KINDS = ("judge", "reward_model")
#: The per-row rule's own columns: never read as a judge by their names.
RULE_KEYS = ("judge_meta", "judge_name")
#: What a name that says a judge graded contains (lowercased; ``-`` and ``_`` alike).
JUDGE_WORDS = (
    "judge",
    "judgment",
    "judgement",
    "annotator",
    "preference",
    "model_graded",
    "llm_as_a_judge",
    "llm_as_judge",
    "grader_model",
    "grading_model",
)
_WORDS = re.compile("|".join(re.escape(w) for w in JUDGE_WORDS))
#: Top-level fields whose *value* says who graded a row.
GRADER_KEYS = (
    "grader",
    "graders",
    "scorer",
    "scorer_name",
    "evaluator",
    "grader_type",
    "scorer_type",
    "evaluator_type",
    "graded_by",
    "scored_by",
    "evaluated_by",
    "grading_method",
    "eval_method",
    "reward_source",
    "reward_type",
)
#: A grader's value that names a judge or a language model (lowercased text, searched): the
#: judge words, ``llm``, ``reward model``, and the model families graders are drawn from.
GRADER_VALUE = (
    r"^model$|judge|judgment|model[_\- ]?graded|llm|reward[_\- ]?model|\brm\b|\bai\b|"
    r"gpt|claude|gemini|\bo[134]\b|\bo[134]-|llama|qwen|mistral|mixtral|deepseek|grok|"
    r"command-r|phi-[234]|gemma|\bnemotron|skywork|\barmo|prometheus|autoj|selene"
)
#: The per-row kinds the read counts: the reference rule's, and a grader named by value.
RULE_KINDS = (*JUDGE_KINDS, "judge_name", "grader_value")
_FALSY = ("", "false", "0", "0.0")
#: The narrow column the per-row rule is read into.
JUDGE_COLUMN = "__judge"
#: by_kind key of rows judged by a name.
NAMED = "named"


@dataclass(frozen=True)
class JudgeScan:
    """Rows read and rows graded by a judge, by what told (``by_kind``: ``judge``,
    ``reward_model``, ``judge_name`` for the reference rule, ``named`` for names, ``summary``
    for counts a summary recorded); ``names`` are the judge names found."""

    rows: int
    judged: int
    by_kind: dict[str, int]
    names: tuple[str, ...] = field(default=())

    def describe(self) -> str:
        parts = []
        for kind, n in self.by_kind.items():
            if not n:
                continue
            if kind == NAMED:
                parts.append(f"{', '.join(self.names) or 'a judge column'}: {n}")
            elif kind == "grader_value":
                parts.append(f"a grader field naming a model or judge: {n}")
            elif kind in JUDGE_KINDS:
                parts.append(f"judge_meta.scorer_kind={kind}: {n}")
            else:
                parts.append(f"{kind}: {n}")
        return ", ".join(parts) or "none"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rows": self.rows, "judged": self.judged}
        out["by_kind"] = dict(self.by_kind)
        if self.names:
            out["names"] = list(self.names)
        return out


def is_judge_name(name: str) -> bool:
    """Whether a column, metric, reward-function or scorer name names a judge."""
    key = name.lower().replace("-", "_").replace(" ", "_")
    return bool(_WORDS.search(key))


def _paths(shape: Shape, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for key, child in shape.children.items():
        path = (*prefix, key)
        yield path
        yield from _paths(child, path)
    if shape.item is not None:
        yield from _paths(shape.item, prefix)
    if shape.encoded is not None:  # a JSON object written as text: its keys as a dict's
        yield from _paths(shape.encoded, prefix)


def named(shape: Shape, sources: Mapping[str, str] = {}) -> tuple[str, ...]:  # noqa: B006
    """The judge names among the keys of ``shape`` (dotted, outside the rule's own columns)
    and the columns that fed the canonical fields (``sources``)."""
    found: list[str] = []
    for path in _paths(shape):
        if path[0] in RULE_KEYS or any(is_index(k) for k in path):
            continue
        if is_judge_name(path[-1]):
            found.append(".".join(path))
    for origin in sources.values():
        for word in re.split(r"[^A-Za-z0-9_.\-]+", origin):
            if word and word.split(".")[0] not in RULE_KEYS and is_judge_name(word):
                found.append(word)
    graded = (sources.get("reward") or "").split(" ")[0]
    out: list[str] = []
    for name in found:  # a nested name under a named parent adds nothing
        if _another_scorer(name, graded):
            continue
        if not any(name.startswith(f"{kept}.") for kept in out) and name not in out:
            out.append(name)
    return tuple(out)


def _another_scorer(name: str, graded: str) -> bool:
    """Whether ``name`` is another grader's grade beside the one read as the reward: a path
    under the same parent that branches from the reward's own (inspect_ai's
    ``scores.model_graded_fact.value`` beside the ``scores.match.value`` that grades)."""
    if not graded:
        return False
    mine, theirs = graded.split("."), name.split(".")
    shared = 0
    while shared < min(len(mine), len(theirs)) and mine[shared] == theirs[shared]:
        shared += 1
    return 0 < shared < min(len(mine), len(theirs))


def rule_expr(shape: Shape, leaves: Leaves) -> pl.Expr:
    """Per row: the judge kind the reference rule finds (``judge``, ``reward_model``,
    ``judge_name``), else null. Reads its two columns through ``leaves`` only where the
    rows carry them."""
    none = pl.lit(None, dtype=pl.String)
    meta = shape.get(("judge_meta",))
    has_kind = meta is not None and "scorer_kind" in meta.children
    has_name = shape.get(("judge_name",)) is not None
    graders = [
        key
        for key in GRADER_KEYS
        if (node := shape.children.get(key)) is not None and "string" in node.kinds
    ]
    if not (has_kind or has_name or graders):
        return none
    kind = leaves.text("judge_meta.scorer_kind") if has_kind else none
    name = leaves.text("judge_name") if has_name else none
    truthy = name.is_not_null() & ~name.str.strip_chars().str.to_lowercase().is_in(_FALSY)
    named_by_value = pl.any_horizontal(
        pl.lit(False),
        *(
            leaves.text(key).str.to_lowercase().str.contains(GRADER_VALUE).fill_null(False)
            for key in graders
        ),
    )
    return (
        pl.when(kind.is_in(JUDGE_KINDS))
        .then(kind)
        .when(kind.is_null() & truthy)
        .then(pl.lit("judge_name"))
        .when(kind.is_null() & named_by_value)
        .then(pl.lit("grader_value"))
        .otherwise(none)
    )


def rule_counts() -> list[pl.Expr]:
    """Aggregates of the rule column: rows of each judge kind."""
    col = pl.col(JUDGE_COLUMN)
    return [(col == k).sum().alias(f"judge:{k}") for k in RULE_KINDS]


def scan_of(rows: int, stats: Mapping[str, Any], names: Iterable[str]) -> JudgeScan:
    """One file's answer: every row when a name says a judge graded, else the rule's counts."""
    found = tuple(names)
    if found:
        return JudgeScan(rows, rows, {NAMED: rows}, found)
    kinds = {k: int(stats.get(f"judge:{k}") or 0) for k in RULE_KINDS}
    if not kinds["grader_value"]:  # the reference rule's three kinds, and this one where seen
        del kinds["grader_value"]
    return JudgeScan(rows, sum(kinds.values()), kinds)


def combined(scans: Iterable[JudgeScan]) -> JudgeScan:
    """The answer for files read together: counts added, names joined."""
    rows = judged = 0
    by_kind: dict[str, int] = {k: 0 for k in (*JUDGE_KINDS, "judge_name")}
    names: list[str] = []
    for scan in scans:
        rows += scan.rows
        judged += scan.judged
        for k, v in scan.by_kind.items():
            by_kind[k] = by_kind.get(k, 0) + v
        names += [n for n in scan.names if n not in names]
    return JudgeScan(rows, judged, by_kind, tuple(names))


__all__ = [
    "JUDGE_KINDS",
    "JUDGE_WORDS",
    "GRADER_KEYS",
    "GRADER_VALUE",
    "RULE_KINDS",
    "JudgeScan",
    "combined",
    "is_judge_name",
    "named",
    "rule_counts",
    "rule_expr",
    "scan_of",
]
