"""A per-document metric that is the mean correctness of n samples is a pass count of n draws,
never a 0/1 grade of one (``io/draws.py``; DESIGN section 1).

A seeded simulator writes lighteval details (``doc``, ``model_response.text`` one reply per
sample, ``metric``) for docs of known pass counts, under every way lighteval names such a
metric (``math_pass@1:N_samples``, ``pass@k:k=1&n=N``, ``avg@n:n=N``, ``pass@k:k=1`` with n
the replies' count), alone or beside the first-sample metric, with the first doc at a
fraction, at 0 or at n of n: each doc must read as n rollouts with its own passes, whatever
the first row holds.
"""

from __future__ import annotations

import random
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from read_helpers import frame_of
from rows_files import route_rows
from whilecli.errors import InputError

MODEL = "Qwen/Qwen3-0.6B"
DATE = "2025-10-01T12-00-00.000000"
#: How lighteval names the mean of n samples' correctness.
NAMES = {
    "samples": lambda n: f"math_pass@1:{n}_samples",
    "params": lambda n: f"pass@k:k=1&n={n}",
    "avg": lambda n: f"avg@n:n={n}",
    "unsaid": lambda n: "pass@k:k=1",
}


def _details(
    folder: Path, seed: int, n: int, name: str, first: str, beside: bool
) -> tuple[Path, list[int]]:
    """A lighteval details file of docs with ``n`` samples each, and each doc's passes."""
    rng = random.Random(seed)
    docs = rng.randint(12, 30)
    counts = [rng.randint(0, n) for _ in range(docs)]
    counts[0] = {"fraction": max(1, min(n - 1, counts[0])), "none": 0, "all": n}[first]
    metric = NAMES[name](n)
    rows = []
    for i, c in enumerate(counts):
        grades = [j < c for j in range(n)]
        rng.shuffle(grades)
        scores = ({"math_pass@1:1_samples": float(grades[0])} if beside else {}) | {metric: c / n}
        rows.append(
            {
                "doc": {"query": f"Problem {i}", "choices": [str(i)], "id": str(i)},
                "model_response": {
                    "input": f"Problem {i}",
                    "text": [f"s{j}: {i if ok else -1}" for j, ok in enumerate(grades)],
                },
                "metric": scores,
            }
        )
    out = folder / "details" / MODEL / DATE
    out.mkdir(parents=True)
    path = out / f"details_lighteval|math_500|0_{DATE}.parquet"
    pl.DataFrame(rows).write_parquet(path)
    return path, counts


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", sorted(NAMES))
@pytest.mark.parametrize("first", ["fraction", "none", "all"])
@pytest.mark.parametrize("beside", [True, False])
def test_a_mean_of_n_samples_reads_as_n_draws(
    tmp_path: Path, seed: int, name: str, first: str, beside: bool
) -> None:
    n = random.Random(seed).choice([2, 3, 4, 8])
    path, counts = _details(tmp_path, seed, n, name, first, beside)
    frame, _ = frame_of(path)
    assert frame.height == n * len(counts)
    passes = frame.group_by("task_id").agg(pl.col("reward").sum(), pl.len())
    got = {r["task_id"]: (r["reward"], r["len"]) for r in passes.iter_rows(named=True)}
    assert got == {str(i): (float(c), n) for i, c in enumerate(counts)}
    route = route_rows(path, MODEL)
    k = next(c for c in route.checks if c.key == "rollouts_per_task")
    assert k.measured["k"] == n, k.why


@pytest.mark.parametrize("seed", range(3))
def test_an_aggregate_over_samples_is_never_a_grade(tmp_path: Path, seed: int) -> None:
    """maj@4 is 0 or 1 on every doc, yet no reply's grade: not read as one."""
    path, _ = _details(tmp_path, seed, 4, "samples", "all", False)
    frame = pl.read_parquet(path)
    frame = frame.with_columns(
        pl.struct(
            pl.col("metric").struct.field("math_pass@1:4_samples").round().alias("maj@4")
        ).alias("metric")
    )
    frame.write_parquet(path)
    with pytest.raises(Exception, match="reward"):
        frame_of(path)


