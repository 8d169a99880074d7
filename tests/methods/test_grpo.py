"""GRPO, bnpo, dr_grpo and max_rl: hand-computed cases, properties against the slow loops,
invariants, refusals, and the learning test."""

from __future__ import annotations

import math
import random
import socket

import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from batch_strategies import well_conditioned
from slow_reference_grouped import _surrogate as _slow_surrogate
from slow_reference_grouped import (
    random_rows,
    slow_correction,
    slow_group_advantages,
    slow_grpo,
    slow_max_rl,
    to_batch,
)
from toy_policy import train_toy
from whilecli.errors import InputError, UsageError
from whilecli.methods.dpo import DPO
from whilecli.methods.groups import group_ids, group_stats
from whilecli.methods.grpo import GRPO, RAE, MaxRL, group_advantages_reference, grpo_reference
from whilecli.methods.validate import correction_needs


def row(task: str, reward: float, n: int, **extra: object) -> dict:
    """An on-policy row of ``n`` action tokens, each with log-prob −0.5."""
    out = {"task_id": task, "reward": reward, "logprobs": [-0.5] * n, "action_mask": [1] * n}
    out.update(extra)
    return out


def assert_close(fast: torch.Tensor, slow: list[list[float]]) -> None:
    for i, r in enumerate(slow):
        for t, v in enumerate(r):
            assert fast[i, t].item() == pytest.approx(v, rel=1e-9, abs=1e-12), (i, t)
        assert torch.all(fast[i, len(r) :] == 0)


# --- groups ---------------------------------------------------------------------------


def test_group_stats_by_hand() -> None:
    ids = group_ids(["x", "y", "x", "x", "z"])
    assert ids.tolist() == [0, 1, 0, 0, 2]
    gs = group_stats(torch.tensor([1.0, 3.0, 0.0, 2.0, 5.0], dtype=torch.float64), ids)
    assert gs.counts.tolist() == [3, 1, 1]
    assert gs.mean.tolist() == pytest.approx([1.0, 3.0, 5.0])
    assert gs.std[0].item() == pytest.approx(1.0)  # sample std of 1, 0, 2
    assert gs.std[1].item() == 0 and gs.unanimous.tolist() == [False, True, True]


def test_unanimity_is_decided_on_the_rewards_within_1e_9_not_a_small_std() -> None:
    # 0.1 and 0.1 + 1e-15 are one reward (a rounding difference): unanimous. 2e-9 apart is a
    # split, though its std (1.4e-9) is as small: the rule reads the rewards, not the std.
    r = torch.tensor([0.1, 0.1 + 1e-15, 0.3, 0.3, 0.5, 0.5 + 2e-9], dtype=torch.float64)
    gs = group_stats(r, group_ids(["a", "a", "b", "b", "c", "c"]))
    assert gs.unanimous.tolist() == [True, True, False]


# --- grpo by hand -----------------------------------------------------------------------


def test_grpo_hand_computed() -> None:
    rows = [row("a", 1, 2), row("a", 0, 4), row("b", 1, 3), row("a", 0, 1), row("b", 1, 2)]
    up = GRPO().update(to_batch(rows))
    # task a: rewards 1, 0, 0; mean 1/3, sample std √(1/3); A = 2/√3 and −1/√3. Task b: A = 0.
    a_pass, a_fail = 2 / math.sqrt(3), -1 / math.sqrt(3)
    b = 5
    assert up.coefficients[0, :2].tolist() == pytest.approx([a_pass / (2 * b)] * 2)
    assert up.coefficients[1, :4].tolist() == pytest.approx([a_fail / (4 * b)] * 4)
    assert up.coefficients[3, 0].item() == pytest.approx(a_fail / (1 * b))
    assert torch.all(up.coefficients[[2, 4]] == 0)
    assert up.advantages[0, 0].item() == pytest.approx(a_pass)
    assert up.admitted.tolist() == [True, True, False, True, False]
    assert up.stats["unanimous_groups"] == 1
    assert any("A = 0 for 2 rows in 1 of 2 groups" in n for n in up.notes)


