"""The report formats of ``whilecli route``, on routes built by hand (no reader, no decision)."""

from __future__ import annotations

import io
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.errors import UsageError
from whilecli.route.model import CheckResult, MethodScore, Rate, Route, Status
from whilecli.route.render_markdown import (
    annotation,
    escape_data,
    escape_property,
    md_cell,
    to_github,
    to_markdown,
)
from whilecli.route.render_text import make_console, render_text, text_to_string
from whilecli.route.report import (
    bar,
    flatten,
    format_value,
    histogram_bins,
    render,
    to_json,
    verdict,
)

ANSI = re.compile(r"\x1b\[")
#: one check at each status (the sixth passes)
EVERY_STATUS = (
    Status.PASS,
    Status.FAIL,
    Status.UNKNOWN,
    Status.NOT_ASKED,
    Status.NOT_REACHED,
    Status.PASS,
)


def rate(value: float, low: float, high: float, tasks: int = 128, rows: int = 512) -> Rate:
    return Rate(value, low, high, tasks, rows, "bootstrap")


def make_route(
    statuses: tuple[Status, ...] = (
        Status.PASS,
        Status.PASS,
        Status.PASS,
        Status.NOT_ASKED,
        Status.NOT_REACHED,
        Status.UNKNOWN,
    ),
    *,
    route: str = "grpo",
    method: str | None = "grpo",
    counts: list[int] | None = None,
    warnings: list[str] | None = None,
) -> Route:
    keys = ("truncated_passes", "rollouts_per_task", "band", "teacher", "tokenizer", "on_policy")
    titles = (
        "Truncated passes",
        "Rollouts per task",
        "Band",
        "Teacher clears",
        "One tokenizer",
        "On-policy",
    )
    checks = [
        CheckResult(
            key,
            title,
            status,
            f"why {key}: 50% | sure",
            measured={"share": rate(0.25, 0.2, 0.3), "count": i, "k": {4: 0.5, 8: 0.75}},
            warnings=[f"check warning {i}"] if status is Status.UNKNOWN else [],
        )
        for i, (key, title, status) in enumerate(zip(keys, titles, statuses, strict=True))
    ]
    methods = [
        MethodScore("grpo", True, "split tasks, on-policy"),
        MethodScore("opd", False, "no --teacher"),
        MethodScore("rm", False, "rarely the answer where a program grades"),
    ]
    counts = counts if counts is not None else [4, 0, 2, 6, 8, 8, 6, 2, 0, 4]
    return Route(
        route=route,
        method=method,
        why="split tasks on the model you train",
        plan=["train grpo", "hold out 367 tasks"],
        checks=checks,
        methods=methods,
        needs={"k": 8},
        summary={
            "pass_at_1": rate(0.42, 0.35, 0.49),
            "pass_at_k": {4: rate(0.7, 0.6, 0.8)},
            "pass_hat_k": {4: rate(0.1, 0.05, 0.15)},
            "tasks": 128,
            "grouped_tasks": 40,
            "histogram": {
                "edges": [i / 10 for i in range(11)],
                "counts": counts,
                "at_0": 3,
                "at_1": 1,
                "population": "grouped tasks",
            },
        },
        before_gpu={
            "holdout_size": {"n": 367, "sd": 0.3419, "half_width": 0.035, "effect": 0.05},
            "random_control": "train a random selection of the same size beside it",
        },
        inputs={
            "paths": ["rows.parquet"],
            "format": "parquet",
            "sources": {"task_id": "example_id", "reward": "reward"},
        },
        notes=["a note"],
        warnings=warnings if warnings is not None else ["a route warning"],
        exit_code=0 if method else 1,
    )


# ---------------------------------------------------------------- shared formatting


def test_format_value_by_type() -> None:
    assert format_value(rate(0.42, 0.35, 0.49)) == "0.42 [0.35, 0.49] n=128 tasks (512 rows)"
    assert format_value(Rate(None, None, None, 2, 4, "none", "fewer than 3 tasks")) == (
        "n/a [no interval] n=2 tasks (4 rows)"
    )
    assert format_value(None) == "n/a"
    assert format_value(float("nan")) == "n/a"
    assert format_value(True) == "yes" and format_value(False) == "no"
    assert format_value(7) == "7" and format_value(3.0) == "3"
    assert format_value(0.123456) == "0.12"  # the rates' 2 decimals
    assert format_value(0.0035) == "0.0035"  # never 0.00 for a value that is not 0
    assert format_value({"a": 1, "b": [1, 2]}) == "a: 1, b: 1, 2"
    assert format_value(Status.NOT_REACHED) == "not reached"


