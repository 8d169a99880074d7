"""LiveBench ground-truth judgments (livebench/gen_ground_truth_judgment.py: play_a_match_gt):
one line per (question, model) in model_judgment/ground_truth_judgment.jsonl, every scored
model in one file, each answering each question once; the model answers beside them hold no
grade and are left out of the bench folder."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from whilecli.errors import InputError
from whilecli.io.read import read_rows

SCORES = {"gpt-4o-mini-2024-07-18": [1, 0, 1, 0, 1], "claude-3-5-haiku-20241022": [1, 1, 0, 0, 0]}


def _bench(root: Path, scores: dict[str, list[float]], task: str = "AMPS_Hard") -> Path:
    folder = root / "data" / "live_bench" / "math" / task
    (folder / "model_judgment").mkdir(parents=True)
    (folder / "model_answer").mkdir()
    lines = []
    for model, grades in scores.items():
        for q, score in enumerate(grades):
            row = {"question_id": f"{q:04d}ab", "task": task, "model": model, "score": score}
            lines.append({**row, "turn": 1, "tstamp": 1720000000.0 + q, "category": "math"})
        answers = [
            {
                "question_id": f"{q:04d}ab",
                "answer_id": f"a{q}",
                "model_id": model,
                "choices": [{"index": 0, "turns": ["The answer is 5."]}],
                "tstamp": 1.0,
            }
            for q in range(len(grades))
        ]
        text = "".join(json.dumps(a) + "\n" for a in answers)
        (folder / "model_answer" / f"{model}.jsonl").write_text(text)
    lines.sort(key=lambda r: (r["question_id"], r["model"]))
    text = "".join(json.dumps(r) + "\n" for r in lines)
    (folder / "model_judgment" / "ground_truth_judgment.jsonl").write_text(text)
    return root


def test_judgments_read_one_answer_per_model_and_question(tmp_path: Path) -> None:
    rows = read_rows([str(_bench(tmp_path, SCORES))])
    frame = rows.frame.collect()
    per = frame.group_by("model", "task_id").agg(n=pl.len())
    assert set(per["n"].to_list()) == {1}
    for model, grades in SCORES.items():
        mine = frame.filter(pl.col("model") == model)
        assert mine["task_id"].n_unique() == len(grades)
        assert mine["passed"].sum() == sum(grades)
    assert frame["truncated"].null_count() == frame.height
    assert rows.format == "livebench"


def test_partial_credit_asks_for_a_threshold_not_a_bookkeeping_column(tmp_path: Path) -> None:
    root = _bench(tmp_path, {"gpt-4o-mini-2024-07-18": [1, 0.5, 0, 1, 0.75, 0]}, "zebra_puzzle")
    with pytest.raises(InputError, match="pass-threshold") as err:
        read_rows([str(root)])
    assert "turn" not in str(err.value) and "tstamp" not in str(err.value)
