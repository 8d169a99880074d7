"""Every number ``whilecli watch`` reads from a run's files (a metrics row's ``step`` and
off-policy lag, a ``step_N`` folder, a verl ``N.jsonl``) is read, or refused in one line that
names the file, the line and the field (exit 2): past int64, negative, NaN, infinite, not a
whole number or not a number at all. Never an internal error."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from conftest import ROOT
from whilecli.cli import app

RUN = ROOT / "examples" / "run"
SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
#: A value as a metrics line writes it (JSON text), and the number it is (None: not one).
VALUES = st.one_of(
    st.integers(-(10**30), 10**30).map(lambda i: (str(i), i)),
    st.sampled_from([2**63 - 1, 2**63, -(2**63) - 1, 10**400, -1, 0]).map(lambda i: (str(i), i)),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda f: (repr(f), f)),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", "-1e400"]).map(lambda t: (t, None)),
    st.sampled_from(['"11"', "true", "false", "[1]", '{"a": 1}', '""']).map(lambda t: (t, None)),
)


def _invoke(args: list[str]) -> tuple[int, str, str]:
    done = CliRunner().invoke(app, args)
    return done.exit_code, done.stdout, done.stderr


#: The example run's last steps kept: the numbers under test sit after them, and reading the
#: run's every step on each of the examples hypothesis draws would be most of the time spent.
KEPT_FROM = 9


def _copy(tmp: Path) -> Path:
    """The example run from step KEPT_FROM on: its metrics rows and its step folders."""
    run = Path(tempfile.mkdtemp(dir=tmp)) / "run"
    shutil.copytree(RUN, run, ignore=_earlier_steps)
    kept = [
        line
        for line in (RUN / "metrics.jsonl").read_text().splitlines()
        if json.loads(line)["step"] >= KEPT_FROM
    ]
    (run / "metrics.jsonl").write_text("\n".join(kept) + "\n")
    return run


def _earlier_steps(folder: str, names: list[str]) -> list[str]:
    if Path(folder).name != "rollouts":
        return []
    return [name for name in names if int(name.removeprefix("step_")) < KEPT_FROM]


def _fits(field: str, number: Any) -> bool:
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        return False
    if field == "step" or field == "off_policy/max":
        whole = isinstance(number, int) or number.is_integer()
        if field == "step" and not isinstance(number, int):
            return False
        return whole and 0 <= number <= 2**63 - 1
    return 0 <= number <= 2**63 - 1


@SETTINGS
@given(
    field=st.sampled_from(["step", "off_policy/mean", "off_policy/max"]),
    value=VALUES,
    json_out=st.booleans(),
)
def test_a_metrics_number_is_read_or_refused_naming_its_line(
    tmp_path: Path, field: str, value: tuple[str, Any], json_out: bool
) -> None:
    run = _copy(tmp_path)
    metrics = run / "metrics.jsonl"
    lines = metrics.read_bytes().splitlines()
    row = {"step": 11, "producer": "orch"}
    row.pop(field, None)
    text = json.dumps(row)[:-1] + f', "{field}": {value[0]}}}'
    metrics.write_bytes(b"\n".join(lines) + b"\n" + text.encode() + b"\n")
    code, out, err = _invoke(["watch", str(run)] + (["--format", "json"] if json_out else []))
    if _fits(field, value[1]):
        assert code in (0, 1), err
        return
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"metrics.jsonl:{len(lines) + 1}: field '{field}'" in err


@SETTINGS
@given(digits=st.one_of(st.integers(0, 10**30).map(str), st.sampled_from(["9" * 240, "0" * 30])))
def test_a_step_folder_number_is_read_or_refused_naming_it(tmp_path: Path, digits: str) -> None:
    run = _copy(tmp_path)
    (run / "rollouts" / f"step_{digits}").mkdir(exist_ok=True)
    code, _, err = _invoke(["watch", str(run)])
    if int(digits) <= 2**63 - 1:
        assert code in (0, 1), err
        return
    assert code == 2 and err.count("\n") == 1
    assert f"step_{digits}: field 'step'" in err


def test_a_verl_file_past_int64_is_refused_naming_it(tmp_path: Path) -> None:
    run = tmp_path / "verl"
    run.mkdir()
    row = json.dumps({"input": "q", "output": "a", "score": 1.0, "step": 1}) + "\n"
    (run / "1.jsonl").write_text(row)
    (run / f"{2**64}.jsonl").write_text(row)
    code, _, err = _invoke(["watch", str(run), "--layout", "verl"])
    assert code == 2 and f"{2**64}.jsonl: field 'step'" in err and err.count("\n") == 1
