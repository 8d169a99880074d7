"""ReinforceAda: the retire rule and the balanced selection against a plain-Python loop."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError, UsageError
from whilecli.methods.ada import ReinforceAda


def ada_reference(
    tasks: list[str],
    rewards: list[float],
    *,
    keep: int,
    round_size: int,
    max_rounds: int,
    exit: str,
    threshold: float,
) -> dict:
    """The rule by hand: per-task status, kept row indices (file order), advantages, stats."""
    status: dict[str, str] = {}
    p_hat: dict[str, float] = {}
    kept: dict[int, float] = {}
    for task in dict.fromkeys(tasks):
        idx = [i for i, t in enumerate(tasks) if t == task]
        right = [rewards[i] >= threshold for i in idx]
        n_right = sum(right)
        n_wrong = len(idx) - n_right
        rounds = math.ceil(len(idx) / round_size)
        if exit == "balanced":
            retired = n_right >= keep // 2 and n_wrong >= keep - keep // 2
        else:
            retired = n_right >= 1
        if retired:
            status[task] = "retired"
        elif rounds >= max_rounds:
            status[task] = "exhausted"
        else:
            status[task] = "another_round"
        p = n_right / len(idx)
        p_hat[task] = p
        if not retired:
            continue
        take_right = min(n_right, max(keep // 2, keep - n_wrong))
        take_wrong = min(n_wrong, keep - take_right)
        for i, ok in zip(idx, right, strict=True):
            if ok and take_right > 0:
                kept[i] = 1.0 - p
                take_right -= 1
            elif not ok and take_wrong > 0:
                kept[i] = 0.0 - p
                take_wrong -= 1
    n = len(p_hat)
    finished = [t for t, s in status.items() if s != "another_round"]
    with_gradient = {tasks[i] for i, a in kept.items() if a != 0.0}
    return {
        "status": status,
        "kept": sorted(kept),
        "advantage": [kept[i] for i in sorted(kept)],
        "flat": sum(p**keep + (1 - p) ** keep for p in p_hat.values()) / n,
        "no_gradient": (
            sum(1 for t in finished if t not in with_gradient) / len(finished) if finished else None
        ),
        "mean_p": sum(p_hat.values()) / n,
    }


def test_hand_example() -> None:
    """keep 4 balanced: a (3 right of 8) retires with its first 2 right and first 2 wrong."""
    frame = pl.DataFrame(
        {
            "prompt_id": ["a"] * 8 + ["b"] * 8 + ["c"] * 4,
            "reward": [1.0, 0, 0, 1, 1, 0, 0, 0] + [0.0] * 8 + [1.0] * 4,
        }
    )
    res = ReinforceAda().plan(frame)
    assert res.tasks.get_column("status").to_list() == ["retired", "another_round", "another_round"]
    assert res.tasks.get_column("rounds").to_list() == [1, 1, 1]
    assert res.selection.get_column("draw").to_list() == [0, 1, 2, 3]
    assert res.selection.get_column("advantage").to_list() == pytest.approx(
        [0.625, -0.375, -0.375, 0.625]
    )
    assert res.next_round.get_column("task_id").to_list() == ["b", "c"]
    assert res.next_round.get_column("draws").to_list() == [8, 8]
    # p̂ = 3/8, 0, 1: GRPO at k = 4 is flat on b and c for sure, on a with (3/8)^4 + (5/8)^4
    assert res.stats["grpo_flat_share"] == pytest.approx(((3 / 8) ** 4 + (5 / 8) ** 4 + 2) / 3)
    assert res.stats["retired_share"] == pytest.approx(1 / 3)
    assert res.stats["next_round_draws"] == 16
    positive = ReinforceAda(exit="positive", max_rounds=1).plan(frame)
    assert positive.tasks.get_column("status").to_list() == ["retired", "exhausted", "retired"]
    # c keeps 4 right with p̂ = 1: no gradient; b gave up: no gradient; a carries one
    assert positive.stats["no_gradient_share"] == pytest.approx(2 / 3)
    assert any("max_rounds" in n for n in positive.notes)


def test_a_rollout_is_right_when_it_passes() -> None:
    """The route's rule: reward ≥ pass_threshold (default 1.0)."""
    frame = pl.DataFrame({"task_id": ["a"] * 4, "reward": [0.69, 0.69, 0.7, 0.71]})
    res = ReinforceAda(pass_threshold=0.7).plan(frame)
    assert res.tasks.get_column("right").to_list() == [2]
    assert res.tasks.get_column("status").to_list() == ["retired"]
    # one partial reward among 12 graded rows: under a tenth, threshold 1.0 applies
    others = pl.DataFrame({"task_id": ["b"] * 8, "reward": [1.0, 0.0] * 4})
    rows = pl.concat([frame.with_columns(reward=pl.Series([1.0, 0.99, 1.0, 0.0])), others])
    default = ReinforceAda().plan(rows)
    right = dict(default.tasks.select("task_id", "right").iter_rows())
    assert right["a"] == 2
    assert default.columns["passed"] == "reward ≥ 1"


