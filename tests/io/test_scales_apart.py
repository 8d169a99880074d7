"""One ``--pass-threshold`` grades one scale: files whose rewards lie in [0, 1] beside files
whose rewards run past 1 (a 0-100 score, a 1-5 rubric, a 0-10 judge) are refused together,
naming both ranges; files on one scale are read under it.

The generator draws the scales of two to four shards of one pool and a threshold; the
refusal is due exactly where a unit shard stands beside a wider one.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError
from whilecli.io.read import read_rows

SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
#: Each scale's (low, high) grade, how a grade is written on it, and whether it is [0, 1].
SCALES = {
    "unit": (0, 1, True),
    "bool": (False, True, True),
    "percent": (0, 100, False),
    "rubric": (1, 5, False),
    "judge": (0, 10, False),
}


def _shard(path: Path, scale: str, seed: int, tasks: int = 30) -> None:
    low, high, _ = SCALES[scale]
    rnd = random.Random(seed)
    rows = [
        {
            "task_id": f"t{t}",
            "prompt": f"Solve {t}.",
            "completion": f"reply {rnd.random():.6f}",
            "reward": high if rnd.random() < 0.6 else low,
        }
        for t in range(tasks)
        for _ in range(2)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@SETTINGS
@given(
    scales=st.lists(st.sampled_from(sorted(SCALES)), min_size=2, max_size=4),
    threshold=st.sampled_from([0.5, 1.0, 3.0, 4.0, 5.0, 50.0]),
    seed=st.integers(0, 2**16),
)
def test_one_threshold_over_shards_on_two_scales_is_refused(
    tmp_path_factory: pytest.TempPathFactory, scales: list[str], threshold: float, seed: int
) -> None:
    folder = tmp_path_factory.mktemp("scales")
    for i, scale in enumerate(scales):
        _shard(folder / f"worker{i}.jsonl", scale, seed + i)
    unit = {SCALES[s][2] for s in scales}
    if unit == {True, False}:
        with pytest.raises(InputError, match="different scales") as err:
            read_rows([str(folder)], pass_threshold=threshold)
        assert "its own --pass-threshold" in str(err.value)
    else:
        try:
            read_rows([str(folder)], pass_threshold=threshold)
        except InputError as err:  # another refusal (a threshold at or below 0), never this
            assert "different scales" not in str(err)
