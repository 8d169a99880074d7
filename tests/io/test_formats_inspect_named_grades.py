"""inspect_ai scores whose value is an object of named grades (``{"accuracy": 1.0, "f1":
0.9}``): refused without a choice, each key read with ``--map reward=scores.SCORER.value.KEY``
(the form the refusal names)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from whilecli.errors import InputError
from whilecli.io.read import read_rows


def _log(path: Path, rng: random.Random, scorer: str, keys: list[str]) -> dict[str, list[float]]:
    samples, values = [], {k: [] for k in keys}
    for sid in range(1, 7):
        for epoch in (1, 2):
            value = {k: float(rng.random() < 0.5) for k in keys}
            for k in keys:
                values[k].append(value[k])
            samples.append(
                {
                    "id": sid,
                    "epoch": epoch,
                    "input": f"q{sid}",
                    "target": "t",
                    "output": {
                        "model": "m",
                        "choices": [
                            {
                                "message": {"role": "assistant", "content": "a"},
                                "stop_reason": "stop",
                            }
                        ],
                    },
                    "scores": {scorer: {"value": value}},
                }
            )
    log = {
        "version": 2,
        "status": "success",
        "eval": {"task": "t", "model": "openai/gpt-4o-mini"},
        "samples": samples,
    }
    path.write_text(json.dumps(log))
    return values


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("keys", [["accuracy", "f1"], ["a", "b", "c"]])
def test_each_named_grade_is_read_by_its_path(tmp_path: Path, seed: int, keys: list[str]) -> None:
    path = tmp_path / "log.json"
    values = _log(path, random.Random(seed), "f1_and_acc", keys)
    with pytest.raises(InputError, match=r"field 'scores.f1_and_acc.value'"):
        read_rows([str(path)])
    for key in keys:
        rows = read_rows([str(path)], mapping={"reward": f"scores.f1_and_acc.value.{key}"})
        assert rows.frame.collect()["reward"].to_list() == values[key]
