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


# ------------------------------------------------------------------ a run around verl's functions


def _sample(model: Any, ids: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """One completion token per prompt, sampled at temperature 1."""
    with torch.no_grad():
        logits = model(input_ids=ids).logits[:, -1].float()
    return torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=gen)


def _logprobs(model: Any, ids: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
    """log π_θ of the sampled completion token, ``[B, 1]``."""
    logits = model(input_ids=ids).logits[:, -1].float()
    return torch.log_softmax(logits, dim=-1).gather(1, action)


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
    """Train the toy policy with verl's ``compute_advantage`` and the registered policy loss
    (``whilecli_<method>``), the loss called once per micro-batch with the optimizer batch's
    ``global_batch_info`` as verl's actor sets it. ``group``: completions per prompt (≥ 2 for
    the grpo family). ``permute``: the rewards shuffled within each batch (a control that
    should not learn). Returns the success rate before training and after each step."""
    import numpy as np
    from verl import DataProto
    from verl.trainer.ppo.core_algos import get_policy_loss_fn
    from verl.trainer.ppo.ray_trainer import compute_advantage
    from verl.workers.config import ActorConfig

    import whilecli.trainers.verl  # noqa: F401  (registers the estimators and losses)

    tok = build_tokenizer()
    model = build_model(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(seed)
    shuffle = torch.Generator().manual_seed(seed + 1)
    loss_name = "flash_reinforce" if method == "flash_reinforce" else "grpo"
    loss_fn = get_policy_loss_fn(f"whilecli_{loss_name}")
    config = ActorConfig(
        strategy="fsdp", ppo_mini_batch_size=batch, ppo_micro_batch_size_per_gpu=1, rollout_n=group
    )
    curve = [success_rate(model, tok)]
    for step in range(steps):
        asked = [p for p in prompts(batch // group, seed * 100_003 + step) for _ in range(group)]
        ids = tok(asked, return_tensors="pt")["input_ids"]
        action = _sample(model, ids, gen)
        with torch.no_grad():
            old = _logprobs(model, ids, action)
        answers = tok.convert_ids_to_tokens(action[:, 0].tolist())
        rewards = torch.tensor([echo_reward(p, a) for p, a in zip(asked, answers, strict=True)])
        if permute:
            rewards = rewards[torch.randperm(len(rewards), generator=shuffle)]
        mask = torch.ones(len(asked), 1, dtype=torch.long)
        data = DataProto.from_dict(
            tensors={"token_level_rewards": rewards[:, None], "response_mask": mask},
            non_tensors={"uid": np.array([f"{step}:{i // group}" for i in range(len(asked))])},
        )
        adv = compute_advantage(data, adv_estimator=f"whilecli_{method}").batch["advantages"]
        config.global_batch_info.update(
            dp_size=1, batch_num_tokens=len(asked), global_batch_size=len(asked),
            loss_scale_factor=None,
        )  # fmt: skip
        optimizer.zero_grad()
        for rows in torch.arange(len(asked)).chunk(micro_batches):
            logp = _logprobs(model, ids[rows], action[rows])
            loss, _ = loss_fn(
                old_log_prob=old[rows],
                log_prob=logp,
                advantages=adv[rows].float(),
                response_mask=mask[rows].bool(),
                loss_agg_mode="seq-mean-token-mean",
                config=config,
                rollout_is_weights=None,
            )
            loss.backward()
        optimizer.step()
        curve.append(success_rate(model, tok))
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
    gen = torch.Generator().manual_seed(seed)
    shuffle = torch.Generator().manual_seed(seed + 1)
    curve = [success_rate(model, tok)]
    for step in range(steps):
        asked = [p for p in prompts(batch // group, seed * 100_003 + step) for _ in range(group)]
        ids = tok(asked, return_tensors="pt")["input_ids"]
        action = _sample(model, ids, gen)
        with torch.no_grad():
            old = _logprobs(model, ids, action).double()
        answers = tok.convert_ids_to_tokens(action[:, 0].tolist())
        rewards = torch.tensor([echo_reward(p, a) for p, a in zip(asked, answers, strict=True)])
        if permute:
            rewards = rewards[torch.randperm(len(rewards), generator=shuffle)]
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
