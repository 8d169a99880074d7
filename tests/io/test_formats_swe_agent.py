"""SWE-agent's own files (sweagent/agent/agents.py: save_trajectory; run_batch's preds.json)
and mini-swe-agent's (run/utils/save.py: save_traj, <instance_id>.traj.json) hold the patches
the SWE-bench harness grades, never a grade: refused, saying to pass the harness's report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from whilecli.errors import InputError
from whilecli.io.read import read_rows

IID = "astropy__astropy-12907"
PRED = {"model_name_or_path": "claude-3-5-sonnet", "instance_id": IID, "model_patch": "diff"}


def test_trajectory_is_refused_naming_the_harness_report(tmp_path: Path) -> None:
    traj = {
        "trajectory": [{"action": "ls", "observation": "README", "thought": "look"}],
        "history": [{"role": "user", "content": "Fix the issue"}],
        "info": {"exit_status": "submitted", "submission": "diff", "model_stats": {}},
        "replay_config": "{}",
        "environment": "main",
    }
    path = tmp_path / IID / f"{IID}.traj"
    path.parent.mkdir()
    path.write_text(json.dumps(traj, indent=2))
    with pytest.raises(InputError, match="SWE-agent trajectory.*run_evaluation"):
        read_rows([str(path)])


def test_predictions_are_refused_naming_the_harness_report(tmp_path: Path) -> None:
    path = tmp_path / "preds.json"
    path.write_text(json.dumps({IID: PRED}, indent=4))
    with pytest.raises(InputError, match="SWE-agent predictions.*run_evaluation"):
        read_rows([str(path)])


@pytest.mark.parametrize("form", ["mini-swe-agent-1", "mini-swe-agent-1.1"])
def test_a_mini_swe_agent_trajectory_is_refused_naming_the_harness_report(
    tmp_path: Path, form: str
) -> None:
    traj = {
        "info": {
            "exit_status": "Submitted",
            "submission": "diff --git a/x b/x",
            "model_stats": {"instance_cost": 0.05, "api_calls": 12},
            "mini_version": "1.9.0",
            "config": {"model": {"model_name": "anthropic/claude-sonnet-4-20250514"}},
        },
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Fix the issue"},
            {"role": "assistant", "content": "THOUGHT: look\n```bash\nls\n```"},
        ],
        "trajectory_format": form,
        "instance_id": IID,
    }
    path = tmp_path / IID / f"{IID}.traj.json"
    path.parent.mkdir()
    path.write_text(json.dumps(traj, indent=2))
    with pytest.raises(InputError, match="mini-swe-agent trajectory.*run_evaluation"):
        read_rows([str(path)])
