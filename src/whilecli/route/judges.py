"""Whether an audit of the judge clears it.

Which rows a judge graded is decided once, by the read (:mod:`whilecli.io.judge`: names of
columns, metrics, reward functions and scorers, and the reference SDK's per-row rule); its
:class:`~whilecli.io.judge.JudgeScan` is on the rows and on the route.

The audit verdict follows the reference: an explicit ``ok`` wins; otherwise it needs numeric
``agreement`` and ``kappa`` and an integer ``n`` > 0, and is ok when the Wilson lower bound
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
from whilecli.errors import InputError, UsageError
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


def audit_verdict(data: dict[str, Any], source: str = "given") -> Audit:
    """The verdict of an audit ``{ok}`` or ``{agreement, kappa, n}`` (reference SDK rule)."""
    from whilecli.route.model import against
    from whilecli.route.stats import wilson

    if "ok" in data:
        ok = data["ok"]
        if not isinstance(ok, bool):
            raise UsageError(f"{source}: ok must be true or false, got {ok!r}")
        return Audit(ok, f"the audit says ok = {str(ok).lower()}", source)
    agreement, kappa, n = data.get("agreement"), data.get("kappa"), data.get("n")
    if not (_finite_number(agreement) and _finite_number(kappa)):
        raise UsageError(f"{source}: an audit needs ok, or numeric agreement and kappa with n")
    if not 0 <= agreement <= 1:
        raise UsageError(f"{source}: field 'agreement' must lie in [0, 1], got {agreement}")
    if not -1 <= kappa <= 1:  # Cohen's kappa: 1 - (1 - p_o) / (1 - p_e), at most 1, at least -1
        raise UsageError(f"{source}: field 'kappa' must lie in [-1, 1], got {kappa}")
    if isinstance(n, float) and n.is_integer():
        n = int(n)  # 60.0: a count a writer stored as a float
    if n is None or (isinstance(n, int) and not isinstance(n, bool) and n == 0):
        return Audit(None, f"agreement {agreement} without a count n: no verdict", source)
    if not (isinstance(n, int) and not isinstance(n, bool) and 0 < n <= MAX_AUDITED):
        raise UsageError(
            f"{source}: field 'n' must be a count of audited items in [1, {MAX_AUDITED:.0e}],"
            f" got {jsonout.dumps(n)[:40]}"
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
    p = Path(path)
    try:
        text = p.read_bytes()
    except OSError as err:
        raise UsageError(f"--judge-audit {p}: cannot read: {err.strerror}") from None
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
