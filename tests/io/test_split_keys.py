"""A ``split`` column is no dataset key: one task's draws are written under ``test`` in one
file and ``Test`` in another, or under a fold number, as often as a dataset's splits number
their rows alike. A ``split`` column (a plain training file's) changes nothing: the pool
routes exactly as without it. The generator knows each row's task.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import write_rows
from whilecli.route import run_route
from whilecli.route.model import Route

SETTINGS = settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
MODEL = "Qwen/Qwen3-8B"


def _route(folder: Path, parts: list[list[dict[str, Any]]], kind: str) -> Route:
    paths = []
    for i, rows in enumerate(parts):
        (folder / str(i)).mkdir()
        paths.append(str(write_rows(folder / str(i), rows, kind)))
    route = run_route(paths, model=MODEL)
    assert isinstance(route, Route)
    return route


@SETTINGS
@given(
    seed=st.integers(0, 10**6),
    tasks=st.integers(10, 60),
    k=st.integers(2, 8),
    files=st.integers(1, 2),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_one_split_on_every_row_routes_as_without_it(
    tmp_path: Path, seed: int, tasks: int, k: int, files: int, kind: str
) -> None:
    rnd = random.Random(seed)
    rows = []
    for t in range(tasks):
        rate = rnd.choice([0.0, 1.0, 0.2, 0.6])
        rows += [{"task_id": t, "reward": float(rnd.random() < rate),
                  "completion": f"r{rnd.random()}", "model": MODEL} for _ in range(k)]  # fmt: skip
    parts = [rows[f::files] for f in range(files)]
    bare = _route(Path(tempfile.mkdtemp(dir=tmp_path)), parts, kind)
    labelled = [[{**r, "split": "train"} for r in part] for part in parts]
    split = _route(Path(tempfile.mkdtemp(dir=tmp_path)), labelled, kind)
    assert (split.route, split.method, split.provisional, split.headline) == (
        bare.route,
        bare.method,
        bare.provisional,
        bare.headline,
    )
    assert [(c.key, c.status, c.measured) for c in split.checks] == [
        (c.key, c.status, c.measured) for c in bare.checks
    ]
