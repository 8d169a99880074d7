"""A blank prompt keys no task (DESIGN section 1): rows with no id keyed by their prompt
text, where some rows hold an empty or whitespace-only prompt, a placeholder (``N/A``,
``<prompt>``, ``unknown``) or no letter or digit at all (``-``) where a harness did not save it, are
refused at the first such row as a null prompt is. Hashed as text, every blank row
became one task of hundreds of draws beside the real ones."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.io.read import read_rows


def _rows(blank: Any, every: int) -> list[dict[str, Any]]:
    rng = random.Random(1)
    rows = []
    for t in range(50):
        for d in range(4):
            prompt = blank if (t * 4 + d) % every == every - 1 else f"Question {t}?"
            rows.append(
                {"prompt": prompt, "completion": f"a {t} {d}", "reward": rng.random() < 0.5}
            )
    return rows


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "blank",
    [
        None,
        "",
        "   ",
        "\n\t",
        "None",
        "null",
        [{"role": "user", "content": ""}],
        [{"role": "user", "content": " "}],
        "N/A",
        "TBD",
        "<prompt>",
        "Unknown",
        "(none)",
        "-",
        "...",
        "?",
        [{"role": "user", "content": "N/A"}],
    ],
)
def test_a_blank_prompt_is_no_task_id(tmp_path: Path, blank: Any) -> None:
    path = _write(tmp_path / "rows.jsonl", _rows(blank, 7))
    result = CliRunner().invoke(app, ["route", str(path)])
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1, result.output
    assert "rows.jsonl:7: field 'prompt': no task id" in result.output


def test_a_blank_part_beside_the_question_keys_by_the_question(tmp_path: Path) -> None:
    rows = _rows("", 10**9)
    for row in rows:
        row["system_prompt"] = "" if row["completion"].endswith("0") else " "
        row["question"] = row.pop("prompt")
    got = read_rows([str(_write(tmp_path / "rows.jsonl", rows))])
    assert got.frame.select("task_id").collect()["task_id"].n_unique() == 50


@pytest.mark.parametrize("prompt", ["2+2=?", "x", "是什么？", "Ω"])
def test_a_short_prompt_of_a_letter_or_digit_keys_its_task(tmp_path: Path, prompt: str) -> None:
    rows = _rows("", 10**9)
    for row in rows[:4]:
        row["prompt"] = prompt
    got = read_rows([str(_write(tmp_path / "rows.jsonl", rows))])
    assert got.frame.select("task_id").collect()["task_id"].n_unique() == 50
