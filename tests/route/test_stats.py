"""Statistics of ``while route`` against independent computations and properties."""

from __future__ import annotations

import itertools
import math
import random
from statistics import NormalDist

import numpy as np
import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy import stats as sps

from slow_stats import slow_fit_beta, slow_pass_at_1, slow_pass_k, slow_split
from whilecli.route import stats
from whilecli.route.model import Rows
from whilecli.route.pool import summarize


def make_rows(groups: list[tuple[str, list[int]]]) -> Rows:
    """Canonical rows from ``[(task_id, [1, 0, ...]), ...]`` (1 = pass)."""
    tids = [tid for tid, outcomes in groups for _ in outcomes]
    rewards = [float(o) for _, outcomes in groups for o in outcomes]
    frame = pl.DataFrame(
        {
            "task_id": pl.Series(tids, dtype=pl.String),
            "reward": pl.Series(rewards, dtype=pl.Float64),
        }
    ).with_columns(
        passed=pl.col("reward") >= 1.0,
        truncated=pl.lit(False),
        model=pl.lit("m"),
        policy_version=pl.lit(None, dtype=pl.String),
    )
    return Rows(frame.lazy(), ["mem"], "test", {}, 1.0, False)


def tasks_frame(pairs: list[tuple[int, int]]) -> pl.DataFrame:
    """A per-task frame from ``[(passes, n), ...]``."""
    return pl.DataFrame(
        {
            "task_id": [f"t{i}" for i in range(len(pairs))],
            "n": pl.Series([n for _, n in pairs], dtype=pl.Int64),
            "passes": pl.Series([c for c, _ in pairs], dtype=pl.Int64),
        }
    )


# --- Wilson -------------------------------------------------------------------------------


