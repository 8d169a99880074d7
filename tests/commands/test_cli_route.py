"""``whilecli route`` end to end: every example routes to its verdict, every format, exit codes.

The JSON reports are checked against the tables of ``docs/json-schema.md``: every key a
report carries must be documented there with a matching type, every required key present.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLES, ROOT
from whilecli.cli import app

STUDENT = "Qwen/Qwen3-0.6B"
VOCAB = ["--teacher-vocab", "151936", "--student-vocab", "151936"]
SCHEMA_DOC = ROOT / "docs" / "json-schema.md"


def ex(name: str) -> str:
    return str(EXAMPLES / name)


def invoke(*args: str, input: bytes | str | None = None, env: dict | None = None):
    return CliRunner().invoke(app, ["route", *args], input=input, env=env)


def route_json(*args: str, input: bytes | str | None = None) -> tuple[int, dict]:
    result = invoke(*args, "--format", "json", input=input)
    return result.exit_code, json.loads(result.stdout)


# (arguments, route, method, exit code): every outcome of the route table
CASES: list[tuple[list[str], str, str | None, int]] = [
    (["mixed.parquet", "--model", STUDENT], "grpo", "grpo", 0),
    (["mixed.jsonl", "--model", STUDENT], "grpo", "grpo", 0),
    (["floor.parquet", "--size-b", "8"], "floor", "opsd", 0),
    (["floor.jsonl", "--size-b", "0.6"], "floor", "sft", 0),
    (["saturated.parquet"], "saturated", "groupwise", 0),
    (["saturated.jsonl"], "saturated", "groupwise", 0),
    (["single.parquet"], "single-rollout", "flash_reinforce", 0),
    (["single.jsonl"], "single-rollout", "flash_reinforce", 0),
    (["truncated_passes.parquet"], "fix-reward", None, 1),
    (["truncated_passes.jsonl"], "fix-reward", None, 1),
    (["other_model.parquet", "--model", STUDENT], "off-policy", "sft", 0),
    (["other_model.jsonl", "--model", STUDENT], "off-policy", "sft", 0),
    (
        ["student.parquet", "--teacher", ex("teacher.parquet"), "--model", STUDENT, *VOCAB],
        "teacher",
        "opd",
        0,
    ),
    (["student.jsonl", "--teacher", ex("teacher.jsonl"), "--model", STUDENT], "teacher", "opd", 0),
]


@pytest.mark.parametrize(("args", "route", "method", "code"), CASES)
def test_every_example_routes_to_its_verdict(
    args: list[str], route: str, method: str | None, code: int
) -> None:
    exit_code, report = route_json(ex(args[0]), *args[1:])
    assert (report["route"], report["method"], exit_code) == (route, method, code)
    assert report["exit_code"] == code
    assert [c["key"] for c in report["checks"]] == [
        "truncated_passes",
        "rollouts_per_task",
        "band",
        "teacher",
        "tokenizer",
        "on_policy",
    ]


def _statuses(report: dict) -> dict[str, str]:
    return {c["key"]: c["status"] for c in report["checks"]}


def test_statuses_of_the_teacher_pair_and_strict() -> None:
    _, checked = route_json(
        ex("student.parquet"), "--teacher", ex("teacher.parquet"), "--model", STUDENT, *VOCAB
    )
    assert _statuses(checked) == dict.fromkeys(
        ["truncated_passes", "rollouts_per_task", "band", "teacher", "tokenizer", "on_policy"],
        "pass",
    )
    code, unchecked = route_json(
        ex("student.parquet"), "--teacher", ex("teacher.parquet"), "--model", STUDENT
    )
    assert code == 0 and _statuses(unchecked)["tokenizer"] == "unknown"
    assert "tokenizer" in unchecked["needs"]
    code, strict = route_json(
        ex("student.parquet"), "--teacher", ex("teacher.parquet"), "--model", STUDENT, "--strict"
    )
    assert code == 1 and strict["exit_code"] == 1 and strict["method"] == "opd"
    # a different vocabulary (Llama 3's beside Qwen's) refuses OPD; the student's own rows
    # then route to grpo
    code, refused = route_json(
        ex("student.parquet"),
        "--teacher",
        ex("teacher.parquet"),
        "--model",
        STUDENT,
        "--teacher-vocab",
        "128256",
        "--student-vocab",
        "151936",
    )
    assert code == 0 and refused["route"] == "grpo"
    assert _statuses(refused)["tokenizer"] == "fail"
    assert not {m["name"]: m["ok"] for m in refused["methods"]}["opd"]
    # sizes apart only by an embedding's padding (Qwen2.5-7B's 152064 beside Qwen2.5-1.5B's
    # 151936, one tokenizer) cannot tell: unknown, never a refusal
    code, padded = route_json(
        ex("student.parquet"), "--teacher", ex("teacher.parquet"), "--model", STUDENT,
        "--teacher-vocab", "152064", "--student-vocab", "151936",
    )  # fmt: skip
    assert code == 0 and padded["method"] == "opd"
    assert _statuses(padded)["tokenizer"] == "unknown"


def test_no_model_is_unknown_and_strict_exits_1() -> None:
    code, report = route_json(ex("mixed.parquet"))
    assert code == 0 and report["method"] == "grpo"
    assert _statuses(report)["on_policy"] == "unknown"
    assert report["warnings"]
    code, report = route_json(ex("mixed.parquet"), "--strict")
    assert code == 1 and report["exit_code"] == 1


def test_stdin_reads_the_same_rows_as_the_file() -> None:
    _, from_file = route_json(ex("mixed.jsonl"), "--model", STUDENT)
    for name in ("mixed.jsonl", "mixed.parquet"):
        code, from_stdin = route_json("-", "--model", STUDENT, input=(EXAMPLES / name).read_bytes())
        assert code == 0
        assert from_stdin["summary"] == from_file["summary"]
        assert from_stdin["checks"] == from_file["checks"]
        assert from_stdin["inputs"]["paths"] == ["<stdin>"]


def test_text_report_is_deterministic_and_verdict_first() -> None:
    first = invoke(ex("mixed.parquet"), "--model", STUDENT, "-v")
    second = invoke(ex("mixed.parquet"), "--model", STUDENT, "--verbose")
    assert first.exit_code == 0 and first.stdout == second.stdout
    lines = first.stdout.splitlines()
    assert lines[0].startswith("whilecli route: GRPO")
    assert max(len(line) for line in lines) <= 100
    assert "\x1b[" not in first.stdout
    for heading in ("Evidence", "Data quality", "Checks", "Methods", "Pass rates"):
        assert heading in lines
    assert lines.index("Data quality") < lines.index("Checks")
    for heading in ("Before the GPU", "Sources"):
        assert heading in lines
    brief = invoke(ex("mixed.parquet"), "--model", STUDENT).stdout.splitlines()
    assert brief[0] == lines[0] and "Methods" not in brief and len(brief) <= 25


def test_markdown_report() -> None:
    result = invoke(ex("truncated_passes.parquet"), "--format", "markdown")
    assert result.exit_code == 1
    md = result.stdout
    assert md.startswith("## whilecli route: nothing can train yet\n")
    assert "(`fix-reward`), exit code 1" in md
    assert "| 1 | Can a cut-off reply pass? | fail → `fix-reward` |" in md
    report = route_json(ex("truncated_passes.parquet"))[1]
    statuses = "pass|fail|unknown|not reached|not asked"
    check_rows = re.findall(rf"^\| \d \| ([^|]+?) \| ({statuses})", md, flags=re.M)
    assert check_rows == [(c["title"], c["status"]) for c in report["checks"]]
    method_rows = re.findall(r"^\| \**(\w+)\** \| (ok|no) \|", md, flags=re.M)
    assert method_rows == [(m["name"], "ok" if m["ok"] else "no") for m in report["methods"]]
    assert "### Methods" in md and "### Before the GPU" in md and "sized from this pool" in md


def test_github_annotations_and_step_summary(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    result = invoke(ex("truncated_passes.parquet"), "--format", "github", env=env)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert all(re.match(r"^::(error|warning|notice)( [^:]*)?::", line) for line in lines)
    path = ex("truncated_passes.parquet")
    assert lines[0].startswith(f"::error file={path},title=whilecli route%3A fix the reward::")
    assert lines[-1].startswith("::notice title=whilecli route::nothing can train yet")
    written = summary.read_text(encoding="utf-8")
    assert written.startswith("earlier step\n## whilecli route: nothing can train yet")
    # other formats leave the summary file alone
    invoke(ex("mixed.parquet"), "--format", "markdown", env=env)
    assert summary.read_text(encoding="utf-8") == written


@pytest.mark.parametrize(
    ("args", "stdin", "says"),
    [
        (["missing.parquet"], None, "missing.parquet"),
        (["-"], b'{"task_id": "a", "reward": 1}\n{"task_id": "a", "reward": \n', "<stdin>:2"),
        (["-"], b"", "stdin"),
        (["-"], b'{"task_id": "a", "reward": "x"}\n', "reward"),
        (["MIXED", "--map", "nonsense"], None, "--map"),
        (["MIXED", "--size-b", "-1"], None, "--size-b"),
        (["MIXED", "--pass-threshold", "nan"], None, "--pass-threshold"),
        (["MIXED", "--teacher-vocab", "0"], None, "--teacher-vocab"),
        (["-", "--teacher", "-"], b"", "stdin"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], stdin: bytes | None, says: str) -> None:
    args = [ex("mixed.parquet") if a == "MIXED" else a for a in args]
    if args[0] == "missing.parquet":
        args[0] = str(EXAMPLES / "missing.parquet")
    result = invoke(*args, input=stdin)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    err = result.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("whilecli: error: ")
    assert says in err[0]
    assert "Traceback" not in result.output


def test_unknown_format_is_a_usage_error() -> None:
    result = invoke(ex("mixed.parquet"), "--format", "yaml")
    assert result.exit_code == 2
    assert "Traceback" not in result.output


# ------------------------------------------------------------------ the documented schema


def _tables(doc: str) -> dict[str, dict[str, tuple[str, bool]]]:
    """``{section heading: {key: (type, required)}}`` from the doc's four-column tables."""
    tables: dict[str, dict[str, tuple[str, bool]]] = {}
    heading = ""
    for line in doc.splitlines():
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        m = re.match(r"^\| `([^`]+)` \| ([^|]+) \| (yes|optional) \|", line)
        if m:
            tables.setdefault(heading, {})[m.group(1)] = (m.group(2).strip(), m.group(3) == "yes")
    return tables


