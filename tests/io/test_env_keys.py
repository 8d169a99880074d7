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

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import route_rows, write_rows
from whilecli.io.aliases import ENV_ALIASES
from whilecli.io.read import read_rows
from whilecli.route import run_route
from whilecli.route.model import Route

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


def _files(folder: Path, parts: dict[str, list[dict[str, Any]]], kind: str) -> list[str]:
    paths = []
    for name, rows in parts.items():
        sub = folder / name
        sub.mkdir()
        paths.append(str(write_rows(sub, rows, kind)))
    return paths


@SETTINGS
@given(
    seed=st.integers(0, 10**6),
    env=st.sampled_from(["data_source", "dataset", "env_id"]),
    datasets=st.integers(2, 3),
    mixed_file=st.booleans(),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_an_id_under_two_datasets_in_two_files_is_two_tasks(
    tmp_path: Path, seed: int, env: str, datasets: int, mixed_file: bool, kind: str
) -> None:
    """Each dataset in a file of its own (ids from 0 in each), or one file of two datasets
    beside a file of one: every file keys its tasks alike, (dataset, id)."""
    rnd = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for d in range(datasets):
        for i in range(rnd.randint(15, 40)):
            rate = rnd.choice([0.0, 1.0, 0.5])
            rows += [{env: f"data-{d}", "task_id": i, "reward": float(rnd.random() < rate),
                      "model": MODEL} for _ in range(3)]  # fmt: skip
    parts: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        d = int(r[env].split("-")[1])
        name = "a" if mixed_file and d < 2 else f"f{d}"
        parts.setdefault(name, []).append(r)
    paths = _files(Path(tempfile.mkdtemp(dir=tmp_path)), parts, kind)
    tasks, split = _truth(rows, env)
    route = run_route(paths, model=MODEL)
    assert isinstance(route, Route)
    band = next(c for c in route.checks if c.key == "band")
    rollouts = next(c for c in route.checks if c.key == "rollouts_per_task")
    assert rollouts.measured["tasks"] == tasks
    assert band.measured["split_tasks"] == split


@SETTINGS
@given(
    seed=st.integers(0, 10**6),
    evals=st.integers(2, 3),
    shards=st.integers(1, 2),
    k=st.integers(1, 3),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_evaluations_pooled_on_purpose_keep_their_tasks_apart(
    tmp_path: Path, seed: int, evals: int, shards: int, k: int, kind: str
) -> None:
    """``--pool`` over files of different evaluations (one id, other prompts): each
    evaluation's tasks are its own, and an evaluation's shards (its ids under the same
    prompts, a task's draws in both) still pool as one evaluation."""
    rnd = random.Random(seed)
    parts: dict[str, list[dict[str, Any]]] = {}
    truth: dict[tuple[int, int], list[float]] = {}
    for e in range(evals):
        for s in range(shards):
            for i in range(rnd.randint(10, 30) if s == 0 else 10):
                for _ in range(k):
                    reward = float(rnd.random() < 0.5)
                    truth.setdefault((e, i), []).append(reward)
                    parts.setdefault(f"e{e}s{s}", []).append(
                        {
                            "task_id": i,
                            "prompt": f"eval {e} question {i}",
                            "reward": reward,
                            "model": MODEL,
                        }  # fmt: skip
                    )
    paths = _files(Path(tempfile.mkdtemp(dir=tmp_path)), parts, kind)
    route = run_route(paths, model=MODEL, pool=True)
    assert isinstance(route, Route)
    rollouts = next(c for c in route.checks if c.key == "rollouts_per_task")
    assert rollouts.measured["tasks"] == len(truth)
    singles = sum(1 for xs in truth.values() if len(xs) == 1)
    assert rollouts.measured["single_tasks"] == singles


@SETTINGS
@given(
    seed=st.integers(0, 10**6),
    keyed_side=st.sampled_from(["student", "teacher"]),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_a_teacher_of_one_dataset_pairs_with_a_student_keyed_by_dataset(
    tmp_path: Path, seed: int, keyed_side: str, kind: str
) -> None:
    """One side's ids stand under two datasets (keyed ``dataset:id``), the other side holds
    one of them: both are keyed alike, so the shared tasks are that dataset's."""
    rnd = random.Random(seed)
    sizes = {"d0": rnd.randint(10, 30), "d1": rnd.randint(10, 30)}

    def rows(datasets: list[str], model: str) -> list[dict[str, Any]]:
        return [{"data_source": d, "task_id": i, "reward": float(rnd.random() < 0.5),
                 "model": model} for d in datasets for i in range(sizes[d]) for _ in range(3)]  # fmt: skip

    both, one = ["d0", "d1"], [rnd.choice(["d0", "d1"])]
    student = rows(both if keyed_side == "student" else one, MODEL)
    teacher = rows(one if keyed_side == "student" else both, "Qwen/Qwen3-32B")
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    paths = _files(folder, {"s": student, "t": teacher}, kind)
    route = run_route([paths[0]], teacher=[paths[1]], model=MODEL)
    assert isinstance(route, Route)
    check = next(c for c in route.checks if c.key == "teacher")
    assert check.measured["shared_tasks"] == sizes[one[0]]


def test_ids_a_map_names_are_keyed_by_dataset_alike(tmp_path: Path) -> None:
    """``--map task_id=index`` (verl keeps a per-dataset ``index``): an index under two
    datasets is two tasks, as an id alias's is."""
    rows = [{"data_source": d, "index": i, "reward": float(d == "easy"), "model": MODEL}
            for d in ("easy", "hard") for i in range(40) for _ in range(4)]  # fmt: skip
    path = write_rows(tmp_path, rows, "jsonl")
    route = run_route(str(path), model=MODEL, mapping={"task_id": "index"})
    assert isinstance(route, Route)
    band = next(c for c in route.checks if c.key == "band")
    assert band.measured["split_tasks"] == 0 and band.measured["grouped_tasks"] == 80


def test_a_column_that_varies_under_one_prompt_names_no_dataset(tmp_path: Path) -> None:
    """An ``env`` column that holds the worker a rollout ran on (one task's draws under
    several values, each under the task's one prompt) keys nothing: the task is its prompt's."""
    rows = [{"env": f"worker-{j}", "task_id": i, "prompt": f"question {i}",
             "reward": float(j % 2), "model": MODEL}
            for i in range(40) for j in range(4)]  # fmt: skip
    path = write_rows(tmp_path, rows, "jsonl")
    route = run_route(str(path), model=MODEL)
    assert isinstance(route, Route)
    band = next(c for c in route.checks if c.key == "band")
    assert band.measured["grouped_tasks"] == 40 and band.measured["split_tasks"] == 40


@pytest.mark.parametrize("keyed_side", ["before", "after"])
def test_diff_pairs_a_dump_of_one_dataset_with_one_keyed_by_dataset(
    tmp_path: Path, keyed_side: str
) -> None:
    """``diff`` keys both dumps alike, as ``route --teacher`` does."""
    from whilecli.commands.diff import paired_dumps

    def rows(datasets: list[str]) -> list[dict[str, Any]]:
        return [{"data_source": d, "task_id": i, "reward": float(i % 2), "model": MODEL}
                for d in datasets for i in range(20) for _ in range(2)]  # fmt: skip

    two, one = rows(["d0", "d1"]), rows(["d1"])
    files = (
        {"before": two, "after": one} if keyed_side == "before" else {"before": one, "after": two}
    )
    paths = _files(tmp_path, files, "jsonl")
    read = {"mapping": None, "pass_threshold": None, "input_format": None}
    first, second = paired_dumps(paths[0], paths[1], **read)
    shared = set(first.pool.tasks["task_id"]) & set(second.pool.tasks["task_id"])
    assert shared == {f"d1:{i}" for i in range(20)}
