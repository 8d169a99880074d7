"""tau2-bench results (``sierra-research/tau2-bench``, ``src/tau2/data_model/simulation.py``:
``Results``), in either of its two storage formats:

- ``json`` (text runs): one document ``{timestamp, info, tasks[], simulations[]}``;
- ``dir`` (voice runs): ``results.json`` holding the same less ``simulations`` (with a
  ``simulation_index``), and one ``simulations/<id>.json`` per ``SimulationRun`` beside it
  (``Results.load`` reads ``sorted(simulations/*.json)``).

Each ``SimulationRun`` is a rollout: ``task_id`` (its trials, ``trial``, are the task's
rollouts), ``reward_info.reward`` (null: not evaluated), ``termination_reason``:
``max_steps`` is the run's step cap (``info.max_steps``) and ``timeout`` its wall-clock
limit, cut-offs; ``infrastructure_error`` and ``context_window_exceeded`` never produced an
evaluable rollout (tau2 leaves them out of its metrics: ``NON_EVALUABLE_TERMINATION_REASONS``),
read as the harness's errors. The model is ``info.agent_info.llm`` (``info.user_info.llm`` is
the simulated user's), the environment ``info.environment_info.domain_name``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from whilecli import jsonout
from whilecli.io.formats import Converted, as_dict, as_list

NAME = "tau2-bench"
SIMULATIONS = "simulations"
RESULTS = "results.json"
#: Termination reasons that cut the episode off: the step cap and the wall-clock limit.
CUT_OFF = frozenset({"max_steps", "timeout"})
#: Termination reasons tau2 counts as no evaluable rollout.
NOT_EVALUABLE = frozenset({"infrastructure_error", "context_window_exceeded"})


def is_results(doc: Any) -> bool:
    """A ``Results`` document (either storage format)."""
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("info"), dict)
        and "agent_info" in doc["info"]
        and isinstance(doc.get("tasks"), list)
        and ("simulations" in doc or "simulation_index" in doc)
    )


def is_simulation(doc: Any) -> bool:
    """One ``SimulationRun`` (a dir-format ``simulations/<id>.json``)."""
    return (
        isinstance(doc, dict)
        and "task_id" in doc
        and "termination_reason" in doc
        and ("reward_info" in doc or "messages" in doc)
    )


def is_dir_results(path: Path) -> bool:
    """A dir-format ``results.json``: its simulations lie in ``simulations/`` beside it."""
    return path.name == RESULTS and (path.parent / SIMULATIONS).is_dir()


def _load(path: Path) -> Any:
    try:
        return jsonout.loads(path.read_bytes(), file=str(path), lenient=True)
    except OSError:
        return None


def convert(doc: dict[str, Any], path: Any, name: str) -> Converted:
    """The simulations of a ``Results`` document as rows; a dir-format ``results.json``
    reads its ``simulations/`` folder."""
    sims = as_list(doc.get("simulations"))
    places = [{"at": f"simulations[{i}]"} for i in range(len(sims))]
    notes: list[str] = []
    if not sims and isinstance(path, Path) and (path.parent / SIMULATIONS).is_dir():
        files = sorted((path.parent / SIMULATIONS).glob("*.json"))
        sims = [_load(f) for f in files]
        places = [{"at": f"{SIMULATIONS}/{f.name}"} for f in files]
        notes.append(f"tau2-bench dir format: {len(files)} simulations read from {SIMULATIONS}/")
    return _rows(sims, places, as_dict(doc.get("info")), notes, name)


def convert_simulation(doc: dict[str, Any], path: Any, name: str) -> Converted:
    """One ``simulations/<id>.json`` named on its own; the model from the ``results.json``
    of its run, where it lies above it."""
    info: dict[str, Any] = {}
    if isinstance(path, Path) and path.parent.name == SIMULATIONS:
        results = _load(path.parent.parent / RESULTS)
        info = as_dict(as_dict(results).get("info"))
    return _rows([doc], [{"at": "the simulation"}], info, [], name)


def _rows(
    sims: list[Any], places: list[dict[str, Any]], info: dict[str, Any], notes: list[str], name: str
) -> Converted:
    model = as_dict(info.get("agent_info")).get("llm")
    env = as_dict(info.get("environment_info")).get("domain_name")
    rows: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    cut = errors = 0
    for sim, place in zip(sims, places, strict=True):
        if not isinstance(sim, dict):
            continue
        reason = sim.get("termination_reason")
        reward = as_dict(sim.get("reward_info")).get("reward") if sim.get("reward_info") else None
        row: dict[str, Any] = {
            "task_id": None if sim.get("task_id") is None else str(sim["task_id"]),
            "trial": sim.get("trial"),
            "simulation_id": sim.get("id"),
            "reward": reward,
            "truncated": None if not isinstance(reason, str) else reason in CUT_OFF,
            "termination_reason": reason,
            "model": model if isinstance(model, str) else None,
        }
        if reason in NOT_EVALUABLE:
            row["error"] = f"termination_reason {reason}: no evaluable rollout"
            errors += 1
        cut += bool(row["truncated"])
        rows.append(row)
        positions.append(place)
    if cut:
        notes.append(
            f"{cut} simulations ended at the step cap or the time limit (termination_reason"
            " max_steps or timeout): cut off"
        )
    if errors:
        notes.append(
            f"{errors} simulations ended in {', '.join(sorted(NOT_EVALUABLE))}: no evaluable"
            " rollout (tau2 leaves them out of its metrics), read as the harness's errors"
        )
    origins = {
        "task_id": "simulations[].task_id (trials are rollouts)",
        "reward": "simulations[].reward_info.reward",
        "truncated": "termination_reason in {max_steps, timeout}",
        "model": "info.agent_info.llm" if isinstance(model, str) else "not recorded",
    }
    spelled = {"reward": "reward_info.reward"}
    return Converted(
        NAME,
        rows,
        origins,
        notes,
        env=env if isinstance(env, str) else None,
        positions=positions,
        spelled=spelled,
    )
