"""FlashReinforce in TRL: a ``GRPOTrainer`` that trains on one completion per prompt.

Holds for trl 0.29.0 to 1.16.0 with transformers 5.10.4: CI tests both ends
(``requirements-trainers.txt`` pins 1.16.0, ``requirements-trl-low.txt`` 0.29.0; trl 0.28 and
older fail to import ``GRPOTrainer`` in that environment). The two methods it overrides are
the trainer's own ``_generate_and_score_completions`` and ``_compute_loss``, which are not
public API, so a release outside the range must be tested before it is trusted. TRL's group advantage needs
``num_generations >= 2`` and has no hook; this trainer takes the batch as FlashReinforce's
group instead:

- :func:`flash_reinforce_config` builds a ``GRPOConfig`` and then sets ``num_generations`` to
  1 (``GRPOConfig`` refuses 1 because its group baseline would be empty);
- after TRL has generated and scored a generation batch, the advantages are replaced by
  FlashReinforce's A_i = R_i − mean R over the batch of every process (whilecli's
  ``batch_stats``);
- the loss of each micro-batch is ``−Σ c · log π_θ`` with c from whilecli's ``coefficients``
  (gate on the Bernoulli KL to the sampler, ρ, 1/(T_i B) with B the generation batch of
  every process), times the number of processes (their gradients are averaged), so the
  gradient summed over the accumulated micro-batches is −Σ c ∇log π
  (``tests/trainers/test_trl.py`` checks one SGD step against it).

The generation batch must be one optimizer batch (``steps_per_generation`` equal to
``gradient_accumulation_steps``, TRL's default). The ``GRPOConfig`` knobs of TRL's own
advantage and loss, which this trainer replaces (:data:`REPLACED_KNOBS`: ``beta``,
``epsilon``, ``loss_type``, ``scale_rewards``, ...), must keep their defaults: a config that
sets one is refused with the reason, never trained on as if it were honoured.

>>> trainer = FlashReinforceTrainer(model=model, reward_funcs=reward,     # doctest: +SKIP
...     args=flash_reinforce_config(output_dir="out"), train_dataset=data,
...     processing_class=tokenizer)
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch
from trl import GRPOConfig, GRPOTrainer

from whilecli.errors import UsageError
from whilecli.methods.batch import Batch
from whilecli.methods.flash_reinforce import FlashReinforce

#: The TRL releases CI tests this module against: the lower and upper ends of what it holds for.
TESTED_TRL = ("0.29.0", "1.16.0")

_NO_CLIP = "FlashReinforce never clips its ratio (a trajectory past `trust` drops out whole)"
#: The ``GRPOConfig`` knobs read only by TRL's own advantage and loss, which this trainer
#: replaces, and why FlashReinforce has no use for each; a knob a TRL release lacks is skipped.
REPLACED_KNOBS: dict[str, str] = {
    "beta": "FlashReinforce has no KL-to-reference term",
    "use_bias_correction_kl": "FlashReinforce has no KL-to-reference term",
    "epsilon": _NO_CLIP,
    "epsilon_high": _NO_CLIP,
    "delta": _NO_CLIP,
    "loss_type": "FlashReinforce weighs each trajectory 1/(T_i B)",
    "scale_rewards": "FlashReinforce's A_i = R_i − mean R over the batch, with no std",
    "importance_sampling_level": "FlashReinforce's ratio is per token",
    "top_entropy_quantile": "every action token of an admitted trajectory carries c",
    "off_policy_mask_threshold": "FlashReinforce's own gate is the trust on the mean KL",
    "entropy_coef": "FlashReinforce's loss has no entropy bonus",
    "use_adaptive_entropy": "FlashReinforce's loss has no entropy bonus",
}


def _check_replaced_knobs(config: Any) -> None:
    """Refuse a config that sets a knob of TRL's advantage or loss away from its default:
    FlashReinforce's advantage and loss replace TRL's, so the knob would do nothing."""
    defaults = {f.name: f.default for f in dataclasses.fields(GRPOConfig)}
    for knob, why in REPLACED_KNOBS.items():
        if knob not in defaults or not hasattr(config, knob):
            continue
        value, default = getattr(config, knob), defaults[knob]
        if value != default:
            raise UsageError(
                f"FlashReinforceTrainer does not read GRPOConfig.{knob} = {value!r}: {why}; "
                f"leave it at its default {default!r}"
            )


def flash_reinforce_config(**kwargs: Any) -> GRPOConfig:
    """A ``GRPOConfig`` for one completion per prompt (``num_generations = 1``)."""
    if kwargs.get("num_generations", 1) != 1:
        raise UsageError("FlashReinforce trains on one completion per prompt: num_generations 1")
    kwargs["num_generations"] = 2  # GRPOConfig's check; set to 1 below
    config = GRPOConfig(**kwargs)
    config.num_generations = 1
    _check_replaced_knobs(config)
    if config.steps_per_generation != config.gradient_accumulation_steps:
        raise UsageError(
            "FlashReinforce's batch is one optimizer batch: steps_per_generation "
            f"({config.steps_per_generation}) must equal gradient_accumulation_steps "
            f"({config.gradient_accumulation_steps})"
        )
    return config


class FlashReinforceTrainer(GRPOTrainer):
    """TRL's ``GRPOTrainer`` with FlashReinforce's advantages and coefficients.

    ``method``: the :class:`~whilecli.methods.flash_reinforce.FlashReinforce` to use (default
    trust 0.003). Everything else is ``GRPOTrainer``'s.
    """

    def __init__(self, *args: Any, method: FlashReinforce | None = None, **kwargs: Any) -> None:
        given = kwargs.get("args", args[2] if len(args) > 2 else None)
        if given is not None:  # before TRL acts on them (β > 0 loads a reference model)
            _check_replaced_knobs(given)
        super().__init__(*args, **kwargs)
        if self.num_generations != 1:
            raise UsageError("FlashReinforceTrainer needs args from flash_reinforce_config()")
        self.method = method or FlashReinforce()
        self._rewards_per_func: torch.Tensor | None = None
        self._batch_rows = 0

    def _calculate_rewards(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        rewards_per_func = super()._calculate_rewards(*args, **kwargs)
        self._rewards_per_func = rewards_per_func  # every process's rows
        return rewards_per_func

    def _generate_and_score_completions(self, inputs: Any) -> dict[str, Any]:
        output = super()._generate_and_score_completions(inputs)
        per_func = self._rewards_per_func
        assert per_func is not None
        weights = self.reward_weights.to(per_func.device)
        rewards = (per_func * weights.unsqueeze(0)).nansum(dim=1).double()
        whole = Batch.from_tensors(
            torch.zeros(len(rewards), 1, dtype=torch.float64), rewards=rewards
        )
        totals = self.method.batch_stats(whole).values["totals"]
        advantages = rewards - totals[0] / totals[1]  # Eq. 5, B = every process's rows
        n = len(output["advantages"])
        start = self.accelerator.process_index * n
        output["advantages"] = advantages[start : start + n].to(output["advantages"])
        self._batch_rows = len(rewards)
        return output

    def _compute_loss(self, model: Any, inputs: dict[str, Any]) -> torch.Tensor:
        prompt_ids, prompt_mask = inputs["prompt_ids"], inputs["prompt_mask"]
        completion_ids, completion_mask = inputs["completion_ids"], inputs["completion_mask"]
        input_ids = torch.cat([prompt_ids, completion_ids], dim=1)
        attention_mask = torch.cat([prompt_mask, completion_mask], dim=1)
        mask = (
            completion_mask if "tool_mask" not in inputs else completion_mask * inputs["tool_mask"]
        )
        logps = self._get_per_token_logps_and_entropies(
            model, input_ids, attention_mask, completion_ids.size(1)
        )[0]
        behavior = inputs.get("sampling_per_token_logps")
        if behavior is None:
            behavior = inputs.get("old_per_token_logps")
        mask_b = mask.bool()
        micro = Batch.from_tensors(
            logps.detach() * mask_b,
            rewards=inputs["advantages"].reshape(-1),
            mask=mask_b,
            behavior_logprobs=None if behavior is None else behavior.detach() * mask_b,
        )
        stats = self.method.stats_from_totals(0.0, self._batch_rows or micro.size, micro)
        update = self.method.coefficients(micro, stats)
        mode = "train" if self.model.training else "eval"
        self._metrics[mode]["whilecli/admitted_share"].append(
            float(update.admitted.double().mean())
        )
        # c carries 1/B of the whole optimizer batch, so the micro-batches' losses add up with
        # no division for gradient accumulation (TRL's own losses divide themselves; nothing
        # after them does); × the processes, whose gradients are averaged
        scale = float(self.accelerator.num_processes)
        return -(update.coefficients.to(logps.dtype) * logps).sum() * scale
