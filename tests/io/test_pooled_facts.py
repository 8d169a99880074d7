"""Facts of the pool, not of each file (DESIGN section 1, "Identical draws", "Task ids are
checked against prompts"; section 2, "Data quality first"): a task whose rows lie in several
files (one file per seed, a resumed run's shards) is one task, and what its rows say is read
over all of them, as it is over one file holding the same rows.

The generator writes one pool, then splits its rows over 1 to 4 files by draw (a seed per
file) or by a resumed run's repeated tail; the facts and the verdict must not depend on the
split.
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import finding_kinds
from whilecli.errors import InputError
from whilecli.route import run_route
from whilecli.route.model import Route
from whilecli.route.slices import Slices

MODEL = "Qwen/Qwen3-8B"
SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _write(folder: Path, files: list[list[dict[str, Any]]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, rows in enumerate(files):
        text = "".join(json.dumps(r) + "\n" for r in rows)
        (folder / f"output-rs{i}.jsonl").write_text(text, encoding="utf-8")
    return folder


def _route(path: Path) -> Route:
    got = run_route(str(path), model=MODEL)
    assert isinstance(got, Route)
    return got


@SETTINGS
@given(seed=st.integers(0, 10**6), k=st.integers(2, 4), uuid=st.booleans())
def test_one_file_per_seed_routes_as_one_file(
    tmp_path: Path, seed: int, k: int, uuid: bool
) -> None:
    """Each file holds one draw of every prompt; with ``uuid`` every row its own id, which in
    one file is keyed by the prompt: so it must be across files."""
    rnd = random.Random(seed)
    rates = [rnd.choice([0.0, 0.3, 0.6, 1.0]) for _ in range(40)]
    files = []
    for draw in range(k):
        rows = []
        for t, p in enumerate(rates):
            tid = f"{seed}-{draw}-{t}" if uuid else f"q{t}"
            reply = f"draw {draw} of {t}: {rnd.random()}"
            rows.append(
                {"id": tid, "prompt": f"Question {t}?", "reward": float(rnd.random() < p),
                 "completion": reply, "model": MODEL}
            )  # fmt: skip
        files.append(rows)
    case = tempfile.mkdtemp(dir=tmp_path)  # one folder per example: tmp_path is shared
    one = _route(_write(Path(case) / "one", [sum(files, [])]))
    split = _route(_write(Path(case) / "split", files))
    assert split.to_dict()["summary"] == one.to_dict()["summary"]
    assert (split.route, split.method, split.provisional) == (
        one.route,
        one.method,
        one.provisional,
    )
    assert ("per_row_ids" in finding_kinds(split)) == uuid


@SETTINGS
@given(seed=st.integers(0, 10**6), repeated=st.integers(30, 60))
def test_a_resumed_runs_repeated_rows_are_seen_across_shards(
    tmp_path: Path, seed: int, repeated: int
) -> None:
    """A k = 1 run whose second shard repeats the first's last rows byte for byte: those
    tasks are one draw repeated, whichever file holds the repeat."""
    rnd = random.Random(seed)
    rows = [
        {"task_id": f"t{t}", "reward": float(rnd.random() < 0.4), "completion": f"r{t}",
         "model": MODEL}
        for t in range(200)
    ]  # fmt: skip
    tail = [dict(r, reward=0.0) for r in rows[-repeated:]]
    rows = rows[:-repeated] + tail
    case = tempfile.mkdtemp(dir=tmp_path)  # one folder per example: tmp_path is shared
    one = _route(_write(Path(case) / "one", [rows + tail]))
    split = _route(_write(Path(case) / "split", [rows, tail]))
    assert "repeated_draws" in finding_kinds(one) or "some_repeated_draws" in finding_kinds(one)
    assert finding_kinds(split) == finding_kinds(one)
    assert (split.method, split.provisional) == (one.method, one.provisional)
    assert split.provisional


def test_the_error_share_is_the_pools(tmp_path: Path) -> None:
    """One shard mostly errors among clean ones: the pool's share decides, as in one file."""

    def rows(n: int, errors: int, at: int) -> list[dict[str, Any]]:
        return [
            {"task_id": f"t{(at + i) // 4}", "reward": float(i % 3 == 0), "model": MODEL,
             "completion": "" if i < errors else f"reply {at + i}",
             "error": "429 Too Many Requests" if i < errors else None}
            for i in range(n)
        ]  # fmt: skip

    folder = _write(tmp_path / "p", [rows(100, 90, 0), rows(200, 0, 100)])
    assert isinstance(_route(folder), Route)
    with pytest.raises(InputError, match="most replies are errors"):
        _route(_write(tmp_path / "q", [rows(100, 90, 0), rows(40, 0, 100)]))


@settings(SETTINGS, max_examples=5)
@given(
    seed=st.integers(0, 10**6),
    k=st.integers(2, 4),
    uuid=st.lists(st.sampled_from(["none", "across", "within"]), min_size=2, max_size=3),
)
def test_each_slice_of_files_per_seed_keys_its_ids_as_its_rows_alone(
    tmp_path: Path, seed: int, k: int, uuid: list[str]
) -> None:
    """``--by model`` over one file per seed holding several models' rows: each model's ids
    one per row are found over its rows in every file (``across``: each prompt once per file;
    ``within``: twice per file, so a file's own rows show them), as the route of that
    model's rows alone, in files per seed of their own, finds them."""
    rnd = random.Random(seed)
    models = [f"org/model-{m}" for m in range(len(uuid))]
    files: list[list[dict[str, Any]]] = [[] for _ in range(k)]
    alone: dict[str, list[list[dict[str, Any]]]] = {m: [[] for _ in range(k)] for m in models}
    for model, kind in zip(models, uuid, strict=True):
        rates = [rnd.choice([0.0, 0.3, 0.6, 1.0]) for _ in range(30)]
        for draw in range(k):
            for t, p in enumerate(rates):
                for twice in range(2 if kind == "within" else 1):
                    tid = f"{model}-{draw}-{t}-{twice}" if kind != "none" else f"q{t}"
                    row = {"id": tid, "prompt": f"Question {t}?", "model": model,
                           "reward": float(rnd.random() < p),
                           "completion": f"{model} {draw} {t} {twice}: {rnd.random()}"}  # fmt: skip
                    files[draw].append(row)
                    alone[model][draw].append(row)
    case = Path(tempfile.mkdtemp(dir=tmp_path))  # one folder per example: tmp_path is shared
    sliced = run_route(str(_write(case / "pool", files)), by="model")
    assert isinstance(sliced, Slices)
    got = dict(sliced.routes)
    for n, model in enumerate(models):
        one = run_route(str(_write(case / f"alone{n}", alone[model])))
        assert isinstance(one, Route)
        mine = got[model]
        assert isinstance(mine, Route)
        assert mine.to_dict()["summary"] == one.to_dict()["summary"], (model, uuid[n])
        assert finding_kinds(mine) == finding_kinds(one)
        said = {f.kind: f.to_dict() for f in one.data_quality}
        assert {f.kind: f.to_dict() for f in mine.data_quality}.get("per_row_ids") == said.get(
            "per_row_ids"
        )
        assert ("per_row_ids" in said) == (uuid[n] != "none")