def test_grpo_clip_branches_by_hand() -> None:
    # A > 0 row: ρ = 1.5 is clipped (1.5 > 1.2), ρ = 0.5 is kept. A < 0 row: ρ = 0.5 is
    # clipped (< 0.8), ρ = 1.5 is kept with its unbounded ratio.
    lp = [-2.0, -2.0]
    rows = [
        row("a", 1, 2, behavior_logprobs=[-2 - math.log(1.5), -2 - math.log(0.5)]),
        row("a", 0, 2, behavior_logprobs=[-2 - math.log(0.5), -2 - math.log(1.5)]),
    ]
    rows[0]["logprobs"] = rows[1]["logprobs"] = lp
    up = GRPO().update(to_batch(rows))
    a = 0.5 / math.sqrt(0.5)  # (1 − 0.5)/std, sample std of {1, 0} = √0.5
    w = 1 / (2 * 2)
    assert up.coefficients[0].tolist() == pytest.approx([0.0, w * 0.5 * a])
    assert up.coefficients[1].tolist() == pytest.approx([0.0, -w * 1.5 * a])
    assert up.stats["clipped_tokens"] == 2


def test_bnpo_and_dr_grpo_weights_by_hand() -> None:
    rows = [row("a", 1, 2), row("a", 0, 6)]
    a = 0.5 / math.sqrt(0.5)
    bn = GRPO(loss_type="bnpo").update(to_batch(rows)).coefficients
    assert bn[0, 0].item() == pytest.approx(a / 8) and bn[1, 0].item() == pytest.approx(-a / 8)
    dr = GRPO(loss_type="dr_grpo").update(to_batch(rows)).coefficients
    assert dr[0, 0].item() == pytest.approx(0.5 / (6 * 2))  # A = R − mean, L_max = 6, B = 2
    dr10 = GRPO(loss_type="dr_grpo", max_len=10).update(to_batch(rows)).coefficients
    assert dr10[1, 0].item() == pytest.approx(-0.5 / (10 * 2))


def test_kl_term_by_hand() -> None:
    # unanimous group: A = 0, c = −β w (1 − r), r = exp(log π_ref − log π).
    rows = [row("a", 1, 1, ref_logprobs=[-0.25]), row("a", 1, 1, ref_logprobs=[-1.0])]
    up = GRPO(beta=0.1).update(to_batch(rows))
    w = 1 / 2
    for i, ref in enumerate([-0.25, -1.0]):
        r = math.exp(ref + 0.5)
        assert up.coefficients[i, 0].item() == pytest.approx(-0.1 * w * (1 - r))
    kl = [math.exp(x + 0.5) - (x + 0.5) - 1 for x in (-0.25, -1.0)]
    assert up.stats["kl_k3_mean"] == pytest.approx(sum(kl) / 2)


def test_truncated_mask_and_zero_by_hand() -> None:
    rows = [row("a", 1, 1, truncated=True), row("a", 0, 1), row("a", 0, 1)]
    masked = GRPO().update(to_batch(rows))
    assert masked.coefficients[0, 0] == 0  # kept in the statistics, c = 0
    std = math.sqrt(1 / 3)
    assert masked.coefficients[1, 0].item() == pytest.approx((-1 / 3) / std / 3)
    zeroed = GRPO(truncated="zero").update(to_batch(rows))
    assert torch.all(zeroed.coefficients == 0)  # rewards 0, 0, 0: unanimous
    assert any("--truncated zero" in n for n in zeroed.notes)


def test_max_rl_by_hand() -> None:
    rows = [row("a", 1, 1), row("a", 0, 1), row("a", 0, 1), row("a", 0, 1), row("b", 0, 1)]
    rows.append(row("b", 0, 1))
    up = MaxRL().update(to_batch(rows))
    # mean 1/4: A = (1 − 1/4)/(1/4) = 3 and (0 − 1/4)/(1/4) = −1; group b has mean 0.
    assert up.advantages[:, 0].tolist() == pytest.approx([3, -1, -1, -1, 0, 0])
    assert up.coefficients[0, 0].item() == pytest.approx(3 / 6)
    assert up.stats["zero_mean_groups"] == 1


