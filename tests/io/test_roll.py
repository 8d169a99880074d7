"""ROLL's ``rollout_dump_data.step_<N>.jsonl`` (one object of columns a step): one rollout per
element of ``scores``, a column of another length or a dump without scores refused at its line,
and objects that are not ROLL's columns not taken for it.

The layouts and their neighbours are generated in ``tests/io/test_tools.py`` (the ``roll``
tool).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from whilecli.errors import InputError
from whilecli.io.read import read_rows


def _columns(n: int = 4, **extra: Any) -> dict[str, Any]:
    return {
        "global_step": [5] * n,
        "id": ["a"] * (n // 2) + ["b"] * (n - n // 2),
        "domain": ["math_rule"] * n,
        "prompt": ["P a"] * (n // 2) + ["P b"] * (n - n // 2),
        "responses": [f"reply {i}" for i in range(n)],
        "scores": [float(i % 2) for i in range(n)],
        "sampling_params": ["{}"] * n,
        **extra,
    }


def _write(path: Path, *lines: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_each_score_is_a_rollout_of_its_id_at_its_step(tmp_path: Path) -> None:
    rows = read_rows([str(_write(tmp_path / "rollout_dump_data.step_5.jsonl", _columns()))])
    frame = rows.frame.collect()
    assert rows.format == "roll"
    assert frame["task_id"].to_list() == ["5:math_rule:a"] * 2 + ["5:math_rule:b"] * 2
    assert frame["reward"].to_list() == [0.0, 1.0, 0.0, 1.0]
    assert set(frame["policy_version"].to_list()) == {"5"}


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ({"id": ["a"]}, "field 'id': holds 1 elements and scores 4"),
        ({"scores": None}, "field 'scores': a ROLL rollout dump without a scores list"),
    ],
)
def test_a_dump_that_is_not_one_element_a_sample_is_refused_at_its_line(
    tmp_path: Path, extra: dict[str, Any], said: str
) -> None:
    path = _write(tmp_path / "rollout_dump_data.step_5.jsonl", _columns(**extra))
    with pytest.raises(InputError) as err:
        read_rows([str(path)])
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{path}:1: {said}"), message


def test_several_lines_are_several_steps(tmp_path: Path) -> None:
    later = _columns(global_step=[6] * 4)
    path = _write(tmp_path / "steps.jsonl", _columns(), later)
    frame = read_rows([str(path)]).frame.collect()
    assert frame["task_id"].n_unique() == 4


def test_an_object_whose_step_is_no_list_is_not_roll(tmp_path: Path) -> None:
    row = {"global_step": 5, "question": "q", "responses": ["x", "y"], "rewards": [1.0, 0.0]}
    rows = read_rows([str(_write(tmp_path / "out.jsonl", row, row))])
    assert rows.format != "roll"
