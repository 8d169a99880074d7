"""Harbor job folders (harbor/trial/trial.py: Trial.run; one result.json per trial): the
trials of a task_name are its rollouts, verifier_result.rewards.reward the grade. Trial.run
catches AgentTimeoutError and NonZeroAgentExitCodeError and verifies all the same: a timed-out
trial is cut off at its time budget, graded (a cut-off pass routes fix-reward), a non-zero exit
the agent's graded failure. Any other exception skips the verifier (the environment never
started, the agent was never set up, the verifier timed out): no verdict, the harness's error,
left out of every rate (was: reward 0, the model's failure)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io.read import read_rows
from whilecli.route.pool import Counts, summarize

#: Exceptions that end a trial before or without its verdict (Trial.run's outer handler).
NO_VERDICT = [
    "EnvironmentStartTimeoutError",
    "DockerBuildError",
    "AgentSetupTimeoutError",
    "VerifierTimeoutError",
    "CancelledError",
    "RuntimeError",
]
#: A trial's outcome: its exception (None: none) and whether Harbor verified it.
OUTCOMES: list[tuple[str | None, bool]] = [
    (None, True),
    ("AgentTimeoutError", True),  # cut off at the time budget, verified
    ("NonZeroAgentExitCodeError", True),  # the agent's own failure, verified
    ("AgentTimeoutError", False),  # cut off, then the verifier failed: no verdict
    *[(kind, False) for kind in NO_VERDICT],
]


def _trial(task: int, i: int, kind: str | None, verified: bool, reward: float) -> dict[str, Any]:
    return {
        "id": f"u{task}-{i}",
        "task_name": f"task-{task:03d}",
        "trial_name": f"task-{task:03d}__{i:07x}",
        "task_id": {"path": f"tasks/task-{task:03d}"},
        "agent_info": {"name": "terminus-2", "model_info": {"name": "gpt-5-mini"}},
        "agent_result": None if not verified else {"n_output_tokens": 400 + i},
        "verifier_result": {"rewards": {"reward": reward}} if verified else None,
        "exception_info": None
        if kind is None
        else {"exception_type": kind, "exception_message": "...", "exception_traceback": "..."},
    }


def _job(rng: random.Random, root: Path, share: float) -> dict[str, Any]:
    """A job of drawn trials (``share`` of them drawn among the exceptions), and its truth."""
    per: dict[str, list[int]] = {}
    errors = cut_passes = 0
    for task in range(rng.randint(3, 8)):
        for i in range(rng.randint(2, 5)):
            kind, verified = rng.choice(OUTCOMES[1:]) if rng.random() < share else OUTCOMES[0]
            reward = float(rng.random() < 0.5)
            trial = _trial(task, i, kind, verified, reward)
            folder = root / "jobs" / "2025-09-01__10-00-00" / trial["trial_name"]
            folder.mkdir(parents=True)
            (folder / "result.json").write_text(json.dumps(trial, indent=4))
            if not verified:
                errors += 1
                continue
            cut = kind == "AgentTimeoutError"
            n, passes, cuts = per.get(trial["task_name"], [0, 0, 0])
            per[trial["task_name"]] = [n + 1, passes + int(reward), cuts + cut]
            cut_passes += cut and reward == 1.0
    summary = {"n_total_trials": 0, "stats": {"n_trials": 0, "n_errors": errors}}
    (root / "jobs" / "2025-09-01__10-00-00" / "result.json").write_text(json.dumps(summary))
    return {"per": sorted(tuple(v) for v in per.values()), "errors": errors, "cut": cut_passes}


@pytest.mark.parametrize("seed", range(12))
def test_harbor_trials_read_their_exceptions_right(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    truth = _job(rng, tmp_path, share=rng.choice([0.1, 0.3, 0.45]))
    rows = total = None
    try:
        rows = read_rows([str(tmp_path / "jobs")], aggregate=Counts())
        total = rows.facts.rows
    except InputError as err:  # errors half the rows or more: the harness failed
        message = str(err)
        assert "\n" not in message and "most replies are errors" in message, message
        assert message.count("result.json") <= 4, message  # a few files named, not hundreds
        return
    assert rows.format == "harbor"
    pool = summarize(rows)
    got = sorted(
        (int(r["n"]), int(r["passes"]), int(r["truncated"]))
        for r in pool.tasks.iter_rows(named=True)
    )
    assert [g for g in got if g[0]] == [p for p in truth["per"] if p[0]]
    assert rows.facts.errors == truth["errors"]
    assert total == sum(p[0] for p in truth["per"]) + truth["errors"]


def test_a_cut_off_pass_routes_fix_reward(tmp_path: Path) -> None:
    job = tmp_path / "jobs" / "j"
    for task in range(4):
        for i in range(4):
            kind = "AgentTimeoutError" if (task, i) == (0, 0) else None
            infra = (task, i) == (1, 1)
            trial = _trial(task, i, "DockerBuildError" if infra else kind, not infra, float(i < 2))
            (job / trial["trial_name"]).mkdir(parents=True)
            (job / trial["trial_name"] / "result.json").write_text(json.dumps(trial, indent=4))
    done = CliRunner().invoke(app, ["route", str(tmp_path / "jobs"), "--format", "json"])
    assert done.exit_code == 1, done.output
    report = json.loads(done.output)
    assert report["route"] == "fix-reward", report["route"]
    verbose = CliRunner().invoke(app, ["route", str(tmp_path / "jobs"), "-v"])
    assert "1 of 16 rows are harness errors" in verbose.output, verbose.output
    assert "AgentTimeoutError" in verbose.output


def test_a_job_of_build_failures_is_not_read_as_the_models(tmp_path: Path) -> None:
    """Every trial of half the tasks never started: those tasks are left out, not floor tasks."""
    job = tmp_path / "jobs" / "j"
    for task in range(8):
        for i in range(4):
            broken = task < 3
            kind = "EnvironmentStartTimeoutError" if broken else None
            trial = _trial(task, i, kind, not broken, float(i <= task % 4))
            (job / trial["trial_name"]).mkdir(parents=True)
            (job / trial["trial_name"] / "result.json").write_text(json.dumps(trial, indent=4))
    pool = summarize(read_rows([str(tmp_path / "jobs")], aggregate=Counts()))
    assert pool.tasks.height == 5
    assert int(pool.tasks["passes"].sum()) == sum(1 + t % 4 for t in range(3, 8))
