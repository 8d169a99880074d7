"""A fast slice of the off-grid probe's edges (``benchmarks/calibration.py --offgrid``).

Pools a practitioner feeds the route just past the earlier probe: a teacher cut off near the
5% it may be, or whose cut-off replies can pass, at another k than the student, run on 20% to 80% of the student's tasks, keyed
by one id per row or answering some draws with an error; tasks that never pass mixed with
split tasks at shares near the table's thresholds; an older copy writing a row or two in a
hundred; one rollout per task near 30 tasks and by the thousand; model names that state no
size, or state it as most names do; rewards within 1e-9 of the pass threshold. Four rules
were wrong there and are held here, each with a twin that breaks it and sees the slice fail:
the teacher's truncated share was compared with its limit as if exact, a teacher's cut-off
rows with no pass among them cleared it however few, a floor routed to OPSD firmly whatever
the size of a model whose name does not state it, and a teacher keyed by the prompt shared
no task with a student keyed by id.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from whilecli.route import stats
from whilecli.route.decide import Evidence, _provisional
from whilecli.route.options import RouteOptions
from whilecli.route.simulate import NAMES_MORE, Tally, Truth, offgrid, run_truth, truth_verdict

#: Teachers cut off 2% of the time (clear) over few rows, and 10% (fail) over many: a share
#: read as exact failed the first firmly one pool in six.
CUT = [
    Truth("low", 1, 35, teacher_gap=0.2, teacher_cut_share=0.02),
    Truth("mid", 1, 50, teacher_gap=0.2, teacher_cut_share=0.02),
    Truth("mid", 2, 20, teacher_gap=0.2, teacher_cut_share=0.02),
    Truth("mid", 4, 400, teacher_gap=0.2, teacher_cut_share=0.1),
]
#: Teachers whose cut-off replies pass (0.3 or all as often as their other draws) on 1% to 3%
#: of their draws: a handful of cut-off rows shows no pass often.
CUT_PASSES = [
    Truth("low", 4, 100, teacher_gap=0.2, teacher_cut_share=0.01, teacher_cut_pass_scale=0.3),
    Truth("mid", 4, 100, teacher_gap=0.2, teacher_cut_share=0.01, teacher_cut_pass_scale=1.0),
    Truth("low", 4, 400, teacher_gap=0.2, teacher_cut_share=0.01, teacher_cut_pass_scale=0.3),
    Truth("mid", 4, 1000, teacher_gap=0.2, teacher_cut_share=0.02, teacher_cut_pass_scale=0.3),
]
#: Floor pools of models whose names state no size, under and over 7B.
SIZELESS = [
    Truth("floor", 4, 1000, name="microsoft/Phi-3-mini-4k-instruct", size_b=3.8),
    Truth("floor", 8, 1000, name="microsoft/phi-4", size_b=14.7),
]
#: Teachers whose rows carry one id per row (keyed by the prompt) beside a student's task ids,
#: and teachers whose harness answered some draws with an error (rows written and read).
TEACHER_ROWS = [
    Truth("mid", 4, 100, teacher_gap=0.2, teacher_row_ids=True),
    Truth("low", 4, 100, teacher_gap=0.2, teacher_row_ids=True, teacher_error_share=0.3),
]
#: The rest of the new kinds, one or two cells each.
KINDS = [
    Truth("mid", 4, 100, teacher_gap=0.2, teacher_k=1),
    Truth("low", 1, 400, teacher_gap=0.1, teacher_k=8),
    Truth("mid", 4, 100, teacher_gap=0.2, teacher_coverage=0.2),
    Truth("low", 4, 400, teacher_gap=0.2, teacher_coverage=0.8),
    Truth("floor-58", 4, 400),
    Truth("floor-95", 8, 100),
    Truth("top-80", 4, 100),
    Truth("mid", 5, 30, stale_share=0.002),
    Truth("low", 3, 400, stale_share=0.01),
    Truth("mid", 1, 31),
    Truth("skewed-low", 1, 1000),
    Truth("floor-95", 4, 400, name="stabilityai/stablelm-2-1_6b", size_b=1.6),
    Truth("floor", 4, 1000, name="Qwen/Qwen3-30B-A3B", size_b=30.0),
    Truth("mid", 4, 100, threshold=0.5, near_threshold=True),
    Truth("mid", 3, 100, error_share=0.49),
]


def _slice(truths: list[Truth], draws: int) -> Tally:
    total = Tally()
    for i, truth in enumerate(truths):
        many = draws if not truth.through_rows else max(2, draws // 4)
        total.add(run_truth(truth, many, seed=300 + i))
    return total


def _coverage(tally: Tally) -> float:
    hits = sum(h for h, _ in tally.covered.values())
    tries = sum(n for _, n in tally.covered.values())
    return hits / tries


def _without(monkeypatch: pytest.MonkeyPatch, drop: Any) -> None:
    """Route with the evidence ``drop`` picks left out: the rule as it was."""
    decide_module = importlib.import_module("whilecli.route.decide")
    evidence = decide_module._evidence
    monkeypatch.setattr(
        decide_module,
        "_evidence",
        lambda *a, **k: [ev for ev in evidence(*a, **k) if not drop(ev)],
    )


def _cut_share(ev: Evidence) -> bool:
    return ev.label == "teacher's truncated share"


def test_a_teachers_truncated_share_is_an_estimate() -> None:
    tally = _slice(CUT, 30)
    assert tally.firm_wrong <= 0.01 * max(tally.firm, 1), tally.wrong
    assert tally.firm >= 0.2 * tally.draws  # the teacher cut off on 10% still fails firmly


def test_the_slice_fails_when_the_truncated_share_is_read_as_exact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # as it was: a share over the limit failed the teacher as if seen, one under it cleared
    decide_module = importlib.import_module("whilecli.route.decide")
    estimated = decide_module._fails_on_lead
    monkeypatch.setattr(
        decide_module,
        "_fails_on_lead",
        lambda t, o: estimated(t, o) and not decide_module._cut_over(t, o),
    )
    _without(monkeypatch, _cut_share)
    tally = _slice(CUT, 30)
    assert tally.firm_wrong > 0.01 * max(tally.firm, 1)


def test_a_teacher_clears_its_cut_off_replies_on_what_they_would_show() -> None:
    tally = _slice(CUT_PASSES, 20)
    assert tally.firm_wrong <= 0.01 * max(tally.firm, 1), tally.wrong
    assert tally.firm >= 0.2 * tally.draws  # a thousand tasks' cut-off rows show their passes


def test_the_slice_fails_when_a_teachers_cut_off_rows_go_unweighed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _without(monkeypatch, lambda ev: ev.check == 4 and ev.unit == "truncated rows")
    tally = _slice(CUT_PASSES, 20)
    assert tally.firm_wrong > 0.01 * max(tally.firm, 1)


def test_a_floor_of_a_model_of_unknown_size_is_provisional() -> None:
    tally = _slice(SIZELESS, 8)
    assert tally.firm_wrong == 0, tally.wrong
    # the same pools with a name that states the size are firm
    stated = _slice([Truth("floor", 4, 1000, name="org/student-3.8B", size_b=3.8)], 8)
    assert stated.firm == stated.draws and stated.firm_wrong == 0


def test_the_slice_fails_when_an_unknown_size_is_taken_as_7b(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _without(monkeypatch, lambda ev: ev.unread is not None)
    tally = _slice(SIZELESS, 8)
    assert tally.firm_wrong > 0.01 * max(tally.firm, 1)


def test_a_teacher_keyed_by_the_prompt_shares_the_students_tasks() -> None:
    tally = _slice(TEACHER_ROWS, 24)
    assert tally.firm_wrong <= 0.01 * max(tally.firm, 1), tally.wrong
    assert tally.firm >= 0.5 * tally.draws


def test_the_slice_fails_when_tasks_are_matched_by_id_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checks_module = importlib.import_module("whilecli.route.shared")
    monkeypatch.setattr(checks_module, "_keyed_apart", lambda mine, theirs: mine.clear())
    tally = _slice(TEACHER_ROWS, 24)
    # matched by id alone, a teacher keyed by its prompts shares no task: firm and wrong
    # where check 4 failed on that, provisional (check 4 unknown, no shared task) since; the
    # slice's test above fails either way
    assert tally.firm_wrong > 0.01 * max(tally.firm, 1) or tally.firm < 0.5 * tally.draws


def test_a_teacher_task_moves_to_the_one_student_task_of_its_prompt() -> None:
    import polars as pl

    from whilecli.route.shared import _keyed_apart

    mine = pl.DataFrame({"task_id": ["a", "b", "c", "d"], "prompt": [1, 2, 3, 3]})
    theirs = pl.DataFrame({"task_id": ["x", "y", "z", "w", "a"], "prompt": [1, 2, 3, 4, 9]})
    moved = dict(_keyed_apart(mine, theirs).iter_rows())
    # y is b; x would be a, an id the teacher already uses (with another prompt, which
    # check 4 drops): two teacher tasks never become one; z's prompt is two student tasks'
    # (c, d); w's is no student task's
    assert moved == {"y": "b"}


def test_the_new_kinds_agree_with_the_truth() -> None:
    tally = _slice(KINDS, 12)
    assert tally.firm_wrong <= 0.01 * max(tally.firm, 1), tally.wrong
    assert tally.firm >= 0.2 * tally.draws  # not everything provisional
    assert 0.93 <= _coverage(tally) <= 0.97, tally.coverage()


# --- the rules and the truth, directly ---------------------------------------------------


@pytest.mark.parametrize(
    ("cut", "rows", "clears", "firm"),
    [
        (0, 60, True, False),  # one-sided upper bound 0.083: not under 0.05 - 0.01
        (0, 150, True, True),  # 0.035: under it
        (4, 400, True, True),  # 0.01 of 400: 0.030
        (8, 400, True, False),  # 0.02 of 400: 0.044, under 0.05 but inside the zone
        (2, 35, False, False),  # 0.057 of 35: its lower bound is far under 0.05 + 0.01
        (40, 400, False, True),  # 0.10 of 400: 0.070, over it
    ],
)
def test_a_truncated_share_decides_firmly_only_past_the_zone(
    cut: int, rows: int, clears: bool, firm: bool
) -> None:
    options = RouteOptions()
    limit, zone = options.teacher_max_truncated, options.truncated_margin
    share = stats.wilson(cut, rows, n_tasks=rows // 4, unit="rows")
    edge = limit - zone if clears else limit + zone
    ev = Evidence(4, "a teacher", rows, share, "teacher's truncated share", edge, True,
                  below=clears)  # fmt: skip
    assert _provisional([ev], options)[0] is not firm


def test_the_truth_of_a_teacher_cut_off_near_its_limit() -> None:
    options = RouteOptions()
    clean = truth_verdict(Truth("mid", 4, 100, teacher_gap=0.2, teacher_cut_share=0.03), options)
    assert clean.method == "opd" and not clean.also
    over = truth_verdict(Truth("mid", 4, 100, teacher_gap=0.2, teacher_cut_share=0.07), options)
    assert over.method == "grpo" and not over.also
    # within truncated_margin of the 5% limit: either answer is right
    for share in (0.045, 0.05, 0.055):
        near = truth_verdict(
            Truth("mid", 4, 100, teacher_gap=0.2, teacher_cut_share=share), options
        )
        assert {near.method, *near.also} == {"opd", "grpo"}, share
    # k = 1: OPD beside the single-rollout family is required only outside the zone
    single = Truth("low", 1, 100, teacher_gap=0.2, teacher_cut_share=0.02)
    assert truth_verdict(single, options).requires == {"opd"}
    near_single = Truth("low", 1, 100, teacher_gap=0.2, teacher_cut_share=0.05)
    assert not truth_verdict(near_single, options).requires


def test_the_truth_of_a_teacher_whose_cut_off_replies_pass() -> None:
    options = RouteOptions()
    often = Truth("mid", 4, 100, teacher_gap=0.2, teacher_cut_share=0.02, teacher_cut_pass_scale=1)
    assert truth_verdict(often, options).method == "grpo"
    assert not truth_verdict(often, options).also
    # passing under cut_pass_ratio as often as its other draws: either answer, as check 1
    rare = Truth("mid", 4, 100, teacher_gap=0.2, teacher_cut_share=0.02, teacher_cut_pass_scale=0.1)
    assert truth_verdict(rare, options).also == {"opd"}


def test_the_truth_reads_sizes_that_names_do_not_state() -> None:
    options = RouteOptions()
    for name, size in NAMES_MORE:
        verdict = truth_verdict(Truth("floor", 4, 100, name=name, size_b=size), options)
        assert verdict.method == ("sft" if size < 7 else "opsd"), name


def test_an_older_copy_writes_a_row_at_any_share() -> None:
    import numpy as np

    from whilecli.route.simulate import draw_pool

    pool, _ = draw_pool(Truth("mid", 4, 30, stale_share=0.001), np.random.default_rng(0))
    assert pool.versions.get("6") == 1


def test_the_new_regions_are_in_the_probe() -> None:
    names = [name for name, _ in offgrid()]
    for part in ("teacher cut off", "cut-off replies that pass", "another k", "20-80%", "split tasks mixed", "under 2%",
                 "k = 1 near", "more model names", "within 1e-9", "errors near half"):  # fmt: skip
        assert any(part in name for name in names), part
