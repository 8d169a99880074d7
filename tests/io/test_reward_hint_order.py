"""The ``--map reward=`` hint offers the column that grades correctness first (DESIGN section
1: the reward is the task's pass/fail), before format, length and style rewards, whatever the
order of the keys in the rows.

The generator writes rows with no reward column and one correctness column (``accuracy_reward``,
``correct``, ``pass``, ``score`` ...) among form columns (``format_reward``,
``cosine_scaled_reward``, ...) in a random key order, under a random prefix (TRL's
``rewards/``), as JSON Lines and Parquet; and the same columns beside a summed ``reward``
(refused for running 0..2). Each refusal must name the correctness column first.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from read_helpers import frame_of
from rows_files import write_rows
from whilecli.errors import InputError

CORRECT = ["accuracy_reward", "correctness", "is_correct_answer", "pass_rate_bin", "acc_score"]
FORM = ["format_reward", "cosine_scaled_reward", "tag_count_reward", "length_penalty"]


def _rows(rnd: random.Random, keys: list[str], summed: bool) -> list[dict[str, object]]:
    """40 rows of 10 tasks, each key a 0/1 grade (the correctness key at 0 mostly: a floor
    the form rewards would hide); ``summed``: a ``reward`` column holding their sum."""
    rows = []
    for i in range(40):
        row: dict[str, object] = {"task_id": f"t{i // 4}", "completion": f"reply {i}"}
        for key in keys:
            row[key] = float(rnd.random() < 0.7)
        if summed:
            row["reward"] = sum(float(row[k]) for k in keys)  # type: ignore[arg-type]
        rows.append(row)
    return rows


def _refusal(path: Path) -> str:
    """The one-line refusal reading ``path`` gives."""
    with pytest.raises(InputError) as info:
        frame_of(path)
    return str(info.value)


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@pytest.mark.parametrize("seed", range(6))
def test_the_hint_names_correctness_first(tmp_path: Path, kind: str, seed: int) -> None:
    rnd = random.Random(seed)
    prefix = rnd.choice(["", "rewards/"])
    correct = prefix + rnd.choice(CORRECT)
    form = [prefix + f for f in rnd.sample(FORM, rnd.randint(1, len(FORM)))]
    keys = [*form, correct]
    rnd.shuffle(keys)
    keys.remove(correct)
    keys.insert(rnd.randint(0, len(form) - 1), correct)  # never last only: the order varies
    if seed % 2 == 0:  # the probe's instance: every form column before the correctness one
        keys = [*form, correct]
    said = _refusal(write_rows(tmp_path, _rows(rnd, keys, False), kind))
    assert f"--map reward={correct}" in said or f"--map 'reward={correct}'" in said, said


@pytest.mark.parametrize("seed", range(4))
def test_a_summed_reward_names_correctness_first(tmp_path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    form = rnd.sample(FORM, rnd.randint(1, 2))
    correct = rnd.choice(CORRECT)
    said = _refusal(write_rows(tmp_path, _rows(rnd, [*form, correct], True), "jsonl"))
    assert f"--map reward={correct}" in said, said
    assert said.index(correct) < min(said.index(f) for f in form), said
