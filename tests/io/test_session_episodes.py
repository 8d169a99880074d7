"""An agent's turns written one row each, their episode id nested where harnesses keep a
row's extras (``metadata.episode_id``, ``info.trajectory_id``): the rows are turns, refused
in one line (exit 2), never routed as k = turns x episodes. And ids that name an episode as
often as something else (``conversation_id``, ``session_id``, ``sample_id``, ``run_id``,
...: an id per draw, the task's own id, one run's or one batch's id over many tasks, the n
choices of one request) change nothing: the pool routes with k = the draws per task. A
seeded simulator knows which rows are one episode.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import route_rows, write_rows
from whilecli.errors import InputError
from whilecli.io.aliases import EPISODE_NAMES, EXTRA_PLACES

SETTINGS = settings(
    max_examples=16, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
MODEL = "Qwen/Qwen3-8B"
#: What the id names: an episode (its turns one row each), a draw (one row each), the task,
#: one run over every row, a training batch over several tasks.
LAYOUTS = ("episode", "draw", "task", "run", "batch")


def _nest(row: dict[str, Any], place: str, name: str, value: object) -> None:
    if not place:
        row[name] = value
    else:
        row.setdefault(place.rstrip("."), {})[name] = value


def _rows(layout: str, place: str, name: str, tasks: int, k: int, seed: int) -> list[Any]:
    rnd = random.Random(seed)
    rows = []
    for t in range(tasks):
        rate = rnd.random()
        for e in range(k):
            passed = rnd.random() < rate
            turns = rnd.randint(2, 5) if layout == "episode" else 1
            episode = f"ep-{t}-{e}-{rnd.randrange(10**6)}"
            for u in range(turns):
                own = {"episode": episode, "draw": f"s{len(rows)}", "task": f"sample-{t}",
                       "run": "run-7f3a", "batch": f"b{t // 4}"}  # fmt: skip
                row: dict[str, Any] = {"task_id": f"t{t}", "model": MODEL, "truncated": False,
                                       "completion": f"turn {u} {rnd.random()}",
                                       "reward": float(passed and u == turns - 1)}  # fmt: skip
                _nest(row, place, name, own[layout])
                rows.append(row)
    return rows


@SETTINGS
@given(
    seed=st.integers(0, 10**6),
    layout=st.sampled_from(LAYOUTS),
    place=st.sampled_from(EXTRA_PLACES),
    name=st.sampled_from(EPISODE_NAMES),
    tasks=st.integers(8, 40),
    k=st.integers(2, 6),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_an_episode_under_any_name_is_one_rollout(
    tmp_path: Path, seed: int, layout: str, place: str, name: str, tasks: int, k: int, kind: str
) -> None:
    if name in EPISODE_NAMES and layout in ("task", "run", "batch"):
        return  # an episode's own name is one: repeated within a task it is refused as turns
    rows = _rows(layout, place, name, tasks, k, seed)
    path = write_rows(Path(tempfile.mkdtemp(dir=tmp_path)), rows, kind)
    if layout == "episode":
        with pytest.raises(InputError, match="rows repeat an episode") as err:
            route_rows(path, MODEL)
        assert err.value.field == place + name
        return
    route = route_rows(path, MODEL)
    rollouts = next(c for c in route.checks if c.key == "rollouts_per_task")
    assert rollouts.measured["tasks"] == tasks
    assert rollouts.measured["k"] == k
    assert rollouts.measured["max_rows_per_group"] == k
