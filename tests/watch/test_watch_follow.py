"""A fake trainer writes a run directory step by step from another process while the watch
follows it: each step is reported once, in order, with the alerts at the steps they belong
to, the same lines as a watch of the finished run, and nothing written into the run.

The run (``examples/make_run.py``): 4 tasks × 4 rollouts a step; the band collapses to the
floor at step 5 (the floor alert fires at step 7, when the 3-step window is all floor), and a
cut-off reply passes from step 9 (the truncated-passes alert fires at step 9). Every line is
written in two pieces, so the watch meets partial lines; under prime-rl, step 3's rollouts
directory appears after its orchestrator row.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import ROOT
from whilecli.io.rows import CANONICAL_SCHEMA
from whilecli.watch import WatchOptions, watch_run

SCRIPT = ROOT / "examples" / "make_run.py"
STEP = re.compile(r"^\s+(\d+)\s")


def _trainer(run: Path, *args: str) -> subprocess.Popen[bytes]:
    run.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, str(SCRIPT), str(run), "--tasks", "4", "--delay", "0.003", *args]
    return subprocess.Popen(cmd, env=env)


def _clock_while(proc: subprocess.Popen[bytes]) -> Callable[[], float]:
    """A clock that stands still while the trainer runs: the watch's idle exit counts from
    the trainer's end, however slow the machine."""
    done: list[float] = []

    def clock() -> float:
        if proc.poll() is None:
            return 0.0
        if not done:
            done.append(time.monotonic())
        return time.monotonic() - done[0] + 1.0

    return clock


def _follow(run: Path, proc: subprocess.Popen[bytes], **options: object) -> tuple[int, list[str]]:
    lines: list[str] = []
    opts = WatchOptions(follow=True, interval=0.005, idle_exit=1.5, **options)  # type: ignore[arg-type]
    code = watch_run(run, opts, write=lines.append, say=lines.append, clock=_clock_while(proc))
    proc.wait(timeout=60)
    return code, lines


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
    }


def _steps(lines: list[str]) -> list[int]:
    return [int(m.group(1)) for line in lines if (m := STEP.match(line))]


def _alerts(lines: list[str]) -> list[tuple[str, int]]:
    """(kind, step) of every alert line, the step being the last step line above it."""
    out, step = [], 0
    for line in lines:
        if (m := STEP.match(line)) is not None:
            step = int(m.group(1))
        elif line.lstrip().startswith("! "):
            out.append((line.split("! ", 1)[1].split(":", 1)[0], step))
    return out


def _still(run: Path) -> tuple[int, list[str]]:
    lines: list[str] = []
    code = watch_run(run, WatchOptions(), write=lines.append, say=lines.append)
    return code, lines


@pytest.mark.parametrize("layout", ["prime-rl", "verl"])
def test_following_a_run_in_progress(tmp_path: Path, layout: str) -> None:
    run = tmp_path / "run"
    extra = ["--late", "3"] if layout == "prime-rl" else []
    code, lines = _follow(run, _trainer(run, "--layout", layout, *extra))
    assert code == 0
    assert _steps(lines) == list(range(1, 11))  # once each, in order
    assert _alerts(lines) == [("floor", 7), ("truncated-passes", 9)]
    text = " ".join(" ".join(lines).split())
    assert "! floor: the band collapsed to the floor over steps 5-7" in text
    # prime-rl's config names a 0.6B model, whose size stands in for --size-b: SFT
    method = "sft" if layout == "prime-rl" else "opsd"
    assert f"(every group fails) → {method}" in text

    before = _snapshot(run)
    still, finished = _still(run)
    assert _snapshot(run) == before  # the watch wrote nothing into the run
    assert still == 0
    body = [line for line in lines if "no finished step yet" not in line]
    assert body == finished[:-1]  # following gives the lines a watch of the finished run gives
    assert finished[-1] == "10 steps; alerts: floor at step 7, truncated-passes at step 9"


def test_fail_on_ends_the_follow_at_the_first_alert_named(tmp_path: Path) -> None:
    run = tmp_path / "run"
    proc = _trainer(run, "--layout", "prime-rl")
    code, lines = _follow(run, proc, fail_on=("floor",))
    assert code == 1
    assert _steps(lines)[-1] == 7 and "! floor" in " ".join(lines[-2:])
    proc.wait(timeout=60)
    assert _still(run)[0] == 0  # without --fail-on, the same run exits 0
    code, lines = watch_run_lines(run, fail_on=("truncated-passes",))
    assert code == 1 and _steps(lines)[-1] == 10  # without --follow: every step, then exit 1
    assert watch_run_lines(run, fail_on=("saturated", "errors"))[0] == 0


def watch_run_lines(run: Path, **options: object) -> tuple[int, list[str]]:
    lines: list[str] = []
    opts = WatchOptions(**options)  # type: ignore[arg-type]
    return watch_run(run, opts, write=lines.append, say=lines.append), lines


@pytest.mark.skipif(
    "reply" not in CANONICAL_SCHEMA, reason="the canonical frame does not carry reply states yet"
)
def test_error_replies_climbing_fire_an_alert(tmp_path: Path) -> None:
    run = tmp_path / "run"
    proc = _trainer(run, "--layout", "prime-rl", "--errors-from", "4", "--collapse", "99")
    code, lines = _follow(run, proc, fail_on=("errors",), window=1)
    assert code == 1 and _alerts(lines) == [("errors", 4)]  # 2 of 16 replies > 0.1


def test_a_run_with_no_step_yet_says_so(tmp_path: Path) -> None:
    code, lines = watch_run_lines(tmp_path)
    assert code == 0 and lines == [f"{tmp_path}: no finished step yet (no rollouts)"]
    (tmp_path / "metrics.jsonl").write_text('{"step": 1, "loss/mean": 0.5}\n')
    code, lines = watch_run_lines(tmp_path)
    assert code == 0 and lines[-1].endswith("no finished step yet")
    ticks = iter(range(100))
    waited: list[str] = []
    opts = WatchOptions(follow=True, interval=0.001, idle_exit=3)
    code = watch_run(
        tmp_path, opts, write=waited.append, say=waited.append, clock=lambda: next(ticks)
    )
    assert code == 0 and [line for line in waited if "no finished" in line] == [
        f"{tmp_path}: no finished step yet; waiting"
    ]
