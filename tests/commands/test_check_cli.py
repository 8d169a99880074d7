"""``whilecli check`` and ``whilecli route --fail-on`` end to end, every format, the repository
settings, the judge gate, and the CI example's commands run on the bundled data."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from test_cli_route import SCHEMA, _conforms, schema_problems
from typer.testing import CliRunner

from conftest import EXAMPLES, ROOT
from workflow import workflow

WORKFLOW = ROOT / "examples" / "ci" / "check-eval-dump.yml"
ANNOTATION = re.compile(
    r"^::(error|warning|notice)( file=[^,:]+(,title=[^:]*)?| title=[^:]*)?::(.+)$"
)
STUDENT = "Qwen/Qwen3-0.6B"


def cli_app() -> typer.Typer:
    """The ``while`` app with check, size and diff (registered here when cli.py lacks them)."""
    from whilecli import cli
    from whilecli.cli import app

    known = {c.name for c in app.registered_commands} | set(getattr(cli, "COMMANDS", ()))
    if {"check", "size", "diff"} <= known:
        return app
    from whilecli.commands.check import check_command
    from whilecli.commands.diff import diff_command
    from whilecli.commands.route import route_command
    from whilecli.commands.size import size_command

    local = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

    @local.callback()
    def main() -> None:
        """while"""

    for name, fn in (("route", route_command), ("check", check_command)):
        local.command(name)(fn)
    local.command("size")(size_command)
    local.command("diff")(diff_command)
    return local


APP = cli_app()


def invoke(*args: str, input: bytes | str | None = None, env: dict | None = None):
    return CliRunner().invoke(APP, list(args), input=input, env=env)


def ex(name: str) -> str:
    return str(EXAMPLES / name)


def policies_problems(report: dict) -> list[str]:
    policies = report["policies"]
    problems = _conforms(policies, "Policies")
    for result in policies["results"]:
        problems += _conforms(result, "Policy result")
    if "judge" in policies:
        problems += _conforms(policies["judge"], "Judge scan")
    if policies.get("audit") is not None:
        problems += _conforms(policies["audit"], "Audit")
    return problems


@pytest.fixture(autouse=True)
def _no_repo_settings(tmp_path: Path, monkeypatch) -> None:
    """Run every test in an empty repository: no pyproject or while.toml sets policies."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)


# (file, extra args, policy, holds)
CASES = [
    ("truncated_passes.parquet", [], "truncated-passes", True),
    ("mixed.parquet", [], "truncated-passes", False),
    ("floor.parquet", [], "floor", True),
    ("mixed.jsonl", [], "floor", False),
    ("saturated.parquet", [], "saturated", True),
    ("floor.parquet", [], "saturated", False),
    ("other_model.parquet", ["--model", STUDENT], "off-policy", True),
    ("mixed.parquet", ["--model", STUDENT], "off-policy", False),
    ("single.parquet", [], "few-split", True),
    ("mixed.parquet", [], "few-split", False),
]


@pytest.mark.parametrize(("name", "extra", "policy", "holds"), CASES)
def test_each_policy_exits_1_when_it_holds(
    name: str, extra: list[str], policy: str, holds: bool
) -> None:
    result = invoke("check", ex(name), *extra, "--fail-on", policy)
    assert result.exit_code == (1 if holds else 0), result.output
    lines = result.stdout.splitlines()
    failed = [line for line in lines if line.startswith("failed ")]
    assert len(failed) == (1 if holds else 0)
    if holds:
        assert failed[0].startswith(f"failed {policy}: ")
    assert lines[-1].startswith("whilecli check: ")


def test_unknown_truncation_and_several_policies(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        "".join(json.dumps({"task_id": f"t{i // 2}", "reward": i % 2}) + "\n" for i in range(8))
    )
    result = invoke(
        "check", str(rows), "--fail-on", "unknown-truncation,floor", "--fail-on", "few-split"
    )
    assert result.exit_code == 1
    failed = [
        line.split(":")[0] for line in result.stdout.splitlines() if line.startswith("failed")
    ]
    assert failed == ["failed unknown-truncation", "failed few-split"]
    assert result.stdout.splitlines()[-1] == (
        "whilecli check: 2 of 3 policies failed (unknown-truncation, few-split)"
    )


