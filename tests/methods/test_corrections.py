"""The staleness corrections ipo, icepop and tis, applied last to a method's coefficients."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from batch_strategies import well_conditioned
from slow_reference_grouped import random_rows, slow_correction, slow_grpo, to_batch
from toy_policy import train_toy
from whilecli.errors import UsageError
from whilecli.methods.batch import Update
from whilecli.methods.grpo import GRPO
from whilecli.methods.sft import SFT
from whilecli.methods.twostep import apply_correction


def _stale_batch():
    # π = e^−1 ≈ 0.368 on every token; μ chosen for ρ = 0.4, 1.0, 3.0, 6.0 and one observation.
    lp = [-1.0] * 5
    blp = [-1.0 - math.log(r) for r in (0.4, 1.0, 3.0, 6.0)] + [-1.0]
    rows = [
        {"reward": 1.0, "logprobs": lp, "behavior_logprobs": blp, "action_mask": [1, 1, 1, 1, 0]}
    ]
    return rows, to_batch(rows)


def _ones(batch) -> Update:
    c = batch.action_mask.to(torch.float64)
    return Update(coefficients=c, advantages=c.clone(), admitted=torch.ones(1, dtype=torch.bool))


def test_ipo_by_hand() -> None:
    _, batch = _stale_batch()
    pi = math.exp(-1)
    # |π − μ| = |π − π/ρ|: 0.552, 0, 0.245, 0.307 → masked where > 0.3
    up = apply_correction(_ones(batch), batch, "ipo")
    assert up.coefficients[0].tolist() == [0.0, 1.0, 1.0, 0.0, 0.0]
    assert abs(pi - pi / 3) <= 0.3 < abs(pi - pi / 6)
    assert up.stats["ipo_masked_tokens"] == 2 and up.stats["ipo_masked_share"] == 0.5
    assert any("ipo masked 2 of 4" in n for n in up.notes)


def test_icepop_and_tis_by_hand() -> None:
    _, batch = _stale_batch()
    ice = apply_correction(_ones(batch), batch, "icepop")
    assert ice.coefficients[0].tolist() == [0.0, 1.0, 1.0, 0.0, 0.0]
    assert ice.stats["icepop_masked_tokens"] == 2
    tis = apply_correction(_ones(batch), batch, "tis")
    assert tis.coefficients[0].tolist() == pytest.approx([0.4, 1.0, 2.0, 2.0, 0.0])
    assert tis.stats["tis_capped_tokens"] == 2
    wide = apply_correction(_ones(batch), batch, "icepop", band=(0.3, 10.0))
    assert wide.coefficients[0].tolist() == [1.0, 1.0, 1.0, 1.0, 0.0]


def test_a_row_losing_every_token_is_no_longer_admitted() -> None:
    rows = [{"reward": 1.0, "logprobs": [-1.0], "behavior_logprobs": [-3.0], "action_mask": [1]}]
    batch = to_batch(rows)
    up = apply_correction(_ones(batch), batch, "icepop")
    assert up.admitted.tolist() == [False]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from(["ipo", "icepop", "tis"]))
def test_corrections_match_slow_loop(data, name) -> None:
    rows = random_rows(data.draw)
    if len({r["task_id"] for r in rows}) == len(rows):
        rows.append(dict(rows[0]))
    assume(well_conditioned(rows))
    batch = to_batch(rows)
    base = GRPO().update(batch)
    up = apply_correction(base, batch, name)
    tis_pg = slow_grpo(rows, part="tis") if name == "tis" else None
    slow = slow_correction(rows, slow_grpo(rows), name, carries_ratio=True, tis_pg=tis_pg)
    for i, r in enumerate(slow):
        assert up.coefficients[i, : len(r)].tolist() == pytest.approx(r, rel=1e-9, abs=1e-12)
    assert torch.all(up.coefficients[~batch.action_mask] == 0)
    assert torch.equal(up.advantages, base.advantages)


def test_refusals() -> None:
    rows = [{"reward": 1.0, "logprobs": [-1.0], "action_mask": [1]}]
    batch = to_batch(rows)
    up = SFT().update(batch)
    with pytest.raises(UsageError, match="behavior_logprobs"):
        apply_correction(up, batch, "tis")
    _, stale = _stale_batch()
    with pytest.raises(UsageError, match="ipo, icepop, tis"):
        apply_correction(_ones(stale), stale, "clip")
    for knobs, name in [({"eps": 0}, "eps"), ({"band": (2, 5)}, "band"), ({"cap": 0.5}, "cap")]:
        with pytest.raises(UsageError, match=f"{name}.*default"):
            apply_correction(_ones(stale), stale, "ipo", **knobs)


class _Corrected:
    """GRPO on rollouts made stale on purpose (behaviour log-probs = log π + noise), with a
    correction applied last: the learning test under masking and capping."""

    def __init__(self, name: str) -> None:
        self.name, self.inner = name, GRPO()
        self.gen = torch.Generator().manual_seed(0)
        self.touched = 0.0

    def update(self, batch):
        noise = 0.7 * torch.randn(batch.logprobs.shape, generator=self.gen, dtype=torch.float64)
        stale = (batch.logprobs + noise).clamp(max=0)
        batch.behavior_logprobs = torch.where(batch.action_mask, stale, batch.logprobs)
        up = apply_correction(self.inner.update(batch), batch, self.name)
        self.touched += up.stats.get(f"{self.name}_masked_tokens", 0.0)
        self.touched += up.stats.get(f"{self.name}_capped_tokens", 0.0)
        return up


@pytest.mark.parametrize("name", ["ipo", "icepop", "tis"])
def test_toy_policy_learns_under_each_correction(name: str) -> None:
    made: list[_Corrected] = []

    def factory() -> _Corrected:
        made.append(_Corrected(name))
        return made[-1]

    before, after = train_toy(factory, steps=30, seed=6)
    assert made[0].touched > 0  # the correction did mask or cap tokens
    assert after > before + 0.4, (before, after)


# --- tis replaces ρ, corrections leave the KL term, the update path agrees with the losses


def _flash_rows(ratios: list[float]) -> list[dict]:
    """Two rows, rewards 1 and 0 (A = ±0.5, B = 2), two action tokens each, π = e^−1."""
    blp = [-1.0 - math.log(r) for r in ratios]
    return [
        {"reward": 1.0, "logprobs": [-1.0, -1.0], "behavior_logprobs": blp[:2],
         "action_mask": [1, 1]},
        {"reward": 0.0, "logprobs": [-1.0, -1.0], "behavior_logprobs": blp[2:],
         "action_mask": [1, 1]},
    ]  # fmt: skip


def test_tis_replaces_the_ratio_a_method_carries() -> None:
    from whilecli.methods.flash_reinforce import FlashReinforce

    batch = to_batch(_flash_rows([0.5, 3.0, 1.0, 4.0]))
    up = FlashReinforce(trust=math.inf).update(batch)
    # c = A ρ/(T B) = ±0.5 ρ/4: row 0 ρ = 0.5, 3.0; row 1 ρ = 1.0, 4.0
    assert up.coefficients.flatten().tolist() == pytest.approx([0.0625, 0.375, -0.125, -0.5])
    tis = apply_correction(up, batch, "tis")
    # ρ → min(ρ, 2): 0.125 ρ' with ρ' = 0.5, 2, 1, 2 (not A·ρ·min(ρ, 2): 0.75 and −1.0)
    assert tis.coefficients.flatten().tolist() == pytest.approx([0.0625, 0.25, -0.125, -0.25])
    assert tis.stats["tis_capped_tokens"] == 2
    # below the cap the coefficient is untouched, bit for bit
    assert tis.coefficients[0, 0] == up.coefficients[0, 0]
    assert any("replaced ρ by min(ρ, 2.0)" in n for n in tis.notes)


def test_tis_multiplies_a_coefficient_that_carries_no_ratio() -> None:
    from whilecli.methods.distill import OPD

    rows = _flash_rows([0.5, 3.0, 1.0, 4.0])
    for r in rows:
        r["teacher_logprobs"] = [-0.5, -0.5]
    batch = to_batch(rows)
    up = OPD().update(batch)  # c = log π_T − log π_θ = 0.5 on every token
    tis = apply_correction(up, batch, "tis")
    assert tis.coefficients.flatten().tolist() == pytest.approx([0.25, 1.0, 0.5, 1.0])


def test_a_flash_ratio_past_its_clamp_is_capped_not_divided_by_the_raw_ratio() -> None:
    from whilecli.methods.flash_reinforce import FlashReinforce

    rows = _flash_rows([1.0, 1.0, 1.0, 1.0])
    rows[0]["behavior_logprobs"][1] = -40.0  # log ρ = 39: FlashReinforce clamps it to 30
    batch = to_batch(rows)
    tis = apply_correction(FlashReinforce(trust=math.inf).update(batch), batch, "tis")
    assert tis.coefficients[0, 1].item() == pytest.approx(0.125 * 2.0, rel=1e-12)


def test_corrections_leave_the_kl_to_reference_term() -> None:
    # one group, rewards 1 and 0: A = ±0.5/√0.5 = ±1/√2; grpo w = 1/(T B) = 1/2; β = 0.1
    lp, ref = [-1.0], [-1.5]
    rows = [
        {"task_id": "t", "reward": 1.0, "logprobs": lp, "behavior_logprobs": [-1.0 - math.log(6)],
         "ref_logprobs": ref, "action_mask": [1]},
        {"task_id": "t", "reward": 0.0, "logprobs": lp, "behavior_logprobs": [-1.0],
         "ref_logprobs": ref, "action_mask": [1]},
    ]  # fmt: skip
    batch = to_batch(rows)
    up = GRPO(beta=0.1).update(batch)
    kl = -0.1 * 0.5 * (1 - math.exp(-0.5))  # −β w (1 − r), r = π_ref/π_θ = e^−0.5
    # row 0: ρ = 6 > 1 + ε with A > 0, clipped: c is the KL term alone; row 1: ρ = 1
    assert up.coefficients[:, 0].tolist() == pytest.approx([kl, -math.sqrt(0.5) / 2 + kl])
    for name in ("ipo", "icepop", "tis"):
        out = apply_correction(up, batch, name)
        # row 0's ρ = 6 is outside icepop's band and |π − μ| = 0.31 > 0.3: the KL term stays;
        # tis drops the clip: w A min(ρ, 2) = (1/2)(1/√2)·2, plus the KL term
        row0 = kl + (math.sqrt(0.5) if name == "tis" else 0.0)
        assert out.coefficients[0, 0].item() == pytest.approx(row0, rel=1e-12)
        assert out.coefficients[1, 0].item() == pytest.approx(-math.sqrt(0.5) / 2 + kl, rel=1e-12)
        assert out.admitted.tolist() == [True, True]
        assert any("KL-to-reference" in n for n in out.notes)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from(["ipo", "icepop", "tis"]))
def test_corrections_with_a_kl_term_match_slow_loop(data, name) -> None:
    rows = random_rows(data.draw)
    if len({r["task_id"] for r in rows}) == len(rows):
        rows.append(dict(rows[0]))
    assume(well_conditioned(rows))
    batch = to_batch(rows)
    up = apply_correction(GRPO(beta=0.05).update(batch), batch, name)
    pg = slow_grpo(rows, beta=0.05, part="pg")
    kl = slow_grpo(rows, beta=0.05, part="kl")
    tis_pg = slow_grpo(rows, beta=0.05, part="tis") if name == "tis" else None
    slow = slow_correction(rows, pg, name, carries_ratio=True, reference=kl, tis_pg=tis_pg)
    for i, r in enumerate(slow):
        assert up.coefficients[i, : len(r)].tolist() == pytest.approx(r, rel=1e-9, abs=1e-12)


def _loss_gradient(loss_fn, batch, advantages, weights, **kw) -> torch.Tensor:
    """−∂loss/∂trainer_logprobs, one prime-rl sample per row: the loss's per-token c."""
    rows = []
    for i in range(batch.size):
        keep = batch.action_mask[i]
        inputs = {
            "trainer_logprobs": batch.logprobs[i].clone().requires_grad_(True),
            "inference_logprobs": batch.behavior_logprobs[i],
            "ref_logprobs": None,
            "advantages": advantages[i],
            "loss_mask": keep,
            "loss_weights": weights[i],
        }
        loss_fn(inputs, kl_tau=0.0, **kw).loss.backward()
        rows.append(-inputs["trainer_logprobs"].grad)
    return torch.stack(rows)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from(["icepop", "tis"]))
