"""Held-out sizing: the design's formula by hand (367 at effect 0.05, half-width 0.035), the
measured size from paired per-task differences (a case by hand, the bootstrap range against a
plain-Python loop), and ``whilecli size`` on the command line."""

from __future__ import annotations

import json
import math
import random
from collections import Counter

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_check_cli import invoke

from conftest import EXAMPLES
from slow_stats import slow_paired_floor
from whilecli.errors import InputError
from whilecli.route.paired import measured_size, paired_size, sample_sd, size_for_sd
from whilecli.route.stats import fit_beta, holdout_size, leaves_room

Z975 = 1.959963984540054  # standard normal quantile at 0.975 (tables: 1.95996)
Z80 = 0.8416212335729143  # at 0.8 (tables: 0.84162)


def test_design_size_by_hand() -> None:
    # sd = sqrt((0.6·0.4 + 0.65·0.35)/4) = sqrt(0.116875) = 0.341870
    # n = ceil(((1.959964 + 0.841621)·0.341870/0.05)²) = ceil(366.935) = 367
    # half-width = 1.959964·0.341870/sqrt(367) = 0.034976
    held = holdout_size(0.05)
    assert held.n == 367
    assert held.sd == pytest.approx(math.sqrt(0.116875), abs=1e-12)
    assert held.half_width == pytest.approx(0.034976, abs=5e-7)
    assert round(held.half_width, 3) == 0.035
    assert size_for_sd(held.sd, 0.05) == 367


def tasks(rates: list[tuple[int, int]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "task_id": [f"t{i}" for i in range(len(rates))],
            "n": [n for _, n in rates],
            "passes": [c for c, _ in rates],
        }
    )


def test_paired_size_by_hand() -> None:
    # before 1/4, 2/4, 0/4, 1/4; after 3/4, 2/4, 1/4, 0/4 → d = 0.5, 0, 0.25, −0.25
    # mean 0.125, deviations ±0.375, ±0.125 → Σ = 0.3125, sd = sqrt(0.3125/3) = 0.322749
    # n = ceil((2.801585·0.322749/0.05)²) = ceil(327.04) = 328
    # half-width = 1.959964·0.322749/sqrt(328) = 0.034928
    before = tasks([(1, 4), (2, 4), (0, 4), (1, 4)])
    after = tasks([(3, 4), (2, 4), (1, 4), (0, 4)])
    size = paired_size(before, after, 0.05, draws=400)
    assert size.sd == pytest.approx(math.sqrt(0.3125 / 3), abs=1e-12)
    assert size.n == 328
    assert size.half_width == pytest.approx(0.034928, abs=5e-7)
    assert size.paired_tasks == 4
    assert size.low is not None and size.high is not None and size.low <= size.high


def _slow_range(values: list[float], counts: list[int], effect: float, draws: int, seed: int):
    """The bootstrap range by a plain loop: the same multinomial draws, sd and n per draw."""
    order = np.lexsort((np.asarray(counts), np.asarray(values)))
    vals = [values[i] for i in order]
    cnts = [counts[i] for i in order]
    total = sum(cnts)
    rng = np.random.default_rng(seed)
    picks = rng.multinomial(total, [c / total for c in cnts], size=draws)
    sizes = []
    for pick in picks:
        sample = [v for v, m in zip(vals, pick, strict=True) for _ in range(int(m))]
        mean = sum(sample) / total
        sd = math.sqrt(sum((x - mean) ** 2 for x in sample) / (total - 1))
        sizes.append(max(2, math.ceil(((Z975 + Z80) * sd / effect) ** 2)))
    sizes.sort()
    return sizes[int(0.025 * draws)], sizes[int(0.975 * draws) - 1]


