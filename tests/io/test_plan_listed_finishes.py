"""Refusal lines point at what fixes the read, and a list of finish reasons beside a list of
grades is split with it (``io/samples.py``; ``io/plan.py``: ``_any_grade_like``).

Seeded simulators with a known truth:

- rows as open-r1/OpenR1-Math-220k publishes them (``generations[]``,
  ``correctness_math_verify[]``, ``finish_reasons[]``, ...): the refusal names both lists, and
  once the reward's list is mapped each rollout's finish is read from the list beside it (a
  row whose lists differ in length is refused, naming the row and the list);
- verl ``main_generation`` output (the dataset's columns, an index, and ``responses[]``):
  ungraded generations, said so, whatever ids, indexes and counts the rows carry.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from read_helpers import frame_of
from whilecli.errors import InputError

REASON_NAMES = ["finish_reasons", "stop_reasons", "finish_reason"]


def _openr1(
    folder: Path, seed: int, reasons: str, mismatch: bool
) -> tuple[Path, list[bool | None]]:
    """OpenR1-style rows, and each rollout's truth: cut off, or not known."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    truth: list[bool | None] = []
    for i in range(rng.randint(10, 30)):
        n = rng.randint(1, 4)
        cut = [rng.random() < 0.2 for _ in range(n)]
        finishes = ["length" if c else "stop" for c in cut]
        odd = mismatch and i == 2
        rows.append(
            {
                "problem": f"problem {i}",
                "uuid": f"u{i}",
                "generations": [f"reply {j}" for j in range(n)],
                "correctness_math_verify": [not c and rng.random() < 0.6 for c in cut],
                reasons: finishes + ["stop"] if odd else finishes,
                "is_reasoning_complete": [not c for c in cut],
                "correctness_count": rng.randint(0, n),
            }
        )
        truth += [None] * n if odd else cut
    path = folder / "train.parquet"
    pl.DataFrame(rows).write_parquet(path)
    return path, truth


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("reasons", REASON_NAMES)
def test_the_refusal_names_the_finishes_beside_the_grades(
    tmp_path: Path, seed: int, reasons: str
) -> None:
    path, _ = _openr1(tmp_path, seed, reasons, False)
    with pytest.raises(InputError) as refused:
        frame_of(path)
    said = str(refused.value)
    assert "reward=correctness_math_verify[]" in said
    assert f"{reasons}[]" in said


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("reasons", REASON_NAMES)
@pytest.mark.parametrize("mismatch", [False, True])
def test_the_finishes_beside_a_mapped_list_are_read(
    tmp_path: Path, seed: int, reasons: str, mismatch: bool
) -> None:
    path, truth = _openr1(tmp_path, seed, reasons, mismatch)
    if mismatch:  # a list of another length than the grades': that row refused, named
        with pytest.raises(InputError, match=rf"row \d+: field '{reasons}': .* values beside"):
            frame_of(path, mapping={"reward": "correctness_math_verify[]"})
        return
    frame, _ = frame_of(path, mapping={"reward": "correctness_math_verify[]"})
    assert frame["truncated"].to_list() == truth


def _maingen(folder: Path, seed: int, extra: dict[str, Any]) -> Path:
    """verl main_generation output: the dataset's columns beside ``responses[]``."""
    rng = random.Random(seed)
    rows = [
        {
            "data_source": "openai/gsm8k",
            "prompt": [{"role": "user", "content": f"Q{i}"}],
            "ability": "math",
            "reward_model": {"style": "rule", "ground_truth": str(i)},
            "extra_info": {"split": "test", "index": i, "question": f"Q{i}"},
            "responses": [f"s{j}: {rng.randint(0, 9)}" for j in range(4)],
            **{k: v(i) for k, v in extra.items()},
        }
        for i in range(rng.randint(5, 20))
    ]
    path = folder / "test-output-4.parquet"
    pl.DataFrame(rows).write_parquet(path)
    return path


PLACES: dict[str, Any] = {
    "none": {},
    "sample_idx": {"sample_idx": lambda i: i},
    "num_tokens": {"num_tokens": lambda i: 100 + i},
    "step": {"step": lambda i: 3},
}


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("extra", sorted(PLACES))
def test_ungraded_generations_are_said(tmp_path: Path, seed: int, extra: str) -> None:
    path = _maingen(tmp_path, seed, PLACES[extra])
    with pytest.raises(InputError, match=r"ungraded generations\?"):
        frame_of(path)


@pytest.mark.parametrize("seed", range(3))
def test_a_number_that_may_be_a_grade_is_not_ungraded(tmp_path: Path, seed: int) -> None:
    path = _maingen(tmp_path, seed, {"judge": lambda i: float(i % 2)})
    with pytest.raises(InputError) as refused:
        frame_of(path)
    assert "ungraded generations" not in str(refused.value)
