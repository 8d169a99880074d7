"""OpenPipe ART trajectory logs (``OpenPipe/ART``, ``src/art/utils/trajectory_logging.py``:
``serialize_trajectory_groups``, written by the backends' ``_log`` to
``.art/<project>/models/<model>/trajectories/<split>/<step:04d>.jsonl``): one
``TrajectoryGroup`` per line, ``{"trajectories": [...]}``.

A trajectory (``trajectory_to_dict``): ``reward``, ``metrics``, ``metadata`` (the user's),
``messages_and_choices`` (chat messages, and the model's ``Choice`` objects: ``message`` and
``finish_reason``, their log-probs stripped), ``tools``, ``additional_histories`` and
``logs``. A group holds the rollouts of one scenario, so each trajectory is a rollout; ART
writes no task id, so the task is a hash of the prompt (the messages before the first choice
or assistant turn), the way every format without an id is keyed. The grade is ``reward``
(ART's rewards are often shaped: ``--pass-threshold`` says what passes); the last choice's
``finish_reason == "length"`` is a cut-off reply. The model is the ``models/<model>/`` folder
of the path (the trained model's name), the version the step in the file name.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from whilecli.errors import InputError
from whilecli.io.formats import Converted, as_dict, as_list

NAME = "art"


def _trajectories(first: dict[str, Any]) -> list[Any] | None:
    value = first.get("trajectories")
    return value if isinstance(value, list) else None


def is_group(first: dict[str, Any]) -> bool:
    """A line of ``serialize_trajectory_groups``: only ``trajectories``, each with a reward
    and ``messages_and_choices``."""
    trajectories = _trajectories(first)
    return (
        set(first) == {"trajectories"}
        and trajectories is not None
        and any(
            isinstance(t, dict) and "messages_and_choices" in t and "reward" in t
            for t in trajectories
        )
    )


def _is_choice(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("message"), dict)


def _prompt(items: list[Any]) -> list[Any]:
    out = []
    for item in items:
        if _is_choice(item) or (isinstance(item, dict) and item.get("role") == "assistant"):
            break
        out.append(item)
    return out


def _cut(items: list[Any]) -> bool | None:
    """Whether the last choice stopped at the token cap; None with no choice."""
    choices = [item for item in items if _is_choice(item)]
    if not choices:
        return None
    reason = choices[-1].get("finish_reason")
    return reason == "length" if isinstance(reason, str) else None


def _reply(items: list[Any]) -> Any:
    choices = [item for item in items if _is_choice(item)]
    return as_dict(choices[-1]["message"]).get("content") if choices else None


def _layout(path: Any) -> tuple[str | None, int | None]:
    """The model and step of ``models/<model>/trajectories/<split>/<step>.jsonl``."""
    if not isinstance(path, Path) or len(path.parents) < 4:
        return None, None
    step = int(path.stem) if path.stem.isdigit() else None
    if path.parents[1].name == "trajectories" and path.parents[3].name == "models":
        return path.parents[2].name, step
    return None, step


def convert(rows: Iterable[tuple[int, dict[str, Any]]], path: Any, name: str) -> Converted:
    model, step = _layout(path)
    out: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    cut_known = False
    for lineno, group in rows:
        trajectories = _trajectories(group)
        if trajectories is None:
            raise InputError(
                "trajectories is not a list", file=name, line=lineno, field="trajectories"
            )
        for i, trajectory in enumerate(trajectories):
            if not isinstance(trajectory, dict):
                raise InputError(
                    "a trajectory must be a JSON object",
                    file=name,
                    line=lineno,
                    field=f"trajectories[{i}]",
                )
            items = as_list(trajectory.get("messages_and_choices"))
            cut = _cut(items)
            cut_known = cut_known or cut is not None
            out.append(
                {
                    "prompt": _prompt(items) or None,
                    "completion": _reply(items),
                    "reward": trajectory.get("reward"),
                    "truncated": cut,
                    "model": model,
                    "step": step,
                    "group": lineno,
                    "rollout": i,
                }
            )
            positions.append({"line": lineno})
    origins = {
        "task_id": "hash of the prompt (messages before the first choice): ART writes no id",
        "reward": "trajectories[].reward",
        "truncated": "the last choice's finish_reason == 'length'" if cut_known else "not recorded",
        "model": "the models/<model>/ folder" if model else "not recorded",
        "policy_version": "the step in the file name" if step is not None else "not recorded",
    }
    return Converted(
        NAME,
        out,
        origins,
        positions=positions,
        spelled={"reward": "trajectories[].reward"},
        # the name the run gave its trainable model (``agent-001``), its base model elsewhere
        model_unsure=f"the models/<model>/ folder ({model})" if model else None,
    )
