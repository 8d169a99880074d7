"""A command that writes a file and stdout (``ada --next-round F -o -``, ``config --data D
-o -``) writes stdout before any file is moved into place: a stdout that fails (a full
disk, ``/dev/full``) leaves no file behind that a rerun would refuse to overwrite."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
MIXED = ROOT / "examples" / "data" / "mixed.jsonl"
WORDLE = ROOT / "tests" / "data" / "real" / "verifiers" / "wordle" / "gpt-5-mini__019a631c"

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")


def _run(args: list[str]) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    with open("/dev/full", "wb") as full:
        return subprocess.run(
            [sys.executable, "-m", "whilecli", *args], stdout=full, stderr=subprocess.PIPE,
            env=env, timeout=120, check=False,
        )  # fmt: skip


def test_ada_leaves_no_next_round_when_stdout_fails(tmp_path: Path) -> None:
    target = tmp_path / "next.jsonl"
    done = _run(["ada", str(MIXED), "--next-round", str(target), "-o", "-"])
    assert done.returncode == 2 and b"standard output" in done.stderr, done.stderr
    assert not target.exists()


def test_config_leaves_no_dataset_when_stdout_fails(tmp_path: Path) -> None:
    data = tmp_path / "sftdata"
    args = ["config", "--method", "sft", "--from", str(WORDLE / "results.jsonl"), "--map",
            "reward=check_answer_reward_func", "--model", "Qwen/Qwen3-0.6B", "--data", str(data),
            "-o", "-"]  # fmt: skip
    done = _run(args)
    assert done.returncode == 2 and b"standard output" in done.stderr, done.stderr
    assert not data.exists()
