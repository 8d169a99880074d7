"""A judge audit file is read or refused in one line, whatever its values: an agreement
outside [0, 1], a kappa outside [-1, 1] (Cohen's kappa cannot leave it), a count that is no
count (negative, fractional, a boolean, past what a float holds) and a key written twice
with two values are refused naming the field; a count written as 60.0 is 60. The verdict of
what is read is the reference rule, computed here by a plain Wilson bound."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError, UsageError
from whilecli.route.judges import MAX_AUDITED, load_audit

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**400), 10**400),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300),
    st.sampled_from([0, 1, 60, 60.0, 200, 0.5, 0.86, -0.2, 1.5, "60", 10**15, 10**15 + 1]),
)


def _wilson_low(successes: int, n: int, z: float = 1.96) -> float:
    p = successes / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - spread) / (1 + z * z / n)


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


@SETTINGS
@given(agreement=VALUES, kappa=VALUES, n=VALUES)
def test_an_audit_is_read_or_refused_naming_its_field(
    tmp_path: Path, agreement: Any, kappa: Any, n: Any
) -> None:
    path = Path(tempfile.mkdtemp(dir=tmp_path)) / "audit.json"
    path.write_text(json.dumps({"agreement": agreement, "kappa": kappa, "n": n}))
    valid = _number(agreement) and _number(kappa) and 0 <= agreement <= 1 and -1 <= kappa <= 1
    whole = isinstance(n, int) or (isinstance(n, float) and n.is_integer())
    count = int(n) if _number(n) and whole else None
    if not valid:
        with pytest.raises(UsageError):
            load_audit(path)
        return
    if n is None or count == 0:
        assert load_audit(path).ok is None
        return
    if count is None or not 0 < count <= MAX_AUDITED:
        with pytest.raises(UsageError, match="field 'n'"):
            load_audit(path)
        return
    audit = load_audit(path)
    low = _wilson_low(round(agreement * count), count)
    if abs(low - 0.8) > 1e-9:
        assert audit.ok == (low >= 0.8 and kappa >= 0.6)


def test_a_key_written_twice_with_two_values_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "audit.json"
    path.write_text('{"ok": false, "ok": true}')
    with pytest.raises((UsageError, InputError), match="'ok'"):
        load_audit(path)
    path.write_text('{"ok": true, "ok": true}')  # the same value twice says one thing
    assert load_audit(path).ok is True