def test_update_path_agrees_with_the_prime_rl_losses(data, name) -> None:
    from whilecli.emit.losses import icepop_loss, tis_loss
    from whilecli.methods.flash_reinforce import FlashReinforce

    rows = random_rows(data.draw, rewards=(0.0, 0.5, 1.0, 3.0))
    if len({r["task_id"] for r in rows}) == len(rows):
        rows.append(dict(rows[0]))
    assume(well_conditioned(rows))
    batch = to_batch(rows)
    loss_fn = icepop_loss if name == "icepop" else tis_loss
    # FlashReinforce (no clip of its own): c = A_i ρ/(T_i B), so the loss's per-token A is
    # A_i and its loss weight 1/(T_i B)
    up = apply_correction(FlashReinforce(trust=math.inf).update(batch), batch, name)
    counts = batch.action_counts
    adv = batch.rewards - batch.rewards.mean()
    per_token_a = adv[:, None].expand_as(batch.logprobs).clone()
    weights = (1.0 / (counts * batch.size))[:, None].expand_as(batch.logprobs).clone()
    want = _loss_gradient(loss_fn, batch, per_token_a, weights)
    torch.testing.assert_close(up.coefficients, want, rtol=1e-12, atol=1e-15)
    # GRPO: icepop gives the same c wherever grpo's own clip does not bite (its c is 0 where
    # it does); tis drops the clip, so the same c on every token
    base = GRPO().update(batch)
    up = apply_correction(base, batch, name)
    w = torch.where(batch.truncated | (counts == 0), 0.0, 1.0 / (counts.clamp(min=1) * batch.size))
    # A_i: the row's advantage sits on its action tokens (0 elsewhere)
    a = (base.advantages * batch.action_mask).sum(dim=1) / counts.clamp(min=1)
    want = _loss_gradient(
        loss_fn, batch, a[:, None].expand_as(batch.logprobs).clone(),
        w[:, None].expand_as(batch.logprobs).clone(),
    )  # fmt: skip
    rho = torch.exp(batch.logprobs - batch.behavior_logprobs)
    unclipped = ((a[:, None] > 0) & (rho <= 1.2)) | ((a[:, None] < 0) & (rho >= 0.8))
    unclipped &= batch.action_mask
    if name == "tis":
        torch.testing.assert_close(up.coefficients, want, rtol=1e-12, atol=1e-15)
        return
    torch.testing.assert_close(up.coefficients[unclipped], want[unclipped], rtol=1e-12, atol=1e-15)
    assert torch.all(up.coefficients[~unclipped] == 0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from(["sao", "bpco"]))
