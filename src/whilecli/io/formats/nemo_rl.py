"""NeMo-RL GRPO training dumps (``train_data_step<N>.jsonl``): one row per sampled response,
with ``content`` (``flat_messages["content"]``: the text of every message of the rollout's
``message_log``, in order, with no roles), ``rewards`` (a number), per-token
``generation_logprobs`` and ``prev_logprobs`` (over the whole sequence), ``input_lengths``,
and in later versions ``advantages``, ``token_ids``, ``token_loss_mask`` and
``filtered_rewards``. No task id, no model and no stop reason are written.

Each message is templated on its own (``NVIDIA-NeMo/RL``, ``nemo_rl/data/processors.py``): a
system message without the generation prompt, the user's with it, so the prompt's last entry
ends in the chat template's generation prompt (``<|im_start|>assistant\\n``). The reply is
the generated text. ``run_multi_turn_rollout`` (``nemo_rl/experience/rollouts.py``) then
appends the environment's observation after every reply, even with one turn (the math
environment's ``"Environment: correct"``), and a multi-turn rollout holds several replies and
observations. So the task is the messages before the FIRST reply, never all but the last
(:func:`prompt_texts`).

NeMo-RL's standalone evaluation with ``eval.save_path`` (``nemo_rl/evals/eval.py``:
``_save_evaluation_data_to_json``) writes ``evaluation_data.json``, one document
``{"evaluation_data": [{prompt, response, reward, message_log, extra_env_info,
sample_index}]}`` (``message_log`` and ``extra_env_info`` as Python reprs), one entry per
draw, ``num_tests_per_prompt`` draws of each prompt, and a ``config.json`` beside it with
``model_name`` (:func:`convert_eval`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from whilecli.io.formats import Converted, as_dict, entries
from whilecli.io.shape import Shape

NAME = "nemo-rl"

#: A chat template's assistant header, as a generation prompt ends a prompt with it or a
#: reply templated as a message begins with it: ChatML (Qwen), Llama 3, Phi-3, DeepSeek,
#: Gemma, Mistral, gpt-oss (harmony), Nemotron (``<extra_id_1>Assistant``).
_HEADER = (
    r"<\|im_start\|>assistant|<\|start_header_id\|>assistant<\|end_header_id\|>"
    r"|<\|assistant\|>|<｜Assistant｜>|<\|Assistant\|>|<start_of_turn>model|<\|start\|>assistant"
    r"|<extra_id_1>Assistant"
)
#: An entry that ends the prompt: it ends in a generation prompt (a thinking template's
#: opened or closed ``<think>`` block after it), or Mistral's ``[/INST]``.
GENERATION_PROMPT = re.compile(
    rf"(?:{_HEADER}|\[/INST\]|(?:^|\n)Assistant:)\s*(?:<think>\s*(?:</think>\s*)?)?$"
)
#: An entry that is a reply templated as a message: it begins with the assistant header.
REPLY_HEADER = re.compile(rf"^\s*(?:<\|begin_of_text\|>)?(?:{_HEADER})")


def detect(shape: Shape) -> bool:
    node = shape.get(("content",))
    texts = node is not None and node.item is not None and node.item.kinds <= {"string", "null"}
    return (
        texts
        and shape.kinds_at("content") - {"null"} == {"list"}
        and shape.has("rewards")
        and (shape.has("input_lengths") or shape.has("generation_logprobs"))
    )


def prompt_end(content: Sequence[str | None]) -> int | None:
    """How many leading entries of ``content`` are the prompt: through the first that ends in
    a generation prompt, or up to the first that begins with the assistant header, whichever
    comes first (never before the first entry); None where no entry says (a template whose markers are not known)."""
    for i, entry in enumerate(content):
        text = entry or ""
        if i and REPLY_HEADER.match(text):
            return i
        if GENERATION_PROMPT.search(text):
            return i + 1
    return None


def shared_length(rows: Sequence[Sequence[str | None]]) -> int:
    """Where no entry marks the prompt's end: the most leading entries whose prefixes repeat,
    two rows a prefix or more on average (a reply is sampled, so the first prefix holding one
    is all but unique); 1 where none does. A guess: the key is provisional
    (:func:`marked`)."""
    best = 1
    longest = max((len(r) for r in rows), default=0)
    for n in range(1, longest):
        distinct = len({tuple(r[:n]) for r in rows})
        if distinct * 2 <= len(rows):
            best = n
    return best


def prompt_texts(rows: Sequence[Sequence[str | None] | None]) -> list[str | None]:
    """Each rollout's prompt, the text of its entries before the first reply
    (:func:`prompt_end`); the rows no entry marks take the :func:`shared_length` of theirs.
    None for a row with no content."""
    ends = [None if r is None else prompt_end(r) for r in rows]
    unmarked = [r for r, end in zip(rows, ends, strict=True) if r is not None and end is None]
    guess = shared_length(unmarked) if unmarked else 1
    return [
        None if r is None else "".join(e or "" for e in r[: guess if end is None else end])
        for r, end in zip(rows, ends, strict=True)
    ]


def marked(rows: Sequence[object]) -> bool:
    """Whether every row of ``rows`` (sampled lines) with a ``content`` list marks its prompt's
    end (:func:`prompt_end`); False where none holds one."""
    lists = [r.get("content") for r in rows if isinstance(r, dict)]
    contents = [c for c in lists if isinstance(c, list)]
    return bool(contents) and all(
        prompt_end([e if isinstance(e, str) else None for e in c]) is not None for c in contents
    )


#: The key of ``evaluation_data.json`` that holds its draws, and the fields each carries.
EVAL_KEY = "evaluation_data"
EVAL_FIELDS = frozenset({"prompt", "response", "reward"})


def is_eval(doc: Any) -> bool:
    """``evaluation_data.json`` as ``_save_evaluation_data_to_json`` writes it: an object
    whose ``evaluation_data`` is a list of objects, the first with prompt, response and
    reward."""
    rows = doc.get(EVAL_KEY) if isinstance(doc, dict) else None
    return (
        isinstance(rows, list)
        and bool(rows)
        and all(isinstance(r, dict) for r in rows)
        and set(rows[0]) >= EVAL_FIELDS
    )


def _eval_model(path: Path | None) -> str | None:
    """``model_name`` of the ``config.json`` the evaluation wrote beside its data."""
    from whilecli.io.sources import read_json_file

    if path is None:
        return None
    model = as_dict(read_json_file(path.parent / "config.json", lenient=True)).get("model_name")
    return model if isinstance(model, str) and model.strip() else None


def convert_eval(doc: dict[str, Any], path: Path | None) -> Converted:
    """The draws of ``evaluation_data.json`` (:func:`is_eval`): one row each, the task its
    ``prompt`` (the templated text, the same for every draw of a prompt), the grade
    ``reward``, the model ``config.json``'s ``model_name``; no stop reason is written."""
    model = _eval_model(path)
    rows: list[dict[str, Any]] = []
    for entry in doc[EVAL_KEY]:
        row = {k: entry.get(k) for k in ("prompt", "response", "reward", "sample_index")}
        rows.append(row | ({"model": model} if model is not None else {}))
    origins = {
        "task_id": "hash of prompt (evaluation_data[].prompt)",
        "reward": "evaluation_data[].reward",
        "truncated": "not recorded",
        "model": "config.json: model_name" if model else "not recorded (pass --model)",
    }
    notes = [f"rows read from the document's {EVAL_KEY!r} list (NeMo-RL evaluation)"]
    return Converted("json", rows, origins, notes, positions=entries(len(rows), EVAL_KEY))
