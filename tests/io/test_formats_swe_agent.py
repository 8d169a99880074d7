"""SWE-agent's own files (sweagent/agent/agents.py: save_trajectory; run_batch's preds.json)
hold the patches the SWE-bench harness grades, never a grade: refused, saying to pass the
harness's report."""

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
