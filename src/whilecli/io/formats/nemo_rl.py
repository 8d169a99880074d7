"""NeMo-RL GRPO training dumps (``train_data_step<N>.jsonl``): one row per sampled response,
with ``content`` (the conversation's messages, each as templated text: the prompt's turns and
the reply last), ``rewards`` (a number), per-token ``generation_logprobs`` and
``prev_logprobs`` (over the whole sequence), ``input_lengths``, and in later versions
``advantages``, ``token_ids``, ``token_loss_mask`` and ``filtered_rewards``. No task id, no
model and no stop reason are written: the task is a hash of the messages before the reply."""

from __future__ import annotations

from whilecli.io.shape import Shape

NAME = "nemo-rl"


def detect(shape: Shape) -> bool:
    node = shape.get(("content",))
    texts = node is not None and node.item is not None and node.item.kinds <= {"string", "null"}
    return (
        texts
        and shape.kinds_at("content") - {"null"} == {"list"}
        and shape.has("rewards")
        and (shape.has("input_lengths") or shape.has("generation_logprobs"))
    )
