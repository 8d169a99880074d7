"""One answer per question across the report's forms and commands.

Pools drawn from :mod:`whilecli.route.simulate`'s truths (bands from floor to saturated,
k from 1 to 8 and mixed, 3 to 80 tasks, cut-off replies that pass or fail, teachers some
gap ahead, rows an older copy wrote) are written as JSON Lines and run through the
commands as a person runs them. A figure that answers one question is printed from one
value, everywhere:

- the tasks that "would make it firm" are the requirement ``Needs:`` lists, the JSON's
  ``firm_at`` and ``needs.tasks``, and the count ``check``'s few-split line asks for;
- a quantity printed twice (pass@1 in the brief, under ``-v``, in Markdown) is the same
  rounding of the JSON's one value, with the same interval and ``n=``;
- the brief answers in at most 25 lines of 80 columns: the verdict, the plan, the deciding
  evidence and the data-quality findings, each as the JSON has it, with a teacher and per
  ``--by`` slice too, on pools drawn with many findings at once;
- the ``Needs:`` line is the requirement's plain phrases (``k=4 rollouts per task; 30
  tasks``), the same in ``-v`` and Markdown;
- text and Markdown carry the same verdict, qualifiers and numbers;
- ``--strict`` changes the exit code and its reasons only, never a status word;
- ``route --teacher``'s paired difference and the two pass@1 are ``diff``'s, and the
  held-out size the route prints is ``size``'s at the pool's pass@1 and k;
- ``--quiet`` with ``--by`` keeps ``--show``;
- ``config --from`` keeps the verdict with its qualifiers (provisional, the Async plan,
  what reading found) in the TOML's header and on stdout.
"""

from __future__ import annotations

import dataclasses
import json
import re
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.route.model import Rate, requirements
from whilecli.route.render_text import PROVISIONAL_SHORT
from whilecli.route.simulate import TEACHER, Truth, _rows_frame, draw_sides

ENV = {"COLUMNS": "80", "NO_COLOR": "1"}
#: A rate as every report prints it: value, interval, ``n=`` with its unit.
RATE = re.compile(
    r"[-+]?\d\.\d\d (?:\[[-+]?\d\.\d\d, [-+]?\d\.\d\d\]|\[no interval\]) "
    r"n=\d+ (?:(?:[a-z]+ )?[a-z]+ \(\d+ rows?\)|rows?)"
)
#: "About 98 tasks would make it firm", "about 98 tasks would make it firm".
FIRM = re.compile(r"(?i)about (\d+) tasks would make it firm")
#: The whole-pool pass@1 wherever a report labels it so (not a teacher's, a student's on
#: shared tasks, or the grouped tasks').
PASS_AT_1 = re.compile(r"(?:^|\n|<br>)[ -]*pass@1:? (" + RATE.pattern + ")")


@st.composite
def truths(draw: st.DrawFn) -> Truth:
    mixture = draw(
        st.sampled_from(["floor", "near-floor", "low", "mid", "u-shaped", "apart", "high",
                         "saturated"])
    )  # fmt: skip
    k = draw(st.sampled_from([1, 2, 4, 8]))
    k_mix: tuple[tuple[int, float], ...] = ()
    if draw(st.integers(0, 4)) == 0:
        k_mix = ((k if k > 1 else 4, 0.7), (1, 0.3))
    cut = draw(st.sampled_from([0.0, 0.0, 0.1, 0.3]))
    return Truth(
        mixture,
        k,
        draw(st.integers(3, 80)),
        cut_share=cut,
        cut_passes=bool(cut) and draw(st.booleans()),
        teacher_gap=draw(st.sampled_from([None, None, 0.03, 0.3])),
        stale_share=draw(st.sampled_from([0.0, 0.0, 0.3])),
        k_mix=k_mix,
        error_share=draw(st.sampled_from([0.0, 0.0, 0.1])),
    )


