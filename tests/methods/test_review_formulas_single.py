"""DESIGN section 3, clause by clause, for the single-rollout updates (FlashReinforce, SAO,
BPCO), with numbers worked out by hand in the comments; plus the edge conventions every
method shares (equal rewards, one trajectory, junk in the padding, float32 against float64).
"""

from __future__ import annotations

import math

import pytest
import torch

from whilecli.errors import InputError
from whilecli.methods.batch import Batch
from whilecli.methods.bpco import BPCO
from whilecli.methods.distill import OPD
from whilecli.methods.dpo import DPO
from whilecli.methods.flash_reinforce import FlashReinforce
from whilecli.methods.grpo import GRPO, RAE, MaxRL
from whilecli.methods.sao import SAO
from whilecli.methods.sft import SFT
from whilecli.methods.twostep import apply_correction

L = math.log
F64 = torch.float64


def close(actual: torch.Tensor, expected: list[float], rtol: float = 1e-12) -> None:
    """``actual`` (one row) equals the hand-computed ``expected``."""
    want = torch.tensor(expected, dtype=F64)
    torch.testing.assert_close(actual.to(F64), want, rtol=rtol, atol=1e-15)


def bernoulli_kl(p: float, q: float) -> float:
    """Eq. 6 with p, q clamped to [1e-6, 1 − 1e-6] (DESIGN section 3)."""
    p, q = min(max(p, 1e-6), 1 - 1e-6), min(max(q, 1e-6), 1 - 1e-6)
    return p * L(p / q) + (1 - p) * L((1 - p) / (1 - q))


# ---------------------------------------------------------------- FlashReinforce

FR_ROWS = [
    # R = 1, on-policy tokens: ρ = 1, d = 0.
    {
        "reward": 1.0,
        "logprobs": [L(0.5), L(0.25)],
        "behavior_logprobs": [L(0.5), L(0.25)],
        "action_mask": [1, 1],
    },
    # R = 0, an observation token (−3 vs −1 would give d ≠ 0 if it counted) between two
    # actions; token 2 has μ = 0.4, π = 0.5.
    {
        "reward": 0.0,
        "logprobs": [L(0.5), -3.0, L(0.5)],
        "behavior_logprobs": [L(0.5), -1.0, L(0.4)],
        "action_mask": [1, 0, 1],
    },
    # R = 0.5, on-policy.
    {"reward": 0.5, "logprobs": [-0.2], "behavior_logprobs": [-0.2], "action_mask": [1]},
]


def test_flash_reinforce_by_hand() -> None:
    # mean R = (1 + 0 + 0.5)/3 = 0.5, A = (0.5, −0.5, 0); B = 3 counts every row.
    # row 1: d_2 = 0.4 ln(0.4/0.5) + 0.6 ln(0.6/0.5) = −0.0892574 + 0.1093929 = 0.0201355;
    # D_1 = (0 + 0.0201355)/2 = 0.0100678 over the 2 action tokens.
    d_1 = (0.0 + bernoulli_kl(0.4, 0.5)) / 2
    assert d_1 == pytest.approx(0.0100678, abs=1e-7)
    batch = Batch.from_rows(FR_ROWS)
    wide = FlashReinforce(trust=0.011).update(batch)  # 0.0100678 ≤ 0.011: admitted
    # row 0: c = 0.5·1/(2·3) = 1/12; row 1: c = −0.5·ρ/(2·3), ρ = (1, —, 0.5/0.4 = 1.25);
    # row 2: A = 0, c = 0.
    close(wide.coefficients[0, :2], [1 / 12, 1 / 12])
    close(wide.coefficients[1], [-1 / 12, 0.0, -0.5 * 1.25 / 6])
    close(wide.coefficients[2, :1], [0.0])
    assert wide.admitted.tolist() == [True, True, True]
    # A is constant along a trajectory.
    close(wide.advantages[1, [0, 2]], [-0.5, -0.5])
    tight = FlashReinforce(trust=0.01).update(batch)  # 0.0100678 > 0.01: row 1 gated
    assert tight.admitted.tolist() == [True, False, True]
    close(tight.coefficients[1], [0.0, 0.0, 0.0])
    # B and the mean still count the gated row: row 0 is unchanged.
    close(tight.coefficients[0, :2], [1 / 12, 1 / 12])
    assert tight.value_targets is None


