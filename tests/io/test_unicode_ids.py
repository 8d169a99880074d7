"""A task id, or a prompt, written in Unicode's composed form (NFC) in one file and with
combining marks (NFD) in another (macOS file names, some decoders) is one task. The
generator writes each task's draws over two files, each id (or prompt) in a form drawn per
file or per row; the truth counts tasks by the NFC form, by a plain loop.
"""

from __future__ import annotations

import random
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import write_rows
from whilecli.route import run_route
from whilecli.route.model import Route

SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
MODEL = "Qwen/Qwen3-8B"
STEMS = ("café-problème", "naïve-Ångström", "한국어-문제", "ẞtraße-ñu", "plain-ascii")


@SETTINGS
@given(
    seed=st.integers(0, 10**6),
    field=st.sampled_from(["task_id", "prompt"]),
    per_row=st.booleans(),
    tasks=st.integers(5, 40),
    k=st.integers(1, 4),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_an_id_in_either_normal_form_is_one_task(
    tmp_path: Path, seed: int, field: str, per_row: bool, tasks: int, k: int, kind: str
) -> None:
    rnd = random.Random(seed)
    files: list[list[dict[str, Any]]] = [[], []]
    truth: dict[str, int] = {}
    for t in range(tasks):
        name = f"{rnd.choice(STEMS)}-{t}"
        for f, rows in enumerate(files):
            form = ("NFC", "NFD")[f] if not per_row else None
            for _ in range(k):
                written = unicodedata.normalize(form or rnd.choice(["NFC", "NFD"]), name)
                key = unicodedata.normalize("NFC", written)
                truth[key] = truth.get(key, 0) + 1
                rows.append({field: written, "reward": float(rnd.random() < 0.5),
                             "completion": f"r{rnd.random()}", "model": MODEL})  # fmt: skip
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    paths = []
    for f, rows in enumerate(files):
        (folder / str(f)).mkdir()
        paths.append(str(write_rows(folder / str(f), rows, kind)))
    route = run_route(paths, model=MODEL)
    assert isinstance(route, Route)
    rollouts = next(c for c in route.checks if c.key == "rollouts_per_task")
    assert rollouts.measured["tasks"] == len(truth) == tasks
    assert rollouts.measured["k"] == 2 * k
