"""BrowserGym / AgentLab episode folders (WebArena, WorkArena, VisualWebArena, MiniWoB, ...):
one folder per episode holding ``summary_info.json`` beside its ``step_<n>.pkl.gz`` files
(``ServiceNow/AgentLab``, ``src/agentlab/experiments/loop.py``: ``ExpArgs.run`` and
``_save_summary_info``): ``n_steps``, ``cum_reward`` (the task's reward: WebArena's 0/1
success), ``cum_raw_reward``, ``err_msg`` and ``stack_trace`` (null, or the exception that
ended the episode), ``terminated`` (the agent or the task ended it), ``truncated`` (the step
budget ran out), ``stats.*`` (token counts, cost) and the elapsed times.

AgentLab names an episode's folder ``<date>_<agent name>_on_<task name>_<seed>``
(``ExpArgs.prepare``: ``exp_name``, and ``_make_dir``: the date before it, ``_<i>`` after it
for a rerun); a plain BrowserGym run names it
by the task (``webarena.123``). The task is that task name; its seeds are rollouts. The grade
is ``cum_reward``; ``truncated`` is the cut. An episode that raised (``err_msg`` set) is
scored by its ``cum_reward`` (0 where none), as AgentLab's own averages score it, with a
note. The model is the agent name's part
after ``<Agent>-`` (``GenericAgent-gpt-4o-mini``: ``GenericAgent-{model_name}``, ``/`` written
``_``), where the folder names an agent.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from whilecli.io.formats import Converted

NAME = "browsergym"
SUMMARY = "summary_info.json"
#: The keys every ``summary_info.json`` carries.
KEYS = frozenset({"n_steps", "cum_reward", "err_msg", "stack_trace"})
#: ``<date>_<agent name>_on_<task name>_<seed>`` (the date ``%Y-%m-%d_%H-%M-%S``), and
#: ``_<i>`` after it where a folder of that name was there (``ExpArgs._make_dir``).
EXP_DIR = re.compile(
    r"^(?:\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}_)?(?P<agent>.+?)_on_(?P<task>.+?)"
    r"_(?P<seed>\d+)(?:_\d+)?$"
)
#: An agent name that carries its model: ``GenericAgent-gpt-4o-mini``.
AGENT_MODEL = re.compile(r"^[A-Za-z0-9]*Agent-(?P<model>.+)$")


def is_summary(doc: Any, path: Any) -> bool:
    """An episode's ``summary_info.json``."""
    return (
        isinstance(path, Path)
        and path.name == SUMMARY
        and isinstance(doc, dict)
        and set(doc) >= KEYS
    )


def _names(folder: str) -> tuple[str, str | None, str | None]:
    """(task, agent, seed) from an episode folder's name."""
    found = EXP_DIR.match(folder)
    if found is None:
        return folder, None, None
    return found["task"], found["agent"], found["seed"]


def convert(doc: dict[str, Any], path: Path, name: str) -> Converted:
    """One episode's summary as one row."""
    task, agent, seed = _names(path.parent.name)
    named = AGENT_MODEL.match(agent) if agent else None
    error = doc.get("err_msg")
    truncated = doc.get("truncated")
    row: dict[str, Any] = {
        "task_id": task,
        "seed": seed,
        "agent": agent,
        "reward": doc.get("cum_reward"),
        "truncated": truncated if isinstance(truncated, bool) else None,
        "steps": doc.get("n_steps"),
        "output_tokens": doc.get("stats.cum_output_tokens"),
        "model": named["model"] if named else None,
    }
    notes = []
    if error not in (None, ""):
        # the agent's or the page's exception, scored as AgentLab scores it (cum_reward, 0 where
        # none): one episode a file, an error row would leave its file no graded row
        row["episode_error"] = str(error)
        if row["reward"] is None:
            row["reward"] = 0.0
        notes.append(f"the episode raised ({str(error)[:80]}): scored cum_reward, as AgentLab does")
    origins = {
        "task_id": "the episode folder's task name (<date>_<agent>_on_<task>_<seed>: its seeds"
        " are rollouts)"
        if agent
        else "the episode folder's name (the task)",
        "reward": "cum_reward",
        "truncated": "truncated (the step budget ran out)"
        if row["truncated"] is not None
        else "not recorded",
        "model": "the agent name in the episode folder (<Agent>-<model>)"
        if row["model"]
        else "not recorded",
    }
    return Converted(
        NAME,
        [row],
        origins,
        notes,
        positions=[{"at": "the episode"}],
        spelled={"reward": "cum_reward"},
    )
