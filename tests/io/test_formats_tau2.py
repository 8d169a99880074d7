"""tau2-bench ``Results`` (src/tau2/data_model/simulation.py): the one-document ``json``
format and the ``dir`` format (results.json + simulations/<id>.json), each simulation a
rollout of its task; ``max_steps`` and ``timeout`` cut off, the non-evaluable reasons are
harness errors, the model ``info.agent_info.llm``."""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from whilecli.io.read import read_rows

REASONS = ["agent_stop", "user_stop", "max_steps", "timeout", "too_many_errors"]


def _results(rng: random.Random, tasks: int, trials: int) -> tuple[dict[str, Any], dict[str, Any]]:
    sims = []
    for t in range(tasks):
        for trial in range(trials):
            reward = float(rng.random() < 0.5)
            sims.append(
                {
                    "id": str(uuid.UUID(int=rng.getrandbits(128))),
                    "task_id": str(t),
                    "trial": trial,
                    "termination_reason": rng.choice(REASONS),
                    "reward_info": {"reward": reward, "reward_basis": ["DB"]},
                    "messages": [{"role": "assistant", "content": "hi", "turn_idx": 0}],
                    "start_time": "x",
                    "end_time": "y",
                    "duration": 1.0,
                }
            )
    info = {
        "git_commit": "abc",
        "num_trials": trials,
        "max_steps": 30,
        "max_errors": 10,
        "user_info": {"implementation": "user_simulator", "llm": "gpt-4.1"},
        "agent_info": {"implementation": "llm_agent", "llm": "gpt-4.1-mini"},
        "environment_info": {"domain_name": "airline", "policy": "p"},
    }
    doc = {"timestamp": "t", "info": info, "tasks": [{"id": str(t)} for t in range(tasks)]}
    truth = {
        "per": sorted(
            (t, trials, int(sum(s["reward_info"]["reward"] for s in sims if s["task_id"] == t)))
            for t in {s["task_id"] for s in sims}
        ),
        "cut": sum(s["termination_reason"] in ("max_steps", "timeout") for s in sims),
    }
    return {**doc, "simulations": sims}, truth


def _write(folder: Path, doc: dict[str, Any], storage: str) -> Path:
    folder.mkdir(parents=True)
    if storage == "json":
        path = folder / "2025-06-10_airline_llm_agent_gpt-4.1-mini.json"
        path.write_text(json.dumps(doc, indent=2))
        return path
    meta = {k: v for k, v in doc.items() if k != "simulations"}
    meta["simulation_index"] = [
        {"id": s["id"], "task_id": s["task_id"], "trial": s["trial"]} for s in doc["simulations"]
    ]
    (folder / "results.json").write_text(json.dumps(meta, indent=2))
    (folder / "simulations").mkdir()
    for sim in doc["simulations"]:
        (folder / "simulations" / f"{sim['id']}.json").write_text(json.dumps(sim, indent=2))
    return folder


@pytest.mark.parametrize("storage", ["json", "dir"])
@pytest.mark.parametrize("seed", range(4))
def test_tau2_results_read_as_rollouts(tmp_path: Path, storage: str, seed: int) -> None:
    rng = random.Random(seed)
    doc, truth = _results(rng, rng.randint(2, 6), rng.randint(1, 4))
    rows = read_rows([str(_write(tmp_path / "run", doc, storage))])
    frame = rows.frame.collect()
    per = frame.group_by("task_id").agg(n=pl.len(), c=pl.col("passed").cast(pl.Int64).sum())
    assert sorted(per.iter_rows()) == truth["per"]
    assert frame["truncated"].sum() == truth["cut"]
    assert set(frame["model"].to_list()) == {"gpt-4.1-mini"}
    assert rows.format == "tau2-bench"


def test_non_evaluable_simulations_are_harness_errors(tmp_path: Path) -> None:
    doc, _ = _results(random.Random(9), 4, 4)
    doc["simulations"][0]["termination_reason"] = "infrastructure_error"
    doc["simulations"][0]["reward_info"] = None
    rows = read_rows([str(_write(tmp_path / "run", doc, "json"))])
    assert rows.frame.collect().height == 15  # an error row is left out of every rate
    assert any("infrastructure_error" in n for n in rows.notes)
