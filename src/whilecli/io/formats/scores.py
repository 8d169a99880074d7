"""A grade among a row's named scores, for eval platforms that keep several per row
(Braintrust ``scores``, LangSmith feedback keys): which one is the pass, and whether a model
graded it.

One name: it is the grade (a 0/1 score is a pass; any other the pass threshold reads). Several:
the one that is 0 or 1 on every row that has it, where exactly one is; else none, and the rows
keep every score so that ``--map reward=<where>.NAME`` picks one (the reader's refusal names
them). A score's name says a judge graded it where it names a judge (:func:`whilecli.io.judge.
is_judge_name`) or is one of autoevals' LLM classifiers and LLM RAGAS scorers
(``braintrustdata/autoevals``, ``py/autoevals/llm.py``: the ``SpecFileClassifier`` subclasses,
each scoring under its class name; ``py/autoevals/ragas.py``: the ``OpenAILLMScorer``
subclasses).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from whilecli.io.judge import is_judge_name

#: autoevals scorers that ask a language model for the grade, by the name they score under.
LLM_SCORERS = frozenset(
    {"Battle", "ClosedQA", "Humor", "Factuality", "Possible", "Security", "Sql", "Summary"}
    | {"Translation", "LLMClassifier"}
    | {"ContextEntityRecall", "ContextRelevancy", "ContextRecall", "ContextPrecision"}
    | {"Faithfulness", "AnswerRelevancy", "AnswerCorrectness"}
)


def number(value: Any) -> float | None:
    """A score as a number (a boolean as 1.0 / 0.0); None for anything else, NaN included
    (pandas writes a missing score as NaN)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        out = float(value)
        return None if math.isnan(out) else out
    return None


def names(tables: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every score name that holds a number on some row, sorted (a trace's spans, and so its
    scores, come in no set order)."""
    return sorted({str(k) for table in tables for k, v in table.items() if number(v) is not None})


def pick(tables: list[Mapping[str, Any]]) -> str | None:
    """The score that grades: the only one, else the only one that is 0 or 1 wherever it is
    set; None where no score, or several, could be it."""
    found = names(tables)
    if len(found) == 1:
        return found[0]
    binary = [name for name in found if _binary(number(t.get(name)) for t in tables)]
    return binary[0] if len(binary) == 1 else None


def _binary(values: Iterable[float | None]) -> bool:
    present = [v for v in values if v is not None]
    return bool(present) and all(v in (0.0, 1.0) for v in present)


def judged(name: str) -> bool:
    """Whether a score's name says a language model graded it."""
    return name in LLM_SCORERS or is_judge_name(name)


def numbers(table: Mapping[str, Any]) -> dict[str, float]:
    """A row's scores that are numbers (booleans as 1.0 / 0.0), by name."""
    found = {str(k): n for k, v in table.items() if (n := number(v)) is not None}
    return dict(sorted(found.items()))
