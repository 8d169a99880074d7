"""One number and warning style across ``route`` (brief and ``-v``), ``check``, ``diff``,
``size``, ``update``, ``watch`` and ``config`` (from the rows), run on the same generated
rows.

Every warning is a ``warning: ...`` line (no "Warnings" heading, no bullet); every rate with
an interval prints as the route prints it: 2 decimals, ``[low, high]`` and ``n=`` naming the
unit it counted (``n=16 tasks (64 rows)``, ``n=64 rows``); a half-width or an sd beside them
has their 2 decimals.
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

#: A line that says a warning, in any style.
WARNING_LIKE = re.compile(r"(?i)^\s*(?:[-•*!]\s*)?warnings?\b")
#: The one warning style (indented under what it is about, or not).
WARNING = re.compile(r"^ *warning: \S")
#: A value with an interval, and what follows it.
RATE = re.compile(
    r"([-+]?\d+\.\d+) \[([-+]?\d+\.\d+), ([-+]?\d+\.\d+)\]((?: n=\S+ (?:paired )?[a-z]+)?)"
)
#: A measured value that is not a rate (a half-width, an sd): 2 decimals, as the rates.
SCALAR = re.compile(r"\b(?:half-width|sd) (\d+\.\d+)")
#: ``n=`` naming its unit.
SAMPLE = re.compile(r"^ n=\d+ (?:(?:paired )?tasks?|rows?)$")


@st.composite
def batches(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Grouped rows with per-token lists, some truncated, some repeating one draw."""
    rows = []
    for t in range(draw(st.integers(3, 10))):
        same = draw(st.booleans())
        for j in range(draw(st.integers(2, 4))):
            tokens = draw(st.integers(2, 6))
            logprobs = [-0.5] * tokens
            row: dict[str, Any] = {
                "task_id": f"t{t}",
                "completion": "same" if same else f"answer {t}.{j}",
                "reward": float(draw(st.booleans())),
                "logprobs": logprobs,
                "behavior_logprobs": [-0.4] * tokens,
                "action_mask": [1] * tokens,
            }
            if draw(st.booleans()):
                row["truncated"] = draw(st.booleans())
            rows.append(row)
    return rows


def _commands(rows: Path, run: Path, out: Path) -> list[list[str]]:
    r = str(rows)
    return [
        ["route", r],
        ["route", r, "-v"],
        ["check", r, "--fail-on", "all", "--model", "Qwen/Qwen3-8B"],
        ["diff", r, r],
        ["size", "--before", r, "--after", r],
        ["update", "--method", "grpo", r, "-o", str(out), "--force"],
        ["watch", str(run)],
        ["config", "--from", r, "-o", str(out.with_suffix(".toml")), "--force"],
    ]


def assert_one_style(text: str, who: list[str]) -> None:
    for line in text.splitlines():
        if WARNING_LIKE.match(line):
            assert WARNING.match(line), (who, line)
        for found in RATE.finditer(line):
            value, low, high, sample = found.groups()
            assert all(re.fullmatch(r"[-+]?\d+\.\d\d", x) for x in (value, low, high)), line
            assert SAMPLE.match(sample), (who, line)
        for found in SCALAR.finditer(line):
            assert re.fullmatch(r"\d+\.\d\d", found.group(1)), (who, line)


@settings(max_examples=3, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=batches())
def test_every_command_speaks_one_style(
    tmp_path_factory: pytest.TempPathFactory, rows: list[dict[str, Any]]
) -> None:
    tmp = tmp_path_factory.mktemp("style")
    path = tmp / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run = tmp / "run"
    run.mkdir()
    for step in (1, 2):
        (run / f"{step}.jsonl").write_text(
            "".join(json.dumps({**r, "step": step}) + "\n" for r in rows), encoding="utf-8"
        )
    for args in _commands(path, run, tmp / "out.jsonl"):
        done = CliRunner().invoke(app, args, env={"COLUMNS": "100"})
        no_room = args[0] == "size" and "leaves no room" in done.stderr  # pass@1 0 or ~1
        assert done.exit_code in (0, 1) or (done.exit_code == 2 and no_room), (args, done.output)
        assert_one_style(done.stdout + done.stderr, args)


def test_the_style_rules_catch_the_old_styles() -> None:
    """The rules refuse what the reports printed before: a Warnings heading with bullets, a
    rate whose ``n=`` names no unit."""
    with pytest.raises(AssertionError):
        assert_one_style("Warnings\n  - truncation is unknown", ["old"])
    with pytest.raises(AssertionError):
        assert_one_style("    1  0.50 [0.28, 0.72] n=4    1.00", ["old watch"])
    with pytest.raises(AssertionError):
        assert_one_style("  pass@1 0.50, k = 8 (half-width 0.035); sd 0.34", ["old size"])
    assert_one_style("warning: x\n  pass@1 0.50 [0.28, 0.72] n=4 tasks (16 rows)", ["new"])


@settings(max_examples=80, deadline=None)
@given(
    words=st.lists(st.from_regex(r"[a-z]{1,12}[,;:]?", fullmatch=True), min_size=0, max_size=30),
    at=st.integers(0, 30),
    depth=st.integers(1, 12),
    place=st.sampled_from(["line", "row", "entry"]),
    number=st.integers(1, 10**6),
    columns=st.integers(20, 120),
)
def test_a_path_is_never_cut_from_its_line_number(
    words: list[str], at: int, depth: int, place: str, number: int, columns: int
) -> None:
    """Wrapping never cuts a path, nor parts it from the line or row it names (a long
    temporary directory must still print ``PATH line 3`` on one line)."""
    from whilecli import textstyle

    path = "/" + "/".join(f"d{i}xxxxxxx" for i in range(depth)) + "/rows.jsonl"
    located = f"{path} {place} {number}"
    text = " ".join([*words[:at], located, *words[at:]])
    lines = textstyle.wrap(text, columns)
    assert any(located in line for line in lines)
    assert " ".join(" ".join(lines).split()) == " ".join(text.split())
    for line in lines:
        assert len(line) <= max(columns, 20) or located in line


@settings(max_examples=8, deadline=None)
@given(
    shape=st.sampled_from(["e", "e/", "/e", "e/e line", "ab "]),
    columns=st.integers(20, 120),
)
def test_wrapping_a_long_word_takes_linear_time(shape: str, columns: int) -> None:
    """A word of 200,000 characters (an --env name, a --set value), with or without slashes
    or a place word in it, wraps in well under 2 s: the time grows with its length, not with
    its square (80,000 characters once took 13 s)."""
    import time

    from whilecli import textstyle

    word = (shape * (200_000 // len(shape) + 1))[:200_000]
    text = f"note: {word} rows.jsonl/x line 3 and the rest"
    start = time.perf_counter()
    lines = textstyle.wrap(text, columns)
    assert time.perf_counter() - start < 2.0
    assert " ".join(" ".join(lines).split()) == " ".join(text.split())
    assert any("rows.jsonl/x line 3" in line for line in lines)