def wilson_closed_form(s: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson (1927): centre (p + z²/2n)/(1 + z²/n), half-width z√(p(1−p)/n + z²/4n²)/(1 + z²/n)."""
    p = s / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def test_wilson_reference_value() -> None:
    rate = stats.wilson(172, 200)
    assert rate.value == pytest.approx(0.86)
    assert round(rate.low, 4) == 0.8051 and round(rate.high, 4) == 0.9013
    assert rate.interval == "wilson" and rate.n_tasks == 200


@pytest.mark.parametrize("s,n", [(0, 1), (1, 1), (0, 10), (3, 10), (10, 10), (57, 128), (1, 999)])
def test_wilson_matches_closed_form(s: int, n: int) -> None:
    rate = stats.wilson(s, n)
    low, high = wilson_closed_form(s, n)
    assert rate.low == pytest.approx(low, abs=1e-9)
    assert rate.high == pytest.approx(high, abs=1e-9)


@pytest.mark.parametrize("s,n", [(0, 1), (3, 10), (10, 10), (57, 128), (172, 200), (1, 999)])
def test_wilson_agrees_with_scipy(s: int, n: int) -> None:
    """scipy uses the exact quantile 1.95996...; DESIGN pins z = 1.96: equal to 1e-4."""
    ci = sps.binomtest(s, n).proportion_ci(confidence_level=0.95, method="wilson")
    rate = stats.wilson(s, n)
    assert rate.low == pytest.approx(ci.low, abs=1e-4)
    assert rate.high == pytest.approx(ci.high, abs=1e-4)


@pytest.mark.parametrize("n,c,k", [(4, 0, 4), (8, 3, 4), (8, 8, 8), (16, 5, 7), (33, 30, 32)])
def test_pass_k_estimators_match_scipy_comb(n: int, c: int, k: int) -> None:
    from scipy.special import comb

    assert stats.pass_at_k_estimate(c, n, k) == pytest.approx(1 - comb(n - c, k) / comb(n, k))
    assert stats.pass_hat_k_estimate(c, n, k) == pytest.approx(comb(c, k) / comb(n, k))


@pytest.mark.parametrize("s,f,k", [(0, 2, 8), (3, 5, 4), (10, 0, 16), (40, 60, 32)])
def test_expected_split_matches_scipy_betaln(s: int, f: int, k: int) -> None:
    from scipy.special import betaln

    a, b = 1.0 + s, 1.0 + f
    want = 1 - math.exp(betaln(a + k, b) - betaln(a, b)) - math.exp(betaln(a, b + k) - betaln(a, b))
    assert float(stats.expected_split(s, f, k)) == pytest.approx(want, rel=1e-12)


def test_wilson_empty_has_no_interval() -> None:
    rate = stats.wilson(0, 0)
    assert rate.value is None and rate.low is None and rate.why_no_interval


# --- pass@k and pass^k --------------------------------------------------------------------


def brute_pass_at_k(c: int, n: int, k: int) -> tuple[float, float]:
    """Enumerate every k-subset of n rollouts with c passes: share with ≥1 pass, all passes."""
    outcomes = [1] * c + [0] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    any_pass = sum(1 for sub in subsets if any(outcomes[i] for i in sub))
    all_pass = sum(1 for sub in subsets if all(outcomes[i] for i in sub))
    return any_pass / len(subsets), all_pass / len(subsets)


@pytest.mark.parametrize("n", [4, 5, 6, 8])
def test_pass_k_estimators_match_enumeration(n: int) -> None:
    for k in range(1, n + 1):
        c = np.arange(n + 1)
        at_k = stats.pass_at_k_estimate(c, np.full(n + 1, n), k)
        hat_k = stats.pass_hat_k_estimate(c, np.full(n + 1, n), k)
        for ci in range(n + 1):
            want_at, want_hat = brute_pass_at_k(ci, n, k)
            assert at_k[ci] == pytest.approx(want_at, abs=1e-12)
            assert hat_k[ci] == pytest.approx(want_hat, abs=1e-12)


def test_pass_k_rates_use_tasks_with_enough_rollouts() -> None:
    # (c, n): the n=2 task is left out at k=4.
    pairs = [(1, 4), (4, 4), (0, 4), (2, 6), (1, 2)]
    at4, hat4 = stats.pass_k_rates(tasks_frame(pairs), 4, draws=200)
    kept = [(1, 4), (4, 4), (0, 4), (2, 6)]
    want_at = np.mean([brute_pass_at_k(c, n, 4)[0] for c, n in kept])
    want_hat = np.mean([brute_pass_at_k(c, n, 4)[1] for c, n in kept])
    assert at4.value == pytest.approx(want_at) and hat4.value == pytest.approx(want_hat)
    assert at4.n_tasks == 4 and at4.n_rows == 18


# --- expected split share ------------------------------------------------------------------


def split_by_quadrature(s: int, f: int, k: int) -> float:
    dist = sps.beta(1 + s, 1 + f)
    value, _ = integrate.quad(lambda p: (1 - p**k - (1 - p) ** k) * dist.pdf(p), 0, 1)
    return value


def test_expected_split_reference_value() -> None:
    assert stats.expected_split(np.array([0]), np.array([2]), 8)[0] == pytest.approx(
        0.7212, abs=5e-5
    )


@pytest.mark.parametrize("s,f,k", [(0, 2, 8), (3, 5, 4), (8, 0, 16), (1, 1, 2), (20, 12, 32)])
def test_expected_split_matches_quadrature(s: int, f: int, k: int) -> None:
    got = stats.expected_split(np.array([s]), np.array([f]), k)[0]
    assert got == pytest.approx(split_by_quadrature(s, f, k), abs=1e-9)


def test_expected_split_share_averages_tasks_under_the_pool_prior() -> None:
    pairs = [(0, 2), (3, 8), (3, 8), (8, 8), (1, 4), (0, 4)]
    a, b = slow_fit_beta(pairs)
    want = np.mean([slow_split(c, n - c, 4, a, b) for c, n in pairs])
    assert stats.expected_split_share(tasks_frame(pairs), 4) == pytest.approx(want, abs=5e-3)
    assert stats.expected_split_share(tasks_frame([]), 4) is None


@pytest.mark.parametrize(
    "pairs",
    [
        [(0, 8)] * 50,
        [(0, 8)] * 25 + [(8, 8)] * 25,
        [(c % 5, 4) for c in range(60)],
        [(1, 16)] * 5 + [(0, 16)] * 200,
        [(2, 3), (0, 3), (3, 3), (1, 3)] * 4,
    ],
)
def test_prior_fit_matches_the_optimiser(pairs: list[tuple[int, int]]) -> None:
    grid = stats.cells(tasks_frame(pairs))
    fit = stats.fit_beta(grid["passes"].to_numpy(), grid["n"].to_numpy(), grid["tasks"].to_numpy())
    a, b = slow_fit_beta(pairs)
    for k in (4, 8, 16):
        fast = np.mean([stats.expected_split(c, n - c, k, fit) for c, n in pairs])
        slow = np.mean([slow_split(c, n - c, k, a, b) for c, n in pairs])
        assert fast == pytest.approx(slow, abs=5e-3)


def test_a_pool_with_no_split_predicts_about_none() -> None:
    floor = tasks_frame([(0, 8)] * 50)
    apart = tasks_frame([(0, 8)] * 25 + [(8, 8)] * 25)
    for k in (4, 8, 16):
        assert stats.expected_split_share(floor, k) < 0.01
        assert stats.expected_split_share(apart, k) < 0.01
    # a uniform prior per task would have said 0.31 at k = 4 for the floor pool
    assert stats.expected_split(np.array([0]), np.array([8]), 4)[0] > 0.3


def test_lgamma_matches_scipy() -> None:
    from scipy.special import gammaln

    x = np.exp(np.linspace(-9, 14, 3000))
    assert np.allclose(stats.lgamma(x), gammaln(x), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("df", [1, 1.3, 2, 2.5, 3, 7.7, 29, 300, 1e5])
@pytest.mark.parametrize("q", [0.975, 0.9, 0.025])
def test_t_quantile_matches_scipy(df: float, q: float) -> None:
    assert stats.t_quantile(q, df) == pytest.approx(float(sps.t.ppf(q, df)), abs=1e-9)


# --- holdout size ----------------------------------------------------------------------------


def test_holdout_reference_value() -> None:
    held = stats.holdout_size(0.05)
    assert held.n == 367
    assert round(held.sd, 4) == 0.3419
    assert round(held.half_width, 3) == 0.035


@pytest.mark.parametrize("effect,base,k", [(0.1, 0.6, 4), (0.02, 0.3, 8), (0.5, 0.7, 1)])
def test_holdout_matches_formula(effect: float, base: float, k: int) -> None:
    z = NormalDist().inv_cdf
    q = min(1.0, base + effect)
    sd = math.sqrt((base * (1 - base) + q * (1 - q)) / k)
    n = max(2, math.ceil(((z(0.975) + z(0.8)) * sd / effect) ** 2))
    held = stats.holdout_size(effect, base=base, k=k)
    assert held.n == n and held.sd == pytest.approx(sd)
    assert held.half_width == pytest.approx(z(0.975) * sd / math.sqrt(n))


# --- the interval over tasks and draws ---------------------------------------------------------


@pytest.mark.parametrize(
    "pairs",
    [
        [(c, 8) for c in [0] * 30 + [8] * 20 + [1, 2, 3, 4, 5, 6, 7] * 10],
        [(c, 4) for c in [0, 1, 2, 3, 4] * 30] + [(1, 2)] * 20 + [(0, 1), (1, 1)] * 15,
        [(1, 16)] * 5 + [(15, 16)] * 5 + [(16, 16)] * 150,
        [(4, 8)] * 50,
        [(0, 1), (1, 1), (0, 1), (0, 1)],
        [(0, 4)] * 9 + [(3, 4)],
    ],
)
def test_pass_at_1_interval_matches_the_task_loop(pairs: list[tuple[int, int]]) -> None:
    tasks = tasks_frame(pairs)
    rate = stats.pass_at_1(tasks)
    prior = stats.pool_prior(tasks)
    assert prior is not None
    low, high = slow_pass_at_1(pairs, prior.a, prior.b)
    given = stats.pass_at_1(tasks, prior=prior)
    assert (rate.low, rate.high) == (given.low, given.high)
    uniform = stats.pass_at_1(tasks, prior=stats.BetaPrior(1.0, 1.0))
    assert (uniform.low, uniform.high) == pytest.approx(slow_pass_at_1(pairs, 1.0, 1.0), abs=1e-9)
    assert rate.value == pytest.approx(np.mean([c / n for c, n in pairs]))
    assert rate.low == pytest.approx(low, abs=1e-9) and rate.high == pytest.approx(high, abs=1e-9)


@pytest.mark.parametrize(
    "pairs",
    [
        [(c, 8) for c in [0] * 30 + [8] * 20 + [1, 2, 3, 4, 5, 6, 7] * 10],
        [(c, 4) for c in [0, 1, 2, 3, 4] * 30] + [(1, 2)] * 20 + [(3, 5)] * 7,
        [(30, 32), (32, 32), (17, 32), (25, 32), (32, 32), (20, 32), (31, 32), (28, 32)] * 2,
        [(4, 8)] * 50,
    ],
)
@pytest.mark.parametrize("k", [4, 8])
@pytest.mark.parametrize("prior", [(2.0, 2.0), (0.3, 1.7), (5.0, 0.4)])
def test_pass_k_intervals_match_the_task_loop(
    pairs: list[tuple[int, int]], k: int, prior: tuple[float, float]
) -> None:
    if not any(n >= k for _, n in pairs):
        return
    at, hat = stats.pass_k_rates(tasks_frame(pairs), k, prior=stats.BetaPrior(*prior))
    (at_low, at_high), (hat_low, hat_high) = slow_pass_k(pairs, k, *prior)
    assert at.low == pytest.approx(at_low, abs=1e-9) and at.high == pytest.approx(at_high, abs=1e-9)
    assert hat.low == pytest.approx(hat_low, abs=1e-9)
    assert hat.high == pytest.approx(hat_high, abs=1e-9)


def test_pass_k_keeps_room_when_every_estimate_sits_at_one() -> None:
    """Sixteen tasks that all passed some 16 of their 32 draws: pass@16 sits at 1 on every
    task, yet the pool's hard tasks are rare, not absent; the interval keeps room for them
    (a Wilson interval over the tasks, as for a rate whose tasks all agree)."""
    pairs = [(30, 32), (32, 32), (17, 32), (25, 32), (32, 32), (20, 32), (31, 32), (28, 32)] * 2
    at, _ = stats.pass_k_rates(tasks_frame(pairs), 16)
    assert at.low is not None and at.low < 0.99


def test_agreeing_tasks_still_carry_their_draws() -> None:
    rate = stats.pass_at_1(tasks_frame([(4, 8)] * 50))
    assert rate.low is not None and rate.high is not None
    assert rate.format().startswith("0.50 [0.45, 0.55]")  # not [0.50, 0.50]
    # never narrower than the 400 draws alone allow
    assert rate.high - rate.low >= 2 * 1.96 * math.sqrt(0.25 / 400) * 0.95


def test_interval_is_deterministic_and_order_free() -> None:
    tasks = tasks_frame([(c % 9, 8) for c in range(200)])
    first = stats.pass_at_1(tasks, seed=5)
    assert stats.pass_at_1(tasks, seed=6) == first
    assert stats.pass_at_1(tasks.reverse()) == first


@pytest.mark.parametrize("count", [0, 1, 2])
def test_no_interval_under_three_tasks(count: int) -> None:
    rate = stats.pass_at_1(tasks_frame([(1, 2)] * count))
    assert rate.low is None and rate.high is None and rate.interval == "none"
    assert rate.why_no_interval and ("3" in rate.why_no_interval or count == 0)
    if count:
        assert rate.value == pytest.approx(0.5)


# --- histogram --------------------------------------------------------------------------------


def test_histogram_matches_plain_loop() -> None:
    pairs = [(0, 8), (1, 8), (1, 10), (3, 10), (5, 5), (7, 10), (9, 10), (10, 10), (4, 5)]
    hist = stats.histogram(tasks_frame(pairs))
    want = [0] * 10
    for c, n in pairs:
        want[min(int(10 * c // n), 9)] += 1
    assert hist["counts"] == want
    assert hist["at_0"] == 1 and hist["at_1"] == 2 and hist["tasks"] == len(pairs)
    assert sum(hist["counts"]) == len(pairs)


# --- properties -------------------------------------------------------------------------------

groups_strategy = st.lists(
    st.lists(st.integers(0, 1), min_size=1, max_size=6), min_size=1, max_size=25
)


@settings(max_examples=60, deadline=None)
@given(groups_strategy)
def test_interval_contains_point_estimate(outcomes: list[list[int]]) -> None:
    tasks = summarize(make_rows([(f"t{i}", o) for i, o in enumerate(outcomes)])).tasks
    rate = stats.pass_at_1(tasks, draws=300)
    if rate.low is not None:
        assert rate.low - 1e-12 <= rate.value <= rate.high + 1e-12
    want = np.mean([sum(o) / len(o) for o in outcomes])
    assert rate.value == pytest.approx(want)


@settings(max_examples=60, deadline=None)
@given(groups_strategy, st.randoms(use_true_random=False))
def test_permuting_rows_changes_nothing(outcomes: list[list[int]], rnd: random.Random) -> None:
    pairs = [(f"t{i}", o) for i, o in enumerate(outcomes)]
    flat = [(tid, [x]) for tid, o in pairs for x in o]
    rnd.shuffle(flat)
    a = summarize(make_rows(pairs))
    b = summarize(make_rows(flat))
    assert a.tasks.sort("task_id").equals(b.tasks.sort("task_id"))  # tasks in any order
    assert stats.pass_at_1(a.tasks, draws=300) == stats.pass_at_1(b.tasks, draws=300)


@settings(max_examples=60, deadline=None)
@given(groups_strategy)
def test_duplicating_every_task_leaves_pass_at_1(outcomes: list[list[int]]) -> None:
    pairs = [(f"t{i}", o) for i, o in enumerate(outcomes)]
    twice = pairs + [(f"u{i}", o) for i, o in enumerate(outcomes)]
    once = stats.pass_at_1(summarize(make_rows(pairs)).tasks, draws=300)
    both = stats.pass_at_1(summarize(make_rows(twice)).tasks, draws=300)
    assert both.value == pytest.approx(once.value)
    assert both.n_tasks == 2 * once.n_tasks and both.n_rows == 2 * once.n_rows


def test_pass_k_floor_at_k_1_is_pass_at_1s_floor() -> None:
    """The pass@k floor is the noise of the task's draws under its posterior, as pass@1's is:
    at k = 1 the two are one rule."""
    c = np.array([0, 0, 3, 8, 1, 2])
    n = np.array([8, 1, 8, 8, 4, 2])
    prior = stats.BetaPrior(0.3, 1.7)
    at, hat = stats.pass_k_floor(c, n, 1, prior)
    assert at == pytest.approx(stats.draw_floor(c, n, prior), abs=1e-12)
    assert hat == pytest.approx(stats.draw_floor(c, n, prior), abs=1e-12)


def _route_numbers(tasks: pl.DataFrame) -> list[float | None]:
    """Every number a route prints from a pool's cells: the prior, pass@1, pass@k and pass^k
    at k = 2, 4, 8 with their intervals, and the expected split shares."""
    stats._FITTED.clear()
    prior = stats.pool_prior(tasks)
    assert prior is not None
    out: list[float | None] = [prior.a, prior.b]
    rates = [stats.pass_at_1(tasks)]
    for k in (2, 4, 8):
        if int(tasks["n"].max()) >= k:  # type: ignore[arg-type]
            rates += stats.pass_k_rates(tasks, k, prior=prior)
        out.append(stats.expected_split_share(tasks, k, prior))
    for rate in rates:
        out += [rate.value, rate.low, rate.high]
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.integers(1, 12).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
        min_size=1,
        max_size=60,
    )
)
@example([(0, 1)] * 3)  # one draw each leaves the concentration free: ties, rounded apart
@example([(1, 1)] * 40 + [(0, 1)] * 9)
def test_the_plain_sums_are_the_array_sums(pairs: list[tuple[int, int]]) -> None:
    """A route sums over a pool's cells in plain Python where numpy is not loaded, and in
    numpy where it is: the same prior (the same grid point, ties to the first) and the same
    numbers to rounding, whatever the pool."""
    tasks = tasks_frame(pairs)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(stats, "_numpy_loaded", lambda: False)
        plain = _route_numbers(tasks)
    arrays = _route_numbers(tasks)
    assert len(plain) == len(arrays)
    for one, other in zip(plain, arrays, strict=True):
        if one is None or other is None:
            assert one is other
        else:
            assert one == pytest.approx(other, rel=1e-9, abs=1e-12)