@settings(max_examples=80, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 20), min_size=1, max_size=6),
    seed_rewards=st.lists(st.sampled_from([0.0, 0.3, 0.7, 0.8, 1.0]), min_size=120, max_size=120),
    keep=st.integers(2, 6),
    extra=st.integers(0, 4),
    max_rounds=st.integers(1, 4),
    exit=st.sampled_from(["balanced", "positive"]),
    shuffle=st.randoms(use_true_random=False),
)
def test_matches_the_plain_loop(
    sizes: list[int],
    seed_rewards: list[float],
    keep: int,
    extra: int,
    max_rounds: int,
    exit: str,
    shuffle,
) -> None:
    tasks = [f"t{g}" for g, n in enumerate(sizes) for _ in range(n)]
    shuffle.shuffle(tasks)  # draws of different tasks interleave in the file
    rewards = seed_rewards[: len(tasks)]
    knobs = {
        "keep": keep,
        "round_size": keep + extra,
        "max_rounds": max_rounds,
        "exit": exit,
    }
    frame = pl.DataFrame({"task_id": tasks, "reward": rewards, "idx": list(range(len(tasks)))})
    res = ReinforceAda(**knobs, pass_threshold=0.7).plan(frame)
    want = ada_reference(tasks, rewards, **knobs, threshold=0.7)
    assert dict(res.tasks.select("task_id", "status").iter_rows()) == want["status"]
    assert res.selection.get_column("idx").to_list() == want["kept"]
    assert res.selection.get_column("advantage").to_list() == pytest.approx(want["advantage"])
    assert res.stats["grpo_flat_share"] == pytest.approx(want["flat"])
    assert res.stats["mean_p_hat"] == pytest.approx(want["mean_p"])
    if want["no_gradient"] is None:
        assert res.stats["no_gradient_share"] is None
    else:
        assert res.stats["no_gradient_share"] == pytest.approx(want["no_gradient"])
    retired = [t for t, s in want["status"].items() if s == "retired"]
    assert res.stats["retired_share"] == pytest.approx(len(retired) / len(want["status"]))
    nxt = [t for t, s in want["status"].items() if s == "another_round"]
    assert sorted(res.next_round.get_column("task_id").to_list()) == sorted(nxt)
    if exit == "balanced":  # a balanced retiree keeps exactly keep // 2 right
        per = res.selection.group_by("task_id").agg(pl.col("right").sum(), pl.len())
        assert set(per.get_column("right").to_list()) <= {keep // 2}
        assert set(per.get_column("len").to_list()) <= {keep}


@pytest.mark.parametrize(
    ("knobs", "message"),
    [
        ({"keep": 1}, r"keep must be an integer >= 2 \(default 4\), got 1"),
        (
            {"keep": 4, "round_size": 3},
            r"round_size must be an integer >= keep \(4\) \(default 8\)",
        ),
        ({"max_rounds": 0}, r"max_rounds must be .*\(default 4\), got 0"),
        ({"exit": "negative"}, r"exit must be balanced or positive \(default balanced\)"),
        (
            {"pass_threshold": float("nan")},
            r"pass_threshold must be a finite number \(default 1.0\), got nan",
        ),
        ({"pass_threshold": "high"}, r"pass_threshold must be a finite number \(default 1.0\)"),
        ({"keep": 2.5}, r"keep must be an integer"),
    ],
)
def test_bad_knobs_name_the_default(knobs: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        ReinforceAda(**knobs)


def test_bad_input() -> None:
    """A frame built in code is read by the route's rules; errors name the row, no file."""
    with pytest.raises(InputError, match="field 'task_id': no task id column") as err:
        ReinforceAda().plan(pl.DataFrame({"reward": [1.0]}))
    assert err.value.file is None
    with pytest.raises(InputError, match=r"^row 1: field 'reward': reward is inf, not a finite"):
        ReinforceAda().plan(pl.DataFrame({"task_id": ["a", "a"], "reward": [1.0, float("inf")]}))
    with pytest.raises(InputError, match=r"^row 0: field 'task_id': no task id"):
        ReinforceAda().plan(pl.DataFrame({"task_id": [None, "a"], "reward": [1.0, 0.0]}))
    with pytest.raises(InputError, match=r"outside \[0, 1\].*--pass-threshold"):
        ReinforceAda().plan(pl.DataFrame({"task_id": ["a", "a"], "reward": [2.0, 0.0]}))
    ok = ReinforceAda(pass_threshold=1.5).plan(
        pl.DataFrame({"task_id": ["a", "a"], "reward": [2.0, 0.0]})
    )
    assert ok.tasks.get_column("right").to_list() == [1]


def test_task_id_aliases_nested_and_prompt_hash(tmp_path) -> None:
    from whilecli.methods.rowio import read_table

    path = tmp_path / "rows.jsonl"
    rows = [(1.0, "x"), (0.0, "x"), (1.0, "y"), (1.0, "x"), (0.0, "x")]
    path.write_text("".join(f'{{"task": {{"key": "{k}"}}, "reward": {r}}}\n' for r, k in rows))
    res = ReinforceAda().plan(read_table([str(path)]))
    assert res.columns["task_id"] == "task.key"
    assert dict(res.tasks.select("task_id", "status").iter_rows()) == {
        "x": "retired",
        "y": "another_round",
    }
    by_prompt = pl.DataFrame({"prompt": [k for _, k in rows], "reward": [r for r, _ in rows]})
    hashed = ReinforceAda().plan(by_prompt)
    assert hashed.columns["task_id"] == "hash of prompt text (prompt)"
    assert hashed.tasks.get_column("drawn").to_list() == [4, 1]
