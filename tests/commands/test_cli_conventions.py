"""The command line behaves as click and typer programs are expected to.

``-h`` is ``--help`` everywhere; options sit under their panels; enumerated options list their
choices and take them in any case; defaults read ``[default: X]`` everywhere; every positional
is described; the top-level command list prints each command's whole line; a mistyped command
gets one "did you mean"; a missing file or a bad option is refused before polars, pyarrow,
scipy or torch load; the slow-read progress line shows only on a terminal, never in CI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import click
import pytest
from typer.testing import CliRunner

from whilecli.cli import COMMANDS, app
from whilecli.commands import _common

ROOT = Path(__file__).resolve().parents[2]
MIXED = str(ROOT / "examples" / "data" / "mixed.jsonl")
#: The commands whose options are grouped under Inputs / Checks / Output (and method panels).
PANELLED = ("route", "check", "diff", "size", "summarize", "ada", "formats")


def _invoke(args: list[str]) -> click.testing.Result:
    return CliRunner().invoke(app, args)


def _command(name: str) -> click.Command:
    """The click command ``name`` as the app builds it (its module loads here)."""
    import typer

    root = typer.main.get_command(app)
    with click.Context(root) as ctx:
        cmd = root.get_command(ctx, name)  # type: ignore[attr-defined]
    assert cmd is not None
    return cmd


@pytest.mark.parametrize("name", [None, *COMMANDS])
def test_dash_h_is_help(name: str | None) -> None:
    prefix = [] if name is None else [name]
    short, long = _invoke([*prefix, "-h"]), _invoke([*prefix, "--help"])
    assert short.exit_code == long.exit_code == 0, short.output
    assert short.output == long.output
    assert "-h, --help" in short.output


@pytest.mark.parametrize("name", PANELLED)
def test_options_sit_under_panels(name: str) -> None:
    out = _invoke([name, "--help"]).output
    sections = [line.rstrip(":") for line in out.splitlines() if line and not line[0].isspace()]
    panels = [s for s in sections if not s.startswith("Usage")]
    assert "Output" in panels, out
    if name != "formats":
        assert panels.index("Inputs") < panels.index("Output"), panels
    assert "Options" not in panels  # every option but --help has a panel


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_positional_is_described(name: str) -> None:
    for param in _command(name).params:
        if isinstance(param, click.Argument):
            assert (getattr(param, "help", None) or "").strip(), (name, param.name)


ENUMERATED = [
    ("route", "--format", ("text", "json", "markdown", "github")),
    ("check", "--format", ("text", "json", "markdown", "github")),
    ("diff", "--format", ("text", "json", "markdown", "github")),
    ("size", "--format", ("text", "json")),
    ("ada", "--format", ("text", "json")),
    ("ada", "--exit", ("balanced", "positive")),
    *[(c, "--input-format", _common.INPUT_FORMATS) for c in ("route", "check", "diff", "size")],
    ("summarize", "--input-format", _common.INPUT_FORMATS),
]


@pytest.mark.parametrize(("name", "flag", "choices"), ENUMERATED)
def test_enumerated_options_list_their_choices(name: str, flag: str, choices: tuple) -> None:
    option = next(p for p in _command(name).params if flag in getattr(p, "opts", ()))
    assert isinstance(option.type, click.Choice), (name, flag)
    assert tuple(option.type.choices) == tuple(choices)
    assert not option.type.case_sensitive
    out = " ".join(_invoke([name, "--help"]).output.split()).replace("- ", "-")  # wrapped
    assert all(c in out for c in choices), (name, flag)


def test_choices_take_any_case() -> None:
    done = _invoke(["route", MIXED, "--format", "JSON", "--input-format", "JSONL"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["method"]


def test_the_input_format_choices_are_the_readers() -> None:
    from whilecli.io.plan import FORMATS

    assert tuple(FORMATS) == _common.INPUT_FORMATS


@pytest.mark.parametrize("name", (*PANELLED, "update", "config"))
def test_defaults_read_the_same_everywhere(name: str) -> None:
    out = _invoke([name, "--help"]).output
    assert "(default" not in out and "default: (" not in out, out


def test_the_command_list_prints_whole_lines() -> None:
    out = _invoke(["--help"]).output
    commands = " ".join(out[out.index("Commands:") :].split())
    for name, (_, _, line) in COMMANDS.items():
        assert f"{name} {line}" in commands
    assert "..." not in commands


def test_one_did_you_mean() -> None:
    done = _invoke(["rout"])
    assert done.exit_code == 2
    assert done.output.count("Did you mean") == 1
    assert done.output.startswith("whilecli: error: No such command 'rout'. Did you mean 'route'?")


def test_a_bad_option_is_one_line() -> None:
    done = _invoke(["route", MIXED, "--formt", "json"])
    assert done.exit_code == 2
    assert len(done.output.strip().splitlines()) == 1
    assert done.output.startswith("whilecli: error: ")


EARLY = textwrap.dedent(
    """
    import json, sys
    from typer.testing import CliRunner
    from whilecli.cli import app

    HEAVY = ("polars", "pyarrow", "scipy", "torch", "numpy")
    out = []
    for args in json.loads(sys.argv[1]):
        r = CliRunner().invoke(app, args)
        heavy = sorted({m.split(".")[0] for m in sys.modules} & set(HEAVY))
        out.append({"args": args, "code": r.exit_code, "output": r.output, "heavy": heavy})
    print(json.dumps(out))
    """
)


def test_early_errors_and_help_load_nothing_heavy(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.jsonl")
    cases = [
        ["--help"],
        ["--version"],
        ["rout"],
        ["route", "--help"],
        ["update", "--help"],
        ["route", missing],
        ["check", missing],
        ["diff", missing, MIXED],
        ["summarize", missing, "-o", str(tmp_path / "t.parquet")],
        ["ada", missing],
        ["size", "--before", missing, "--after", MIXED],
        ["update", "--method", "grpo", missing],
        ["route", MIXED, "--format", "xml"],
        ["route", MIXED, "--input-format", "nope"],
        ["size", "--format", "xml"],
        ["ada", MIXED, "--exit", "nope"],
        ["route", MIXED, "--no-such-flag"],
        ["route", MIXED, "--seed", "-1"],
        ["check", MIXED, "--size-b", "-3"],
        ["route", MIXED, "--teacher-vocab", "0"],
        ["route", MIXED, "--pass-threshold", "nan"],
        ["summarize", MIXED, "-o", str(tmp_path / "t.txt")],
        ["summarize", MIXED, "-o", str(tmp_path / "t.parquet"), "--pass-threshold", "inf"],
        ["size", "--effect", "2"],
        ["size", "--draws", "0"],
        ["diff", MIXED, MIXED, "--seed", "-2"],
        ["diff", MIXED, MIXED, "--fail-on", "nope"],
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", EARLY, json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for case in json.loads(done.stdout.strip().splitlines()[-1]):
        assert case["heavy"] == [], case
        if case["args"][-1] in ("--help", "--version"):
            assert case["code"] == 0, case
            continue
        assert case["code"] == 2, case
        assert case["output"].startswith("whilecli: error: "), case
        assert len(case["output"].strip().splitlines()) == 1, case
        if missing in case["args"]:
            assert f"{missing}: no such file or directory" in case["output"], case


class _Stream:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


@pytest.mark.parametrize(
    ("tty", "ci", "args", "wanted"),
    [
        (True, None, [MIXED], True),
        (True, "true", [MIXED], False),
        (False, None, [MIXED], False),
        (True, None, [MIXED, "--format", "json"], False),
        (True, None, [MIXED, "--format=JSON"], False),
        (True, "false", [MIXED], True),
    ],
)
def test_progress_only_for_a_person(monkeypatch, tty, ci, args, wanted) -> None:
    monkeypatch.setattr(sys, "stderr", _Stream(tty))
    monkeypatch.delenv("TERM", raising=False)
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    assert _common.progress_wanted(args) is wanted


def test_a_fast_block_shows_no_progress(monkeypatch) -> None:
    started: list[str] = []
    import rich.status

    monkeypatch.setattr(rich.status.Status, "start", lambda self: started.append("start"))
    with _common.slow_status("reading", after=5.0):
        pass
    time.sleep(0.05)
    assert started == []


def test_a_slow_block_shows_progress_then_clears_it(monkeypatch) -> None:
    calls: list[str] = []
    import rich.status

    monkeypatch.setattr(rich.status.Status, "start", lambda self: calls.append("start"))
    monkeypatch.setattr(rich.status.Status, "stop", lambda self: calls.append("stop"))
    with _common.slow_status("reading", after=0.01):
        time.sleep(0.3)
    assert calls == ["start", "stop"]


FREEZE = textwrap.dedent(
    """
    import atexit, gc, json, sys
    from typer.testing import CliRunner

    freezes, register = [], atexit.register
    atexit.register = lambda fn, *a, **k: (freezes.append(fn is gc.freeze), register(fn, *a, **k))[1]
    import whilecli.cli as cli

    imported = sum(freezes)
    codes = [CliRunner().invoke(cli.app, ["route", "--quiet", sys.argv[1]]).exit_code for _ in "ab"]
    print(json.dumps([imported, sum(freezes), codes]))
    """
)


def test_only_the_command_line_skips_the_final_collection() -> None:
    """Importing the library registers nothing at exit; two commands register gc.freeze once."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", FREEZE, MIXED], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [0, 1, [0, 0]]
