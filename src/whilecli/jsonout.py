"""JSON that every JSON reader takes: no ``NaN``, ``Infinity`` or ``-Infinity``.

Python's ``json.dumps`` writes those three by default, and they are not JSON (RFC 8259):
``jq``, JavaScript's ``JSON.parse`` and most other readers refuse them. Every JSON whilecli
prints or writes goes through :func:`dumps`, which writes a non-finite number as ``null``.
``null`` in a number field means "no finite value": a knob set to infinity (``update
--trust inf``: no gate), or a statistic that has no value on these rows (a variance over
one row, a ratio over zero).

The JSON and TOML the program is given beside its rows (a rae state file, a tokenizer.json,
a summary's header, a metadata.json, a pyproject's policy table) are parsed by
:func:`loads` and :func:`loads_toml`: one depth guard, one located error line.
"""

from __future__ import annotations

import codecs
import json
import math
import re
import sys
from typing import Any

from whilecli.errors import InputError

#: The version of every JSON report's schema (``docs/json-schema.md``): each report carries it
#: as ``schema_version``, which changes when a key is renamed or removed.
SCHEMA_VERSION = 1


def versioned(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` with ``schema_version`` first."""
    return {"schema_version": SCHEMA_VERSION, **report}


def finite(value: Any) -> Any:
    """``value`` with every non-finite float (in dicts, lists and tuples too) as None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` of :func:`finite` ``(value)``, refusing any NaN or infinity left.

    ``ensure_ascii=False`` (text as itself, not ``\\u`` escapes) holds only where the
    result stays valid JSON in any encoding it is written in: a string that holds a lone
    surrogate (an id from ``"\\ud800"``, a file name that is not UTF-8), or a standard
    output whose encoding is not UTF-8, gets escapes instead.
    """
    text = json.dumps(finite(value), allow_nan=False, **kwargs)
    if kwargs.get("ensure_ascii", True) or text.isascii():
        return text
    if _SURROGATE.search(text) or not _utf8_stdout():
        return json.dumps(finite(value), allow_nan=False, **{**kwargs, "ensure_ascii": True})
    return text


def _long_number(text: str | bytes) -> json.JSONDecodeError:
    """The decode error of an integer longer than Python converts (``sys.int_info``'s
    default limit, 4300 digits), at the place it starts."""
    doc = text if isinstance(text, str) else text.decode("utf-8", "replace")
    limit = sys.get_int_max_str_digits()
    found = re.search(rf"\d{{{limit + 1},}}", doc)
    at = found.start() if found else 0
    return json.JSONDecodeError(f"a number of more than {limit} digits", doc, at)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _utf8_stdout() -> bool:
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    return codecs.lookup(encoding).name == "utf-8"


# --- reading the JSON and TOML the program is given ----------------------------------------

#: Deepest nesting any JSON the program parses may have: rows (a JSONL line, a converted
#: document, an ``.eval`` member), prompts kept as JSON text, sidecars and option files. A
#: real one nests a few levels; past Python's recursion limit a parser, or a walk of what it
#: returns, would fail.
MAX_DEPTH = 100


class TooDeep(ValueError):
    """JSON nested past :data:`MAX_DEPTH` (``line``: where it first does, 1-based)."""

    def __init__(self, line: int | None) -> None:
        super().__init__(f"JSON nested too deeply (more than {MAX_DEPTH} levels)")
        self.line = line


class RepeatedKey(ValueError):
    """A key written twice in one JSON object, with two different values."""

    def __init__(self, key: str, first: Any, second: Any) -> None:
        shown = " and ".join(dumps(v, ensure_ascii=False)[:40] for v in (first, second))
        super().__init__(
            f"written twice in one object, with different values ({shown}): JSON readers"
            " disagree on which one counts (Python's json and jq take the last, polars the"
            " first); write the key once (jq -c . FILE keeps the last)"
        )
        self.key = key


def one_value_per_key(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` for rows: a key repeated with the same value is read once; a key
    repeated with different values is refused (:class:`RepeatedKey`), since readers disagree
    on which value counts (RFC 8259 section 4 leaves it open)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            if out[key] != value:
                raise RepeatedKey(key, out[key], value)
            continue
        out[key] = value
    return out


def parse(text: str | bytes, *, pairs: Any = None, controls: bool = False) -> Any:
    """Every JSON the program reads is parsed here: ``json.loads`` (``pairs``: its
    ``object_pairs_hook``) with one depth guard (:class:`TooDeep` past :data:`MAX_DEPTH`, never
    a ``RecursionError``), and a lone UTF-16 surrogate escape (``"\\ud800"``, which is no
    character and no UTF-8 encoder takes) read as U+0000, as the fast polars reader reads it,
    so every path reads the same text. ``controls``: control characters written raw inside
    strings are read as themselves (JSON text a reader rebuilt from a value, where a tab may
    come back unescaped), where a reader compares what the text says. Raises ``json.JSONDecodeError`` or ``ValueError``
    (bytes that are not UTF-8) as ``json.loads`` does."""
    try:
        value = json.loads(text, object_pairs_hook=pairs, strict=not controls)
    except RecursionError:
        raise TooDeep(deep_line(text)) from None
    except ValueError as err:
        if "integer string conversion" not in str(err):
            raise
        raise _long_number(text) from None
    brackets = (
        text.count("[") + text.count("{")
        if isinstance(text, str)
        else (text.count(b"[") + text.count(b"{"))
    )
    if brackets > MAX_DEPTH and _too_deep(value):
        raise TooDeep(deep_line(text))
    escapes = ("\\ud", "\\uD") if isinstance(text, str) else (b"\\ud", b"\\uD")
    if escapes[0] in text or escapes[1] in text:  # type: ignore[operator]
        value = _no_surrogates(value)
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")


def _no_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (keys too) read as U+0000."""
    if isinstance(value, str):
        return _SURROGATE.sub("\x00", value)
    if isinstance(value, list):
        return [_no_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_no_surrogates(k): _no_surrogates(v) for k, v in value.items()}
    return value


def deep_line(text: str | bytes, limit: int = MAX_DEPTH) -> int | None:
    """The 1-based line where brackets outside strings first nest past ``limit``, else None."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    depth, line, in_string, escaped = 0, 1, False, False
    for ch in text:
        if ch == "\n":
            line += 1
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return line
        elif ch in "]}":
            depth -= 1
    return None


def _too_deep(value: Any) -> bool:
    """Whether ``value`` nests deeper than :data:`MAX_DEPTH` (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth >= MAX_DEPTH:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _deep(file: str | None, what: str) -> InputError:
    return InputError(f"{what} nests deeper than {MAX_DEPTH} levels", file=file)


def loads(
    text: str | bytes, *, file: str | None = None, what: str = "JSON", lenient: bool = False
) -> Any:
    """Parse a JSON sidecar or option file: the one parse with a depth guard. Bad JSON, or
    JSON nested past :data:`MAX_DEPTH`, is one :class:`InputError` naming ``file`` (and the
    line); the caller type-checks the fields it uses. ``lenient``: text that is not JSON is
    None (a file that may or may not be the sidecar looked for), as is one nested past
    :data:`MAX_DEPTH` (a sidecar left unread)."""
    try:
        value = parse(text, pairs=one_value_per_key)
    except TooDeep:
        if lenient:
            return None
        raise _deep(file, what) from None
    except RepeatedKey as err:  # one key, two values: which one counts is no reader's guess
        if lenient:
            return None
        raise InputError(str(err), file=file, field=err.key) from None
    except json.JSONDecodeError as err:
        if lenient:
            return None
        raise InputError(f"not valid {what} ({err.msg})", file=file, line=err.lineno) from None
    except ValueError as err:  # bytes that are not UTF-8
        if lenient:
            return None
        raise InputError(f"not valid {what} ({' '.join(str(err).split())})", file=file) from None
    return value


def loads_toml(
    text: str, *, file: str | None = None, what: str = "TOML", lenient: bool = False
) -> Any:
    """Parse a TOML file with the same depth guard as :func:`loads`."""
    import tomllib

    try:
        return parse_toml(text)
    except TooDeep:
        if lenient:
            return None
        raise _deep(file, what) from None
    except tomllib.TOMLDecodeError as err:
        if lenient:
            return None
        raise InputError(f"not valid {what} ({err})", file=file) from None


def parse_toml(text: str) -> Any:
    """TOML text → its value, nested no deeper than :data:`MAX_DEPTH`: deeper (or deep enough
    to exhaust the parser's recursion) is :class:`TooDeep`; text that is not TOML raises
    ``tomllib.TOMLDecodeError``. The one TOML parse, for files and ``--set`` values alike."""
    import tomllib

    try:
        value = tomllib.loads(text)
    except RecursionError:
        raise TooDeep(None) from None
    if _too_deep(value):
        raise TooDeep(None)
    return value
