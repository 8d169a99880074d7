"""A fast slice of the off-grid probe (``benchmarks/calibration.py --offgrid`` runs it all).

Pools just outside the grid: k it skips and unequal k per task, shapes between its bands,
teachers near the 0.05 lead and the half coverage, cut-off replies that seldom pass, model
names near 7B, continuous rewards with a threshold, many error replies and mixed ids, task
counts either side of the firm limit of 30. Two rules were wrong there and are held here:
"no cut-off reply passes" was firm at 30 cut-off rows whatever their tasks' pass rates, and
the truth's table saw a split share no pool can tell from none. Each test that holds a
rule has a twin that breaks it and sees the slice fail.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from whilecli.route.decide import Evidence, _provisional
from whilecli.route.model import Rate
from whilecli.route.options import RouteOptions
from whilecli.route.simulate import (
    NEAR_7B,
    Tally,
    Truth,
    grouped_shares,
    offgrid,
    population,
    run_truth,
    truth_verdict,
)

#: Cut-off replies that pass as often as the others, in pools whose tasks seldom pass: thirty
#: cut-off rows or more, none passing, are common there, and the verdict below rests on
#: task counts that are plenty (one rollout per task, another model's rows).
SELDOM = [
    Truth("sparse-low", 1, 300, 0.15, True),
    Truth("low", 1, 100, 0.3, True),
    Truth("sparse-low", 4, 100, 0.2, True, other_model=True),
    Truth("near-floor", 4, 100, 0.2, True, other_model=True),
]
#: The rest of the probe's kinds, one or two cells each.
KINDS = [
    Truth("mid", 3, 35),
    Truth("high", 64, 25),
    Truth("u-shaped", 12, 35),
    Truth("mid", 0, 35, k_mix=((1, 0.3), (16, 0.7))),
    Truth("upper-mid", 5, 100),
    Truth("half-floor", 3, 100),
    Truth("almost-floor", 2, 1000),
    Truth("mid", 4, 100, teacher_gap=0.06),
    Truth("low", 1, 35, teacher_gap=0.2, teacher_coverage=0.45),
    Truth("mid", 4, 35, teacher_gap=0.2, teacher_coverage=0.55),
    Truth("mid", 5, 100, 0.4),
    Truth("mid", 3, 40, stale_share=0.6),
    Truth("floor", 3, 400, name="org/student-6.7B", size_b=6.7),
    Truth("floor", 3, 400, name="mistralai/Mixtral-8x7B-Instruct-v0.1", size_b=46.7),
    Truth("mid", 5, 35, other_model=True),
    Truth("mid", 3, 35, threshold=0.7),
    Truth("low", 5, 35, error_share=0.45),
]


def _slice(truths: list[Truth], draws: int, options: RouteOptions | None = None) -> Tally:
    total = Tally()
    for i, truth in enumerate(truths):
        many = draws if not truth.through_rows else max(2, draws // 4)
        total.add(run_truth(truth, many, seed=100 + i, options=options))
    return total


def _coverage(tally: Tally) -> float:
    hits = sum(h for h, _ in tally.covered.values())
    tries = sum(n for _, n in tally.covered.values())
    return hits / tries


def test_cut_off_replies_of_tasks_that_seldom_pass_are_not_cleared_on_a_count() -> None:
    tally = _slice(SELDOM, 30)
    assert tally.firm_wrong <= 0.01 * max(tally.firm, 1), tally.wrong


def _thirty_rows(pool: Any, rows: int, options: RouteOptions) -> Evidence:
    """The rule as it was: thirty cut-off rows, none passing, whatever their tasks' rates."""
    return Evidence(1, "cut-off rows", rows, None, "", unit="truncated rows")


def test_the_slice_fails_when_cut_off_rows_are_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    decide_module = importlib.import_module("whilecli.route.decide")
    monkeypatch.setattr(decide_module, "_cut_off_evidence", _thirty_rows)
    tally = _slice(SELDOM, 30)
    assert tally.firm_wrong > 0.01 * max(tally.firm, 1)


def test_the_off_grid_kinds_agree_with_the_truth() -> None:
    tally = _slice(KINDS, 12)
    assert tally.firm_wrong <= 0.01 * max(tally.firm, 1), tally.wrong
    assert tally.firm >= 0.2 * tally.draws  # not everything provisional
    assert 0.93 <= _coverage(tally) <= 0.97, tally.coverage()


# --- the truth off the grid ---------------------------------------------------------------


def test_the_truth_reads_sizes_from_the_true_size_not_the_name() -> None:
    options = RouteOptions()
    for name, size in NEAR_7B:
        verdict = truth_verdict(Truth("floor", 4, 100, name=name, size_b=size), options)
        assert verdict.method == ("sft" if size < 7 else "opsd"), name