SCHEMA = _tables(SCHEMA_DOC.read_text(encoding="utf-8"))
RATE_KEYS = set(SCHEMA["Rate"])


def _is(value: Any, type_: str) -> bool:
    checks = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "null": lambda v: v is None,
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "Rate": lambda v: isinstance(v, dict) and _conforms(v, "Rate") == [],
    }
    return any(checks[t.strip()](value) for t in type_.split(" or "))


def _conforms(obj: dict, section: str) -> list[str]:
    """Problems of ``obj`` against the doc's table ``section`` (empty when it conforms)."""
    table = SCHEMA[section]
    problems = [f"{section}: undocumented key {k!r}" for k in obj if k not in table]
    for key, (type_, required) in table.items():
        if key not in obj:
            if required:
                problems.append(f"{section}: missing required key {key!r}")
        elif not _is(obj[key], type_):
            problems.append(f"{section}: {key!r} = {obj[key]!r} is not {type_}")
    return problems


def schema_problems(report: dict) -> list[str]:
    problems = _conforms(report, "Top level")
    for check in report["checks"]:
        problems += _conforms(check, "Check")
        problems += _conforms(check["measured"], f"measured: {check['key']}")
    for method in report["methods"]:
        problems += _conforms(method, "Method")
    for finding in report["data_quality"]:
        problems += _conforms(finding, "Finding")
    for evidence in report["evidence"]:
        problems += _conforms(evidence, "Evidence")
    problems += _conforms(report["needs"], "Needs")
    problems += _conforms(report["summary"], "Summary")
    problems += _conforms(report["summary"]["histogram"], "Histogram")
    for key in ("pass_at_k", "pass_hat_k"):
        for k, rate in report["summary"][key].items():
            assert k.isdigit()
            problems += _conforms(rate, "Rate")
    problems += _conforms(report["before_gpu"], "Before the GPU")
    problems += _conforms(report["before_gpu"]["holdout"], "Holdout")
    problems += _conforms(report["inputs"], "Inputs")
    for entry in report.get("show", {}).values():
        problems += _conforms(entry, "Show")
        for item in entry["shown"]:
            problems += _conforms(item, "Shown task")
    if "teacher" in report["inputs"]:
        problems += _conforms(report["inputs"]["teacher"], "Inputs")
    return problems


