"""A fast slice of the calibration grid (``benchmarks/calibration.py`` runs all of it).

The slice holds the route to the design's targets where each rule is most at risk: firm
verdicts that disagree with the truth at most 1% of the time, every nominal 95% interval
covering its population value 93% to 97% of the time from 10 tasks up, and firm verdicts
common where the evidence is plentiful. Two more tests break a rule and an interval on
purpose and check that the slice then fails: the targets can fail.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from whilecli.route import stats
from whilecli.route.decide import Evidence, _firm_bounds, _provisional
from whilecli.route.model import Rate
from whilecli.route.options import RouteOptions
from whilecli.route.paired import paired_diff
from whilecli.route.simulate import (
    MIXTURES,
    Tally,
    Truth,
    _check,
    draw_pool,
    draw_rates,
    pass_pmf,
    population,
    run_truth,
    truth_verdict,
)
from whilecli.route.stats import BetaPrior

#: Where a rule is most at risk: few tasks that may all fail (or pass) their draws, a
#: teacher whose lead is past the threshold on too few tasks, cut-off replies, rows read
#: from JSON Lines with per-row ids and error replies, timeouts that recorded no reply.
RISKY = [
    Truth("near-floor", 2, 30),
    Truth("near-saturated", 2, 100),
    Truth("mid", 4, 100, teacher_gap=0.1),
    Truth("low", 1, 30, teacher_gap=0.1),
    Truth("mid", 4, 100, 0.1, True),
    Truth("low", 8, 100, 0.1, False),
    Truth("u-shaped", 8, 30, stale_share=0.3),
    Truth("low", 4, 30, error_share=0.2, row_ids=True),
    Truth("saturated", 8, 100, error_share=0.2, absent_errors=True),  # nothing recorded
    Truth("mid", 4, 30, error_share=0.1, row_ids=True, stale_share=0.2, teacher_gap=0.2),
]
#: Where evidence is plentiful: firm verdicts must be common there.
PLENTY = [
    Truth("floor", 8, 1000),
    Truth("mid", 8, 1000),
    Truth("high", 4, 1000, teacher_gap=0.2),
    Truth("mid", 4, 1000, other_model=True),
]


def _slice(truths: list[Truth], draws: int) -> Tally:
    total = Tally()
    for i, truth in enumerate(truths):
        total.add(run_truth(truth, draws if not truth.through_rows else draws // 4, seed=i))
    return total


def _pooled_coverage(tally: Tally) -> float:
    hits = sum(h for h, _ in tally.covered.values())
    tries = sum(n for _, n in tally.covered.values())
    return hits / tries


def test_firm_verdicts_agree_with_the_truth_where_rules_are_at_risk() -> None:
    tally = _slice(RISKY, 40)
    assert tally.firm_wrong <= 0.01 * tally.firm, tally.wrong
    assert 0.93 <= _pooled_coverage(tally) <= 0.97, tally.coverage()


def test_firm_is_common_where_evidence_is_plentiful() -> None:
    tally = _slice(PLENTY, 6)
    assert tally.firm_wrong == 0, tally.wrong
    assert tally.firm >= 0.9 * tally.draws


#: Where most tasks sit at 0 (or 1): the draws' floor of a task seen at 0 once came from a
#: uniform prior, several times the spread such a pool has, and pass@1 covered 98% to 100%.
NEAR_ENDS = [
    Truth("near-floor", 4, 300),
    Truth("near-floor", 8, 1000),
    Truth("near-saturated", 4, 300),
    Truth("near-saturated", 16, 100),
]


def _pass_at_1_coverage(truths: list[Truth], draws: int, prior: BetaPrior | None) -> float:
    """pass@1's coverage over pools drawn from ``truths`` (the interval alone, no route)."""
    hits = 0
    for i, truth in enumerate(truths):
        value, rng = population(truth).mean, np.random.default_rng(i)
        for _ in range(draws):
            rate = stats.pass_at_1(draw_pool(truth, rng)[0].tasks, prior=prior)
            assert rate.low is not None and rate.high is not None
            hits += rate.low <= value <= rate.high
    return hits / (draws * len(truths))


def test_pass_at_1_holds_its_coverage_near_the_floor_and_saturation() -> None:
    assert 0.93 <= _pass_at_1_coverage(NEAR_ENDS, 100, None) <= 0.97
    # the uniform prior's floor, as before: over-covers (the slice can fail)
    assert _pass_at_1_coverage(NEAR_ENDS, 100, BetaPrior(1.0, 1.0)) > 0.97


