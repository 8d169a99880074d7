"""OpenRLHF's ``eval_samples_step_<N>.jsonl``: the step in the file name keys its tasks, a field of
the wrong kind is refused at its line, and rows that lack OpenRLHF's keys are not taken for it.

The layouts and their neighbours are generated in ``tests/io/test_tools.py`` (the ``openrlhf``
tool).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io.read import read_rows


def _record(prompt: Any, reward: Any, **extra: Any) -> dict[str, Any]:
    return {
        "prompt": prompt,
        "label": "42",
        "reward": reward,
        "response_length": 10,
        "total_length": 20,
        "truncated": False,
        "score": reward,
        "datasource": "math",
        "eval_index": 0,
        **extra,
    }


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_prompt_that_is_not_text_is_refused_at_its_line(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "eval_samples_step_3.jsonl",
        [_record("What is 6 * 7?", 1.0), _record([{"role": "user"}], 0.0)],
    )
    with pytest.raises(InputError) as err:
        read_rows([str(path)])
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:2: field 'prompt': holds a JSON list, not text"), message


def test_the_step_comes_from_the_file_name(tmp_path: Path) -> None:
    records = [_record("What is 6 * 7?", float(i % 2)) for i in range(4)]
    stepped = read_rows([str(_write(tmp_path / "eval_samples_step_40.jsonl", records))])
    frame = stepped.frame.collect()
    assert stepped.format == "openrlhf"
    assert frame["task_id"].n_unique() == 1 and frame["task_id"][0].startswith("40:")
    assert set(frame["policy_version"].to_list()) == {"40"}
    renamed = read_rows([str(_write(tmp_path / "renamed.jsonl", records))]).frame.collect()
    assert renamed["task_id"].n_unique() == 1 and ":" not in renamed["task_id"][0]
    assert renamed["policy_version"].null_count() == renamed.height


def test_a_full_file_says_its_last_prompt_may_be_cut_short(tmp_path: Path) -> None:
    records = [_record(f"Question {i // 4}", float(i % 2)) for i in range(128)]
    rows = read_rows([str(_write(tmp_path / "eval_samples_step_1.jsonl", records))])
    assert any("first 128 samples" in note for note in rows.notes), rows.notes


def test_rows_without_openrlhf_keys_are_plain_rows(tmp_path: Path) -> None:
    plain = [{"prompt": "q", "reward": 1.0, "truncated": False, "score": 1.0}] * 2
    rows = read_rows([str(_write(tmp_path / "eval_samples_step_2.jsonl", plain))])
    assert rows.format == "jsonl"


def test_input_format_forces_it_or_refuses_another_file(tmp_path: Path) -> None:
    good = _write(tmp_path / "eval_samples_step_2.jsonl", [_record("q", 1.0), _record("q", 0.0)])
    assert read_rows([str(good)], input_format="openrlhf").format == "openrlhf"
    other = _write(tmp_path / "other.jsonl", [{"task_id": "a", "reward": 1}] * 2)
    done = CliRunner().invoke(app, ["route", str(other), "--input-format", "openrlhf"])
    assert done.exit_code == 2 and "does not read as openrlhf" in done.output, done.output