def test_tis_replaces_the_band_and_the_clip_of_the_critic_methods(data, name) -> None:
    """tis on SAO: c = min(ρ, 2) A / N on every action token (no band); on BPCO:
    c = min(ρ, 2) A (no probability clip); against the slow loops."""
    import slow_reference
    from batch_strategies import ragged_rows
    from whilecli.methods import Batch
    from whilecli.methods.bpco import BPCO
    from whilecli.methods.sao import SAO

    rows = data.draw(ragged_rows(min_actions=1))
    batch = Batch.from_rows(rows)
    method = SAO() if name == "sao" else BPCO()
    up = apply_correction(method.update(batch), batch, "tis")
    want, _, admitted, _ = getattr(slow_reference, name)(rows, tis_cap=2.0)
    for i, r in enumerate(want):
        assert up.coefficients[i, : len(r)].tolist() == pytest.approx(r, rel=1e-12, abs=1e-15)
    assert up.admitted.tolist() == admitted


# --- bnpo's Σ T_j, dr_grpo's L_max


def _truncated_group() -> list[dict]:
    # rewards 1, 0, 1 (the last truncated, kept in the statistics): mean 2/3, sample std √(1/3)
    return [
        {"task_id": "t", "reward": 1.0, "logprobs": [-1.0] * 2, "action_mask": [1, 1]},
        {"task_id": "t", "reward": 0.0, "logprobs": [-1.0] * 3, "action_mask": [1, 1, 1]},
        {"task_id": "t", "reward": 1.0, "logprobs": [-1.0] * 4, "action_mask": [1] * 4,
         "truncated": True},
    ]  # fmt: skip


