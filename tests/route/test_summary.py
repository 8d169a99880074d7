"""``whilecli summarize``: the per-task summary routes exactly as the rows behind it.

Every comparison is of the whole JSON report (``Route.to_dict()``): verdict, every check's
status and measured numbers, every interval, the notes and the sources; only
``inputs.paths`` differ (the summary's file, not the rows').
"""

from __future__ import annotations

import json
import math
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import whilecli.route.summary as summary_module
from conftest import EXAMPLES, ROOT
from whilecli.io.read import read_rows
from whilecli.route import run_route
from whilecli.route.summary import (
    SUMMARY_SCHEMA,
    merge_summaries,
    summary_frame,
    write_merged,
    write_summary,
)

STUDENT = "Qwen/Qwen3-0.6B"
VOCAB = {"teacher_vocab": 151936, "student_vocab": 151936}
REAL = ROOT / "tests" / "data" / "real"
DOC = ROOT / "docs" / "scale.md"
FAST = {"bootstrap_draws": 200}


def report(paths: list[str], **kwargs: Any) -> dict[str, Any]:
    """The route's JSON report without the input paths (which name different files)."""
    out = run_route(paths, **kwargs).to_dict()
    out["inputs"].pop("paths")
    if "teacher" in out["inputs"]:
        out["inputs"]["teacher"].pop("paths")
    return out


def summarise(paths: list[str], out: Path, **read: Any) -> str:
    write_summary(read_rows(paths, **read), out)
    return str(out)


# --- a plain-Python reference of the summary ----------------------------------------------


def reference_summary(rows: list[dict[str, Any]], threshold: float) -> dict[str, dict]:
    """Per task, by a loop over the rows: the counts of the module docstring's table."""
    out: dict[str, dict] = {}
    for r in rows:
        t = out.setdefault(
            r["task_id"],
            {
                "n": 0,
                "passes": 0,
                "truncated": 0,
                "truncated_known": 0,
                "truncated_passes": 0,
                "partial_rows": 0,
                "reward_sum": 0.0,
                "reward_sumsq": 0.0,
                "models": defaultdict(int),
                "model_passes": defaultdict(int),
            },
        )
        passed = r["reward"] >= threshold
        t["n"] += 1
        t["passes"] += passed
        if r["truncated"] is not None:
            t["truncated_known"] += 1
            t["truncated"] += r["truncated"]
            t["truncated_passes"] += r["truncated"] and passed
        t["partial_rows"] += 0 < r["reward"] < 1
        t["reward_sum"] += r["reward"]
        t["reward_sumsq"] += r["reward"] ** 2
        model = r["model"]
        version = model if model is not None and "@" in model else None
        name = model.split("@")[0] if model is not None else None
        t["models"][(name, version)] += 1
        t["model_passes"][(name, version)] += passed
    return out


def assert_matches_reference(frame: pl.DataFrame, rows: list[dict], threshold: float) -> None:
    ref = reference_summary(rows, threshold)
    assert frame["task_id"].to_list() == sorted(ref)
    assert frame.schema == pl.Schema(SUMMARY_SCHEMA)
    for line in frame.iter_rows(named=True):
        want = ref[line["task_id"]]
        for col in ("n", "passes", "truncated", "truncated_known", "truncated_passes"):
            assert line[col] == want[col], col
        assert line["partial_rows"] == want["partial_rows"]
        assert math.isclose(line["reward_sum"], want["reward_sum"], abs_tol=1e-9)
        assert math.isclose(line["reward_sumsq"], want["reward_sumsq"], abs_tol=1e-9)
        got = {(m["model"], m["policy_version"]): m["rows"] for m in line["models"]}
        assert got == dict(want["models"])
        passes = {(m["model"], m["policy_version"]): m["passes"] for m in line["models"]}
        assert passes == dict(want["model_passes"])
        keys = [(m["model"] is None, m["model"] or "", m["policy_version"] is None,
                 m["policy_version"] or "") for m in line["models"]]  # fmt: skip
        assert keys == sorted(keys)


# --- random pools, sharded at random --------------------------------------------------------

MODELS = [STUDENT, f"{STUDENT}@3", f"{STUDENT}@4", "gpt-4.1-mini", None]
REWARDS = [0.0, 1.0, 0.0, 1.0, 0.5, 0.25]


@st.composite
def pools(draw: st.DrawFn, max_tasks: int = 8) -> list[dict[str, Any]]:
    """Rows of a random pool: tasks of 1-6 rows, rewards with partial values, truncation
    recorded or not per row, writer models with and without versions."""
    n_tasks = draw(st.integers(1, max_tasks))
    models = draw(st.lists(st.sampled_from(MODELS), min_size=1, max_size=3, unique=True))
    known = draw(st.booleans())
    rows = []
    for t in range(n_tasks):
        for _ in range(draw(st.integers(1, 6))):
            truncated = draw(st.sampled_from([True, False, None] if known else [None]))
            rows.append(
                {
                    "task_id": f"t{t:02d}",
                    "reward": draw(st.sampled_from(REWARDS)),
                    "truncated": truncated,
                    "model": draw(st.sampled_from(models)),
                }
            )
    return rows


