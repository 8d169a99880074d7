"""A batch of trajectories as padded tensors, and the :class:`Update` every method returns.

Contract shared by every method module (see DESIGN section 3):

- ``B`` trajectories, padded to ``T`` tokens. ``mask[i, t]`` is True where trajectory ``i``
  has a token ``t`` at all; ``action_mask[i, t]`` is True where that token is an action
  token (the policy wrote it). ``action_mask`` implies ``mask``. Padding holds 0.
- Every per-token tensor is ``[B, T]`` on the batch's device and dtype; ``rewards`` is ``[B]``.
- Optional fields are None when the rows do not carry them. ``behavior_logprobs`` None
  means on-policy (ratio 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch


@dataclass
class Batch:
    """Padded trajectories; build with ``Batch.from_rows`` or ``Batch.from_tensors``."""

    logprobs: torch.Tensor  # [B, T] log π_θ of each sampled token
    mask: torch.Tensor  # [B, T] bool, token exists
    action_mask: torch.Tensor  # [B, T] bool, token is an action token
    rewards: torch.Tensor  # [B]
    behavior_logprobs: torch.Tensor | None = None  # [B, T] log μ (the sampler's)
    values: torch.Tensor | None = None  # [B, T] critic values (SAO, BPCO)
    ref_logprobs: torch.Tensor | None = None  # [B, T] log π_ref (KL terms, DPO)
    teacher_logprobs: torch.Tensor | None = None  # [B, T] log π_T (OPD, OPSD)
    truncated: torch.Tensor | None = None  # [B] bool, cut at the token cap
    task_ids: list[str] | None = None  # grouped methods
    agents: list[str] | None = None  # rae's per-agent baseline key

    @property
    def size(self) -> int:
        """B, the number of trajectories."""
        return int(self.rewards.shape[0])

    @property
    def action_counts(self) -> torch.Tensor:
        """T_i, the action tokens of each trajectory, ``[B]`` in the batch dtype."""
        return self.action_mask.sum(dim=1).to(self.logprobs.dtype)


@dataclass
class Update:
    """What a method returns: the per-token coefficients and what it kept and why.

    ``coefficients[i, t]`` is the number a trainer multiplies ∇ log π_θ(a_{i,t}) by; it is
    detached and exactly 0 on padding, observation tokens and dropped trajectories.
    """

    coefficients: torch.Tensor  # [B, T]
    advantages: torch.Tensor  # [B, T], before any ratio, gate, band or clip
    admitted: torch.Tensor  # [B] bool, the trajectory has gradient left
    value_targets: torch.Tensor | None = None  # [B, T], None without a critic
    stats: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def policy_loss(self, logprobs: torch.Tensor) -> torch.Tensor:
        """The surrogate loss whose gradient is Σ c ∇log π: ``-(coefficients * logprobs).sum()``."""
        return -(self.coefficients.detach() * logprobs).sum()