def write_pool(truth: Truth, seed: int, folder: Path) -> tuple[Path, Path | None]:
    """The student's rows (and the teacher's) as JSON Lines, as the calibration writes them."""
    rng = np.random.default_rng(seed)
    student, teacher = draw_sides(truth, rng)
    rows = folder / "rows.jsonl"
    _rows_frame(student, truth, truth.model, rng).write_ndjson(rows)
    if teacher is None:
        return rows, None
    path = folder / "teacher.jsonl"
    plain = dataclasses.replace(truth, partial_share=0.0, stale_share=0.0, error_share=0.0)
    _rows_frame(teacher, plain, TEACHER, rng).write_ndjson(path)
    return rows, path


def run(*args: str, slices: bool = False) -> tuple[int, str]:
    """A command's exit code and output: 0 or 1, or under ``--by`` (``slices``) 2 where a
    slice its rows alone refuse is named beside the slices that route."""
    result = CliRunner().invoke(app, list(args), env=ENV)
    refused = slices and result.exit_code == 2 and "(--by " in result.output
    assert result.exit_code in (0, 1) or refused, (args, result.output, result.exception)
    return result.exit_code, result.stdout


def flat(text: str) -> str:
    """The words of a report, however its lines were wrapped."""
    return " ".join(text.split())


def rate_text(value: dict[str, Any]) -> str:
    return Rate(**value).format()


def reports(rows: Path, teacher: Path | None, model: str) -> dict[str, Any]:
    args = [str(rows), "--model", model]
    if teacher is not None:
        args += ["--teacher", str(teacher)]
    out: dict[str, Any] = {}
    out["code"], raw = run("route", *args, "--format", "json")
    out["json"] = json.loads(raw)
    _, out["brief"] = run("route", *args)
    _, out["verbose"] = run("route", *args, "-v")
    _, out["markdown"] = run("route", *args, "--format", "markdown")
    out["strict_code"], strict = run("route", *args, "--format", "json", "--strict")
    out["strict"] = json.loads(strict)
    _, out["check"] = run("check", *args, "--fail-on", "few-split", "--format", "json")
    if teacher is not None:
        _, diff = run("diff", str(rows), str(teacher), "--format", "json")
        out["diff"] = json.loads(diff)
    return out


def assert_size_agrees(r: dict[str, Any]) -> None:
    """The held-out size the route prints is ``size``'s at the same base and k."""
    held = r["json"]["before_gpu"]["holdout"]
    _, raw = run("size", "--base", repr(held["base"]), "--k", str(held["k"]), "--format", "json")
    sized = json.loads(raw)["holdout"]
    assert sized["n"] == held["n"] and sized["half_width"] == held["half_width"], (sized, held)
    assert f"hold out {held['n']} tasks (k={held['k']})" in flat(r["verbose"]).lower()


def assert_diff_agrees(r: dict[str, Any]) -> None:
    """``route --teacher``'s paired difference and the student's pass@1 on the shared tasks
    are ``diff``'s, value, interval and n alike."""
    if "diff" not in r:
        return
    teacher = next(c for c in r["json"]["checks"] if c["key"] == "teacher")["measured"]
    if "paired_difference" in teacher:
        assert teacher["paired_difference"] == r["diff"]["difference"]
        assert teacher["student_pass_at_1"] == r["diff"]["before"]
        assert teacher["teacher_pass_at_1"] == r["diff"]["after"]


