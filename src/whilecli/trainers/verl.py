"""whilecli's methods as verl advantage estimators and policy losses (verl 0.9).

Load it in every verl process with ``VERL_USE_EXTERNAL_MODULES=whilecli.trainers.verl`` (or
``import whilecli.trainers.verl`` before the trainer starts) and select by verl's own keys::

    algorithm.adv_estimator=whilecli_flash_reinforce
    actor_rollout_ref.actor.policy_loss.loss_mode=whilecli_flash_reinforce
    actor_rollout_ref.rollout.n=1

The two steps of :mod:`whilecli.methods.twostep` map onto verl's: the batch-global part of
the advantage (the mean reward over the rollout batch, the groups) is the registered
advantage estimator, which verl's ``compute_advantage`` runs once on the whole batch on the
driver; the per-token part is the registered policy loss, which verl calls once per
micro-batch, with the optimizer batch's B (``global_batch_size``), Σ_j T_j
(``batch_num_tokens``) and data-parallel size in ``config.global_batch_info``. The loss is
``−dp_size · Σ c · log π_θ`` (dp_size because verl's data-parallel gradients are averaged),
so its gradient with respect to ``log_prob`` is exactly −c, micro-batch by micro-batch.

Registered:

- estimators ``whilecli_flash_reinforce`` (A_i = R_i − mean R over the rollout batch),
  ``whilecli_grpo`` (sample std, A = 0 in a unanimous or one-row group, as TRL and whilecli;
  verl's own ``grpo`` adds 1e-6 to the std), ``whilecli_dr_grpo``, ``whilecli_max_rl``,
  ``whilecli_rae`` (the running baseline, kept by the driver from step to step, one agent);
- losses ``whilecli_flash_reinforce`` (gate, ρ, 1/(T_i B)) and ``whilecli_grpo`` (the clipped
  surrogate with whilecli's length weights, chosen by verl's ``loss_agg_mode``:
  ``seq-mean-token-mean`` → grpo's 1/(T_i B), ``token-mean`` → bnpo's 1/Σ_j T_j,
  ``seq-mean-token-sum-norm`` → dr_grpo's 1/(L_max B) with L_max verl's
  ``loss_scale_factor`` or the response length; ε is verl's ``clip_ratio``; verl's dual clip
  ``clip_ratio_c`` (default 3.0) sets c = 0 where A < 0 and ρ > clip_ratio_c, as its
  ``vanilla`` loss does, so switching loss_mode keeps it), each also with a
  staleness correction: ``<loss>_ipo``, ``<loss>_icepop``, ``<loss>_tis`` (DESIGN section 3;
  ``whilecli_grpo_tis`` is A·min(ρ, 2) with no clip, dual clip included, verl's
  ``bypass_pg_is``). The
  ``whilecli_grpo`` losses serve the grpo, dr_grpo, max_rl and rae estimators alike.

μ is verl's ``old_log_prob`` (the policy before this update); a sampler/trainer gap is
verl's ``rollout_is_weights``, multiplied into c per token as verl's own losses do. Knobs:
:func:`configure` or the JSON environment variable ``WHILECLI_VERL_KNOBS``
(``{"trust": 0.003, "tis_cap": 2.0, "ipo_eps": 0.3, "icepop_band": [0.5, 5.0]}``), read in
each process at import.

SAO and BPCO are not registered: :func:`register` refuses them with the reason (verl hands a
custom estimator no critic values).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch
from verl.trainer.ppo import core_algos

from whilecli import jsonout
from whilecli import knobs as declared
from whilecli.errors import UsageError
from whilecli.methods.batch import Batch, Update
from whilecli.methods.corrections import PolicyGradientUpdate
from whilecli.methods.flash_reinforce import FlashReinforce
from whilecli.methods.grpo import GRPO, RAE, MaxRL
from whilecli.methods.surrogate import length_weights, surrogate_coefficients
from whilecli.methods.twostep import BatchStats, TwoStep
from whilecli.methods.validate import Needs, correction_needs

PREFIX = "whilecli_"
#: verl's ``loss_agg_mode`` → whilecli's grpo ``loss_type`` (the same length weight).
AGG_MODES = {
    "seq-mean-token-mean": "grpo",
    "token-mean": "bnpo",
    "seq-mean-token-sum-norm": "dr_grpo",
}
#: Methods verl cannot run through these hooks, and why.
REFUSED = {
    "sao": (
        "verl hands a registered advantage estimator token_level_rewards, response_mask, the "
        "uid index and the algorithm config, never the critic's values (only its built-in "
        "gae gets them), and SAO's advantage is a GAE over the critic's values with "
        "λ = 1 − 1/(α L) per trajectory; run SAO through whilecli's own loop "
        "(method.batch_stats / coefficients) or verl's gae with a fixed λ"
    ),
    "bpco": (
        "verl hands a registered advantage estimator no critic values (only its built-in gae "
        "gets them), and BPCO's advantage is a GAE over a bounded critic's values with "
        "λ = 1 − 1/(α L) per trajectory; run BPCO through whilecli's own loop "
        "(method.batch_stats / coefficients)"
    ),
}
_KNOBS: dict[str, Any] = {
    "trust": declared.TRUST.default,
    "tis_cap": declared.TIS_CAP.default,
    "ipo_eps": declared.IPO_EPS.default,
    "icepop_band": tuple(declared.ICEPOP_BAND),
}
_RAE = RAE()
#: verl's default ``clip_ratio_c``, the dual clip of its vanilla PPO loss (ActorConfig).
DUAL_CLIP = 3.0


def configure(**knobs: Any) -> dict[str, Any]:
    """Set the knobs the registered functions read (``trust``, ``tis_cap``, ``ipo_eps``,
    ``icepop_band``), each checked against its declaration; returns them all."""
    for name, value in knobs.items():
        if name == "trust":
            _KNOBS[name] = declared.TRUST.check(value, "trust")
        elif name == "tis_cap":
            _KNOBS[name] = declared.TIS_CAP.check(value, "tis_cap")
        elif name == "ipo_eps":
            _KNOBS[name] = declared.IPO_EPS.check(value, "ipo_eps")
        elif name == "icepop_band":
            _KNOBS[name] = declared.check_band(tuple(value), "icepop_band")
        else:
            raise UsageError(f"unknown knob {name!r}; known: {', '.join(sorted(_KNOBS))}")
    return dict(_KNOBS)


def _correction_knobs(name: str | None) -> dict[str, Any]:
    if name == "tis":
        return {"cap": _KNOBS["tis_cap"]}
    if name == "ipo":
        return {"eps": _KNOBS["ipo_eps"]}
    if name == "icepop":
        return {"band": _KNOBS["icepop_band"]}
    return {}


# ------------------------------------------------------------------ advantage estimators


def _outcome_batch(
    token_level_rewards: torch.Tensor, response_mask: torch.Tensor, index: Any | None
) -> Batch:
    """The rollout batch as whilecli sees it for its batch-wide step: R_i = Σ_t reward."""
    mask = response_mask.bool()
    rewards = token_level_rewards.sum(dim=-1)
    tasks = None if index is None else [str(u) for u in np.asarray(index).tolist()]
    return Batch.from_tensors(
        torch.zeros_like(token_level_rewards), rewards=rewards, mask=mask, task_ids=tasks
    )


def _spread(adv: torch.Tensor, response_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    scores = adv[:, None].to(response_mask.device) * response_mask.to(adv.dtype)
    return scores, scores


def flash_reinforce_advantage(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    config: Any = None,
    index: Any = None,
    **_: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """FlashReinforce's A_i = R_i − mean R over the rollout batch (Eq. 5), on every response
    token; verl's ``(advantages, returns)``."""
    batch = _outcome_batch(token_level_rewards, response_mask, None)
    method = FlashReinforce(trust=_KNOBS["trust"])
    totals = method.batch_stats(batch).values["totals"]
    return _spread(batch.rewards - totals[0] / totals[1], response_mask)


