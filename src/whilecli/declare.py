"""How a library options dataclass declares the command-line option of a field, once.

A field's ``metadata`` (made by :func:`flag`) holds its flag, help line, help panel, value
name, short flag, shown default and the names it takes; the default and the type are the
field's own, and the dataclass checks the value itself (``__post_init__``). The command line
generates its options from these declarations (:func:`whilecli.commands._common.option`), so
a default, a range or a help text is written in the library and nowhere else, as prime-rl's
config fields are (``decay: float = Field(0.95, ge=0.0, lt=1.0)`` with its docstring).

This module imports nothing heavy: the command line reads the declarations while it parses.
"""

from __future__ import annotations

import dataclasses
from typing import Any

#: The key of a field's metadata that marks it as a command-line option.
FLAG = "flag"


def flag(
    name: str,
    help: str,
    *,
    panel: str | None = None,
    metavar: str | None = None,
    short: str | None = None,
    show_default: str | bool = True,
    choices: tuple[str, ...] = (),
    refusal: str | None = None,
) -> dict[str, Any]:
    """A field's command-line declaration: its flag (``--missing``), help line, help panel,
    value name, short flag (``-f``), shown default, the names it takes (``choices``, matched
    in any case) and the one-line refusal of another name (``{value!r}``: the name given)."""
    return {
        "choices": choices,
        FLAG: name,
        "help": help,
        "panel": panel,
        "metavar": metavar,
        "short": short,
        "show_default": show_default,
        "refusal": refusal,
    }


def declared(cls: type) -> dict[str, dataclasses.Field[Any]]:
    """The fields of dataclass ``cls`` that declare a command-line option, by name."""
    return {f.name: f for f in dataclasses.fields(cls) if FLAG in f.metadata}


def default_of(spec: dataclasses.Field[Any]) -> Any:
    """A field's default (a factory's value for a mutable one)."""
    if spec.default is not dataclasses.MISSING:
        return spec.default
    if spec.default_factory is not dataclasses.MISSING:
        return spec.default_factory()
    raise TypeError(f"field {spec.name} declares an option but has no default")
