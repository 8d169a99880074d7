"""A reward finite but so large its square overflows (1.7e308) gave NaN coefficients with
exit 0 (flash_reinforce, max_rl) or blamed the behaviour log-probs (grpo): every method that
reads rewards refuses one past :func:`whilecli.methods.validate.reward_bound` at its row,
naming the reward, and takes any reward within it to finite coefficients."""

from __future__ import annotations

import json
import math
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.methods.validate import reward_bound

METHODS = ("flash_reinforce", "grpo", "max_rl", "rae")


def _rows(huge: float, at: int) -> list[dict[str, object]]:
    rows = []
    for i in range(8):
        rows.append(
            {
                "task_id": f"q{i // 2}",
                "reward": float(i % 2),
                "logprobs": [-0.5, -1.0, -0.2],
                "behavior_logprobs": [-0.5, -1.0, -0.2],
            }  # fmt: skip
        )
    rows[at]["reward"] = huge
    return rows


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    method=st.sampled_from(METHODS),
    exponent=st.floats(2, 308.2),
    sign=st.sampled_from([1.0, -1.0]),
    at=st.integers(0, 7),
)
def test_a_reward_past_the_bound_is_refused_at_its_row(
    tmp_path: Path, method: str, exponent: float, sign: float, at: int
) -> None:
    huge = sign * min(10.0**exponent, 1.7e308)
    path = tmp_path / f"{method}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _rows(huge, at)), encoding="utf-8")
    out = tmp_path / f"{method}.out.jsonl"
    done = CliRunner().invoke(app, ["update", str(path), "--method", method, "-o", str(out),
                                    "--force", "--format", "json"])  # fmt: skip
    if abs(huge) > reward_bound(__import__("torch").float64):
        assert done.exit_code == 2, done.output
        assert f":{at + 1}: field 'reward'" in done.output, done.output
        return
    if method == "max_rl" and huge < 0:  # a success probability: refused below 0 anyway
        assert done.exit_code == 2 and f":{at + 1}: field 'reward'" in done.output
        return
    assert done.exit_code == 0, done.output
    for line in out.read_text().splitlines():
        row = json.loads(line)
        assert all(c is not None and math.isfinite(c) for c in row["coefficients"]), row