def test_flash_reinforce_gate_is_inclusive() -> None:
    rows = [{"reward": 1.0, "logprobs": [L(0.5), L(0.3)], "behavior_logprobs": [L(0.4), L(0.3)]}]
    d = FlashReinforce(trust=math.inf).update(Batch.from_rows(rows)).stats["max_kl"]
    assert d == pytest.approx(bernoulli_kl(0.4, 0.5) / 2, rel=1e-12)
    batch = Batch.from_rows(rows)
    assert FlashReinforce(trust=d).update(batch).admitted.tolist() == [True]  # D = trust
    below = math.nextafter(d, 0.0)
    assert FlashReinforce(trust=below).update(batch).admitted.tolist() == [False]


def test_flash_reinforce_ratio_clamp_and_kl_from_unclamped_logprobs() -> None:
    rows = [
        # log π − log μ = −0.5 + 40 = 39.5 → clamped to 30: ρ = e^30.
        {"reward": 1.0, "logprobs": [-0.5], "behavior_logprobs": [-40.0]},
        # log π − log μ = −39.5 → ρ = e^−30.
        {"reward": 0.0, "logprobs": [-40.0], "behavior_logprobs": [-0.5]},
    ]
    update = FlashReinforce(trust=math.inf).update(Batch.from_rows(rows))
    # A = (0.5, −0.5), T = 1, B = 2: c = ±0.5 ρ / 2.
    close(update.coefficients[0], [0.5 * math.exp(30.0) / 2])
    close(update.coefficients[1], [-0.5 * math.exp(-30.0) / 2])
    # KL from the raw probabilities: row 0 p = μ = e^−40 → 1e-6, q = e^−0.5 = 0.6065;
    # row 1 p = 0.6065, q = e^−40 → 1e-6: d = 0.6065·ln(0.6065/1e-6)
    #   + 0.3935·ln(0.3935/(1 − 1e-6)) = 8.0763 − 0.3670 = 7.7093.
    d0 = bernoulli_kl(math.exp(-40.0), math.exp(-0.5))
    d1 = bernoulli_kl(math.exp(-0.5), math.exp(-40.0))
    assert d1 == pytest.approx(7.7093, abs=1e-4)
    cases = ((d0 * (1 - 1e-9), [False, False]), (d0 * (1 + 1e-9), [True, False]))
    for trust, expected in (*cases, (d1 * (1 + 1e-9), [True, True])):
        gated = FlashReinforce(trust=trust).update(Batch.from_rows(rows))
        assert gated.admitted.tolist() == expected


def test_flash_reinforce_refusals() -> None:
    rows = [
        {"reward": 1, "logprobs": [-1.0], "action_mask": [1]},
        {"reward": 0, "logprobs": [-1.0], "action_mask": [0]},
    ]
    with pytest.raises(InputError) as err:  # row 1 has no action token
        FlashReinforce().update(Batch.from_rows(rows))
    assert err.value.row == 1
    with pytest.raises(InputError):  # a probability passed as a log-prob
        FlashReinforce().update(Batch.from_rows([{"reward": 1.0, "logprobs": [0.5]}]))


# ---------------------------------------------------------------- SAO

SAO_ROWS = [
    # R = 1: actions at 0, 2, 3; the observation at 1 carries V = 9 that must be skipped.
    # ρ = (1, —, 1, 6.0): the last is on the band's upper edge, outside an open band.
    {
        "reward": 1.0,
        "logprobs": [-0.3, -2.0, -0.4, 0.0],
        "behavior_logprobs": [-0.3, -2.0, -0.4, -L(6.0)],
        "action_mask": [1, 0, 1, 1],
        "values": [0.2, 9.0, 0.5, 0.6],
    },
    # No action token: kept, not admitted, zeros, value targets R = 0.5.
    {
        "reward": 0.5,
        "logprobs": [-1.0, -1.0],
        "behavior_logprobs": [-1.0, -1.0],
        "action_mask": [0, 0],
        "values": [0.3, 0.3],
    },
    # R = 0: actions at 0, 1, a trailing observation with V = 0.9 (not the bootstrap);
    # ρ = (0.7 on the lower edge: outside, 1).
    {
        "reward": 0.0,
        "logprobs": [L(0.7), -0.5, -0.6],
        "behavior_logprobs": [0.0, -0.5, -0.6],
        "action_mask": [1, 1, 0],
        "values": [0.1, 0.4, 0.9],
    },
]