def _grouped(method: Any) -> Callable[..., tuple[torch.Tensor, torch.Tensor]]:
    def estimator(
        token_level_rewards: torch.Tensor,
        response_mask: torch.Tensor,
        config: Any = None,
        index: Any = None,
        **_: Any,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if index is None and method.by_task:
            raise UsageError(f"{method.name} groups rollouts by verl's uid, which is missing")
        batch = _outcome_batch(token_level_rewards, response_mask, index)
        return _spread(method.advantages(batch, method.batch_stats(batch)), response_mask)

    estimator.__name__ = f"{method.name}_advantage"
    estimator.__doc__ = f"{method.name}'s advantages by whilecli's batch-wide step."
    return estimator


ESTIMATORS: dict[str, Callable[..., tuple[torch.Tensor, torch.Tensor]]] = {
    "flash_reinforce": flash_reinforce_advantage,
    "grpo": _grouped(GRPO()),
    "dr_grpo": _grouped(GRPO(loss_type="dr_grpo")),
    "max_rl": _grouped(MaxRL()),
    "rae": _grouped(_RAE),
}


# ------------------------------------------------------------------ policy losses


def _row_advantages(advantages: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """A_i: the value on each row's first response token (verl spreads it on every one)."""
    first = mask.to(torch.int8).argmax(dim=1, keepdim=True)
    return advantages.gather(1, first)[:, 0].detach()


def _global(config: Any, key: str) -> Any:
    info = getattr(config, "global_batch_info", None) or {}
    return info.get(key)


def _finish(
    c: torch.Tensor,
    log_prob: torch.Tensor,
    config: Any,
    rollout_is_weights: torch.Tensor | None,
    stats: Mapping[str, Any],
) -> tuple[torch.Tensor, dict[str, Any]]:
    if rollout_is_weights is not None:
        c = c * rollout_is_weights.detach().to(c)
    dp_size = _global(config, "dp_size") or 1
    loss = -(c.detach().to(log_prob.dtype) * log_prob).sum() * dp_size
    metrics = {f"whilecli/{k}": float(v) for k, v in stats.items() if isinstance(v, (int, float))}
    return loss, metrics


LossFn = Callable[..., tuple[torch.Tensor, dict[str, Any]]]
#: A loss's per-token step through the runner: (the micro-batch with A_i as its rewards,
#: verl's loss_agg_mode, verl's actor config, the correction or None) → whilecli's Update
#: with the correction applied. The runner checks the micro-batch there, once, for the method
#: and the correction together, and refuses a coefficient the correction leaves not finite.
Coefficients = Callable[[Batch, str, Any, str | None], Update]


def _loss(name: str, coefficients: Coefficients, correction: str | None) -> LossFn:
    """verl's policy-loss signature around one method's per-token step: A_i from verl's
    advantages, μ from ``old_log_prob``, the correction, then ``rollout_is_weights``."""

    def loss_fn(
        old_log_prob: torch.Tensor,
        log_prob: torch.Tensor,
        advantages: torch.Tensor,
        response_mask: torch.Tensor,
        loss_agg_mode: str = "token-mean",
        config: Any = None,
        rollout_is_weights: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        mask = response_mask.bool()
        micro = Batch.from_tensors(
            log_prob.detach(),
            rewards=_row_advantages(advantages, mask),
            mask=mask,
            behavior_logprobs=old_log_prob.detach(),
        )
        update = coefficients(micro, loss_agg_mode, config, correction)
        return _finish(update.coefficients, log_prob, config, rollout_is_weights, update.stats)

    loss_fn.__name__ = f"{name}_loss" + (f"_{correction}" if correction else "")
    return loss_fn


def _flash_coefficients(
    micro: Batch, loss_agg_mode: str, config: Any, correction: str | None = None
) -> Update:
    """FlashReinforce's gate, ρ and 1/(T_i B), B the optimizer batch's rows."""
    rows = _global(config, "global_batch_size") or micro.size
    method = FlashReinforce(trust=_KNOBS["trust"])
    # A is centred already: the optimizer batch's stats are B rows with Σ A = 0
    also = correction_needs(correction)
    stats = method.stats_from_totals(0.0, int(rows), micro, also=also)
    return method.coefficients(micro, stats, correction=correction, **_correction_knobs(correction))


class VerlSurrogate(TwoStep):
    """The clipped surrogate on verl's advantages A_i (the micro-batch's rewards), with
    whilecli's length weight for verl's ``loss_agg_mode``: the per-token step of the
    ``whilecli_grpo`` losses, run through the runner like every method's."""

    name = "whilecli_grpo"
    needs = Needs()

    def per_token(self, micro_batch: Batch, stats: BatchStats, *, out: Update | None) -> Update:
        loss_type, clip = stats.values["loss_type"], stats.values["clip"]
        mask, a = micro_batch.mask, micro_batch.rewards
        counts = micro_batch.action_counts
        w = length_weights(
            loss_type,
            counts,
            n_rows=stats.rows,
            total_tokens=float(stats.values["tokens"]),
            max_len=float(stats.values["max_len"]),
        )
        sur = surrogate_coefficients(
            logprobs=micro_batch.logprobs,
            behavior_logprobs=micro_batch.behavior_logprobs,
            ref_logprobs=None,
            action_mask=mask,
            advantages=a,
            weights=w,
            live=torch.ones_like(a, dtype=torch.bool),
            clip=clip,
            beta=0.0,
        )
        c = sur.coefficients
        # verl's dual clip (Ye et al. 2020, arXiv:1912.09729): for A < 0 its loss is
        # min(−A·clip_ratio_c, max(−Aρ, −A·clip(ρ))), constant in log π where ρ > clip_ratio_c
        dual = _dual_clip(micro_batch, a, float(stats.values["clip_ratio_c"]))
        c.masked_fill_(dual, 0.0)
        return PolicyGradientUpdate(
            coefficients=c,
            advantages=a[:, None] * mask.to(a.dtype),
            admitted=(c != 0).any(dim=1),
            stats={"clipped_tokens": float(sur.clipped), "dual_clipped_tokens": float(dual.sum())},
            ratio_clamp=math.inf,
            row_scale=w,
            finite=bool(torch.isfinite(c).all()),
        )


def _dual_clip(micro: Batch, a: torch.Tensor, clip_ratio_c: float) -> torch.Tensor:
    """``[b, T]`` bool: the action tokens whose gradient verl's dual clip sets to 0, where
    A < 0 and ρ = exp(log π − log μ) > ``clip_ratio_c``."""
    if micro.behavior_logprobs is None:
        return torch.zeros_like(micro.action_mask)
    rho = torch.exp(micro.logprobs.detach() - micro.behavior_logprobs.detach())
    return micro.action_mask & (a[:, None] < 0) & (rho > clip_ratio_c)


_SURROGATE = VerlSurrogate()


def _config_value(config: Any, key: str, default: Any) -> Any:
    """``config.key`` (an ActorConfig or a plain mapping), ``default`` where it is unset."""
    if config is None:
        return default
    value = getattr(config, key, None)
    if value is None and hasattr(config, "get"):
        value = config.get(key, None)
    return default if value is None else value


def _grpo_coefficients(
    micro: Batch, loss_agg_mode: str, config: Any, correction: str | None = None
) -> Update:
    """The clipped surrogate with whilecli's length weight for verl's ``loss_agg_mode``, and
    verl's dual clip at ``clip_ratio_c`` (verl's default 3.0), as its ``vanilla`` loss: every
    knob of verl's config that loss reads is read here or refused with the reason."""
    loss_type = AGG_MODES.get(loss_agg_mode)
    if loss_type is None:
        raise UsageError(
            f"whilecli_grpo: loss_agg_mode {loss_agg_mode!r} has no whilecli length "
            f"weight; use one of {', '.join(AGG_MODES)}"
        )
    clip = float(getattr(config, "clip_ratio", 0.2) if config is not None else 0.2)
    for side in ("clip_ratio_low", "clip_ratio_high"):
        other = getattr(config, side, None) if config is not None else None
        if other is not None and float(other) != clip:
            raise UsageError(
                f"whilecli_grpo clips symmetrically at clip_ratio = {clip}; {side} = {other}"
            )
    dual = _config_value(config, "clip_ratio_c", DUAL_CLIP)
    if isinstance(dual, bool) or not isinstance(dual, (int, float)) or not dual > 1.0:
        raise UsageError(
            f"whilecli_grpo: clip_ratio_c (verl's dual clip for A < 0) must be a number > 1.0, "
            f"as verl requires, got {dual!r}"
        )
    rows = _global(config, "global_batch_size") or micro.size
    tokens = _global(config, "batch_num_tokens") or float(micro.action_counts.sum())
    max_len = _global(config, "loss_scale_factor") or micro.mask.shape[-1]
    values = {
        "loss_type": loss_type,
        "clip": clip,
        "clip_ratio_c": float(dual),
        "tokens": tokens,
        "max_len": max_len,
    }
    also = correction_needs(correction)
    stats = _SURROGATE.trainer_stats(micro, rows=int(rows), values=values, also=also)
    return _SURROGATE.coefficients(
        micro, stats, correction=correction, **_correction_knobs(correction)
    )


LOSSES: dict[str, LossFn] = {}
for _corr in (None, *declared.CORRECTIONS):
    _suffix = f"_{_corr}" if _corr else ""
    LOSSES[f"flash_reinforce{_suffix}"] = _loss("flash_reinforce", _flash_coefficients, _corr)
    LOSSES[f"grpo{_suffix}"] = _loss("grpo", _grpo_coefficients, _corr)


def register(name: str) -> None:
    """Register estimator and/or loss ``name`` (without the ``whilecli_`` prefix) with verl;
    SAO and BPCO are refused with the reason."""
    if name in REFUSED:
        raise UsageError(f"{name} cannot be registered with verl: {REFUSED[name]}")
    found = False
    if name in ESTIMATORS:
        fn = ESTIMATORS[name]
        if core_algos.ADV_ESTIMATOR_REGISTRY.get(PREFIX + name) is not fn:
            core_algos.register_adv_est(PREFIX + name)(fn)
        found = True
    if name in LOSSES:
        core_algos.register_policy_loss(PREFIX + name)(LOSSES[name])
        found = True
    if not found:
        known = sorted({*ESTIMATORS, *LOSSES})
        raise UsageError(f"unknown name {name!r}; whilecli registers: {', '.join(known)}")


def _knobs_from_environment() -> None:
    text = os.environ.get("WHILECLI_VERL_KNOBS")
    if text:
        try:
            given = jsonout.parse(text)
        except ValueError as err:
            raise UsageError(f"WHILECLI_VERL_KNOBS is not JSON: {err}") from None
        if not isinstance(given, dict):
            raise UsageError("WHILECLI_VERL_KNOBS must be a JSON object of knobs")
        configure(**given)


_knobs_from_environment()
for _name in sorted({*ESTIMATORS, *LOSSES}):
    register(_name)
