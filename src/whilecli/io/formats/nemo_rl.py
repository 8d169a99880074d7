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
observations. So the task is the messages before the FIRST reply, never all but the last;
a prompt may hold earlier turns (few-shot examples, a dialogue's history), each marked like
the last, and the rows of one prompt, which share every entry up to its first reply and
differ from there, say which mark ends it (:func:`prompt_texts`).

NeMo-RL's standalone evaluation with ``eval.save_path`` (``nemo_rl/evals/eval.py``:
``_save_evaluation_data_to_json``) writes ``evaluation_data.json``, one document
``{"evaluation_data": [{prompt, response, reward, message_log, extra_env_info,
sample_index}]}`` (``message_log`` and ``extra_env_info`` as Python reprs), one entry per
draw, ``num_tests_per_prompt`` draws of each prompt, and a ``config.json`` beside it with
``model_name`` (:func:`convert_eval`)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from whilecli.io.formats import Converted, as_dict, entries
from whilecli.io.shape import Shape

NAME = "nemo-rl"

#: A chat template's assistant header, as a generation prompt ends a prompt with it or a
#: reply templated as a message begins with it: ChatML (Qwen; Phi-4's ``<|im_sep|>`` after
#: the role), Llama 3, Phi-3, DeepSeek, Gemma, Mistral, gpt-oss (harmony), Nemotron
#: (``<extra_id_1>Assistant``), IBM Granite 3/4 (``<|start_of_role|>assistant<|end_of_role|>``),
#: Cohere Command-R (``<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>``).
_HEADER = (
    r"<\|im_start\|>assistant(?:<\|im_sep\|>)?|<\|start_header_id\|>assistant<\|end_header_id\|>"
    r"|<\|assistant\|>|<｜Assistant｜>|<\|Assistant\|>|<start_of_turn>model|<\|start\|>assistant"
    r"|<extra_id_1>Assistant|<\|start_of_role\|>assistant<\|end_of_role\|>"
    r"|<\|START_OF_TURN_TOKEN\|><\|CHATBOT_TOKEN\|>"
)
#: An entry that ends the prompt: it ends in a generation prompt (a thinking template's
#: opened or closed ``<think>`` block after it), Mistral's ``[/INST]``, a plain-text
#: ``Assistant:`` on its own line or Vicuna's ``ASSISTANT:`` (FastChat's ``USER: … ASSISTANT:``).
GENERATION_PROMPT = re.compile(
    rf"(?:{_HEADER}|\[/INST\]|(?:^|\n)Assistant:|(?:^|\s)ASSISTANT:)"
    r"\s*(?:<think>\s*(?:</think>\s*)?)?$"
)
#: How far from an entry's end a generation prompt is looked for (a reply is long, the
#: generation prompt, a thinking block after it, under 70 characters).
_TAIL = 96
#: An entry that is a reply templated as a message: it begins with the assistant header.
REPLY_HEADER = re.compile(rf"^\s*(?:<\|begin_of_text\|>)?(?:{_HEADER})")

#: A rollout's entries, as one row's ``content`` holds them.
Entries = tuple[str | None, ...]
#: The entry after a rollout's last: no entry follows.
_ENDED = object()


def detect(shape: Shape) -> bool:
    node = shape.get(("content",))
    texts = node is not None and node.item is not None and node.item.kinds <= {"string", "null"}
    return (
        texts
        and shape.kinds_at("content") - {"null"} == {"list"}
        and shape.has("rewards")
        and (shape.has("input_lengths") or shape.has("generation_logprobs"))
    )


def prompt_ends(content: Sequence[str | None]) -> list[int]:
    """Every place a chat template marks where ``content``'s prompt could end, in order: after
    each entry that ends in a generation prompt, before each entry (after the first) that
    begins with the assistant header. Earlier turns of the prompt (few-shot examples, a
    dialogue's history) and later turns of the rollout (an observation templated as a user
    turn) are marked alike: which mark ends the prompt, the rows decide
    (:func:`prompt_texts`)."""
    ends: set[int] = set()
    for i, entry in enumerate(content):
        text = entry or ""
        if i and REPLY_HEADER.match(text):
            ends.add(i)
        if GENERATION_PROMPT.search(text, max(0, len(text) - _TAIL)):
            ends.add(i + 1)
    return sorted(ends)


def prompt_end(content: Sequence[str | None]) -> int | None:
    """The first mark of :func:`prompt_ends`; None where no entry marks one (a template whose
    markers are not known)."""
    ends = prompt_ends(content)
    return ends[0] if ends else None


def _next_entry(row: Entries, at: int) -> object:
    """The entry after a prompt of ``at`` entries, :data:`_ENDED` where none follows."""
    return row[at] if len(row) > at else _ENDED


