"""``whilecli diff``: the paired comparison on constructed dumps (improvement, regression, flips,
exit codes), the difference against a plain-Python loop over rows, and every format."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_check_cli import ANNOTATION, invoke

from slow_stats import slow_interval, slow_paired_floor
from whilecli.errors import InputError
from whilecli.route.paired import natural_order, paired_diff


def write_dump(path: Path, tasks: dict[str, tuple[int, int]]) -> str:
    """A JSONL dump: task ``t`` has ``n`` rows, the first ``c`` passing."""
    lines = []
    for task, (c, n) in tasks.items():
        for j in range(n):
            row = {"task_id": task, "reward": 1.0 if j < c else 0.0, "truncated": False}
            lines.append(json.dumps(row) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return str(path)


def slow_difference(before: Path, after: Path) -> tuple[float, int, list[str], list[str]]:
    """Mean per-task difference over shared tasks, by a plain loop over the rows."""

    def rates(path: Path) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        for line in path.read_text().splitlines():
            row = json.loads(line)
            out.setdefault(row["task_id"], []).append(row["reward"])
        return out

    b, a = rates(before), rates(after)
    shared = sorted(set(b) & set(a))
    diffs = [sum(a[t]) / len(a[t]) - sum(b[t]) / len(b[t]) for t in shared]
    gained = [t for t in shared if sum(b[t]) == 0 and sum(a[t]) > 0]
    lost = [t for t in shared if sum(b[t]) > 0 and sum(a[t]) == 0]
    return sum(diffs) / len(diffs), len(shared), gained, lost


BEFORE = {f"t{i:02d}": (i % 3, 4) for i in range(30)}  # rates 0, 1/4, 2/4 in turn
BETTER = {f"t{i:02d}": (min(4, i % 3 + 2), 4) for i in range(30)}
WORSE = {f"t{i:02d}": (0 if i % 3 == 1 else max(0, i % 3 - 1), 4) for i in range(30)}


def test_improvement_by_hand(tmp_path: Path) -> None:
    b = write_dump(tmp_path / "b.jsonl", BEFORE)
    a = write_dump(tmp_path / "a.jsonl", BETTER)
    # every task gains 2 of 4 passes: d = 0.5 on all 30 tasks
    report = json.loads(invoke("diff", b, a, "--fail-on", "regression", "--format", "json").stdout)
    assert report["difference"]["value"] == pytest.approx(0.5)
    # the tasks agree, their draws do not: an interval around 0.5, not a point
    assert 0.3 < report["difference"]["low"] < 0.5 < report["difference"]["high"] < 0.7
    assert report["before"]["value"] == pytest.approx(0.25)  # (0 + 1/4 + 2/4)/3
    assert report["after"]["value"] == pytest.approx(0.75)
    assert report["verdict"] == "improvement" and report["exit_code"] == 0
    assert report["gained"] == [f"t{i:02d}" for i in range(0, 30, 3)] and report["lost"] == []
    assert report["shared_tasks"] == 30


def test_regression_and_exit_codes(tmp_path: Path) -> None:
    b = write_dump(tmp_path / "b.jsonl", BEFORE)
    a = write_dump(tmp_path / "a.jsonl", WORSE)
    mean, shared, gained, lost = slow_difference(tmp_path / "b.jsonl", tmp_path / "a.jsonl")
    result = invoke("diff", b, a, "--fail-on", "regression", "--format", "json")
    report = json.loads(result.stdout)
    assert result.exit_code == 1 and report["verdict"] == "regression"
    # d = 0 (0→0), −1/4 (1→0), −1/4 (2→1) in turn: mean −1/6
    assert report["difference"]["value"] == pytest.approx(mean) == pytest.approx(-1 / 6)
    assert report["difference"]["high"] < 0
    assert report["lost"] == lost == [f"t{i:02d}" for i in range(1, 30, 3)]
    assert report["gained"] == gained == []
    assert report["failed"][0].startswith("regression: pass@1 fell by 0.17")
    # without --fail-on the same regression exits 0
    assert invoke("diff", b, a).exit_code == 0
    assert invoke("diff", a, b, "--fail-on", "regression").exit_code == 0


def test_unpaired_tasks_and_flips_both_ways(tmp_path: Path) -> None:
    before = {"a": (0, 2), "b": (2, 2), "c": (1, 2), "only_b": (1, 2)}
    after = {"a": (1, 2), "b": (0, 2), "c": (1, 2), "only_a": (0, 2)}
    b, a = tmp_path / "b.jsonl", tmp_path / "a.jsonl"
    write_dump(b, before)
    write_dump(a, after)
    report = json.loads(invoke("diff", str(b), str(a), "--format", "json").stdout)
    mean, shared, gained, lost = slow_difference(b, a)
    assert (report["shared_tasks"], report["only_before"], report["only_after"]) == (3, 1, 1)
    assert report["gained"] == gained == ["a"] and report["lost"] == lost == ["b"]
    assert report["difference"]["value"] == pytest.approx(mean) == pytest.approx(-1 / 6)
    text = invoke("diff", str(b), str(a)).stdout
    words = " ".join(text.split())
    assert "tasks 3 paired, 1 only before, 1 only after; of 4 before and 4 after" in words


def test_few_tasks_are_undecided(tmp_path: Path) -> None:
    b = write_dump(tmp_path / "b.jsonl", {"x": (2, 2), "y": (2, 2)})
    a = write_dump(tmp_path / "a.jsonl", {"x": (0, 2), "y": (0, 2)})
    result = invoke("diff", b, a, "--fail-on", "regression")
    assert result.exit_code == 0 and result.stdout.startswith("whilecli diff: undecided")
    assert "[no interval] n=2 paired tasks (8 rows): 2 tasks" in " ".join(result.stdout.split())


def test_no_shared_task_and_bad_usage(tmp_path: Path) -> None:
    b = write_dump(tmp_path / "b.jsonl", {"x": (1, 2)})
    a = write_dump(tmp_path / "a.jsonl", {"y": (1, 2)})
    for args in ([b, a], [b, b, "--fail-on", "improvement"], ["-", "-"], [b, b, "--draws", "0"]):
        result = invoke("diff", *args, input="")
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith("whilecli: error: ") and "Traceback" not in result.output
    with pytest.raises(InputError, match="share no task"):
        paired_diff(pl.DataFrame({"task_id": ["x"], "n": [1], "passes": [1]}),
                    pl.DataFrame({"task_id": ["y"], "n": [1], "passes": [1]}))  # fmt: skip


def test_markdown_github_and_summary(tmp_path: Path) -> None:
    b = write_dump(tmp_path / "b.jsonl", BEFORE)
    a = write_dump(tmp_path / "a.jsonl", WORSE)
    md = invoke("diff", b, a, "--fail-on", "regression", "--format", "markdown").stdout
    assert md.startswith("## whilecli diff: regression")
    rows = dict(re.findall(r"^\| ([^|]+?) \| ([^|]+?) \|$", md, flags=re.M))
    assert rows["tasks"] == "30 paired; of 30 before and 30 after"
    assert rows["difference"].startswith("-0.17 [")
    assert "- **failed** regression" in md
    summary = tmp_path / "summary.md"
    gh = invoke("diff", b, a, "--fail-on", "regression", "--format", "github",
                env={"GITHUB_STEP_SUMMARY": str(summary)})  # fmt: skip
    lines = gh.stdout.splitlines()
    assert gh.exit_code == 1 and all(ANNOTATION.match(x) for x in lines)
    assert lines[0].startswith(f"::error file={a},title=whilecli diff::regression")
    assert summary.read_text(encoding="utf-8") == md + "\n"
    warned = invoke("diff", b, a, "--format", "github").stdout.splitlines()
    assert warned[0].startswith("::warning") and warned[-1].startswith("::notice")


@given(
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=3, max_size=40),
    st.integers(0, 5),
)
@settings(max_examples=50, deadline=None)
def test_difference_is_the_mean_of_per_task_differences(
    pairs: list[tuple[int, int]], seed: int
) -> None:
    ids = [f"t{i}" for i in range(len(pairs))]
    before = pl.DataFrame({"task_id": ids, "n": [4] * len(pairs), "passes": [b for b, _ in pairs]})
    after = pl.DataFrame({"task_id": ids, "n": [4] * len(pairs), "passes": [a for _, a in pairs]})
    diff = paired_diff(before, after, draws=300, seed=seed)
    d = [(a - b) / 4 for b, a in pairs]
    assert diff.difference.value == pytest.approx(sum(d) / len(d), abs=1e-12)
    assert diff.difference.low <= diff.difference.value + 1e-12 <= diff.difference.high + 2e-12
    assert diff.after.value - diff.before.value == pytest.approx(diff.difference.value, abs=1e-12)
    order = natural_order  # t9 before t10
    assert diff.gained == order([t for t, (b, a) in zip(ids, pairs, strict=True) if b == 0 < a])
    assert diff.lost == order([t for t, (b, a) in zip(ids, pairs, strict=True) if a == 0 < b])
    assert diff.regression == (diff.difference.high < 0)
    again = paired_diff(
        before.reverse(), after.sample(fraction=1, shuffle=True, seed=1), draws=300, seed=seed
    )
    assert again.difference == diff.difference  # seeded and order-free


def test_interval_matches_the_task_loop() -> None:
    rng = np.random.default_rng(3)
    pairs = rng.integers(0, 5, size=(120, 2))
    ids = [f"t{i}" for i in range(120)]
    before = pl.DataFrame({"task_id": ids, "n": [4] * 120, "passes": pairs[:, 0].tolist()})
    after = pl.DataFrame({"task_id": ids, "n": [4] * 120, "passes": pairs[:, 1].tolist()})
    diff = paired_diff(before, after)
    d = [(a - b) / 4 for b, a in pairs.tolist()]
    after_floor = slow_paired_floor([(a, 4) for _, a in pairs.tolist()])
    before_floor = slow_paired_floor([(b, 4) for b, _ in pairs.tolist()])
    floors = [x + y for x, y in zip(after_floor, before_floor, strict=True)]
    low, high = slow_interval(d, floors, 960, signed=True)
    assert diff.difference.low == pytest.approx(low, abs=1e-9)
    assert diff.difference.high == pytest.approx(high, abs=1e-9)
    assert diff.difference.format().endswith("n=120 paired tasks (960 rows)")


@pytest.mark.parametrize("k", [1, 2, 4, 8])
@pytest.mark.parametrize("shape", ["mid", "ends"])
def test_identical_runs_get_the_draws_noise_at_every_k(k: int, shape: str) -> None:
    """Two identical runs (a greedy rerun, one file read twice) differ by nothing task by
    task; the interval is the one two runs' draws alone give, at one draw a task as at
    several: never a point, as the task loop over each run's fitted prior computes it."""
    rng = np.random.default_rng(k)
    rates = rng.beta(2, 2, 80) if shape == "mid" else rng.beta(0.3, 0.3, 80)
    passes = rng.binomial(k, rates).tolist()
    ids = [f"t{i}" for i in range(80)]
    run = pl.DataFrame({"task_id": ids, "n": [k] * 80, "passes": passes})
    diff = paired_diff(run, run)
    floor = slow_paired_floor([(c, k) for c in passes])
    low, high = slow_interval([0.0] * 80, [2 * f for f in floor], 2 * k * 80, signed=True)
    assert diff.difference.low is not None and diff.difference.low < 0 < diff.difference.high
    assert diff.difference.high == pytest.approx(high, rel=0.02)
    assert diff.difference.low == pytest.approx(low, rel=0.02)