def test_schema_doc_has_every_table() -> None:
    expected = {"Top level", "Check", "Method", "Rate", "Needs", "Summary", "Histogram"}
    expected |= {"Before the GPU", "Holdout", "Inputs"}
    expected |= {f"measured: {k}" for k in ("truncated_passes", "rollouts_per_task", "band")}
    expected |= {f"measured: {k}" for k in ("teacher", "tokenizer", "on_policy")}
    assert expected <= set(SCHEMA)
    rate = {"value", "low", "high", "n_tasks", "n_rows", "interval", "why_no_interval", "unit"}
    assert rate == RATE_KEYS


def test_the_checker_catches_a_wrong_report() -> None:
    _, report = route_json(ex("mixed.parquet"), "--model", STUDENT)
    assert schema_problems(report) == []
    report["route"] = 3
    report["surprise"] = True
    del report["plan"]
    report["summary"]["pass_at_1"]["n_tasks"] = "many"
    problems = schema_problems(report)
    assert any("'route' = 3 is not string" in p for p in problems)
    assert any("undocumented key 'surprise'" in p for p in problems)
    assert any("missing required key 'plan'" in p for p in problems)
    assert any("'pass_at_1'" in p for p in problems)


@pytest.mark.parametrize(("args", "route", "method", "code"), CASES)
def test_json_of_every_example_matches_the_documented_schema(
    args: list[str], route: str, method: str | None, code: int
) -> None:
    _, report = route_json(ex(args[0]), *args[1:])
    assert schema_problems(report) == []
    assert report["schema_version"] == 1
    assert list(report)[:6] == ["schema_version", "route", "method", "why", "plan", "exit_code"]