@given(n=st.integers(1, 64), data=st.data())
def test_a_mean_of_n_grades_counts_its_passes(n: int, data: st.DataObject) -> None:
    from whilecli.io import draws

    c = data.draw(st.integers(0, n))
    assert draws.passes_of(c / n, n) == c
    assert draws.passes_of((c + 0.5) / n, n) is None or n > 10**6


@pytest.mark.parametrize(
    ("name", "mean", "n"),
    [
        ("math_pass@1:4_samples", True, 4),
        ("pass@1:32_samples", True, 32),
        ("codegen_pass@1:16", True, 16),
        ("pass@k:k=1&n=8", True, 8),
        ("gpqa_pass@k:k=1", True, None),
        ("avg@n:n=4", True, 4),
        ("pass@10:64_samples", False, None),
        ("maj@4", False, None),
        ("pass@k:k=4&n=8", False, None),
        ("extractive_match", False, None),
    ],
)
def test_lighteval_names_say_n(name: str, mean: bool, n: int | None) -> None:
    from whilecli.io import draws

    assert draws.sample_mean(name) == (mean, n)
    assert draws.aggregate(name) == (not mean and name != "extractive_match")


@pytest.mark.parametrize("seed", range(3))
def test_a_single_sample_metric_is_one_draw(tmp_path: Path, seed: int) -> None:
    """math_pass@1:1_samples alone (n = 1 by its name) is each doc's one graded reply."""
    path, _ = _details(tmp_path, seed, 1, "samples", "all", False)
    frame, _ = frame_of(path)
    assert frame.height == pl.read_parquet(path).height


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("first", [0.0, 1.0])
def test_the_metric_picker_reads_more_than_the_first_row(
    tmp_path: Path, seed: int, first: float
) -> None:
    """A score that is 0 or 1 on the first doc and partial on later ones (f1) is no grade;
    the 0/1 metric beside it is (extractive_match), whatever the first doc holds."""
    rng = random.Random(seed)
    docs = rng.randint(12, 40)
    grades = [float(rng.random() < 0.5) for _ in range(docs)]
    scores = [first] + [rng.choice([0.0, 0.25, 0.5, 1.0]) for _ in range(docs - 1)]
    scores[rng.randint(1, docs - 1)] = 0.5
    rows = [
        {
            "doc": {"query": f"Problem {i}", "choices": [str(i)], "id": str(i)},
            "model_response": {"input": f"Problem {i}", "text": [f"reply {i}"]},
            "metric": {"f1": scores[i], "extractive_match": grades[i]},
        }
        for i in range(docs)
    ]
    out = tmp_path / "details" / MODEL / DATE
    out.mkdir(parents=True)
    path = out / f"details_lighteval|squad|0_{DATE}.parquet"
    pl.DataFrame(rows).write_parquet(path)
    frame, _ = frame_of(path)
    assert frame.sort("task_id")["reward"].to_list() == [
        grades[i] for i in sorted(range(docs), key=str)
    ]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", ["pass@k:k=1", "avg@n"])
def test_a_mean_whose_n_cannot_be_told_is_not_read_as_one_draw(
    tmp_path: Path, seed: int, name: str
) -> None:
    """0/1 on every doc, n in neither the name nor a list of replies: k = 1 is not read."""
    rng = random.Random(seed)
    rows = [
        {
            "doc": {"query": f"Problem {i}", "choices": [str(i)], "id": str(i)},
            "model_response": {"input": f"Problem {i}", "text": f"reply {i}"},
            "metric": {name: float(rng.random() < 0.5)},
        }
        for i in range(rng.randint(10, 30))
    ]
    out = tmp_path / "details" / MODEL / DATE
    out.mkdir(parents=True)
    path = out / f"details_lighteval|aime24|0_{DATE}.parquet"
    pl.DataFrame(rows).write_parquet(path)
    with pytest.raises(InputError, match="reward") as refused:
        frame_of(path)
    if "pass" in name:  # the hint that names it says when it may be read as one draw
        assert "sampled once" in str(refused.value)