# --- properties against the slow loops ----------------------------------------------------


@st.composite
def batches(draw: st.DrawFn) -> list[dict]:
    rows = random_rows(draw)
    tasks = {r["task_id"] for r in rows}
    if len(tasks) == len(rows):
        rows.append(dict(rows[0]))  # at least one group of two rows
    return rows


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    batches(),
    st.sampled_from(["grpo", "bnpo", "dr_grpo"]),
    st.sampled_from(["mask", "zero"]),
    st.sampled_from([0.0, 0.05]),
    st.sampled_from([0.1, 0.2]),
)
def test_grpo_matches_slow_loop(rows, loss_type, truncated, beta, clip) -> None:
    assume(well_conditioned(rows, truncated))
    knobs = dict(loss_type=loss_type, truncated=truncated, beta=beta, clip=clip)
    fast = GRPO(**knobs).update(to_batch(rows))
    assert_close(fast.coefficients, slow_grpo(rows, **knobs))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches(), st.sampled_from(["mask", "zero"]), st.sampled_from([None, 3, 8]))
def test_max_rl_matches_slow_loop(rows, truncated, max_len) -> None:
    knobs = dict(loss_type="dr_grpo", truncated=truncated, max_len=max_len)
    fast = MaxRL(**knobs).update(to_batch(rows))
    assert_close(fast.coefficients, slow_max_rl(rows, **knobs))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches())
def test_invariants(rows) -> None:
    batch = to_batch(rows)
    up = GRPO(beta=0.05).update(batch)
    assert torch.all(up.coefficients[~batch.action_mask] == 0)
    assert torch.all(up.coefficients[batch.truncated] == 0)
    gs = group_stats(batch.rewards, group_ids(batch.task_ids))
    no_kl = GRPO().update(batch).coefficients
    assert torch.all(no_kl[gs.unanimous[gs.ids]] == 0)
    assert torch.all(up.advantages[gs.unanimous[gs.ids]] == 0)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches())
def test_grpo_scales_with_one_over_b(rows) -> None:
    copy = [dict(r, task_id=r["task_id"] + "'") for r in rows]
    one = GRPO().update(to_batch(rows)).coefficients
    two = GRPO().update(to_batch(rows + copy)).coefficients
    w = one.shape[1]
    assert torch.allclose(two[: len(rows), :w], one / 2, rtol=1e-12, atol=0)


# --- refusals ---------------------------------------------------------------------------


def test_refuses_missing_task_ids() -> None:
    batch = to_batch([row("a", 1, 1), row("a", 0, 1)])
    batch.task_ids = None
    with pytest.raises(InputError, match="task_id"):
        GRPO().update(batch)
    batch.task_ids = ["a", ""]
    with pytest.raises(InputError, match=r"row 1: field 'task_id'"):
        MaxRL().update(batch)


def test_refuses_one_row_per_task_and_names_single_rollout_methods() -> None:
    batch = to_batch([row("a", 1, 1), row("b", 0, 1)])
    with pytest.raises(InputError) as err:
        GRPO().update(batch)
    for name in ("flash_reinforce", "sao", "bpco", "rae"):
        assert name in str(err.value)


def test_refuses_beta_without_reference_and_bad_logprobs() -> None:
    batch = to_batch([row("a", 1, 1), row("a", 0, 1)])
    with pytest.raises(InputError, match="ref_logprobs"):
        GRPO(beta=0.1).update(batch)
    batch.logprobs[1, 0] = float("nan")
    with pytest.raises(InputError, match=r"row 1: field 'logprobs'"):
        GRPO().update(batch)


def test_max_rl_refuses_negative_reward() -> None:
    with pytest.raises(InputError, match=r"row 1: field 'reward'"):
        MaxRL().update(to_batch([row("a", 1, 1), row("a", -1, 1)]))


