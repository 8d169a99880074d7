"""ROLL RLVR rollout dumps: with ``rollout_dump_dir`` set to an absolute path, each step's
generated batch is written to ``<rollout_dump_dir>/rollout_dump_data.step_{global_step}.jsonl``
as one JSON object of columns (``alibaba/ROLL``, ``roll/pipeline/rlvr/utils.py``:
``dump_rollout_to_specific_path`` and ``write_to_json_process``, called from
``roll/pipeline/rlvr/rlvr_pipeline.py: RLVRPipeline.run`` right after generation; commit
4d68571b).

The object's columns are lists with one element per sample, of those in ``COLUMMNS_CONFIG``
the batch holds: ``global_step``, ``id``, ``source``, ``difficulty``, ``prompt``, ``messages``,
``ground_truth``, ``case_type``, ``test_case_function``, ``test_cases``, ``tag``, ``domain`` (the
dataset's columns, repeated over a prompt's samples), ``responses`` (decoded, special tokens
skipped), ``scores`` (the reward worker's score, before ROLL normalises it into the training
reward) and ``sampling_params``. Each element is a rollout.

The task is ``(global_step, domain, id)``: the samples of one prompt at one step (a prompt at
another step is another draw of another policy); where no ``id`` is written, a hash of the
prompt (``prompt``, else ``messages``) stands for it. The grade is ``scores``: ROLL's own
validation counts ``scores == 1`` as correct, the default pass threshold. No finish reason, no
model and no log-probs are written. The agentic pipeline's ``dump_rollout_trajectories`` writes
the same file with the columns its environment manager names; without ``scores`` it is refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from whilecli import jsonout
from whilecli.errors import InputError
from whilecli.io.formats import Converted, prompt_digest

NAME = "roll"
#: The column that names a dump, and the columns it is read from.
STEP = "global_step"
GRADE = "scores"
#: Columns of one element per sample that a row keeps.
REPLY = "responses"
PROMPTS = ("prompt", "messages")


def is_dump(first: dict[str, Any]) -> bool:
    """An object of columns as ``write_to_json_process`` writes it: ``global_step`` a list, and
    ``scores`` or ``responses`` a list beside it."""
    return isinstance(first.get(STEP), list) and (
        isinstance(first.get(GRADE), list) or isinstance(first.get(REPLY), list)
    )


def convert(rows: Iterable[tuple[int, dict[str, Any]]], name: str) -> Converted:
    out: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    keyed = "id"
    for lineno, line in rows:
        scores = line.get(GRADE)
        if not isinstance(scores, list):
            held = ", ".join(list(line)[:8])
            raise InputError(
                f"a ROLL rollout dump without a scores list (its columns: {held}): no grade"
                " per sample to route",
                file=name,
                line=lineno,
                field=GRADE,
            )
        n = len(scores)
        columns = {key: _column(line, key, n, name, lineno) for key in line if key != GRADE}
        for i, score in enumerate(scores):
            step = _at(columns, STEP, i)
            ident = _at(columns, "id", i)
            if ident is None:
                keyed = "prompt"
                prompt = next((_at(columns, k, i) for k in PROMPTS if _at(columns, k, i)), None)
                ident = None if prompt is None else prompt_digest(_text(prompt))
            domain = _at(columns, "domain", i)
            parts = [step, domain, ident] if domain is not None else [step, ident]
            out.append(
                {
                    "task_id": None if ident is None else ":".join(map(str, parts)),
                    "reward": score,
                    "prompt": _prompt(columns, i),
                    "completion": _at(columns, REPLY, i),
                    "step": step,
                }
            )
            positions.append({"line": lineno})
    origins = {
        "task_id": (
            "(global_step, domain, id): one prompt's samples at one step"
            if keyed == "id"
            else "(global_step, domain, a hash of prompt or messages)"
        ),
        "reward": "scores (the reward worker's; ROLL counts scores == 1 as correct)",
        "truncated": "not recorded",
        "model": "not recorded",
        "policy_version": "global_step",
    }
    spelled = {"reward": GRADE, "task_id": "id" if keyed == "id" else "prompt"}
    return Converted(NAME, out, origins, positions=positions, spelled=spelled)


def _column(line: dict[str, Any], key: str, n: int, name: str, lineno: int) -> list[Any] | None:
    """A column of one element per sample; None for a value that is no list (not a column)."""
    values = line[key]
    if not isinstance(values, list):
        return None
    if len(values) != n:
        raise InputError(
            f"holds {len(values)} elements and scores {n}: ROLL writes one per sample in"
            " every column",
            file=name,
            line=lineno,
            field=key,
        )
    return values


def _at(columns: dict[str, list[Any] | None], key: str, i: int) -> Any:
    values = columns.get(key)
    return None if values is None else values[i]


def _prompt(columns: dict[str, list[Any] | None], i: int) -> Any:
    """The sample's prompt: ``prompt`` text, else ``messages`` (a list, or its JSON text)."""
    prompt = _at(columns, "prompt", i)
    if isinstance(prompt, str) and prompt:
        return prompt
    messages = _at(columns, "messages", i)
    if isinstance(messages, str):
        try:
            return jsonout.parse(messages)
        except ValueError:
            return messages
    return messages


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)
