"""The group baselines as per-token coefficients: GRPO, max_rl and rae.

All three use PPO's clipped surrogate with GRPO's length weights and optional k3 KL term
(:mod:`whilecli.methods.surrogate`); only the advantage A_i differs:

- ``GRPO`` (Shao et al. 2024, arXiv:2402.03300): A_i = (R_i − mean_g)/std_g, sample std
  (n − 1); ``dr_grpo`` (Liu et al. 2025, arXiv:2503.20783) drops the std: A_i = R_i − mean_g.
- ``MaxRL`` (arXiv:2602.02710): A_i = (R_i − mean_g)/mean_g, 0 when mean_g = 0.
- ``RAE`` (SPIRAL, arXiv:2506.24119): A_i = R_i − b_agent, b read before the row, then
  b ← 0.95 b + 0.05 R_i, rows in order, baselines carried across calls in a state file.

A unanimous group (rewards within 1e-9 of each other, one-row groups included) carries A = 0.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from typing import ClassVar

import torch

from whilecli import jsonout
from whilecli.errors import InputError
from whilecli.fileio import atomic_write_text
from whilecli.knobs import DECAY
from whilecli.methods.batch import Batch
from whilecli.methods.groups import (
    UNANIMOUS_TOLERANCE,
    GroupStats,
    count,
    ema_baselines,
    group_ids,
    group_stats,
    refuse_all_singletons,
)
from whilecli.methods.surrogate import Baseline, ClippedPolicyGradient, knob_error, number_knob
from whilecli.methods.validate import Needs, reward_bound


def grpo_reference(
    reward: torch.Tensor,
    group: torch.Tensor,
    logp: torch.Tensor,
    action_mask: torch.Tensor,
    *,
    behavior_logp: torch.Tensor | None = None,
    ref_logp: torch.Tensor | None = None,
    truncated: torch.Tensor | None = None,
    kind: str = "grpo",
    loss_type: str = "grpo",
    clip: float = 0.2,
    beta: float = 0.0,
    max_len: float | None = None,
    truncated_mode: str = "mask",
) -> torch.Tensor:
    """GRPO's c ``[B, T]`` end to end, one line per equation of the seed (plain torch):
    advantages, clipped surrogate, length weights, truncation and the k3 term.

    ``group [B]`` the group index of each row (rows sharing a task id); ``kind`` ``grpo`` or
    ``max_rl`` (the advantage; ``loss_type="dr_grpo"`` drops grpo's std); ``behavior_logp``
    None for an on-policy batch (ρ = 1); ``truncated [B]`` bool. B counts every row. The
    reference the tests hold :class:`GRPO` and :class:`MaxRL` to, beside the plain-Python
    loop.
    """
    B = reward.shape[0]
    none_cut = torch.zeros(B, dtype=torch.bool, device=reward.device)
    cut = none_cut if truncated is None else truncated.to(torch.bool)
    R = torch.where(cut, 0.0, reward) if truncated_mode == "zero" else reward  # "zero": R = 0
    live = ~cut if truncated_mode == "mask" else torch.ones_like(cut)  # "mask": c = 0
    zeros = torch.zeros(int(group.max()) + 1, dtype=R.dtype, device=R.device)
    n = zeros.index_add(0, group, torch.ones_like(R))  # rows per group
    mean = zeros.index_add(0, group, R) / n  # mean_g
    std = torch.sqrt(zeros.index_add(0, group, (R - mean[group]) ** 2) / (n - 1))  # sample std_g
    lo = zeros.scatter_reduce(0, group, R, "amin", include_self=False)
    hi = zeros.scatter_reduce(0, group, R, "amax", include_self=False)
    unanimous = (hi - lo <= UNANIMOUS_TOLERANCE)[group]  # rewards within 1e-9: one reward
    if kind == "max_rl":
        A = torch.where(mean[group] == 0, 0.0, (R - mean[group]) / mean[group])
    elif loss_type == "dr_grpo":
        A = R - mean[group]  # Dr. GRPO: no std
    else:
        A = (R - mean[group]) / std[group]  # A_i = (R_i − mean_g)/std_g
    A = torch.where(unanimous, 0.0, A)[:, None]  # a unanimous group carries nothing
    T = action_mask.sum(dim=1).to(R.dtype)  # T_i
    L_max = float(T.max()) if max_len is None else float(max_len)
    w = {
        "grpo": 1 / (T.clamp(min=1) * B),
        "bnpo": torch.ones_like(T) / torch.where(live, T, 0.0).sum().clamp(min=1),
        "dr_grpo": torch.ones_like(T) / (max(L_max, 1.0) * B),
    }[loss_type]
    w = torch.where(live & (T > 0), w, 0.0)[:, None]  # w_i
    log_rho = torch.zeros_like(logp) if behavior_logp is None else logp - behavior_logp
    rho = torch.exp(torch.where(action_mask, log_rho, 0.0))  # ρ = π_θ/μ
    unclipped = ((A > 0) & (rho <= 1 + clip)) | ((A < 0) & (rho >= 1 - clip))
    g = torch.where(unclipped, rho * A, 0.0)  # d/dlog π of min(ρA, clip(ρ, 1 ± ε)A)
    c = w * g
    if beta > 0:
        assert ref_logp is not None
        r = torch.exp(ref_logp - logp)  # π_ref/π_θ; KL_k3 = r − log r − 1
        c = c - beta * w * (1 - r)  # its gradient term
    return torch.where(action_mask & live[:, None], c, 0.0) + 0.0  # c = 0 off a row's loss


def group_advantages_reference(
    reward: torch.Tensor, group: torch.Tensor, kind: str
) -> torch.Tensor:
    """A_i ``[B]`` alone (``grpo``, ``dr_grpo``, ``max_rl``), as in :func:`grpo_reference`.

    A_i = 0 in a unanimous group (rewards within 1e-9, a one-row group included).
    """
    zeros = torch.zeros(int(group.max()) + 1, dtype=reward.dtype, device=reward.device)
    n = zeros.index_add(0, group, torch.ones_like(reward))  # rows per group
    mean = zeros.index_add(0, group, reward) / n  # mean_g
    centred = reward - mean[group]
    var = zeros.index_add(0, group, centred**2) / (n - 1)  # std_g², sample (n − 1)
    lo = zeros.scatter_reduce(0, group, reward, "amin", include_self=False)
    hi = zeros.scatter_reduce(0, group, reward, "amax", include_self=False)
    unanimous = (hi - lo <= UNANIMOUS_TOLERANCE)[group]  # rewards within 1e-9
    if kind == "grpo":
        A = centred / torch.sqrt(var)[group]
    elif kind == "dr_grpo":
        A = centred
    else:
        A = torch.where(mean[group] == 0, 0.0, centred / mean[group])
    return torch.where(unanimous, 0.0, A)


def _group_notes(stats: GroupStats) -> tuple[dict[str, float], list[str]]:
    """Counts of unanimous and one-row groups, as stats and sentences."""
    single = stats.counts == 1
    unanimous = stats.unanimous & ~single
    n_single, n_unan = int(single.sum()), int(unanimous.sum())
    out = {
        "groups": float(stats.n_groups),
        "unanimous_groups": float(n_unan),
        "single_row_groups": float(n_single),
    }
    notes = []
    if n_unan:
        rows = int(stats.counts[unanimous].sum())
        notes.append(
            f"A = 0 for {count(rows, 'row')} in {n_unan} of {stats.n_groups} groups, which are "
            "unanimous (every reward within 1e-9 of the others)."
        )
    if n_single:
        notes.append(f"A = 0 for {count(n_single, 'task')} with a single row.")
    return out, notes


class _Grouped(ClippedPolicyGradient):
    """Rows grouped by task id (the runner refuses a row without one)."""

    needs = Needs(fields=("task_ids",))

    def _labels(self, batch: Batch) -> dict[str, list[str]]:
        return {"task": [str(t) for t in batch.task_ids or ()]}


class GRPO(_Grouped):
    """GRPO (Shao et al. 2024, arXiv:2402.03300), Dr. GRPO (Liu et al. 2025, arXiv:2503.20783).

    A_i = (R_i − mean_g)/std_g over the rows sharing a task id (sample std, n − 1), or
    A_i = R_i − mean_g with ``loss_type="dr_grpo"``; A_i = 0 in a unanimous group.
    c_{i,t} = w_i g_{i,t} − β w_i (1 − r_{i,t}) (see :mod:`whilecli.methods.surrogate`).
    """

    name: ClassVar[str] = "grpo"

    def _advantages(
        self, rewards: torch.Tensor, labels: dict[str, list[str]]
    ) -> tuple[Baseline, dict[str, float], list[str]]:
        ids = group_ids(labels["task"], rewards.device)
        gs = group_stats(rewards, ids)
        refuse_all_singletons(gs, self.name)
        std = gs.std[ids]
        one = torch.ones_like(std)
        scale = one if self.loss_type == "dr_grpo" else torch.where(std > 0, std, one)
        base = Baseline(centre=gs.mean[ids], scale=scale, zero=gs.unanimous[ids])
        stats, notes = _group_notes(gs)
        return base, stats, notes


class MaxRL(_Grouped):
    """max_rl (arXiv:2602.02710): A_i = (R_i − mean_g)/mean_g, and 0 when mean_g = 0.

    Dividing by the group mean makes the gradient unbiased for the maximum-likelihood
    objective and weights a rarely solved task by about 1/p. Rewards must be ≥ 0 (a
    negative group mean would reverse the update). Surrogate and weights as GRPO's.
    """

    name: ClassVar[str] = "max_rl"
    needs = Needs(
        fields=("task_ids",),
        reward_floor=0.0,
        floor_reason="it divides by the group's mean reward, a success probability",
    )

    def _advantages(
        self, rewards: torch.Tensor, labels: dict[str, list[str]]
    ) -> tuple[Baseline, dict[str, float], list[str]]:
        ids = group_ids(labels["task"], rewards.device)
        gs = group_stats(rewards, ids)
        refuse_all_singletons(gs, self.name)
        mean = gs.mean[ids]
        zero = gs.mean == 0
        scale = torch.where(mean != 0, mean, torch.ones_like(mean))
        base = Baseline(centre=mean, scale=scale, zero=gs.unanimous[ids] | zero[ids])
        stats, notes = _group_notes(gs)
        stats["zero_mean_groups"] = float(zero.sum())
        if int(zero.sum()):
            notes.append(f"A = 0 for {count(int(zero.sum()), 'group')} with mean reward 0.")
        return base, stats, notes


class RAE(ClippedPolicyGradient):
    """rae, the role-conditioned advantage of SPIRAL (arXiv:2506.24119).

    A_i = R_i − b_agent(i), with b read before the row and then b ← d·b + (1 − d)·R_i
    (d = ``decay`` = 0.95), rows in batch order. Baselines start at 0 (or at
    ``baselines`` / :meth:`load_state`) and are carried across calls: after ``update`` they
    hold the values after the batch's last row, and :meth:`save_state` writes them as JSON
    ``{agent: b}``. The recursion is evaluated in closed form per agent
    (:func:`whilecli.methods.groups.ema_baselines`). Rows without an agent key under
    ``agent_key`` share the agent ``default``. Surrogate and weights as GRPO's.
    """

    name: ClassVar[str] = "rae"
    by_task: ClassVar[bool] = False

    def __init__(
        self,
        decay: float = DECAY.default,
        agent_key: str = "agent",
        baselines: Mapping[str, float] | None = None,
        loss_type: str = "grpo",
        clip: float = 0.2,
        beta: float = 0.0,
        max_len: int | None = None,
        truncated: str = "mask",
        compile: bool = False,
    ) -> None:
        super().__init__(
            loss_type=loss_type,
            clip=clip,
            beta=beta,
            max_len=max_len,
            truncated=truncated,
            compile=compile,
        )
        decay = DECAY.check(decay, f"{self.name}: decay")
        if not isinstance(agent_key, str) or not agent_key.strip():
            raise knob_error(self.name, "agent_key", "agent", agent_key, "a non-empty string")
        self.decay, self.agent_key = decay, agent_key
        self.state_file: str | None = None  # where the baselines were read from, if a file
        self.baselines: dict[str, float] = {}
        for agent, b in (baselines or {}).items():
            value = number_knob(self.name, f"baselines[{agent!r}]", 0.0, b)
            if not math.isfinite(value):
                raise knob_error(self.name, f"baselines[{agent!r}]", 0.0, b, "finite")
            self.baselines[str(agent)] = value

    def load_state(self, path: str | os.PathLike[str]) -> None:
        """Read ``{agent: b}`` from a JSON file; a missing file means every baseline is 0."""
        if not os.path.exists(path):
            self.baselines = {}
            return
        try:
            with open(path, "rb") as f:
                text = f.read()
        except OSError as err:
            raise InputError(
                f"cannot read rae state: {err.strerror or err}", file=str(path)
            ) from None
        data = jsonout.loads(text, file=str(path), what="rae state (JSON)")
        if not isinstance(data, dict):
            raise InputError("rae state must be a JSON object {agent: baseline}", file=str(path))
        out: dict[str, float] = {}
        for agent, b in data.items():
            if isinstance(b, bool) or not isinstance(b, (int, float)) or not math.isfinite(b):
                raise InputError(
                    f"baseline {b!r} is not a finite number", file=str(path), field=agent
                )
            out[agent] = float(b)
        self.baselines, self.state_file = out, os.fspath(path)

    def _check_baselines(self, names: list[str], dtype: torch.dtype) -> None:
        """Refuse a baseline past the reward bound (:func:`whilecli.methods.validate.reward_bound`,
        ±1.3e150 in float64, ±1.8e15 in float32): it enters the same arithmetic as a reward, so
        one past it gives coefficients of 1e297 or an overflow blamed on the rows. Named at the
        state file and the agent's key, or at the ``baselines`` knob."""
        bound = reward_bound(dtype)
        for agent in names:
            b = self.baselines.get(agent, 0.0)
            if abs(b) <= bound:
                continue
            why = (
                f"baseline {b:g} is past ±{bound:.2g}, the most a reward may be in"
                f" {str(dtype).removeprefix('torch.')}: not a baseline rae's rewards can give"
            )
            if self.state_file is not None:
                raise InputError(why, file=self.state_file, field=agent)
            raise knob_error(self.name, f"baselines[{agent!r}]", 0.0, b, f"within ±{bound:.2g}")

    def state_text(self) -> str:
        """The baselines as the state file's JSON text, ``{agent: b}``."""
        return json.dumps(self.baselines, indent=2, sort_keys=True) + "\n"

    def save_state(self, path: str | os.PathLike[str]) -> None:
        """Write the baselines as JSON ``{agent: b}``, atomically, replacing the file."""
        atomic_write_text(path, self.state_text(), force=True)

    def _labels(self, batch: Batch) -> dict[str, list[str]]:
        if batch.agents is None:
            return {"agent": ["default"] * batch.size}
        return {"agent": [str(a) if a not in (None, "") else "default" for a in batch.agents]}

    def _advantages(
        self, rewards: torch.Tensor, labels: dict[str, list[str]]
    ) -> tuple[Baseline, dict[str, float], list[str]]:
        agents = labels["agent"]
        codes: dict[str, int] = {}
        ids = torch.tensor([codes.setdefault(a, len(codes)) for a in agents], dtype=torch.long).to(
            rewards.device
        )
        names = list(codes)
        self._check_baselines(names, rewards.dtype)
        start = torch.tensor([self.baselines.get(a, 0.0) for a in names], dtype=rewards.dtype).to(
            rewards.device
        )
        before, final = ema_baselines(rewards, ids, start, self.decay)
        for a, b in zip(names, final.tolist(), strict=True):
            self.baselines[a] = float(b)
        shown = ", ".join(f"{a} {self.baselines[a]:.4g}" for a in names[:5])
        more = f" and {len(names) - 5} more" if len(names) > 5 else ""
        notes = [
            f"rae baselines per '{self.agent_key}' (decay {self.decay}), after this batch: "
            f"{shown}{more}."
        ]
        stats = {"agents": float(len(names)), "baseline_mean": float(final.mean())}
        base = Baseline(
            centre=before, scale=torch.ones_like(before), zero=torch.zeros_like(before).bool()
        )
        return base, stats, notes
