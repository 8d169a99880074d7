"""BrowserGym / AgentLab episode folders (agentlab/experiments/loop.py: ExpArgs.run,
_save_summary_info; <date>_<agent>_on_<task>_<seed>/summary_info.json): the task name is the
task, its seeds rollouts, cum_reward the grade, truncated the cut, an episode that raised
scored as AgentLab scores it, the model the agent name's GenericAgent-<model> (was refused:
every file a sidecar)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.io.read import read_rows

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