def test_flatten_spreads_rates_and_keeps_plain_maps_on_one_line() -> None:
    pairs = flatten({"pass@k": {4: rate(0.5, 0.4, 0.6)}, "expected": {4: 0.5, 8: 0.7}, "n": 3})
    assert pairs == [
        ("pass@k 4", "0.50 [0.40, 0.60] n=128 tasks (512 rows)"),
        ("expected", "4: 0.50, 8: 0.70"),
        ("n", "3"),
    ]


def test_histogram_bins_split_out_the_exact_ends() -> None:
    # the end bins include the tasks exactly at 0 and at 1; the rows split them out
    assert histogram_bins({"counts": [7, 2, 3, 4], "at_0": 5, "at_1": 1}) == [
        ("0", 5),
        ("(0, 0.25)", 2),
        ("[0.25, 0.5)", 2),
        ("[0.5, 0.75)", 3),
        ("[0.75, 1)", 3),
        ("1", 1),
    ]
    labels = [label for label, _ in histogram_bins({"counts": [0] * 10})]
    assert labels[0] == "[0, 0.1)" and labels[3] == "[0.3, 0.4)" and labels[-1] == "[0.9, 1]"
    assert histogram_bins({"counts": [3, 4], "edges": [0.0, 0.5, 1.0], "at_1": 2}) == [
        ("[0, 0.5)", 3),
        ("[0.5, 1)", 2),
        ("1", 2),
    ]
    assert histogram_bins(None) == [] and histogram_bins({"counts": []}) == []


@st.composite
def histograms(draw: st.DrawFn) -> dict:
    counts = draw(st.lists(st.integers(0, 10_000), min_size=1, max_size=20))
    hist: dict = {"counts": counts}
    if draw(st.booleans()):
        hist["at_0"] = draw(st.integers(0, counts[0]))
    if draw(st.booleans()) and len(counts) > 1:
        hist["at_1"] = draw(st.integers(0, counts[-1]))
    return hist


@given(histograms())
@settings(max_examples=80, deadline=None)
def test_histogram_rows_partition_the_tasks(hist: dict) -> None:
    rows = histogram_bins(hist)
    assert sum(c for _, c in rows) == sum(hist["counts"])
    assert all(c >= 0 for _, c in rows)
    assert len(rows) == len(hist["counts"]) + ("at_0" in hist) + ("at_1" in hist)
    if "at_0" in hist:
        assert rows[0] == ("0", hist["at_0"])
    if "at_1" in hist:
        assert rows[-1] == ("1", hist["at_1"])


@given(st.integers(0, 1000), st.integers(1, 1000))
@settings(max_examples=100, deadline=None)
def test_bar_is_scaled_to_the_biggest(count: int, extra: int) -> None:
    biggest = count + extra
    drawn = len(bar(count, biggest))
    assert len(bar(biggest, biggest)) == 40
    if count == 0:
        assert drawn == 0
    else:
        assert drawn == max(1, round(40 * count / biggest))
        assert 1 <= drawn <= 40


def test_verdict_names_method_and_route() -> None:
    checked = make_route((*EVERY_STATUS[:1], Status.PASS, Status.PASS, *EVERY_STATUS[3:]))
    checked.grader = "program"
    assert verdict(checked) == "GRPO (route: split tasks, on-policy, a program grades)"
    unchecked = make_route()  # on-policy unknown, rows not scanned for a judge
    assert verdict(unchecked) == (
        "GRPO (route: split tasks, on-policy unknown (rows name no model), "
        "grader unknown (rows not scanned))"
    )
    fix = make_route(route="fix-reward", method=None)
    assert verdict(fix) == "nothing can train yet (route: fix the reward: a cut-off reply passes)"


# ---------------------------------------------------------------- text


def test_text_verdict_first_then_sections_in_order() -> None:
    text = text_to_string(make_route(), width=200, verbose=True)
    lines = text.splitlines()
    assert lines[0].startswith("whilecli route: GRPO")
    assert lines[1] == "split tasks on the model you train"
    order = ["Plan:", "Checks", "Methods", "Pass rates", "Needs", "Before the GPU", "Sources"]
    positions = [text.index(word) for word in order + ["\nnote: ", "\nwarning: "]]
    assert positions == sorted(positions)


