"""The program calls itself ``whilecli``, a name a user can type: ``while``, its alias, is a
shell keyword in bash and zsh. Help, usage lines, error hints and the version say
``whilecli`` under either script name."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from whilecli.cli import COMMANDS, app

ROOT = Path(__file__).resolve().parents[2]
#: The program named as ``while`` before a command, an option or COMMAND.
AS_WHILE = re.compile(rf"(?<![\w\\-])while (?=-|COMMAND\b|(?:{'|'.join(COMMANDS)})\b)")


def test_both_scripts_run_the_entry_point_that_names_whilecli() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"whilecli": "whilecli.cli:run", "while": "whilecli.cli:run"}


@pytest.mark.parametrize("name", [None, *COMMANDS])
def test_help_names_whilecli(name: str | None) -> None:
    args = ["-h"] if name is None else [name, "-h"]
    out = CliRunner().invoke(app, args).output
    assert out.startswith("Usage: whilecli "), out[:200]
    assert not AS_WHILE.search(out), AS_WHILE.search(out)


@pytest.mark.parametrize(
    "args",
    [["route", "--bogus"], ["rout"], ["config", "--method", "nope"], ["update", "--method"]],
)
def test_the_while_script_says_whilecli(args: list[str]) -> None:
    """Started as ``while`` (argv[0]), usage errors still point at ``whilecli ... --help``."""
    code = "import sys; sys.argv[0] = 'while'; from whilecli.cli import run; run()"
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("whilecli: error: "), done.stderr
    assert "'while " not in done.stderr and len(done.stderr.splitlines()) == 1


def test_version_names_whilecli() -> None:
    out = CliRunner().invoke(app, ["--version"]).output
    assert re.fullmatch(r"whilecli \d+\.\d+\.\d+\S*\n", out), out
