"""Every path through ``route`` and ``check`` passes the same gate (DESIGN section 2: a
confident wrong verdict with exit 0 is the worst thing the tool can do).

A seeded simulator writes a pool with a known truth: an ``env`` column whose slices either
floor (every task fails) or split. The named policy (``floor``) comes from ``--fail-on``, a
``while.toml`` or a ``pyproject.toml``; every command runs in every output format, with and
without ``--by env``. The truth says which exit code each must give; the JSON report's
``exit_code`` must be the process's (one source), a ``--judge-audit`` must be read on every
path, and ``GITHUB_STEP_SUMMARY`` must be written on every path with ``--format github``.
A property test draws policy sets and checks the JSON ``exit_code`` against the process's.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app

FORMATS = ("text", "json", "markdown", "github")
K = 4
SETTINGS = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def simulate(path: Path, floors: list[bool], *, seed: int, tasks: int = 12) -> Path:
    """One slice per entry of ``floors``: ``tasks`` tasks at k = ``K``; a floor slice fails
    every row, another splits every task (one pass, the rest failures, in a seeded order)."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for s, floor in enumerate(floors):
        for t in range(tasks):
            passes = [False] * K if floor else rng.sample([True] + [False] * (K - 1), K)
            for i, ok in enumerate(passes):
                rows.append(
                    {
                        "task_id": f"s{s}-t{t}",
                        "env": f"e{s}",
                        "reward": 1.0 if ok else 0.0,
                        "completion": f"reply {s} {t} {i}",
                        "finish_reason": "stop",
                    }
                )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository root of its own (``.git`` stops the policy file search) as the cwd."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return tmp_path


def run(args: list[str], env: dict[str, str] | None = None) -> Any:
    """The CLI in-process: exit code, stdout and stderr."""
    return CliRunner().invoke(app, args, env=env)


def name_policy(repo: Path, source: str, policy: str) -> list[str]:
    """Name ``policy`` from ``source``: the flag (its arguments) or a file in ``repo``."""
    if source == "flag":
        return ["--fail-on", policy]
    if source == "while.toml":
        (repo / "while.toml").write_text(f'fail-on = "{policy}"\n')
    else:
        (repo / "pyproject.toml").write_text(f'[tool.while]\nfail-on = "{policy}"\n')
    return []


def expected(floors: list[bool], by: bool) -> int:
    """The truth: ``floor`` holds on a slice that floors; the whole pool floors only when
    every slice does."""
    return int(any(floors)) if by else int(all(floors))


CASES = [
    (command, fmt, by)
    for command in ("route", "check")
    for fmt in FORMATS
    for by in (False, True)
    if not (command == "check" and by)  # check takes no --by
]


@pytest.mark.parametrize("source", ["flag", "while.toml", "pyproject.toml"])
@pytest.mark.parametrize(("command", "fmt", "by"), CASES)
def test_every_path_passes_the_gate(
    repo: Path, command: str, fmt: str, by: bool, source: str
) -> None:
    """One floor slice, one split slice: ``--by`` exits 1 (a slice floors), the whole pool
    exits 0 (it splits); the JSON says the same code, and the job summary is written."""
    floors = [True, False]
    rows = simulate(repo / "rows.jsonl", floors, seed=7)
    args = [command, str(rows), "--format", fmt, *name_policy(repo, source, "floor")]
    args += ["--by", "env"] if by else []
    summary = repo / "summary.md"
    result = run(args, env={"GITHUB_STEP_SUMMARY": str(summary)})
    want = expected(floors, by)
    assert result.exit_code == want, (args, result.output)
    if fmt == "json":
        assert json.loads(result.stdout)["exit_code"] == result.exit_code
    if fmt == "github":
        assert summary.is_file(), "GITHUB_STEP_SUMMARY was not written"
        assert "policies" in summary.read_text().lower()
    else:
        assert not summary.exists()
    if want and fmt in ("text", "markdown"):
        assert "floor" in result.stdout and "failed" in result.stdout.lower()


@pytest.mark.parametrize("by", [False, True])
@pytest.mark.parametrize("audit", ["missing.json", "/dev/null"])
def test_a_judge_audit_is_read_on_every_path(repo: Path, by: bool, audit: str) -> None:
    """A ``--judge-audit`` that cannot be read is refused (exit 2), ``--by`` or not."""
    rows = simulate(repo / "rows.jsonl", [True, False], seed=3)
    args = ["route", str(rows), "--judge-audit", audit, "-q"] + (["--by", "env"] if by else [])
    result = run(args)
    assert result.exit_code == 2, result.output
    assert "--judge-audit" in result.output


@SETTINGS
@given(
    floors=st.lists(st.booleans(), min_size=1, max_size=3),
    policies=st.sets(
        st.sampled_from(["floor", "saturated", "few-split", "unknown-truncation", "off-policy"]),
        min_size=1,
    ),
    command=st.sampled_from(["route", "route --by env", "check"]),
    seed=st.integers(0, 1000),
)
def test_json_exit_code_is_the_process_exit_code(
    repo: Path, floors: list[bool], policies: set[str], command: str, seed: int
) -> None:
    """Whatever policies are named, on whatever pool, the JSON report's top-level
    ``exit_code`` is the code the process exits with (and each slice's is its own under its
    gate)."""
    rows = simulate(repo / "rows.jsonl", floors, seed=seed, tasks=6)
    args = [*command.split(), str(rows), "--format", "json", "--model", "m"]
    args += ["--fail-on", ",".join(sorted(policies))]
    result = run(args)
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.stdout)
    assert report["exit_code"] == result.exit_code
    failed = any(
        r["failed"]
        for part in report.get("slices", [report])
        for r in part.get("policies", {}).get("results", [])
    )
    if failed:
        assert result.exit_code == 1
    for part in report.get("slices", []):
        assert part["exit_code"] >= int(bool(part["policies"]["failed"]))