def test_bnpo_token_count_leaves_out_rows_that_carry_no_loss() -> None:
    batch = to_batch(_truncated_group())
    a0, a1 = (1 / 3) / math.sqrt(1 / 3), (-2 / 3) / math.sqrt(1 / 3)
    bnpo = GRPO(loss_type="bnpo").update(batch)
    # Σ T_j = 2 + 3 = 5, not 9: the truncated row's 4 tokens carry no loss
    assert bnpo.coefficients[0, :2].tolist() == pytest.approx([a0 / 5] * 2, rel=1e-12)
    assert bnpo.coefficients[1, :3].tolist() == pytest.approx([a1 / 5] * 3, rel=1e-12)
    assert torch.all(bnpo.coefficients[2] == 0)
    assert bnpo.stats["loss_tokens_global"] == 5 and bnpo.stats["action_tokens_global"] == 9
    assert any("leaves out the tokens of truncated rows" in n for n in bnpo.notes)
    # --truncated zero: every row carries a loss, Σ T_j = 9 (rewards 1, 0, 0)
    zero = GRPO(loss_type="bnpo", truncated="zero").update(batch)
    a0z = (1 - 1 / 3) / math.sqrt(1 / 3)
    assert zero.coefficients[0, 0].item() == pytest.approx(a0z / 9, rel=1e-12)
    # grpo and dr_grpo still count every row in B = 3
    grpo = GRPO().update(batch)
    assert grpo.coefficients[0, 0].item() == pytest.approx(a0 / (2 * 3), rel=1e-12)
    dr = GRPO(loss_type="dr_grpo").update(batch)  # A = R − mean, L_max = 4
    assert dr.coefficients[0, 0].item() == pytest.approx((1 / 3) / (4 * 3), rel=1e-12)


def test_dr_grpo_says_where_l_max_came_from() -> None:
    batch = to_batch(_truncated_group())
    notes = GRPO(loss_type="dr_grpo").update(batch).notes
    assert any("L_max defaulted to the longest row (4" in n and "--max-len" in n for n in notes)
    given_len = GRPO(loss_type="dr_grpo", max_len=8).update(batch).notes
    assert not any("L_max defaulted" in n for n in given_len)
