"""NeMo Gym rollouts: ``responses_create_params`` (the request: ``input`` is the prompt, hashed
into the task when no ``_ng_task_index`` is written), ``response`` (an OpenAI Responses object:
``response.model``; ``response.incomplete_details.reason == "max_output_tokens"`` when cut) and
``reward`` (also ``resolved``); ``_ng_rollout_index`` counts the rollouts of a task."""

from __future__ import annotations

from whilecli.io.shape import Shape

NAME = "nemo-gym"


def detect(shape: Shape) -> bool:
    return shape.has("responses_create_params") and shape.has("response")