def test_the_truth_of_a_teacher_counts_its_coverage_and_the_lead_at_its_threshold() -> None:
    options = RouteOptions()
    assert truth_verdict(Truth("mid", 4, 100, teacher_gap=0.05), options).method == "opd"
    assert truth_verdict(Truth("mid", 4, 100, teacher_gap=0.04), options).method == "grpo"
    half = Truth("mid", 4, 100, teacher_gap=0.2, teacher_coverage=0.5)
    assert truth_verdict(half, options).method == "opd"
    short = Truth("mid", 4, 100, teacher_gap=0.2, teacher_coverage=0.45)
    assert truth_verdict(short, options).method == "grpo"


def test_a_lead_too_close_to_call_takes_either_answer() -> None:
    options = RouteOptions()
    # within effect_margin of the 0.05 lead: the other side's answer is right too
    assert truth_verdict(Truth("mid", 4, 100, teacher_gap=0.05), options).also == {"grpo"}
    assert truth_verdict(Truth("mid", 4, 100, teacher_gap=0.04), options).also == {"opd"}
    assert not truth_verdict(Truth("mid", 4, 100, teacher_gap=0.1), options).also
    assert not truth_verdict(Truth("mid", 4, 100, teacher_gap=0.0), options).also
    # k = 1: the same method either side, so OPD beside it is not required
    near = truth_verdict(Truth("low", 1, 100, teacher_gap=0.05), options)
    assert near.method == "flash_reinforce" and not near.requires
    far = truth_verdict(Truth("low", 1, 100, teacher_gap=0.2), options)
    assert far.requires == {"opd"}


def _lead(value: float, half: float, tasks: int = 400) -> Evidence:
    rate = Rate(
        value, value - half, value + half, tasks, 4 * tasks, "clustered", unit="paired tasks"
    )
    options = RouteOptions()
    return Evidence(
        4, "a teacher", tasks, rate, "paired difference", options.effect,
        margin=options.effect_margin,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("value", "half", "firm"),
    [
        (0.10, 0.03, False),  # one-sided bound 0.064: past 0.05, not past the zone's 0.07
        (0.12, 0.03, True),  # 0.084: past the zone
        (0.06, 0.005, False),  # a narrow interval inside the zone stays too close to call
    ],
)
def test_a_teacher_clears_firmly_only_past_the_zone(value: float, half: float, firm: bool) -> None:
    assert _provisional([_lead(value, half)], RouteOptions())[0] is not firm


@pytest.mark.parametrize(
    ("value", "half", "firm"),
    [
        (0.00, 0.03, False),  # one-sided bound 0.036: under 0.05, not under the zone's 0.03
        (-0.02, 0.03, True),  # 0.016: under the zone
        (0.04, 0.005, False),
    ],
)
def test_a_teacher_fails_firmly_only_short_of_the_zone(
    value: float, half: float, firm: bool
) -> None:
    ev = _lead(value, half)
    below = Evidence(
        ev.check, ev.what, ev.tasks, ev.interval, ev.label, ev.threshold, True,
        below=True, margin=ev.margin,
    )  # fmt: skip
    assert _provisional([below], RouteOptions())[0] is not firm


def test_the_truth_of_rare_cut_off_passes_and_unseen_splits() -> None:
    options = RouteOptions()
    # any cut-off pass blocks (the seed's table); under the design's resolution the
    # unblocked verdict is also right
    rare = truth_verdict(Truth("mid", 4, 100, 0.2, cut_pass_scale=0.02), options)
    assert rare.method is None and rare.also == {"grpo"}
    often = truth_verdict(Truth("mid", 4, 100, 0.2, cut_pass_scale=0.3), options)
    assert often.method is None and not often.also
    # a split share under unseen_split: the floor is also right; over it, not
    assert truth_verdict(Truth("almost-floor", 2, 100), options).also == {"opsd"}
    assert not truth_verdict(Truth("edge-floor", 2, 100), options).also


def test_unequal_k_weights_each_k_by_its_tasks() -> None:
    band = RouteOptions().band
    mixed = grouped_shares(Truth("mid", 0, 10, k_mix=((1, 0.5), (2, 0.25), (4, 0.25))), band)
    two = population(Truth("mid", 2, 10))
    four = population(Truth("mid", 4, 10))
    assert mixed.at_zero == pytest.approx((two.at_zero() + four.at_zero()) / 2)
    assert mixed.split == pytest.approx((two.split() + four.split()) / 2)


def test_every_off_grid_region_has_truths() -> None:
    regions = offgrid()
    assert len(regions) >= 12
    assert all(truths for _, truths in regions)


#: Further out (``benchmarks/calibration.py --offgrid``'s last three regions): few tasks at a
#: large k with most tasks at the ends, cut-off replies on most draws, a teacher run on a
#: third of the tasks.
WIDER = [
    Truth("floor-and-saturated", 32, 30),
    Truth("skewed-high", 4, 30, 0.8, cut_pass_scale=0.1),
    Truth("skewed-low", 4, 100, teacher_gap=0.2, teacher_coverage=0.3),
]


def test_the_wider_probe_agrees_with_the_truth() -> None:
    tally = _slice(WIDER, 10)
    assert tally.firm_wrong <= 0.01 * max(tally.firm, 1), tally.wrong
