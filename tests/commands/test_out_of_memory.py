"""Running out of memory is one line that says so and what to do (read the input in parts),
exit 2: not an internal error (70), on every command that reads rows, and outside the
commands' own wrapper too."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLES
from whilecli import stdio
from whilecli.cli import app

MIXED = str(EXAMPLES / "mixed.jsonl")


def _one_line(text: str) -> bool:
    return text.count("\n") == 1 and "whilecli summarize" in text


def _exhausted(*_args: object, **_kwargs: object) -> None:
    raise MemoryError


@pytest.mark.parametrize(
    "args",
    [
        ["route", MIXED],
        ["route", MIXED, "-q", "--by", "model"],
        ["check", MIXED],
        ["diff", MIXED, MIXED],
        ["size", "--before", MIXED, "--after", MIXED],
        ["summarize", MIXED, "-o", "-"],
    ],
)
def test_out_of_memory_while_reading_is_one_line_exit_2(monkeypatch, args: list[str]) -> None:
    monkeypatch.delenv("WHILE_DEBUG", raising=False)
    monkeypatch.setattr("whilecli.io.read._read_parts", _exhausted)
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith("whilecli: error: out of memory") and _one_line(done.stderr)
    assert "internal error" not in done.output and "Traceback" not in done.output


def test_out_of_memory_outside_a_command_is_one_line_exit_2(monkeypatch, capsys) -> None:
    monkeypatch.delenv("WHILE_DEBUG", raising=False)
    assert stdio.run(_exhausted) == 2
    said = capsys.readouterr().err
    assert said.startswith("whilecli: error: out of memory") and _one_line(said)