def _later(
    rows: Sequence[Entries], marks: Sequence[Sequence[int]], group: Sequence[int], at: int
) -> dict[int, int]:
    """The prompt's end of each row of ``group`` read past the mark ``at``: each row's next
    mark, resolved among the rows that share the entries up to it (:func:`_resolve`); a row
    with no later mark ends at ``at``."""
    ends: dict[int, int] = {}
    later: dict[tuple[int, Entries], list[int]] = {}
    for i in group:
        after = [m for m in marks[i] if m > at]
        if after:
            later.setdefault((after[0], rows[i][: after[0]]), []).append(i)
        else:
            ends[i] = at
    for (mark, _), sub in later.items():
        ends |= _resolve(rows, marks, sub, mark)
    return ends


def _resolve(
    rows: Sequence[Entries], marks: Sequence[Sequence[int]], group: Sequence[int], at: int
) -> dict[int, int]:
    """Where the prompt ends for each row of ``group``, rows that share their first ``at``
    entries, a mark of each (:func:`prompt_ends`). The rows of one prompt share every entry
    up to its first reply, which is sampled: where the entries after ``at`` differ (or one
    row is left), the prompt ends at ``at``. Where every row goes on with the same entry, it
    is a turn of the prompt (a few-shot example's answer, a dialogue's earlier reply) when
    the later marks part the rows into two prompts of several rollouts or more, or part a
    group that is every row (a dump is not one prompt); otherwise a reply two rollouts
    share (a short action): the prompt ends at ``at``."""
    if len(group) == 1 or len({_next_entry(rows[i], at) for i in group}) > 1:
        return dict.fromkeys(group, at)
    ends = _later(rows, marks, group, at)
    keys = Counter(rows[i][: ends[i]] for i in group)
    repeated = sum(1 for n in keys.values() if n >= 2)
    if repeated >= 2 or (len(group) == len(rows) and len(keys) >= 2):
        return ends
    return dict.fromkeys(group, at)


def marked_ends(rows: Sequence[Entries]) -> list[int | None]:
    """Where each rollout's prompt ends among its marks (:func:`prompt_ends`), decided by
    what the marked rows share (:func:`_resolve`); None for a row no entry marks."""
    every = [prompt_ends(r) for r in rows]
    index = [i for i, m in enumerate(every) if m]
    found = [rows[i] for i in index]
    marks = [every[i] for i in index]
    first: dict[tuple[int, Entries], list[int]] = {}
    for n, (row, mark) in enumerate(zip(found, marks, strict=True)):
        first.setdefault((mark[0], row[: mark[0]]), []).append(n)
    ends: list[int | None] = [None] * len(rows)
    for (start, _), group in first.items():
        for n, end in _resolve(found, marks, group, start).items():
            ends[index[n]] = end
    return ends


def shared_length(rows: Sequence[Sequence[str | None]]) -> int:
    """Where no entry marks the prompt's end: the most leading entries whose prefixes repeat,
    two rows a prefix or more on average (a reply is sampled, so the first prefix holding one
    is all but unique); 1 where none does. A guess: the key is provisional unless every row
    bears it out (:func:`settled`)."""
    best = 1
    longest = max((len(r) for r in rows), default=0)
    for n in range(1, longest):
        distinct = len({tuple(r[:n]) for r in rows})
        if distinct * 2 <= len(rows):
            best = n
    return best


def settled(rows: Sequence[Sequence[str | None]]) -> bool:
    """Whether the :func:`shared_length` guess is borne out on every row: each row's prompt is
    all its entries but the last (the reply, no observation after it) and each prompt is
    shared with another row (k > 1); the sample's last row may stand alone (its prompt's
    other rollouts may follow)."""
    if not rows:
        return False
    guess = shared_length(rows)
    if any(len(r) != guess + 1 for r in rows):
        return False
    keys = Counter(tuple(r[:guess]) for r in rows)
    last = tuple(rows[-1][:guess])
    return all(n >= 2 or key == last for key, n in keys.items())


def prompt_texts(rows: Sequence[Sequence[str | None] | None]) -> list[str | None]:
    """Each rollout's prompt, the text of its entries before the first reply
    (:func:`marked_ends`); the rows no entry marks take the :func:`shared_length` of theirs.
    None for a row with no content."""
    present = [tuple(r) for r in rows if r is not None]
    found = marked_ends(present)
    unmarked = [r for r, end in zip(present, found, strict=True) if end is None]
    guess = shared_length(unmarked) if unmarked else 1
    ends = iter(found)
    texts: list[str | None] = []
    for row in rows:
        if row is None:
            texts.append(None)
            continue
        end = next(ends)
        texts.append("".join(e or "" for e in row[: guess if end is None else end]))
    return texts


def marked(rows: Sequence[object]) -> bool:
    """Whether the prompt's end of the rows of ``rows`` (sampled lines) with a ``content``
    list is known: every row marks it (:func:`prompt_ends`), or the rows no entry marks bear
    out the guess (:func:`settled`); False where none holds one."""
    lists = [r.get("content") for r in rows if isinstance(r, dict)]
    contents = [
        [e if isinstance(e, str) else None for e in c] for c in lists if isinstance(c, list)
    ]
    unmarked = [c for c in contents if not prompt_ends(c)]
    return bool(contents) and (not unmarked or settled(unmarked))


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
