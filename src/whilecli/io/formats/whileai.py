"""The reference SDK's (``whileai``) rows: ``scenario_id`` (the task: the SDK keys the repeats
and phrasings of one situation by it), ``reward``, ``truncated``, ``model_version`` and the
sampler's ``token_logprobs``."""

from __future__ import annotations

from whilecli.io.shape import Shape

NAME = "whileai"


def detect(shape: Shape) -> bool:
    return shape.has("scenario_id") or shape.has("model_version") or shape.has("token_logprobs")
