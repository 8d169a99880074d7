"""GroupwiseGrading (GRS / GAR): hand-computed cases, a plain-Python loop, properties, bad input."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError, UsageError
from whilecli.methods.groupwise import GroupwiseGrading, check_spread
from whilecli.methods.rowio import read_table

# ---------------------------------------------------------------- slow references


def gar_reference(
    tasks: list[str],
    rewards: list[float],
    factors: list[float | None] | None,
    ranks: list[float | None] | None,
    hacks: list[bool],
    *,
    cap: float = 3.0,
    min_factor: float = 0.5,
    threshold: float = 1.0,
    hack_zero: bool = True,
) -> tuple[list[float], list[float]]:
    """GAR by the equations, one group at a time: (advantage A', reward A' + mean R)."""
    adv = [0.0] * len(tasks)
    rew = [0.0] * len(tasks)
    for task in dict.fromkeys(tasks):
        idx = [i for i, t in enumerate(tasks) if t == task]
        r = [rewards[i] for i in idx]
        mean_r = sum(r) / len(r)
        p0 = [x >= threshold for x in r]
        if not (any(p0) and not all(p0)):
            for i, x in zip(idx, r, strict=True):
                adv[i], rew[i] = x - mean_r, x
            continue
        hacked = [hack_zero and hacks[i] and p for i, p in zip(idx, p0, strict=True)]
        r1 = [0.0 if h else x for h, x in zip(hacked, r, strict=True)]
        p = [a and not h for a, h in zip(p0, hacked, strict=True)]
        passes = [j for j in range(len(idx)) if p[j]]
        f: dict[int, float | None] = {}
        if factors is not None:
            f = {j: factors[idx[j]] for j in passes}
        else:
            assert ranks is not None
            ranked = [j for j in passes if ranks[idx[j]] is not None]
            n = len(ranked)
            for j in passes:
                rk = ranks[idx[j]]
                if rk is None:
                    f[j] = None
                    continue
                below = sum(1 for m in ranked if ranks[idx[m]] < rk)  # type: ignore[operator]
                ties = sum(1 for m in ranked if ranks[idx[m]] == rk)
                mean_rank = 1 + below + (ties - 1) / 2
                f[j] = 1.0 if n == 1 else 1 - (1 - min_factor) * (mean_rank - 1) / (n - 1)
        if any(v is None for v in f.values()):
            for i, x in zip(idx, r, strict=True):
                adv[i], rew[i] = x - mean_r, x
            continue
        m1 = sum(r1) / len(r1)
        a = [x - m1 for x in r1]
        s = sum(a[j] for j in passes)
        d = sum(f[j] * a[j] for j in passes)  # type: ignore[operator]
        a2 = list(a)
        if passes:
            lam = min(cap, s / d) if d > 0 else 1.0
            for j in passes:
                a2[j] = lam * f[j] * a[j]  # type: ignore[operator]
        m2 = sum(a2) / len(a2)
        for j, i in enumerate(idx):
            adv[i] = a2[j] - m2
            rew[i] = adv[i] + mean_r
    return adv, rew


def grs_reference(
    rewards: list[float], sol: list[float | None], beh: list[float | None], floor: float, thr: float
) -> list[float]:
    """GRS by the equation: R·max(floor, s_sol)·max(floor, s_beh) on scored passes."""
    out = []
    for r, s1, s2 in zip(rewards, sol, beh, strict=True):
        if r >= thr and s1 is not None and s2 is not None:
            out.append(r * max(floor, s1) * max(floor, s2))
        else:
            out.append(r)
    return out


# ---------------------------------------------------------------- hand-computed cases


def test_reference_worked_example() -> None:
    """[1, 1, 0, 0] with f = [1, 0.5]: λ = 1/0.75, passes 2/3 and 1/3, fails −1/2."""
    frame = pl.DataFrame(
        {"task_id": ["a"] * 4, "reward": [1.0, 1.0, 0.0, 0.0], "factor": [1.0, 0.5, None, None]}
    )
    res = GroupwiseGrading().apply(frame)
    adv = res.frame.get_column("advantage").to_list()
    assert adv == pytest.approx([2 / 3, 1 / 3, -0.5, -0.5], abs=1e-12)
    assert [round(x, 3) for x in adv] == [0.667, 0.333, -0.5, -0.5]
    assert res.frame.get_column("reward").to_list() == pytest.approx([7 / 6, 5 / 6, 0.0, 0.0])
    assert res.stats["lambda_mean"] == pytest.approx(4 / 3)
    assert res.stats["mean_factor"] == pytest.approx(0.75)
    assert res.stats["groups_touched"] == 1
    assert res.lambdas is not None and res.lambdas.height == 1


def test_ranking_maps_mean_ranks_linearly() -> None:
    """Ranking [2, [0, 1], 3] → {2: 1.0, 0: 0.75, 1: 0.75, 3: 0.5} (ties share a mean rank)."""
    frame = pl.DataFrame(
        {
            "problem_id": [7] * 5,
            "score": [1.0, 1.0, 1.0, 1.0, 0.0],
            "rank": [2, 2, 1, 3, None],
        }
    )
    res = GroupwiseGrading().apply(frame)
    assert res.frame.get_column("gar_factor").to_list()[:4] == pytest.approx([0.75, 0.75, 1.0, 0.5])
    assert res.columns == {
        "task_id": "problem_id",
        "reward": "score",
        "passed": "reward ≥ 1",
        "rank": "rank",
    }
    with pytest.raises(UsageError, match="min_factor"):
        GroupwiseGrading(min_factor=0.0)


def test_cap_binds() -> None:
    """R = [1, 0, 0, 0], f = 0.2: Σ A / Σ f·A = 5 > cap 3, so λ = 3 and the mean is re-subtracted."""
    frame = pl.DataFrame({"task_id": ["q"] * 4, "reward": [1.0, 0, 0, 0], "factor": [0.2, 1, 1, 1]})
    res = GroupwiseGrading().apply(frame)
    # A'' = [3·0.2·0.75, −0.25, −0.25, −0.25], mean −0.075
    assert res.frame.get_column("advantage").to_list() == pytest.approx(
        [0.525, -0.175, -0.175, -0.175]
    )
    assert res.stats["groups_capped"] == 1
    assert res.stats["lambda_max"] == 3.0


def test_hack_turns_a_pass_into_a_failure() -> None:
    frame = pl.DataFrame(
        {
            "task_id": ["q"] * 4,
            "reward": [1.0, 1.0, 0.0, 0.0],
            "factor": [0.5, 1.0, None, None],
            "hacked": [False, True, False, False],
        }
    )
    res = GroupwiseGrading().apply(frame)
    # R' = [1, 0, 0, 0]: A = [.75, −.25, −.25, −.25], λ = .75 / .375 = 2, λ f A = .75
    assert res.frame.get_column("advantage").to_list() == pytest.approx([0.75, -0.25, -0.25, -0.25])
    assert res.frame.get_column("hacked").to_list() == [False, True, False, False]
    assert res.stats["hacks_applied"] == 1
    off = GroupwiseGrading(hack_zero=False).apply(frame)
    assert off.stats["hacks_applied"] == 0
    # without hack_zero the worked example's shape returns: f = [0.5, 1] → [1/3, 2/3, −.5, −.5]
    assert off.frame.get_column("advantage").to_list() == pytest.approx([1 / 3, 2 / 3, -0.5, -0.5])


def test_missing_factor_leaves_the_group_and_counts() -> None:
    frame = pl.DataFrame(
        {
            "task_id": ["a", "a", "a", "b", "b"],
            "reward": [1.0, 1.0, 0.0, 1.0, 0.0],
            "factor": [0.5, None, None, 0.4, None],
        }
    )
    res = GroupwiseGrading().apply(frame)
    assert res.stats["grader_missing_rows"] == 1
    assert res.stats["grader_missing_groups"] == 1
    assert res.stats["groups_touched"] == 1
    adv = res.frame.get_column("advantage").to_list()
    assert adv[:3] == pytest.approx([1 / 3, 1 / 3, -2 / 3])  # plain R − mean
    assert res.frame.get_column("reward").to_list()[:3] == [1.0, 1.0, 0.0]
    assert any("left unchanged" in n for n in res.notes)


def test_grader_error_column_counts_as_missing() -> None:
    frame = pl.DataFrame(
        {
            "task_id": ["a"] * 3,
            "reward": [1.0, 1.0, 0.0],
            "solution_score": [0.5, 0.5, 0.2],
            "behavior_score": [1.0, 1.0, 1.0],
            "grader_error": [None, "timeout", None],
        }
    )
    res = GroupwiseGrading(mode="reward").apply(frame)
    assert res.frame.get_column("reward").to_list() == [0.5, 1.0, 0.0]
    assert res.stats["grader_missing_rows"] == 1


def test_grs_hand_example() -> None:
    frame = pl.DataFrame(
        {
            "reward": [1.0, 1.0, 0.0, 1.0],
            "s_solution": [0.5, None, 0.9, 0.05],
            "behaviour_score": [0.8, 1.0, 1.0, 0.5],
        }
    )
    res = GroupwiseGrading(mode="reward", floor=0.1).apply(frame)
    # 1·0.5·0.8, missing → 1, failure → 0, 1·max(0.1, 0.05)·0.5
    assert res.frame.get_column("reward").to_list() == pytest.approx([0.4, 1.0, 0.0, 0.05])
    assert res.stats["grader_missing_rows"] == 1
    assert res.stats["passes_reshaped"] == 2
    assert res.stats["groups"] is None  # no task id column: GRS needs none
    assert res.frame.get_column("reward_original").to_list() == [1.0, 1.0, 0.0, 1.0]


def test_spread_check() -> None:
    assert check_spread(np.array([0.5, 0.52, 0.49, 0.51])).no_spread  # std < 0.05
    clustered = check_spread(np.array([0.5] * 10 + [0.0]))  # std 0.14, 10/11 near median
    assert clustered.no_spread and clustered.std is not None and clustered.std > 0.05
    ninety = check_spread(np.array([0.5] * 9 + [0.0]))  # exactly 90%: not more than 90%
    assert not ninety.no_spread
    assert not check_spread(np.array([0.9])).no_spread  # one score: not checked
    frame = pl.DataFrame(
        {"task_id": ["a"] * 3, "reward": [1.0, 1.0, 0.0], "factor": [0.8, 0.8, None]}
    )
    res = GroupwiseGrading().apply(frame)
    assert res.spread.no_spread and "cannot tell passes apart" in res.spread.why


# ---------------------------------------------------------------- properties


@st.composite
def gar_rows(draw: st.DrawFn) -> dict:
    n_groups = draw(st.integers(1, 5))
    binary = draw(st.booleans())
    tasks, rewards, factors, ranks, hacks = [], [], [], [], []
    for g in range(n_groups):
        for _ in range(draw(st.integers(1, 6))):
            tasks.append(f"t{g}")
            if binary:
                rewards.append(float(draw(st.integers(0, 1))))
            else:
                rewards.append(draw(st.sampled_from([0.0, 0.25, 0.5, 1.0, 1.5, 2.0])))
            missing = draw(st.integers(0, 19)) == 0
            factors.append(None if missing else draw(st.floats(0.01, 1.0)))
            ranks.append(None if missing else float(draw(st.integers(1, 4))))
            hacks.append(draw(st.integers(0, 4)) == 0)
    return {"tasks": tasks, "rewards": rewards, "factors": factors, "ranks": ranks, "hacks": hacks}


def _frame(rows: dict, use: str) -> pl.DataFrame:
    data = {"task_id": rows["tasks"], "reward": rows["rewards"], "hack": rows["hacks"]}
    data[use] = rows["factors" if use == "factor" else "ranks"]
    return pl.DataFrame(data, schema_overrides={use: pl.Float64})


@settings(max_examples=80, deadline=None)
@given(rows=gar_rows(), use=st.sampled_from(["factor", "rank"]), cap=st.sampled_from([1.0, 3.0]))
def test_gar_matches_the_plain_loop(rows: dict, use: str, cap: float) -> None:
    # rewards up to 2: a pass threshold must be given (the route's rule)
    res = GroupwiseGrading(cap=cap, pass_threshold=1.0).apply(_frame(rows, use))
    want_adv, want_rew = gar_reference(
        rows["tasks"],
        rows["rewards"],
        rows["factors"] if use == "factor" else None,
        rows["ranks"] if use == "rank" else None,
        rows["hacks"],
        cap=cap,
    )
    assert res.frame.get_column("advantage").to_list() == pytest.approx(want_adv, abs=1e-9)
    assert res.frame.get_column("reward").to_list() == pytest.approx(want_rew, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(rows=gar_rows())
def test_gar_preserves_group_sums_and_leaves_unanimous_groups(rows: dict) -> None:
    frame = _frame(rows, "factor")
    out = GroupwiseGrading(pass_threshold=1.0).apply(frame).frame
    by = out.group_by("task_id").agg(
        adv=pl.col("advantage").sum(),
        new=pl.col("reward").sum(),
        old=pl.col("reward_original").sum(),
        unanimous=(pl.col("reward_original") >= 1.0).all()
        | (pl.col("reward_original") < 1.0).all(),
        same=(pl.col("reward") == pl.col("reward_original")).all(),
        plain=(
            (pl.col("advantage") - (pl.col("reward_original") - pl.col("reward_original").mean()))
            .abs()
            .max()
        ),
    )
    for row in by.iter_rows(named=True):
        assert math.isclose(row["adv"], 0.0, abs_tol=1e-9)
        assert math.isclose(row["new"], row["old"], abs_tol=1e-9)
        if row["unanimous"]:
            assert row["same"] and row["plain"] == 0.0


@settings(max_examples=60, deadline=None)
@given(
    data=st.lists(
        st.tuples(
            st.sampled_from([0.0, 0.5, 1.0, 2.0]),
            st.one_of(st.none(), st.floats(0.0, 1.0)),
            st.one_of(st.none(), st.floats(0.0, 1.0)),
        ),
        min_size=1,
        max_size=20,
    ),
    floor=st.sampled_from([0.0, 0.2, 0.9]),
)
def test_grs_matches_the_equation(data: list, floor: float) -> None:
    rewards, sol, beh = (list(c) for c in zip(*data, strict=True))
    frame = pl.DataFrame(
        {"reward": rewards, "solution_score": sol, "behavior_score": beh},
        schema={"reward": pl.Float64, "solution_score": pl.Float64, "behavior_score": pl.Float64},
    )
    res = GroupwiseGrading(mode="reward", floor=floor, pass_threshold=1.0).apply(frame)
    want = grs_reference(rewards, sol, beh, floor, 1.0)
    assert res.frame.get_column("reward").to_list() == pytest.approx(want, abs=1e-12)
    missing = sum(1 for r, a, b in data if r >= 1.0 and (a is None or b is None))
    assert res.stats["grader_missing_rows"] == missing


# ---------------------------------------------------------------- bad knobs, bad input


@pytest.mark.parametrize(
    ("knobs", "name"),
    [
        ({"mode": "ranked"}, "mode"),
        ({"floor": 1.0}, "floor"),
        ({"floor": -0.1}, "floor"),
        ({"cap": 0.5}, "cap"),
        ({"cap": float("nan")}, "cap"),
        ({"min_factor": 1.5}, "min_factor"),
        ({"pass_threshold": float("inf")}, "pass_threshold"),
    ],
)
def test_bad_knobs_name_the_default(knobs: dict, name: str) -> None:
    with pytest.raises(UsageError, match=rf"{name} must be .*\(default "):
        GroupwiseGrading(**knobs)


def test_missing_columns() -> None:
    with pytest.raises(InputError, match="field 'reward'"):
        GroupwiseGrading().apply(pl.DataFrame({"task_id": ["a"], "factor": [0.5]}))
    with pytest.raises(InputError, match="field 'factor': GAR needs factors or ranks"):
        GroupwiseGrading().apply(pl.DataFrame({"task_id": ["a"], "reward": [1.0]}))
    with pytest.raises(InputError, match="field 'task_id'"):
        GroupwiseGrading().apply(pl.DataFrame({"reward": [1.0], "factor": [0.5]}))
    with pytest.raises(InputError, match="field 'behavior_score'"):
        GroupwiseGrading(mode="reward").apply(
            pl.DataFrame({"reward": [1.0], "solution_score": [0.5]})
        )


def test_bad_values_name_row_and_field() -> None:
    frame = pl.DataFrame(
        {"task_id": ["a", "a"], "reward": [1.0, 0.0], "factor": [0.5, float("inf")]}
    )
    with pytest.raises(InputError, match=r"row 1: field 'factor': value is not finite"):
        GroupwiseGrading().apply(frame)
    zero = pl.DataFrame({"task_id": ["a", "a"], "reward": [1.0, 0.0], "factor": [0.0, None]})
    with pytest.raises(InputError, match=r"row 0: field 'factor': value 0.0 is outside \(0"):
        GroupwiseGrading().apply(zero)
    nan_reward = pl.DataFrame({"task_id": ["a"], "reward": [float("nan")], "factor": [0.5]})
    with pytest.raises(InputError, match=r"row 0: field 'reward'"):
        GroupwiseGrading().apply(nan_reward)
    score = pl.DataFrame({"reward": [1.0], "solution_score": [1.5], "behavior_score": [1.0]})
    with pytest.raises(InputError, match=r"field 'solution_score': value 1.5 is outside \[0"):
        GroupwiseGrading(mode="reward").apply(score)


def test_bad_values_in_files_name_file_and_line(tmp_path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(
        '{"task_id": "a", "reward": 1, "factor": 0.5}\n\n'
        '{"task_id": "a", "reward": 0, "factor": null}\n'
        '{"task_id": "a", "reward": 1, "factor": "high"}\n'
    )
    table = read_table([str(path)])
    with pytest.raises(InputError) as err:
        GroupwiseGrading().apply(table)
    assert str(err.value).startswith(f"{path}:4: field 'factor': expected a number")
    parquet = tmp_path / "rows.parquet"
    pl.DataFrame(
        {"task_id": ["a", "a"], "reward": [1.0, 0.0], "factor": [0.5, float("nan")]}
    ).write_parquet(parquet)
    table = read_table([str(parquet)])
    with pytest.raises(InputError, match=rf"{parquet}: row 1: field 'factor': value is not finite"):
        GroupwiseGrading().apply(table)
