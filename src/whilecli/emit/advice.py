"""The warnings a config carries: what the file cannot say about the run it starts.

What the schema does not catch: no train source, the demo key, a group of one (which
:func:`broken_reasons` names: the run would abort); OPSD under about 7B; rae's moving-average
baseline; one tokenizer for distillation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whilecli.emit import schema
from whilecli.emit.knobs import Settings
from whilecli.emit.models import DEFAULT_MODEL, is_thinking, size_from_name

#: Below this many billion parameters OPSD is not expected to help (the seed's rule).
OPSD_MIN_B = 7.0


def _source_warnings(config: Mapping[str, Any]) -> list[str]:
    sources = schema.get(config, "orchestrator.train.source") or []
    if not sources:
        return [
            "no train source is written: the run needs --env ID (a taskset id); prime-rl "
            "accepts this file but has nothing to train on"
        ]
    out = []
    for src in sources:
        tid = schema.get(src, "env.taskset.id", "")
        module = tid.rsplit("/", 1)[-1].split("@", 1)[0].replace("-", "_")
        out.append(
            f"prime-rl imports the taskset's package `{module}` while it parses this file: "
            "install it in prime-rl's environment first"
        )
    return out


def _opsd_warnings(s: Settings, model: str, size_b: float | None) -> list[str]:
    out = []
    size = size_b if size_b is not None else size_from_name(model)
    if size is None:
        out.append(
            f"OPSD needs about {OPSD_MIN_B:g}B parameters or more, and {model}'s size is not in "
            "its name: pass --size-b to check"
        )
    elif size < OPSD_MIN_B:
        out.append(
            f"OPSD needs about {OPSD_MIN_B:g}B or more; {model} is {size:g}B. In a prime-rl run "
            "on Qwen3-0.6B OPSD came out -0.55 [-0.61, -0.50] n=128 paired tasks against GRPO; "
            "under 7B train SFT on a stronger model's completions"
        )
    if is_thinking(model):
        out.append(
            f"{model} thinks before it answers: OPSD's self-teacher (the policy shown the "
            "privileged field) scores the reasoning tokens too, with the answer in view; make "
            "sure thinking is the mode you mean to train (or turn it off in the chat template) "
            "and compare against GRPO on held-out tasks"
        )
    return out


def broken_reasons(s: Settings, config: Mapping[str, Any]) -> list[str]:
    """What makes the final ``config`` fail once prime-rl runs it, though its loader accepts
    the file: ``whilecli config`` writes such a file only with ``--force``."""
    group = schema.get(config, "orchestrator.group_size", 1)
    kind = schema.get(config, "orchestrator.algo.type", s.method)
    if kind in ("grpo", "max_rl") and group < 2:
        return [
            f"{kind} at group_size {group}: a group of one is its own mean, every advantage is "
            "zero, and prime-rl's orchestrator aborts at runtime; use --group-size 2 or more "
            "(8 is the default), or --method rae"
        ]
    return []


def method_warnings(
    s: Settings, config: Mapping[str, Any], *, model_given: bool, size_b: float | None
) -> list[str]:
    """Warnings for the settings ``s`` and the final ``config`` (after overrides)."""
    out: list[str] = []
    model = schema.get(config, "model.name", DEFAULT_MODEL)
    kind = schema.get(config, "orchestrator.algo.type", s.method)
    if not model_given:
        out.append(f"no --model: prime-rl's default model {DEFAULT_MODEL} is written")
    out += _source_warnings(config)
    out += broken_reasons(s, config)
    if kind == "rae":
        out.append(
            f"rae's baseline is a per-agent exponential moving average (b ← {s.decay:g} b + "
            f"{1 - s.decay:.2g} R), not a group mean: it lags a policy that is improving, and on "
            "a single-agent taskset the update is REINFORCE against that average"
        )
    if kind == "opsd":
        key = schema.get(config, "orchestrator.algo.demo_key", "demonstration")
        out.append(
            f'demo_key = "{key}": every task of the taskset must carry a field "{key}" (in its '
            "info dict or as a task field); prime-rl checks it only at runtime, where scoring "
            "fails"
        )
        out += _opsd_warnings(s, model, size_b)
    if kind == "opd":
        teacher = schema.get(config, "orchestrator.algo.teacher", {}) or {}
        out.append(
            f"rl does not start the teacher: serve {teacher.get('name')} at "
            f"{teacher.get('base_url')} yourself, on GPUs outside [deployment]"
        )
        out.append(
            "opd needs one tokenizer: the teacher must share the student's vocabulary (prime-rl "
            "does not check; see `whilecli route --teacher-vocab N --student-vocab N`)"
        )
    if schema.get(config, "trainer.loss.type") == "custom":
        out.append(
            "the custom loss is imported from whilecli inside prime-rl's trainer: install "
            "whilecli in that environment"
        )
    return out
