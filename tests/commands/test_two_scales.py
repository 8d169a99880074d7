"""Two dumps graded on two scales (a 0-1 rubric beside a judge's 0-10) under one
``--pass-threshold``: ``diff`` and ``size --before --after`` say so, as ``route --teacher``
does (its ``teacher_scale`` finding, from the one :func:`whilecli.route.checks.reward_scales`),
and say nothing when both lie in [0, 1] or both outside it."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app

SCALES = st.sampled_from([1.0, 1.0, 10.0, 100.0])
WORDS = "one pass threshold may not grade both"


def _dump(path: Path, scale: float, offset: int) -> str:
    rows = [
        {"task_id": f"t{i}", "reward": scale * float((i + j + offset) % 3 == 0)}
        for i in range(12)
        for j in range(4)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(before=SCALES, after=SCALES, offset=st.integers(0, 2))
def test_diff_and_size_say_two_scales(
    before: float, after: float, offset: int, tmp_path: Path
) -> None:
    a = _dump(tmp_path / "before.jsonl", before, 0)
    b = _dump(tmp_path / "after.jsonl", after, offset)
    two = (before <= 1.0) != (after <= 1.0)
    for args in (["diff", a, b], ["size", "--before", a, "--after", b]):
        result = CliRunner().invoke(app, [*args, "--pass-threshold", "0.5"], env={"COLUMNS": "200"})
        assert result.exit_code in (0, 1), result.output
        assert (WORDS in result.output) == two, (args, before, after, result.output)