#: Where most tasks sit at one end and pass@k or pass^k have many estimates at 0 or 1: their
#: spread was once floored at the whole spread of the pool's fitted Beta, a single Beta with a
#: heavier tail than such a pool, and pass@k and pass^k covered 98% to 99% there.
ONE_END_K = [
    Truth("near-saturated", 32, 300),
    Truth("near-saturated", 32, 1000),
    Truth("low", 32, 1000),
]


def _pass_k_coverage(truths: list[Truth], draws: int) -> float:
    """pass@k's and pass^k's coverage over pools drawn from ``truths`` (the intervals alone,
    no route), for every k of 4 up to the truth's, where the value lies inside (0, 1)."""
    hits = tries = 0
    for i, truth in enumerate(truths):
        pop, rng = population(truth), np.random.default_rng(i)
        ks = [j for j in (4, 8, 16, 32) if j <= truth.k]
        for _ in range(draws):
            tasks = draw_pool(truth, rng)[0].tasks
            for j in ks:
                at, hat = stats.pass_k_rates(tasks, j)
                for rate, value in ((at, pop.pass_at(j)), (hat, pop.pass_hat(j))):
                    if not 1e-12 < value < 1 - 1e-12:
                        continue
                    assert rate.low is not None and rate.high is not None
                    hits += rate.low - 1e-12 <= value <= rate.high + 1e-12
                    tries += 1
    return hits / tries


def test_pass_k_holds_its_coverage_where_tasks_sit_at_one_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert 0.93 <= _pass_k_coverage(ONE_END_K, 100) <= 0.97
    # the fitted prior's whole spread as the floor, as before: over-covers (the slice can fail)

    def prior_floor(
        c: np.ndarray, n: np.ndarray, k: int, prior: BetaPrior | None
    ) -> tuple[np.ndarray, np.ndarray]:
        assert prior is not None
        at, hat = stats.prior_spread(prior, k)
        return np.full(len(c), at), np.full(len(c), hat)

    monkeypatch.setattr(stats, "pass_k_floor", prior_floor)
    assert _pass_k_coverage(ONE_END_K, 100) > 0.97


#: Few tasks of many draws (a benchmark of 10 to 40 problems sampled 128 times): each task's
#: pass@k is nearly exact, so the interval is the spread of the tasks, and pass@k's spread
#: sits in a tail of hard tasks most samples lack. With s² alone, pass@4 to pass@32 covered
#: 0.53 to 0.87 in mid and skewed-high pools and pass^k 0.58 to 0.86.
FEW_TASKS_MANY_DRAWS = [
    Truth("mid", 128, 10),
    Truth("mid", 128, 40),
    Truth("skewed-high", 128, 20),
    Truth("u-shaped", 128, 10),
    Truth("low", 128, 20),
]


