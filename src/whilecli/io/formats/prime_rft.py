"""Prime hosted-RL sample dumps: rows of one training run with ``step`` and ``problem_id`` (the
task is ``(step, problem_id)``: a problem at another step is another draw of the policy),
``run_id`` / ``env_name`` / ``sample_id``, ``reward`` and ``advantage``; ``prompt``,
``completion``, ``metrics`` and ``info`` are JSON *strings*. The model is in
``metadata.json: run.base_model`` beside the rows (``run_manifest.json`` is a sidecar too)."""

from __future__ import annotations

from whilecli.io.shape import Shape

NAME = "prime-rft"


def detect(shape: Shape) -> bool:
    has = shape.has
    return (
        has("problem_id") and has("step") and (has("run_id") or has("env_name") or has("sample_id"))
    )
