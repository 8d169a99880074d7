"""``--set dotted.key=value`` overrides: values parsed as TOML, keys checked against the schema.

A key under ``orchestrator.train.source`` or ``orchestrator.eval.source`` (arrays of tables)
applies to every source of that array. ``orchestrator.algo.type`` is the method, set with
``--method``, not here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from whilecli import jsonout
from whilecli.emit import schema
from whilecli.errors import UsageError

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = None  # type: ignore[assignment]

ARRAYS = ("orchestrator.train.source", "orchestrator.eval.source")
RESERVED = {"orchestrator.algo.type": "the method is --method"}


#: A value opening like this is TOML syntax (a string, an array, an inline table): when it
#: does not parse, it is refused, never kept as a literal string.
_TOML_OPENERS = ('"', "'", "[", "{")


def parse_value(text: str, key: str = "") -> Any:
    """A TOML value (``1e-5``, ``true``, ``"x"``, ``[1, 2]``, ``{a = 1}``); a bare word that is
    not TOML is taken as a string (``Qwen/Qwen3-8B``). A value that opens a TOML string,
    array or table and does not parse (``"x``, an unterminated string) is refused."""
    where = f"--set {key}" if key else "--set"
    if "\n" in text or "\r" in text:
        raise UsageError(f"{where}: the value spans lines; write a newline as \\n in a TOML string")
    if tomllib is not None:
        try:
            doc = jsonout.parse_toml(f"v = {text}\n")
        except jsonout.TooDeep:
            raise UsageError(
                f"{where}: the value is nested too deeply (more than {jsonout.MAX_DEPTH} levels)"
            ) from None
        except tomllib.TOMLDecodeError as err:
            if text.startswith(_TOML_OPENERS):
                raise UsageError(f"{where}: {text!r} is not a TOML value ({err})") from None
            return text
        return doc["v"]
    try:
        return jsonout.parse(text)
    except ValueError:
        return text


def parse_override(item: str) -> tuple[str, Any]:
    """``"a.b=VALUE"`` → ``("a.b", value)``."""
    key, sep, value = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise UsageError(f"--set takes dotted.key=value, got {item!r}")
    return key, parse_value(value.strip(), key)


def pattern_of(key: str) -> str:
    """The schema pattern of a dotted key (``[]`` after an array of tables)."""
    for array in ARRAYS:
        if key.startswith(array + "."):
            return f"{array}[]{key[len(array) :]}"
    return key


def _assign(node: dict[str, Any], parts: list[str], value: Any, key: str) -> None:
    for i, part in enumerate(parts[:-1]):
        nxt = node.get(part)
        if isinstance(nxt, list):
            if not nxt:
                raise UsageError(f"--set {key}: there is no {'.'.join(parts[: i + 1])} entry")
            for item in nxt:
                _assign(item, parts[i + 1 :], value, key)
            return
        if nxt is None:
            nxt = node[part] = {}
        if not isinstance(nxt, dict):
            raise UsageError(f"--set {key}: {'.'.join(parts[: i + 1])} is a value, not a table")
        node = nxt
    node[parts[-1]] = value


def apply_overrides(
    config: dict[str, Any],
    pairs: Iterable[tuple[str, Any]],
    keys: Mapping[str, schema.Key] | None = None,
) -> list[tuple[str, Any]]:
    """Set each ``(dotted key, value)`` in ``config``; return the pairs applied, in order.

    ``keys`` is the schema table the keys must be in (the RL table unless told); a value of
    a type the key does not take is refused here (``--set model.name=1``)."""
    applied: list[tuple[str, Any]] = []
    given: dict[str, Any] = {}
    for key, value in pairs:
        if key in given and given[key] != value:
            raise UsageError(
                f"--set {key} is given twice ({given[key]!r}, then {value!r}); give it once"
            )
        given[key] = value
        parts = key.split(".")
        if any(not p for p in parts):
            raise UsageError(f"--set key {key!r} has an empty part")
        if key in RESERVED:
            raise UsageError(f"--set {key} is refused: {RESERVED[key]}")
        if schema.lookup(pattern_of(key), keys) is None:
            raise UsageError(
                f"--set {key}: prime-rl has no key '{key}' (unknown keys are errors in prime-rl)"
            )
        # the type now, before anything that reads the config (the renderer's model name)
        schema.check_value(pattern_of(key), key, value, variant=None, keys=keys)
        for array in ARRAYS:
            if key.startswith(array + ".") and not schema.get(config, array):
                raise UsageError(
                    f"--set {key}: there is no {array} entry"
                    + (" (pass --env ID)" if array.endswith("train.source") else "")
                )
        _assign(config, parts, value, key)
        if parts[-1] == "type":
            _drop_other_variant(config, key, value, given, keys)
        applied.append((key, value))
    return applied


def _drop_other_variant(
    config: dict[str, Any],
    key: str,
    variant: Any,
    given: Mapping[str, Any],
    keys: Mapping[str, schema.Key] | None,
) -> None:
    """``--set TABLE.type=V`` turns the table into another variant (``deployment.type =
    "multi_node"``): the keys whilecli wrote there for the variant it had chosen, which V
    does not take (``deployment.num_train_gpus``), leave with it. A key the user set stays,
    and the schema check names it."""
    table = schema.get(config, key[: -len(".type")])
    if not isinstance(table, dict):
        return
    prefix = key[: -len("type")]
    known = {
        v
        for pattern, entry in (keys if keys is not None else schema.KEYS).items()
        if pattern.startswith(pattern_of(prefix))
        for v in entry.variants
    }
    if variant not in known:  # no variant the schema knows: the check names what it holds
        return
    for name in list(table):
        dotted = f"{prefix}{name}"
        entry = schema.lookup(pattern_of(dotted), keys)
        if entry is None or not entry.variants or dotted in given:
            continue
        if variant not in entry.variants:
            del table[name]
