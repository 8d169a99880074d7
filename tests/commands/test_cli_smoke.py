from typer.testing import CliRunner

from whilecli import __version__
from whilecli.cli import app


def test_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output


def test_every_command_is_registered() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    for name in ("route", "update", "config", "ada", "check", "size", "diff", "summarize"):
        assert name in result.output


def test_update_hands_groupwise_to_the_row_methods(tmp_path) -> None:
    """GAR on one mixed group [1, 1, 0, 0] with factors [1, 0.5]: A' = [2/3, 1/3, −1/2, −1/2]."""
    import json

    rows = [
        {"task_id": "t", "reward": 1.0, "factor": 1.0},
        {"task_id": "t", "reward": 1.0, "factor": 0.5},
        {"task_id": "t", "reward": 0.0},
        {"task_id": "t", "reward": 0.0},
    ]
    src = tmp_path / "rows.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(
        app, ["update", "--method", "groupwise", str(src), "-o", str(out), "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    written = [json.loads(line) for line in out.read_text().splitlines()]
    got = [r["advantage"] for r in written]
    want = [2 / 3, 1 / 3, -0.5, -0.5]
    assert all(abs(a - b) < 1e-12 for a, b in zip(got, want, strict=True))


def test_an_unexpected_error_is_one_line(monkeypatch) -> None:
    """A bug inside a command prints one line and exits 70, never a traceback."""
    import whilecli.route as route_api

    def boom(*args, **kwargs):
        raise RuntimeError("something broke\nacross lines")

    monkeypatch.setattr(route_api, "run_route", boom)
    result = CliRunner().invoke(app, ["route", "examples/data/mixed.jsonl"])
    assert result.exit_code == 70
    assert "internal error: RuntimeError: something broke across lines" in result.output
    assert "Traceback" not in result.output


def test_python_dash_m_runs_the_program() -> None:
    """`python3 -m whilecli` (the README's first command) needs no script on PATH."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "whilecli", "route", "--quiet", "examples/data/mixed.parquet"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("whilecli route: ")
    usage = subprocess.run(
        [sys.executable, "-m", "whilecli", "-h"], capture_output=True, text=True, env=env
    )
    assert usage.returncode == 0 and usage.stdout.startswith("Usage: whilecli ")
