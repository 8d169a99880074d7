"""``GITHUB_STEP_SUMMARY`` passes the same "is it an input?" check as every ``-o``
(:func:`whilecli.fileio.refuse_input`): nothing the user owns is appended to.

The generator names the target every way a command's input can be spelled (the file, a
symlink, a hard link, another spelling, a shard of an input folder, the teacher's rows, the
judge audit, the repository's policy file) for every command that appends a job summary
(``route``, ``route --by``, ``check``, ``diff``): each is refused with exit 2 naming the
variable, before anything is written, and the file is left as it was. The neighbour, a
summary file of its own, is written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from whilecli.cli import app


def rows_file(path: Path, *, seed: int = 0) -> Path:
    """A small split pool: 12 tasks at k = 4, one pass each."""
    rows = [
        {"task_id": f"t{t}", "env": f"e{t % 2}", "reward": float(i == (t + seed) % 4),
         "completion": f"r{t}-{i}", "finish_reason": "stop"}
        for t in range(12)
        for i in range(4)
    ]  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def spell(repo: Path, kind: str) -> tuple[list[str], Path]:
    """The command's input arguments and the summary target that is (or is not) one of
    them, spelled as ``kind`` says."""
    rows = rows_file(repo / "data" / "rows.jsonl")
    if kind == "same":
        return [str(rows)], rows
    if kind == "symlink":
        (repo / "link.jsonl").symlink_to(rows)
        return [str(rows)], repo / "link.jsonl"
    if kind == "hardlink":
        os.link(rows, repo / "hard.jsonl")
        return [str(rows)], repo / "hard.jsonl"
    if kind == "spelling":
        return [str(rows)], repo / "data" / ".." / "data" / "rows.jsonl"
    if kind == "folder":
        return [str(repo / "data")], rows
    if kind == "teacher":
        teacher = rows_file(repo / "teacher.jsonl", seed=1)
        return [str(rows), "--teacher", str(teacher)], teacher
    if kind == "audit":
        audit = repo / "audit.json"
        audit.write_text('{"ok": true}\n')
        return [str(rows), "--judge-audit", str(audit)], audit
    if kind == "config":
        config = repo / "while.toml"
        config.write_text('fail-on = "floor"\n')
        return [str(rows)], config
    return [str(rows)], repo / "summary.md"  # "own": a file of its own


KINDS = ["same", "symlink", "hardlink", "spelling", "folder", "teacher", "audit", "config"]
COMMANDS = ["route", "route --by env", "check", "diff"]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def invoke(command: str, inputs: list[str], target: Path) -> Any:
    """``command`` on ``inputs`` with ``--format github`` and the summary at ``target``."""
    args = command.split()
    if command == "diff":  # two dumps: the rows against themselves, the options dropped
        args += [inputs[0], inputs[0]]
    else:
        args += inputs
    args += ["--format", "github"]
    return CliRunner().invoke(app, args, env={"GITHUB_STEP_SUMMARY": str(target)})


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("kind", KINDS)
def test_a_summary_target_that_is_an_input_is_refused(repo: Path, command: str, kind: str) -> None:
    """The target is an input (or the policy file): exit 2 naming GITHUB_STEP_SUMMARY, and
    the file keeps its bytes."""
    if command == "diff" and kind in ("teacher", "audit"):
        pytest.skip("diff takes no teacher or audit")
    inputs, target = spell(repo, kind)
    before = target.read_bytes()
    result = invoke(command, inputs, target)
    assert result.exit_code == 2, result.output
    assert "GITHUB_STEP_SUMMARY" in result.output
    assert target.read_bytes() == before


@pytest.mark.parametrize("command", COMMANDS)
def test_a_summary_file_of_its_own_is_written(repo: Path, command: str) -> None:
    """The neighbour: a summary file that is no input gets the Markdown report."""
    inputs, target = spell(repo, "own")
    result = invoke(command, inputs, target)
    assert result.exit_code in (0, 1), result.output
    assert target.read_text().startswith("#")