def assert_one_requirement(r: dict[str, Any]) -> None:
    """Every "would make it firm" count is the requirement, in every form."""
    report = r["json"]
    needs = report["needs"]
    for form in ("brief", "verbose", "markdown"):
        for count in FIRM.findall(flat(r[form])):
            assert int(count) == needs.get("tasks") == report["firm_at"], (form, count, needs)
    # the Needs line is the requirement's plain phrases, each apart (never "k: 4; tasks: 30")
    said = "; ".join(requirements(needs, report["route"]))
    brief = flat(r["brief"])
    if needs and "Needs:" in brief:  # the brief may leave it to -v when its lines run out
        assert f"Needs: {said}" in brief, (said, brief)
    for item in requirements(needs, report["route"]):
        assert f"- {flat(item)}" in flat(r["markdown"]) and flat(item) in flat(r["verbose"])
    assert not re.search(r"Needs: (?:\w+: )", brief), brief
    if "tasks" in needs:
        assert str(needs["tasks"]) in said
    raised = re.search(r"k=(\d+) rollouts per task (?:and about \d+ tasks )?would make it firm",
                       report["provisional_why"] or "")  # fmt: skip
    if raised:  # more draws per task make firm only a verdict split tasks decide
        assert report["route"] in ("grpo", "no-split"), report["provisional_why"]
        assert int(raised.group(1)) == needs["k"], (raised.group(0), needs)
    if report["provisional"] and report["firm_at"] is not None:
        assert report["firm_at"] == needs.get("tasks", report["firm_at"]), report
        words = flat(report["provisional_why"])
        assert f"{needs.get('tasks', report['firm_at'])} tasks would make it firm" in words
    gate = json.loads(r["check"])["policies"]["results"][0]
    if gate["failed"] and report["route"] in ("grpo", "no-split") and "tasks" in needs:
        assert f"and {needs['tasks']} tasks" in gate["reason"] or gate["reason"].endswith(
            f"need {needs['tasks']} tasks"
        ), (gate, needs)


def assert_one_rounding(r: dict[str, Any]) -> None:
    """The pool's pass@1 prints as the JSON's one value wherever it is labelled so; each
    deciding interval as the JSON's; the -v text and Markdown print the same rates."""
    report = r["json"]
    p1 = rate_text(report["summary"]["pass_at_1"])
    for form in ("brief", "verbose", "markdown"):
        seen = set(PASS_AT_1.findall(r[form]))
        assert seen <= {p1}, (form, seen, p1)
    for ev in report["evidence"]:
        if ev["interval"] is not None:
            assert rate_text(ev["interval"]) in r["brief"], ev
    # a rate wrapped across two lines of -v is still one rate
    verbose = set(RATE.findall(flat(r["verbose"])))
    markdown = set(RATE.findall(flat(r["markdown"])))
    assert verbose == markdown, verbose ^ markdown


def assert_same_verdict(r: dict[str, Any]) -> None:
    """The brief, -v and Markdown open with the JSON's verdict and carry its qualifiers."""
    report = r["json"]
    head = flat(r["brief"].split("\n")[0] + " " + r["brief"].split("\n")[1])
    method = report["headline"].split(" (route: ")[0]
    assert head.startswith(f"whilecli route: {method}"), (head, report["headline"])
    md_head = r["markdown"].splitlines()[0]
    assert md_head == f"## whilecli route: {method}", md_head
    reason = report["headline"].split(" (route: ", 1)[1][:-1]
    for form in ("brief", "verbose", "markdown"):
        text = flat(r[form])
        assert reason in text, (form, reason)
        if report["provisional_why"]:  # in full, or in a few words when the brief is short
            short = form == "brief" and PROVISIONAL_SHORT in text
            assert short or flat(report["provisional_why"]) in text, form
        for step in report["plan"]:
            assert step in text, (form, step)
        for finding in report["data_quality"]:
            assert flat(finding["found"]).split(" (first:")[0] in text, (form, finding)


def assert_brief(r: dict[str, Any]) -> None:
    """At most 25 lines of 80 columns, the answer first."""
    lines = r["brief"].rstrip("\n").split("\n")
    assert len(lines) <= 25, r["brief"]
    # a word longer than a line (a path) is kept whole, alone on its line
    assert all(len(line) <= 80 or " " not in line.strip() for line in lines), r["brief"]
    text = flat(r["brief"])
    assert "Evidence:" in text and "Data quality" in text
    if r["json"]["plan"]:
        assert "Plan: 1. " in text


