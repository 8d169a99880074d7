"""`whilecli update`: a batch row whose reward is infinite is refused for its reward, at its
line and field, whether or not the rows carry task ids (a method that needs none, such as
flash_reinforce, was told the row had "no task id")."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app

#: How a JSON writer spells an infinite reward (``1e400`` overflows to one on reading).
SPELLINGS = ("Infinity", "-Infinity", "1e400", "-1e999")
METHODS = ("flash_reinforce", "sao", "bpco", "sft", "grpo", "max_rl", "rae")


def _row(reward: str, *, task: str | None) -> str:
    row = {"reward": 0.0, "logprobs": [-0.1, -0.2], "values": [0.5, 0.5]}
    if task is not None:
        row["task_id"] = task
    return json.dumps(row).replace('"reward": 0.0', f'"reward": {reward}')


@settings(max_examples=60, deadline=None)
@given(
    method=st.sampled_from(METHODS),
    spelling=st.sampled_from(SPELLINGS),
    rows=st.integers(1, 5),
    data=st.data(),
    with_ids=st.booleans(),
)
def test_an_infinite_reward_is_named_at_its_line(
    tmp_path_factory, method: str, spelling: str, rows: int, data, with_ids: bool
) -> None:
    at = data.draw(st.integers(0, rows - 1))
    lines = [
        _row(spelling if i == at else "1.0", task=f"t{i // 2}" if with_ids else None)
        for i in range(rows)
    ]
    path = Path(tmp_path_factory.mktemp("inf")) / "batch.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(app, ["update", "--method", method, str(path)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    error = [line for line in result.output.splitlines() if "error:" in line]
    assert len(error) == 1, result.output
    assert f"batch.jsonl:{at + 1}: field 'reward'" in error[0], error[0]
    assert "not a finite number" in error[0], error[0]