def test_identical_runs_cross_zero_and_never_fail(tmp_path: Path) -> None:
    # the pair: two identical runs, and 5 tasks whose differences cross 0
    b = write_dump(tmp_path / "b.jsonl", BEFORE)
    same = json.loads(invoke("diff", b, b, "--format", "json").stdout)["difference"]
    assert same["low"] < 0 < same["high"] and same["low"] == pytest.approx(-same["high"])
    ids = [f"t{i}" for i in range(5)]
    before = pl.DataFrame({"task_id": ids, "n": [4] * 5, "passes": [2, 3, 1, 2, 4]})
    after = pl.DataFrame({"task_id": ids, "n": [4] * 5, "passes": [1, 3, 2, 1, 3]})
    diff = paired_diff(before, after)
    assert diff.difference.low < 0 < diff.difference.high and not diff.regression


def test_bundled_student_teacher_pair() -> None:
    from conftest import EXAMPLES

    s, t = str(EXAMPLES / "student.parquet"), str(EXAMPLES / "teacher.parquet")
    up = json.loads(invoke("diff", s, t, "--format", "json").stdout)
    down = json.loads(invoke("diff", t, s, "--format", "json").stdout)
    assert up["verdict"] == "improvement" and down["verdict"] == "regression"
    assert up["difference"]["value"] == pytest.approx(-down["difference"]["value"])
    assert up["gained"] == down["lost"] and up["lost"] == down["gained"]


