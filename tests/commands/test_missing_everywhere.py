"""``--missing skip|fail`` on every command that reads graded rows, through its command line.

Generated files carry null grades at generated places. Under ``skip`` each command reports
the same numbers as on the file without those rows, and says how many rows it left out
and the first one's file and line; under ``fail`` the same numbers as on the file whose
null grades are failures (0.0). The twins are the slow, independent statement of the rule.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app

Row = dict[str, Any]


@st.composite
def graded_rows(draw: st.DrawFn) -> list[Row]:
    """Rows of 3 to 8 tasks at k 2 to 5, rewards 0/1, some grades null (never all)."""
    rows: list[Row] = []
    for t in range(draw(st.integers(3, 8))):
        for j in range(draw(st.integers(2, 5))):
            reward = draw(st.sampled_from([0.0, 1.0, 1.0, 0.0, None]))
            rows.append({"task_id": f"t{t}", "completion": f"answer {t}.{j}", "reward": reward})
    if all(r["reward"] is None for r in rows):
        rows[-1]["reward"] = 1.0
    if not any(r["reward"] is None for r in rows):
        rows[draw(st.integers(0, len(rows) - 1))]["reward"] = None
    return rows


def _write(path: Path, rows: list[Row]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _twin(rows: list[Row], missing: str) -> list[Row]:
    """The rows as ``missing`` says to count them: left out, or failed."""
    if missing == "skip":
        return [r for r in rows if r["reward"] is not None]
    return [{**r, "reward": 0.0 if r["reward"] is None else r["reward"]} for r in rows]


def _run(args: list[str]) -> tuple[int, str, str]:
    done = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    return done.exit_code, done.stdout, done.stderr


def _json(args: list[str]) -> Any:
    code, out, err = _run(args)
    assert code == 0, (args, out, err)
    return json.loads(out)


def _rate(rate: dict[str, Any]) -> tuple[Any, ...]:
    return rate["value"], rate["low"], rate["high"], rate["n_tasks"]


def _diff(before: Path, after: Path, extra: list[str]) -> Any:
    report = _json(["diff", str(before), str(after), "--format", "json", *extra])
    numbers = tuple(_rate(report[k]) for k in ("before", "after", "difference"))
    return numbers, report["warnings"]


def _size(before: Path, after: Path, extra: list[str]) -> Any:
    """The sizing's numbers and warnings; None where the before dump's pass@1 leaves no room
    for the gain (0, or within ``--effect`` of 1: refused in one line, DESIGN section 2)."""
    args = ["size", "--before", str(before), "--after", str(after), "--format", "json", *extra]
    code, out, err = _run(args)
    if code == 2 and "leaves no room" in err:
        return None
    assert code == 0, (args, out, err)
    report = json.loads(out)
    return report["measured"], report["warnings"]


def _watch(run: Path, extra: list[str]) -> Any:
    code, out, err = _run(["watch", str(run), "--format", "json", *extra])
    assert code == 0, (out, err)
    steps = [json.loads(line) for line in out.splitlines()]
    numbers = [(s["step"], s["rows"], _rate(s["pass_at_1"])) for s in steps]
    return numbers, [w for s in steps for w in s["warnings"]]


def _config(rows: Path, extra: list[str]) -> Any:
    args = ["config", "--from", str(rows), "--model", "M", "--format", "json", *extra]
    code, out, err = _run(args)
    if code != 0:  # no config fits these rows: the refusal is the answer
        return ("refused", code, err), []
    said = json.loads(out)["warnings"]
    routed = [w for w in said if w.startswith("routed from the rows")]
    return routed, [w for w in said if w.startswith("the rows:")]


def _ungraded_said(warnings: list[str], count: int, total: int, missing: str) -> None:
    """One warning names the ungraded rows: their count, the first one's line, the rule."""
    found = [w for w in warnings if "ungraded" in w or "no grade" in w]
    assert found, warnings
    assert all(re.search(rf"\b{count} of {total} rows\b", w) for w in found), found
    assert all(re.search(r"\.jsonl line \d+", w) for w in found), found
    rule = "counted as failures" if missing == "fail" else "left out of every rate"
    assert all(rule in w for w in found), found


@settings(max_examples=6, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=graded_rows(), missing=st.sampled_from(["skip", "fail"]))
def test_missing_rule_holds_in_every_command(
    tmp_path_factory: pytest.TempPathFactory, rows: list[Row], missing: str
) -> None:
    tmp = tmp_path_factory.mktemp("missing")
    ungraded = sum(r["reward"] is None for r in rows)
    holed = _write(tmp / "holed.jsonl", rows)
    twin = _write(tmp / "twin.jsonl", _twin(rows, missing))
    clean = _write(tmp / "clean.jsonl", [{**r, "reward": 1.0} for r in rows])
    flag = ["--missing", missing]

    numbers, said = _diff(holed, clean, flag)
    assert numbers == _diff(twin, clean, [])[0]
    _ungraded_said(said, ungraded, len(rows), missing)
    # the clean dump passes every row over tasks of 2 to 5 draws: rows kept by their grade,
    # as far as its counts can tell, which diff says of it; and where the ungraded rows left
    # out halve the before's draws per task, diff says k differs; every other warning is
    # before's
    after_notes = ("kept by their grade", "draws per task before")
    assert all(w.startswith("before: ") for w in said if not any(n in w for n in after_notes))

    sized, twin_sized = _size(holed, clean, flag), _size(twin, clean, [])
    assert (sized is None) == (twin_sized is None)
    if sized is not None:
        measured, said = sized
        assert measured == twin_sized[0]
        _ungraded_said(said, ungraded, len(rows), missing)

    for name, source in (("holed", rows), ("twin", _twin(rows, missing))):
        run = tmp / f"run-{name}"
        run.mkdir()
        for step in (1, 2):
            _write(run / f"{step}.jsonl", [{**r, "step": step} for r in source])
    numbers, said = _watch(tmp / "run-holed", flag)
    assert numbers == _watch(tmp / "run-twin", [])[0]
    _ungraded_said(said, ungraded, len(rows), missing)

    routed, said = _config(holed, flag)
    assert routed == _config(twin, [])[0]
    if routed and routed[0] != "refused":
        _ungraded_said(said, ungraded, len(rows), missing)


@pytest.mark.parametrize(
    "args",
    [
        ["diff", "{p}", "{p}"],
        ["size", "--before", "{p}", "--after", "{p}"],
        ["watch", "{d}"],
        ["config", "--from", "{p}"],
    ],
)
def test_missing_refuses_other_values_in_one_line(tmp_path: Path, args: list[str]) -> None:
    path = _write(tmp_path / "rows.jsonl", [{"task_id": "a", "reward": 1.0}])
    filled = [a.format(p=path, d=tmp_path) for a in args]
    code, out, err = _run([*filled, "--missing", "maybe"])
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "--missing" in lines[0], err


def test_missing_is_a_reading_option_of_config_from(tmp_path: Path) -> None:
    code, _, err = _run(["config", "--method", "grpo", "--missing", "fail"])
    assert code == 2 and "reading options of --from" in err
