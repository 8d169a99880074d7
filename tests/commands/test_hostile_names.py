"""Hostile output names: the ``run:`` line ``config`` prints is one shell command that runs
the file written, whatever its name (a space, ``$(...)``, a quote, a newline), and no
``wrote ...`` line breaks on a newline in a name."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.emit.prime_rl import PrimeRLConfig
from whilecli.emit.sft import PrimeSFTConfig

NAME_CHARS = st.sampled_from(list("ab-_. $()`'\";&|*?!\\\n\t~#"))


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(stem=st.text(NAME_CHARS, min_size=1, max_size=12))
def test_the_run_command_is_one_shell_command_naming_the_file(stem: str) -> None:
    name = f"out/{stem.replace('/', '')}.toml"
    for cls, word in ((PrimeRLConfig, "rl"), (PrimeSFTConfig, "sft")):
        command = cls.command.fget(_Named(name))  # type: ignore[attr-defined]
        assert "\n" not in command and command.startswith(f"uv run {word} @ ")
        assert _bash_words(command[len(f"uv run {word} @ ") :]) == [name]


def _bash_words(text: str) -> list[str]:
    """The words bash reads ``text`` as (no command is run: printf only prints them)."""
    done = subprocess.run(
        ["bash", "-c", f"printf '%s\\0' {text}"], capture_output=True, check=True, timeout=30
    )
    return done.stdout.decode().split("\0")[:-1]


class _Named:
    def __init__(self, file: str) -> None:
        self.file = file


@pytest.mark.parametrize("stem", ["$(touch PWNED)", "my run", "c\nx", "a'b"])
def test_config_prints_a_run_line_that_copies_whole(tmp_path: Path, stem: str) -> None:
    out = tmp_path / f"{stem}.toml"
    r = CliRunner().invoke(app, ["config", "--method", "grpo", "-o", str(out)])
    assert r.exit_code == 0, r.output
    runs = [line for line in r.stdout.splitlines() if line.startswith("run: ")]
    assert len(runs) == 1 and runs[0].startswith("run: uv run rl @ "), r.stdout
    assert _bash_words(runs[0][len("run: uv run rl @ ") :]) == [str(out)]
    wrote = [line for line in r.stdout.splitlines() if line.startswith("wrote ")]
    assert len(wrote) == 1 and "(grpo)" in wrote[0], r.stdout


def test_summarize_names_a_newline_in_its_output_on_one_line(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        "".join(json.dumps({"task_id": f"t{i}", "reward": 1.0}) + "\n" for i in range(4))
    )
    out = tmp_path / "n\nl.parquet"
    r = CliRunner().invoke(app, ["summarize", str(rows), "-o", str(out)])
    assert r.exit_code == 0, r.output
    wrote = [line for line in r.output.splitlines() if "wrote" in line]
    assert len(wrote) == 1 and "n\\nl.parquet" in wrote[0], r.output
