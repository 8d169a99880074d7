"""``--fail-on``: the conditions a command exits 1 on, read one way for ``route``, ``check``,
``diff`` and ``watch`` (each names its own list). Light: read before any table is loaded."""

from __future__ import annotations

from collections.abc import Sequence

from whilecli.errors import UsageError


def parse_conditions(
    values: Sequence[str] | str | None,
    known: Sequence[str],
    *,
    kind: str = "policy",
    command: str | None = None,
) -> tuple[str, ...]:
    """The conditions ``--fail-on a,b`` names (comma-separated, repeatable), in ``known``'s
    order, each once: the one reading of the option for ``route``, ``check``, ``diff`` and
    ``watch``. ``all`` names every one and ``none`` none (it overrides a config file's list);
    ``none`` beside a condition says two opposite things and is refused, as is an unknown
    name (``kind`` is what the command calls them: policy, condition, alert)."""
    kinds = "policies" if kind == "policy" else f"{kind}s"
    items = [values] if isinstance(values, str) else list(values or ())
    spelled: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise UsageError(f"--fail-on: expected {kind} names, got {item!r}")
        if not item.replace(",", "").strip():  # '' or ',,': a slip, not "fail on nothing"
            raise UsageError(
                f"--fail-on {item!r} names no {kind}; {kinds}: {', '.join(known)} (or all,"
                " none: none fails on nothing)"
            )
        for raw in item.split(","):
            name = raw.strip().lower().replace("_", "-")
            if not name:
                continue
            if name not in (*known, "all", "none"):
                which = f" for whilecli {command}" if command else ""
                raise UsageError(
                    f"--fail-on: unknown {kind} {raw.strip()!r}{which};"
                    f" {kinds}: {', '.join(known)} (or all, none)"
                )
            spelled.append(name)
    if "none" in spelled and len(set(spelled)) > 1:
        other = next(n for n in spelled if n != "none")
        raise UsageError(
            f"--fail-on: none (fail on nothing) cannot go with {other!r}; pass one or the other"
        )
    named = set(known) if "all" in spelled else set(spelled)
    return tuple(name for name in known if name in named)
