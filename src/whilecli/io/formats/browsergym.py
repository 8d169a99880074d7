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
is ``cum_reward``; ``truncated`` is the cut.

An episode that raised (``err_msg`` set): ``ExpArgs.run`` catches any exception ("uncaught by
agent or environment") and ``_save_summary_info`` writes ``n_steps = len(episode_info) - 1``.
With ``n_steps`` 0 no action of the agent's was taken in the environment: the raise came in
making the environment or the agent, in ``env.reset`` (a site down, a page that never loaded),
in the first ``get_action`` call or the first ``env.step``, and what AgentLab recorded is an
error in place of an episode, the harness's (left out of every rate). After the agent acted
(``n_steps`` 1 or more) the episode is scored by its ``cum_reward`` (0 where none), as
AgentLab's own averages score it (``inspect_results.summarize``: an error's reward is 0), with
a note, unless its stack trace holds one of the server errors AgentLab's
``error_categorization`` names (a 5xx or auth reply from the model's server, a lost connection):
the harness's error too. A parse failure of the model's reply (``Could not parse a valid value
after N retries``, AgentLab's ``is_retry_error``) is the model's, at any step.
The model is the agent name's part
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
#: What AgentLab's ``error_categorization`` takes for the server's failure, not the agent's
#: (``is_critical_server_error``, ``is_minor_server_error``), found in the stack trace.
SERVER_ERRORS = (
    "502 Server Error: Bad Gateway",
    "500 Server Error: Internal Server Error",
    "424 Client Error: Failed Dependency",
    "403 Client Error: Forbidden",
    "401 Client Error: Unauthorized",
    "400 Client Error: Bad Request",
    "504 Server Error: Gateway Time-out",
    "Server error: Out of available cache blocks",
    "openai.APIConnectionError: Connection error",
)
#: AgentLab's ``is_retry_error``: the model's replies never parsed, the model's failure.
RETRY_ERROR = re.compile(r"ValueError: Could not parse a valid value after \d+ retries\.")
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


def harness_error(doc: dict[str, Any]) -> bool:
    """Whether an episode that raised raised for the harness, not the agent: before any action
    of the agent's was taken (``n_steps`` 0), or with a server error in its stack trace; never
    for a reply of the model's that would not parse."""
    trace = doc.get("stack_trace")
    trace = trace if isinstance(trace, str) else ""
    said = f"{doc.get('err_msg')}\n{trace}"
    if RETRY_ERROR.search(said):
        return False
    return doc.get("n_steps") == 0 or any(marker in trace for marker in SERVER_ERRORS)


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
        said = " ".join(str(error).split())[:80]
        if row["reward"] is None:
            row["reward"] = 0.0  # AgentLab's 0; an error row is left out whatever its reward
        if harness_error(doc):
            row["error"] = str(error)
            notes.append(
                f"the episode raised before the agent acted or at its server ({said}):"
                " the harness's error, left out"
            )
        else:  # after the agent acted: scored as AgentLab scores it
            row["episode_error"] = str(error)
            notes.append(f"the episode raised ({said}): scored cum_reward, as AgentLab does")
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
