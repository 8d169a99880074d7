"""A summary (``whilecli summarize``: per-task counts) where a command reads dumps.

``diff`` and ``size --before/--after`` compare per-task counts, which a summary holds: either
side given as its summary prints what the rows print. ``update`` and ``ada`` need the rows
themselves: a summary given to them is refused in one line that says what it is, never read
as rows whose columns are counts (``--map reward=passes`` gave pass@1 0.00).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.io.read import SUMMARY_COLUMNS, read_rows
from whilecli.route.summary import SUMMARY_SCHEMA, write_summary


def _rows(path: Path, seed: int, tasks: int, k: int, shift: float) -> str:
    rng = random.Random(seed)
    rows = []
    for t in range(tasks):
        rate = min(1.0, max(0.0, rng.random() + shift))
        rows += [{"task_id": f"t{t}", "reward": float(rng.random() < rate)} for _ in range(k)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _summary(rows: str) -> str:
    out = Path(rows).with_suffix(".parquet")
    write_summary(read_rows([rows]), out, force=True)
    return str(out)


def _json(args: list[str]) -> dict:
    done = CliRunner().invoke(app, [*args, "--format", "json"])
    assert done.exit_code in (0, 1), done.output
    out = json.loads(done.stdout)
    for key in ("inputs", "before_path", "after_path"):
        out.pop(key, None)
    return out


@settings(
    max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 10**6), tasks=st.integers(5, 40), k=st.integers(1, 6))
def test_diff_and_size_read_a_summary_as_its_rows(
    tmp_path: Path, seed: int, tasks: int, k: int
) -> None:
    before = _rows(tmp_path / f"b{seed}.jsonl", seed, tasks, k, 0.0)
    after = _rows(tmp_path / f"a{seed}.jsonl", seed + 1, tasks, k, 0.1)
    b_sum, a_sum = _summary(before), _summary(after)
    rows = _json(["diff", before, after])
    for pair in ((b_sum, a_sum), (b_sum, after), (before, a_sum)):
        assert _json(["diff", *pair]) == rows
    sized = _json(["size", "--before", before, "--after", after, "--draws", "200"])
    assert _json(["size", "--before", b_sum, "--after", a_sum, "--draws", "200"]) == sized


def test_commands_that_need_rows_refuse_a_summary(tmp_path: Path) -> None:
    summary = _summary(_rows(tmp_path / "rows.jsonl", 0, 10, 4, 0.0))
    for args in (
        ["update", "--method", "grpo", summary, "-o", str(tmp_path / "out.jsonl")],
        ["ada", summary],
        ["diff", summary, summary, "--map", "reward=passes"],
    ):
        done = CliRunner().invoke(app, args)
        said = done.stderr.strip()
        assert done.exit_code == 2 and "\n" not in said and "summar" in said, (args, said)
        assert summary in said or "--map" in said, said
    assert not (tmp_path / "out.jsonl").exists()


def test_the_columns_that_mark_a_summary_are_a_summarys() -> None:
    assert set(SUMMARY_SCHEMA) >= SUMMARY_COLUMNS
