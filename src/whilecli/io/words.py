"""Grades and truncation flags written as text (DESIGN section 1): what their words mean.

One rule for every reader: the polars scans (:func:`whilecli.io.facts.grade_of_text`,
:func:`~whilecli.io.facts.flag_of_text`), the line-by-line reader and rows already in memory
(:func:`grade_text`, :func:`flag_text`). Text is trimmed of blanks (space, tab, CR, LF) and
compared in lower case where it is ASCII. Plain Python: :mod:`whilecli.methods` reads rows
in memory without loading polars.
"""

from __future__ import annotations

import json
import re

from whilecli.io.aliases import BLANKS as BLANKS
from whilecli.io.aliases import CUT_REASONS, FINISHED_REASONS, FLAG_TRUE
from whilecli.io.aliases import FLAG_FALSE as _FLAG_FALSE
from whilecli.io.aliases import word as _word

#: A grade written as a word that means a pass (1.0) or a failure (0.0).
GRADE_TRUE = frozenset({"true", "pass", "passed", "correct", "yes", "success", "resolved"})
GRADE_FALSE = frozenset(
    {"false", "fail", "failed", "incorrect", "wrong", "no", "failure", "unresolved"}
)
#: Text a writer leaves where a value is missing: an ungraded row, an unknown truncation.
NO_VALUE = frozenset({"", "null", "none", "nan", "n/a", "na", "undefined", "unknown"})
#: A number written as text: decimal digits, an optional fraction and exponent (ASCII digits,
#: no ``_``), or an infinity (``inf``, ``-Infinity``: refused later as no finite reward).
NUMBER_TEXT = r"^[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity)$"
_NUMBER = re.compile(NUMBER_TEXT)
#: One value as a library's ``repr`` writes it, in lower case: a tensor's or an array's
#: (``tensor(1.)``, ``tensor([1.0000])``, ``tensor(0.5000, device='cuda:0')``,
#: ``array(1.)``), a NumPy scalar's (``np.float64(1.0)``, ``np.true_``): what ``str()`` of a
#: reward computed in torch or NumPy writes. The value inside is the grade (or the flag);
#: a list of two values (``tensor([1., 0.])``) is none.
WRAPPED_TEXT = (
    r"^(?:(?:np|numpy)\.(true|false)_|(?:(?:np|numpy|torch)\.)?(?:tensor|array|float16|float32"
    r"|float64|bfloat16|int8|int16|int32|int64|uint8|bool_?)\(\[*([^\[\](),]+?)\]*"
    r"(?:,\s*[a-z_]+=[^()]*)?\))$"
)
_WRAPPED = re.compile(WRAPPED_TEXT)


def unwrapped(word: str) -> str:
    """``word`` (trimmed, lower case: :func:`~whilecli.io.aliases.word`) without the
    library ``repr`` around one value (:data:`WRAPPED_TEXT`): ``tensor(1.)`` is ``1.``."""
    found = _WRAPPED.match(word)
    return word if found is None else (found.group(1) or found.group(2) or "").strip()


#: Truncation flags written as text: a flag's words, or a cut-off reason (``"length"``).
FLAG_CUT = FLAG_TRUE | CUT_REASONS
#: ... or not cut: a flag's words, or a reason the reply ended on its own (``"stop"``, the
#: complement a writer that puts the finish reason under ``truncated`` writes beside
#: ``"length"``); an error's reason (``"abort"``, ``"error"``) says neither.
FLAG_FALSE = _FLAG_FALSE | (FINISHED_REASONS - {"abort", "error", "load", "unload"})


def _quoted(text: str) -> str:
    shown = text if len(text) <= 24 else text[:21] + "..."
    return json.dumps(shown, ensure_ascii=False)


def grade_text(text: str) -> float | None:
    """A grade written as text: a number (``"1.0"``, ``" 1 "``, ``"5e-1"``), a word that means
    a pass or a failure (:data:`GRADE_TRUE`, :data:`GRADE_FALSE`), or None (ungraded) for
    a missing value's text (:data:`NO_VALUE`). Anything else (``"maybe"``) is no grade:
    ``ValueError`` with what to say at its line."""
    word = unwrapped(_word(text))
    if word in GRADE_TRUE:
        return 1.0
    if word in GRADE_FALSE:
        return 0.0
    if word in NO_VALUE:
        return None
    if _NUMBER.match(word):
        return float(word)
    raise ValueError(
        f"is the text {_quoted(text)}, not a grade (a number, true/false or pass/fail;"
        " null or n/a for no grade)"
    )


def flag_text(text: str) -> bool | None:
    """A truncation flag written as text: a flag's words (:data:`FLAG_TRUE`,
    :data:`FLAG_FALSE`, any case), a cut-off reason (``"length"``) or one of a reply that
    ended on its own (``"stop"``), None (unknown) for a
    missing value's text (:data:`NO_VALUE`, ``""`` among them). Anything else
    (``"maybe"``) says nothing: ``ValueError`` with what to say at its line."""
    word = unwrapped(_word(text))
    if word in FLAG_CUT:
        return True
    if word in FLAG_FALSE:
        return False
    if word in NO_VALUE:
        return None
    raise ValueError(
        f"is the text {_quoted(text)}, not true/false (or a finish reason such as 'length'"
        " or 'stop'; null or unknown when not known)"
    )
