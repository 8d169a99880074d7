"""EvalScope 1.x review rows with ``repeats=k`` (evalscope/api/dataset/dataset.py:
``MemoryDataset.reindex(group_size=repeats)`` sets each draw's ``id = i`` and its
``group_id = i // repeats``; evalscope/api/metric/scorer.py: ``SampleScore.group_id``, "for
grouping k repeated samples"): the task is ``sample_score.group_id``, its k rows the task's
rollouts, whether the rows are in order or not and whether the options are shuffled per draw
(was: ``index`` read as the task, k one-draw tasks each). Reviews without a group_id keep
``index`` as the task."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from whilecli.errors import InputError
from whilecli.io.read import read_rows
from whilecli.route.pool import Counts, summarize

MODEL = "qwen2.5-7b-instruct"


def _review(
    task: int, draw: int, repeats: int, passed: bool, shuffled: bool, grouped: bool
) -> dict[str, Any]:
    options = [f"opt{task}-{o}" for o in range(4)]
    if shuffled:  # the benchmark shuffles each draw's options: the prompt varies per draw
        random.Random(task * 100 + draw).shuffle(options)
    letters = "\n".join(f"{'ABCD'[o]}) {text}" for o, text in enumerate(options))
    index = task * repeats + draw
    score: dict[str, Any] = {
        "score": {"value": {"acc": float(passed)}, "main_score_name": None},
        "sample_id": index,
        "sample_metadata": {},
    }
    if grouped:
        score["group_id"] = task
    return {
        "index": index,
        "target": "A",
        "messages": [
            {"role": "user", "content": f"Question {task}: pick one.\n{letters}"},
            {"role": "assistant", "content": f"Draw {draw} of question {task}: ANSWER: B"},
        ],
        "sample_score": score,
    }


def _run(rng: random.Random, root: Path, grouped: bool) -> dict[str, Any]:
    """A run's reviews (repeats and shuffles drawn), and its per-task truth."""
    repeats = rng.choice([2, 4, 8]) if grouped else 1
    tasks = rng.randint(5, 30)
    shuffled = rng.random() < 0.5
    rows, per = [], []
    for task in range(tasks):
        draws = [rng.random() < 0.5 for _ in range(repeats)]
        rows += [_review(task, d, repeats, p, shuffled, grouped) for d, p in enumerate(draws)]
        per.append((repeats, sum(draws)))
    if rng.random() < 0.5:  # written as the draws finished, not in index order
        rng.shuffle(rows)
    folder = root / "20250801_101010" / "reviews" / MODEL
    folder.mkdir(parents=True)
    path = folder / "gpqa_diamond_default.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return {"path": path, "per": sorted(per), "tasks": tasks}


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("grouped", [True, False])
def test_repeats_are_rollouts_of_their_group(tmp_path: Path, seed: int, grouped: bool) -> None:
    truth = _run(random.Random(seed), tmp_path, grouped)
    rows = read_rows([str(truth["path"])], aggregate=Counts())
    assert rows.format == "evalscope"
    pool = summarize(rows)
    got = sorted((int(r["n"]), int(r["passes"])) for r in pool.tasks.iter_rows(named=True))
    assert got == truth["per"]
    assert set(pool.models) == {MODEL}
    if grouped:
        assert dict(rows.located[0].origins)["task_id"].startswith("sample_score.group_id")


def test_a_review_row_of_another_layout_is_refused_in_one_line(tmp_path: Path) -> None:
    truth = _run(random.Random(3), tmp_path, grouped=True)
    path = truth["path"]
    lines = path.read_text().splitlines()
    lines[2] = json.dumps({"object": "chat.completion", "choices": [{"review": {"result": True}}]})
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as err:
        read_rows([str(path)])
    message = str(err.value)
    assert "\n" not in message, message
    assert message.startswith(f"{path}:3: not an EvalScope review row"), message