def assert_strict_is_the_exit_code_only(r: dict[str, Any]) -> None:
    plain, strict = r["json"], r["strict"]
    for key in ("route", "method", "plan", "provisional", "provisional_why", "firm_at", "needs",
                "evidence", "data_quality", "headline", "warnings"):  # fmt: skip
        assert plain[key] == strict[key], key
    assert [c["status"] for c in plain["checks"]] == [c["status"] for c in strict["checks"]]
    assert [c["why"] for c in plain["checks"]] == [c["why"] for c in strict["checks"]]
    assert r["strict_code"] == strict["exit_code"] >= r["code"]
    if strict["exit_code"] > plain["exit_code"]:
        assert any(x.startswith("--strict: ") for x in strict["exit_reasons"])


@given(truth=truths(), seed=st.integers(0, 2**16))
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_every_form_gives_one_answer(truth: Truth, seed: int, tmp_path: Path) -> None:
    folder = tmp_path / f"pool{seed}"
    folder.mkdir(exist_ok=True)
    rows, teacher = write_pool(truth, seed, folder)
    r = reports(rows, teacher, f"{truth.model}@7")
    label = truth.label()
    for check in (
        assert_one_requirement,
        assert_one_rounding,
        assert_same_verdict,
        assert_brief,
        assert_strict_is_the_exit_code_only,
        assert_diff_agrees,
        assert_size_agrees,
    ):
        try:
            check(r)
        except AssertionError as err:
            raise AssertionError(f"{check.__name__} on {label}:\n{r['brief']}\n{err}") from err


@pytest.mark.parametrize(
    "truth",
    [
        Truth("low", 4, 70),  # a thin band: k=6 and more tasks
        Truth("mid", 4, 30),  # fewer than 30 split tasks at a split share past 0.3
        Truth("mid", 2, 12, teacher_gap=0.3),  # a teacher on few shared tasks
        Truth("floor", 4, 12),
        Truth("mid", 1, 20),  # single tasks: the k = 4 advised is another route's
    ],
    ids=lambda t: t.label(),
)
def test_the_thin_pools_give_one_requirement(truth: Truth, tmp_path: Path) -> None:
    """The neighbours of "About 47 tasks would make it firm" beside "Needs: tasks: 50"."""
    rows, teacher = write_pool(truth, 3, tmp_path)
    r = reports(rows, teacher, f"{truth.model}@7")
    assert r["json"]["provisional"]
    assert_one_requirement(r)
    assert_same_verdict(r)


@given(truth=truths(), seed=st.integers(0, 2**16))
@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_quiet_by_keeps_show(truth: Truth, seed: int, tmp_path: Path) -> None:
    folder = tmp_path / f"pool{seed}"
    folder.mkdir(exist_ok=True)
    rows, _ = write_pool(truth, seed, folder)
    args = [str(rows), "--by", "model", "--show", "floor,split,singles", "--limit", "2"]
    first = CliRunner().invoke(app, ["route", *args, "--quiet"], env=ENV)
    again = CliRunner().invoke(app, ["route", *args, "--format", "json"], env=ENV)
    assert first.exit_code == again.exit_code and first.stderr == again.stderr
    if first.exit_code == 2 and not again.stdout:  # the input as a whole refused
        assert first.stderr.startswith("whilecli: error: ") and not first.stdout
        return
    quiet, report = first.stdout, json.loads(again.stdout)
    assert first.exit_code == report["exit_code"]
    for piece in report["slices"]:
        if "refused" in piece:  # a slice its rows alone refuse: said on stderr as well
            assert f"{piece['slice']}): refused: {piece['refused']}" in quiet
            assert f"{piece['refused']} (--by model: {piece['slice']})" in first.stderr
            continue
        assert f"{piece['slice']}): {piece['headline']}" in quiet
        for entry in piece.get("show", {}).values():
            for item in entry["shown"]:
                assert item["task_id"] in quiet, quiet
    assert "grader unknown" not in quiet  # the read's grader holds for every slice


