"""The reward model's Bradley–Terry loss: pairing, loss, gradient, accuracy, bad input."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from whilecli.errors import InputError, UsageError
from whilecli.methods.reward_model import RewardModel, bt_loss, why_rarely, wilson


def pairs_reference(
    tasks: list[str], rewards: list[float], pairing: str, thr: float = 1.0
) -> list[tuple[int, int]]:
    """(chosen row, rejected row) pairs by hand: matched = i-th pass with i-th fail per task."""
    out = []
    for task in dict.fromkeys(tasks):
        wins = [i for i, t in enumerate(tasks) if t == task and rewards[i] >= thr]
        loses = [i for i, t in enumerate(tasks) if t == task and rewards[i] < thr]
        if pairing == "matched":
            out += list(zip(wins, loses, strict=False))
        else:
            out += [(w, lo) for w in wins for lo in loses]
    return sorted(out)


def total_loss(scores: list[float], pairs: list[tuple[int, int]]) -> float:
    """Σ −log σ(r_w − r_l), written out (scores kept small so exp cannot overflow)."""
    return sum(math.log(1.0 + math.exp(-(scores[w] - scores[lo]))) for w, lo in pairs)


def test_hand_pairs_and_loss() -> None:
    frame = pl.DataFrame(
        {
            "task_id": ["a", "a", "a", "a", "b", "b"],
            "reward": [1.0, 0.0, 1.0, 0.0, 1.0, 1.0],
            "score": [2.0, 1.0, 0.5, -1.0, 3.0, 3.0],
        }
    )
    res = RewardModel().pairs(frame)
    p = res.pairs
    assert list(zip(p["chosen_row"], p["rejected_row"], strict=True)) == [(0, 1), (2, 3)]
    assert p["margin"].to_list() == [1.0, 1.5]
    assert p["loss"].to_list() == pytest.approx(
        [math.log1p(math.exp(-1)), math.log1p(math.exp(-1.5))]
    )
    s1 = 1 / (1 + math.e)
    assert p["grad_chosen"][0] == pytest.approx(-s1) and p["grad_rejected"][0] == pytest.approx(s1)
    assert res.frame["rm_grad"].to_list()[4:] == [0.0, 0.0]  # task b has no fail: unpaired
    assert res.stats["rows_unpaired"] == 2 and res.stats["accuracy"] == 1.0
    assert res.columns["score"] == "score" and res.columns["reward"] == "reward"
    every = RewardModel(pairing="all").pairs(frame)
    assert every.stats["pairs"] == 4
    chosen, rejected = every.pairs["chosen_row"], every.pairs["rejected_row"]
    assert list(zip(chosen, rejected, strict=True)) == [(0, 1), (0, 3), (2, 1), (2, 3)]
    assert every.stats["accuracy"] == pytest.approx(3 / 4)  # 0.5 vs 1.0 is the wrong one


def test_explicit_pair_columns() -> None:
    frame = pl.DataFrame({"chosen_score": [1.0, 0.0, -2.0], "rejected_score": [0.0, 0.0, 1.0]})
    res = RewardModel().pairs(frame)
    assert res.source == "pair columns"
    assert res.frame["loss"].to_list() == pytest.approx(
        [math.log1p(math.exp(-1.0)), math.log(2.0), math.log1p(math.exp(3.0))]
    )
    assert res.stats["ties"] == 1 and res.stats["accuracy"] == pytest.approx(1 / 3)
    assert res.frame["grad_chosen"].to_list()[1] == pytest.approx(-0.5)


def test_loss_is_stable_for_large_margins() -> None:
    import numpy as np

    loss = bt_loss(np.array([-1000.0, 1000.0, 0.0]))
    assert loss.tolist() == pytest.approx([1000.0, 0.0, math.log(2.0)])
    frame = pl.DataFrame({"chosen_score": [-800.0], "rejected_score": [800.0]})
    res = RewardModel().pairs(frame)
    assert res.frame["loss"][0] == pytest.approx(1600.0)
    assert res.frame["grad_chosen"][0] == -1.0 and res.frame["grad_rejected"][0] == 1.0


@settings(max_examples=80, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.sampled_from(["a", "b", "c"]), st.booleans(), st.floats(-4.0, 4.0)),
        min_size=1,
        max_size=14,
    ),
    pairing=st.sampled_from(["matched", "all"]),
)
def test_pairs_and_gradient_match_finite_differences(rows: list, pairing: str) -> None:
    tasks = [t for t, _, _ in rows]
    rewards = [1.0 if ok else 0.0 for _, ok, _ in rows]
    scores = [s for _, _, s in rows]
    frame = pl.DataFrame(
        {"example_id": tasks, "correct": [ok for _, ok, _ in rows], "rm_score": scores}
    )
    res = RewardModel(pairing=pairing).pairs(frame)
    want = pairs_reference(tasks, rewards, pairing)
    got = sorted(zip(res.pairs["chosen_row"], res.pairs["rejected_row"], strict=True))
    assert got == want
    h = 1e-6
    grads = res.frame["rm_grad"].to_list()
    for i in range(len(scores)):
        up, down = list(scores), list(scores)
        up[i] += h
        down[i] -= h
        numeric = (total_loss(up, want) - total_loss(down, want)) / (2 * h)
        assert grads[i] == pytest.approx(numeric, abs=1e-6)
    if want:
        assert res.stats["mean_loss"] == pytest.approx(total_loss(scores, want) / len(want))
        right = sum(1 for w, lo in want if scores[w] > scores[lo])
        assert res.stats["accuracy"] == pytest.approx(right / len(want))
    else:
        assert res.stats["mean_loss"] is None


@pytest.mark.parametrize(("k", "n"), [(0, 5), (3, 10), (9, 10), (40, 40), (57, 128)])
def test_wilson_matches_the_textbook_formula(k: int, n: int) -> None:
    z = norm.ppf(0.975)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low, high = wilson(k, n)
    assert low == pytest.approx(max(0.0, centre - half), abs=1e-12)
    assert high == pytest.approx(min(1.0, centre + half), abs=1e-12)


def test_bad_input_and_knobs() -> None:
    with pytest.raises(InputError, match="field 'score': no reward-model score"):
        RewardModel().pairs(pl.DataFrame({"task_id": ["a"], "reward": [1.0]}))
    with pytest.raises(InputError, match="field 'reward': no reward column"):
        RewardModel().pairs(pl.DataFrame({"task_id": ["a"], "score": [1.0]}))
    with pytest.raises(InputError, match="field 'rejected_score'"):
        RewardModel().pairs(pl.DataFrame({"chosen_score": [1.0]}))
    with pytest.raises(InputError, match=r"row 1: field 'rm_score': value is not finite"):
        RewardModel().pairs(
            pl.DataFrame({"task_id": ["a", "a"], "reward": [1.0, 0.0], "rm_score": [0.0, math.nan]})
        )
    with pytest.raises(UsageError, match=r"pairing must be .*\(default matched\)"):
        RewardModel(pairing="best")
    with pytest.raises(UsageError, match=r"pass_threshold .*\(default 1.0\)"):
        RewardModel(pass_threshold=math.inf)


def test_why_rarely_names_the_program() -> None:
    assert "program" in why_rarely and "reward" in why_rarely
