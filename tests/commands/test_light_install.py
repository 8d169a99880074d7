"""`pip install whilecli` without torch: every command but `update` runs on the bundled data.

torch is an extra (``whilecli[torch]``). A child interpreter is started with torch made
unimportable (a finder first on ``sys.meta_path`` that raises ModuleNotFoundError for torch,
as an interpreter without torch does; not ``sys.modules['torch'] = None``, which scipy's
array-API probe trips over), runs
each torch-free command on ``examples/data`` through the real ``while`` app, and reports the
exit codes; ``update`` must say which extra to install, in one line, exit 2.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "examples" / "data"

PROBE = textwrap.dedent(
    """
    import json, sys

    class NoTorch:  # as if torch were not installed
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "torch":
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NoTorch())
    from typer.testing import CliRunner
    from whilecli.cli import app

    out = {}
    for name, args in json.loads(sys.argv[1]).items():
        result = CliRunner().invoke(app, args)
        out[name] = {"code": result.exit_code, "output": result.output[-400:]}
    out["torch_loaded"] = sorted(
        m for m in sys.modules if m.split(".")[0] == "torch"
    )
    print(json.dumps(out))
    """
)


def _run(commands: dict[str, list[str]], cwd: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(commands)],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=cwd,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_every_command_but_update_runs_without_torch(tmp_path: Path) -> None:
    mixed, mixed_pq = str(DATA / "mixed.jsonl"), str(DATA / "mixed.parquet")
    commands = {
        "route": ["route", mixed_pq, "--quiet"],
        "route_json": ["route", mixed, "--format", "json", "--model", "Qwen/Qwen3-0.6B"],
        "check": ["check", mixed_pq],
        "diff": ["diff", mixed, mixed_pq],
        "size": ["size"],
        "size_measured": ["size", "--before", mixed, "--after", mixed_pq],
        "summarize": ["summarize", mixed, "-o", str(tmp_path / "tasks.parquet")],
        "config": ["config", "--method", "grpo", "--model", "Qwen/Qwen3-0.6B", "--env", "x"],
        "formats": ["formats"],
        "ada": ["ada", mixed],
        "help": ["--help"],
    }
    got = _run(commands, tmp_path)
    for name in commands:
        assert got[name]["code"] == 0, (name, got[name]["output"])
    assert got["torch_loaded"] == []


def test_update_without_torch_names_the_extra(tmp_path: Path) -> None:
    batch = str(DATA / "batch.jsonl")
    out = str(tmp_path / "out.jsonl")
    got = _run({"update": ["update", "--method", "grpo", batch, "-o", out]}, tmp_path)
    text = got["update"]["output"].strip()
    assert got["update"]["code"] == 2, text
    assert text.startswith("whilecli: error: ") and len(text.splitlines()) == 1
    assert f"pip install -e '{ROOT}[torch]'" in text  # run from a clone, outside it
