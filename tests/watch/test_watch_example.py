"""The recorded run (examples/run) regenerates byte for byte, and the README shows what
``whilecli watch examples/run`` prints on it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from conftest import ROOT
from whilecli.cli import app

RUN = ROOT / "examples" / "run"
BLOCK = re.compile(r"```text\n\$ (whilecli watch [^\n]*)\n(.*?)```", re.S)


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_the_recorded_run_regenerates_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    script = str(ROOT / "examples" / "make_run.py")
    subprocess.run([sys.executable, script, str(out), "--tasks", "4"], check=True, env=env)
    assert _files(out) == _files(RUN)
    assert all(len(data) < 200_000 for data in _files(RUN).values())


def test_the_readme_shows_what_watch_prints() -> None:
    blocks = BLOCK.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    assert [command for command, _ in blocks] == ["whilecli watch examples/run"]
    command, shown = blocks[0]
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        done = CliRunner().invoke(app, command.split()[1:])
    finally:
        os.chdir(cwd)
    assert done.exit_code == 0, done.output
    assert done.stdout == shown
