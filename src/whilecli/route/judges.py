"""Whether an audit of the judge clears it.

Which rows a judge graded is decided once, by the read (:mod:`whilecli.io.judge`: names of
columns, metrics, reward functions and scorers, and the reference SDK's per-row rule); its
:class:`~whilecli.io.judge.JudgeScan` is on the rows and on the route.

The audit verdict follows the reference: an explicit ``ok`` wins; otherwise it needs numeric
``agreement`` and ``kappa`` and an integer ``n`` > 0 (``n`` = 0 is refused as a negative
count is; no ``n`` at all is no verdict), and is ok when the Wilson lower bound
(z = 1.96) of ``round(agreement·n)`` agreements in ``n`` (Python's round, half to even) is at
least 0.8 and ``kappa`` at least 0.6 (Cohen's kappa). 0.86 with n = 60 fails (lower bound
0.75); 0.86 with n = 200 passes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from whilecli import jsonout
from whilecli.errors import InputError, UsageError, shown_path
from whilecli.io.judge import JUDGE_KINDS, JudgeScan

__all__ = ["JUDGE_KINDS", "Audit", "JudgeScan", "audit_verdict", "load_audit"]

#: Smallest Wilson lower bound of the judge's agreement with people.
MIN_AGREEMENT = 0.8
#: Smallest Cohen's kappa of the judge against people.
MIN_KAPPA = 0.6
#: Most audited items a count may say (past it no float holds every count exactly).
MAX_AUDITED = 10**15


@dataclass(frozen=True)
class Audit:
    """A judge audit and its verdict: ``ok`` True (clears), False (fails) or None (no verdict)."""

    ok: bool | None
    why: str
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "why": self.why, "from": self.source}


def _finite_number(value: Any) -> TypeGuard[float]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return isinstance(value, int) or math.isfinite(value)  # an int of any size is finite


def _spelled(value: Any) -> str:
    import datetime

    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (datetime.date, datetime.time)):  # a TOML date, time or datetime
        return value.isoformat()
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)  # nan, inf, -inf
    if isinstance(value, int):
        if abs(value) < 10**30:
            return str(value)
        digits = int(abs(value).bit_length() * math.log10(2)) + 1  # str() stops at 4300
        return f"{'-' if value < 0 else ''}an integer of about {digits} digits"
    if isinstance(value, str):
        return jsonout.dumps(value[:40])
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_spelled(v) for v in value[:8]) + "]"
    if isinstance(value, dict):
        items = list(value.items())[:8]
        return "{" + ", ".join(f"{_spelled(k)}: {_spelled(v)}" for k, v in items) + "}"
    return type(value).__name__


def _shown(value: Any) -> str:
    """A field's value as an audit file spells it, whatever its type (JSON or TOML): true,
    60.5, inf (JSON's 1e400 reads as one), "60", 1979-05-27, 07:32:00, [1, 2], {"a": 1}; cut
    to one short line."""
    text = _spelled(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _field(data: dict[str, Any], name: str, low: float, high: float, source: str) -> float:
    """``agreement`` or ``kappa``: a finite number in [low, high], or one line naming it."""
    if name not in data:
        raise UsageError(
            f"{source}: an audit needs ok, or agreement, kappa and n: field {name!r} is missing"
        )
    value = data[name]
    if not (_finite_number(value) and low <= value <= high):
        raise UsageError(
            f"{source}: field {name!r} must be a number in [{low:g}, {high:g}], got {_shown(value)}"
        )
    return value


def audit_verdict(data: dict[str, Any], source: str = "given") -> Audit:
    """The verdict of an audit ``{ok}`` or ``{agreement, kappa, n}`` (reference SDK rule).

    Every field of any other value (a string, a boolean, a date, an array, a table, a number
    out of its range or not finite) is refused in one line naming the field and the value as
    written; an absent (or JSON null) ``n`` is no verdict."""
    from whilecli.route.model import against
    from whilecli.route.stats import wilson

    if "ok" in data:
        ok = data["ok"]
        if not isinstance(ok, bool):
            raise UsageError(f"{source}: field 'ok' must be true or false, got {_shown(ok)}")
        return Audit(ok, f"the audit says ok = {str(ok).lower()}", source)
    agreement = _field(data, "agreement", 0, 1, source)
    # Cohen's kappa: 1 - (1 - p_o) / (1 - p_e), at most 1, at least -1
    kappa = _field(data, "kappa", -1, 1, source)
    given = n = data.get("n")
    if n is None:
        return Audit(
            None, f"agreement {agreement} and kappa {kappa} without a count n: no verdict", source
        )
    if isinstance(n, float) and n.is_integer():
        n = int(n)  # 60.0: a count a writer stored as a float
    if not (isinstance(n, int) and not isinstance(n, bool) and 0 < n <= MAX_AUDITED):
        raise UsageError(
            f"{source}: field 'n' must be a count of audited items, a whole number in"
            f" [1, {MAX_AUDITED:.0e}], got {_shown(given)}"
        )
    low = wilson(round(agreement * n), n).low
    assert low is not None
    ok = low >= MIN_AGREEMENT and kappa >= MIN_KAPPA
    bound, want = against(low, MIN_AGREEMENT)  # the digits that tell them apart
    why = (
        f"agreement {agreement} over n={n} audited items has Wilson lower bound {bound} "
        f"(want >= {want}), kappa {kappa} (want >= {MIN_KAPPA})"
    )
    return Audit(ok, why, source)


def load_audit(path: str | Path) -> Audit:
    """Read an audit file (JSON, or TOML by its ``.toml`` suffix) and give its verdict."""
    from whilecli.fileio import UnreadableFile, read_regular

    p = Path(path)
    try:  # a regular file only: a FIFO would wait for a writer forever
        text = read_regular(p)
    except UnreadableFile as err:
        raise UsageError(f"--judge-audit {err}") from None
    if text is None:
        raise UsageError(f"--judge-audit {shown_path(p)}: cannot read: no such file")
    try:
        if p.suffix.lower() == ".toml":
            data = jsonout.loads_toml(text.decode("utf-8"), file=str(p))
        else:
            data = jsonout.loads(text, file=str(p))
    except InputError as err:
        raise UsageError(f"--judge-audit {err}") from None
    except (ValueError, ImportError) as err:
        raise UsageError(f"--judge-audit {p}: cannot parse: {err}") from None
    if not isinstance(data, dict):
        raise UsageError(f"--judge-audit {p}: expected an object with ok or agreement/kappa/n")
    try:
        return audit_verdict(data, str(p))
    except UsageError as err:  # named as the option that gave the file
        raise UsageError(f"--judge-audit {err}") from None
