"""Staleness corrections prime-rl has no loss for, in prime-rl's custom-loss shape.

prime-rl's ``[trainer.loss] type = "custom"`` calls ``fn(inputs, **kwargs)`` once per sample
(``spec/prime-rl.md`` §10). ``inputs`` carries one sample's 1-D tensors ``trainer_logprobs``,
``inference_logprobs``, ``ref_logprobs`` (may be None), ``advantages`` (per token),
``loss_mask`` (bool) and ``loss_weights`` (None or per-token weights); the function returns an
object with ``loss`` (a scalar summed over the sample's tokens; the trainer normalises by the
global token count) and ``metrics`` (name → tensor).

The built-in losses compute ``ratio = exp(trainer − inference)``, a policy-gradient term
``mask · A · ratio`` and a KL term ``kl_tau · (log ratio)²``, and return ``Σ(−pg + kl)``. The two
losses here keep that shape and change only the policy-gradient term, following the seed's
``Async`` corrections (Yao et al. 2025):

* :func:`icepop_loss`: ``c ← c · 1[low ≤ ρ ≤ high]``, band (0.5, 5.0) (Ring-1T,
  arXiv:2510.18855): a token whose ratio leaves the band contributes no policy gradient.
* :func:`tis_loss`: the built-in term's ρ replaced by ``min(ρ, cap)``, cap 2.0 (truncated
  importance sampling, as in verl): the gradient of the policy-gradient term with respect to
  ``trainer_logprobs`` is ``−mask · A · min(ρ, cap)`` on every token, the truncated weight
  held constant, with no PPO clip. This is the update path's ``--correction tis`` (DESIGN
  section 3): for the grpo family ``g = A · min(ρ, cap)`` on every action token, for
  FlashReinforce ``c ← c · min(ρ, cap)/ρ``; never ``A · ρ · min(ρ, cap)``.

This module imports torch; :mod:`whilecli.emit.prime_rl` names it by path and never imports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from whilecli import knobs

#: The seed's Async defaults (``methods-in-symbols.md``, Staleness), declared in
#: :mod:`whilecli.knobs`.
ICEPOP_LOW = knobs.ICEPOP_LOW.default
ICEPOP_HIGH = knobs.ICEPOP_HIGH.default
TIS_CAP = knobs.TIS_CAP.default
#: prime-rl's built-in KL coefficient (``[trainer.loss] kl_tau``, default 1e-3).
KL_TAU = 1e-3


@dataclass
class LossOutput:
    """What prime-rl's trainer reads from a custom loss: ``loss`` and ``metrics``."""

    loss: torch.Tensor
    metrics: dict[str, torch.Tensor] = field(default_factory=dict)


def _get(inputs: Any, name: str) -> Any:
    """Read ``name`` from an inputs object or a mapping."""
    if isinstance(inputs, dict):
        return inputs.get(name)
    return getattr(inputs, name, None)


def _unpack(inputs: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Return ``(log ratio, advantages, mask as float, per-token weights)`` of one sample."""
    trainer = _get(inputs, "trainer_logprobs")
    inference = _get(inputs, "inference_logprobs")
    advantages = _get(inputs, "advantages")
    mask = _get(inputs, "loss_mask")
    weights = _get(inputs, "loss_weights")
    if trainer is None or inference is None or advantages is None or mask is None:
        raise ValueError(
            "a custom loss needs trainer_logprobs, inference_logprobs, advantages and loss_mask"
        )
    shape = trainer.shape
    for name, t in (("inference_logprobs", inference), ("advantages", advantages)):
        if t.shape != shape:
            raise ValueError(f"{name} has shape {tuple(t.shape)}, trainer_logprobs {tuple(shape)}")
    if mask.shape != shape:
        raise ValueError(f"loss_mask has shape {tuple(mask.shape)}, expected {tuple(shape)}")
    m = mask.to(trainer.dtype)
    w = torch.ones_like(m) if weights is None else weights.to(trainer.dtype)
    log_ratio = trainer - inference.detach()
    return log_ratio, advantages.detach().to(trainer.dtype), m, w


def _masked_mean(x: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    n = m.sum()
    return (x * m).sum() / n.clamp(min=1.0)


def icepop_loss(
    inputs: Any,
    *,
    low: float = ICEPOP_LOW,
    high: float = ICEPOP_HIGH,
    kl_tau: float = KL_TAU,
) -> LossOutput:
    """IcePop: the built-in policy-gradient term kept only where ``low ≤ ρ ≤ high``.

    ``ρ = exp(trainer − inference)``, ``keep = 1[low ≤ ρ ≤ high]``,
    ``pg = mask · keep · A · ρ``, ``kl = mask · kl_tau · (log ρ)²``,
    ``loss = Σ w · (−pg + kl)``. A token outside the band gets no policy gradient (and no
    NaN from an overflowing ratio); it keeps the KL term, as in the built-ins.
    """
    if not 0.0 < low <= 1.0 <= high:
        raise ValueError(f"icepop needs 0 < low <= 1 <= high, got low={low}, high={high}")
    log_ratio, adv, m, w = _unpack(inputs)
    ratio_all = torch.exp(log_ratio.detach())
    keep = (ratio_all >= low) & (ratio_all <= high)
    safe_log_ratio = torch.where(keep, log_ratio, torch.zeros_like(log_ratio))
    ratio = torch.exp(safe_log_ratio)
    pg = torch.where(keep, adv * ratio, torch.zeros_like(ratio)) * m
    kl = kl_tau * log_ratio.square() * m
    loss = (w * (kl - pg)).sum()
    masked = m * (~keep).to(m.dtype)
    metrics = {
        "icepop/masked_fraction": _masked_mean(masked, m).detach(),
        "icepop/ratio_mean": _masked_mean(torch.where(keep, ratio_all, 0.0), m * keep).detach(),
    }
    return LossOutput(loss=loss, metrics=metrics)


def tis_loss(inputs: Any, *, cap: float = TIS_CAP, kl_tau: float = KL_TAU) -> LossOutput:
    """Truncated importance sampling: the policy-gradient term weighted by ``min(ρ, cap)``.

    The seed's ``c ← c · min(ρ, cap)`` with ``c = A`` per token: the weight
    ``v = min(ρ, cap)`` is held constant and the term is ``pg = mask · A · v · exp(ℓ − sg(ℓ))``
    (ℓ the trainer log-prob), whose value is ``mask · A · min(ρ, cap)`` and whose gradient with
    respect to ℓ is the same. Below the cap this is the built-in ``A · ρ`` (value and
    gradient); above it the weight stops at ``cap``. ``loss = Σ w · (−pg + kl)`` with the
    built-in ``kl = mask · kl_tau · (log ρ)²`` (``kl_tau = 0`` leaves the seed's term alone).
    """
    if not cap >= 1.0:
        raise ValueError(f"tis needs cap >= 1, got cap={cap}")
    log_ratio, adv, m, w = _unpack(inputs)
    trainer = _get(inputs, "trainer_logprobs")
    ratio_all = torch.exp(log_ratio.detach())
    weight = torch.clamp(ratio_all, max=cap)
    pg = adv * weight * torch.exp(trainer - trainer.detach()) * m
    kl = kl_tau * log_ratio.square() * m
    loss = (w * (kl - pg)).sum()
    capped = m * (ratio_all > cap).to(m.dtype)
    metrics = {
        "tis/capped_fraction": _masked_mean(capped, m).detach(),
        "tis/weight_mean": _masked_mean(weight, m).detach(),
    }
    return LossOutput(loss=loss, metrics=metrics)
