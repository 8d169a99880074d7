"""verl rollout and validation dumps: ``trainer.rollout_data_dir`` (training rollouts) and
``trainer.validation_data_dir`` (validation generations) each get one ``{global_steps}.jsonl``
per step (``volcengine/verl``, ``verl/trainer/ppo/ray_trainer.py``:
``RayPPOTrainer._dump_generations``, called from ``_log_rollout_data`` and ``_validate``).

A line is one sample: ``input`` (the prompt's token ids decoded, special tokens skipped),
``output`` (the reply decoded), ``gts`` (the ground truth; absent in older versions),
``score`` (the reward tensor summed over the reply's tokens), ``step`` (``global_steps``), and
every key of the reward function's ``reward_extra_info`` whose list is as long as the batch
(``reward``, and e.g. ``acc`` and ``pred`` from ``verl/utils/reward_score/math_dapo.py``,
whose ``score`` is 1 / -1). The rollouts of one prompt sit side by side (the batch is
repeated ``rollout.n`` / ``val_kwargs.n`` times, interleaved) and no id is written, so the
task is ``(step, a hash of input)``: the same prompt at another step is another draw of
another policy. The pass is ``acc`` where every row carries it (verl's own validation metrics
take ``acc`` as the core variable when the reward function reports it:
``core_var = "acc" if "acc" in var2metric2val else "reward"``), else ``score``. The step is
the version. No model and no finish reason are written; a reward function that reports a
truncation flag in its ``reward_extra_info`` (``truncated``, ``is_truncated``) has it on every
line, and it is read as the rows' truncation.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from whilecli.errors import InputError
from whilecli.io.aliases import CUT_STATUS, TRUNCATION_ALIASES
from whilecli.io.formats import Converted, prompt_digest

NAME = "verl"
#: The keys ``_dump_generations`` writes on every line (``gts`` only in later versions).
KEYS = ("input", "output", "score", "step")
#: The top-level truncation flags a reward function can add through ``reward_extra_info``.
FLAGS = tuple(
    path
    for path, values in TRUNCATION_ALIASES
    if "." not in path and "[" not in path and values is not CUT_STATUS
)


def is_dump(first: dict[str, Any]) -> bool:
    """A line as ``_dump_generations`` writes it: ``input``, ``output``, ``score`` and
    ``step`` (a line whose values are not what verl writes there is refused by name)."""
    return all(k in first for k in KEYS)


def convert(rows: Iterable[tuple[int, dict[str, Any]]], name: str) -> Converted:
    lines = list(rows)
    by_acc = bool(lines) and all(row.get("acc") is not None for _, row in lines)
    grade = "acc" if by_acc else "score"
    out: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    for lineno, row in lines:
        prompt = row.get("input")
        step = row.get("step")
        if not isinstance(prompt, str):
            raise InputError(
                "input is not text (verl writes the decoded prompt)",
                file=name,
                line=lineno,
                field="input",
            )
        if not isinstance(step, int) or isinstance(step, bool):
            raise InputError(
                "step is not an integer (verl writes global_steps)",
                file=name,
                line=lineno,
                field="step",
            )
        text = prompt
        out.append(
            {
                "task_id": f"{step}:{prompt_digest(text)}",
                "reward": row.get(grade),
                "prompt": prompt,
                "completion": row.get("output"),
                "step": step,
                **{flag: row[flag] for flag in FLAGS if flag in row},
            }
        )
        positions.append({"line": lineno})

    def flagged(flag: str) -> bool:
        return any(flag in row for _, row in lines)

    origins = {
        "task_id": "(step, a hash of input): the rollouts of one prompt at one step",
        "reward": (
            "acc (the reward function's pass; score is its shaped reward)"
            if by_acc
            else "score (the reward summed over the reply's tokens)"
        ),
        "truncated": next(
            (f"{flag} (the reward function's extra info)" for flag in FLAGS if flagged(flag)),
            "not recorded",
        ),
        "model": "not recorded",
        "version": "step",
    }
    notes = []
    if by_acc:
        notes.append("verl rows: the pass is acc, as verl's own validation metrics take it")
    spelled = {"task_id": "input", "reward": grade}
    return Converted(NAME, out, origins, notes, positions=positions, spelled=spelled)
