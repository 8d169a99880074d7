"""open-instruct (Tülu / OLMo) GRPO traces: ``--save_traces`` appends one line per training
step to ``<output_dir>/traces_<run_name>.jsonl`` (``allenai/open-instruct``,
``open_instruct/grpo_fast.py``: ``traces = {"scores": ..., "finish_reasons": ...,
"responses": ..., "training_step": ..., **asdict(batch), **reward_metrics}``, the batch of
``open_instruct/model_utils.py: Batch``).

One line holds a whole step: parallel lists with one element per sample (``scores``,
``finish_reasons``, ``responses`` as token ids, and from the batch ``queries`` as token ids,
``ground_truths``, ``datasets``, ``raw_queries``, ``decoded_responses``, ``indices``), the
samples of one prompt side by side (``num_samples_per_prompt_rollout`` of them), and the
step's averaged ``reward_metrics`` (``objective/...``) as scalars. Each element is a rollout.
The task is ``(training_step, indices[i])`` (the prompt's index in the training set; a prompt
at another step is another draw of the policy, as for TRL and Prime RFT), else a hash of the
prompt (``raw_queries[i]``, else the token ids of ``queries[i]``). The reward is
``scores[i]``: the verifier's reward (``--verification_reward``, 10 by default, plus any
format reward), so a pass needs ``--pass-threshold``. ``finish_reasons[i] == "length"`` is a
cut-off reply. The model is not recorded. The distillation trainer's traces hold
``advantages`` and no scores: no grade, refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from whilecli.errors import InputError
from whilecli.io.aliases import cut_reason
from whilecli.io.formats import Converted, prompt_digest

NAME = "open-instruct"
#: Lists a line holds one element of per sample (or per prompt, repeated over its samples).
PER_SAMPLE = ("finish_reasons", "responses", "decoded_responses", "indices", "raw_queries")


def is_trace(first: dict[str, Any]) -> bool:
    return (
        "training_step" in first
        and isinstance(first.get("finish_reasons"), list)
        and (isinstance(first.get("scores"), list) or isinstance(first.get("advantages"), list))
    )


def _element(values: Any, i: int, n: int) -> Any:
    """Sample ``i`` of ``n`` from a list of one element per sample, or of one per prompt
    (repeated over its samples); None where the list is absent or of another length."""
    if not isinstance(values, list) or not values or n % len(values):
        return None
    return values[i // (n // len(values))]


def convert(rows: Iterable[tuple[int, dict[str, Any]]], name: str) -> Converted:
    out: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    keyed = "indices"
    cut_known = True
    for lineno, line in rows:
        scores = line.get("scores")
        if not isinstance(scores, list):
            raise InputError(
                "an open-instruct trace without scores (the distillation trainer's traces hold"
                " advantages, not grades): nothing to route",
                file=name,
                line=lineno,
                field="scores",
            )
        n = len(scores)
        step = line.get("training_step")
        for i, score in enumerate(scores):
            index = _element(line.get("indices"), i, n)
            prompt = _element(line.get("raw_queries"), i, n)
            if prompt is None:
                tokens = _element(line.get("queries"), i, n)
                prompt = None if tokens is None else " ".join(map(str, tokens))
            if index is None:
                keyed = "prompt"
                task = None if prompt is None else f"{step}:{prompt_digest(prompt)}"
            else:
                task = f"{step}:{index}"
            reason = _element(line.get("finish_reasons"), i, n)
            cut_known = cut_known and isinstance(reason, str)
            reply = _element(line.get("decoded_responses"), i, n)
            out.append(
                {
                    "task_id": task,
                    "reward": score,
                    "prompt": prompt,
                    "completion": reply if isinstance(reply, str) else None,
                    "truncated": cut_reason(reason) if isinstance(reason, str) else None,
                    "step": step,
                }
            )
            positions.append({"line": lineno})
    if not cut_known:
        for row in out:
            row.pop("truncated", None)
    origins = {
        "task_id": (
            "(training_step, indices[i]): one rollout per element of scores"
            if keyed == "indices"
            else "(training_step, a hash of raw_queries[i] or queries[i])"
        ),
        "reward": "scores[i] (the verifier's reward: 10 per correct answer by default)",
        "truncated": "finish_reasons[i] == 'length'" if cut_known else "not recorded",
        "model": "not recorded",
        "version": "training_step",
    }
    spelled = {"reward": "scores", "truncated": "finish_reasons"}
    if keyed == "indices":
        spelled["task_id"] = "indices"
    return Converted(NAME, out, origins, positions=positions, spelled=spelled)
