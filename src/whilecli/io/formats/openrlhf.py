"""OpenRLHF evaluation samples: ``<eval_sample_save_path>/eval_samples_step_{global_step}.jsonl``
(``ckpt_path/eval`` when no save path is set), one evaluation sample a line, the first 128 of an
evaluation (``OpenRLHF/OpenRLHF``, ``openrlhf/trainer/ppo_utils/eval_utils.py``:
``build_eval_records`` and ``save_eval_samples``, called from
``openrlhf/trainer/ppo_trainer.py: BasePPOTrainer.run_evaluation``; commit 8ecef1cc).

A line: ``prompt`` (the templated prompt text), ``label`` (the dataset's answer), ``reward`` (the
reward function's reward for the sample), ``score`` (its 0/1 score for dynamic filtering, where
it gives one), ``response_length``, ``total_length``, ``truncated`` (a flag, or null where the
trainer did not record it), ``datasource``, ``eval_index`` and any other per-sample value of the
experience's ``info``. The reply's text is not written, nor the model, nor the step but in the
file's name.

``datasource`` and ``eval_index`` are looked up by the prompt's occurrence: with several samples
per prompt only the first finds them (the others read ``unknown`` and null), so neither keys a
task. The task is ``(step, a hash of prompt)``: the samples of one prompt at one evaluation, as
OpenRLHF's own ``pass1`` and ``pass{n}`` group them; the same prompt at another step is another
draw of another policy. The step is the file name's (none on a renamed file: the prompt alone
keys the task). The grade is ``reward``, from which OpenRLHF computes its own pass rates, else
``score`` where no line carries a reward.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from whilecli.errors import InputError
from whilecli.io.formats import Converted, prompt_digest
from whilecli.io.shape import kind_words

NAME = "openrlhf"
#: The keys ``build_eval_records`` writes on every line, whatever the trainer recorded.
KEYS = ("prompt", "label", "reward", "score", "truncated", "datasource", "eval_index")
#: The file name ``save_eval_samples`` writes (a compression suffix aside).
STEP_NAME = re.compile(r"eval_samples_step_(\d+)\.jsonl")
#: How many records ``save_eval_samples`` writes at most (its ``max_samples``).
KEPT = 128


def is_sample(first: dict[str, Any]) -> bool:
    """A line as ``build_eval_records`` writes it: every key it always writes."""
    return all(k in first for k in KEYS)


def step_of(path: Path | None, name: str) -> int | None:
    """The global step a file's name carries (``eval_samples_step_40.jsonl``), else None."""
    base = path.name if path is not None else Path(name).name
    found = STEP_NAME.match(base)
    return int(found.group(1)) if found else None


def convert(rows: Iterable[tuple[int, dict[str, Any]]], path: Path | None, name: str) -> Converted:
    lines = list(rows)
    step = step_of(path, name)
    scored_only = not any(row.get("reward") is not None for _, row in lines) and any(
        row.get("score") is not None for _, row in lines
    )
    grade = "score" if scored_only else "reward"
    out: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    for lineno, row in lines:
        prompt = row.get("prompt")
        if not isinstance(prompt, str):
            raise InputError(
                f"holds {kind_words(prompt)}, not text (OpenRLHF writes the prompt's text, which"
                " keys its samples)",
                file=name,
                line=lineno,
                field="prompt",
            )
        cut = row.get("truncated")
        digest = prompt_digest(prompt)
        out.append(
            {
                "task_id": digest if step is None else f"{step}:{digest}",
                "reward": row.get(grade),
                "truncated": cut,
                "prompt": prompt,
                "step": step,
            }
        )
        positions.append({"line": lineno})
    cut_known = any(isinstance(r["truncated"], bool) for r in out)
    origins = {
        "task_id": (
            "a hash of prompt: one evaluation's samples of a prompt"
            if step is None
            else "(step, a hash of prompt): one evaluation's samples of a prompt"
        ),
        "reward": (
            "reward (the reward function's; OpenRLHF's pass1 is its mean)"
            if grade == "reward"
            else "score (no line carries a reward)"
        ),
        "truncated": "truncated" if cut_known else "not recorded (truncated is null)",
        "model": "not recorded",
        "policy_version": (
            "the step in the file name (eval_samples_step_N.jsonl)"
            if step is not None
            else "not recorded (the file name carries no step)"
        ),
    }
    notes = []
    if len(lines) == KEPT:
        notes.append(
            f"{name}: OpenRLHF saves the first {KEPT} samples of an evaluation: the last"
            " prompt's samples may be cut short"
        )
    spelled = {"task_id": "prompt", "reward": grade}
    return Converted(NAME, out, origins, notes, positions=positions, spelled=spelled)