def test_text_shows_every_check_status_and_measurement() -> None:
    route = make_route(EVERY_STATUS)
    text = text_to_string(route, width=200, verbose=True)
    for check in route.checks:
        assert check.title in text
    for word in ("pass", "fail", "unknown", "not asked", "not reached"):
        assert re.search(rf"\b{word}\b", text)
    assert "share: 0.25 [0.20, 0.30] n=128 tasks (512 rows)" in text
    assert "k 4: 0.50" in text and "k 8: 0.75" in text  # a fraction always with 2 decimals
    assert "warning: check warning 2" in text
    assert "pass@1: 0.42 [0.35, 0.49] n=128 tasks (512 rows)" in text
    assert "pass@4: 0.70 [0.60, 0.80] n=128 tasks (512 rows)" in text
    assert "pass^4: 0.10 [0.05, 0.15] n=128 tasks (512 rows)" in text
    assert "grouped tasks: 40" in text
    assert "holdout_size: n: 367, sd: 0.34, half_width: 0.04, effect: 0.05" in text
    assert "task_id ← example_id" in text
    # a user string with square brackets prints as typed (markup is off)
    assert "[0.35, 0.49]" in text


def test_text_histogram_bars_match_counts() -> None:
    counts = [4, 0, 2, 6, 8, 8, 6, 2, 0, 4]
    text = text_to_string(make_route(counts=counts), verbose=True)
    assert "grouped tasks by pass rate:" in text
    bars = {}
    for line in text.splitlines():
        m = re.match(r"^\s+(0|1|[\[(][\d.]+, [\d.]+[)\]])\s+(\d+)\s*(█*)$", line)
        if m:
            bars[m.group(1)] = (int(m.group(2)), len(m.group(3)))
    labels = ["0", "(0, 0.1)"] + [f"[0.{i}, 0.{i + 1})" for i in range(1, 9)] + ["[0.9, 1)", "1"]
    assert list(bars) == labels
    # the end bins hold 4 tasks each, of which 3 sit exactly at 0 and 1 exactly at 1
    expected_counts = [3, 1, *counts[1:9], 3, 1]
    assert [bars[label][0] for label in labels] == expected_counts
    biggest = max(expected_counts)
    for label, (count, drawn) in bars.items():
        assert drawn == (0 if count == 0 else max(1, round(40 * count / biggest))), label


def test_text_is_deterministic_and_fits_100_columns() -> None:
    a, b = text_to_string(make_route()), text_to_string(make_route())
    assert a == b
    assert max(len(line) for line in a.splitlines()) <= 100
    assert not ANSI.search(a)