def write_rows(rows: list[dict], path: Path) -> str:
    frame = pl.DataFrame(
        rows,
        schema={"task_id": pl.String, "reward": pl.Float64, "truncated": pl.Boolean,
                "model": pl.String},
    )  # fmt: skip
    if path.suffix == ".parquet":
        frame.write_parquet(path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def shard(draw: st.DrawFn, rows: list[dict], tmp: Path, name: str) -> list[str]:
    """Rows split at random (a task may span shards) into 1-4 non-empty files."""
    k = draw(st.integers(1, min(4, len(rows))))
    order = draw(st.permutations(range(len(rows))))
    cuts = sorted(draw(st.lists(st.integers(1, len(rows) - 1), min_size=k - 1, max_size=k - 1,
                                unique=True))) if k > 1 else []  # fmt: skip
    bounds = [0, *cuts, len(rows)]
    files = []
    for i in range(len(bounds) - 1):
        # each row carries its index, so no two shards hold the same bytes (read once)
        part = [{**rows[j], "rollout": j} for j in order[bounds[i] : bounds[i + 1]]]
        suffix = draw(st.sampled_from([".parquet", ".jsonl"]))
        files.append(write_rows(part, tmp / f"{name}{i}{suffix}"))
    return files


_counter = iter(range(10**9))


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data(), student=pools(), teacher=st.one_of(st.none(), pools()))
def test_random_pools_sharded_route_as_their_rows(
    tmp_path: Path, data: st.DataObject, student: list[dict], teacher: list[dict] | None
) -> None:
    tmp = tmp_path / str(next(_counter))
    tmp.mkdir()
    threshold = data.draw(st.sampled_from([None, 0.5, 1.0]))
    if threshold is None and any(0 < r["reward"] < 1 for r in student + (teacher or [])):
        threshold = 1.0  # partial credit without a threshold is refused (a tenth or more)
    model = data.draw(st.sampled_from([None, STUDENT, f"{STUDENT}@4"]))
    opts: dict[str, Any] = {"model": model, "pass_threshold": threshold, **FAST, **VOCAB}
    s_files = shard(data.draw, student, tmp, "s")
    t_files = shard(data.draw, teacher, tmp, "t") if teacher else None
    want = report(s_files, teacher=t_files, **opts)

    read = {"pass_threshold": threshold}
    s_sums = [summarise([f], tmp / f"{Path(f).stem}.sum.parquet", **read) for f in s_files]
    t_sums = (
        [summarise([f], tmp / f"{Path(f).stem}.sum.parquet", **read) for f in t_files]
        if t_files
        else None
    )
    # every shard's summary, routed together (merged on read), and the merged file
    assert report(s_sums, teacher=t_sums, **opts) == want
    merged = str(write_merged(s_sums, tmp / "merged.parquet"))
    t_merged = str(write_merged(t_sums, tmp / "t_merged.parquet")) if t_sums else None
    assert report([merged], teacher=t_merged, **opts) == want
    # the merged counts are the reference counts of all the rows, folded a file at a time too
    assert_matches_reference(merge_summaries(s_sums), student, threshold or 1.0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(summary_module, "MERGE_STEP_LINES", 1)
        assert_matches_reference(merge_summaries(s_sums), student, threshold or 1.0)
        assert report(s_sums, teacher=t_sums, **opts) == want


# --- the example pools --------------------------------------------------------------------

EXAMPLE_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("mixed", {"model": STUDENT}, "grpo"),
    ("floor", {}, "floor"),
    ("floor", {"size_b": 0.6}, "floor"),
    ("saturated", {}, "saturated"),
    ("single", {}, "single-rollout"),
    ("truncated_passes", {}, "fix-reward"),
    ("other_model", {"model": STUDENT}, "off-policy"),
    ("mixed", {}, "grpo"),
]


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
@pytest.mark.parametrize(("name", "opts", "route"), EXAMPLE_CASES)
def test_examples_route_the_same_from_their_summary(
    tmp_path: Path, name: str, opts: dict[str, Any], route: str, suffix: str
) -> None:
    rows = str(EXAMPLES / f"{name}{suffix}")
    summary = summarise([rows], tmp_path / "tasks.parquet")
    want = report([rows], **opts)
    assert want["route"] == route
    assert report([summary], **opts) == want
    assert report([summary], summary=True, **opts) == want
    assert run_route([summary], **opts).to_dict()["inputs"]["paths"] == [summary]


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_teacher_summaries_route_the_same(tmp_path: Path, suffix: str) -> None:
    student, teacher = (str(EXAMPLES / f"{n}{suffix}") for n in ("student", "teacher"))
    s_sum = summarise([student], tmp_path / "s.parquet")
    t_sum = summarise([teacher], tmp_path / "t.parquet")
    for opts in ({"model": STUDENT, **VOCAB}, {"model": STUDENT}, {"strict": True}):
        want = report([student], teacher=[teacher], **opts)
        assert want["method"] == "opd"
        assert report([s_sum], teacher=[t_sum], **opts) == want
        assert report([student], teacher=[t_sum], **opts) == want
        assert report([s_sum], teacher=[teacher], **opts) == want


