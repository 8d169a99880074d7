"""A held-out size under 30 tasks carries its caveat wherever it is printed. The formula's sd,
√((p(1−p) + q(1−q))/k), is the draws' noise alone: many draws per task shrink it towards 0
(k = 256 at p = 0.5 asks for 7 tasks, k = 10⁹ for 2), while how the gain varies from task to
task, which no number of draws shrinks, is not in it. The size stays the formula's (DESIGN
section 2); below 30 tasks ``size``, ``route`` and their JSON say so. The truth is the formula
written out here, over a grid of base, effect and k that crosses 30 both ways."""

from __future__ import annotations

import json
import math
from pathlib import Path
from statistics import NormalDist

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.route import stats


def _formula_n(effect: float, base: float, k: int) -> int:
    z = NormalDist().inv_cdf
    q = base + effect
    sd = math.sqrt((base * (1 - base) + q * (1 - q)) / k)
    return max(2, math.ceil(((z(0.975) + z(0.8)) * sd / effect) ** 2))


@settings(max_examples=60, deadline=None)
@given(
    base=st.sampled_from([0.1, 0.3, 0.5, 0.6, 0.8]),
    effect=st.sampled_from([0.05, 0.1, 0.15]),
    k=st.sampled_from([1, 4, 16, 64, 256, 10**6]),
)
def test_the_caveat_stands_exactly_under_30_tasks(base: float, effect: float, k: int) -> None:
    if not base + effect < 1:
        return
    want = _formula_n(effect, base, k)
    held = stats.holdout_size(effect, base=base, k=k)
    assert held.n == want
    assert (held.caveat is not None) == (want < 30)
    assert held.to_dict()["caveat"] == held.caveat


def test_size_says_the_caveat_in_text_and_json() -> None:
    few = CliRunner().invoke(app, ["size", "--k", "256", "--base", "0.5"])
    assert few.exit_code == 0, few.stderr
    assert "Hold out 7 tasks" in few.stdout
    assert "note: under 30 tasks" in few.stdout
    plenty = CliRunner().invoke(app, ["size"])
    assert "Hold out 367 tasks" in plenty.stdout and "note:" not in plenty.stdout
    doc = json.loads(CliRunner().invoke(app, ["size", "--k", "256", "--format", "json"]).stdout)
    assert doc["holdout"]["caveat"].startswith("under 30 tasks")
    doc = json.loads(CliRunner().invoke(app, ["size", "--format", "json"]).stdout)
    assert doc["holdout"]["caveat"] is None


def test_the_route_says_it_before_the_gpu(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    with rows.open("w") as out:
        for t in range(40):
            for i in range(256):
                out.write(json.dumps({"task_id": f"t{t}", "reward": float((i + t) % 2)}) + "\n")
    got = CliRunner().invoke(app, ["route", str(rows), "--format", "json"])
    held = json.loads(got.stdout)["before_gpu"]["holdout"]
    assert held["k"] == 256 and held["n"] == _formula_n(0.05, 0.5, 256) < 30
    assert held["caveat"].startswith("under 30 tasks")
    text = CliRunner().invoke(app, ["route", str(rows)], env={"COLUMNS": "200"}).stdout
    assert "But under 30 tasks the size holds the draws' noise only" in text
