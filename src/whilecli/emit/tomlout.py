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