def test_json_markdown_and_github_formats(tmp_path: Path) -> None:
    args = ["check", ex("floor.parquet"), "--fail-on", "floor,saturated,judge-unaudited"]
    result = invoke(*args, "--format", "json")
    code, report = result.exit_code, json.loads(result.stdout)
    assert code == 1 and report["policies"]["exit_code"] == 1
    assert schema_problems(report) == [] and policies_problems(report) == []
    assert report["policies"]["failed"] == ["floor"]
    assert [r["name"] for r in report["policies"]["results"]] == [
        "floor",
        "saturated",
        "judge-unaudited",
    ]
    assert report["policies"]["judge"]["judged"] == 0 and report["policies"]["audit"] is None

    md = invoke(*args, "--format", "markdown").stdout
    assert md.startswith("## whilecli check: fail\n")
    rows = re.findall(r"^\| `([a-z-]+)` \| (\*\*fail\*\*|ok) \| (.*) \|$", md, flags=re.M)
    assert [(n, r) for n, r, _ in rows] == [
        ("floor", "**fail**"),
        ("saturated", "ok"),
        ("judge-unaudited", "ok"),
    ]
    assert (
        "## whilecli route: provisional: SFT" in md and "### Checks" in md
    )  # the route report follows (0.6B: SFT)

    summary = tmp_path / "summary.md"
    result = invoke(*args, "--format", "github", env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert all(ANNOTATION.match(line) for line in lines), lines
    path = ex("floor.parquet")
    assert lines[0].startswith(
        f"::error file={path},title=whilecli check%3A floor::every grouped task"
    )
    assert lines[-1].startswith(f"::notice file={path}::whilecli check: 1 of 3 policies failed")
    assert summary.read_text(encoding="utf-8") == md + "\n"


def test_route_fail_on_same_semantics(tmp_path: Path) -> None:
    ok = invoke("route", ex("mixed.parquet"), "--model", STUDENT, "--fail-on", "floor")
    assert ok.exit_code == 0 and "whilecli route: ok, no named policy holds (floor)" in ok.stdout
    bad = invoke("route", ex("floor.parquet"), "--fail-on", "floor", "--format", "json")
    report = json.loads(bad.stdout)
    assert bad.exit_code == 1 and report["exit_code"] == 1 and report["policies"]["exit_code"] == 1
    assert schema_problems(report) == [] and policies_problems(report) == []
    plain = json.loads(invoke("route", ex("floor.parquet"), "--format", "json").stdout)
    assert "policies" not in plain
    summary = tmp_path / "s.md"
    gh = invoke("route", ex("floor.parquet"), "--fail-on", "floor", "--format", "github",
                env={"GITHUB_STEP_SUMMARY": str(summary)})  # fmt: skip
    lines = gh.stdout.splitlines()
    assert all(ANNOTATION.match(line) for line in lines)
    assert f"::error file={ex('floor.parquet')},title=whilecli route%3A floor::" in gh.stdout
    assert lines[-1].startswith("::notice title=whilecli route::")
    written = summary.read_text(encoding="utf-8")
    assert written.startswith("## whilecli route: provisional: SFT") and "### Policies" in written
    assert re.search(r"^\| `floor` \| \*\*fail\*\* \|", written, flags=re.M)
    # the route's own exit 1 stays 1 when no policy holds
    assert invoke("route", ex("truncated_passes.parquet"), "--fail-on", "floor").exit_code == 1


def test_default_policies_and_none() -> None:
    result = invoke("check", ex("mixed.parquet"), "--format", "json")
    policies = json.loads(result.stdout)["policies"]
    assert policies["fail_on"] == ["truncated-passes", "judge-unaudited"]
    assert policies["from"] == "default" and result.exit_code == 0
    none = invoke("check", ex("truncated_passes.parquet"), "--fail-on", "none")
    assert none.exit_code == 0 and none.stdout.strip() == "whilecli check: no policy named"


def test_repository_settings(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.while]\nfail-on = ["floor"]\n')
    result = invoke("check", ex("floor.parquet"), "--format", "json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["policies"]["from"] == str(tmp_path / "pyproject.toml")
    assert invoke("check", ex("floor.parquet"), "--fail-on", "saturated").exit_code == 0
    assert invoke("route", ex("floor.parquet")).exit_code == 1  # route reads the file too
    (tmp_path / "while.toml").write_text('fail-on = ["saturated"]\n')
    assert invoke("check", ex("floor.parquet")).exit_code == 0
    (tmp_path / "while.toml").write_text('fail-on = ["nope"]\n')
    bad = invoke("check", ex("floor.parquet"))
    assert bad.exit_code == 2 and "while.toml" in bad.stderr and "Traceback" not in bad.output


@pytest.mark.parametrize("where", ["while.toml", "pyproject.toml"])
@pytest.mark.parametrize("command", ["check", "route"])
def test_an_empty_fail_on_list_is_refused_and_none_gates_nothing(
    tmp_path: Path, where: str, command: str
) -> None:
    """``fail-on = []`` is a slip (as ``--fail-on ''`` is): one line naming the file and the
    key, exit 2, on every command that reads the settings; ``fail-on = ["none"]`` is a gate
    on nothing (check says so and exits 0)."""
    head = "[tool.while]\n" if where == "pyproject.toml" else ""
    (tmp_path / where).write_text(head + "fail-on = []\n")
    bad = invoke(command, ex("floor.parquet"))
    assert bad.exit_code == 2, bad.output
    assert bad.stdout == "" and bad.stderr.count("\n") == 1
    assert where in bad.stderr and "fail-on = []" in bad.stderr
    (tmp_path / where).write_text(head + 'fail-on = ["none"]\n')
    nothing = invoke(command, ex("floor.parquet"), "--format", "json")
    assert nothing.exit_code == 0, nothing.output
    if command == "check":
        assert json.loads(nothing.stdout)["policies"]["fail_on"] == []
        assert invoke("check", ex("floor.parquet")).stdout == "whilecli check: no policy named\n"


JUDGED = "".join(
    json.dumps({"task_id": f"t{i // 4}", "reward": (i * 7) % 3 == 0, "truncated": False,
                "judge_meta": {"scorer_kind": "judge"}}) + "\n"
    for i in range(40)
)  # fmt: skip


def test_judge_gate(tmp_path: Path) -> None:
    rows = tmp_path / "judged.jsonl"
    rows.write_text(JUDGED)
    result = invoke("check", str(rows))
    assert result.exit_code == 1
    assert result.stdout.startswith("failed judge-unaudited: 40 of 40 rows are graded by a judge")
    good, weak = tmp_path / "good.json", tmp_path / "weak.json"
    good.write_text('{"agreement": 0.92, "kappa": 0.75, "n": 250}')
    weak.write_text('{"agreement": 0.86, "kappa": 0.75, "n": 60}')
    assert invoke("check", str(rows), "--judge-audit", str(good)).exit_code == 0
    assert invoke("check", str(rows), "--judge-audit", str(weak)).exit_code == 1
    (tmp_path / "while.toml").write_text('judge-audit = "good.json"\n')
    report = json.loads(invoke("check", str(rows), "--format", "json").stdout)
    assert report["policies"]["exit_code"] == 0 and report["policies"]["audit"]["ok"] is True
    assert policies_problems(report) == []
    # stdin feeds both the route and the judge scan (the same bytes)
    piped = invoke("check", "-", "--format", "json", input=JUDGED)
    assert json.loads(piped.stdout)["policies"]["judge"]["judged"] == 40
    assert piped.exit_code == 0  # the audit named in while.toml clears it


def test_usage_errors_are_one_line() -> None:
    for args in (
        ["--fail-on", "flor"],
        ["--fail-on", "off-policy"],
        ["--judge-audit", "nope.json"],
    ):
        result = invoke("check", ex("mixed.parquet"), *args)
        assert result.exit_code == 2, result.output
        assert (
            result.stderr.startswith("whilecli: error: ") and len(result.stderr.splitlines()) == 1
        )


def test_gate_commands_never_import_torch() -> None:
    code = (
        "import sys, whilecli.commands.check, whilecli.commands.diff, whilecli.commands.size;"
        "import whilecli.route.policies, whilecli.route.paired, whilecli.route.judges;"
        "assert 'torch' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_schema_doc_documents_policies() -> None:
    assert {"Policies", "Policy result", "Judge scan", "Audit"} <= set(SCHEMA)
    assert SCHEMA["Top level"]["policies"] == ("object", False)


# ------------------------------------------------------------------ the CI example


def test_ci_example_runs_on_bundled_data(tmp_path: Path) -> None:
    env, runs = workflow(WORKFLOW.read_text(encoding="utf-8"))
    assert set(env) == {"DUMP", "BASELINE", "MODEL", "WHILECLI"}
    assert any("pip install" in r and "$WHILECLI" in r for r in runs)
    commands = [r for r in runs if r.startswith("whilecli ")]
    assert [c.split()[1] for c in commands] == ["check", "diff", "size"]
    bundled = {
        "DUMP": ex("teacher.parquet"),
        "BASELINE": ex("student.parquet"),
        "MODEL": "Qwen/Qwen3-8B",
    }
    summary = tmp_path / "summary.md"
    for command in commands:
        line = re.sub(r"\$\{?([A-Z_]+)\}?", lambda m: shlex.quote(bundled[m.group(1)]), command)
        args = shlex.split(line)[1:]
        result = invoke(*args, env={"GITHUB_STEP_SUMMARY": str(summary)})
        assert result.exit_code == 0, (command, result.output)
        if "--format" in args and args[args.index("--format") + 1] == "github":
            assert all(ANNOTATION.match(x) for x in result.stdout.splitlines())
    written = summary.read_text(encoding="utf-8")
    assert "## whilecli check: ok" in written and "## whilecli diff: improvement" in written
    # the same gate fails a dump whose truncated replies pass, and a regression
    gate = shlex.split(
        re.sub(
            r"\$\{?([A-Z_]+)\}?",
            lambda m: shlex.quote(
                ex("truncated_passes.parquet") if m.group(1) == "DUMP" else bundled[m.group(1)]
            ),
            commands[0],
        )
    )
    failed = invoke(*gate[1:])
    assert failed.exit_code == 1
    titles = re.findall(r"title=whilecli check%3A ([a-z-]+)::", failed.stdout)
    assert "truncated-passes" in titles
    back = invoke("diff", bundled["DUMP"], bundled["BASELINE"], "--fail-on", "regression")
    assert back.exit_code == 1