@pytest.mark.parametrize(
    ("knobs", "name"),
    [
        ({"loss_type": "ppo"}, "loss_type"),
        ({"clip": 0}, "clip"),
        ({"clip": 1.5}, "clip"),
        ({"beta": -0.1}, "beta"),
        ({"beta": float("nan")}, "beta"),
        ({"max_len": 0}, "max_len"),
        ({"truncated": "drop"}, "truncated"),
    ],
)
def test_knobs_refused_naming_knob_default_and_value(knobs: dict, name: str) -> None:
    with pytest.raises(UsageError) as err:
        GRPO(**knobs)
    text = str(err.value)
    assert name in text and "default" in text and repr(next(iter(knobs.values()))) in text


# --- learning ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "factory",
    [
        GRPO,
        lambda: GRPO(loss_type="bnpo"),
        lambda: GRPO(loss_type="dr_grpo"),
        lambda: GRPO(beta=0.05),
        MaxRL,
    ],
    ids=["grpo", "bnpo", "dr_grpo", "grpo_kl", "max_rl"],
)
def test_toy_policy_learns(factory) -> None:
    before, after = train_toy(factory, steps=30, seed=1)
    assert after > before + 0.4, (before, after)


# --- data-parallel ranks ----------------------------------------------------------------


def _rank_worker(rank: int, port: int, parts: list[list[dict]], out: str) -> None:
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    try:
        batch = to_batch(parts[rank])
        result = {
            name: m.update(batch, group=True).coefficients
            for name, m in [
                ("grpo", GRPO(loss_type="bnpo")),
                ("max_rl", MaxRL(loss_type="dr_grpo")),
                ("rae", RAE()),
                ("dpo", DPO(pass_threshold=0.5)),
            ]
        }
        torch.save(result, f"{out}.{rank}")
    finally:
        dist.destroy_process_group()


@pytest.mark.slow
def test_two_ranks_equal_one_process_on_the_global_batch(tmp_path) -> None:
    import torch.multiprocessing as mp

    rng = random.Random(7)
    rows = []
    for i in range(12):
        n = rng.randint(1, 5)
        rows.append(
            {
                "task_id": f"t{i % 4}",
                "reward": rng.choice([0.0, 0.5, 1.0]),
                "logprobs": [-rng.random() for _ in range(n)],
                "ref_logprobs": [-rng.random() for _ in range(n)],
                "action_mask": [1] * n,
            }
        )
    whole = to_batch(rows)
    expected = {
        "grpo": GRPO(loss_type="bnpo").update(whole).coefficients,
        "max_rl": MaxRL(loss_type="dr_grpo").update(whole).coefficients,
        "rae": RAE().update(whole).coefficients,
        "dpo": DPO(pass_threshold=0.5).update(whole).coefficients,
    }
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    parts = [rows[:5], rows[5:]]
    mp.spawn(_rank_worker, args=(port, parts, str(tmp_path / "out")), nprocs=2, join=True)
    for rank, start in [(0, 0), (1, 5)]:
        got = torch.load(tmp_path / f"out.{rank}")
        for name, c in got.items():
            for i, r in enumerate(parts[rank]):
                n = len(r["logprobs"])
                assert torch.allclose(c[i, :n], expected[name][start + i, :n], rtol=1e-12), name