def test_console_without_terminal_is_100_wide_and_no_color(monkeypatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    buffer = io.StringIO()
    console = make_console(buffer)
    assert console.width == 100 and console.no_color
    render_text(make_route(), console)
    out = buffer.getvalue()
    assert not ANSI.search(out)
    assert out == text_to_string(make_route())


def test_forced_terminal_colours_only_without_no_color(monkeypatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("TERM", "xterm-256color")
    coloured = Tty()
    render_text(make_route(), make_console(coloured))
    assert ANSI.search(coloured.getvalue())
    monkeypatch.setenv("NO_COLOR", "1")
    plain = Tty()
    render_text(make_route(), make_console(plain))
    assert not re.search(r"\x1b\[[0-9;]*3\dm", plain.getvalue())  # no foreground colour


# ---------------------------------------------------------------- JSON


def test_json_is_to_dict_in_order() -> None:
    route = make_route()
    text = to_json(route)
    assert text.endswith("}\n")
    data = json.loads(text)
    assert data == json.loads(json.dumps(route.to_dict()))
    assert list(data) == list(route.to_dict())
    assert data["checks"][0]["measured"]["share"] == {
        "value": 0.25,
        "low": 0.2,
        "high": 0.3,
        "n_tasks": 128,
        "n_rows": 512,
        "interval": "bootstrap",
        "why_no_interval": None,
        "unit": "tasks",
    }
    assert render(route, "json") == text


def test_render_refuses_unknown_format() -> None:
    with pytest.raises(UsageError, match="unknown --format 'yaml'"):
        render(make_route(), "yaml")


# ---------------------------------------------------------------- Markdown


def test_markdown_heading_and_tables() -> None:
    route = make_route(EVERY_STATUS)
    md = to_markdown(route)
    lines = md.splitlines()
    assert lines[0] == "## whilecli route: GRPO"
    check_rows = [line for line in lines if re.match(r"^\| \d \| [A-Z]", line)]
    assert len(check_rows) == 6
    # every check row has exactly five cells: the why's pipe is escaped
    for row in check_rows:
        cells = re.split(r"(?<!\\)\|", row.strip())[1:-1]
        assert len(cells) == 5
    assert "| 2 | Rollouts per task | fail |" in md
    assert "50% \\| sure" in md
    assert "| **grpo** | ok | split tasks, on-policy |" in md
    assert "| opd | no | no --teacher |" in md
    assert "### Needs" in md and "- k=8 rollouts per task" in md
    assert "### Before the GPU" in md and "- holdout_size: n: 367" in md
    assert "| 4 | Teacher clears | not asked |" in md
    assert "| pass rate | grouped tasks by pass rate |" in md
    assert "| 0 | 3 |" in md and "| [0.9, 1) | 3 |" in md and "| 1 | 1 |" in md
    assert "- pass@4: 0.70 [0.60, 0.80] n=128 tasks (512 rows)" in md
    assert render(route, "markdown") == md


@given(st.text(max_size=40))
@settings(max_examples=100, deadline=None)
def test_md_cell_never_breaks_a_row(text: str) -> None:
    cell = md_cell(text)
    assert "\n" not in cell and "\r" not in cell
    assert re.search(r"(?<!\\)\|", cell.replace("\\\\", "")) is None


# ---------------------------------------------------------------- GitHub annotations


def test_escapes_follow_githubs_rules() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%d\n") == "a%3Ab%2Cc%25d%0A"
    assert annotation("warning", "x: y", file="d/r,1.jsonl", title="t: 1") == (
        "::warning file=d/r%2C1.jsonl,title=t%3A 1::x: y"
    )
    assert annotation("notice", "done") == "::notice::done"


def _unescape(text: str) -> str:
    return (
        text.replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%25", "%")
    )


@given(st.text(max_size=60))
@settings(max_examples=100, deadline=None)
def test_escapes_round_trip(text: str) -> None:
    data = escape_data(text)
    assert "\n" not in data and "\r" not in data
    assert _unescape(data) == text
    prop = escape_property(text)
    assert ":" not in prop and "," not in prop and "\n" not in prop
    assert _unescape(prop) == text


def test_github_levels_per_status() -> None:
    route = make_route(
        (*EVERY_STATUS[:5], Status.FAIL),
        warnings=["w one", "w two"],
    )
    out = to_github(route).splitlines()
    errors = [line for line in out if line.startswith("::error ")]
    warns = [line for line in out if line.startswith("::warning ")]
    notices = [line for line in out if line.startswith("::notice ")]
    assert len(errors) == 2  # the two failed checks
    assert all("file=rows.parquet" in line for line in errors + warns)
    # one unknown check, its own warning, and the two route warnings
    assert len(warns) == 4
    assert len(notices) == 1 and out[-1] == notices[0]
    assert notices[0].startswith("::notice title=whilecli route::GRPO (route: ")
    assert "why rollouts_per_task: 50%25 | sure" in errors[0]
    assert render(route, "github", file="x.jsonl").count("file=x.jsonl") == 6


def test_github_fix_reward_is_an_error() -> None:
    route = make_route(route="fix-reward", method=None, warnings=[])
    out = to_github(route).splitlines()
    assert out[0].startswith("::error file=rows.parquet,title=whilecli route%3A fix the reward::")
    assert out[-1].startswith("::notice title=whilecli route::nothing can train yet")


def test_checks_below_the_decider_show_as_context() -> None:
    route = make_route((*EVERY_STATUS[:5], Status.FAIL))
    route.checks[0].decides = "fix-reward"
    for check in route.checks[1:]:
        check.reached = False
    text = text_to_string(route, width=200, verbose=True)
    assert text.count("(context)") == 4  # not the not-reached one, not the decider
    assert "→ fix-reward" in text
    md = to_markdown(route)
    assert "| 1 | Truncated passes | pass → `fix-reward` |" in md
    assert "| 6 | On-policy | fail (context) |" in md
    assert "| 5 | One tokenizer | not reached |" in md
    out = to_github(route).splitlines()
    # a failure below the decider is context: a warning, not an error
    assert not [line for line in out if line.startswith("::error ")]
    assert any(
        line.startswith("::warning file=rows.parquet,title=whilecli route%3A On-policy::")
        for line in out
    )
