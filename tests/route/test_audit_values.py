"""A judge audit file is read or refused in one line, whatever its values: an agreement
outside [0, 1], a kappa outside [-1, 1] (Cohen's kappa cannot leave it), a count that is no
count (zero, negative, fractional, a boolean, past what a float holds), any TOML value of
another type (a date, a time, an array, a table) and a key written twice
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
    if n is None:  # no count: no verdict
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


#: One TOML value of every type, as written in a file, and whether it is a number.
TOML_VALUES = st.one_of(
    st.dates().map(lambda d: (d.isoformat(), False)),
    st.times().map(lambda t: (t.isoformat(), False)),
    st.datetimes().map(lambda d: (d.isoformat(), False)),
    st.datetimes().map(lambda d: (d.isoformat() + "Z", False)),
    st.booleans().map(lambda b: ("true" if b else "false", False)),
    st.text(st.characters(codec="ascii", categories=("L", "N")), max_size=5).map(
        lambda t: (f'"{t}"', False)
    ),
    st.lists(st.integers(-3, 3), max_size=3).map(lambda xs: (repr(xs), False)),
    st.sampled_from(["{}", "{a = 1}", "{d = 1979-05-27}", "[1979-05-27]", "[[1], {x = 2}]"]).map(
        lambda t: (t, False)
    ),
    st.sampled_from(["inf", "-inf", "nan", "+nan"]).map(lambda t: (t, False)),
    st.integers(-(2**63), 2**63 - 1).map(lambda i: (str(i), True)),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda f: (repr(f), True)),
)
GOOD = {"agreement": "0.92", "kappa": "0.75", "n": "250", "ok": None}


@SETTINGS
@given(field=st.sampled_from(["agreement", "kappa", "n", "ok"]), value=TOML_VALUES)
def test_every_toml_value_in_every_audit_field_is_read_or_refused_in_one_line(
    tmp_path: Path, field: str, value: tuple[str, bool]
) -> None:
    """A TOML audit with any value of any type in any field gives a verdict or one line
    naming the field and the value (a usage error, exit 2): never an internal error."""
    written, number = value
    fields = {k: v for k, v in GOOD.items() if v is not None} | {field: written}
    path = Path(tempfile.mkdtemp(dir=tmp_path)) / "audit.toml"
    path.write_text("".join(f"{k} = {v}\n" for k, v in fields.items()))
    try:
        audit = load_audit(path)
    except UsageError as err:
        said = str(err)
        assert "\n" not in said and f"field {field!r}" in said and "got " in said
        assert not (field == "ok" and written in ("true", "false"))
        return
    assert number or field == "ok" and written in ("true", "false")
    assert audit.ok in (True, False)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "n = 0",
            "field 'n' must be a count of audited items, a whole number in [1, 1e+15], got 0",
        ),
        ("n = -500", "got -500"),
        ("n = 1979-05-27", "got 1979-05-27"),
        ("n = 07:32:00", "got 07:32:00"),
        ("n = 60.5", "got 60.5"),
        ("n = inf", "got inf"),
        ('n = "60"', 'got "60"'),
        ("kappa = 1979-05-27", "field 'kappa' must be a number in [-1, 1], got 1979-05-27"),
        ("agreement = [0.9]", "field 'agreement' must be a number in [0, 1], got [0.9]"),
        ("ok = 1979-05-27", "field 'ok' must be true or false, got 1979-05-27"),
    ],
)
def test_an_audit_refusal_names_the_value_as_written(tmp_path: Path, text: str, said: str) -> None:
    key = text.split(" = ")[0]
    fields = {k: v for k, v in GOOD.items() if v is not None and k != key}
    path = tmp_path / "audit.toml"
    path.write_text("".join(f"{k} = {v}\n" for k, v in fields.items()) + text + "\n")
    with pytest.raises(UsageError) as err:
        load_audit(path)
    assert said in str(err.value)


def test_a_count_past_a_float_is_shown_as_read(tmp_path: Path) -> None:
    """JSON's 1e400 reads as infinity: the refusal says so, not null."""
    path = tmp_path / "audit.json"
    path.write_text('{"agreement": 0.9, "kappa": 0.7, "n": 1e400}')
    with pytest.raises(UsageError, match="field 'n' .* got inf$"):
        load_audit(path)
