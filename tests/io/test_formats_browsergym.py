"""BrowserGym / AgentLab episode folders (agentlab/experiments/loop.py: ExpArgs.run,
_save_summary_info; <date>_<agent>_on_<task>_<seed>/summary_info.json): the task name is the
task, its seeds rollouts, cum_reward the grade, truncated the cut, an episode that raised after
the agent acted scored as AgentLab scores it, one that raised before any action of the agent's
(n_steps 0: env.reset raised, the site was down) or at the model's server the harness's error,
left out (was: scored 0, the model's failure), the model the agent name's
GenericAgent-<model> (was refused: every file a sidecar)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io.read import read_rows
from whilecli.route.pool import Counts, summarize

AGENT = "GenericAgent-gpt-4o-mini-2024-07-18"
#: Per task, each seed's outcome: a reward, "cut" (the step budget ran out, reward 0) or
#: "raised" (err_msg set).
EPISODES: dict[str, list[object]] = {
    "webarena.0": [1.0, 1.0, 0.0],
    "webarena.12": [0.0, "cut", 0.0],
    "webarena.45": [1.0, "raised", 1.0],
}


def _episode(study: Path, task: str, seed: int, outcome: object) -> None:
    rerun = "_1" if seed == 2 else ""  # _make_dir's tag where the folder was there already
    folder = study / f"2024-09-12_10-0{seed}-{len(task):02d}_{AGENT}_on_{task}_{seed}{rerun}"
    folder.mkdir(parents=True)
    raised = outcome == "raised"
    summary = {
        "n_steps": 30 if outcome == "cut" else 4 + seed,
        "cum_reward": 0.0 if outcome in ("cut", "raised") else outcome,
        "cum_raw_reward": 0,
        "err_msg": "Exception uncaught by agent or environment." if raised else None,
        "stack_trace": "Traceback (most recent call last): ..." if raised else None,
        "stats.cum_steps": 5 + seed,
        "stats.cum_input_tokens": 4000 + 10 * seed,
        "stats.cum_output_tokens": 300 + seed,
        "terminated": outcome not in ("cut", "raised"),
        "truncated": outcome == "cut",
        "agent_elapsed": 12.5 + seed,
        "env_elapsed": 3.25 + len(task),
    }
    (folder / "summary_info.json").write_text(json.dumps(summary, indent=4))


def _study(root: Path) -> Path:
    study = root / "2024-09-12_10-00-00_genericagent-gpt-4o-mini-on-webarena"
    for task, outcomes in EPISODES.items():
        for seed, outcome in enumerate(outcomes):
            _episode(study, task, seed, outcome)
    return study


def test_episode_folders_are_rollouts_of_their_task(tmp_path: Path) -> None:
    rows = read_rows([str(_study(tmp_path))])
    assert rows.format == "browsergym"
    frame = rows.frame.collect()
    per = frame.group_by("task_id").agg(
        n=pl.len(),
        c=pl.col("passed").cast(pl.Int64).sum(),
        cut=pl.col("truncated").cast(pl.Int64).sum(),
    )
    assert sorted(per.iter_rows()) == [
        ("webarena.0", 3, 2, 0),
        ("webarena.12", 3, 0, 1),
        ("webarena.45", 3, 2, 0),
    ]
    assert (rows.facts.rows, rows.facts.errors) == (9, 0)
    assert any("the episode raised" in note for note in rows.notes)
    assert set(frame["model"].to_list()) == {"gpt-4o-mini-2024-07-18"}


def test_a_plain_browsergym_folder_is_named_by_its_task(tmp_path: Path) -> None:
    for task, reward in (("webarena.3", 1.0), ("webarena.4", 0.0)):
        folder = tmp_path / "results" / task
        folder.mkdir(parents=True)
        summary = {"n_steps": 3, "cum_reward": reward, "err_msg": None, "stack_trace": None}
        (folder / "summary_info.json").write_text(json.dumps(summary))
    frame = read_rows([str(tmp_path / "results")]).frame.collect()
    assert sorted(frame["task_id"].to_list()) == ["webarena.3", "webarena.4"]
    assert frame["passed"].sum() == 1


def test_route_names_the_layout(tmp_path: Path) -> None:
    done = CliRunner().invoke(app, ["route", str(_study(tmp_path)), "-v"])
    assert done.exit_code in (0, 1), done.output
    assert "format: browsergym" in done.output
    assert "truncated ← truncated (the step budget ran out)" in done.output


#: How an episode ends: its summary's (n_steps, err_msg, stack trace), and whether what it
#: records is the harness's error (left out) or the agent's episode (graded by cum_reward).
#: From ExpArgs.run: an exception before any action of the agent's (make_env, env.reset, the
#: first get_action) leaves n_steps 0; AgentLab's error_categorization names server errors and
#: parse retries.
ENDINGS: dict[str, tuple[int, str | None, str | None, bool]] = {
    "done": (6, None, None, False),
    "reset raised": (
        0,
        "Exception uncaught by agent or environment in task t.\nTimeoutError:\nPage.goto",
        "Traceback ...\n    env.reset(seed=...)\nplaywright._impl._errors.TimeoutError",
        True,
    ),
    "first call failed": (
        0,
        "Exception uncaught by agent or environment in task t.\nAPIConnectionError",
        "Traceback ...\nopenai.APIConnectionError: Connection error.",
        True,
    ),
    "raised after acting": (
        5,
        "Exception uncaught by agent or environment in task t.\nKeyError:\n'bid'",
        "Traceback ...\nKeyError: 'bid'",
        False,
    ),
    "server failed after acting": (
        5,
        "Exception uncaught by agent or environment in task t.\nHTTPError",
        "Traceback ...\nrequests.exceptions.HTTPError: 502 Server Error: Bad Gateway for url",
        True,
    ),
    "replies never parsed": (
        0,
        "Exception uncaught by agent or environment in task t.\nValueError",
        "Traceback ...\nValueError: Could not parse a valid value after 4 retries.",
        False,
    ),
}


def _drawn_study(rng: random.Random, root: Path) -> dict[str, Any]:
    """A study of drawn episodes, and its truth: per graded task (rows, passes), errors."""
    per: dict[str, list[int]] = {}
    errors = 0
    for t in range(rng.randint(3, 8)):
        task = f"webarena.{t}"
        for seed in range(rng.randint(2, 5)):
            ending = rng.choice(list(ENDINGS))
            steps, err, trace, harness = ENDINGS[ending]
            reward = 0.0 if err else float(rng.random() < 0.5)
            folder = root / f"2025-01-0{1 + seed % 9}_10-00-00_{AGENT}_on_{task}_{seed}"
            folder.mkdir(parents=True)
            summary = {
                "n_steps": steps,
                "cum_reward": reward,
                "cum_raw_reward": 0,
                "err_msg": err,
                "stack_trace": trace,
                "terminated": err is None,
                "truncated": False,
            }
            (folder / "summary_info.json").write_text(json.dumps(summary, indent=4))
            if harness:
                errors += 1
                continue
            n, passes = per.get(task, [0, 0])
            per[task] = [n + 1, passes + int(reward)]
    return {"per": sorted(tuple(v) for v in per.values()), "errors": errors}


@pytest.mark.parametrize("seed", range(12))
def test_an_episode_that_raised_is_the_harness_s_only_where_agentlab_says(
    tmp_path: Path, seed: int
) -> None:
    truth = _drawn_study(random.Random(seed), tmp_path / "study")
    try:
        rows = read_rows([str(tmp_path / "study")], aggregate=Counts())
    except InputError as err:  # errors half the rows or more: the harness failed
        assert "most replies are errors" in str(err) and "\n" not in str(err)
        return
    pool = summarize(rows)
    got = sorted((int(r["n"]), int(r["passes"])) for r in pool.tasks.iter_rows(named=True))
    assert [g for g in got if g[0]] == truth["per"]
    assert rows.facts.errors == truth["errors"]
