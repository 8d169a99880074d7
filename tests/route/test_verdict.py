"""A verdict people can trust: provisional on thin evidence, a headline that claims only
what was checked, a teacher at k = 1, exit codes that say why, a held-out size from the pool.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.route.decide import decide
from whilecli.route.model import Status
from whilecli.route.options import RouteOptions
from whilecli.route.pool import summarize
from whilecli.route.report import render

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "data"
REAL = ROOT / "tests" / "data" / "real"
ANYSWE = REAL / "nemo-gym" / "anyswe_agent"
WIKI = REAL / "verifiers" / "wiki_search"
WIKI_STUDENT = WIKI / "qwen--qwen3-4b-instruct-2507__e762fd98"
WIKI_TEACHER = WIKI / "willcb--qwen3-4b-wiki-search__094df25d"
STUDENT = "Qwen/Qwen3-0.6B"
VOCAB = ["--teacher-vocab", "151936", "--student-vocab", "151936"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def invoke(*args: str, input: bytes | str | None = None):
    return CliRunner().invoke(app, ["route", *args], input=input)


def route_json(*args: str) -> tuple[int, dict]:
    result = invoke(*args, "--format", "json")
    return result.exit_code, json.loads(result.stdout)


def first_lines(*args: str) -> dict[str, list[str]]:
    """The first lines of every output format."""
    out = {}
    for fmt in ("text", "markdown", "github"):
        result = invoke(*args, "--format", fmt)
        out[fmt] = result.stdout.splitlines()[:6]
    return out


def rows_file(tmp_path: Path, passes: list[int], k: int, **extra: object) -> str:
    path = tmp_path / "rows.jsonl"
    lines = [
        json.dumps({"task_id": f"t{i}", "reward": float(j < c), "truncated": False,
                    "model": STUDENT, **extra})
        for i, c in enumerate(passes)
        for j in range(k)
    ]  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


# ------------------------------------------------------------ 1. enough evidence


def test_a_clear_band_of_64_tasks_is_firm() -> None:
    code, report = route_json(str(EXAMPLES / "mixed.parquet"), "--model", STUDENT, "--strict")
    assert (code, report["route"], report["provisional"]) == (0, "grpo", False)
    assert report["provisional_why"] is None and report["firm_at"] is None
    assert report["exit_reasons"] == []
    assert report["headline"] == "GRPO (route: split tasks, on-policy, a program grades)"


def test_one_task_with_five_rollouts_is_provisional() -> None:
    code, report = route_json(str(ANYSWE))
    assert (code, report["route"], report["method"]) == (0, "grpo", "grpo")
    # one requirement: the band's 32 split tasks, past the 30 that make it firm
    assert report["provisional"] is True and report["firm_at"] == 32
    assert report["needs"]["tasks"] == 32
    assert "1 split task of 1" in report["provisional_why"]
    assert "fewer than 30 split tasks" in report["provisional_why"]
    assert "About 32 tasks would make it firm" in report["provisional_why"]
    assert report["why"].startswith("1 split task of 1,")  # not "1 split tasks"
    whys = {m["name"]: m["why"] for m in report["methods"]}
    assert whys["grpo"].startswith("1 split task gives ")
    assert whys["dpo"].startswith("1 task with a pass and a fail")
    band = next(c for c in report["checks"] if c["key"] == "band")
    assert band["why"].startswith("mixed: 1 of 1 grouped task split")
    assert report["headline"].startswith("provisional: GRPO (route: ")
    lines = first_lines(str(ANYSWE))
    assert lines["text"][0].startswith("whilecli route: provisional: GRPO")
    assert lines["markdown"][0] == "## whilecli route: provisional: GRPO"
    assert lines["github"][0].startswith("::warning ")
    assert "title=whilecli route%3A provisional::provisional: GRPO" in lines["github"][0]


def test_strict_exits_1_on_a_provisional_verdict_and_says_so_first() -> None:
    args = (str(ANYSWE), "--model", "anything", "--strict")
    code, report = route_json(*args)
    assert code == 1 and report["exit_code"] == 1 and report["provisional"]
    assert "--strict: the verdict is provisional" in report["exit_reasons"]
    lines = first_lines(*args)
    text = "\n".join(lines["text"][:3])
    assert "exit 1:" in text and "provisional" in text
    assert any(
        line.startswith("**exit 1: ") and "provisional" in line for line in lines["markdown"]
    )
    assert lines["github"][0].startswith("::error ")
    assert "title=whilecli route%3A exit 1::exit 1: " in lines["github"][0]
    assert "provisional" in lines["github"][0]


def test_firm_at_scales_a_wide_interval_as_one_over_root_n() -> None:
    # 30 grouped tasks, half split: enough tasks, but a split-share interval over 0.3 wide
    passes = [4] * 15 + [0] * 8 + [8] * 7
    rows = [(f"t{i}", j < c, False, "m", None) for i, c in enumerate(passes) for j in range(8)]
    from test_checks import make_rows

    route = decide(summarize(make_rows(rows)), RouteOptions(model="m"))
    share = next(c for c in route.checks if c.key == "band").measured["split_share"]
    width = share.high - share.low
    assert width > 0.3 and route.provisional
    # split tasks are grpo's evidence: 30 of them at least, at this pool's split share
    split_needed = max(30, math.ceil(15 * (width / 0.3) ** 2))
    # the one requirement: what makes it firm, and the band's 32 split tasks
    assert route.firm_at == max(math.ceil(split_needed / 0.5), math.ceil(32 / 0.5))
    assert route.needs["tasks"] == route.firm_at
    assert "interval is" in route.provisional_why and "split share" in route.provisional_why
    assert route.exit_code == 0  # provisional alone never fails without --strict


def test_fix_reward_rests_on_a_seen_pass_not_on_a_sample() -> None:
    code, report = route_json(str(EXAMPLES / "truncated_passes.parquet"))
    assert code == 1 and report["provisional"] is False
    assert report["exit_reasons"] == ["check 1 (truncated passes) fails: a cut-off reply passes"]


# ------------------------------------------------- 2. the headline claims only what was checked


def test_unchecked_on_policy_is_named_unknown(tmp_path: Path) -> None:
    _, report = route_json(str(EXAMPLES / "mixed.parquet"))
    assert report["headline"] == (
        "GRPO (route: split tasks, on-policy unknown (no --model), a program grades)"
    )
    judged = rows_file(tmp_path, [1, 2, 3, 4, 5, 6, 7] * 6, 8, judge_name="gpt-4.1")
    _, report = route_json(judged)
    assert report["grader"] == "judge"
    assert report["headline"] == (
        "GRPO (route: split tasks, on-policy unknown (no --model), a judge grades)"
    )
    assert "a program grades" not in report["headline"]


def test_unknown_truncation_is_named_in_the_headline(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    lines = [
        json.dumps({"task_id": f"t{i}", "reward": float(j < c), "model": STUDENT})
        for i, c in enumerate([1, 2, 3, 4, 5, 6, 7] * 6)
        for j in range(8)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _, report = route_json(str(path), "--model", STUDENT)
    assert report["headline"] == (
        "GRPO (route: split tasks, on-policy, truncation unknown (not recorded), a program grades)"
    )


def test_same_tokenizer_only_when_check_5_passed() -> None:
    args = [str(EXAMPLES / "student.parquet"), "--teacher", str(EXAMPLES / "teacher.parquet")]
    _, given = route_json(*args, "--model", STUDENT, *VOCAB)
    assert given["route"] == "teacher"
    assert "a stronger teacher with the same tokenizer" in given["headline"]
    _, unchecked = route_json(*args, "--model", STUDENT)
    assert unchecked["route"] == "teacher" and "same tokenizer" not in unchecked["headline"]
    assert "tokenizer unknown (no vocab given)" in unchecked["headline"]


def test_a_judge_column_of_verifiers_is_a_judge() -> None:
    _, report = route_json(str(WIKI_STUDENT))
    assert report["grader"] == "judge" and report["headline"].endswith("a judge grades)")


def test_a_summary_remembers_its_grader(tmp_path: Path) -> None:
    from whilecli.io.read import read_rows
    from whilecli.route.summary import write_summary

    judged = rows_file(tmp_path, [1, 2, 3] * 12, 4, judge_name="gpt-4.1")
    summary = write_summary(read_rows([judged]), tmp_path / "tasks.parquet")
    want = route_json(judged)[1]
    got = route_json(str(summary))[1]
    assert got["grader"] == want["grader"] == "judge"
    assert got["headline"] == want["headline"]


def test_stdin_is_scanned_for_a_judge(tmp_path: Path) -> None:
    judged = rows_file(tmp_path, [1, 2, 3] * 12, 4, judge_name="gpt-4.1")
    data = Path(judged).read_bytes()
    result = invoke("-", "--format", "json", input=data)
    assert json.loads(result.stdout)["grader"] == "judge"
    plain = rows_file(tmp_path, [1, 2, 3] * 12, 4)
    result = invoke("-", "--format", "json", input=Path(plain).read_bytes())
    assert json.loads(result.stdout)["grader"] == "program"


# ---------------------------------------------------------------- 3. a teacher at k = 1


def test_a_teacher_clears_at_k_1() -> None:
    code, report = route_json(str(WIKI_STUDENT), "--teacher", str(WIKI_TEACHER))
    assert (code, report["route"], report["method"]) == (0, "single-rollout", "flash_reinforce")
    assert report["plan"] == ["flash_reinforce", "rae", "opd"]
    assert "a teacher clears (OPD)" in report["headline"]
    assert "same tokenizer" not in report["headline"]  # not checked
    assert next(m for m in report["methods"] if m["name"] == "opd")["ok"]
    teacher = next(c for c in report["checks"] if c["key"] == "teacher")
    measured = teacher["measured"]
    assert measured["decided_by"] == "intervals apart"
    assert round(measured["gap"], 2) == 0.34
    assert measured["teacher_pass_at_1"]["low"] > measured["student_pass_at_1"]["high"]
    # the paired difference is the one `whilecli diff` prints
    diff = CliRunner().invoke(
        app, ["diff", str(WIKI_STUDENT), str(WIKI_TEACHER), "--format", "json"]
    )
    assert measured["paired_difference"] == json.loads(diff.stdout)["difference"]
    assert "paired per-task difference +0.34" in teacher["why"] and "context" in teacher["why"]


def test_a_teacher_at_k_1_counts_under_strict() -> None:
    args = [str(WIKI_STUDENT), "--teacher", str(WIKI_TEACHER), "--strict"]
    code, report = route_json(*args)
    assert code == 1
    reasons = " ".join(report["exit_reasons"])
    assert "check 4 (teacher)" in reasons and "check 5 (tokenizer)" in reasons


def test_no_opd_at_k_1_when_the_teacher_does_not_clear() -> None:
    single = summarize_rows([(f"t{i}", i % 2 == 0) for i in range(40)])
    weak = summarize_rows([(f"t{i}", i % 2 == 0) for i in range(40)])
    route = decide(single, RouteOptions(teacher=weak))
    assert route.route == "single-rollout" and "opd" not in route.plan
    assert "teacher clears" not in route.headline
    teacher = next(c for c in route.checks if c.key == "teacher")
    assert teacher.status is Status.FAIL and "paired_difference" in teacher.measured


def summarize_rows(rows: list[tuple[str, bool]]):
    from test_checks import make_rows

    return summarize(make_rows([(t, p, False, "m", None) for t, p in rows]))


# ------------------------------------------------------------ 4. exit codes say what happened


def test_strict_names_each_failing_check_first() -> None:
    args = (str(EXAMPLES / "mixed.parquet"), "--strict")
    code, report = route_json(*args)
    assert code == 1 and report["exit_reasons"] == ["--strict: check 6 (on-policy) is unknown"]
    lines = first_lines(*args)
    assert lines["text"][1] == "exit 1: --strict: check 6 (on-policy) is unknown"
    assert "**exit 1: --strict: check 6 (on-policy) is unknown**" in lines["markdown"]
    assert lines["github"][0].endswith("::exit 1: --strict: check 6 (on-policy) is unknown")


def _closed_pipe_run(*args: str) -> subprocess.CompletedProcess:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first write
    try:
        return subprocess.run(
            [sys.executable, "-m", "whilecli", "route", *args],
            stdout=write,
            stderr=subprocess.PIPE,
            env=ENV,
            timeout=120,
        )
    finally:
        os.close(write)


def test_a_closed_pipe_exits_141_quietly() -> None:
    for fmt in ("text", "json"):
        done = _closed_pipe_run(str(EXAMPLES / "mixed.parquet"), "--format", fmt)
        assert done.returncode == 141, done.stderr
        assert done.stderr == b""


def test_piped_into_head_ends_quietly() -> None:
    command = (
        f"{sys.executable} -m whilecli route {EXAMPLES / 'mixed.parquet'} --model {STUDENT} "
        "| head -1; echo rc=${PIPESTATUS[0]}"
    )
    done = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, env=ENV, timeout=120
    )
    first, rc = done.stdout.splitlines()
    assert first.startswith("whilecli route: GRPO")
    assert rc in ("rc=0", "rc=141")  # 141 when the pipe closed before the last write
    assert "Traceback" not in done.stderr and "Error" not in done.stderr


# ------------------------------------------------------------------ 5. before the GPU


def test_the_holdout_is_sized_from_the_pool() -> None:
    _, report = route_json(str(EXAMPLES / "mixed.parquet"), "--model", STUDENT)
    held = report["before_gpu"]["holdout"]
    assert (held["sized_from"], held["k"]) == ("pool", 8)
    assert held["sized"] == "sized from this pool: pass@1 0.50, k = 8"
    assert held["n"] != 367
    text = render_route(str(EXAMPLES / "mixed.parquet"))
    assert "sized from this pool: pass@1 0.50, k = 8" in text


def test_a_floor_is_sized_at_the_defaults() -> None:
    _, report = route_json(str(EXAMPLES / "floor.parquet"))
    held = report["before_gpu"]["holdout"]
    assert (held["sized_from"], held["n"], held["base"], held["k"]) == ("defaults", 367, 0.6, 4)
    assert "leaves no room" in held["sized"]


def test_size_without_rows_keeps_its_defaults() -> None:
    result = CliRunner().invoke(app, ["size", "--format", "json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["holdout"]["n"] == 367


def render_route(path: str) -> str:
    from whilecli.route import run_route

    return render(run_route(path, model=STUDENT), "text", width=200)  # type: ignore[arg-type]
