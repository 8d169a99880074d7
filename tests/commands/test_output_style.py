"""One output style across commands: every command's text report fits 80 columns under
``COLUMNS=80``, and every JSON report carries ``schema_version``.

Each command runs through the app on a copy of the bundled data, from that copy's folder
(file names, not the checkout's path, so the widths do not depend on where the project lies).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from whilecli.cli import COMMANDS, app
from whilecli.jsonout import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "data"
MODEL = "Qwen/Qwen3-0.6B"
VOCAB = ["--teacher-vocab", "151936", "--student-vocab", "151936"]

#: Each command's text report on the bundled data (several for commands with several shapes).
TEXT: dict[str, list[list[str]]] = {
    "route": [
        ["route", "mixed.parquet", "--model", MODEL],
        ["route", "mixed.parquet", "--by", "model"],
        ["route", "student.parquet", "--teacher", "teacher.parquet", *VOCAB],
    ],
    "update": [
        ["update", "--method", "flash_reinforce", "batch.jsonl", "-o", "u.jsonl"],
        ["update", "--method", "grpo", "grouped_batch.jsonl", "-o", "g.jsonl"],
    ],
    "config": [
        ["config", "--method", "grpo", "--env", "x", "-o", "rl.toml"],
        ["config", "--method", "opsd", "--privileged", "reference", "-o", "opsd.toml"],
        ["config", "--from", "single.parquet", "-o", "rae.toml"],
    ],
    "ada": [["ada", "mixed.jsonl"]],
    "check": [["check", "mixed.parquet", "--fail-on", "all", "--model", MODEL]],
    "size": [["size"], ["size", "--before", "student.parquet", "--after", "teacher.parquet"]],
    "diff": [["diff", "student.parquet", "teacher.parquet"]],
    "summarize": [["summarize", "mixed.jsonl", "-o", "tasks.parquet"]],
    "formats": [["formats"], ["formats", "--aliases"]],
    "watch": [["watch", "run"]],
}

#: Each command's JSON report.
JSON: dict[str, list[str]] = {
    "route": ["route", "mixed.parquet", "--format", "json"],
    "update": ["update", "--method", "flash_reinforce", "batch.jsonl", "--format", "json"],
    "config": ["config", "--method", "grpo", "--format", "json"],
    "ada": ["ada", "mixed.jsonl", "--format", "json"],
    "check": ["check", "mixed.parquet", "--format", "json"],
    "size": [
        "size",
        "--before",
        "student.parquet",
        "--after",
        "teacher.parquet",
        "--format",
        "json",
    ],
    "diff": ["diff", "student.parquet", "teacher.parquet", "--format", "json"],
    "formats": ["formats", "--json"],
    "watch": ["watch", "run", "--format", "json"],
}


def _run(args: list[str], tmp: Path, monkeypatch: pytest.MonkeyPatch):
    work = tmp / "data"
    shutil.copytree(EXAMPLES, work)
    shutil.copytree(ROOT / "examples" / "run", work / "run")
    monkeypatch.chdir(work)
    return CliRunner().invoke(app, args, env={"COLUMNS": "80", "NO_COLOR": "1"})


def test_every_command_is_covered() -> None:
    assert set(TEXT) == set(COMMANDS)
    assert set(JSON) == set(COMMANDS) - {"summarize"}  # a summary is Parquet: no report


@pytest.mark.parametrize(
    "args", [a for runs in TEXT.values() for a in runs], ids=lambda a: " ".join(a[:3])
)
def test_text_reports_fit_80_columns(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _run(args, tmp_path, monkeypatch)
    assert result.exit_code in (0, 1), result.output
    long = [line for line in result.output.splitlines() if len(line) > 80]
    assert long == [], "\n".join(long)
    assert "┏" not in result.output and "│" not in result.output  # no boxes


@pytest.mark.parametrize("name", list(JSON))
def test_json_reports_carry_the_schema_version(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _run(JSON[name], tmp_path, monkeypatch)
    assert result.exit_code in (0, 1), result.output
    text = result.stdout.strip()
    first = json.loads(text.splitlines()[0]) if name == "watch" else json.loads(text)
    assert first["schema_version"] == SCHEMA_VERSION, name
    assert next(iter(first)) == "schema_version", name


def test_diff_lists_ids_in_natural_order() -> None:
    from whilecli.route.paired import natural_order

    ids = ["t-10", "t-2", "t-1", "a", "t-2b", "t-02x"]
    assert natural_order(ids) == ["a", "t-1", "t-2", "t-2b", "t-02x", "t-10"]