@given(truth=truths(), seed=st.integers(0, 2**16))
@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_config_from_keeps_the_verdicts_qualifiers(truth: Truth, seed: int, tmp_path: Path) -> None:
    folder = tmp_path / f"pool{seed}"
    folder.mkdir(exist_ok=True)
    truth = dataclasses.replace(truth, teacher_gap=None)
    rows, _ = write_pool(truth, seed, folder)
    model = f"{truth.model}@7"
    _, raw = run("route", str(rows), "--model", model, "--format", "json")
    report = json.loads(raw)
    out = folder / "rl.toml"
    result = CliRunner().invoke(
        app, ["config", "--from", str(rows), "--model", model, "-o", str(out), "--force"], env=ENV
    )
    if result.exit_code == 1:  # nothing to write: it says the verdict why
        assert report["route"] == "fix-reward" or report["method"] in ("groupwise", "dpo")
        return
    assert result.exit_code == 0, result.output
    toml = out.read_text()
    tomllib.loads(toml)
    header = flat(" ".join(line.lstrip("#") for line in toml.splitlines() if line.startswith("#")))
    for where, text in (("header", header), ("stdout", flat(result.stdout))):
        assert flat(report["headline"]) in text, where
        if report["provisional"]:
            assert "provisional" in text, where
            why = flat(report["provisional_why"]).removeprefix("provisional: ").rstrip(".")
            assert why in text, where
        if "async" in report["plan"] and report["route"] != "off-policy":
            assert "--async" in text, where
        for finding in report["data_quality"]:
            assert flat(finding["found"]) in text, where


@st.composite
def crowded(draw: st.DrawFn) -> Truth:
    """A pool with many findings at once: cut-off replies that pass or earn partial credit,
    error replies, ids one per row on a share of the tasks, identical draws, an older copy's
    rows, mixed k, and a teacher with errors, cut-off replies and per-row ids of its own."""
    base = draw(truths())
    gap = draw(st.sampled_from([None, 0.3]))
    return dataclasses.replace(
        base,
        tasks=draw(st.integers(12, 120)),
        cut_share=draw(st.sampled_from([0.0, 0.2, 0.4])),
        cut_passes=draw(st.booleans()),
        stale_share=draw(st.sampled_from([0.0, 0.3])),
        error_share=draw(st.sampled_from([0.0, 0.1, 0.2])),
        partial_share=draw(st.sampled_from([0.0, 0.3])),
        row_id_share=draw(st.sampled_from([0.0, 0.3])),
        greedy=draw(st.integers(0, 5)) == 0,
        teacher_gap=gap,
        teacher_coverage=draw(st.sampled_from([1.0, 0.6])) if gap else 1.0,
        teacher_cut_share=draw(st.sampled_from([0.0, 0.1])) if gap else 0.0,
        teacher_error_share=draw(st.sampled_from([0.0, 0.1])) if gap else 0.0,
        teacher_row_ids=draw(st.booleans()) if gap else False,
    )


def assert_fits(text: str, who: str) -> None:
    """Each brief (one per slice under --by) answers in at most 25 lines of 80 columns."""
    blocks = re.split(r"\n(?=── )", text.rstrip("\n"))
    if len(blocks) > 1:  # --by: a table of the slices, then one brief per slice
        blocks = [b.split("\n", 1)[1] for b in blocks[1:]]
    for block in blocks:
        lines = block.strip("\n").split("\n")
        assert len(lines) <= 25, (who, len(lines), block)
        assert all(len(line) <= 80 or " " not in line.strip() for line in lines), (who, block)


@given(truth=crowded(), seed=st.integers(0, 2**16))
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_the_brief_fits_with_many_findings(truth: Truth, seed: int, tmp_path: Path) -> None:
    """The default report of a pool with many findings, with a teacher and under --by,
    still answers in 25 lines of 80 columns."""
    folder = tmp_path / f"pool{seed}"
    folder.mkdir(exist_ok=True)
    rows, teacher = write_pool(truth, seed, folder)
    args = [str(rows), "--model", f"{truth.model}@7", "--pass-threshold", "1"]
    if teacher is not None:
        _, brief = run("route", *args, "--teacher", str(teacher))
        assert_fits(brief, f"teacher {truth.label()}")
    _, brief = run("route", *args)
    assert_fits(brief, truth.label())
    _, by = run("route", *args, "--by", "model", slices=True)
    assert_fits(by, f"--by {truth.label()}")
