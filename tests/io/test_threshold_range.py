"""An explicit ``--pass-threshold`` at 0 or below where every reward lies in [0, 1] (each
row passes) is refused in one line naming the file, the field and the option, exit 2, by
every command that reads rows: a total regression read as "no change", never with exit 0.
A threshold above every reward is read (a scale may reach past a shard's rewards: a bonus
none of its rows earned), and the route says the band rests on it
(``threshold_above_rewards``, provisional). A threshold inside (0, 1] is read, every row
failing included (a floor's partial credit)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from whilecli.cli import app

runner = CliRunner()


def _write(path: Path, rewards: list[float]) -> Path:
    rows = [
        {"task_id": f"t{i // 4}", "reward": r, "truncated": False} for i, r in enumerate(rewards)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _rewards(seed: int, partial: bool) -> list[float]:
    rnd = random.Random(seed)
    if partial:
        return [rnd.choice([0.0, 0.25, 0.5]) for _ in range(160)]
    return [float(rnd.random() < 0.5) for _ in range(160)]


COMMANDS = [["route"], ["check"], ["ada"]]


@pytest.mark.parametrize("threshold", ["-1", "0", "-1e-12", "-1e308"])
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[-1])
def test_a_threshold_that_grades_every_reward_alike_is_refused(
    tmp_path: Path, threshold: str, command: list[str]
) -> None:
    path = _write(tmp_path / "rows.jsonl", _rewards(1, False))
    extra = ["-o", str(tmp_path / "out.jsonl")] if command[0] == "update" else []
    got = runner.invoke(app, [*command, str(path), "--pass-threshold", threshold, *extra])
    assert got.exit_code == 2, got.output
    line = got.output.strip()
    assert "--pass-threshold" in line and "rows.jsonl" in line and "'reward'" in line
    assert "\n" not in line


def test_diff_of_a_total_regression_is_refused_not_passed(tmp_path: Path) -> None:
    before = _write(tmp_path / "before.jsonl", _rewards(2, False))
    after = _write(tmp_path / "after.jsonl", [0.0] * 160)
    args = ["diff", str(before), str(after), "--pass-threshold", "-1", "--fail-on", "regression"]
    got = runner.invoke(app, args)
    assert got.exit_code == 2, got.output
    got = runner.invoke(app, [*args[:3], "--pass-threshold", "1", "--fail-on", "regression"])
    assert got.exit_code == 1, got.output  # the regression is seen


@pytest.mark.parametrize("threshold", ["0.75", "1", "0.3"])
def test_a_threshold_inside_the_scale_is_read(tmp_path: Path, threshold: str) -> None:
    """Every row failing under a threshold between the rewards and 1 is a floor's partial
    credit, read as such."""
    path = _write(tmp_path / "rows.jsonl", _rewards(3, True))
    got = runner.invoke(app, ["route", str(path), "--pass-threshold", threshold, "-q"])
    assert got.exit_code in (0, 1), got.output


@pytest.mark.parametrize("threshold", ["1.5", "1e308"])
def test_a_threshold_above_every_reward_leaves_the_band_provisional(
    tmp_path: Path, threshold: str
) -> None:
    path = _write(tmp_path / "rows.jsonl", _rewards(5, False))
    got = runner.invoke(
        app, ["route", str(path), "--pass-threshold", threshold, "--format", "json"]
    )
    assert got.exit_code in (0, 1), got.output
    report = json.loads(got.output)
    assert report["provisional"]
    assert "threshold_above_rewards" in [f["kind"] for f in report["data_quality"]]
