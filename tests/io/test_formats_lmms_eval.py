"""lmms-eval --log_samples (lmms_eval/loggers/evaluation_tracker.py: save_results_samples):
<model>/<date>_samples_<task>.jsonl beside <date>_results.json. A per-sample metric that is an
object holding the sample's score (MME's mme_percetion_score / mme_cognition_score, one per
row by category) is the grade; a numeric metric is read as lm-eval's."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from whilecli.io.read import read_rows

MODEL = "lmms-lab/llava-onevision-qwen2-7b-ov"
STAMP = "20250110_120000"
SCORES = [1, 1, 0, 1, 0, 0, 1, 1]


def _write(root: Path) -> Path:
    folder = root / MODEL.replace("/", "__")
    folder.mkdir(parents=True)
    lines = []
    for d, score in enumerate(SCORES):
        category, key = ("OCR", "mme_percetion_score") if d % 2 else ("code", "mme_cognition_score")
        row = {
            "doc_id": d,
            "target": "Yes",
            "filtered_resps": ["Yes" if score else "No"],
            "doc_hash": f"h{d}",
            "prompt_hash": f"p{d}",
            "target_hash": "t",
            key: {
                "question_id": f"{category}/{d}.png",
                "category": category,
                "score": float(score),
            },
            "input": f"Is picture {d} a cat? Please answer yes or no.",
        }
        lines.append(json.dumps(row))
    path = folder / f"{STAMP}_samples_mme.jsonl"
    path.write_text("\n".join(lines) + "\n")
    metrics = {"mme_cognition_score,none": 150.0, "mme_percetion_score,none": 100.0}
    results = {
        "results": {"mme": {"alias": "mme", **metrics}},
        "configs": {"mme": {"task": "mme", "generation_kwargs": {"max_new_tokens": 16}}},
        "versions": {"mme": "Yaml"},
        "config": {"model": "llava_onevision", "model_args": f"pretrained={MODEL}"},
        "model_name": MODEL,
        "model_name_sanitized": MODEL.replace("/", "__"),
    }
    (folder / f"{STAMP}_results.json").write_text(json.dumps(results, indent=2))
    return path


def test_metric_objects_hold_the_grade(tmp_path: Path) -> None:
    rows = read_rows([str(_write(tmp_path))])
    frame = rows.frame.collect()
    per = frame.group_by("task_id").agg(n=pl.len())
    assert per.height == len(SCORES) and set(per["n"].to_list()) == {1}
    assert frame["passed"].sum() == sum(SCORES)
    assert set(frame["model"].to_list()) == {MODEL}
    assert frame["truncated"].null_count() == frame.height
