"""verifiers v1 ``traces.jsonl``: one trace per row with a ``task`` object (``task.key`` is the
task), a ``rewards`` dict of ``{score, weight}`` parts (the reward is Σ score × weight),
``stop_condition`` and the model ``calls[]`` (the last error-free call's ``finish_reason`` says
whether the reply was cut); the model is ``agent.config.model`` or ``config.toml: model``."""

from __future__ import annotations

from whilecli.io.shape import Shape

NAME = "verifiers-traces"


def detect(shape: Shape) -> bool:
    task = shape.get(("task",))
    return task is not None and "dict" in task.kinds and shape.has("rewards")