@given(
    st.lists(st.tuples(st.integers(-4, 4), st.integers(1, 6)), min_size=3, max_size=8),
    st.sampled_from([0.05, 0.1, 0.2]),
    st.integers(0, 3),
)
@settings(max_examples=40, deadline=None)
def test_range_matches_the_plain_loop(
    cells: list[tuple[int, int]], effect: float, seed: int
) -> None:
    cells = list({v: (v, c) for v, c in cells}.values())  # distinct differences
    values = [v / 4 for v, _ in cells]
    counts = [c for _, c in cells]
    if sum(counts) < 3:
        return
    got = measured_size(np.array(values), np.array(counts), effect, draws=200, seed=seed)
    assert (got.low, got.high) == _slow_range(values, counts, effect, 200, seed)
    flat = [v for v, c in zip(values, counts, strict=True) for _ in range(c)]
    sd = math.sqrt(sum((x - sum(flat) / len(flat)) ** 2 for x in flat) / (len(flat) - 1))
    assert got.sd == pytest.approx(sd, abs=1e-12)
    assert got.n == max(2, math.ceil(((Z975 + Z80) * sd / effect) ** 2))


def test_range_is_close_to_resampling_task_indices() -> None:
    rnd = random.Random(7)
    d = [rnd.choice([-0.5, -0.25, 0, 0, 0.25, 0.5, 0.75]) for _ in range(200)]
    values, counts = np.unique(np.array(d), return_counts=True)
    got = measured_size(values, counts, 0.05, draws=2000, seed=0)
    rng = np.random.default_rng(1)
    arr = np.array(d)
    sizes = sorted(
        max(2, math.ceil(((Z975 + Z80) * arr[rng.integers(0, 200, 200)].std(ddof=1) / 0.05) ** 2))
        for _ in range(2000)
    )
    assert got.low == pytest.approx(sizes[50], rel=0.05)
    assert got.high == pytest.approx(sizes[1949], rel=0.05)
    assert got.low <= got.n <= got.high


def _fitted(pairs: list[tuple[int, int]]) -> tuple[float, float]:
    """The library's fitted prior of one run's tasks (checked against scipy's optimiser in
    tests/route/test_stats.py), so the loop below repeats the rest of the arithmetic."""
    counted = Counter(pairs)
    prior = fit_beta([c for c, _ in counted], [n for _, n in counted], list(counted.values()))
    return prior.a, prior.b


def _slow_floored_range(pairs: list[tuple[int, int]], k: int, effect: float, draws: int):
    """The range with the draws' noise by a plain loop over tasks: one cell per distinct
    (before, after) count in measured_size's order (difference, then tasks, then noise);
    resample the tasks with the same multinomial draws, take each resample's sample
    variance, floor it by the resample's mean noise times that draw's χ²(N − 1)/(N − 1)
    factor, and put it through n."""

    total = len(pairs)
    keys = sorted(set(pairs))
    noise = {}
    for side in (0, 1):  # each run's floor under its own prior (the fit is tested apart)
        counts = [(cell[side], k) for cell in pairs]
        floors = slow_paired_floor(counts, _fitted(counts))
        noise[side] = dict(zip([c for c, _ in counts], floors, strict=True))
    cells = [((a - b) / k, pairs.count((b, a)), noise[1][a] + noise[0][b]) for b, a in keys]
    cells.sort()
    rng = np.random.default_rng(0)
    picks = rng.multinomial(total, [m / total for _, m, _ in cells], size=draws)
    factor = np.random.default_rng([0, 1]).chisquare(total - 1, draws) / (total - 1)
    sizes = []
    for pick, scale in zip(picks, factor, strict=True):
        sample = [(d, f) for (d, _, f), m in zip(cells, pick, strict=True) for _ in range(int(m))]
        mean = sum(d for d, _ in sample) / total
        var = sum((d - mean) ** 2 for d, _ in sample) / (total - 1)
        var = max(var, sum(f for _, f in sample) / total * scale)
        sizes.append(max(2, math.ceil(((Z975 + Z80) * math.sqrt(var) / effect) ** 2)))
    sizes.sort()
    return sizes[int(0.025 * draws)], sizes[int(0.975 * draws) - 1]


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=3, max_size=40))
@settings(max_examples=25, deadline=None)
def test_paired_range_with_the_draws_noise_matches_a_plain_loop(
    pairs: list[tuple[int, int]],
) -> None:
    assume(leaves_room(sum(b for b, _ in pairs) / (4 * len(pairs)), 0.1))  # else refused
    before, after = tasks([(b, 4) for b, _ in pairs]), tasks([(a, 4) for _, a in pairs])
    got = paired_size(before, after, 0.1, draws=200, seed=0)
    assert (got.low, got.high) == _slow_floored_range(pairs, 4, 0.1, 200)