def test_sao_by_hand() -> None:
    update = SAO().update(Batch.from_rows(SAO_ROWS))
    # row 0: L = 3, λ = 1 − 1/(1.5·3) = 7/9; V over actions (0.2, 0.5, 0.6), V = 0 past the end:
    # δ = (0.5 − 0.2, 0.6 − 0.5, 1 − 0.6) = (0.3, 0.1, 0.4);
    # A_2 = 0.4, A_1 = 0.1 + 7/9·0.4 = 0.411111, A_0 = 0.3 + 7/9·0.411111 = 0.619753.
    lam0 = 7 / 9
    a2 = 0.4
    a1 = 0.1 + lam0 * a2
    a0 = 0.3 + lam0 * a1
    assert a0 == pytest.approx(0.619753, abs=1e-6)
    # row 2: L = 2, λ = 1 − 1/(1.5·2) = 2/3; δ = (0.4 − 0.1, 0 − 0.4) = (0.3, −0.4);
    # A_1 = −0.4, A_0 = 0.3 − 2/3·0.4 = 0.033333.
    b1 = -0.4
    b0 = 0.3 + (2 / 3) * b1
    # N = 3 + 0 + 2 = 5 action tokens; c = f(ρ) A / N.
    close(update.coefficients[0], [a0 / 5, 0.0, a1 / 5, 0.0])
    close(update.coefficients[1, :2], [0.0, 0.0])
    close(update.advantages[1, :2], [0.0, 0.0])
    close(update.coefficients[2, :3], [0.0, b1 / 5, 0.0])
    close(update.advantages[0, [0, 2, 3]], [a0, a1, a2])
    close(update.advantages[2, :2], [b0, b1])
    assert update.admitted.tolist() == [True, False, True]
    # value targets: the return R (γ = 1) on every token, observation tokens included.
    assert update.value_targets is not None
    close(update.value_targets[0], [1.0, 1.0, 1.0, 1.0])
    close(update.value_targets[1, :2], [0.5, 0.5])
    close(update.value_targets[2, :3], [0.0, 0.0, 0.0])


def test_sao_band_overflow_and_lambda_floor() -> None:
    rows = [
        # ρ = e^800 overflows to ∞: outside the band, coefficient 0, not NaN.
        {
            "reward": 1.0,
            "logprobs": [0.0, -0.1],
            "behavior_logprobs": [-800.0, -0.1],
            "values": [0.5, 0.5],
        },
        # every token outside the band: not admitted, still counted in N.
        {"reward": 0.0, "logprobs": [-3.0], "behavior_logprobs": [-0.1], "values": [0.25]},
    ]
    update = SAO(gae_alpha=0.25).update(Batch.from_rows(rows))
    # α = 0.25, L = 2: λ = max(0, 1 − 1/0.5) = 0, so A = δ: (0.5 − 0.5, 1 − 0.5) = (0, 0.5).
    # N = 3: c = (0 [ρ = ∞], 1·0.5/3); row 1: ρ = e^−2.9 = 0.055 < 0.7, c = 0.
    close(update.coefficients[0], [0.0, 0.5 / 3])
    close(update.advantages[0], [0.0, 0.5])
    close(update.coefficients[1, :1], [0.0])
    close(update.advantages[1, :1], [-0.25])  # L = 1: λ = 0, δ = 0 − 0.25
    assert update.admitted.tolist() == [True, False]
    assert bool(torch.isfinite(update.coefficients).all())


@pytest.mark.parametrize("method", [SAO, BPCO])
def test_critic_methods_require_values(method: type) -> None:
    with pytest.raises(InputError):
        method().update(Batch.from_rows([{"reward": 1.0, "logprobs": [-1.0]}]))


# ---------------------------------------------------------------- BPCO