def test_pass_k_over_few_tasks_of_many_draws_sees_the_tail(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert 0.93 <= _pass_k_coverage(FEW_TASKS_MANY_DRAWS, 30) <= 0.97
    # the sample's spread alone, as before: the tail is missed (the slice can fail)
    monkeypatch.setattr(stats, "PRIOR_TASKS", 0.0)
    assert _pass_k_coverage(FEW_TASKS_MANY_DRAWS, 30) < 0.93


def test_intervals_at_an_end_are_counted_apart() -> None:
    """An interval whose estimate sits at 0 or 1 (every task's estimate at that end) covers a
    truth near the end whatever its rule: the tally counts those apart, so that the table can
    say how much of a coverage the pools decided and what the rule's intervals cover."""
    tally = Tally()
    _check(tally, "pass^k", Rate(0.0, 0.0, 0.3, 10, 40, "clustered"), 1e-6)
    _check(tally, "pass^k", Rate(0.1, 0.05, 0.2, 10, 40, "clustered"), 0.3)
    _check(tally, "pass@k", Rate(1.0, 0.7, 1.0, 10, 40, "clustered"), 1 - 1e-6)
    assert tally.covered == {"pass^k": [1, 2], "pass@k": [1, 1]}
    assert tally.ends == {"pass^k": [1, 1], "pass@k": [1, 1]}
    merged = Tally()
    merged.add(tally)
    assert merged.ends == tally.ends


def test_pools_at_the_floor_decide_pass_hat_k_near_the_floor() -> None:
    """Near the floor, pass^j's estimate is 0 on every task unless some task passes j of its
    draws: (Σ_{c<j} P(c))^N of the pools, exactly, and there the interval [0, u] covers
    the truth (about 1e-4 and less) whatever u. The tally's share agrees with the exact one;
    this part of pass^k's coverage belongs to the pools, not to a rule."""
    truth = Truth("near-floor", 8, 30)
    pmf = population(truth).pmf
    exact = float(np.mean([pmf[:j].sum() ** truth.tasks for j in (4, 8)]))
    tally = run_truth(truth, 200, seed=3)
    hits, ends = tally.ends["pass^k"]
    assert ends / tally.covered["pass^k"][1] == pytest.approx(exact, abs=0.04)
    assert hits == ends


#: Teachers whose true lead is the threshold itself: a firm "clears" is wrong for any lead
#: just under it, so the chance that a firm bound clears the true lead is the firm verdict's
#: one-sided error. On the printed 95% interval it was 2.3% to 3.2%, and in the region of
#: a lead 0.02 under the threshold, where firm verdicts are few, 5 of 430 firm verdicts
#: were wrong.
AT_THRESHOLD = [Truth("mid", 4, 100, teacher_gap=0.05), Truth("low", 8, 30, teacher_gap=0.05)]


def _one_sided_error(options: RouteOptions, draws: int) -> float:
    """How often the firm bound of the paired interval lies above the true lead."""
    above = 0
    for i, truth in enumerate(AT_THRESHOLD):
        lead = population(truth, teacher=True).mean - population(truth).mean
        rng = np.random.default_rng(i)
        for _ in range(draws):
            student, teacher = draw_pool(truth, rng)
            assert teacher is not None
            rate = paired_diff(student.tasks, teacher.tasks).difference
            low = _firm_bounds(rate, options)[0]
            above += low is not None and low > lead
    return above / (draws * len(AT_THRESHOLD))


def test_a_firm_lead_errs_on_the_one_sided_level_it_claims() -> None:
    assert _one_sided_error(RouteOptions(), 400) <= 0.0125
    # the printed 95% interval's own tail, as before: errs more than 1% (the slice can fail)
    assert _one_sided_error(RouteOptions(firm_error=0.025), 400) > 0.02


def test_a_paired_lead_is_firm_only_past_the_one_sided_bound() -> None:
    """The printed interval clears 0.05, the 1% one-sided bound does not: provisional, and
    the report says why; a lead whose 1% bound clears is firm."""
    options = RouteOptions()
    close = Rate(0.13, 0.06, 0.20, 100, 400, "clustered", unit="paired tasks")
    far = Rate(0.20, 0.12, 0.28, 100, 400, "clustered", unit="paired tasks")
    for rate, provisional in ((close, True), (far, False)):
        evidence = Evidence(4, "a teacher", 100, rate, "paired difference", options.effect)
        got, why, _ = _provisional([evidence], options)
        assert got is provisional, why
    _, why, _ = _provisional(
        [Evidence(4, "a teacher", 100, close, "paired difference", options.effect)], options
    )
    assert why is not None and "one-sided" in why
    loose = RouteOptions(firm_error=0.025)  # the printed interval's own tail: firm
    evidence = Evidence(4, "a teacher", 100, close, "paired difference", loose.effect)
    assert not _provisional([evidence], loose)[0]


def test_the_slice_fails_when_a_rule_is_broken(monkeypatch: pytest.MonkeyPatch) -> None:
    """A floor called firm at any task count: the near-floor cell goes firm and wrong."""
    tally = run_truth(Truth("near-floor", 2, 30), 40, options=RouteOptions(unseen_split=0.999))
    assert tally.firm_wrong > 0.01 * max(tally.firm, 1)


def test_the_slice_fails_when_the_teacher_rule_is_broken(monkeypatch: pytest.MonkeyPatch) -> None:
    """A teacher that fails on overlapping intervals called firm: the truth says OPD."""
    decide_module = importlib.import_module("whilecli.route.decide")
    monkeypatch.setattr(decide_module, "_fails_on_lead", lambda measured, options: False)
    tally = run_truth(Truth("mid", 4, 100, teacher_gap=0.1), 40)
    assert tally.firm_wrong > 0.01 * max(tally.firm, 1)


def test_the_slice_fails_when_an_interval_is_too_narrow(monkeypatch: pytest.MonkeyPatch) -> None:
    """Intervals at z = 1.3 instead of 1.96: coverage falls under 93%."""
    monkeypatch.setattr(stats, "Z95", 1.3)
    monkeypatch.setattr(stats, "t_quantile", lambda q, df: 1.3)
    tally = _slice([Truth("mid", 8, 100), Truth("low", 4, 30)], 40)
    assert _pooled_coverage(tally) < 0.93


# --- the truth itself, against plain loops ----------------------------------------------


def test_pass_pmf_matches_a_monte_carlo_of_the_mixture() -> None:
    rng = np.random.default_rng(5)
    for name in ("low", "u-shaped", "near-saturated"):
        mix = MIXTURES[name]
        for k, keep in ((4, 1.0), (8, 0.9)):
            exact = pass_pmf(mix, k, keep)
            rates = draw_rates(mix, 200_000, rng)
            c = rng.binomial(k, rates * keep)
            seen = np.bincount(c, minlength=k + 1) / c.size
            assert np.allclose(exact, seen, atol=5e-3), name
            assert exact.sum() == pytest.approx(1.0)


def test_population_values_match_their_definitions() -> None:
    truth = Truth("mid", 4, 100)
    pop = population(truth)
    assert pop.mean == pytest.approx(0.5)
    # Beta(2, 2): E[p^4] = 2·3·4·5/(4·5·6·7) = 1/7, and (1 − p)^4 likewise
    assert pop.at_k() == pytest.approx(1 / 7)
    assert pop.split() == pytest.approx(1 - 2 / 7)
    assert pop.pass_at(4) == pytest.approx(1 - 1 / 7)


def test_the_truth_uses_the_route_thresholds() -> None:
    options = RouteOptions(model="org/student-8B@7")
    assert truth_verdict(Truth("floor", 8, 10), options).method == "opsd"
    assert truth_verdict(Truth("floor", 8, 10, small=True), options).method == "sft"
    assert truth_verdict(Truth("saturated", 8, 10), options).method == "groupwise"
    assert truth_verdict(Truth("apart", 8, 10), options).method == "opsd"  # 60% at 0
    assert truth_verdict(Truth("mid", 8, 10, 0.1, True), options).method is None
    assert truth_verdict(Truth("mid", 1, 10), options).method == "flash_reinforce"
    assert truth_verdict(Truth("mid", 8, 10, teacher_gap=0.2), options).method == "opd"
    assert truth_verdict(Truth("mid", 8, 10, teacher_gap=0.03), options).method == "grpo"
    assert truth_verdict(Truth("mid", 8, 10, other_model=True), options).method == "sft"
    stale = truth_verdict(Truth("mid", 8, 10, stale_share=0.3), options)
    assert stale.method == "grpo" and "async" in stale.requires
    # a partial floor joins the plan at the route's own floor_share, not another number
    near = truth_verdict(Truth("near-floor", 8, 10), options)
    assert near.method == "grpo"
    assert not truth_verdict(Truth("mid", 8, 10, greedy=True), options).measured


#: Bands and teachers measured on rows another model wrote: floor, saturated, no split, a
#: teacher that clears; and a mixed band, where another model's rows route SFT firm.
ANOTHER_MODELS_BAND = [
    Truth(m, k, n, other_model=True)
    for m in ("floor", "saturated", "near-floor", "mid")
    for k in (4, 8)
    for n in (100, 1000)
] + [Truth("mid", 4, 1000, teacher_gap=0.2, other_model=True)]


def test_a_band_another_model_wrote_decides_nothing_firm() -> None:
    """A floor (or a saturated band, or a teacher's lead) measured on another model's rows is
    that model's: the truth's table has no firm answer for the model to train
    (:func:`truth_verdict`), and the route hedges; a mixed band still routes SFT firm."""
    options = RouteOptions()
    assert not truth_verdict(Truth("floor", 8, 1000, other_model=True), options).measured
    assert truth_verdict(Truth("mid", 8, 1000, other_model=True), options).method == "sft"
    tally = _slice(ANOTHER_MODELS_BAND, 3)
    assert tally.firm_wrong == 0, tally.wrong
    assert tally.firm > 0  # the mixed bands' SFT