# ------------------------------------------------------------------ the real console script


def _script() -> str:
    found = shutil.which("whilecli")
    if found is None:
        pytest.skip("the whilecli console script is not on PATH")
    return found


def test_console_script_json_and_exit_codes() -> None:
    script = _script()
    env = {**os.environ, "NO_COLOR": "1"}
    ok = subprocess.run(
        [script, "route", ex("mixed.parquet"), "--model", STUDENT, "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert ok.returncode == 0, ok.stderr
    report = json.loads(ok.stdout)
    assert report["method"] == "grpo" and schema_problems(report) == []
    cut = subprocess.run(
        [script, "route", ex("truncated_passes.jsonl")], capture_output=True, text=True, timeout=60
    )
    assert cut.returncode == 1 and cut.stdout.startswith("whilecli route: nothing can train yet")
    bad = subprocess.run(
        [script, "route", "-"],
        input='{"task_id": "a", "reward": NaN}\n',
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and bad.stdout == ""
    assert len(bad.stderr.strip().splitlines()) == 1
    assert bad.stderr.startswith("whilecli: error: ") and "Traceback" not in bad.stderr


#: Modules a route on a small file never loads: each costs tenths of a second of startup
#: (numpy alone 0.1–0.2 s, more than the rest of whilecli's own modules together).
HEAVY = ("numpy", "torch", "scipy", "pyarrow", "pandas", "transformers")


def _past_the_sample(folder: Path) -> str:
    """JSON Lines past the reader's sample of 1,000 lines (the depth guard and the search
    for late keys read the rest): 3,000 rows, 8 per task, each with a completion."""
    path = folder / "long.jsonl"
    with path.open("w") as out:
        for i in range(3000):
            row = {"task_id": f"t{i // 8}", "reward": float(i % 3 == 0), "completion": f"c{i}"}
            out.write(json.dumps(row) + "\n")
    return str(path)


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("mixed.parquet", "text"),
        ("mixed.jsonl", "json"),
        ("mixed.parquet", "json"),
        ("long.jsonl", "json"),
    ],
)
def test_route_never_imports_heavy_modules(name: str, fmt: str, tmp_path: Path) -> None:
    path = _past_the_sample(tmp_path) if name == "long.jsonl" else ex(name)
    probe = (
        "import sys\n"
        f"heavy = {HEAVY!r}\n"
        "import whilecli.cli\n"
        "assert not [m for m in heavy if m in sys.modules], 'import'\n"
        "from typer.testing import CliRunner\n"
        f"r = CliRunner().invoke(whilecli.cli.app, ['route', {path!r}, '--format', {fmt!r}])\n"
        "assert r.exit_code == 0, r.output\n"
        "assert not [m for m in heavy if m in sys.modules], [m for m in heavy if m in sys.modules]\n"
        f"assert ('rich' in sys.modules) == {fmt == 'text'}, 'rich only renders text'\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


# ------------------------------------------------------------------ the library entry point


def test_run_route_wires_options_and_teacher() -> None:
    import importlib

    import whilecli.route as route_api
    from whilecli.errors import UsageError

    # importing the submodule that holds a stage never hides the stage itself
    module = importlib.import_module("whilecli.route.decide")
    assert route_api.decide is module.decide and callable(route_api.decide)

    assert route_api.read_rows.__module__ == "whilecli.io.read"
    assert route_api.summarize.__module__ == "whilecli.route.pool"
    assert route_api.decide.__module__ == "whilecli.route.decide"
    base = route_api.RouteOptions(model=STUDENT)
    route = route_api.run_route(ex("student.parquet"), options=base, teacher=[ex("teacher.jsonl")])
    assert (route.route, route.method) == ("teacher", "opd")
    assert route.inputs["teacher"]["paths"] == [ex("teacher.jsonl")]
    assert base.teacher is None  # the caller's options are not changed
    strict = route_api.run_route(
        ex("student.parquet"), teacher=ex("teacher.parquet"), options=base, strict=True
    )
    assert strict.exit_code == 1
    two = route_api.run_route(
        [ex("mixed.parquet")], teacher=[ex("teacher.jsonl"), ex("teacher.parquet")], model=STUDENT
    )
    assert len(two.inputs["teacher"]["paths"]) == 2
    with pytest.raises(UsageError, match="unknown route option"):
        route_api.run_route(ex("mixed.parquet"), bogus=1)
    with pytest.raises(UsageError, match="at least one path"):
        route_api.run_route([])


# ------------------------------------------------------------------ real dumps, end to end

REAL = ROOT / "tests" / "data" / "real" / "verifiers"
WIKI = REAL / "wiki_search" / "qwen--qwen3-4b-instruct-2507__e762fd98" / "results.jsonl"
WORDLE = REAL / "wordle" / "gpt-4.1-mini__816ec3b0" / "results.jsonl"


@pytest.mark.skipif(not WIKI.exists() or not WORDLE.exists(), reason="real dumps not copied")
def test_real_vf_eval_dumps_route_or_are_refused_in_one_line() -> None:
    code, wiki = route_json(str(WIKI))
    assert (code, wiki["route"], wiki["summary"]["tasks"], wiki["summary"]["rows"]) == (
        0,
        "single-rollout",
        100,
        100,
    )
    assert wiki["inputs"]["sources"]["model"] == "metadata.json: model"
    assert schema_problems(wiki) == []
    refused = invoke(str(WORDLE))
    assert refused.exit_code == 2 and refused.stdout == ""
    err = refused.stderr.strip().splitlines()
    assert len(err) == 1 and "--pass-threshold" in err[0] and "field 'reward'" in err[0]
    code, mapped = route_json(str(WORDLE), "--map", "reward=check_answer_reward_func")
    assert code == 0 and mapped["summary"]["tasks"] == 5 and mapped["summary"]["rows"] == 15
    assert mapped["inputs"]["sources"]["reward"].startswith("check_answer_reward_func")


# ------------------------------------------------------------------ --show and --limit


def test_show_lists_the_tasks_behind_each_count_in_every_format(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(EXAMPLES)  # the file's name, not the checkout's path: a line of fixed width
    rows = "truncated_passes.jsonl"
    lines = Path(rows).read_text(encoding="utf-8").splitlines()
    first: dict[str, int] = {}  # by hand: each task's first truncated passing line
    cut: set[str] = set()
    for lineno, line in enumerate(lines, 1):
        row = json.loads(line)
        if row.get("truncated") and row["reward"] >= 1:
            cut.add(row["task_id"])
            first.setdefault(row["task_id"], lineno)
    expected = sorted(cut, key=lambda t: first[t])
    code, report = route_json(rows, "--show", "truncated-passes", "--limit", "3")
    assert code == 1 and schema_problems(report) == []
    entry = report["show"]["truncated_passes"]
    assert entry["count"] == len(cut) and entry["left_out"] == len(cut) - 3
    assert [i["task_id"] for i in entry["shown"]] == expected[:3]
    assert [i["line"] for i in entry["shown"]] == [first[t] for t in expected[:3]]
    assert all(i["file"] == rows and i["row"] is None for i in entry["shown"])
    text = invoke(rows, "--show", "truncated-passes", "--limit", "3").stdout
    assert f"{len(cut)} tasks with a truncated pass (3 listed, {len(cut) - 3} left out" in text
    flat = " ".join(text.split())  # the same at any width
    assert f"{expected[0]}: {rows} line {first[expected[0]]} (4 rows, 3 passing)" in flat
    md = invoke(rows, "--show", "truncated-passes", "--format", "markdown").stdout
    assert "### Tasks behind the counts" in md and f"- {expected[0]}: {rows} line" in md
    gh = invoke(rows, "--show", "truncated-passes", "--format", "github").stdout
    assert f"::notice file={rows},line={first[expected[0]]},title=" in gh
    quiet = invoke(rows, "--show", "truncated-passes", "--quiet", "--limit", "3").stdout
    assert quiet.splitlines()[0].startswith("whilecli route: nothing can train yet")
    assert "Checks" not in quiet and "Evidence:" not in quiet  # the headline, then the lists
    assert f"{expected[0]}: {rows} line {first[expected[0]]}" in " ".join(quiet.split())


def test_show_is_repeatable_and_bounded_by_limit_on_parquet() -> None:
    import polars as pl

    rows = ex("mixed.parquet")
    frame = pl.read_parquet(rows).with_row_index("at")
    by_task = frame.group_by("task_id").agg(
        pl.col("at").min(), pl.len().alias("n"), (pl.col("reward") >= 1).sum().alias("p")
    )
    floor = by_task.filter(pl.col("p") == 0).sort("at")
    code, report = route_json(rows, "--show", "floor", "--show", "split,saturated", "--limit", "2")
    assert code == 0 and list(report["show"]) == ["floor", "saturated", "split"]
    got = report["show"]["floor"]
    assert got["count"] == floor.height and got["left_out"] == floor.height - 2
    assert [(i["task_id"], i["row"]) for i in got["shown"]] == floor.head(2).select(
        "task_id", "at"
    ).rows()
    assert all(i["line"] is None for i in got["shown"])
    split = report["show"]["split"]
    assert split["count"] == by_task.filter((pl.col("p") > 0) & (pl.col("p") < pl.col("n"))).height
    assert len(split["shown"]) == 2
    _, plain = route_json(rows)
    assert "show" not in plain  # only when asked


def test_show_in_check_and_bad_values_are_usage_errors() -> None:
    result = CliRunner().invoke(
        app, ["check", ex("truncated_passes.jsonl"), "--show", "floor", "--limit", "1"]
    )
    assert result.exit_code == 1
    assert "grouped tasks at 0 (1 listed" in result.stdout
    for args in (["--show", "everything"], ["--show", "floor", "--limit", "0"]):
        bad = invoke(ex("mixed.parquet"), *args)
        assert bad.exit_code == 2 and bad.stdout == ""
        err = bad.stderr.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("whilecli: error: ")


def test_grammar_for_one() -> None:
    rows = "".join(
        json.dumps({"task_id": t, "reward": r, "model": STUDENT}) + "\n"
        for t, r in (("a", 1.0), ("a", 0.0), ("b", 1.0))
    )
    text = invoke("-", "--show", "split", "--show", "singles", input=rows).stdout
    assert "1 split task:" in text and "1 single task:" in text
    assert "- a: <stdin> line 1 (2 rows, 1 passing)" in text
    assert "- b: <stdin> line 3 (1 row, 1 passing)" in text
    assert "tasks (1 rows)" not in text and "n=1 tasks" not in text


# ------------------------------------------------------------------ the report at 80 columns


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.parquet")))
def test_no_line_of_the_text_report_is_over_80_columns(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(EXAMPLES)  # files by name: the report's width, not the checkout's path
    args = [name, "--show", "truncated-passes,floor,saturated,split,singles"]
    if name.startswith("student"):
        args += ["--teacher", "teacher.parquet", *VOCAB]
    result = invoke(*args, "--model", STUDENT, env={"COLUMNS": "80"})
    assert result.exit_code in (0, 1), result.output
    long = [line for line in result.stdout.splitlines() if len(line) > 80]
    assert long == []
    assert all(line == line.rstrip() for line in result.stdout.splitlines())
    # a rate is never cut across two lines
    for line in result.stdout.splitlines():
        assert not re.search(r"\[\d\.\d\d,$", line) and not re.search(r"n=\d+$", line)


#: The README's report blocks: a ``text`` fence whose first line is the command.
README_BLOCK = re.compile(
    r"```text\n\$ (COLUMNS=80 whilecli (?:[^\n]*\\\n)*[^\n]*)\n(.*?)```", re.S
)


def readme_reports() -> list[tuple[str, str]]:
    """(command, report) of each report block of README.md."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [(m.group(1), m.group(2)) for m in README_BLOCK.finditer(text)]


def run_readme_command(command: str) -> str:
    """What ``command`` (``COLUMNS=80 whilecli route ...``) prints, run from the repository."""
    import shlex

    words = shlex.split(command.replace("\\\n", " "))
    assert words[:2] == ["COLUMNS=80", "whilecli"]
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        result = CliRunner().invoke(app, words[2:], env={"COLUMNS": "80", "NO_COLOR": "1"})
    finally:
        os.chdir(cwd)
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def regenerate_readme_reports() -> None:
    """Rewrite each report block of README.md with what its command prints now."""
    path = ROOT / "README.md"
    text = path.read_text(encoding="utf-8")
    for m in reversed(list(README_BLOCK.finditer(text))):
        text = text[: m.start(2)] + run_readme_command(m.group(1)) + text[m.end(2) :]
    path.write_text(text, encoding="utf-8")


def test_the_readme_reports_are_what_the_commands_print() -> None:
    """The README's example reports are what their commands print; with
    ``WHILECLI_REGENERATE=1`` this test first rewrites them from the commands' output."""
    if os.environ.get("WHILECLI_REGENERATE") == "1":
        regenerate_readme_reports()
    blocks = readme_reports()
    assert len(blocks) == 2
    assert "mixed.parquet" in blocks[0][0] and "--teacher" in blocks[1][0]
    for command, report in blocks:
        assert run_readme_command(command) == report, command