BPCO_ROWS = [
    # R = 1, L = 3, V = (0.5, 0.25, 0.75). ρ / μ per token:
    #   t0: μ = 1,   ρ = 0.8 (lp = ln 0.8)       half-width 0.2/1 = 0.2
    #   t1: μ = 0.5, ρ = 0.75/0.5 = 1.5          half-width 0.2/0.5 = 0.4
    #   t2: μ = 0.1, ρ = 0.25/0.1 = 2.5          half-width 0.2/0.1 = 2
    {
        "reward": 1.0,
        "logprobs": [L(0.8), L(0.75), L(0.25)],
        "behavior_logprobs": [0.0, L(0.5), L(0.1)],
        "action_mask": [1, 1, 1],
        "values": [0.5, 0.25, 0.75],
    },
    # R = 0, L = 2, V = (0.5, 0.5); ρ = (1, 0.5 with μ = 1).
    {
        "reward": 0.0,
        "logprobs": [-0.2, L(0.5)],
        "behavior_logprobs": [-0.2, 0.0],
        "action_mask": [1, 1],
        "values": [0.5, 0.5],
    },
    # no action token: kept, not admitted, zeros, value target R = 1.
    {
        "reward": 1.0,
        "logprobs": [-1.0],
        "behavior_logprobs": [-1.0],
        "action_mask": [0],
        "values": [0.3],
    },
    # R = 1, L = 1, V = 0.5; μ = e^−800 underflows: half-width ∞; log ratio 799 → clamp 20.
    {
        "reward": 1.0,
        "logprobs": [-1.0],
        "behavior_logprobs": [-800.0],
        "action_mask": [1],
        "values": [0.5],
    },
]


def test_bpco_by_hand() -> None:
    update = BPCO().update(Batch.from_rows(BPCO_ROWS))
    # row 0: α = 0.4, L = 3: λ = 1 − 1/1.2 = 1/6; δ = (−0.25, 0.5, 1 − 0.75 = 0.25);
    # A_2 = 0.25, A_1 = 0.5 + 0.25/6 = 0.541667, A_0 = −0.25 + 0.541667/6 = −0.159722.
    a2 = 0.25
    a1 = 0.5 + a2 / 6
    a0 = -0.25 + a1 / 6
    assert a0 == pytest.approx(-0.159722, abs=1e-6)
    # t0: A < 0 and ρ = 0.8 ≥ 1 − 0.2 (a tie): unclipped, c = 0.8·A_0.
    # t1: A > 0 and ρ = 1.5 > 1 + 0.4: clipped, c = 0.
    # t2: A > 0 and ρ = 2.5 ≤ 1 + 2 (PPO's ε = 0.2 would clip it): c = 2.5·0.25 = 0.625.
    # no 1/B anywhere.
    close(update.coefficients[0], [0.8 * a0, 0.0, 2.5 * a2])
    close(update.advantages[0], [a0, a1, a2])
    # row 1: L = 2: λ = max(0, 1 − 1/0.8) = 0; A = δ = (0.5 − 0.5, 0 − 0.5) = (0, −0.5);
    # t0: A = 0 → c = 0; t1: A < 0, ρ = 0.5 < 0.8: clipped → 0.
    close(update.advantages[1, :2], [0.0, -0.5])
    close(update.coefficients[1, :2], [0.0, 0.0])
    close(update.coefficients[2, :1], [0.0])
    # row 3: λ = 0, A = 1 − 0.5 = 0.5; ρ = e^20 (clamped), ∞ half-width: c = 0.5 e^20.
    close(update.coefficients[3, :1], [0.5 * math.exp(20.0)])
    assert update.admitted.tolist()[2:] == [False, True]
    assert update.admitted.tolist()[0] is True
    assert update.value_targets is not None
    close(update.value_targets[0], [1.0, 1.0, 1.0])
    close(update.value_targets[2, :1], [1.0])
    # explained variance over the 6 action tokens: R = (1,1,1,0,0,1), mean 2/3,
    # Var R = 4/6 − 4/9 = 2/9; R − V = (0.5, 0.75, 0.25, −0.5, −0.5, 0.5), mean 1/6,
    # E[(R−V)²] = 1.625/6, Var = 0.270833 − 0.027778 = 35/144; EV = 1 − (35/144)/(2/9) = −3/32.
    assert update.stats["explained_variance"] == pytest.approx(-3 / 32, rel=1e-12)


