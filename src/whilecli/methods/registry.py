"""Method names → classes, imported lazily, and construction from the knobs a user gave.

``METHODS`` maps each name ``while update --method`` accepts to its class; a class is imported
the first time it is looked up, so naming one never imports the others (or torch, until a
method module is loaded). :func:`make_method` passes a class only the knobs its constructor
takes and refuses a knob the method does not take, naming both.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterator, Mapping
from typing import Any

from whilecli.errors import UsageError

#: name → (candidate modules under whilecli.methods, class name). First importable wins.
_SPECS: dict[str, tuple[tuple[str, ...], str]] = {
    "flash_reinforce": (("flash_reinforce",), "FlashReinforce"),
    "sao": (("sao",), "SAO"),
    "bpco": (("bpco",), "BPCO"),
    "grpo": (("grpo", "group_baselines"), "GRPO"),
    "max_rl": (("group_baselines", "grpo"), "MaxRL"),
    "rae": (("group_baselines", "grpo"), "RAE"),
    "opd": (("distill",), "OPD"),
    "opsd": (("distill",), "OPSD"),
    "dpo": (("dpo",), "DPO"),
    "sft": (("sft",), "SFT"),
}


def _load(name: str) -> type | None:
    modules, cls_name = _SPECS[name]
    for module in modules:
        try:
            mod = importlib.import_module(f"whilecli.methods.{module}")
        except ImportError:
            continue
        cls = getattr(mod, cls_name, None)
        if isinstance(cls, type):
            return cls
    return None


class _LazyMethods(Mapping[str, type]):
    """A read-only ``{name: class}`` that imports each class on first access."""

    def __init__(self) -> None:
        self._cache: dict[str, type] = {}

    def __getitem__(self, name: str) -> type:
        if name not in _SPECS:
            raise KeyError(name)
        if name not in self._cache:
            cls = _load(name)
            if cls is None:
                raise KeyError(name)
            self._cache[name] = cls
        return self._cache[name]

    def __iter__(self) -> Iterator[str]:
        return iter(_SPECS)

    def __len__(self) -> int:
        return len(_SPECS)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in _SPECS


#: Every method name ``while update`` knows, in display order (``METHODS[name]`` → class).
METHODS: Mapping[str, type] = _LazyMethods()


def method_class(name: str) -> type:
    """The class behind ``name``; UsageError for an unknown or not yet available method."""
    if name not in _SPECS:
        raise UsageError(f"unknown method {name!r}; known: {', '.join(_SPECS)}")
    try:
        return METHODS[name]
    except KeyError:
        raise UsageError(f"method {name!r} is not available in this build") from None


def accepted_knobs(cls: type) -> set[str]:
    """The keyword arguments ``cls``'s constructor takes."""
    params = inspect.signature(cls.__init__).parameters
    return {
        p.name
        for p in params.values()
        if p.name != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }


def make_method(name: str, knobs: Mapping[str, Any]) -> Any:
    """Build method ``name`` from ``knobs`` (None values are skipped as not given).

    A knob the constructor does not take is refused: ``--beta does not apply to
    flash_reinforce``.
    """
    cls = method_class(name)
    given = {k: v for k, v in knobs.items() if v is not None}
    accepted = accepted_knobs(cls)
    for knob in given:
        if knob not in accepted:
            flag = "--" + knob.replace("_", "-")
            takes = ", ".join("--" + k.replace("_", "-") for k in sorted(accepted)) or "none"
            raise UsageError(f"{flag} does not apply to {name} (it takes: {takes})")
    try:
        return cls(**given)
    except (TypeError, ValueError) as err:
        raise UsageError(f"{name}: {err}") from None
