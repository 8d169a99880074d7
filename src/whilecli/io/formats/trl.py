"""TRL completion tables (``completions/completions_<step>.parquet``): ``step``, ``prompt``,
``completion``, one column per reward function (their weights are not written, so the reward is
their sum at weight 1; a function that returned None, as ``accuracy_reward`` does where the gold
answer does not parse, leaves the row ungraded: :func:`whilecli.io.plan.summed_columns`) and
``advantage``; no task id column, so the task is ``(step, a hash of
the prompt)``."""

from __future__ import annotations

from whilecli.io.aliases import TASK_ALIASES
from whilecli.io.shape import Shape

NAME = "trl"


def detect(shape: Shape) -> bool:
    has = shape.has
    return (
        has("prompt")
        and has("completion")
        and has("step")
        and not any(has(a) for a in TASK_ALIASES)
    )
