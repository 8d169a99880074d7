"""A small seeded softmax policy on a toy task, trained only through a method's coefficients.

The task: ``prompts`` prompts, each with a hidden target string of ``actions`` tokens over a
vocabulary of ``vocab`` symbols. A rollout writes one token per action position; after the
second action the environment inserts one observation token (``action_mask`` false), so every
trajectory has an observation span the critic methods must skip. The reward is the share of
positions that match the target, in [0, 1].

The policy is a table of logits ``theta[prompt, position, symbol]``. Each step samples
``prompts_per_step`` prompts with ``group_size`` rollouts each, builds a :class:`Batch` with every
field a method may need (behaviour log-probs from the sampler, critic values from a tabular
critic trained on the method's value targets, reference log-probs from the initial policy,
teacher log-probs from a policy that knows the target, task ids), calls
``method.update(batch)`` and takes one Adam step on ``-(coefficients * logprobs).sum()``.
The only training signal is the coefficients.

``train_toy`` returns the policy's expected reward (exact, not sampled) before and after.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from whilecli.methods.batch import Batch

OBSERVATION_AFTER = 2  # the environment writes one token after this many actions
OBSERVATION_LOGPROB = -1.0  # what a trainer would store for a token it did not write


def _expected_reward(theta: torch.Tensor, targets: torch.Tensor) -> float:
    """Mean over prompts and positions of π(target token): the exact expected reward."""
    probs = torch.softmax(theta, dim=-1)
    hit = probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return float(hit.mean())


def _sequence_layout(actions: int) -> tuple[int, torch.Tensor, torch.Tensor]:
    """Token count, the action position of each token (-1 for observations), the action mask."""
    positions: list[int] = []
    for k in range(actions):
        positions.append(k)
        if k + 1 == OBSERVATION_AFTER:
            positions.append(-1)
    pos = torch.tensor(positions)
    return len(positions), pos, pos >= 0


def train_toy(
    method_factory: Callable[[], Any],
    steps: int,
    seed: int,
    *,
    prompts: int = 8,
    actions: int = 3,
    vocab: int = 4,
    prompts_per_step: int = 8,
    group_size: int = 4,
    lr: float = 0.1,
    critic_rate: float = 0.5,
) -> tuple[float, float]:
    """Train the toy policy for ``steps`` steps with ``method_factory()``'s coefficients.

    Returns ``(reward_before, reward_after)``: the expected reward of the initial and the final
    policy. Deterministic for a given ``seed``.
    """
    gen = torch.Generator().manual_seed(seed)
    dtype = torch.float64
    targets = torch.randint(0, vocab, (prompts, actions), generator=gen)
    theta = (
        0.01 * torch.randn(prompts, actions, vocab, generator=gen, dtype=dtype)
    ).requires_grad_()
    ref_logits = theta.detach().clone()
    teacher_logits = torch.full((prompts, actions, vocab), -2.0, dtype=dtype)
    teacher_logits.scatter_(-1, targets.unsqueeze(-1), 2.0)
    critic = torch.full((prompts, actions), 0.5, dtype=dtype)
    opt = torch.optim.Adam([theta], lr=lr)
    method = method_factory()
    n_tokens, token_pos, action_mask_row = _sequence_layout(actions)
    act_cols = token_pos.clamp(min=0)
    before = _expected_reward(theta.detach(), targets)

    for _ in range(steps):
        chosen = torch.randperm(prompts, generator=gen)[:prompts_per_step]
        prompt_of_row = chosen.repeat_interleave(group_size)
        b = prompt_of_row.numel()
        with torch.no_grad():
            probs = torch.softmax(theta[prompt_of_row], dim=-1)  # [B, actions, vocab]
            sampled = torch.multinomial(probs.reshape(-1, vocab), 1, generator=gen)
            sampled = sampled.reshape(b, actions)
        rewards = (sampled == targets[prompt_of_row]).to(dtype).mean(dim=1)

        def token_logprobs(
            logits: torch.Tensor, rows: torch.Tensor = prompt_of_row, picks: torch.Tensor = sampled
        ) -> torch.Tensor:
            lp = torch.log_softmax(logits[rows], dim=-1).gather(-1, picks.unsqueeze(-1))
            out = lp.squeeze(-1)[:, act_cols]  # [B, tokens]
            return torch.where(action_mask_row, out, torch.full_like(out, OBSERVATION_LOGPROB))

        logprobs = token_logprobs(theta)
        values = critic[prompt_of_row][:, act_cols]
        batch = Batch(
            logprobs=logprobs.detach(),
            mask=torch.ones(b, n_tokens, dtype=torch.bool),
            action_mask=action_mask_row.expand(b, n_tokens).clone(),
            rewards=rewards,
            behavior_logprobs=logprobs.detach().clone(),
            values=values.clone(),
            ref_logprobs=token_logprobs(ref_logits).detach(),
            teacher_logprobs=token_logprobs(teacher_logits).detach(),
            truncated=torch.zeros(b, dtype=torch.bool),
            task_ids=[f"p{int(p)}" for p in prompt_of_row],
            agents=None,
        )
        update = method.update(batch)
        opt.zero_grad()
        loss = -(update.coefficients.detach() * logprobs).sum()
        loss.backward()
        opt.step()

        targets_v = update.value_targets
        if targets_v is None:
            targets_v = rewards.unsqueeze(1).expand(b, n_tokens)
        with torch.no_grad():
            action_targets = targets_v[:, action_mask_row]  # [B, actions]
            for r in range(b):
                p = int(prompt_of_row[r])
                critic[p] += critic_rate * (action_targets[r] - critic[p]) / group_size

    return before, _expected_reward(theta.detach(), targets)