def test_bpco_upper_tie_is_unclipped_and_constant_reward_has_no_ev() -> None:
    # μ = 0.5: half-width 0.2/0.5 = 0.4; π = 0.7 gives ρ = 1.4 = 1 + ε/μ exactly (a tie),
    # log π + 1e-12 gives ρ > 1.4 (clipped). L = 1: λ = 0, A = 1 − 0.5 = 0.5.
    blp = L(0.5)
    above = L(0.7) + 1e-12
    assert math.exp(L(0.7) - blp) == 1.4 < math.exp(above - blp)
    rows = [
        {"reward": 1.0, "logprobs": [L(0.7)], "behavior_logprobs": [blp], "values": [0.5]},
        {"reward": 1.0, "logprobs": [above], "behavior_logprobs": [blp], "values": [0.5]},
    ]
    update = BPCO().update(Batch.from_rows(rows))
    close(update.coefficients[:, 0], [1.4 * 0.5, 0.0])
    assert update.admitted.tolist() == [True, False]
    assert update.stats["explained_variance"] is None  # R does not vary


def test_bpco_refuses_values_outside_reward_range() -> None:
    with pytest.raises(InputError):
        BPCO().update(Batch.from_rows([{"reward": 1.0, "logprobs": [-1.0], "values": [1.5]}]))
    shifted = BPCO(reward_range=(-2.0, 2.0)).update(
        Batch.from_rows([{"reward": 1.0, "logprobs": [-1.0], "values": [1.5]}])
    )
    close(shifted.coefficients[0], [-0.5])  # A = 1 − 1.5, ρ = 1, A < 0, ρ ≥ 0.8


# ---------------------------------------------------------------- edge conventions

EDGE_ROWS = [
    {"task_id": "a", "reward": 1.0, "logprobs": [-0.2, -0.5, -0.1],
     "behavior_logprobs": [-0.25, -0.45, -0.1], "values": [0.5, 0.6, 0.7],
     "ref_logprobs": [-0.3, -0.4, -0.2], "teacher_logprobs": [-0.1, -0.6, -0.3],
     "action_mask": [1, 0, 1]},
    {"task_id": "a", "reward": 0.0, "logprobs": [-0.7, -0.3], "behavior_logprobs": [-0.6, -0.35],
     "values": [0.4, 0.2], "ref_logprobs": [-0.6, -0.3], "teacher_logprobs": [-0.5, -0.2],
     "action_mask": [1, 1]},
    {"task_id": "b", "reward": 1.0, "logprobs": [-0.4], "behavior_logprobs": [-0.41],
     "values": [0.3], "ref_logprobs": [-0.5], "teacher_logprobs": [-0.2], "action_mask": [1]},
    {"task_id": "b", "reward": 0.25, "logprobs": [-0.9, -0.2, -0.3, -0.5],
     "behavior_logprobs": [-1.0, -0.2, -0.31, -0.45], "values": [0.1, 0.9, 0.5, 0.5],
     "ref_logprobs": [-0.8, -0.3, -0.3, -0.6], "teacher_logprobs": [-0.7, -0.1, -0.4, -0.5],
     "action_mask": [1, 1, 1, 1]},
]  # fmt: skip
METHODS = {
    "flash_reinforce": lambda: FlashReinforce(trust=0.01),
    "sao": SAO,
    "bpco": BPCO,
    "grpo": lambda: GRPO(beta=0.05),
    "dr_grpo": lambda: GRPO(loss_type="dr_grpo"),
    "max_rl": MaxRL,
    "rae": RAE,
    "opd": OPD,
    "dpo": lambda: DPO(pass_threshold=1.0),
    "sft": SFT,
}
LISTS = ("logprobs", "behavior_logprobs", "values", "ref_logprobs", "teacher_logprobs")


