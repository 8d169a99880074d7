"""The verl plug-in against verl's own code: ``compute_advantage`` on the whole batch, then the
registered policy loss from ``get_policy_loss_fn`` once per micro-batch, as verl's actor
calls them. The gradient with respect to ``log_prob`` is −c (times verl's
``rollout_is_weights``) to 1e-12, c being whilecli's whole-batch coefficients, whatever the
number of micro-batches; calling whilecli's one-step ``update`` per micro-batch would not be.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("verl", reason="the verl plug-in's tests run in the trainers environment")

from verl import DataProto  # noqa: E402
from verl.trainer.ppo.core_algos import get_policy_loss_fn  # noqa: E402
from verl.trainer.ppo.ray_trainer import compute_advantage  # noqa: E402
from verl.workers.config import ActorConfig  # noqa: E402

import whilecli.trainers.verl as plugin  # noqa: E402
from whilecli.errors import UsageError  # noqa: E402
from whilecli.methods import GRPO, Batch, FlashReinforce, MaxRL  # noqa: E402
from whilecli.methods.twostep import apply_correction  # noqa: E402

F64 = torch.float64
LENGTHS = [5, 3, 4, 2, 5, 1]


def _rollouts(seed: int, gated: int | None = 2) -> dict[str, torch.Tensor]:
    """Six responses of ragged length; row ``gated`` drifted far from the sampler."""
    g = torch.Generator().manual_seed(seed)
    b, t = len(LENGTHS), max(LENGTHS)
    mask = torch.arange(t)[None, :] < torch.tensor(LENGTHS)[:, None]
    old = -(torch.rand(b, t, generator=g, dtype=F64) * 2 + 0.05)
    drift = torch.randn(b, t, generator=g, dtype=F64) * 0.01
    if gated is not None:
        drift[gated] = torch.randn(t, generator=g, dtype=F64) * 1.5
    new = (old + drift).clamp(max=-1e-3)
    rewards = torch.tensor([1.0, 0.0, 1.0, 0.5, 0.0, 1.0], dtype=F64)
    token_rewards = torch.zeros(b, t, dtype=F64)
    token_rewards[torch.arange(b), torch.tensor(LENGTHS) - 1] = rewards
    weights = 0.5 + torch.rand(b, t, generator=g, dtype=F64)  # verl's rollout_is_weights
    return {
        "old": old * mask,
        "new": new * mask,
        "mask": mask,
        "rewards": rewards,
        "token_rewards": token_rewards,
        "weights": weights,
    }


def _advantages(r: dict[str, torch.Tensor], estimator: str, uid: list[str]) -> torch.Tensor:
    data = DataProto.from_dict(
        tensors={"token_level_rewards": r["token_rewards"], "response_mask": r["mask"].long()},
        non_tensors={"uid": np.array(uid, dtype=object)},
    )
    return compute_advantage(data, adv_estimator=estimator).batch["advantages"]


def _config(r: dict[str, torch.Tensor], clip_ratio_c: float = 3.0, **extra: object) -> ActorConfig:
    config = ActorConfig(
        strategy="fsdp",
        ppo_mini_batch_size=6,
        ppo_micro_batch_size_per_gpu=2,
        rollout_n=1,
        clip_ratio_c=clip_ratio_c,
    )
    info: dict[str, object] = {
        "dp_size": 1,
        "batch_num_tokens": int(r["mask"].sum()),
        "global_batch_size": len(LENGTHS),
        "loss_scale_factor": None,
    }
    config.global_batch_info.update({**info, **extra})
    return config


def _gradient(
    loss_mode: str,
    r: dict[str, torch.Tensor],
    adv: torch.Tensor,
    parts: int,
    config: ActorConfig,
    agg: str = "token-mean",
) -> torch.Tensor:
    """−∂loss/∂log_prob, the registered loss called once per micro-batch of rows."""
    loss_fn = get_policy_loss_fn(loss_mode)
    grads = []
    for rows in np.array_split(np.arange(len(LENGTHS)), parts):
        idx = torch.as_tensor(rows)
        log_prob = r["new"][idx].clone().requires_grad_(True)
        loss, metrics = loss_fn(
            old_log_prob=r["old"][idx],
            log_prob=log_prob,
            advantages=adv[idx],
            response_mask=r["mask"][idx],
            loss_agg_mode=agg,
            config=config,
            rollout_is_weights=r["weights"][idx],
        )
        assert all(isinstance(v, float) for v in metrics.values())
        loss.backward()
        grads.append(-log_prob.grad)
    return torch.cat(grads)


@pytest.mark.parametrize("parts", [1, 3])
@pytest.mark.parametrize("correction", [None, "tis", "icepop"])
def test_flash_reinforce_gradient_is_minus_c(parts: int, correction: str | None) -> None:
    r = _rollouts(seed=1)
    adv = _advantages(r, "whilecli_flash_reinforce", [f"p{i}" for i in range(6)])
    batch = Batch.from_tensors(
        r["new"], rewards=r["rewards"], mask=r["mask"], behavior_logprobs=r["old"]
    )
    whole = FlashReinforce().update(batch)
    assert whole.admitted.tolist() == [True, True, False, True, True, True]  # a gated row
    if correction is not None:
        whole = apply_correction(whole, batch, correction)
    want = whole.coefficients * r["weights"] * r["mask"]
    mode = "whilecli_flash_reinforce" + (f"_{correction}" if correction else "")
    got = _gradient(mode, r, adv, parts, _config(r))
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    assert bool(want.abs().sum() > 0)


def test_naive_per_micro_batch_update_would_fail() -> None:
    """whilecli's one-call ``update`` on each micro-batch recomputes the mean reward and B from
    the micro-batch: the coefficients verl would train on are wrong."""
    r = _rollouts(seed=1)
    batch = Batch.from_tensors(
        r["new"], rewards=r["rewards"], mask=r["mask"], behavior_logprobs=r["old"]
    )
    want = FlashReinforce().update(batch).coefficients
    width = want.shape[1]
    naive = torch.cat(
        [
            torch.nn.functional.pad(c, (0, width - c.shape[1]))
            for c in (FlashReinforce().update(m).coefficients for m in batch.split(3))
        ]
    )
    rel = (naive - want).abs().max() / want.abs().max()
    assert float(rel) > 0.5
    adv = _advantages(r, "whilecli_flash_reinforce", [f"p{i}" for i in range(6)])
    # verl without the optimizer batch's size (B taken from each micro-batch) is off too
    bare = _gradient("whilecli_flash_reinforce", r, adv, 3, _config(r, global_batch_size=None))
    assert not torch.allclose(bare, want * r["weights"] * r["mask"], rtol=1e-3)


GROUPS = ["a", "a", "a", "b", "b", "b"]


@pytest.mark.parametrize("parts", [1, 3])
@pytest.mark.parametrize(
    ("estimator", "method", "agg"),
    [
        ("whilecli_grpo", GRPO(), "seq-mean-token-mean"),
        ("whilecli_grpo", GRPO(loss_type="bnpo"), "token-mean"),
        ("whilecli_dr_grpo", GRPO(loss_type="dr_grpo"), "seq-mean-token-sum-norm"),
        ("whilecli_max_rl", MaxRL(), "seq-mean-token-mean"),
    ],
)
@pytest.mark.parametrize("correction", [None, "tis", "ipo"])
def test_grpo_family_gradient_is_minus_c(
    parts: int, estimator: str, method: object, agg: str, correction: str | None
) -> None:
    r = _rollouts(seed=2, gated=None)
    r["new"] = (r["old"] + torch.randn(r["old"].shape, dtype=F64) * 0.3).clamp(max=-1e-3)
    r["new"] = r["new"] * r["mask"]
    adv = _advantages(r, estimator, GROUPS)
    batch = Batch.from_tensors(
        r["new"], rewards=r["rewards"], mask=r["mask"], behavior_logprobs=r["old"], task_ids=GROUPS
    )
    if agg == "seq-mean-token-sum-norm":
        method = GRPO(loss_type="dr_grpo", max_len=max(LENGTHS))
    whole = method.update(batch)  # type: ignore[attr-defined]
    if correction is not None:
        whole = apply_correction(whole, batch, correction)
    want = whole.coefficients * r["weights"] * r["mask"]
    mode = "whilecli_grpo" + (f"_{correction}" if correction else "")
    got = _gradient(mode, r, adv, parts, _config(r), agg=agg)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    if correction is None:
        assert whole.stats["clipped_tokens"] > 0  # the clip bites in this batch


def test_sao_and_bpco_are_refused_with_the_reason() -> None:
    for name in ("sao", "bpco"):
        with pytest.raises(UsageError, match="never the critic's values|no critic values"):
            plugin.register(name)


def test_knobs_are_checked() -> None:
    with pytest.raises(UsageError):
        plugin.configure(trust=-1.0)
    with pytest.raises(UsageError, match="unknown knob"):
        plugin.configure(clip=0.1)


@pytest.mark.parametrize("loss_mode", ["whilecli_flash_reinforce", "whilecli_grpo"])
@pytest.mark.parametrize("correction", [None, "tis"])
def test_each_loss_call_checks_its_micro_batch_once_through_the_runner(
    loss_mode: str, correction: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loss sees one micro-batch at a time, the only batch verl shows it: the runner
    checks it once, for the method and the correction together, and refuses a bad log-prob
    naming its row and field."""
    from whilecli.errors import InputError
    from whilecli.methods import twostep

    calls: list[str] = []
    real = twostep.check_batch
    monkeypatch.setattr(twostep, "check_batch", lambda b, n, m: (calls.append(m), real(b, n, m))[1])
    r = _rollouts(seed=5)
    adv = _advantages(r, "whilecli_grpo", ["a", "a", "b", "b", "c", "c"])
    assert calls == ["grpo"]  # the estimator's batch-wide step, on the whole batch
    calls.clear()
    mode = loss_mode + (f"_{correction}" if correction else "")
    _gradient(mode, r, adv, 3, _config(r))
    assert len(calls) == 3
    bad = dict(r, old=r["old"].clone())
    bad["old"][1, 2] = float("nan")
    with pytest.raises(InputError, match=r"row 1: field 'behavior_logprobs': token 2 "):
        _gradient(mode, bad, adv, 1, _config(r))


