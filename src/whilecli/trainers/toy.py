"""A toy verifiable task for learning runs on a CPU: echo one character.

The prompt is a character and ``=`` (``"c="``); the policy passes when its first completion
token is that character. The policy is a tiny randomly initialised Qwen2-style causal LM
(2 layers, hidden size 64) built from a config, with a character tokenizer built locally:
nothing is downloaded. A random policy passes about 1/|alphabet| of the time.

Used by the trainer tests (a run must learn) and by ``benchmarks/learning.py``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from whilecli.methods.batch import Batch

ALPHABET = "abcdefgh"
SPECIALS = ("<pad>", "<eos>", "=")


def build_tokenizer() -> Any:
    """A character-level ``PreTrainedTokenizerFast``: the alphabet, ``=``, pad and eos."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {tok: i for i, tok in enumerate([*SPECIALS, *ALPHABET])}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<pad>"))
    core.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    core.decoder = decoders.Fuse()
    tok = PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="<eos>")
    tok.padding_side = "left"
    return tok


def build_model(seed: int, vocab_size: int | None = None) -> Any:
    """A 2-layer Qwen2-style causal LM, hidden 64, randomly initialised with ``seed``."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=vocab_size or len(SPECIALS) + len(ALPHABET),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=16,
        tie_word_embeddings=True,
        pad_token_id=0,
        eos_token_id=1,
        bos_token_id=1,
    )
    model = Qwen2ForCausalLM(config).to(torch.float32)
    model.generation_config.pad_token_id = 0
    model.generation_config.eos_token_id = 1
    return model


def prompts(n: int, seed: int) -> list[str]:
    """``n`` prompts ``"c="`` with characters drawn uniformly, seeded."""
    rng = random.Random(seed)
    return [rng.choice(ALPHABET) + "=" for _ in range(n)]


def echo_reward(prompt: str, completion: str) -> float:
    """1.0 when the completion starts with the prompt's character, else 0.0."""
    return 1.0 if completion[:1] == prompt[:1] else 0.0


def echo_rewards(prompts: Sequence[str], completions: Sequence[str], **_: Any) -> list[float]:
    """TRL's reward-function shape: one reward per completion."""
    return [echo_reward(p, c) for p, c in zip(prompts, completions, strict=True)]


@torch.no_grad()
def success_rate(model: Any, tokenizer: Any) -> float:
    """The probability the greedy-free policy echoes, averaged over the alphabet (exact: the
    softmax mass on the right token, no sampling)."""
    ids = tokenizer([c + "=" for c in ALPHABET], return_tensors="pt")["input_ids"]
    logits = model(input_ids=ids).logits[:, -1].float()
    probs = torch.softmax(logits, dim=-1)
    right = torch.tensor(tokenizer.convert_tokens_to_ids(list(ALPHABET)))
    return float(probs[torch.arange(len(ALPHABET)), right].mean())


# ------------------------------------------------------------------ one rollout step


def _sample(model: Any, ids: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """One completion token per prompt, sampled at temperature 1."""
    with torch.no_grad():
        logits = model(input_ids=ids).logits[:, -1].float()
    return torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=gen)