def test_example_rows_match_the_plain_python_summary() -> None:
    for name in ("mixed", "single", "truncated_passes", "other_model", "student"):
        rows = [json.loads(line) for line in (EXAMPLES / f"{name}.jsonl").read_text().splitlines()]
        for r in rows:
            r.setdefault("truncated", None)
            r.setdefault("model", None)
        frame = summary_frame(read_rows([str(EXAMPLES / f"{name}.jsonl")]))
        assert_matches_reference(frame, rows, 1.0)


def test_hand_computed_summary(tmp_path: Path) -> None:
    rows = [
        {"task_id": "a", "reward": 1.0, "truncated": True, "model": "M@2"},
        {"task_id": "a", "reward": 0.5, "truncated": None, "model": "M@1"},
        {"task_id": "a", "reward": 0.0, "truncated": False, "model": "M@2"},
        {"task_id": "b", "reward": 1.0, "truncated": None, "model": None},
    ]
    path = write_rows(rows, tmp_path / "r.jsonl")
    frame = summary_frame(read_rows([path], pass_threshold=0.5))
    a, b = frame.iter_rows(named=True)
    assert (a["n"], a["passes"], a["truncated"], a["truncated_known"]) == (3, 2, 1, 2)
    assert (a["truncated_passes"], a["partial_rows"]) == (1, 1)
    assert (a["reward_sum"], a["reward_sumsq"]) == (1.5, 1.25)
    assert a["models"] == [
        {"model": "M", "policy_version": "M@1", "rows": 1, "passes": 1},
        {"model": "M", "policy_version": "M@2", "rows": 2, "passes": 1},
    ]
    assert (b["n"], b["passes"], b["truncated_known"]) == (1, 1, 0)
    assert b["models"] == [{"model": None, "policy_version": None, "rows": 1, "passes": 1}]


# --- real dumps: other formats, reader notes, sources that differ between files ------------

#: The first set of real dumps (JSON Lines that route as they are; the second set's formats
#: are read in tests/io/test_formats_real.py).
FIRST_SET = ("verifiers/wiki_search", "verifiers/wordle", "nemo-gym", "prime-rft", "lm-eval/nego")
REAL_FILES = [
    f
    for f in sorted(
        str(p) for p in REAL.rglob("*.jsonl") if "samples_" in p.name or p.name != "results.jsonl"
    )
    + sorted(str(p) for p in REAL.rglob("results.jsonl"))
    if any(f"/{d}" in f for d in FIRST_SET)
]


def test_real_dumps_summarised_apart_route_as_read_together(tmp_path: Path) -> None:
    opts = {"pass_threshold": 0.5, "pool": True, **FAST}  # several evaluations, on purpose
    sums = [
        summarise([f], tmp_path / f"s{i}.parquet", pass_threshold=0.5)
        for i, f in enumerate(REAL_FILES)
    ]
    for f, s in zip(REAL_FILES, sums, strict=True):
        assert report([s], **opts) == report([f], **opts)
    together = report(REAL_FILES, **opts)
    assert report(sums, **opts) == together
    at_once = summarise(REAL_FILES, tmp_path / "at_once.parquet", pass_threshold=0.5, pool=True)
    assert report([at_once], **opts) == together
    assert report([str(write_merged(sums, tmp_path / "all.parquet"))], **opts) == together
    assert len(set(together["inputs"]["format"].split(" + "))) > 1


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    evaluations=st.lists(st.sampled_from(["add", "spell", "sort"]), min_size=2, max_size=3),
    ids=st.integers(5, 40),
    seed=st.integers(0, 10**6),
)
def test_summaries_of_evaluations_told_apart_by_prompts_route_as_their_rows_pooled(
    tmp_path: Path, evaluations: list[str], ids: int, seed: int
) -> None:
    """Files without sidecars whose ids meet under different prompts are different
    evaluations (and shards of one where the prompts agree): summarised one by one, they
    route as the files read with --pool do, never as one task per id."""
    import random

    rng = random.Random(seed)
    paths = []
    tmp_path = Path(tempfile.mkdtemp(dir=tmp_path))  # each example its own files
    for i, words in enumerate(evaluations):
        rate = rng.random()
        rows = [
            {"id": t, "prompt": f"{words} {t}", "reward": float(rng.random() < rate)}
            for t in range(ids)
            for _ in range(4)
        ]
        path = tmp_path / f"f{seed}-{i}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        paths.append(str(path))
    opts = {"pool": True, **FAST}
    sums = [summarise([p], Path(p).with_suffix(".parquet")) for p in paths]
    pooled = report(paths, **opts)
    assert report(sums, **opts) == pooled
    tasks = next(c for c in pooled["checks"] if c["key"] == "rollouts_per_task")
    assert tasks["measured"]["grouped_tasks"] == ids * len(set(evaluations)), tasks
