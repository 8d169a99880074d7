"""A tool's graded file supersedes the ungraded files the tool writes beside it (one rule,
each tool's layout as its code writes it: formats/beside.py): a folder holding both is read
as the graded rows, the rest named in a note."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from whilecli.io.read import read_rows


def _counts(rows: Any) -> list[tuple[str, int, int]]:
    frame = rows.frame.collect()
    per = frame.group_by("task_id").agg(n=pl.len(), c=pl.col("passed").cast(pl.Int64).sum())
    return sorted(per.iter_rows())


def _grades(rng: random.Random, tasks: int, k: int) -> dict[str, list[bool]]:
    return {f"q{t}": [rng.random() < 0.5 for _ in range(k)] for t in range(tasks)}


def _truth(grades: dict[str, list[bool]]) -> list[tuple[str, int, int]]:
    return sorted((t, len(g), sum(g)) for t, g in grades.items())


def _lcb(folder: Path, grades: dict[str, list[bool]], extra: tuple[str, ...]) -> Path:
    out = folder / "output" / "Qwen2.5-Coder-7B-Instruct"
    out.mkdir(parents=True)
    stem = out / "Scenario.codegeneration_5_0.2"
    gens = [
        {
            "question_id": q,
            "question_content": f"solve {q}",
            "code_list": [f"print({j})" for j in range(len(g))],
        }
        for q, g in grades.items()
    ]
    graded = [
        {**r, "graded_list": g, "pass@1": sum(g) / len(g)}
        for r, g in zip(gens, grades.values(), strict=True)
    ]
    (out / f"{stem.name}_eval_all.json").write_text(json.dumps(graded))
    if "generations" in extra:
        (out / f"{stem.name}.json").write_text(json.dumps(gens))
    if "summary" in extra:
        summary = [
            {"pass@1": 50.0},
            {str(i): [[int(x) for x in g]] for i, g in enumerate(grades.values())},
            [],
        ]
        (out / f"{stem.name}_eval.json").write_text(json.dumps(summary))
    return folder


def _evalplus(folder: Path, grades: dict[str, list[bool]], extra: tuple[str, ...]) -> Path:
    out = folder / "evalplus_results" / "humaneval"
    out.mkdir(parents=True)
    stem = "Qwen--Qwen2.5-Coder-7B-Instruct_vllm_temp_0.8"
    suffix = ".eval_results.json" if "legacy" in extra else "_eval_results.json"
    evaluated = {
        q: [
            {
                "task_id": q,
                "solution": f"def f(): return {j}",
                "base_status": "pass" if ok else "fail",
                "plus_status": "pass" if ok else "fail",
            }
            for j, ok in enumerate(g)
        ]
        for q, g in grades.items()
    }
    (out / f"{stem}{suffix}").write_text(
        json.dumps({"date": "2025-01-01", "hash": "h", "eval": evaluated})
    )
    samples = "".join(
        json.dumps({"task_id": q, "solution": f"def f(): return {j}"}) + "\n"
        for q, g in grades.items()
        for j in range(len(g))
    )
    if "generations" in extra:
        (out / f"{stem}.jsonl").write_text(samples)
        (out / f"{stem}.raw.jsonl").write_text(samples)
    return folder


def _alpaca(folder: Path, grades: dict[str, list[bool]], extra: tuple[str, ...]) -> Path:
    model = folder / "results" / "my-model"
    annotator = model / "alpaca_eval_gpt4"
    annotator.mkdir(parents=True)
    one = {q: g[:1] for q, g in grades.items()}  # one reply per instruction
    annotations = [
        {
            "instruction": q,
            "output_1": "ref",
            "generator_1": "gpt4",
            "output_2": f"answer {q}",
            "generator_2": "my-model",
            "annotator": "alpaca_eval_gpt4",
            "preference": 2.0 if g[0] else 1.0,
        }
        for q, g in one.items()
    ]
    (annotator / "annotations.json").write_text(json.dumps(annotations))
    if "generations" in extra:
        outputs = [
            {"instruction": q, "output": f"answer {q}", "generator": "my-model"} for q in one
        ]
        (model / "model_outputs.json").write_text(json.dumps(outputs))
    if "summary" in extra:
        (annotator / "leaderboard.csv").write_text(",win_rate\nmy-model,50.0\n")
    return folder


TOOLS = {"LiveCodeBench": _lcb, "EvalPlus": _evalplus, "AlpacaEval": _alpaca}
EXTRAS = [("generations",), ("generations", "summary"), ("generations", "legacy"), ("summary",)]


@pytest.mark.parametrize("tool", list(TOOLS))
@pytest.mark.parametrize("extra", EXTRAS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_folder_reads_the_graded_file(
    tmp_path: Path, tool: str, extra: tuple[str, ...], seed: int
) -> None:
    rng = random.Random(seed)
    grades = _grades(rng, rng.randint(3, 8), rng.randint(2, 5))
    folder = TOOLS[tool](tmp_path / "run", grades, extra)
    rows = read_rows([str(folder)])
    truth = _truth({q: g[:1] for q, g in grades.items()} if tool == "AlpacaEval" else grades)
    if tool == "AlpacaEval":  # no id: tasks are keyed by the instruction's hash
        assert sorted(c[1:] for c in _counts(rows)) == sorted(c[1:] for c in truth)
    else:
        assert _counts(rows) == truth
    if "generations" in extra or (tool != "EvalPlus" and "summary" in extra):
        assert any(n.startswith(f"{tool}: its graded rows are") for n in rows.notes), rows.notes


def test_livecodebench_names_its_model_by_its_folder(tmp_path: Path) -> None:
    grades = _grades(random.Random(3), 4, 3)
    folder = _lcb(tmp_path / "run", grades, ("generations", "summary"))
    rows = read_rows([str(folder)])
    assert set(rows.frame.collect()["model"].to_list()) == {"Qwen2.5-Coder-7B-Instruct"}
    assert "output/<model_repr>" in rows.sources["model"]


def test_alpaca_annotations_are_judged_wins(tmp_path: Path) -> None:
    grades = _grades(random.Random(4), 6, 1)
    folder = _alpaca(tmp_path / "run", grades, ())
    rows = read_rows([str(folder)])
    assert rows.format == "alpaca-eval"
    assert set(rows.frame.collect()["model"].to_list()) == {"my-model"}
