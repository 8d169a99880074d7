"""The text style the reports of ``update``, ``ada`` and ``config`` share with the route's.

Numbers with 2 decimals (a count as a whole number; a value under 0.01 in two significant
digits, so it does not print as 0.00), labels in words (``admitted share``, not
``admitted_share``), a column read from a field as ``field ← column``, ``warning: ...`` and
``note: ...`` lines, no table borders, and every line within the report's width: the
terminal's, else ``COLUMNS``, else 100 (as the route's).
"""

from __future__ import annotations

import math
import os
import re
import shutil
import textwrap
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

#: The width off a terminal when ``COLUMNS`` does not say (the route's).
DEFAULT_WIDTH = 100
#: The one arrow for "read from": ``field ← column``.
FROM = "←"


def width(stream: TextIO) -> int:
    """The report's width on ``stream``: a terminal's own, else ``COLUMNS``, else 100."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    try:
        if stream.isatty():
            return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    except (AttributeError, ValueError):
        pass
    return DEFAULT_WIDTH


def number(value: Any) -> str:
    """A value as every report prints it: ``-`` for none, ``yes``/``no``, whole numbers as
    such, else :func:`fraction` (2
    decimals, two significant digits where that would print 0.00)."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return fraction(value)
    return str(value)


def fraction(value: float, digits: int = 2) -> str:
    """A measured value that is not a count (a share, an sd, a half-width, a gap) as every
    report prints it, the route's included: ``digits`` decimals, the style of the rates
    beside it; a value that would print as 0.00 but is not 0 in two significant digits
    (``0.0035``), so it never reads as none. A value printed beside the limit it is compared
    with goes through :func:`whilecli.route.model.against` instead."""
    if value != value:
        return "n/a"
    if not math.isfinite(value):
        return str(value)
    if value != 0 and abs(value) < 0.5 * 10**-digits:
        return f"{value:.2g}"
    return f"{value:.{digits}f}"


def label(key: str) -> str:
    """A stat's key in words: ``admitted_share`` → ``admitted share``."""
    return key.replace("_", " ")


#: A path and the place in it (``rows.jsonl line 3``): wrapped as one word. It starts only at
#: a word's start and reads up to its first slash without backtracking into it, so a long
#: word costs linear time, not quadratic.
_PLACE = re.compile(r"(?<!\S)[^\s/]*/\S* (?:line|row|entry) \d+")


def wrap(text: str, columns: int, *, indent: str = "", hang: str = "  ") -> list[str]:
    """``text`` in lines of at most ``columns``; a word longer than a line (a path) is kept
    whole rather than cut, and a path stays beside its line or row number."""
    glued = _PLACE.sub(lambda m: m.group(0).replace(" ", "\0"), text)
    lines = textwrap.wrap(
        glued,
        width=max(columns, 20),
        initial_indent=indent,
        subsequent_indent=indent + hang,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [indent.rstrip()]
    return [line.replace("\0", " ") for line in lines]


def pairs(rows: Sequence[tuple[str, str]], columns: int, *, indent: str = "  ") -> list[str]:
    """Label and value in two aligned columns, no borders; a value too long for its line
    continues under itself."""
    if not rows:
        return []
    left = max(len(k) for k, _ in rows) + 2
    out = []
    for key, value in rows:
        head = f"{indent}{key:<{left}}"
        room = max(columns - len(head), 20)
        parts = wrap(value, room, hang="") if value else [""]
        out.append((head + parts[0]).rstrip())
        out += [(" " * len(head) + p).rstrip() for p in parts[1:]]
    return out


def saying(kind: str, text: str) -> str:
    """One finding as every report words it: ``warning: ...`` or ``note: ...`` (no heading,
    no bullet), unwrapped, for a renderer that wraps it itself."""
    return f"{kind}: {text}"


def warning(text: str) -> str:
    """``warning: text``: the one warning style of every command's text report."""
    return saying("warning", text)


def said(kind: str, texts: Iterable[str], columns: int, *, indent: str = "") -> list[str]:
    """``warning: ...`` or ``note: ...`` lines, each wrapped with a hanging indent."""
    out: list[str] = []
    for text in texts:
        out += wrap(saying(kind, text), columns, indent=indent)
    return out