def test_requires_names_the_fields_each_method_needs() -> None:
    assert GRPO.requires == {"task_ids"} and MaxRL.requires == {"task_ids"}
    assert GRPO(beta=0.1).requires == {"task_ids", "ref_logprobs"}
    assert RAE.requires == frozenset() and DPO.requires == {"task_ids", "ref_logprobs"}


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_float32_matches_cpu_float64() -> None:
    from whilecli.methods.distill import OPD
    from whilecli.methods.sft import SFT
    from whilecli.methods.twostep import apply_correction

    rng = random.Random(11)
    rows = []
    for i in range(24):
        n = rng.randint(1, 9)
        lp = [-rng.randint(0, 24) / 8 for _ in range(n)]
        rows.append(
            {
                "task_id": f"t{i % 5}",
                "agent": "ab"[i % 2],
                "reward": rng.choice([0.0, 0.5, 1.0]),
                "truncated": i % 7 == 0,
                "logprobs": lp,
                "behavior_logprobs": [min(0.0, x + rng.randint(-6, 6) / 8) for x in lp],
                "ref_logprobs": [-rng.randint(0, 24) / 8 for _ in range(n)],
                "teacher_logprobs": [-rng.randint(0, 24) / 8 for _ in range(n)],
                "action_mask": [k == 0 or rng.random() < 0.8 for k in range(n)],
            }
        )
    cpu = to_batch(rows)
    gpu = to_batch(rows, dtype=torch.float32)
    for name in ("logprobs", "behavior_logprobs", "ref_logprobs", "teacher_logprobs"):
        setattr(gpu, name, getattr(gpu, name).cuda())
    for name in ("mask", "action_mask", "rewards", "truncated"):
        setattr(gpu, name, getattr(gpu, name).cuda())
    makers = [
        lambda: GRPO(beta=0.05),
        lambda: GRPO(loss_type="dr_grpo"),
        MaxRL,
        RAE,
        OPD,
        lambda: DPO(pass_threshold=0.5),
        lambda: SFT(pass_threshold=0.5),
    ]
    for make in makers:
        want = make().update(cpu).coefficients
        got = make().update(gpu).coefficients
        assert got.is_cuda
        assert torch.allclose(got.cpu().double(), want, rtol=1e-5, atol=1e-7)
    for name in ("ipo", "icepop", "tis"):
        want = apply_correction(GRPO().update(cpu), cpu, name).coefficients
        got = apply_correction(GRPO().update(gpu), gpu, name).coefficients
        assert torch.allclose(got.cpu().double(), want, rtol=1e-5, atol=1e-7)


# --- rewards a rounding apart -------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.floats(0.0, 1.0), min_size=1, max_size=4),
    st.data(),
    st.sampled_from([torch.float64, torch.float32]),
)
def test_rewards_within_1e_9_are_one_reward_in_every_dtype(bases, data, dtype) -> None:
    """A group whose rewards differ by at most 1e-12 (0.1 + 0.2 and 0.3, a rubric summed in
    another order) is unanimous: A = 0 and c = 0 for grpo, dr_grpo and max_rl, in float64 and
    float32, in the fast path, the plain function and the slow loop alike; a split group
    beside it keeps its advantages."""
    rows = []
    for g, base in enumerate(bases):
        k = data.draw(st.integers(2, 5))
        for _ in range(k):
            noise = data.draw(st.floats(-1e-12, 1e-12))
            rows.append(row(f"near{g}", min(max(base + noise, 0.0), 1.0), 2))
    rows += [row("split", 1.0, 2), row("split", 0.0, 3)]
    batch = to_batch(rows, dtype=dtype)
    near = torch.tensor([r["task_id"] != "split" for r in rows])
    for method in (GRPO(), GRPO(loss_type="dr_grpo"), MaxRL()):
        up = method.update(batch)
        assert torch.all(up.advantages[near] == 0), method.name
        assert torch.all(up.coefficients[near] == 0), method.name
        assert torch.all(up.advantages[~near][batch.action_mask[~near]] != 0), method.name
    group = group_ids(batch.task_ids)
    for kind in ("grpo", "dr_grpo", "max_rl"):
        assert torch.all(group_advantages_reference(batch.rewards, group, kind)[near] == 0)
        assert all(
            a == 0 for a, n in zip(slow_group_advantages(rows, kind), near, strict=True) if n
        )
    c = grpo_reference(batch.rewards, group, batch.logprobs, batch.action_mask)
    assert torch.all(c[near] == 0)
    assert slow_grpo(rows)[: int(near.sum())] == [[0.0] * len(r["logprobs"]) for r in rows[:-2]]


def test_point_one_plus_point_two_and_point_three_are_unanimous() -> None:
    rows = [row("a", 0.1 + 0.2, 1), row("a", 0.3, 1), row("b", 1.0, 1), row("b", 0.0, 1)]
    for dtype in (torch.float64, torch.float32):
        up = GRPO().update(to_batch(rows, dtype=dtype))
        assert up.advantages[:2, 0].tolist() == [0.0, 0.0]
        assert "unanimous (every reward within 1e-9 of the others)" in " ".join(up.notes)


# --- an overflowed ratio under a correction -----------------------------------------------


