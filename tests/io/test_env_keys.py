"""One file of several datasets whose ids restart in each (verl's ``data_source`` beside an
``index`` numbered from 0 per dataset): the same id under two datasets is two tasks. The
generator draws 1 to 3 datasets over overlapping or disjoint id ranges, a rate per (dataset,
id), in either encoding and under any dataset alias; the truth is counted by a plain loop
over the rows, keyed by the pair, and the band must count exactly its tasks and split tasks.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import route_rows, write_rows
from whilecli.io.aliases import ENV_ALIASES
from whilecli.io.read import read_rows

SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
MODEL = "Qwen/Qwen3-8B"


def _truth(rows: list[dict[str, Any]], env: str) -> tuple[int, int]:
    """(tasks, split tasks) keyed by (dataset, id), by a plain loop over the rows."""
    groups: dict[tuple[Any, Any], list[float]] = {}
    for r in rows:
        groups.setdefault((r[env], r["task_id"]), []).append(r["reward"])
    split = sum(1 for xs in groups.values() if len(xs) > 1 and 0 < sum(xs) < len(xs))
    return len(groups), split


@SETTINGS
@given(
    seed=st.integers(0, 10**6),
    env=st.sampled_from(ENV_ALIASES),
    datasets=st.integers(1, 3),
    overlap=st.booleans(),
    k=st.integers(2, 5),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_an_id_under_two_datasets_is_two_tasks(
    tmp_path: Path, seed: int, env: str, datasets: int, overlap: bool, k: int, kind: str
) -> None:
    rnd = random.Random(seed)
    rows = []
    for d in range(datasets):
        start = 0 if overlap else 100 * d
        for i in range(start, start + rnd.randint(20, 60)):
            rate = rnd.choice([0.0, 1.0, 0.5, 0.1])
            for _ in range(k):
                rows.append({env: f"data-{d}", "task_id": i, "reward": float(rnd.random() < rate),
                             "truncated": False, "model": MODEL})  # fmt: skip
    rnd.shuffle(rows)
    path = write_rows(Path(tempfile.mkdtemp(dir=tmp_path)), rows, kind)
    tasks, split = _truth(rows, env)
    route = route_rows(path, MODEL)
    band = next(c for c in route.checks if c.key == "band")
    rollouts = next(c for c in route.checks if c.key == "rollouts_per_task")
    assert rollouts.measured["tasks"] == tasks
    assert band.measured["split_tasks"] == split
    read = read_rows([str(path)])
    keyed = any(env in note and "keyed" in note for note in read.notes)
    assert keyed == (overlap and datasets > 1)


def test_ids_under_one_dataset_keep_their_names(tmp_path: Path) -> None:
    """Ids that never meet under two datasets are read as written (a teacher's rows without
    the column still pair with them)."""
    rows = [{"data_source": f"d{i % 2}", "task_id": i, "reward": float(j % 2), "model": MODEL}
            for i in range(40) for j in range(4)]  # fmt: skip
    path = write_rows(tmp_path, rows, "jsonl")
    ids = read_rows([str(path)]).frame.select("task_id").unique().collect()["task_id"]
    assert sorted(ids.to_list(), key=int) == [str(i) for i in range(40)]
