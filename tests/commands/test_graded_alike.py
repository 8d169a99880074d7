"""Two sides of one comparison are graded by one rule (DESIGN section 1, "passed"): where
the pass thresholds of ``diff``'s two dumps, ``size --before/--after``'s, or the rows and
``--teacher`` of ``route`` differ (a summary keeps the threshold it was made at; rows read
in one command share its ``--pass-threshold``), the command refuses, exit 2, naming both
thresholds and both files, as ``summarize --merge`` refuses to add them. The generator
writes the same rows (rewards on a grid in [0, 1]) summarised at two thresholds drawn from
the grid, and pairs summaries with each other and with rows: refused exactly where the
thresholds differ, and never where they agree."""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app

SETTINGS = settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
GRID = [0.1, 0.4, 0.7, 1.0]


def _invoke(*args: str) -> tuple[int, str]:
    got = CliRunner().invoke(app, list(args))
    return got.exit_code, got.output


def _rows(folder: Path, seed: int, tasks: int) -> Path:
    """``tasks`` tasks at 4 draws, each reward one of :data:`GRID`."""
    rnd = random.Random(seed)
    path = folder / f"rows{seed}.jsonl"
    lines = [
        json.dumps({"task_id": f"t{t}", "reward": rnd.choice(GRID), "model": "m"})
        for t in range(tasks)
        for _ in range(4)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _summary(rows: Path, threshold: float, name: str) -> Path:
    out = rows.parent / name
    code, said = _invoke(
        "summarize", str(rows), "--pass-threshold", f"{threshold:g}", "-o", str(out)
    )
    assert code == 0, said
    return out


def _comparisons(a: Path, b: Path) -> list[list[str]]:
    """Every command that compares ``a`` (before, the rows) with ``b`` (after, the teacher)."""
    return [
        ["diff", str(a), str(b)],
        ["diff", str(a), str(b), "--fail-on", "regression"],
        ["size", "--before", str(a), "--after", str(b)],
        ["route", str(a), "--teacher", str(b), "-q"],
    ]


def _no_room(args: list[str], code: int, said: str) -> bool:
    """``size`` refusing a before dump whose pass@1 leaves no room for the gain (0, or within
    ``--effect`` of 1: a threshold can put a pool there)."""
    return args[0] == "size" and code == 2 and "leaves no room" in said


def _refused_naming(code: int, said: str, a: Path, b: Path, ta: float, tb: float) -> bool:
    return (
        code == 2
        and "different pass thresholds" in said
        and f"{a} at {ta:g}" in said.replace("\n", " ")
        and f"{b} at {tb:g}" in said.replace("\n", " ")
    )


@SETTINGS
@given(
    seed=st.integers(0, 10**6),
    tasks=st.integers(40, 80),
    before=st.sampled_from(GRID),
    after=st.sampled_from(GRID),
)
def test_summaries_made_at_two_thresholds_are_not_compared(
    tmp_path: Path, seed: int, tasks: int, before: float, after: float
) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    rows = _rows(folder, seed, tasks)
    a, b = _summary(rows, before, "a.parquet"), _summary(rows, after, "b.parquet")
    for args in _comparisons(a, b):
        code, said = _invoke(*args)
        if before != after:
            assert _refused_naming(code, said, a, b, before, after), (args, code, said)
        else:
            assert "different pass thresholds" not in said and (
                code in (0, 1) or _no_room(args, code, said)
            ), (
                args,
                said,
            )


@SETTINGS
@given(
    seed=st.integers(0, 10**6),
    made=st.sampled_from(GRID),
    read=st.sampled_from([None, *GRID]),
    summary_first=st.booleans(),
)
def test_a_summary_against_rows_read_at_another_threshold_is_not_compared(
    tmp_path: Path, seed: int, made: float, read: float | None, summary_first: bool
) -> None:
    """Rows whose rewards are 0 or 1 read at ``read`` (None: the implicit 1.0) beside a
    summary made at ``made``; ``--pass-threshold`` given, a summary made at another is
    refused by it (as before), and the pair never compares two rules."""
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    graded = _rows(folder, seed, 50)
    summary = _summary(graded, made, "s.parquet")
    binary = folder / "binary.jsonl"
    binary.write_text(
        "".join(
            json.dumps({**r, "reward": float(r["reward"] >= made)}) + "\n"
            for r in map(json.loads, graded.read_text().splitlines())
        )
    )
    a, b = (summary, binary) if summary_first else (binary, summary)
    option = [] if read is None else ["--pass-threshold", f"{read:g}"]
    rows_at = 1.0 if read is None else read
    for args in _comparisons(a, b):
        code, said = _invoke(*args, *option)
        if rows_at == made:
            assert "pass threshold" not in said and (
                code in (0, 1) or _no_room(args, code, said)
            ), (
                args,
                said,
            )
        else:
            assert code == 2 and "threshold" in said, (args, code, said)
            assert f"{made:g}" in said and f"{rows_at:g}" in said, (args, said)


def test_a_teacher_summary_at_another_threshold_is_refused_for_every_slice(
    tmp_path: Path,
) -> None:
    """``route --by COLUMN --teacher``: the slices' rows and the teacher's summary are
    graded alike, or refused."""
    rnd = random.Random(4)
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        "".join(
            json.dumps(
                {"task_id": f"t{t}", "reward": float(rnd.random() < 0.5), "env": f"e{t % 2}"}
            )
            + "\n"
            for t in range(60)
            for _ in range(4)
        )
    )
    teacher = _summary(rows, 0.5, "teacher.parquet")
    code, said = _invoke("route", str(rows), "--teacher", str(teacher), "--by", "env", "-q")
    assert code == 2 and f"{teacher} at 0.5" in said and f"{rows} at 1" in said, said