@pytest.mark.parametrize("parts", [1, 3])
@pytest.mark.parametrize("agg", ["token-mean", "seq-mean-token-sum-norm"])
@pytest.mark.parametrize("clip_ratio_c", [3.0, 1.5])
@pytest.mark.parametrize("correction", [None, "icepop"])
def test_grpo_loss_keeps_verls_dual_clip(
    parts: int, agg: str, clip_ratio_c: float, correction: str | None
) -> None:
    """Switching loss_mode from verl's ``vanilla`` to ``whilecli_grpo`` keeps the dual clip:
    where A < 0 and ρ > clip_ratio_c verl's loss is constant, and so is whilecli's (c = 0).
    The gradients agree to 1e-12 (``token-mean`` is bnpo's weight and
    ``seq-mean-token-sum-norm`` dr_grpo's, exactly verl's; its ``seq-mean-token-mean`` adds
    1e-8 to each length). With icepop, the band on top of both clips, as verl composes it."""
    r = _rollouts(seed=3, gated=None)
    # row 1 (reward 0, A < 0): ρ = 4.5, 1.65, 1.1 on its three tokens
    r["old"][1, :3] = torch.tensor([0.1, 0.2, 0.3], dtype=F64).log()
    r["new"][1, :3] = torch.tensor([0.45, 0.33, 0.33], dtype=F64).log()
    adv = _advantages(r, "whilecli_grpo", GROUPS)
    config = _config(r, clip_ratio_c=clip_ratio_c)
    rho = torch.exp(r["new"] - r["old"])
    assert bool(((adv < 0) & (rho > clip_ratio_c) & r["mask"]).any())  # the dual clip bites
    got = _gradient("whilecli_grpo", r, adv, parts, config, agg=agg)
    want = _gradient("vanilla", r, adv, parts, config, agg=agg)
    if correction is not None:
        got = _gradient(f"whilecli_grpo_{correction}", r, adv, parts, config, agg=agg)
        band = (rho >= 0.5) & (rho <= 5.0)
        want = torch.where(band, want, 0.0)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_grpo_loss_refuses_a_dual_clip_verl_would_refuse() -> None:
    r = _rollouts(seed=3)
    adv = _advantages(r, "whilecli_grpo", GROUPS)
    config = _config(r)
    object.__setattr__(config, "clip_ratio_c", 1.0)  # verl's own loss asserts it at its call
    with pytest.raises(UsageError, match=r"clip_ratio_c .* must be a number > 1.0"):
        _gradient("whilecli_grpo", r, adv, 1, config)