@pytest.mark.parametrize("command", ["diff", "size"])
def test_two_dumps_of_no_shared_task_are_named_in_one_line(tmp_path: Path, command: str) -> None:
    before = write_dump(tmp_path / "before.jsonl", {"a": (1, 2), "b": (0, 2)})
    after = write_dump(tmp_path / "after.jsonl", {"c": (1, 2), "d": (2, 2)})
    args = [before, after] if command == "diff" else ["--before", before, "--after", after]
    result = invoke(command, *args)
    out = result.output
    assert result.exit_code == 2 and out.count("\n") == 1, out
    assert f"{before} and {after} share no task id" in out


@pytest.mark.parametrize("command", ["diff", "size"])
def test_ids_whose_prompts_all_differ_are_said_to_be_other_tasks(
    tmp_path: Path, command: str
) -> None:
    """Every id both dumps hold carries another prompt in the second: the refusal says so,
    as route --teacher does ("shared ids carry other prompts"), not that no id is shared."""
    rows = [
        {"task_id": f"t{t}", "prompt": f"question {t}", "completion": "a", "reward": 1.0}
        for t in range(4)
    ]
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    before.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    other = [dict(r, prompt=r["prompt"].replace(" ", "  ")) for r in rows]
    after.write_text("".join(json.dumps(r) + "\n" for r in other), encoding="utf-8")
    args = [str(before), str(after)]
    result = invoke(
        command, *(args if command == "diff" else ["--before", *args[:1], "--after", *args[1:]])
    )
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert "4 ids both hold carry other prompts" in result.output
