"""``whilecli watch`` on the command line: JSON lines, exit codes, one-line errors."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from conftest import ROOT
from whilecli.cli import app


def _make_run() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_run", ROOT / "examples" / "make_run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_run = _make_run()


@pytest.fixture
def prime_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    make_run.write_prime_rl(run, 10, make_run.Scenario(tasks=4))
    return run


def _invoke(args: list[str]) -> tuple[int, str, str]:
    done = CliRunner().invoke(app, args)
    return done.exit_code, done.stdout, done.stderr


def test_json_is_one_object_per_step(prime_run: Path) -> None:
    code, out, _ = _invoke(["watch", str(prime_run), "--format", "json"])
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["step"] for r in records] == list(range(1, 11))
    assert all(r["schema_version"] == 1 and r["layout"] == "prime-rl" for r in records)
    first = records[0]
    assert first["source"] == "rollouts/step_1/train/all/traces.jsonl"
    assert first["rows"] == 16 and first["tasks"] == 4
    assert first["pass_at_1"]["n_tasks"] == 4 and first["pass_at_1"]["low"] is not None
    assert first["route"]["route"] == "grpo" and first["route"]["method"] == "grpo"
    assert records[1]["off_policy"] == {"mean": 1.0, "max": 1, "from": "rows"}  # run.work.step
    fired = [(a["kind"], a["step"], a["method"]) for r in records for a in r["alerts"]]
    assert fired == [("floor", 7, "sft"), ("truncated-passes", 9, None)]  # a 0.6B model: SFT
    assert records[8]["truncated_passes"] == 1 and records[8]["route"]["route"] == "fix-reward"


def test_fail_on_turns_alerts_into_exit_1(prime_run: Path) -> None:
    assert _invoke(["watch", str(prime_run), "--fail-on", "floor"])[0] == 1
    assert _invoke(["watch", str(prime_run), "--fail-on", "all"])[0] == 1
    assert _invoke(["watch", str(prime_run), "--fail-on", "saturated,errors"])[0] == 0
    assert _invoke(["watch", str(prime_run), "--fail-on", "none"])[0] == 0


def test_text_report_fits_80_columns(prime_run: Path) -> None:
    code, out, _ = _invoke(["watch", str(prime_run)])
    assert code == 0
    assert all(len(line) <= 80 for line in out.splitlines()), out
    assert out.splitlines()[-1] == "10 steps; alerts: floor at step 7, truncated-passes at step 9"


def test_no_step_yet_exits_0_and_says_so(tmp_path: Path) -> None:
    code, out, err = _invoke(["watch", str(tmp_path)])
    assert code == 0 and "no finished step yet" in out
    code, out, err = _invoke(["watch", str(tmp_path), "--format", "json"])
    assert code == 0 and out == "" and "no finished step yet" in err


def test_bad_input_is_one_located_line(prime_run: Path, tmp_path: Path) -> None:
    with open(prime_run / "metrics.jsonl", "a") as fh:
        fh.write("{oops\n")
    code, _, err = _invoke(["watch", str(prime_run)])
    assert code == 2 and err.strip().count("\n") == 0
    assert "metrics.jsonl:21: not a JSON object" in err
    code, _, err = _invoke(["watch", str(tmp_path / "missing")])
    assert code == 2 and "no such file or directory" in err
    code, _, err = _invoke(["watch", str(prime_run), "--window", "0"])
    assert code == 2 and "--window must be at least 1" in err
    code, _, err = _invoke(["watch", str(prime_run), "--fail-on", "flor"])
    assert code == 2 and "unknown alert 'flor'" in err


def test_a_bad_rollouts_line_names_its_file_and_line(tmp_path: Path) -> None:
    run = tmp_path / "verl"
    make_run.write_verl(run, 2, make_run.Scenario(tasks=2))
    with open(run / "2.jsonl", "a") as fh:
        fh.write('{"input": "q", "output": "a", "score": "high", "step": 2}\n')
    code, out, err = _invoke(["watch", str(run)])
    assert code == 2 and "2.jsonl:9" in err and "score" in err
    assert any(line.startswith("    1  ") for line in out.splitlines())  # step 1 came first


def test_a_step_the_reader_refuses_for_errors_is_reported(prime_run: Path, monkeypatch) -> None:
    from whilecli.io import facts
    from whilecli.io.formats import prime_rl

    real = prime_rl.read_step

    def read_step(path: Path, **kwargs: object):  # type: ignore[no-untyped-def]
        if "step_4" in str(path):
            facts.refuse_errors(12, 16, str(path), "line 1")
        return real(path, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(prime_rl, "read_step", read_step)
    code, out, _ = _invoke(["watch", str(prime_run), "--fail-on", "errors"])
    assert code == 1
    assert "    4  12 of 16 replies are errors: the harness failed, not the model" in out
    text = " ".join(out.split())
    assert "! errors: error replies climb: 12 of 48 replies over steps 2-4 are errors" in text
    assert out.splitlines()[-1].startswith("10 steps; alerts: errors at step 4, floor at")


def test_who_grades_comes_from_each_read_not_a_walk(prime_run: Path, monkeypatch) -> None:
    """Who grades is decided by the read of each step's file (one decision per file read),
    never by a walk of the files of its own."""
    from whilecli.io import judge, read

    decided: list[int] = []
    files: list[int] = []
    real_scan, real_read = judge.scan_of, read._read_source

    def scan_of(*args, **kwargs):  # type: ignore[no-untyped-def]
        decided.append(1)
        return real_scan(*args, **kwargs)

    def read_source(*args, **kwargs):  # type: ignore[no-untyped-def]
        files.append(1)
        return real_read(*args, **kwargs)

    monkeypatch.setattr(judge, "scan_of", scan_of)
    monkeypatch.setattr(read, "_read_source", read_source)
    assert _invoke(["watch", str(prime_run)])[0] == 0
    assert files and len(decided) == len(files)


@settings(max_examples=80, deadline=None)
@given(
    name=st.sampled_from(["interval", "idle_exit"]),
    value=st.one_of(
        st.floats(),
        st.sampled_from([0.0, 1e-300, 1e-3, 9.2e9, 1e10, 1e18, 1e308, 31536000.0, 31536001.0]),
    ),
)
def test_a_time_option_is_what_a_sleep_takes_or_refused(name: str, value: float) -> None:
    """--interval and --idle-exit take only what the OS sleeps and clocks accept (and a poll
    no shorter than a millisecond): anything else is one line naming the option, at parse
    time, never an overflow mid-watch."""
    import threading

    from whilecli.errors import UsageError
    from whilecli.watch.options import WatchOptions

    try:
        WatchOptions(follow=True, **{name: value})  # type: ignore[arg-type]
    except UsageError as err:
        assert f"--{name.replace('_', '-')} must be" in str(err) and "\n" not in str(err)
        return
    assert math.isfinite(value) and value <= threading.TIMEOUT_MAX
    assert value >= (1e-3 if name == "interval" else 0)


def test_an_interval_past_what_sleep_takes_exits_2() -> None:
    code, out, err = _invoke(["watch", str(ROOT / "examples" / "run"), "-f", "--interval", "1e10"])
    assert code == 2 and out == "" and err.count("\n") == 1 and "--interval" in err
