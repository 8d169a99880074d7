"""Hostile special files: every file read beside the rows or named by an option (a judge
audit, ``while.toml``, ``GITHUB_STEP_SUMMARY``) must be a regular file or be refused in one
line naming it, exit 2; a pipe (FIFO) that no process reads, named by ``-o``, is refused,
never waited on forever. Run in a child process with a time limit: before this, each of these
hung."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import whilecli

SRC = str(Path(whilecli.__file__).resolve().parents[1])


def _rows(path: Path) -> Path:
    rows = [{"task_id": f"t{t}", "reward": float((t + s) % 2)} for t in range(20) for s in range(4)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _special(path: Path, kind: str) -> None:
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "loop":
        path.symlink_to(path.name)
    elif kind == "device":
        path.symlink_to("/dev/zero")


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    full = {**os.environ, "PYTHONPATH": SRC, **(env or {})}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "whilecli", *args],
            cwd=cwd,
            env=full,
            capture_output=True,
            text=True,
            timeout=90,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return 124, "hung"
    return done.returncode, done.stderr + done.stdout


KINDS = ["folder", "fifo", "loop", "device"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("where", ["judge-audit", "while.toml", "pyproject.toml", "summary"])
def test_an_option_or_policy_file_that_is_no_file_is_refused_naming_it(
    tmp_path: Path, kind: str, where: str
) -> None:
    rows = _rows(tmp_path / "rows.jsonl")
    (tmp_path / ".git").mkdir()  # the policy search stops here
    args, env = ["check", str(rows)], None
    if where == "judge-audit":
        target = tmp_path / "audit.json"
        args += ["--judge-audit", str(target)]
    elif where == "summary":
        target = tmp_path / "summary.md"
        args += ["--format", "github"]
        env = {"GITHUB_STEP_SUMMARY": str(target)}
    else:
        target = tmp_path / where
    _special(target, kind)
    code, out = _run(args, tmp_path, env)
    errors = [line for line in out.splitlines() if "error" in line]
    assert code == 2, out
    assert len(errors) == 1 and target.name in errors[0] and "Traceback" not in out, out


@pytest.mark.parametrize("command", [["config", "--method", "grpo"], ["summarize", "ROWS"]])
def test_an_output_fifo_no_process_reads_is_refused_not_waited_on(
    tmp_path: Path, command: list[str]
) -> None:
    rows = _rows(tmp_path / "rows.jsonl")
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    args = [str(rows) if a == "ROWS" else a for a in command]
    code, out = _run([*args, "-o", str(fifo)], tmp_path)
    assert code == 2 and "out.fifo" in out and "no process reads" in out, out


#: A reader in another process that holds the pipe's read end open before it says "open" (a
#: blocking open would wait for the writer, so no one could tell it had started), then reads
#: until the writer closes.
READER = """
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
print("open", flush=True)
got = b""
while True:
    try:
        chunk = os.read(fd, 1 << 16)
    except BlockingIOError:
        chunk = None
    if chunk:
        got += chunk
    elif chunk == b"" and got:
        break
    else:
        time.sleep(0.01)
sys.stdout.buffer.write(got)
"""


def test_an_output_fifo_with_a_reader_is_written_through(tmp_path: Path) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(fifo)], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL
    )
    try:
        assert reader.stdout is not None and reader.stdout.readline() == b"open\n"
        code, out = _run(["config", "--method", "grpo", "-o", str(fifo)], tmp_path)
        got = reader.communicate(timeout=90)[0]
    finally:
        reader.kill()
    assert code == 0, out
    assert b"[" in got  # the TOML went into the pipe