def _logprobs(model: Any, ids: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
    """log π_θ of the sampled completion token, ``[B, 1]``."""
    logits = model(input_ids=ids).logits[:, -1].float()
    return torch.log_softmax(logits, dim=-1).gather(1, action)


@dataclass
class _Rollout:
    asked: list[str]  # the prompts, ``group`` copies of each in a row
    ids: torch.Tensor  # [B, 2] prompt token ids
    action: torch.Tensor  # [B, 1] the sampled completion token
    rewards: torch.Tensor  # [B] (permuted within the batch for the control)


class _Sampler:
    """The toy task's rollouts, seeded: step ``k`` asks ``batch // group`` prompts ``group``
    times each, samples one token per completion and scores it."""

    def __init__(self, tokenizer: Any, *, batch: int, group: int, seed: int, permute: bool):
        self.tokenizer, self.batch, self.group = tokenizer, batch, group
        self.seed, self.permute = seed, permute
        self.gen = torch.Generator().manual_seed(seed)
        self.shuffle = torch.Generator().manual_seed(seed + 1)

    def __call__(self, model: Any, step: int) -> _Rollout:
        group = self.group
        asked = [
            p
            for p in prompts(self.batch // group, self.seed * 100_003 + step)
            for _ in range(group)
        ]
        ids = self.tokenizer(asked, return_tensors="pt")["input_ids"]
        action = _sample(model, ids, self.gen)
        answers = self.tokenizer.convert_ids_to_tokens(action[:, 0].tolist())
        rewards = torch.tensor([echo_reward(p, a) for p, a in zip(asked, answers, strict=True)])
        if self.permute:
            rewards = rewards[torch.randperm(len(rewards), generator=self.shuffle)]
        return _Rollout(asked, ids, action, rewards)


# ------------------------------------------------------------------ a run inside verl's actor


def run_verl(
    method: str = "flash_reinforce",
    *,
    steps: int = 40,
    batch: int = 32,
    micro_batches: int = 4,
    seed: int = 0,
    permute: bool = False,
    lr: float = 3e-3,
    group: int = 1,
) -> list[float]:
    """Train the toy policy inside verl's actor: verl's ``TrainingWorker`` with its FSDP
    engine (FSDP2 over a one-rank gloo group on the CPU, :mod:`whilecli.trainers.verl_cpu`)
    and verl's ``ppo_loss`` with ``policy_loss.loss_mode = whilecli_<loss>``; each step the
    old log-probs come from the actor's ``infer_batch``, the advantages from verl's
    ``compute_advantage`` with ``adv_estimator = whilecli_<method>``, and the update from
    the actor's ``train_mini_batch`` on one mini-batch of ``batch`` completions, split into
    ``micro_batches`` micro-batches by the engine, as verl's trainer calls it (AdamW, no
    weight decay, no gradient clipping). ``group``: completions per prompt (``rollout.n``,
    ≥ 2 for the grpo family). ``permute``: the rewards shuffled within each batch (a control
    that should not learn). Returns the success rate before training and after each step."""
    import tempfile
    from functools import partial

    import numpy as np
    from verl import DataProto
    from verl.trainer.config import CheckpointConfig
    from verl.trainer.ppo.ray_trainer import compute_advantage
    from verl.utils import tensordict_utils as tu
    from verl.workers.config import (
        FSDPActorConfig,
        FSDPEngineConfig,
        FSDPOptimizerConfig,
        HFModelConfig,
        TrainingWorkerConfig,
    )
    from verl.workers.engine_workers import TrainingWorker
    from verl.workers.utils.losses import ppo_loss
    from verl.workers.utils.padding import left_right_2_no_padding, no_padding_2_padding

    import whilecli.trainers.verl  # noqa: F401  (registers the estimators and losses)
    from whilecli.trainers.verl_cpu import use_cpu, without_trl_value_head

    use_cpu()
    tok = build_tokenizer()
    fp32 = {"param_dtype": "fp32", "reduce_dtype": "fp32", "buffer_dtype": "fp32"}
    engine = FSDPEngineConfig(
        strategy="fsdp2", model_dtype="fp32", mixed_precision=fp32, use_torch_compile=False,
        use_dynamic_bsz=False, micro_batch_size_per_gpu=batch // micro_batches,
        infer_micro_batch_size_per_gpu=batch, seed=seed,
    )  # fmt: skip
    optim = FSDPOptimizerConfig(lr=lr, weight_decay=0.0, clip_grad=1e9, total_training_steps=steps)
    loss = "flash_reinforce" if method == "flash_reinforce" else "grpo"
    with tempfile.TemporaryDirectory() as where:
        build_model(seed).save_pretrained(where)
        tok.save_pretrained(where)
        model = HFModelConfig(
            path=where, use_remove_padding=False, enable_gradient_checkpointing=False,
            override_config={"attn_implementation": "eager"},
        )  # fmt: skip
        actor = FSDPActorConfig(
            strategy="fsdp2", ppo_mini_batch_size=batch,
            ppo_micro_batch_size_per_gpu=batch // micro_batches, rollout_n=group,
            policy_loss={"loss_mode": f"whilecli_{loss}"}, loss_agg_mode="seq-mean-token-mean",
            use_torch_compile=False, engine=engine, optim=optim,
        )  # fmt: skip
        actor.model_config = model
        worker = TrainingWorker(
            TrainingWorkerConfig(
                model_type="language_model", model_config=model, engine_config=engine,
                optimizer_config=optim, checkpoint_config=CheckpointConfig(),
            )
        )  # fmt: skip
        with without_trl_value_head():
            worker.reset()
    worker.set_loss_fn(partial(ppo_loss, config=actor))
    policy = worker.engine.module
    rollout = _Sampler(tok, batch=batch, group=group, seed=seed, permute=permute)
    curve = [success_rate(policy, tok)]
    for step in range(steps):
        got = rollout(policy, step)
        n = len(got.asked)
        ids = torch.cat([got.ids, got.action], dim=1)
        data = DataProto.from_dict(
            tensors={
                "input_ids": ids,
                "attention_mask": torch.ones_like(ids),
                "position_ids": torch.arange(ids.shape[1]).expand(n, -1).clone(),
                "prompts": got.ids,
                "responses": got.action,
                "response_mask": torch.ones(n, 1, dtype=torch.long),
                "token_level_rewards": got.rewards[:, None].float(),
            },
            non_tensors={"uid": np.array([f"{step}:{i // group}" for i in range(n)], dtype=object)},
            meta_info={"temperature": 1.0},
        )
        # verl's _compute_old_log_prob: the actor's forward
        td = left_right_2_no_padding(data.to_tensordict())
        tu.assign_non_tensor(td, calculate_entropy=False, compute_loss=False)
        old = tu.get(worker.infer_batch(td), "log_probs")
        data.batch["old_log_probs"] = no_padding_2_padding(old, td).float()
        data = compute_advantage(data, adv_estimator=f"whilecli_{method}")
        # verl's _update_actor: one mini-batch of the whole batch, one epoch
        td = left_right_2_no_padding(data.to_tensordict())
        tu.assign_non_tensor(
            td, calculate_entropy=False, global_batch_size=n, mini_batch_size=n, epochs=1,
            seed=seed, dataloader_kwargs={"shuffle": False}, compute_loss=True,
        )  # fmt: skip
        worker.train_mini_batch(td)
        curve.append(success_rate(policy, tok))
    return curve


# ------------------------------------------------------------------ a run inside TRL's trainer


def run_trl(
    *,
    steps: int = 40,
    batch: int = 32,
    micro_batches: int = 2,
    seed: int = 0,
    permute: bool = False,
    lr: float = 3e-3,
    output_dir: str = "trl-toy",
) -> list[float]:
    """Train the toy policy with :class:`whilecli.trainers.trl.FlashReinforceTrainer`, one
    completion per prompt, ``micro_batches`` accumulation steps per optimizer step; returns the
    success rate before training and after it."""
    from datasets import Dataset

    from whilecli.trainers.trl import FlashReinforceTrainer, flash_reinforce_config

    tok = build_tokenizer()
    model = build_model(seed)
    shuffle = random.Random(seed + 1)

    def reward(prompts: Sequence[str], completions: Sequence[str], **_: Any) -> list[float]:
        got = echo_rewards(prompts, completions)
        if permute:
            shuffle.shuffle(got)
        return got

    args = flash_reinforce_config(
        output_dir=output_dir,
        per_device_train_batch_size=batch // micro_batches,
        gradient_accumulation_steps=micro_batches,
        max_completion_length=1,
        learning_rate=lr,
        lr_scheduler_type="constant",
        optim="adamw_torch",
        weight_decay=0.0,
        adam_beta2=0.999,
        max_grad_norm=1e9,
        max_steps=steps,
        temperature=1.0,
        beta=0.0,
        seed=seed,
        data_seed=seed,
        report_to=[],
        save_strategy="no",
        logging_steps=steps,
        use_cpu=True,
        bf16=False,
        disable_tqdm=True,
        dataloader_num_workers=0,
    )
    data = Dataset.from_dict({"prompt": prompts(batch * steps, seed)})
    trainer = FlashReinforceTrainer(
        model=model, reward_funcs=[reward], args=args, train_dataset=data, processing_class=tok
    )
    before = success_rate(model, tok)
    trainer.train()
    return [before, success_rate(model, tok)]


# ------------------------------------------------------------------ a plain two-step loop


def run_plain(
    method: str = "flash_reinforce",
    *,
    steps: int = 40,
    batch: int = 32,
    micro_batches: int = 4,
    seed: int = 0,
    permute: bool = False,
    lr: float = 3e-3,
    group: int = 1,
) -> list[float]:
    """Train the toy policy with whilecli's two steps in a plain loop (``batch_stats`` once
    per optimizer batch, ``coefficients`` per micro-batch), any token method; SAO and BPCO
    with a small critic (one value per prompt character, trained to the value targets, BPCO's
    bounded to the reward range). Returns the success rate before and after each step."""
    from dataclasses import replace

    from whilecli.methods.registry import make_method

    tok = build_tokenizer()
    model = build_model(seed)
    algo = make_method(method, {})
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    critic = torch.nn.Embedding(len(SPECIALS) + len(ALPHABET), 1)
    torch.nn.init.zeros_(critic.weight)
    critic_opt = torch.optim.Adam(critic.parameters(), lr=0.1)
    rollout = _Sampler(tok, batch=batch, group=group, seed=seed, permute=permute)
    curve = [success_rate(model, tok)]
    for step in range(steps):
        got = rollout(model, step)
        asked, ids, action, rewards = got.asked, got.ids, got.action, got.rewards
        with torch.no_grad():
            old = _logprobs(model, ids, action).double()
        raw = critic(ids[:, 0]).double()  # [B, 1]: the value of the prompt's state
        values = 0.5 + torch.atan(raw) / torch.pi if method == "bpco" else raw
        whole = Batch.from_tensors(
            old,
            rewards=rewards.double(),
            behavior_logprobs=old,
            values=values.detach(),
            task_ids=[f"{i // group}" for i in range(len(asked))],
        )
        stats = algo.batch_stats(whole)
        optimizer.zero_grad()
        targets = []
        for micro in whole.split(micro_batches):
            rows = micro.rows
            assert rows is not None
            logp = _logprobs(model, ids[rows], action[rows]).double()
            update = algo.coefficients(replace(micro, logprobs=logp.detach()), stats)
            update.policy_loss(logp).backward()
            if update.value_targets is not None:
                targets.append((rows, update.value_targets))
        optimizer.step()
        if targets:  # the critic toward the return
            critic_opt.zero_grad()
            loss = sum(((values[rows] - target) ** 2).sum() for rows, target in targets)
            (loss / len(asked)).backward()
            critic_opt.step()
        curve.append(success_rate(model, tok))
    return curve
