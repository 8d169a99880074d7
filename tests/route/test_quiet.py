"""``route --quiet``: the headline and the reasons for exit 1, nothing else, the same exit code."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app

ROOT = Path(__file__).resolve().parents[2]
MIXED = ROOT / "examples" / "data" / "mixed.parquet"
ONE_TASK = ROOT / "tests" / "data" / "real" / "nemo-gym" / "anyswe_agent"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["route", *args])
    return result.exit_code, result.stdout


def test_quiet_prints_the_headline_only() -> None:
    code, out = run(str(MIXED), "--quiet")
    _, full = run(str(MIXED), "--format", "json")
    assert code == 0
    assert out == f"whilecli route: {json.loads(full)['headline']}\n"


def test_quiet_strict_names_why_it_exits_1() -> None:
    code, out = run(str(ONE_TASK), "-q", "--strict")
    lines = out.splitlines()
    assert code == 1 and lines[0].startswith("whilecli route: provisional:")
    assert "exit 1: --strict: the verdict is provisional" in lines


@settings(max_examples=12, deadline=None)
@given(
    fmt=st.sampled_from(["json", "markdown", "github"]),
    by=st.sampled_from([None, "model", "task"]),
    flag=st.sampled_from(["-q", "--quiet"]),
)
def test_quiet_trims_text_only_every_other_format_is_whole(
    fmt: str, by: str | None, flag: str
) -> None:
    """One rule, with --by or without: --quiet trims the text report; json, markdown and
    github print their whole report (a script that asks for JSON always gets JSON)."""
    args = [str(MIXED), "--format", fmt, *(["--by", by] if by else [])]
    code, full = run(*args)
    quiet_code, quiet = run(*args, flag)
    assert (quiet_code, quiet) == (code, full)
    if fmt == "json" and code != 2:
        assert isinstance(json.loads(quiet), dict)
