"""MLE-bench grading reports (mlebench/grade.py: grade_jsonl writes
<timestamp>_grading_report.json, aggregate_reports' counts beside competition_reports[], each
CompetitionReport.to_dict()): a competition is a task, its seeds' submissions its rollouts,
any_medal the grade; an invalid submission earns no medal, a failure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from whilecli.errors import InputError
from whilecli.io.read import read_rows

#: Per competition, each seed's (score, medal); a None score is an invalid submission.
SEEDS: dict[str, list[tuple[float | None, str | None]]] = {
    "spaceship-titanic": [(0.812, "gold"), (0.795, "bronze"), (0.701, None)],
    "denoising-dirty-documents": [(0.021, "silver"), (None, None), (0.093, None)],
    "leaf-classification": [(1.2, None), (0.95, None), (None, None)],
}


def _report(competition: str, score: float | None, medal: str | None, seed: int) -> dict[str, Any]:
    return {
        "competition_id": competition,
        "score": score,
        "gold_threshold": 0.8,
        "silver_threshold": 0.79,
        "bronze_threshold": 0.78,
        "median_threshold": 0.75,
        "any_medal": medal is not None,
        "gold_medal": medal == "gold",
        "silver_medal": medal == "silver",
        "bronze_medal": medal == "bronze",
        "above_median": medal is not None,
        "submission_exists": True,
        "valid_submission": score is not None,
        "is_lower_better": competition == "denoising-dirty-documents",
        "created_at": f"2025-03-0{seed + 1}T12:00:00.000001",
        "submission_path": f"runs/{competition}_{seed}/submission/submission.csv",
    }


def _write(root: Path) -> Path:
    reports = [
        _report(c, score, medal, seed)
        for c, seeds in SEEDS.items()
        for seed, (score, medal) in enumerate(seeds)
    ]
    medals = [r for r in reports if r["any_medal"]]
    summary = {
        "total_runs": len(reports),
        "total_runs_with_submissions": len(reports),
        "total_valid_submissions": sum(r["valid_submission"] for r in reports),
        "total_medals": len(medals),
        "total_gold_medals": sum(r["gold_medal"] for r in reports),
        "total_silver_medals": sum(r["silver_medal"] for r in reports),
        "total_bronze_medals": sum(r["bronze_medal"] for r in reports),
        "total_above_median": sum(r["above_median"] for r in reports),
        "competition_reports": reports,
    }
    path = root / "2025-03-04T10-11-12-GMT_grading_report.json"
    path.write_text(json.dumps(summary, indent=2))
    return path


def test_seeds_of_competitions_read_as_rollouts(tmp_path: Path) -> None:
    rows = read_rows([str(_write(tmp_path))])
    frame = rows.frame.collect()
    per = frame.group_by("task_id").agg(n=pl.len(), c=pl.col("passed").cast(pl.Int64).sum())
    assert sorted(per.iter_rows()) == [
        ("denoising-dirty-documents", 3, 1),
        ("leaf-classification", 3, 0),
        ("spaceship-titanic", 3, 2),
    ]
    assert frame["truncated"].null_count() == frame.height  # not recorded
    assert rows.format == "mle-bench"
    assert any("2 of 9 submissions are missing or invalid" in note for note in rows.notes)


def test_a_report_without_its_medal_is_refused_at_the_entry(tmp_path: Path) -> None:
    path = _write(tmp_path)
    doc = json.loads(path.read_text())
    del doc["competition_reports"][4]["any_medal"]
    path.write_text(json.dumps(doc, indent=2))
    with pytest.raises(InputError, match=r"competition_reports\[4\]: field 'any_medal'"):
        read_rows([str(path)])
