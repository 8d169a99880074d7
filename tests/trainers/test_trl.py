"""FlashReinforceTrainer against TRL's own training step: one optimizer step of SGD (lr 1)
over 2 accumulated micro-batches moves the weights by exactly Σ c ∇log π_θ, c being
whilecli's coefficients of the whole generation batch (mean reward and B of every row, one
completion per prompt)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

pytest.importorskip("trl", reason="the TRL integration's tests run in the trainers environment")

from datasets import Dataset  # noqa: E402

from whilecli.methods import Batch, FlashReinforce  # noqa: E402
from whilecli.trainers import toy  # noqa: E402
from whilecli.trainers.trl import (  # noqa: E402
    TESTED_TRL,
    FlashReinforceTrainer,
    flash_reinforce_config,
)


class Recording(FlashReinforceTrainer):
    """Keeps each micro-batch's inputs, to recompute the step by hand."""

    seen: list[dict[str, Any]]

    def _compute_loss(self, model: Any, inputs: dict[str, Any]) -> torch.Tensor:
        self.seen.append({k: v for k, v in inputs.items() if isinstance(v, torch.Tensor)})
        return super()._compute_loss(model, inputs)


def _varied(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
    """Rewards that differ within the batch (a random policy rarely echoes)."""
    return [(sum(map(ord, c)) % 5) / 4 for c in completions]


def _logps(model: Any, inputs: dict[str, Any]) -> torch.Tensor:
    ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1)
    attention = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)
    width = inputs["completion_ids"].shape[1]
    logits = model(input_ids=ids, attention_mask=attention).logits[:, -width - 1 : -1].float()
    return torch.log_softmax(logits, dim=-1).gather(2, inputs["completion_ids"][..., None])[..., 0]


def test_one_step_moves_the_weights_by_sum_c_grad_log_pi(tmp_path: Path) -> None:
    torch.set_num_threads(1)
    tok, model = toy.build_tokenizer(), toy.build_model(3)
    start = {k: v.detach().clone() for k, v in model.named_parameters()}
    args = flash_reinforce_config(
        output_dir=str(tmp_path), per_device_train_batch_size=4, gradient_accumulation_steps=2,
        max_completion_length=2, learning_rate=1.0, optim="sgd", lr_scheduler_type="constant",
        weight_decay=0.0, max_grad_norm=1e9, max_steps=1, report_to=[], save_strategy="no",
        use_cpu=True, bf16=False, disable_tqdm=True, seed=3, beta=0.0,
    )  # fmt: skip
    trainer = Recording(
        model=model,
        reward_funcs=[_varied],
        args=args,
        train_dataset=Dataset.from_dict({"prompt": toy.prompts(64, 3)}),
        processing_class=tok,
    )
    trainer.seen = []
    trainer.train()
    assert len(trainer.seen) == 2  # two accumulated micro-batches, one optimizer step
    fresh = toy.build_model(3)
    fresh.load_state_dict(start, strict=False)  # lm_head is tied to the embedding
    advantages = torch.cat([s["advantages"].reshape(-1) for s in trainer.seen]).double()
    assert abs(float(advantages.sum())) < 1e-6  # centred on the whole batch, not per micro
    assert float(advantages.abs().sum()) > 0
    method = FlashReinforce()
    loss = torch.zeros(())
    for inputs in trainer.seen:
        logp = _logps(fresh, inputs)
        mask = inputs["completion_mask"].bool()
        micro = Batch.from_tensors(
            logp.detach().double() * mask, rewards=inputs["advantages"].double(), mask=mask
        )
        c = method.coefficients(micro, method.stats_from_totals(0.0, 8, micro)).coefficients
        loss = loss - (c.float() * logp).sum()
    loss.backward()
    for name, p in fresh.named_parameters():
        moved = start[name] - dict(model.named_parameters())[name].detach()
        expected = torch.zeros_like(moved) if p.grad is None else p.grad
        torch.testing.assert_close(
            moved, expected, rtol=1e-4, atol=1e-6, msg=lambda m, n=name: f"{n}: {m}"
        )


def test_runs_against_a_tested_trl_release() -> None:
    """.ci/trainers runs these tests under each end of the stated range."""
    import trl

    assert trl.__version__ in TESTED_TRL, (trl.__version__, TESTED_TRL)


@pytest.mark.parametrize(
    ("knob", "value"),
    [("beta", 0.04), ("epsilon", 0.3), ("loss_type", "grpo"), ("scale_rewards", "batch")],
)
def test_a_knob_of_trls_own_loss_is_refused_not_ignored(
    tmp_path: Path, knob: str, value: object
) -> None:
    """FlashReinforce's advantage and loss replace TRL's: a GRPOConfig knob only they read
    (the KL β, the clip ε, loss_type, scale_rewards, ...) would do nothing, so a config that
    sets one is refused with the reason, whether built by flash_reinforce_config or edited
    after; its defaults pass."""
    from whilecli.errors import UsageError
    from whilecli.trainers.trl import REPLACED_KNOBS

    assert knob in REPLACED_KNOBS
    common: dict[str, Any] = dict(output_dir=str(tmp_path), report_to=[], use_cpu=True)
    with pytest.raises(UsageError, match=rf"does not read GRPOConfig\.{knob} = "):
        flash_reinforce_config(**common, **{knob: value})
    args = flash_reinforce_config(**common)
    setattr(args, knob, value)
    with pytest.raises(UsageError, match=rf"does not read GRPOConfig\.{knob} = "):
        FlashReinforceTrainer(
            model=toy.build_model(3),
            reward_funcs=[_varied],
            args=args,
            train_dataset=Dataset.from_dict({"prompt": toy.prompts(8, 3)}),
            processing_class=toy.build_tokenizer(),
        )
