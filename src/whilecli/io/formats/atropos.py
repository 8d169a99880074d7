"""Atropos ScoredDataGroups: one *group* per row, with per-rollout lists ``tokens[]``,
``masks[]``, ``scores[]`` and ``messages[]`` (and optional ``seed``, ``ref_logprobs``).

Each element of ``scores[]`` is one rollout: a group of 4 becomes 4 rows. The task is the
group's ``seed`` where it records one (the environment's scramble or problem; groups of one
seed are more rollouts of one task), else a hash of the first rollout's prompt (its messages
before the first assistant or agent turn), else the group's line. Atropos records no model and
no truncation.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from whilecli.errors import InputError
from whilecli.io.formats import Converted, as_list


def is_group(first: dict[str, Any]) -> bool:
    """A ScoredDataGroup: ``scores`` beside a ``tokens`` or ``masks`` list (``scores`` of any
    type, so a scalar one is refused at its line and field, not read as another format)."""
    return "scores" in first and (
        isinstance(first.get("tokens"), list) or isinstance(first.get("masks"), list)
    )


def _prompt(messages: Any) -> Any:
    if not isinstance(messages, list):
        return None
    out = []
    for m in messages:
        if isinstance(m, dict) and m.get("role") in ("assistant", "agent"):
            break
        out.append(m)
    return out


def _same_length(group: dict[str, Any], n: int, name: str, lineno: int) -> None:
    """Refuse a group whose per-rollout lists (``tokens``, ``masks``) do not hold one entry
    per score: which score belongs to which rollout is then unknown (ScoredDataGroup)."""
    for key in ("tokens", "masks"):
        held = group.get(key)
        if isinstance(held, list) and len(held) != n:
            raise InputError(
                f"holds {len(held)} rollouts but scores holds {n}: a group has one entry"
                " per rollout in each",
                file=name,
                line=lineno,
                field=key,
            )


def convert(rows: Iterable[tuple[int, dict[str, Any]]], name: str) -> Converted:
    out: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    keyed_by = "seed"
    for lineno, group in rows:
        scores = group.get("scores")
        if not isinstance(scores, list):
            raise InputError("scores is not a list", file=name, line=lineno, field="scores")
        _same_length(group, len(scores), name, lineno)
        messages = as_list(group.get("messages"))
        seed = group.get("seed")
        for i, score in enumerate(scores):
            prompt = _prompt(messages[i]) if i < len(messages) else None
            if seed is not None:
                task: Any = seed  # as written: the reader types it, and refuses a list
            elif prompt:
                task, keyed_by = None, "prompt"
            else:
                task, keyed_by = f"group {lineno}", "group"
            out.append(
                {
                    "task_id": task,
                    "reward": score,
                    "prompt": prompt,
                    "group": lineno,
                    "rollout": i,
                }
            )
            positions.append({"line": lineno})
    origins = {
        "task_id": {
            "seed": "the group's seed",
            "prompt": "hash of the group's prompt (messages before the first agent turn)",
            "group": "the group (its line)",
        }[keyed_by],
        "reward": "scores[i], one rollout per element",
        "truncated": "not recorded",
        "model": "not recorded",
    }
    spelled = {"reward": "scores", **({"task_id": "seed"} if keyed_by == "seed" else {})}
    return Converted("atropos", out, origins, positions=positions, spelled=spelled)
