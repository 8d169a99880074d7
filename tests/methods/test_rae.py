"""rae: the per-agent running baseline, its state file, and its coefficients."""

from __future__ import annotations

import json
import random

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slow_reference_grouped import random_rows, slow_rae, slow_rae_advantages, to_batch
from toy_policy import train_toy
from whilecli.errors import InputError, UsageError
from whilecli.methods.groups import ema_baselines
from whilecli.methods.grpo import RAE


def row(reward: float, agent: str | None = None, n: int = 1) -> dict:
    out = {"reward": reward, "logprobs": [-0.5] * n, "action_mask": [1] * n}
    if agent is not None:
        out["agent"] = agent
    return out


def test_rae_hand_computed_one_agent() -> None:
    up = RAE().update(to_batch([row(1), row(0), row(1)]))
    # b: 0 → 0.05 → 0.0475 → 0.095125; A read before each row: 1, −0.05, 0.9525.
    assert up.advantages[:, 0].tolist() == pytest.approx([1, -0.05, 0.9525])
    assert up.coefficients[:, 0].tolist() == pytest.approx([1 / 3, -0.05 / 3, 0.9525 / 3])
    assert up.coefficients[1, 0] != 0  # one rollout per prompt is fine for rae


def test_rae_agents_are_separate_and_state_carries(tmp_path) -> None:
    rae = RAE(baselines={"x": 0.5})
    up = rae.update(to_batch([row(1, "x"), row(1, "y"), row(0, "x")]))
    assert up.advantages[:, 0].tolist() == pytest.approx([0.5, 1.0, -0.525])
    assert rae.baselines == pytest.approx({"x": 0.95 * 0.525, "y": 0.05})
    path = tmp_path / "state" / "rae.json"
    rae.save_state(path)
    assert json.loads(path.read_text()) == pytest.approx(rae.baselines)
    again = RAE()
    again.load_state(path)
    assert again.baselines == rae.baselines
    rae.save_state(path)  # replaces its own file without --force


def test_missing_state_file_means_zero_baselines(tmp_path) -> None:
    rae = RAE(baselines={"default": 0.3})
    rae.load_state(tmp_path / "absent.json")
    assert rae.baselines == {}
    up = rae.update(to_batch([row(0.25)]))
    assert up.advantages[0, 0].item() == pytest.approx(0.25)


@pytest.mark.parametrize("text", ["[1, 2]", '{"a": "x"}', '{"a": NaN}', "{not json"])
def test_bad_state_file_refused(tmp_path, text: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(text)
    with pytest.raises(InputError, match="s.json"):
        RAE().load_state(path)


def test_two_calls_equal_one_call_on_the_concatenation() -> None:
    rng = random.Random(3)
    rows = [row(rng.choice([0, 0.5, 1]), rng.choice("ab"), rng.randint(1, 4)) for _ in range(40)]
    whole = RAE()
    c_whole = whole.update(to_batch(rows)).advantages[:, 0]
    split = RAE()
    a = split.update(to_batch(rows[:17])).advantages[:, 0]
    b = split.update(to_batch(rows[17:])).advantages[:, 0]
    assert torch.allclose(torch.cat([a, b]), c_whole, rtol=1e-12, atol=1e-15)
    assert split.baselines == pytest.approx(whole.baselines, rel=1e-12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.integers(0, 2), st.floats(-2, 2)), min_size=1, max_size=400),
    st.floats(0.05, 0.99),
    st.sampled_from([1, 7, 128]),
)
def test_ema_scan_matches_loop(pairs, decay, block) -> None:
    ids = [k for k, _ in pairs]
    rewards = [r for _, r in pairs]
    start = [0.1, -0.2, 0.3]
    before, final = ema_baselines(
        torch.tensor(rewards, dtype=torch.float64),
        torch.tensor(ids),
        torch.tensor(start, dtype=torch.float64),
        decay,
        block=block,
    )
    b = list(start)
    for i, (k, r) in enumerate(pairs):
        assert before[i].item() == pytest.approx(b[k], rel=1e-9, abs=1e-12)
        b[k] = decay * b[k] + (1 - decay) * r
    assert final.tolist() == pytest.approx(b, rel=1e-9, abs=1e-12)


