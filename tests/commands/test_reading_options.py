"""The reading options are one set, with one meaning, on every command that reads rows.

Every command that reads graded rows takes the shared reading options of
:class:`whilecli.io.options.ReadOptions` (``--pass-threshold``, ``--missing``, ``--map``,
``--input-format``, ``--step``), generated from that declaration; a command that cannot use
one lacks it (listed in ``ABSENT`` with the reason), so none is taken and ignored. Generated
files then go through every such command: ``--input-format`` naming the file's own format
reads it as the command reads it unforced, naming another is one line and exit 2 everywhere,
and ``--step N`` on an input that is not a prime-rl run is one line and exit 2 everywhere.
"""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import COMMANDS, app
from whilecli.commands._common import DECLARATION
from whilecli.io.options import ReadOptions

#: The reading options every command that reads rows takes.
SHARED = ("pass_threshold", "missing", "mapping", "input_format", "step")
#: Commands that read no rows.
NO_ROWS = {"formats"}
#: Shared options a command lacks, and why it cannot use them.
ABSENT = {
    # a run directory is read step by step, in its own layout (--layout): no one step, no
    # one format to force
    "watch": {"input_format", "step"},
}


def _reading_options(command: str) -> set[str]:
    module, function, _ = COMMANDS[command]
    callback = getattr(importlib.import_module(f"whilecli.commands.{module}"), function)
    names = set()
    for parameter in inspect.signature(callback).parameters.values():
        source = getattr(parameter.default, DECLARATION, None)
        if isinstance(source, tuple) and source[0] is ReadOptions:
            names.add(source[1])
    return names


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - NO_ROWS))
def test_every_reading_command_takes_the_shared_reading_options(command: str) -> None:
    have = _reading_options(command)
    want = set(SHARED) - ABSENT.get(command, set())
    assert want <= have, f"{command} lacks {sorted(want - have)}"
    assert not have & ABSENT.get(command, set()), f"{command}: {sorted(have & ABSENT[command])}"


#: Each reading command's arguments around one rows file, as a user types them.
COMMAND_LINES = {
    "route": lambda f: ["route", f],
    "check": lambda f: ["check", f],
    "diff": lambda f: ["diff", f, f],
    "size": lambda f: ["size", "--before", f, "--after", f],
    "summarize": lambda f: ["summarize", f, "-o", "-"],
    "ada": lambda f: ["ada", f],
    "update --method grpo": lambda f: ["update", f, "--method", "grpo"],
    "update --method rm": lambda f: ["update", f, "--method", "rm"],
    "config --from": lambda f: ["config", "--from", f, "--model", "M", "-o", "-"],
}
#: The formats a generated file is written in, and the other formats forced on it.
KINDS = {"jsonl": ".jsonl", "parquet": ".parquet", "csv": ".csv"}


@st.composite
def rows_files(draw: st.DrawFn) -> tuple[list[dict[str, Any]], str]:
    rows = []
    for t in range(draw(st.integers(2, 6))):
        for j in range(draw(st.integers(2, 4))):
            rows.append(
                {
                    "task_id": f"t{t}",
                    "prompt": f"question {t}",
                    "completion": f"answer {t}.{j}",
                    "reward": draw(st.sampled_from([0.0, 1.0])),
                }
            )
    return rows, draw(st.sampled_from(sorted(KINDS)))


def _write(folder: Path, rows: list[dict[str, Any]], kind: str) -> Path:
    path = folder / f"rows{KINDS[kind]}"
    if kind == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    elif kind == "parquet":
        pl.DataFrame(rows).write_parquet(path)
    else:
        pl.DataFrame(rows).write_csv(path)
    return path


def _run(args: list[str]) -> tuple[int, str]:
    done = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    return done.exit_code, done.stderr


def _one_line_refusal(code: int, err: str, needle: str) -> None:
    assert code == 2, (code, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], err


@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(file=rows_files(), other=st.sampled_from(sorted(KINDS)), step=st.integers(0, 9))
@pytest.mark.parametrize("command", sorted(COMMAND_LINES))
def test_reading_options_mean_the_same_on_every_command(
    tmp_path_factory: pytest.TempPathFactory,
    command: str,
    file: tuple[list[dict[str, Any]], str],
    other: str,
    step: int,
) -> None:
    rows, kind = file
    path = str(_write(tmp_path_factory.mktemp("rows"), rows, kind))
    args = COMMAND_LINES[command](path)
    unforced = _run(args)
    forced = _run([*args, "--input-format", kind])
    assert forced[0] == unforced[0], (forced, unforced)
    if other != kind:
        code, err = _run([*args, "--input-format", other])
        _one_line_refusal(code, err, f"--input-format {other}")
    code, err = _run([*args, "--step", str(step)])
    _one_line_refusal(code, err, f"--step {step}")


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    threshold=st.sampled_from([1.0, 0.5, 0.7]),
    offsets=st.lists(
        st.sampled_from([0.0, 1e-10, -1e-10, 2e-9, -2e-9, -0.3, 0.1]), min_size=2, max_size=8
    ),
    method=st.sampled_from(["sft", "dpo"]),
)
def test_a_pass_is_the_routes_pass_in_every_update_method(
    tmp_path_factory: pytest.TempPathFactory, threshold: float, offsets: list[float], method: str
) -> None:
    """``--pass-threshold`` means reward ≥ T − 1e-9 in the route and in the methods that pass
    rows (sft trains the passes, dpo pairs a pass with a fail), as DESIGN section 1 says."""
    from whilecli.io.read import read_rows

    folder = tmp_path_factory.mktemp("thr")
    rows = [
        {
            "task_id": "t0",
            "reward": threshold + off,
            "logprobs": [-0.5, -0.25],
            "ref_logprobs": [-0.4, -0.3],
        }
        for off in offsets
    ]
    path = folder / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = folder / "c.jsonl"
    args = ["update", str(path), "--method", method, "--pass-threshold", str(threshold)]
    code, err = _run([*args, "-o", str(out)])
    assert code == 0, err
    trained = [any(c != 0 for c in json.loads(line)["coefficients"]) for line in out.open()]
    passed = read_rows([str(path)], pass_threshold=threshold).frame.collect()["passed"]
    if method == "sft":
        assert trained == passed.to_list()
    else:  # a pair needs a pass and a fail: rows are trained only when both are there
        assert any(trained) == (0 < passed.sum() < passed.len())