def _overflowing(truncated: bool = False) -> list[dict]:
    """Two rows of one task (A = ±1/√2) whose first token's ratio exp(log π − log μ)
    overflows (log μ = −800); the second token is near the sampler."""
    lp = [math.log(0.9), math.log(0.9)]
    mu = [-800.0, math.log(0.85)]
    return [
        row("a", 1.0, 2, logprobs=lp, behavior_logprobs=mu),
        row("a", 0.0, 2, logprobs=lp, behavior_logprobs=mu, truncated=truncated),
        row("b", 1.0, 2, logprobs=lp, behavior_logprobs=[math.log(0.8)] * 2),
        row("b", 0.0, 2, logprobs=lp, behavior_logprobs=[math.log(0.95)] * 2),
    ]


@pytest.mark.parametrize("method", [GRPO(), GRPO(loss_type="bnpo"), MaxRL()])
@pytest.mark.parametrize("correction", ["icepop", "tis"])
def test_a_correction_that_makes_an_overflowed_ratio_finite_is_not_refused(
    method: GRPO, correction: str
) -> None:
    """icepop masks ρ = ∞ (outside [0.5, 5]) and tis replaces it by min(ρ, 2): the spec's c
    is finite, and the update gives it, as the slow loop does, on the whole batch and on
    micro-batches corrected one at a time."""
    rows = _overflowing()
    batch = to_batch(rows)
    kind = "max_rl" if isinstance(method, MaxRL) else "grpo"
    adv = slow_group_advantages(rows, "dr_grpo" if method.loss_type == "dr_grpo" else kind)
    knobs = dict(loss_type=method.loss_type, clip=0.2, beta=0.0, max_len=None, truncated="mask")
    pg = _slow_surrogate(rows, adv, **knobs)
    tis_pg = _slow_surrogate(rows, adv, part="tis", **knobs) if correction == "tis" else None
    want = slow_correction(rows, pg, correction, tis_pg=tis_pg)
    got = method.update(batch, correction=correction)
    assert bool(torch.isfinite(got.coefficients).all())
    assert_close(got.coefficients, want)
    stats = method.batch_stats(batch, also=correction_needs(correction))
    for part in batch.split(2):
        own = method.coefficients(part, stats, correction=correction)
        rows_at = part.rows.tolist()
        assert_close(own.coefficients, [want[i] for i in rows_at])


def test_an_overflowed_ratio_the_spec_keeps_is_refused() -> None:
    """Without a correction (A < 0, ρ = ∞ on the unclipped branch: c = −∞), or under ipo
    where |π − μ| ≤ 0.3 keeps the token (π = 0.2, μ ≈ 0), the spec's c is not finite."""
    rows = _overflowing()
    with pytest.raises(InputError, match=r"row 1: field 'behavior_logprobs': the ratio"):
        GRPO().update(to_batch(rows))
    kept = [dict(r, logprobs=[math.log(0.2), r["logprobs"][1]]) for r in rows]
    with pytest.raises(InputError, match=r"row 1: field 'behavior_logprobs': the ratio"):
        GRPO().update(to_batch(kept), correction="ipo")
    stats = GRPO().batch_stats(to_batch(rows))
    with pytest.raises(InputError, match="overflows"):
        GRPO().coefficients(to_batch(rows), stats)


def test_an_overflowed_ratio_on_a_row_that_carries_no_loss_gives_c_0() -> None:
    """A truncated row under --truncated mask gets c = 0 whatever its ratio (its w_i = 0 used
    to meet ρ = ∞ as 0·∞ = NaN, and the batch was refused)."""
    rows = _overflowing(truncated=True)
    up = GRPO().update(to_batch(rows))
    assert up.coefficients[1].tolist() == [0.0, 0.0]
    assert_close(up.coefficients, slow_grpo(rows))
    plain = grpo_reference(
        up.advantages.new_tensor([r["reward"] for r in rows]),
        group_ids([r["task_id"] for r in rows]),
        to_batch(rows).logprobs,
        to_batch(rows).action_mask,
        behavior_logp=to_batch(rows).behavior_logprobs,
        truncated=to_batch(rows).truncated,
    )
    assert torch.equal(plain, up.coefficients)