def junk_padded(rows: list[dict]) -> Batch:
    """The rows as padded tensors whose padding holds NaN, +inf and −inf."""
    t_max = max(len(r["logprobs"]) for r in rows)
    junk = [math.nan, math.inf, -math.inf]
    tensors = {}
    for name in LISTS:
        data = [r[name] + [junk[(i + k) % 3] for k in range(t_max - len(r[name]))]
                for i, r in enumerate(rows)]  # fmt: skip
        tensors[name] = torch.tensor(data, dtype=F64)
    lengths = [len(r["logprobs"]) for r in rows]
    action = [
        r.get("action_mask", [1] * n) + [0] * (t_max - n)
        for r, n in zip(rows, lengths, strict=True)
    ]
    return Batch.from_tensors(
        tensors.pop("logprobs"),
        rewards=[r["reward"] for r in rows],
        lengths=lengths,
        action_mask=torch.tensor(action, dtype=torch.bool),
        task_ids=[r["task_id"] for r in rows],
        **tensors,
    )


@pytest.mark.parametrize("name", sorted(METHODS))
def test_junk_in_padding_never_leaks(name: str) -> None:
    clean_batch = Batch.from_rows(EDGE_ROWS)
    clean = METHODS[name]().update(clean_batch)
    junk_batch = junk_padded(EDGE_ROWS)
    dirty = METHODS[name]().update(junk_batch)
    assert bool(torch.isfinite(dirty.coefficients).all())
    torch.testing.assert_close(dirty.coefficients, clean.coefficients, rtol=1e-12, atol=0)
    assert float(dirty.coefficients[~junk_batch.mask].abs().sum()) == 0.0
    assert bool(clean.coefficients.abs().sum() > 0)  # the case is not vacuous
    for key, value in dirty.stats.items():
        assert value is None or math.isfinite(value), key
    for corr in ("ipo", "icepop", "tis"):
        fixed = apply_correction(dirty, junk_batch, corr).coefficients
        torch.testing.assert_close(fixed, apply_correction(clean, clean_batch, corr).coefficients)
        assert bool(torch.isfinite(fixed).all())


@pytest.mark.parametrize("name", sorted(METHODS))
def test_float32_agrees_with_float64(name: str) -> None:
    wide = METHODS[name]().update(Batch.from_rows(EDGE_ROWS))
    narrow = METHODS[name]().update(Batch.from_rows(EDGE_ROWS, dtype=torch.float32))
    assert narrow.coefficients.dtype == torch.float32
    assert wide.coefficients.dtype == F64  # float64 on CPU by default
    torch.testing.assert_close(narrow.coefficients.to(F64), wide.coefficients, rtol=1e-5, atol=1e-7)
    assert narrow.admitted.tolist() == wide.admitted.tolist()


@pytest.mark.parametrize("name", ["flash_reinforce", "dr_grpo", "max_rl", "grpo"])
def test_equal_rewards_give_zero_advantages(name: str) -> None:
    rows = [dict(r, reward=0.5) for r in EDGE_ROWS]
    method = GRPO() if name == "grpo" else METHODS[name]()  # grpo without the β term
    update = method.update(Batch.from_rows(rows))
    assert float(update.advantages.abs().sum()) == 0.0
    assert float(update.coefficients.abs().sum()) == 0.0


def test_single_trajectory() -> None:
    row = dict(EDGE_ROWS[3])
    batch = Batch.from_rows([row])
    # FlashReinforce: A = R − R = 0.
    assert float(FlashReinforce().update(batch).coefficients.abs().sum()) == 0.0
    rho = [math.exp(a - b) for a, b in zip(row["logprobs"], row["behavior_logprobs"], strict=True)]
    # rae: A = R − 0 = 0.25, w = 1/(4·1), every ρ within (0.8, 1.2): c = ρ·0.25/4.
    close(RAE().update(batch).coefficients[0], [r * 0.25 / 4 for r in rho])
    # SAO: L = 4, λ = 1 − 1/(1.5·4) = 5/6, V = (0.1, 0.9, 0.5, 0.5), R = 0.25:
    # δ = (0.8, −0.4, 0, 0.25 − 0.5) → A_3 = −0.25, A_2 = −0.208333, A_1 = −0.573611,
    # A_0 = 0.8 − 5/6·0.573611 = 0.321991. N = 4, every ρ in (0.7, 6): c = ρ A / 4.
    adv = [-0.25]
    for d in (0.0, -0.4, 0.8):
        adv.insert(0, d + 5 / 6 * adv[0])
    assert adv[0] == pytest.approx(0.321991, abs=1e-6)
    sao = SAO().update(batch)
    close(sao.coefficients[0], [r * a / 4 for r, a in zip(rho, adv, strict=True)])
