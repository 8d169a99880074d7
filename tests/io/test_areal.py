"""AReaL's rollout dumps (``<log>/rollout/<version>/<task_id>.jsonl``): a task is counted within
its split, a row's version is the oldest policy that wrote its tokens, a field of the wrong kind
is refused at its line, and rows that lack AReaL's keys are not taken for it.

The layouts and their neighbours are generated in ``tests/io/test_tools.py`` (the ``areal``
tool).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError
from whilecli.io.read import PoolingError, read_rows
from whilecli.io.slices import read_slices


def _line(task: Any, i: int, reward: float, **extra: Any) -> dict[str, Any]:
    return {
        "task_id": task,
        "sample_idx": i,
        "seqlen": 30,
        "prompt_len": 10,
        "head_version": 2,
        "tail_version": 2,
        "reward": reward,
        "prompt": f"problem {task}",
        "completion": f"answer {i}",
        **extra,
    }


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("task_id", [7], "holds a JSON list, not a number"),
        ("task_id", None, "holds null, not a number"),
        ("tail_version", "v2", "holds a string, not a whole number"),
        ("head_version", 1.5, "holds a number, not a whole number"),
    ],
)
def test_a_field_of_the_wrong_kind_is_refused_at_its_line(
    tmp_path: Path, field: str, value: Any, said: str
) -> None:
    path = _write(
        tmp_path / "rollout" / "2" / "0.jsonl",
        [_line(0, 0, 1.0), {**_line(0, 1, 0.0), field: value}],
    )
    with pytest.raises(InputError) as err:
        read_rows([str(path)])
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:2: field '{field}': {said}"), message


def test_a_task_is_counted_within_its_split(tmp_path: Path) -> None:
    log = tmp_path / "logs"
    _write(log / "rollout" / "2" / "0.jsonl", [_line(0, i, float(i % 2)) for i in range(2)])
    evaluated = [{**_line(0, i, 1.0), "prompt": "another problem"} for i in range(3)]
    _write(log / "eval-rollout" / "2" / "0.jsonl", evaluated)
    with pytest.raises(PoolingError, match="--by split"):  # two evaluations, not one pool
        read_rows([str(log)])
    slices = read_slices([str(log)], "split")
    ids = {}
    for value, rows in slices:
        assert not isinstance(rows, InputError)
        frame = rows.frame.collect()
        ids[value] = sorted(set(frame["task_id"].to_list()))
        assert set(frame["policy_version"].to_list()) == {"2"}
    assert ids == {"train": ["rollout:0"], "eval": ["eval-rollout:0"]}


def test_original_reward_is_the_grade_only_where_every_line_has_one(tmp_path: Path) -> None:
    kept = [_line(0, 0, 0.75, original_reward=1.0), _line(0, 1, -0.25, original_reward=0.0)]
    frame = read_rows([str(_write(tmp_path / "kept.jsonl", kept))]).frame.collect()
    assert frame["reward"].to_list() == [1.0, 0.0]
    some = [_line(0, 0, 1.0, original_reward=0.0), _line(0, 1, 0.0)]
    frame = read_rows([str(_write(tmp_path / "some.jsonl", some))]).frame.collect()
    assert frame["reward"].to_list() == [1.0, 0.0]


def test_rows_without_areal_keys_are_plain_rows(tmp_path: Path) -> None:
    plain = [{k: v for k, v in _line(0, i, 1.0).items() if k != "sample_idx"} for i in range(2)]
    assert read_rows([str(_write(tmp_path / "0.jsonl", plain))]).format == "jsonl"


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    tail=st.integers(1, 40),
    partial=st.floats(0.0, 1.0),
    old_style=st.booleans(),
)
def test_the_version_is_the_oldest_policy_that_wrote_the_sample(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    tail: int,
    partial: float,
    old_style: bool,
) -> None:
    """Partial rollouts: a share of the samples of a batch whose newest weights are ``tail``
    began under older weights (``head_version`` below ``tail_version``). Each row's version is
    the oldest policy that wrote its tokens, so the rows an older copy wrote are counted as
    its. A dump that took the minimum over the prompt's ``-1`` too (before ``version_rle``)
    names no oldest policy: there the version is ``tail_version``."""
    rnd = random.Random(seed)
    lines, want = [], []
    for task in range(6):
        for i in range(4):
            head = tail - rnd.randint(1, min(tail, 3)) if rnd.random() < partial else tail
            line = _line(task, i, float(rnd.random() < 0.5), tail_version=tail, head_version=head)
            if old_style:
                line["head_version"] = -1
            else:
                line["version_rle"] = [[head, 100], [tail, 50]] if head < tail else [[tail, 150]]
            lines.append(line)
            want.append(str(tail if old_style else head))
    folder = tmp_path_factory.mktemp("areal")
    path = _write(folder / "rollout" / str(tail) / "0.jsonl", lines)
    frame = read_rows([str(path)]).frame.collect()
    assert frame["policy_version"].to_list() == want
