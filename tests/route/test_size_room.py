"""``size --before/--after`` refuses a before dump that leaves no room for the gain, as
``--base`` outside (0, 1) is refused and as ``route`` says "leaves no room" (DESIGN section 2:
base and base + effect inside (0, 1)). A seeded generator of before dumps at, near and away
from 0 and 1: the size is given exactly where the before pass@1 leaves room, on the library
function and on the command line (one line, exit 2). The truth is written out here:
0 < pass@1 and pass@1 + effect < 1."""

from __future__ import annotations

import json
import random
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.route.paired import paired_size


def _tasks(passes: list[int], k: int) -> pl.DataFrame:
    """Per-task frame: ``len(passes)`` tasks of ``k`` draws with those passes."""
    ids = [f"t{i}" for i in range(len(passes))]
    return pl.DataFrame({"task_id": ids, "n": [k] * len(passes), "passes": passes})


@given(
    tasks=st.integers(3, 60),
    k=st.sampled_from([1, 4, 8]),
    fails=st.integers(0, 6),
    all_fail=st.booleans(),
    effect=st.sampled_from([0.02, 0.05, 0.1]),
)
@settings(max_examples=80, deadline=None)
def test_sized_exactly_where_the_before_dump_leaves_room(
    tasks: int, k: int, fails: int, all_fail: bool, effect: float
) -> None:
    """Before: every task passes (or fails) but ``fails`` draws; after: a seeded shuffle of it."""
    rng = random.Random(tasks * 31 + k)
    cells = [0 if all_fail else k] * tasks
    for _ in range(min(fails, tasks * k)):
        i = rng.randrange(tasks)
        cells[i] = min(k, cells[i] + 1) if all_fail else max(0, cells[i] - 1)
    before, after = _tasks(cells, k), _tasks(rng.sample(cells, len(cells)), k)
    base = sum(cells) / (k * tasks)
    if base > 0 and base + effect < 1:
        assert paired_size(before, after, effect, draws=50).n >= 2
    else:
        with pytest.raises(InputError, match="leaves no room"):
            paired_size(before, after, effect, draws=50)


def _dump(path: Path, rate: float, tasks: int = 100, k: int = 4, seed: int = 0) -> Path:
    """A JSONL dump of ``tasks`` tasks at ``k`` draws, each passing with probability ``rate``."""
    rng = random.Random(seed)
    rows = [
        {"task_id": f"q{t}", "reward": float(rng.random() < rate), "model": "Qwen/Qwen3-8B"}
        for t in range(tasks)
        for _ in range(k)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(("rate", "sized"), [(1.0, False), (0.0, False), (0.6, True)])
def test_size_command_on_a_saturated_before_dump(tmp_path: Path, rate: float, sized: bool) -> None:
    """The probe's case (a saturated dump given as before and after), its floor mirror, and a
    control in the middle that is still sized."""
    before = _dump(tmp_path / "before.jsonl", rate)
    after = _dump(tmp_path / "after.jsonl", rate, seed=1)
    result = CliRunner().invoke(app, ["size", "--before", str(before), "--after", str(after)])
    if sized:
        assert result.exit_code == 0 and result.stdout.startswith("Hold out "), result.output
    else:
        assert result.exit_code == 2, result.output
        assert "leaves no room to measure a gain of 0.05" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
