"""``diff`` of dumps drawn at another k per task: which tasks are gained (all-fail →
some-pass) or lost depends on k, so a k = 1 run against a k = 16 run of one truth listed
106 tasks gained with no word; the report says the two k. pass@1's difference does not."""

from __future__ import annotations

import json
import random
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app


def _dump(path: Path, k: int, rates: list[float], rng: random.Random) -> str:
    lines = [
        json.dumps(
            {"task_id": f"t{t}", "completion": f"a{t}.{j}.{k}", "reward": float(rng.random() < p)}
        )
        for t, p in enumerate(rates)
        for j in range(k)
    ]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    k_before=st.sampled_from([1, 2, 4, 16]),
    k_after=st.sampled_from([1, 2, 4, 16]),
    seed=st.integers(0, 999),
)
def test_the_two_k_are_said_where_they_differ(
    tmp_path: Path, k_before: int, k_after: int, seed: int
) -> None:
    rng = random.Random(seed)
    rates = [rng.random() * 0.3 for _ in range(60)]
    folder = tmp_path / f"{k_before}-{k_after}-{seed}"
    folder.mkdir()
    before = _dump(folder / "before.jsonl", k_before, rates, rng)
    after = _dump(folder / "after.jsonl", k_after, rates, rng)
    res = CliRunner().invoke(app, ["diff", before, after, "--format", "json"])
    assert res.exit_code == 0, res.output
    said = [w for w in json.loads(res.stdout)["warnings"] if "draws per task before" in w]
    if k_before != k_after:
        assert said and f"k = {k_before}" in said[0] and f"{k_after} after" in said[0]
    else:
        assert not said
