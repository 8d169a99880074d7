"""DESIGN section 3, clause by clause, for the grouped and other methods (grpo, bnpo, dr_grpo,
max_rl, rae, opd, opsd, dpo, sft), the corrections (ipo, icepop, tis) and the custom prime-rl
losses, with numbers worked out by hand in the comments.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from updates import eager_plain
from whilecli.emit.losses import icepop_loss, tis_loss
from whilecli.methods.batch import Batch, Update
from whilecli.methods.distill import OPD, OPSD
from whilecli.methods.dpo import DPO
from whilecli.methods.grpo import GRPO, RAE, MaxRL
from whilecli.methods.sft import SFT
from whilecli.methods.twostep import apply_correction

L = math.log
F64 = torch.float64
S = math.sqrt(1 / 3)  # sample std of (1, 0, 0): Σ(R − 1/3)² = 2/3, /(3 − 1) → 1/3


def close(actual: torch.Tensor, expected: list[float], rtol: float = 1e-12) -> None:
    """``actual`` (one row) equals the hand-computed ``expected``."""
    want = torch.tensor(expected, dtype=F64)
    torch.testing.assert_close(actual.to(F64), want, rtol=rtol, atol=1e-15)


def row(task: str, reward: float, lp: list[float], blp: list[float], **extra: object) -> dict:
    """A row with every token an action token unless ``action_mask`` says otherwise (a batch
    gives a list on every row or on none)."""
    return {"task_id": task, "reward": reward, "logprobs": lp, "behavior_logprobs": blp,
            "action_mask": [1] * len(lp), **extra}  # fmt: skip


# Group a: R = (1, 0, 0), mean 1/3, sample std √(1/3) = 0.57735:
#   A = (2/3)/0.57735 = 1.154701, −(1/3)/0.57735 = −0.577350 (twice).
# Group b: R = (0.5, 0.5), unanimous: A = 0. Group c: one row: A = 0.
# T = (3, 2, 1, 2, 2, 1): B = 6, Σ T = 11, L_max = 3.
GROUP_ROWS = [
    # ρ = (1, 1.2 = 1 + ε exactly: a tie, 1.5: clipped for A > 0)
    row("a", 1.0, [-0.1, 0.0, 0.0], [-0.1, -L(1.2), -L(1.5)]),
    # ρ = (0.9 inside, 0.5: clipped for A < 0)
    row("a", 0.0, [L(0.9), L(0.5)], [0.0, 0.0]),
    # one action token and an observation token (ρ there would be e^5, and must not count)
    row("a", 0.0, [-0.3, 0.0], [-0.3, -5.0], action_mask=[1, 0]),
    row("b", 0.5, [L(0.5), L(0.5)], [L(0.5), L(0.5)]),
    row("b", 0.5, [-0.2, -0.2], [-0.2, -0.2]),
    row("c", 1.0, [-0.4], [-0.4]),
]
A_HI, A_LO = (2 / 3) / S, -(1 / 3) / S


def test_grpo_by_hand() -> None:
    assert pytest.approx(1.154701, abs=1e-6) == A_HI
    update = GRPO().update(Batch.from_rows(GROUP_ROWS))
    # w_i = 1/(T_i B): row 0 1/18, row 1 1/12, row 2 1/6. c = w g, g = ρA or 0.
    close(update.coefficients[0], [A_HI / 18, 1.2 * A_HI / 18, 0.0])
    close(update.coefficients[1, :2], [0.9 * A_LO / 12, 0.0])
    close(update.coefficients[2], [A_LO / 6, 0.0, 0.0])
    for i in (3, 4, 5):  # unanimous group and one-row group: A = 0, c = 0
        assert float(update.coefficients[i].abs().sum()) == 0.0
    close(update.advantages[0], [A_HI, A_HI, A_HI])


def test_grpo_clip_bounds_are_exact_in_float64() -> None:
    # group (1, 0): A = ±(1/2)/√(1/2) = ±0.707107, B = 2, T = 1 → w = 1/2.
    # A < 0 with ρ = 0.8 = 1 − ε (a tie): unclipped, c = 0.8·(−0.707107)/2.
    # A > 0 with ρ = 1.2·(1 + 1e-9) > 1 + ε: clipped, c = 0.
    a = math.sqrt(0.5)
    rows = [row("a", 1.0, [0.0], [-L(1.2) - 1e-9]), row("a", 0.0, [L(0.8)], [0.0])]
    update = GRPO().update(Batch.from_rows(rows))
    close(update.coefficients[:, 0], [0.0, 0.8 * -a / 2])


def test_bnpo_and_dr_grpo_weights_by_hand() -> None:
    batch = Batch.from_rows(GROUP_ROWS)
    bnpo = GRPO(loss_type="bnpo").update(batch)  # w = 1/Σ T_j = 1/11 for every row
    close(bnpo.coefficients[0], [A_HI / 11, 1.2 * A_HI / 11, 0.0])
    close(bnpo.coefficients[2], [A_LO / 11, 0.0, 0.0])
    # dr_grpo: A = R − mean = (2/3, −1/3, −1/3), w = 1/(L_max B) = 1/(3·6) = 1/18.
    dr = GRPO(loss_type="dr_grpo").update(batch)
    close(dr.coefficients[0], [(2 / 3) / 18, 1.2 * (2 / 3) / 18, 0.0])
    close(dr.coefficients[1, :2], [0.9 * (-1 / 3) / 18, 0.0])
    # --max-len 5: w = 1/(5·6) = 1/30.
    dr5 = GRPO(loss_type="dr_grpo", max_len=5).update(batch)
    close(dr5.coefficients[2], [(-1 / 3) / 30, 0.0, 0.0])


def test_grpo_truncated_mask_versus_zero() -> None:
    rows = [dict(r) for r in GROUP_ROWS[:3]]
    rows[0]["truncated"] = True
    batch = Batch.from_rows(rows)
    # mask: row 0 keeps its reward in the statistics (A unchanged) and gets c = 0;
    # B = 3 still counts it: row 2 w = 1/(1·3).
    masked = GRPO().update(batch)
    close(masked.coefficients[0], [0.0, 0.0, 0.0])
    close(masked.coefficients[2], [A_LO / 3, 0.0, 0.0])
    # zero: row 0 scores R = 0, the group is (0, 0, 0), unanimous: every A and c is 0.
    zeroed = GRPO(truncated="zero").update(batch)
    assert float(zeroed.coefficients.abs().sum()) == 0.0


def test_grpo_k3_term_by_hand() -> None:
    rows = [dict(r, ref_logprobs=r["logprobs"]) for r in GROUP_ROWS]
    rows[3]["ref_logprobs"] = [L(0.25), L(0.5)]
    rows[0]["ref_logprobs"] = [-0.1 - L(2.0), 0.0, -L(4.0)]
    update = GRPO(beta=0.1).update(Batch.from_rows(rows))
    # row 3 (unanimous, g = 0): r = π_ref/π_θ = (0.25/0.5, 1) = (0.5, 1), w = 1/12:
    # c = w g − β w (1 − r) = (−0.1·(1/12)·0.5, 0) = (−0.0041667, 0).
    close(update.coefficients[3], [-0.1 * 0.5 / 12, 0.0, 0.0])
    # row 0: r = (0.5, 1, 0.25), w = 1/18: c = (A/18 − 0.1·0.5/18, 1.2A/18 − 0,
    # 0 [clipped] − 0.1·0.75/18).
    close(update.coefficients[0], [(A_HI - 0.05) / 18, 1.2 * A_HI / 18, -0.075 / 18])
    # elsewhere r = 1: the term vanishes and c is grpo's.
    close(update.coefficients[2], [A_LO / 6, 0.0, 0.0])


def test_grpo_exact_unanimity_and_empty_rows() -> None:
    rows = [
        row("a", 1.0, [-0.1], [-0.1]),
        row("a", 0.0, [-0.1], [-0.1]),
        row("a", 0.0, [-0.1], [-0.1], action_mask=[0]),  # no action token: c = 0, counts in B
        # 0.1 three times: the float mean is 0.10000000000000002, std ≈ 1.7e-17 ≠ 0, yet the
        # rewards are exactly equal: unanimous, A = 0.
        *[row("u", 0.1, [-0.2], [-0.2]) for _ in range(3)],
    ]
    update = GRPO().update(Batch.from_rows(rows))
    # group a: A = (A_HI, A_LO, A_LO); B = 6, T = 1: c = A/6.
    close(update.coefficients[:, 0], [A_HI / 6, A_LO / 6, 0.0, 0.0, 0.0, 0.0])


def test_max_rl_by_hand() -> None:
    rows = [
        row("a", 1.0, [-0.1], [-0.1]),
        row("a", 0.0, [-0.2], [-0.2]),
        row("a", 0.0, [-0.3, -0.3], [-0.3, -0.3]),
        row("z", 0.0, [-0.1], [-0.1]),
        row("z", 0.0, [-0.1], [-0.1]),
    ]
    update = MaxRL().update(Batch.from_rows(rows))
    # group a mean 1/3: A = (1 − 1/3)/(1/3) = 2, (0 − 1/3)/(1/3) = −1; group z mean 0: A = 0.
    # B = 5, w = 1/(T B): c = (2/5, −1/5, −1/10 per token, 0, 0).
    close(update.coefficients[:3, 0], [2 / 5, -1 / 5, -1 / 10])
    close(update.coefficients[2], [-1 / 10, -1 / 10])
    assert float(update.coefficients[3:].abs().sum()) == 0.0


def test_rae_by_hand_and_across_calls(tmp_path: Path) -> None:
    rows = [row("t", r, [-0.5], [-0.5]) for r in (1.0, 0.0, 1.0)]
    rae = RAE()
    update = rae.update(Batch.from_rows(rows))
    # b = 0: row 0 A = 1 − 0 = 1, b ← 0.95·0 + 0.05·1 = 0.05;
    # row 1 A = 0 − 0.05 = −0.05, b ← 0.0475; row 2 A = 1 − 0.0475 = 0.9525,
    # b ← 0.95·0.0475 + 0.05 = 0.095125. w = 1/(1·3): c = A/3.
    close(update.coefficients[:, 0], [1 / 3, -0.05 / 3, 0.9525 / 3])
    assert rae.baselines == {"default": pytest.approx(0.095125, rel=1e-12)}
    state = tmp_path / "rae.json"
    rae.save_state(state)
    again = RAE()
    again.load_state(state)
    nxt = again.update(Batch.from_rows([row("t", 0.0, [-0.5], [-0.5])]))
    # carried: A = 0 − 0.095125, b ← 0.95·0.095125 = 0.09036875; B = 1, T = 1.
    close(nxt.coefficients[0], [-0.095125])
    assert again.baselines["default"] == pytest.approx(0.09036875, rel=1e-12)


def test_rae_per_agent_in_file_order() -> None:
    rows = [
        row("t", 1.0, [-0.5], [-0.5], agent="x"),
        row("t", 1.0, [-0.5], [-0.5], agent="y"),
        row("t", 0.0, [-0.5], [-0.5], agent="x"),
    ]
    rae = RAE(baselines={"y": 0.5})
    update = rae.update(Batch.from_rows(rows))
    # x: A = 1 − 0 = 1, b_x ← 0.05; y: A = 1 − 0.5 = 0.5, b_y ← 0.475 + 0.05 = 0.525;
    # x: A = 0 − 0.05 = −0.05, b_x ← 0.0475. c = A/3.
    close(update.coefficients[:, 0], [1 / 3, 0.5 / 3, -0.05 / 3])
    assert rae.baselines == {
        "x": pytest.approx(0.0475, rel=1e-12),
        "y": pytest.approx(0.525, rel=1e-12),
    }


@pytest.mark.parametrize("method", [OPD, OPSD])
def test_distillation_by_hand(method: type) -> None:
    rows = [
        {"logprobs": [L(0.5), L(0.25), -9.0], "teacher_logprobs": [L(0.25), L(0.5), -0.1],
         "action_mask": [1, 1, 0]},
        {"logprobs": [-1.0], "teacher_logprobs": [-1.0], "action_mask": [1]},
    ]  # fmt: skip
    update = method().update(Batch.from_rows(rows, need_reward=False))
    # c = log π_T − log π_θ = (ln 0.25 − ln 0.5, ln 0.5 − ln 0.25, obs 0) = (−ln 2, ln 2, 0).
    close(update.coefficients[0], [-L(2.0), L(2.0), 0.0])
    close(update.coefficients[1, :1], [0.0])


def dpo_row(task: str, passed: bool, n_act: int, n_obs: int = 0) -> dict:
    """Pass rows: log π − log π_ref = +0.5 per action token; fails: −1. Observation tokens
    carry a gap of −4.9 that must not enter Δ."""
    lp, ref = (-1.0, -1.5) if passed else (-2.0, -1.0)
    return {
        "task_id": task,
        "reward": 1.0 if passed else 0.0,
        "logprobs": [lp] * n_act + [-5.0] * n_obs,
        "ref_logprobs": [ref] * n_act + [-0.1] * n_obs,
        "action_mask": [1] * n_act + [0] * n_obs,
    }


def test_dpo_pairing_and_coefficients_by_hand() -> None:
    rows = [
        dpo_row("t1", True, 3, 1),  # 0: action length 3 → fail 4 (length 3); by total it'd be 2
        dpo_row("t1", False, 1),  # 1: left unpaired
        dpo_row("t1", False, 2, 2),  # 2: taken by pass 3 (length 2)
        dpo_row("t1", True, 2),  # 3
        dpo_row("t1", False, 3),  # 4
        dpo_row("t2", True, 2),  # 5: fails 6 (length 1) and 7 (length 3) tie → earlier, 6
        dpo_row("t2", False, 1),  # 6
        dpo_row("t2", False, 3),  # 7: unpaired
        dpo_row("t3", True, 1),  # 8: no fail in its task: unpaired
        dpo_row("t4", True, 2),  # 9: first in file order, takes 11 (length 2)
        dpo_row("t4", True, 2),  # 10: 11 is used, so takes 12 (length 5)
        dpo_row("t4", False, 2),  # 11
        dpo_row("t4", False, 5),  # 12
    ]
    update = DPO().update(Batch.from_rows(rows))

    # Δ = Σ(log π − log π_ref)(y_w) − Σ(...)(y_l): (0,4) 1.5 − (−3) = 4.5; (3,2) 1 − (−2) = 3;
    # (5,6) 1 − (−1) = 2; (9,11) 1 − (−2) = 3; (10,12) 1 − (−5) = 6.
    # P = 5, β = 0.1: c = ±0.1 σ(−0.1Δ)/5.
    def k(delta: float) -> float:
        return 0.1 / (1 + math.exp(0.1 * delta)) / 5

    c = update.coefficients
    close(c[0, :4], [k(4.5)] * 3 + [0.0])
    close(c[4, :3], [-k(4.5)] * 3)
    close(c[3, :2], [k(3.0)] * 2)
    close(c[2, :4], [-k(3.0)] * 2 + [0.0, 0.0])
    close(c[5, :2], [k(2.0)] * 2)
    close(c[6, :1], [-k(2.0)])
    close(c[9, :2], [k(3.0)] * 2)
    close(c[11, :2], [-k(3.0)] * 2)
    close(c[10, :2], [k(6.0)] * 2)
    close(c[12, :5], [-k(6.0)] * 5)
    for i in (1, 7, 8):
        assert float(c[i].abs().sum()) == 0.0


def test_dpo_without_pairs_gives_zeros_with_a_note() -> None:
    update = DPO().update(Batch.from_rows([dpo_row("t", True, 2), dpo_row("u", False, 2)]))
    assert float(update.coefficients.abs().sum()) == 0.0
    assert update.notes


def test_sft_by_hand() -> None:
    rows = [
        {"reward": 1.0, "logprobs": [-1.0, -1.0, -1.0], "action_mask": [1, 0, 1]},
        {"reward": 0.5, "logprobs": [-1.0], "action_mask": [1]},
        {"reward": 1.2, "logprobs": [-1.0, -1.0], "action_mask": [1, 1]},
    ]
    batch = Batch.from_rows(rows)
    update = SFT().update(batch)  # R ≥ 1: rows 0 and 2
    close(update.coefficients[0], [1.0, 0.0, 1.0])
    close(update.coefficients[1], [0.0, 0.0, 0.0])
    close(update.coefficients[2], [1.0, 1.0, 0.0])
    assert SFT(pass_threshold=0.5).update(batch).coefficients[1, 0] == 1.0  # 0.5 ≥ 0.5


# ---------------------------------------------------------------- corrections

# c = 1 (SFT) on every action token; π, μ per token; token 3 is an observation.
#   ipo:    |π − μ| = |0.5 − 0.2| = 0.3 (tie: kept), |0.75 − 0.25| = 0.5 (masked),
#           0 (kept)
#   icepop: ρ = 0.5 (edge: kept), 0.49 (masked), 6.0 (kept under band (0.5, 6); masked
#           under (0.5, 5))
#   tis:    ρ = 0.5 → 0.5, 3 → 2 (cap), 2 → 2
CORR = {
    "ipo": ([L(0.5), L(0.75), -0.3, -1.0], [L(0.2), L(0.25), -0.3, -1.0], [1.0, 0.0, 1.0]),
    "icepop": ([L(0.5), L(0.49), 0.0, -1.0], [0.0, 0.0, -L(6.0), -1.0], [1.0, 0.0, 0.0]),
    "tis": ([L(0.5), 0.0, L(0.5), -1.0], [0.0, -L(3.0), L(0.25), -1.0], [0.5, 2.0, 2.0]),
}


@pytest.mark.parametrize("name", sorted(CORR))
def test_corrections_by_hand(name: str) -> None:
    lp, blp, expected = CORR[name]
    rows = [{"reward": 1.0, "logprobs": lp, "behavior_logprobs": blp, "action_mask": [1, 1, 1, 0]}]
    batch = Batch.from_rows(rows)
    out = apply_correction(SFT().update(batch), batch, name)
    close(out.coefficients[0], [*expected, 0.0])
    if name == "icepop":
        wide = apply_correction(SFT().update(batch), batch, name, band=(0.5, 6.0))
        close(wide.coefficients[0], [1.0, 0.0, 1.0, 0.0])


def test_correction_multiplies_any_coefficient() -> None:
    lp, blp = [L(0.5), 0.0], [0.0, -L(3.0)]
    batch = Batch.from_rows([{"reward": 1.0, "logprobs": lp, "behavior_logprobs": blp}])
    base = Update(
        coefficients=torch.tensor([[-0.25, 0.125]], dtype=F64),
        advantages=torch.zeros(1, 2, dtype=F64),
        admitted=torch.tensor([True]),
    )
    # tis: (−0.25·0.5, 0.125·min(3, 2)) = (−0.125, 0.25)
    close(apply_correction(base, batch, "tis").coefficients[0], [-0.125, 0.25])


# ---------------------------------------------------------------- custom prime-rl losses


def loss_inputs(kl: bool = False) -> dict:
    # ρ = (0.4, 1, 3, 6) with μ = (0.25, 0.5, 0.1, 0.1); token 4 masked; weights 1 except 2.
    trainer = torch.tensor([L(0.1), L(0.5), L(0.3), L(0.6), -1.0], dtype=F64, requires_grad=True)
    return {
        "trainer_logprobs": trainer,
        "inference_logprobs": torch.tensor([L(0.25), L(0.5), L(0.1), L(0.1), -3.0], dtype=F64),
        "ref_logprobs": None,
        "advantages": torch.tensor([1.0, -2.0, 0.5, 1.0, 7.0], dtype=F64),
        "loss_mask": torch.tensor([True, True, True, True, False]),
        "loss_weights": torch.tensor([1.0, 2.0, 1.0, 1.0, 1.0], dtype=F64),
    }


def test_icepop_loss_gradient_by_hand() -> None:
    inputs = loss_inputs()
    out = icepop_loss(inputs, kl_tau=0.0)
    out.loss.backward()
    # keep = 1[0.5 ≤ ρ ≤ 5] = (0, 1, 1, 0); loss = −Σ w·keep·A·ρ = −(2·(−2)·1 + 0.5·3) = 2.5;
    # ∂loss/∂ℓ = −w·keep·A·ρ = (0, 4, −1.5, 0, 0).
    assert float(out.loss.detach()) == pytest.approx(2.5, rel=1e-12)
    close(inputs["trainer_logprobs"].grad, [0.0, 4.0, -1.5, 0.0, 0.0])


def test_tis_loss_gradient_by_hand() -> None:
    inputs = loss_inputs()
    out = tis_loss(inputs, kl_tau=0.1)
    out.loss.backward()
    # min(ρ, 2) = (0.4, 1, 2, 2); pg term gradient −w·A·min(ρ, 2) = (−0.4, 4, −1, −2);
    # kl = 0.1 (log ρ)² gives + w·0.2·log ρ = (0.2 ln 0.4, 0, 0.2 ln 3, 0.2 ln 6).
    lr = [L(0.4), 0.0, L(3.0), L(6.0)]
    grad = [
        g + 0.2 * x * w for g, x, w in zip([-0.4, 4.0, -1.0, -2.0], lr, [1, 2, 1, 1], strict=True)
    ]
    close(inputs["trainer_logprobs"].grad, [*grad, 0.0])
    # value: −Σ w A min(ρ,2) + Σ w 0.1 (log ρ)² = −(0.4 − 4 + 1 + 2) + 0.1 Σ w (log ρ)²
    kl = 0.1 * sum(w * x * x for x, w in zip(lr, [1, 2, 1, 1], strict=True))
    assert float(out.loss.detach()) == pytest.approx(0.6 + kl, rel=1e-12)


def test_grpo_ratio_overflow_is_refused_not_infinite() -> None:
    """log π − log μ = 800 > 709: exp overflows; the row is named instead of c = −inf."""
    from whilecli.errors import InputError

    rows = [
        {"task_id": "t", "reward": 1.0, "logprobs": [-0.1], "behavior_logprobs": [-0.1]},
        {"task_id": "t", "reward": 0.0, "logprobs": [-0.1], "behavior_logprobs": [-800.1]},
    ]
    with pytest.raises(InputError, match="row 1.*behavior_logprobs.*overflows"):
        GRPO().update(Batch.from_rows(rows))


@pytest.mark.parametrize("block", [1, 1 << 18])
def test_grpo_kl_ratio_overflow_names_the_reference(
    monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    """log π_ref − log π_θ = 799.9 > 709: r = π_ref/π_θ overflows in the k3 term; the row
    and ref_logprobs are named, on the row blocks and on the plain function alike."""
    from whilecli.errors import InputError
    from whilecli.methods import fastmath

    monkeypatch.setattr(fastmath, "BLOCK_ELEMENTS", block)
    rows = [
        {"task_id": "t", "reward": 1.0, "logprobs": [-0.1, -0.2], "ref_logprobs": [-0.1, -0.2]},
        {"task_id": "t", "reward": 0.0, "logprobs": [-800.0, -0.2], "ref_logprobs": [-0.1, -0.2]},
    ]
    for method in (GRPO(beta=0.1), eager_plain(GRPO(beta=0.1, compile=True))):
        with pytest.raises(InputError, match="row 1.*ref_logprobs.*overflows"):
            method.update(Batch.from_rows(rows))