@st.composite
def batches(draw: st.DrawFn) -> list[dict]:
    return random_rows(draw, max_tasks=6, max_group=3)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches(), st.sampled_from(["mask", "zero"]), st.sampled_from(["grpo", "dr_grpo"]))
def test_rae_matches_slow_loop(rows, truncated, loss_type) -> None:
    start = {"a": 0.2}
    rae = RAE(baselines=start, truncated=truncated, loss_type=loss_type)
    fast = rae.update(to_batch(rows))
    slow, final = slow_rae(rows, baselines=start, truncated=truncated, loss_type=loss_type)
    adv, _ = slow_rae_advantages(rows, 0.95, start, truncated)
    for i, r in enumerate(slow):
        assert fast.coefficients[i, : len(r)].tolist() == pytest.approx(r, rel=1e-9, abs=1e-12)
        acts = [t for t, m in enumerate(rows[i]["action_mask"]) if m]
        assert fast.advantages[i, acts].tolist() == pytest.approx([adv[i]] * len(acts))
    assert rae.baselines == pytest.approx(final, rel=1e-9, abs=1e-12)
    assert torch.all(fast.coefficients[~to_batch(rows).action_mask] == 0)


def test_rows_without_agent_share_default() -> None:
    rae = RAE()
    rae.update(to_batch([row(1), row(1)]))
    assert set(rae.baselines) == {"default"}


@pytest.mark.parametrize(
    ("knobs", "name"),
    [
        ({"decay": 1.0}, "decay"),
        ({"decay": -0.1}, "decay"),
        ({"agent_key": ""}, "agent_key"),
        ({"baselines": {"a": float("inf")}}, "baselines"),
    ],
)
def test_knobs_refused(knobs: dict, name: str) -> None:
    with pytest.raises(UsageError, match=name):
        RAE(**knobs)


def test_toy_policy_learns() -> None:
    before, after = train_toy(RAE, steps=30, seed=2)
    assert after > before + 0.4, (before, after)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    dtype=st.sampled_from([torch.float64, torch.float32]),
    exponent=st.floats(0, 308),
    sign=st.sampled_from([1.0, -1.0]),
    agent=st.sampled_from(["default", "a"]),
)
def test_a_state_baseline_past_the_reward_bound_is_refused_at_the_file_and_key(
    tmp_path_factory: pytest.TempPathFactory,
    dtype: torch.dtype,
    exponent: float,
    sign: float,
    agent: str,
) -> None:
    """Hostile: a baseline of 1e300 in the state file was used as is (coefficients of -2e297,
    exit 0; in float32 an overflow blamed on the rows). Past the reward bound it is refused
    naming the state file and the agent; within it, the update runs."""
    from whilecli.methods.validate import reward_bound

    b = sign * 10.0**exponent
    path = tmp_path_factory.mktemp("rae") / "state.json"
    path.write_text(json.dumps({agent: b}))
    rae = RAE()
    rae.load_state(path)
    batch = to_batch([row(1, agent), row(0, agent)], dtype=dtype)
    if abs(b) > reward_bound(dtype):
        with pytest.raises(InputError, match=rf"state\.json: field '{agent}': baseline"):
            rae.update(batch)
    else:
        up = rae.update(batch)
        assert torch.isfinite(up.coefficients).all() or dtype == torch.float32


def test_a_failed_state_write_leaves_no_output_behind(tmp_path, monkeypatch) -> None:
    """Hostile: update wrote -o, then failed writing --state (a full disk): the run exited 2
    and its rerun was refused ("exists"). Now both are written or neither."""
    from pathlib import Path

    from typer.testing import CliRunner

    from whilecli.cli import app

    data = Path(__file__).parents[1] / "data" / "batch_single.jsonl"
    out, state = tmp_path / "up.jsonl", tmp_path / "rae.json"

    def full(self, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full)
    monkeypatch.setattr(Path, "write_bytes", full)
    args = ["update", "--method", "rae", str(data), "--state", str(state), "-o", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "No space left" in result.output, result.output
    assert not out.exists() and not state.exists()
    monkeypatch.undo()
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    assert out.exists() and json.loads(state.read_text())
