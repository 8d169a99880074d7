"""The real dumps through the whole ``while route``: every file's numbers, and the two pairs.

Every file in tests/data/real goes through the command line (``--format json``) and its
report must carry the numbers a plain-Python reading of the file gives (``reference`` in
``test_read_real``: DESIGN section 1 by hand): tasks, rows, k, pass@1 as the mean of the
per-task pass rates, its 95% percentile bootstrap interval against an independent
plain-Python bootstrap over tasks, and the truncation status.

The pairs of data-real's README: wiki_search (student qwen3-4b-instruct-2507, teacher the
wiki-search fine-tune; 100 tasks × 1) and wordle (gpt-4.1-mini and gpt-5-mini; 5 tasks × 3,
a float rubric sum as reward).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from statistics import NormalDist
from typing import Any

import pytest
from test_read_real import (
    ANYSWE,
    LMEVAL,
    PRIME,
    SWERL,
    WIKI_BASE,
    WIKI_FT,
    WORDLE_5,
    WORDLE_41,
    load,
    reference,
)
from typer.testing import CliRunner

from slow_stats import slow_pass_at_1
from whilecli.cli import app


def route(*args: str) -> tuple[int, dict[str, Any], str]:
    """``while route ARGS --format json``: (exit code, report, stderr)."""
    result = CliRunner().invoke(app, ["route", *args, "--format", "json"])
    report = json.loads(result.stdout) if result.exit_code in (0, 1) else {}
    return result.exit_code, report, result.stderr


def check(report: dict[str, Any], key: str) -> dict[str, Any]:
    return next(c for c in report["checks"] if c["key"] == key)


def plain_bootstrap(rates: list[float], draws: int = 4000, seed: int = 1) -> tuple[float, float]:
    """95% percentile bootstrap of the mean of ``rates`` (resample tasks), plain Python:
    sorted means at ⌊0.025·D⌋ and ⌊0.975·D⌋ − 1."""
    rng = random.Random(seed)
    n = len(rates)
    means = sorted(sum(rates[rng.randrange(n)] for _ in range(n)) / n for _ in range(draws))
    return means[int(0.025 * draws)], means[int(0.975 * draws) - 1]


def per_task_rates(path: Path, threshold: float = 1.0) -> list[float]:
    return [p / n for n, p in reference(path, threshold)["tasks"].values()]


# (file, extra flags, tasks, rows, k, truncation status, truncated rows)
FILES = [
    (WIKI_FT, [], 100, 100, 1, "unknown", 0),
    (WIKI_BASE, [], 100, 100, 1, "unknown", 0),
    (WORDLE_41, ["--pass-threshold", "1.0"], 5, 15, 3, "unknown", 0),
    (WORDLE_5, ["--pass-threshold", "1.0"], 5, 15, 3, "unknown", 0),
    (SWERL, [], 5, 5, 1, "pass", 3),
    (ANYSWE, [], 1, 5, 5, "pass", 0),
    (PRIME, [], 4, 25, 8, "unknown", 0),
    (LMEVAL, [], 20, 20, 1, "unknown", 0),
]


@pytest.mark.parametrize(
    ("path", "flags", "tasks", "rows", "k", "truncation", "truncated"),
    FILES,
    ids=[f[0].parent.name for f in FILES],
)
def test_each_real_file_through_the_route(
    path: Path, flags: list[str], tasks: int, rows: int, k: int, truncation: str, truncated: int
) -> None:
    code, report, err = route(str(path), *flags)
    assert code == 0, err
    summary = report["summary"]
    threshold = float(flags[1]) if flags else 1.0
    ref = reference(path, threshold)
    assert summary["tasks"] == tasks == len(ref["tasks"])
    assert summary["rows"] == rows == sum(n for n, _ in ref["tasks"].values())
    assert summary["k"] == k == max(n for n, _ in ref["tasks"].values())
    rates = per_task_rates(path, threshold)
    rate = summary["pass_at_1"]
    assert rate["value"] == pytest.approx(sum(rates) / len(rates), abs=1e-12)
    assert (rate["n_tasks"], rate["n_rows"]) == (tasks, rows)
    if tasks < 3:
        assert rate["low"] is None and rate["why_no_interval"]
    else:
        pairs = [(p, n) for n, p in reference(path, threshold)["tasks"].values()]
        low, high = slow_pass_at_1(pairs)
        assert rate["interval"] == "clustered"
        assert rate["low"] == pytest.approx(low, abs=1e-9)
        assert rate["high"] == pytest.approx(high, abs=1e-9)
        assert rate["low"] <= rate["value"] <= rate["high"]
    cut = check(report, "truncated_passes")
    assert cut["status"] == truncation
    assert cut["measured"]["truncated_rows"] == truncated
    assert truncated == sum(t is True for t in ref["truncated"])
    if truncation == "unknown":
        assert cut["measured"]["rows_with_truncation_recorded"] == 0
        assert any("truncation is unknown" in w for w in cut["warnings"])
    else:
        assert cut["measured"]["rows_with_truncation_recorded"] == rows
        assert cut["measured"]["truncated_passes"] == 0  # every truncated row scored 0


def normal_interval(p: float, n: int) -> tuple[float, float]:
    """p ± z₀.₉₇₅ √(p(1 − p)/n): what a bootstrap of n 0/1 tasks comes near."""
    half = NormalDist().inv_cdf(0.975) * (p * (1 - p) / n) ** 0.5
    return p - half, p + half


def test_wiki_search_pair_clears_with_truncation_unknown() -> None:
    """Intervals apart at n = 100; no truncation recorded: status unknown, a warning, and OPD
    still fits (the route itself is decided earlier, by k = 1)."""
    code, report, err = route(str(WIKI_BASE), "--teacher", str(WIKI_FT))
    assert code == 0, err
    student = sum(r["reward"] >= 1.0 for r in load(WIKI_BASE)) / 100
    teacher = sum(r["reward"] >= 1.0 for r in load(WIKI_FT)) / 100
    assert (student, teacher) == (0.55, 0.89)  # data-real README: means 0.55 and 0.89
    got = check(report, "teacher")
    measured = got["measured"]
    assert measured["shared_tasks"] == 100 and measured["coverage"]["value"] == 1.0
    for name, p in (("student_pass_at_1", student), ("teacher_pass_at_1", teacher)):
        rate = measured[name]
        assert rate["value"] == pytest.approx(p)
        assert (rate["n_tasks"], rate["n_rows"]) == (100, 100)
        low, high = normal_interval(p, 100)
        assert rate["low"] == pytest.approx(low, abs=0.02)
        assert rate["high"] == pytest.approx(high, abs=0.02)
    assert measured["gap"] == pytest.approx(teacher - student)
    assert measured["teacher_pass_at_1"]["low"] > measured["student_pass_at_1"]["high"]
    assert got["status"] == "unknown"
    assert "intervals apart" in got["why"] and "record no truncation" in got["why"]
    assert any("record truncation" in w for w in got["warnings"])
    assert measured["teacher_truncated_share"]["value"] is None
    opd = next(m for m in report["methods"] if m["name"] == "opd")
    assert opd["ok"], opd
    assert report["route"] == "single-rollout"  # k = 1 decides before the teacher check


def test_wordle_pair_without_threshold_is_refused() -> None:
    """A float rubric sum is not a pass/fail: exit 2, one line, naming the flag and the
    binary column the rows carry."""
    code, _, err = route(str(WORDLE_41), "--teacher", str(WORDLE_5))
    assert code == 2
    line = err.strip()
    assert "\n" not in line and str(WORDLE_41) in line
    assert "--pass-threshold" in line and "check_answer_reward_func" in line
    assert "outside [0, 1]" in line


@pytest.mark.parametrize(
    "flags",
    [["--pass-threshold", "1.0"], ["--map", "reward=check_answer_reward_func"]],
    ids=["threshold", "map"],
)
def test_wordle_pair_with_a_pass_rule(flags: list[str]) -> None:
    """With a pass rule the pair routes, and the teacher does NOT clear. On 5 tasks the
    student's per-task rates are plain-Python computed. The teacher passes every row: a
    percentile bootstrap would collapse to [1, 1], so its interval is the Wilson interval over
    its 5 tasks, [0.566, 1], which overlaps the student's: the pair is inconclusive."""
    code, report, err = route(str(WORDLE_41), "--teacher", str(WORDLE_5), *flags)
    assert code == 0, err
    if flags[0] == "--map":  # the binary column: a row passes at 1
        passes: dict[str, int] = {}
        for r in load(WORDLE_41):
            key = str(r["example_id"])
            passes[key] = passes.get(key, 0) + (r["check_answer_reward_func"] >= 1.0)
        rates = [p / 3 for p in passes.values()]
    else:
        rates = per_task_rates(WORDLE_41)
    assert sorted(rates) == sorted(per_task_rates(WORDLE_41))  # the two rules agree here
    assert rates.count(1.0) == 2 and len(rates) == 5
    measured = check(report, "teacher")["measured"]
    student, teacher = measured["student_pass_at_1"], measured["teacher_pass_at_1"]
    assert student["value"] == pytest.approx(sum(rates) / 5)
    assert teacher["value"] == 1.0 and teacher["interval"] == "clustered"
    assert teacher["low"] == pytest.approx(0.5655, abs=1e-4) and teacher["high"] == 1.0
    assert student["high"] > teacher["low"]  # overlapping
    assert measured["gap"] == pytest.approx(1.0 - sum(rates) / 5)
    teacher_check = check(report, "teacher")
    assert teacher_check["status"] == "fail"
    assert "intervals overlap" in teacher_check["why"]
    assert not next(m for m in report["methods"] if m["name"] == "opd")["ok"]
