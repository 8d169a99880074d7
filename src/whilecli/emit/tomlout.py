"""TOML text for a config: tables as ``[a.b]`` headers, arrays of tables as ``[[a.b]]``.

``tomli_w`` writes each value; this module only lays out the headers so an array of tables
(``[[orchestrator.train.source]]``) reads the way prime-rl's own examples do.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import tomli_w

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE.match(k) else tomli_w.dumps({"k": k}).split("=", 1)[1].strip()


#: Characters a TOML comment may not hold (control characters other than tab; TOML 1.0,
#: "Comment"): each is written as a space.
_CONTROL = {c: " " for c in [*range(0x00, 0x09), *range(0x0A, 0x20), 0x7F]}


def comments(texts: list[str], width: int = 79) -> str:
    """``texts`` as TOML comment lines, each wrapped at ``width`` columns (``# `` first, a
    word never cut), control characters as spaces; empty when there are none."""
    import textwrap

    out: list[str] = []
    for text in texts:
        out += textwrap.wrap(
            text.translate(_CONTROL),
            width=width,
            initial_indent="# ",
            subsequent_indent="#   ",
            break_long_words=False,
            break_on_hyphens=False,
        )
    return "\n".join(out)


def _is_aot(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(i, Mapping) for i in v)


def dumps(config: Mapping[str, Any], header: str | None = None) -> str:
    """Serialise ``config`` (plain dicts, lists and scalars) as TOML.

    ``header`` (comment lines, each starting ``#``) opens the file; a TOML reader skips it."""
    out: list[str] = []
    _table(out, [], config, array=False)
    body = "\n".join(out).strip() + "\n"
    if header is None:
        return body
    if not all(line.startswith("#") for line in header.splitlines()):
        raise ValueError("a TOML header is comment lines only")
    return header.rstrip("\n") + "\n\n" + body


def _table(out: list[str], path: list[str], node: Mapping[str, Any], *, array: bool) -> None:
    scalars = {k: v for k, v in node.items() if not isinstance(v, Mapping) and not _is_aot(v)}
    tables = {k: v for k, v in node.items() if isinstance(v, Mapping)}
    arrays = {k: v for k, v in node.items() if _is_aot(v)}
    header = ".".join(_key(p) for p in path)
    if array:
        out.append(f"\n[[{header}]]")
    elif path and (scalars or not (tables or arrays)):
        out.append(f"\n[{header}]")
    if scalars:
        out.append(tomli_w.dumps(scalars).rstrip("\n"))
    for k, v in tables.items():
        _table(out, [*path, k], v, array=False)
    for k, items in arrays.items():
        for item in items:
            _table(out, [*path, k], item, array=True)
