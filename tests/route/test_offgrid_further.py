"""A fast slice of the off-grid probe's further regions (``benchmarks/calibration.py
--offgrid``): k of 128 and 256 over few tasks, k from 1 to 64 beside cut-off replies, a
teacher at another k on part of the tasks, 30 to 60 tasks at each check's firm limit, some
tasks repeating one draw, another model writing a few rows, partial credit beside error
replies and cut-off replies, and a teacher graded on another reward scale.

One rule was wrong there and is held here, with a twin that breaks it and sees the slice
fail: a teacher on another reward scale than the student was compared under one pass
threshold, so a teacher scored 0 to 10 at threshold 0.5 passed nearly every draw and cleared
check 4 firmly (half the pools firm and wrong); the two ranges are now a data-quality finding
that leaves the verdict provisional.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from whilecli.io.read import read_rows
from whilecli.route.checks import reward_scales, reward_tops, teacher_under_threshold
from whilecli.route.options import RouteOptions
from whilecli.route.pool import summarize
from whilecli.route.simulate import Tally, Truth, offgrid, run_truth, truth_verdict

#: Teachers whose rewards run 0 to 10 or 0 to 100, or 0 to 0.1 (never reaching the
#: threshold), beside a student's in [0, 1], one threshold given for both; leading by nothing
#: (GRPO) or by 0.2 (OPD). A teacher on 0 to 0.1 leading by 0.2 was routed GRPO firmly.
SCALES = [
    Truth("low", 4, 35, threshold=0.5, teacher_gap=0.0, teacher_reward_scale=10.0),
    Truth("mid", 1, 100, threshold=0.7, teacher_gap=0.0, teacher_reward_scale=100.0),
    Truth("mid", 4, 100, threshold=0.5, teacher_gap=0.0, teacher_reward_scale=10.0),
    Truth("mid", 4, 100, threshold=0.5, teacher_gap=0.2, teacher_reward_scale=0.1),
    Truth("low", 4, 100, threshold=0.7, teacher_gap=0.2, teacher_reward_scale=0.5),
    # a little under the student's scale: rubric sums written 0 to 0.8 (or 0.6), reaching the
    # threshold yet topping out below the student's; OPD's teacher read as far behind, firmly
    Truth("mid", 1, 35, threshold=0.7, teacher_gap=0.2, teacher_reward_scale=0.8),
    Truth("mid", 4, 100, threshold=0.7, teacher_gap=0.2, teacher_reward_scale=0.8),
    Truth("low", 1, 100, threshold=0.5, teacher_gap=0.2, teacher_reward_scale=0.6),
]
#: The same teachers on the student's own scale: continuous rewards, one threshold.
SAME_SCALE = [
    Truth(m, k, n, threshold=t, teacher_gap=g)
    for m in ("low", "mid") for k in (1, 4) for n in (35, 100) for t in (0.5, 0.7) for g in (0.0, 0.2)
]  # fmt: skip
#: The other new kinds, one or two cells each.
KINDS = [
    Truth("mid", 128, 30),
    Truth("high", 256, 20),
    Truth("mid", 0, 40, 0.3, k_mix=((1, 0.2), (2, 0.2), (8, 0.3), (64, 0.3)), cut_pass_scale=0.1),
    Truth("low", 8, 100, teacher_gap=0.2, teacher_k=2, teacher_coverage=0.7),
    Truth("mid", 2, 60),
    Truth("floor", 4, 45),
    Truth("mid", 4, 55, other_model=True),
]
#: The new kinds read from rows.
ROW_KINDS = [
    Truth("mid", 4, 100, greedy_share=0.2),
    Truth("mid", 4, 100, other_share=0.01),
    Truth("low", 8, 100, 0.1, partial_share=0.05, error_share=0.1),
]


def _slice(truths: list[Truth], draws: int) -> Tally:
    total = Tally()
    for i, truth in enumerate(truths):
        total.add(run_truth(truth, draws, seed=700 + i))
    return total


def test_a_teacher_on_another_reward_scale_leaves_the_verdict_provisional() -> None:
    tally = _slice(SCALES, 3)
    assert tally.firm == 0, tally.wrong  # the pass may not be one event on both sides


def test_the_slice_fails_when_two_scales_share_one_threshold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checks_module = importlib.import_module("whilecli.route.checks")
    monkeypatch.setattr(checks_module, "reward_scales", lambda pool, tpool: None)
    monkeypatch.setattr(checks_module, "teacher_under_threshold", lambda pool, tpool: None)
    monkeypatch.setattr(checks_module, "reward_tops", lambda pool, tpool: None)
    tally = _slice(SCALES, 3)
    assert tally.firm_wrong > 0.01 * max(tally.firm, 1)


def test_the_tops_rule_alone_holds_a_teacher_a_little_under_the_scale(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checks_module = importlib.import_module("whilecli.route.checks")
    tally = _slice(SCALES[-3:], 3)
    assert tally.firm == 0, tally.wrong
    monkeypatch.setattr(checks_module, "reward_tops", lambda pool, tpool: None)
    assert _slice(SCALES[-3:], 3).firm_wrong > 0


def test_one_scale_of_continuous_rewards_stays_firm_where_it_was() -> None:
    """The tops rule costs a teacher on the student's own scale nearly nothing: over these 32
    cells it moved 108 firm verdicts of 640 to 106 (``benchmarks/calibration.py --offgrid
    --region "another reward scale"``, the 1.0 cells)."""
    checks_module = importlib.import_module("whilecli.route.checks")
    tally = _slice(SAME_SCALE, 2)
    assert tally.firm_wrong == 0, tally.wrong
    kept = tally.firm
    margin, checks_module.TOP_MARGIN = checks_module.TOP_MARGIN, 1e9
    try:
        without = _slice(SAME_SCALE, 2).firm
    finally:
        checks_module.TOP_MARGIN = margin
    assert kept >= 0.9 * without and without > 0


def _write(path: Path, rewards: list[float]) -> str:
    with path.open("w") as handle:
        for i, reward in enumerate(rewards):
            task = i // 4
            row = {"id": f"t{task}", "prompt": f"q{task}", "completion": f"a{i}", "reward": reward}
            handle.write(json.dumps(row) + "\n")
    return str(path)


def test_the_reader_keeps_the_reward_range_and_check_4_compares_them(tmp_path: Path) -> None:
    unit = [0.3, 0.6, 0.2, 0.9] * 10
    student = summarize(read_rows([_write(tmp_path / "s.jsonl", unit)], pass_threshold=0.5))
    wide = [r * 10 for r in unit]
    teacher = summarize(read_rows([_write(tmp_path / "t.jsonl", wide)], pass_threshold=0.5))
    assert student.source.reward_range == (0.2, 0.9)
    assert reward_scales(student, teacher) == {"student": [0.2, 0.9], "teacher": [2.0, 9.0]}
    assert reward_scales(teacher, student) is not None  # either side wider
    # both on one scale, inside [0, 1] or outside it: nothing to say
    assert reward_scales(student, student) is None
    assert reward_scales(teacher, teacher) is None
    # a teacher graded above 0 yet never reaching the threshold the student reaches: 0 to 0.1
    narrow = [r / 10 for r in unit]
    tenth = summarize(read_rows([_write(tmp_path / "n.jsonl", narrow)], pass_threshold=0.5))
    want = {"student": [0.2, 0.9], "teacher": [0.02, 0.09]}
    assert teacher_under_threshold(student, tenth) == want
    assert reward_scales(student, tenth) is None  # diff's two scales: both in [0, 1]
    # a student under the threshold beside a teacher over it is a floor (a format reward)
    assert teacher_under_threshold(tenth, student) is None
    # a teacher that only ever scores 0 is no scale; nor one that reaches the threshold
    floor = summarize(read_rows([_write(tmp_path / "f.jsonl", [0.0] * 40)], pass_threshold=0.5))
    assert teacher_under_threshold(student, floor) is None
    half = [0.5 if r > 0.5 else r for r in unit]
    at = summarize(read_rows([_write(tmp_path / "h.jsonl", half)], pass_threshold=0.5))
    assert teacher_under_threshold(student, at) is None
    # both pass, yet one tops out a tenth or more under the other: 0 to 0.72 beside 0 to 0.9
    under = [round(r * 0.8, 6) for r in unit]
    lower = summarize(read_rows([_write(tmp_path / "u.jsonl", under)], pass_threshold=0.5))
    assert reward_tops(student, lower) == {"student": [0.2, 0.9], "teacher": [0.16, 0.72]}
    assert reward_tops(lower, student) is not None  # either side lower
    assert reward_tops(student, student) is None
    assert reward_tops(student, at) is not None  # capped at the threshold: another scale?
    near = summarize(read_rows([_write(tmp_path / "e.jsonl", [r * 0.95 for r in unit])],
                               pass_threshold=0.5))  # fmt: skip
    assert reward_tops(student, near) is None  # within a tenth: one scale
    assert reward_tops(tenth, student) is None  # a student that never passes: a floor
    # neither passes, the teacher's top a fifth of the student's: one threshold, two scales
    # (a teacher on 0 to 0.1 leading by 0.2 beside a student that drew no pass was firm)
    below = [round(r * 0.5, 6) for r in unit]
    under_both = summarize(read_rows([_write(tmp_path / "b.jsonl", below)], pass_threshold=0.5))
    assert reward_tops(under_both, tenth) is not None
    binary_floor = summarize(read_rows([_write(tmp_path / "z.jsonl", [0.0] * 40)]))
    assert reward_tops(binary_floor, floor) is None  # binary, no pass on either side


def test_the_new_kinds_agree_with_the_truth() -> None:
    tally = _slice(KINDS, 8)
    tally.add(_slice(ROW_KINDS, 2))
    assert tally.firm_wrong <= 0.01 * max(tally.firm, 1), tally.wrong
    assert tally.firm >= 0.2 * tally.draws  # not everything provisional


def test_the_truth_of_repeats_and_a_few_rows_of_another_model() -> None:
    options = RouteOptions()
    # a task whose draws repeat one completion is one draw: the rest are the population
    repeats = truth_verdict(Truth("mid", 4, 100, greedy_share=0.3), options)
    assert repeats == truth_verdict(Truth("mid", 4, 100), options)
    # one row of another model makes the rows another model's (check 6: every row)
    assert truth_verdict(Truth("mid", 4, 100, other_share=0.01), options).method == "sft"


def test_the_further_regions_are_in_the_probe() -> None:
    names = [name for name, _ in offgrid()]
    for part in ("k 128 and 256", "k 1 to 64", "another k on part", "30-60 tasks",
                 "repeat one draw", "a few rows", "partial credit beside",
                 "another reward scale"):  # fmt: skip
        assert any(part in name for name in names), part