def test_identical_runs_get_a_range_not_a_point() -> None:
    # 200 tasks at 4/8 in both runs: every difference is 0 and the sd is the draws' noise
    # √(2·0.25/8) = 0.25 (the fitted prior is as concentrated as its grid allows: every
    # task at one rate), n = ⌈(2.8016·0.25/0.05)²⌉ = 197; resampling tasks has no spread,
    # but the noise was measured on 200 tasks: its χ²(199) error gives the range
    same = tasks([(4, 8)] * 200)
    got = paired_size(same, same, 0.05, draws=2000)
    assert got.sd == pytest.approx(0.25, abs=1e-4) and got.n == 197
    assert got.low is not None and got.high is not None
    # normal theory for the same quantiles: n·χ²(q)/199 at q = 0.025, 0.975 → about 159, 239
    assert 150 < got.low < 170 and 230 < got.high < 250
    assert got.from_draws is not None and "no paired task's pass rate moved" in got.from_draws


@given(moved=st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8)), min_size=3, max_size=40))
@settings(max_examples=60, deadline=None)
def test_the_report_says_when_the_draws_noise_gives_the_sd(
    moved: list[tuple[int, int]],
) -> None:
    """The sd is the larger of the differences' own and the draws' noise (a plain loop here);
    where the noise is the larger the size says so, and that none moved where none did."""
    assume(leaves_room(sum(a for a, _ in moved) / (8 * len(moved)), 0.05))  # else refused
    before = tasks([(a, 8) for a, _ in moved])
    after = tasks([(b, 8) for _, b in moved])
    got = paired_size(before, after, 0.05, draws=50)
    d = [(b - a) / 8 for a, b in moved]
    mean = sum(d) / len(d)
    own = (sum((x - mean) ** 2 for x in d) / (len(d) - 1)) ** 0.5

    before_floor = slow_paired_floor(
        [(a, 8) for a, _ in moved], _fitted([(a, 8) for a, _ in moved])
    )
    after_floor = slow_paired_floor([(b, 8) for _, b in moved], _fitted([(b, 8) for _, b in moved]))
    noise = ((sum(before_floor) + sum(after_floor)) / len(d)) ** 0.5
    assert got.sd == pytest.approx(max(own, noise), abs=1e-9)
    assert (got.from_draws is not None) == (own < got.sd * (1 - 1e-9))
    if got.from_draws is not None:
        assert ("moved" in got.from_draws) == all(x == 0 for x in d)


@given(
    effect=st.floats(0.01, 0.5),
    base=st.floats(0, 1),
    k=st.integers(1, 16),
    power=st.floats(0.5, 0.99),
    alpha=st.floats(0.001, 0.2),
)
@settings(max_examples=80, deadline=None)
def test_assumed_and_measured_sizes_share_one_formula(
    effect: float, base: float, k: int, power: float, alpha: float
) -> None:
    held = holdout_size(effect, base=base, k=k, power=power, alpha=alpha)
    assert held.n == size_for_sd(held.sd, effect, power, alpha)
    assert size_for_sd(held.sd, effect * 2, power, alpha) <= held.n  # a bigger gain needs fewer


