"""OpenCompass repeats a dataset n times as ``NAME-run0`` .. ``NAME-run{n-1}`` (its config's
``[dict(abbr=f'aime2024-run{idx}', ...) for idx in range(n)]``): the files are one evaluation,
their rows draws of the same problems, pooled without ``--pool`` (``io/formats/opencompass.py``
``dataset_of``). Files of different datasets are still refused unasked.

A seeded simulator writes a work directory (``results/<model>/<abbr>.json`` with ``details``
keyed by the sample's index, ``predictions/`` and ``summary/`` beside) for problems of known
pass counts.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import polars as pl
import pytest

from read_helpers import frame_of
from whilecli.errors import InputError

MODEL = "qwen3-0.6b-vllm"


def _work_dir(
    root: Path, seed: int, datasets: dict[str, int], suffix: str = "-run"
) -> dict[str, list[int]]:
    """A work directory with ``runs`` repeats of each dataset; each dataset's pass counts."""
    rng = random.Random(seed)
    for sub in ("results", "predictions", "summary"):
        (root / sub / MODEL).mkdir(parents=True)
    truth = {}
    for name, runs in datasets.items():
        problems = rng.randint(5, 20)
        rates = [rng.choice([0.0, 0.3, 0.5, 0.8, 1.0]) for _ in range(problems)]
        counts = [0] * problems
        for run in range(runs):
            details = {}
            for i, rate in enumerate(rates):
                ok = rng.random() < rate
                counts[i] += ok
                prompt = f"{name} problem {i}"
                reply = f"run {run}: {i if ok else -1}"
                details[str(i)] = {"prompt": prompt, "predictions": reply, "correct": ok}
            abbr = f"{name}{suffix}{run}" if runs > 1 else name
            doc = {"accuracy": 50.0, "details": details}
            (root / "results" / MODEL / f"{abbr}.json").write_text(json.dumps(doc))
            pred = {
                k: {"origin_prompt": v["prompt"], "prediction": "x"} for k, v in details.items()
            }
            (root / "predictions" / MODEL / f"{abbr}.json").write_text(json.dumps(pred))
        truth[name] = counts
    return truth


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("runs", [2, 4, 8])
def test_runs_of_one_dataset_are_its_draws(tmp_path: Path, seed: int, runs: int) -> None:
    name = random.Random(seed).choice(["aime2024", "math_500", "gpqa-diamond", "livecodebench"])
    counts = _work_dir(tmp_path, seed, {name: runs})[name]
    frame, _ = frame_of(tmp_path)
    assert frame.height == runs * len(counts)
    passes = frame.group_by("task_id").agg(pl.col("reward").sum(), pl.len()).sort("reward")
    assert sorted(passes["reward"].to_list()) == sorted(float(c) for c in counts)
    assert set(passes["len"].to_list()) == {runs}


@pytest.mark.parametrize("seed", range(3))
def test_runs_of_two_datasets_are_still_two_evaluations(tmp_path: Path, seed: int) -> None:
    _work_dir(tmp_path, seed, {"aime2024": 4, "aime2025": 4})
    with pytest.raises(InputError, match="different evaluations"):
        frame_of(tmp_path)


@pytest.mark.parametrize("seed", range(3))
def test_a_suffix_other_than_run_is_another_dataset(tmp_path: Path, seed: int) -> None:
    _work_dir(tmp_path, seed, {"aime2024": 3}, suffix="-part")
    with pytest.raises(InputError, match="different evaluations"):
        frame_of(tmp_path)
