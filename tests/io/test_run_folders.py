"""A run's folder holds its rows beside its settings and state: a trainer's ``config.json``,
``trainer_state.json``, a tokenizer, a checkpoint's ``config.json``, an ``args.json``. Found
in a folder, a JSON document that holds no rows (no list of row objects, no grade or task id
under a name the reader knows) is left out with a note; named on its own, it is refused as
before. A row file beside them routes as it does alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError
from whilecli.io.read import read_rows

#: What trainers and tokenizers write beside rollouts, by file name.
SETTINGS: dict[str, Any] = {
    "config.json": {"lr": 1e-6, "batch_size": 64, "model": {"name": "Qwen/Qwen3-4B"}},
    "args.json": {"learning_rate": 1e-6, "seed": 0, "output_dir": "out"},
    "trainer_state.json": {"global_step": 100, "log_history": [{"loss": 0.1, "step": 1}]},
    "tokenizer.json": {"version": "1.0", "model": {"type": "BPE", "vocab": {"a": 0}}},
    "checkpoint-100/config.json": {"architectures": ["Qwen3ForCausalLM"], "hidden_size": 2560},
    "generation_config.json": {"temperature": 0.6, "top_p": 0.95},
}


def _rows(folder: Path) -> Path:
    path = folder / "rollouts.jsonl"
    path.write_text(
        "".join(
            json.dumps({"task_id": f"t{t}", "completion": f"a{j}", "reward": float(j < 2)}) + "\n"
            for t in range(20)
            for j in range(4)
        ),
        encoding="utf-8",
    )
    return path


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(names=st.lists(st.sampled_from(sorted(SETTINGS)), min_size=1, max_size=4, unique=True))
def test_a_runs_settings_beside_its_rows_are_left_out_with_a_note(
    tmp_path_factory: pytest.TempPathFactory, names: list[str]
) -> None:
    folder = tmp_path_factory.mktemp("run")
    alone = read_rows([str(_rows(folder))])
    for name in names:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(SETTINGS[name], indent=2), encoding="utf-8")
    read = read_rows([str(folder)])
    assert read.frame.collect().height == alone.frame.collect().height == 80
    left = [n for n in read.notes if "not read as rows" in n]
    assert len(left) == len(names), read.notes


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_a_runs_settings_named_on_their_own_are_refused(tmp_path: Path, name: str) -> None:
    path = tmp_path / name.replace("/", "_")
    path.write_text(json.dumps(SETTINGS[name]), encoding="utf-8")
    with pytest.raises(InputError):
        read_rows([str(path)])