def test_edges() -> None:
    assert sample_sd(np.array([0.5]), np.array([1])) is None
    same = measured_size(np.array([0.25]), np.array([10]), 0.05, draws=50)
    assert (same.sd, same.n, same.low, same.high) == (0.0, 2, 2, 2)
    two = measured_size(np.array([0.0, 0.5]), np.array([1, 1]), 0.05, draws=50)
    assert two.low is None and "2 paired tasks" in (two.why_no_range or "")
    with pytest.raises(InputError):
        measured_size(np.array([0.5]), np.array([1]), 0.05)
    with pytest.raises(InputError, match="share no task"):
        paired_size(tasks([(1, 2)]), tasks([(1, 2)]).with_columns(task_id=pl.lit("x")), 0.05)


def test_size_command_text_and_json() -> None:
    text = invoke("size", "--effect", "0.05")
    assert text.exit_code == 0
    assert text.stdout.startswith("Hold out 367 tasks (k=4 rollouts each)")
    assert "half-width 0.03" in text.stdout  # 0.034976, in the rates' 2 decimals
    report = json.loads(invoke("size", "--effect", "0.1", "--k", "8", "--format", "json").stdout)
    assert report["holdout"] == holdout_size(0.1, k=8).to_dict()
    assert "measured" not in report


def test_size_command_with_paired_rows() -> None:
    args = [
        "--before",
        str(EXAMPLES / "student.parquet"),
        "--after",
        str(EXAMPLES / "teacher.parquet"),
    ]
    report = json.loads(invoke("size", *args, "--format", "json").stdout)
    m = report["measured"]
    assert m["paired_tasks"] == 64 and m["low"] <= m["n"] <= m["high"]
    # the same numbers by hand from the rows: per-task differences of pass rates
    b = (
        pl.read_parquet(EXAMPLES / "student.parquet")
        .group_by("task_id")
        .agg(pl.col("reward").mean())
    )
    a = (
        pl.read_parquet(EXAMPLES / "teacher.parquet")
        .group_by("task_id")
        .agg(pl.col("reward").mean())
    )
    d = a.join(b, on="task_id", suffix="_b").select(pl.col("reward") - pl.col("reward_b"))
    sd = float(d.to_series().std(ddof=1))
    assert m["sd"] == pytest.approx(sd, abs=1e-12)
    assert m["n"] == math.ceil(((Z975 + Z80) * sd / 0.05) ** 2)
    text = " ".join(invoke("size", *args, env={"COLUMNS": "80"}).stdout.split())
    # the measured answer first, the assumed one after it
    assert text.startswith(f"Hold out {m['n']} tasks [{m['low']}, {m['high']}]"), text
    assert "measured on 64 paired tasks: sd " in text
    assert text.index("measured on") < text.index("Assumed, without the dumps: 367 tasks")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--effect", "0"], "--effect"),
        (["--effect", "1.5"], "--effect"),
        (["--base", "-0.1"], "--base"),
        (["--k", "0"], "--k"),
        (["--power", "1"], "--power"),
        (["--alpha", "0"], "--alpha"),
        (["--before", "x.parquet"], "--before and --after"),
        (["--format", "yaml"], "--format"),
    ],
)
def test_size_usage_errors(args: list[str], says: str) -> None:
    result = invoke("size", *args)
    assert result.exit_code == 2 and says in result.stderr
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.output


@pytest.mark.parametrize("mean", [0.3, 0.63, 0.9])
def test_identical_one_draw_runs_are_sized_by_the_draws_noise(mean: float) -> None:
    """Two identical runs of one draw a task (a greedy rerun) show no spread, and one draw a
    task cannot show how the rates spread: the sd is the bound, √(2·μ(1−μ)) at the pool's
    mean μ, the design formula's, never a hold-out of 2 tasks."""
    rnd = random.Random(5)
    passes = [int(rnd.random() < mean) for _ in range(120)]
    same = tasks([(c, 1) for c in passes])
    got = paired_size(same, same, 0.05, draws=200)
    mu = sum(passes) / 120
    sd = math.sqrt(2 * mu * (1 - mu))
    assert got.sd == pytest.approx(sd, abs=1e-12)
    assert got.n == max(2, math.ceil(((Z975 + Z80) * sd / 0.05) ** 2))
    assert got.from_draws is not None and "moved" in got.from_draws
