"""MathArena runs (matharena's Runs.save_to_file: outputs/<competition>/<solver>/<idx>.json,
one file per problem holding every run of one solver: answers[], correct[], warnings[],
messages[], judgment[], history[], detailed_costs[], one element per run, beside idx,
problem, gold_answer, N, cost and pass_at_1): a problem is a task, each run a rollout,
correct[] the grade (a text until a proof is graded: ungraded), the reply the run's last
assistant message. A solver's folder routes as one pool; folders naming different models
pooled are refused (tests/io/test_writers_in_paths.py)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io.read import read_rows


def _runs(idx: int, grades: list[Any], rng: random.Random) -> dict[str, Any]:
    n = len(grades)
    return {
        "idx": idx,
        "problem": f"Find the number of ordered pairs in problem {idx}.",
        "gold_answer": str(100 + idx),
        "source": "aime_2025",
        "types": ["Combinatorics"],
        "N": n,
        "cost": {"cost": 0.01 * n, "input_tokens": 200 * n, "output_tokens": 9000 * n},
        "pass_at_1": None
        if any(isinstance(g, str) for g in grades)
        else sum(map(bool, grades)) / max(n, 1),
        "answers": [str(100 + idx) if g is True else "7" for g in grades],
        "correct": grades,
        "warnings": [0] * n,
        "messages": [
            [
                {"role": "user", "content": "Put the final answer in \\boxed{}."},
                {"role": "assistant", "content": f"... \\boxed{{{rng.random()}}}"},
            ]
            for _ in grades
        ],
        "judgment": [None] * n,
        "history": [None] * n,
        "detailed_costs": [
            {"cost": 0.01, "input_tokens": 200, "output_tokens": 9000, "time": 30.0} for _ in grades
        ],
    }


def _write(folder: Path, problems: list[list[Any]], seed: int = 0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    for idx, grades in enumerate(problems, start=1):
        (folder / f"{idx}.json").write_text(json.dumps(_runs(idx, grades, rng), indent=4))
    return folder


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    problems=st.lists(
        st.lists(st.sampled_from([True, False, "TODO"]), min_size=1, max_size=8),
        min_size=1,
        max_size=15,
    )
)
def test_each_problem_is_a_task_and_each_run_a_rollout(
    problems: list[list[Any]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("matharena")
    folder = _write(root / "outputs" / "aime" / "aime_2025" / "qwen" / "qwq", problems)
    if any(all(g == "TODO" for g in grades) for grades in problems):
        with pytest.raises(InputError, match=r"no run is graded yet"):
            read_rows([str(folder)])
        return
    frame = read_rows([str(folder)]).frame.collect()
    graded = frame.filter(pl.col("reward").is_not_null())
    want = {
        str(idx): (sum(g is True for g in grades), sum(isinstance(g, bool) for g in grades))
        for idx, grades in enumerate(problems, start=1)
        if any(isinstance(g, bool) for g in grades)
    }
    got = graded.group_by("task_id").agg(p=pl.col("reward").sum(), n=pl.len())
    assert {t: (int(p), n) for t, p, n in got.iter_rows()} == want


def test_a_solver_folder_routes_as_one_pool(tmp_path: Path) -> None:
    rng = random.Random(2)
    problems = []
    for _ in range(30):
        rate = rng.random()
        problems.append([rng.random() < rate for _ in range(4)])
    folder = _write(tmp_path / "aime_2025" / "openai" / "o3-mini", problems)
    result = CliRunner().invoke(app, ["route", str(folder), "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.output)
    split = sum(0 < sum(p) < len(p) for p in problems)
    assert report["checks"][1]["measured"]["k"] == 4
    band = next(c for c in report["checks"] if c["key"] == "band")
    assert band["measured"]["split_tasks"] == split
    assert report["inputs"]["format"] == "matharena"


def test_lists_of_other_lengths_name_the_file_and_the_list(tmp_path: Path) -> None:
    folder = _write(tmp_path / "runs", [[True, False, True]])
    path = folder / "1.json"
    doc = json.loads(path.read_text())
    doc["messages"] = doc["messages"][:2]
    path.write_text(json.dumps(doc))
    result = CliRunner().invoke(app, ["route", str(path)])
    assert result.exit_code == 2
    assert "1.json" in result.output and "'messages'" in result.output
    assert "holds 2 runs where correct holds 3" in result.output


def test_a_grade_that_is_no_grade_names_the_run(tmp_path: Path) -> None:
    folder = _write(tmp_path / "runs", [[True, False, True]])
    path = folder / "1.json"
    doc = json.loads(path.read_text())
    doc["correct"][2] = 5
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"run 2: field 'correct': must be true or false"):
        read_rows([str(path)])
