"""What the settings beside the rows say is read as the rows' own where the rows do not say
it (DESIGN section 1, ``truncated`` and ``model``; :mod:`whilecli.io.sources`): a token cap
(vf-eval's ``metadata.json: sampling_args.max_tokens``, a ``config.yaml``'s
``sampling.max_tokens``) pairs with each row's token count as a row-level cap does; a
temperature of 0 (``sampling_args.temperature``) makes rows that keep no reply one greedy
draw repeated, as a row-level ``temperature: 0`` does; a model a settings file of no known
tool's layout names (``config.yaml``, ``run_config.json``, ``args.json``, ...) is read, and
unsure (it names a judge's as often): a verdict resting on it is provisional. A model
folder's ``config.json`` (``architectures``, ``_name_or_path``) is not read.

Each test writes a seeded pool with a known truth and its neighbours: the settings file
absent (the control), a count past the cap (the cap limits something else), the temperature
above 0, a model folder's config.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from read_helpers import frame_of
from rows_files import finding_kinds, route_rows

CAP = 2048
MODEL = "Qwen/Qwen3-8B"


def _settings(folder: Path, name: str, doc: dict[str, Any]) -> None:
    """``doc`` written as ``folder/name``: JSON, or simple YAML (``key: value``, nested)."""
    if name.endswith(".yaml"):

        def lines(node: dict[str, Any], indent: str) -> list[str]:
            out = []
            for key, value in node.items():
                if isinstance(value, dict):
                    out += [f"{indent}{key}:", *lines(value, indent + "  ")]
                else:
                    out.append(f"{indent}{key}: {value}")
            return out

        (folder / name).write_text("\n".join(lines(doc, "")) + "\n")
    else:
        (folder / name).write_text(json.dumps(doc))


def _capped_pool(rng: random.Random, tasks: int, cut_rate: float) -> tuple[list[dict], list]:
    """Rows whose cut ones (count == cap) pass at their task's rate; the truth per row."""
    rows, truth = [], []
    for t in range(tasks):
        p = rng.uniform(0.1, 0.9)
        for j in range(8):
            cut = rng.random() < cut_rate
            rows.append(
                {
                    "task_id": f"t{t}",
                    "reward": float(rng.random() < p),
                    "model": MODEL,
                    "completion": f"reply {t}-{j}-{rng.random()}",
                    "completion_tokens": CAP if cut else rng.randint(50, CAP - 1),
                }
            )
            truth.append(cut)
    return rows, truth


CAP_SIDECARS = [
    ("metadata.json", {"env_id": "math", "sampling_args": {"max_tokens": CAP}}),
    ("config.yaml", {"model": MODEL, "sampling": {"max_tokens": CAP}}),
    ("config.yaml", {"max_tokens": CAP}),
    ("run_config.json", {"sampling_params": {"max_tokens": CAP}}),
    ("args.json", {"max_new_tokens": CAP}),
]


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(side=st.sampled_from(CAP_SIDECARS), seed=st.integers(0, 10_000))
def test_a_cap_beside_the_rows_pairs_with_their_counts(
    tmp_path: Path, side: tuple[str, dict], seed: int
) -> None:
    rng = random.Random(seed)
    folder = tmp_path / f"{seed}-{side[0]}-{len(side[1])}"
    folder.mkdir()
    rows, truth = _capped_pool(rng, 40, 0.2)
    (folder / "rollouts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    _settings(folder, *side)
    frame, read = frame_of(folder)
    assert frame["truncated"].to_list() == truth
    assert side[0] in read.sources["truncated"]


def test_cut_passes_under_a_sidecar_cap_route_to_fix_reward(tmp_path: Path) -> None:
    rows, _ = _capped_pool(random.Random(3), 400, 0.1)
    (tmp_path / "rollouts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    _settings(tmp_path, "metadata.json", {"env_id": "math", "sampling_args": {"max_tokens": CAP}})
    got = route_rows(tmp_path, MODEL)
    assert got.route == "fix-reward" and got.exit_code == 1


@pytest.mark.parametrize("neighbour", ["no sidecar", "count past the cap", "model folder"])
def test_a_sidecar_cap_that_says_nothing_is_not_read(tmp_path: Path, neighbour: str) -> None:
    rows, _ = _capped_pool(random.Random(5), 20, 0.2)
    if neighbour == "count past the cap":  # the cap limits something else (two rows say so)
        rows[3]["completion_tokens"] = rows[9]["completion_tokens"] = CAP + 500
    (tmp_path / "rollouts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    if neighbour == "count past the cap":
        _settings(tmp_path, "config.json", {"max_tokens": CAP})
    if neighbour == "model folder":
        doc = {"architectures": ["Qwen3ForCausalLM"], "max_new_tokens": CAP}
        _settings(tmp_path, "generation_config.json", doc)
    frame, read = frame_of(tmp_path)
    assert frame["truncated"].null_count() == frame.height
    assert "not recorded" in read.sources["truncated"]


def _greedy_pool(folder: Path, seed: int, temperature: float) -> None:
    """A vf-eval layout: rows that keep no reply, k = 8 unanimous per task, the sampling
    settings only in ``metadata.json``."""
    rng = random.Random(seed)
    rows = []
    for t in range(300):
        ok = rng.random() < rng.uniform(0.05, 0.6)
        prompt = [{"role": "user", "content": f"Problem {t}: compute {t}+{t * 7}"}]
        rows += [{"example_id": t, "prompt": prompt, "task": "default", "reward": float(ok)}] * 8
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    meta = {
        "env_id": "math",
        "model": MODEL,
        "rollouts_per_example": 8,
        "sampling_args": {"n": 1, "temperature": temperature, "max_tokens": 4096},
    }
    (folder / "metadata.json").write_text(json.dumps(meta))


@pytest.mark.parametrize("seed", [1, 2])
def test_a_sidecar_temperature_of_zero_is_one_greedy_draw_repeated(
    tmp_path: Path, seed: int
) -> None:
    _greedy_pool(tmp_path, seed, 0.0)
    got = route_rows(tmp_path, MODEL)
    assert got.route == "repeated-draws"
    assert "repeated_draws" in finding_kinds(got)


def test_a_sidecar_temperature_above_zero_says_no_greedy_draw(tmp_path: Path) -> None:
    _greedy_pool(tmp_path, 1, 1.0)
    assert route_rows(tmp_path, MODEL).route != "repeated-draws"


SETTINGS_NAMES = [
    *("config.yaml", "run_config.json", "config.json", "args.json"),
    *("generation_config.json", "results.json", "eval_config.yaml"),
]


def _model_pool(folder: Path, seed: int) -> None:
    rng = random.Random(seed)
    rows = []
    for t in range(300):
        p = rng.uniform(0.1, 0.9)
        for j in range(8):
            reply = f"reply {t}-{j}-{rng.random()}"
            rows.append(
                {"task_id": f"t{t}", "reward": float(rng.random() < p), "completion": reply}
            )
            rows[-1]["truncated"] = False
    (folder / "rollouts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(SETTINGS_NAMES),
    key=st.sampled_from(["model", "model_name", "model_name_or_path"]),
    seed=st.integers(0, 1000),
)
def test_a_model_in_a_settings_file_leaves_the_verdict_provisional(
    tmp_path: Path, name: str, key: str, seed: int
) -> None:
    """A generic settings file's model may be a judge's or a base model's: never the rows'
    model (check 6 stays unknown), but one that names another model than --model's leaves
    the verdict provisional (``model_in_path``), as a path naming one does."""
    folder = tmp_path / f"{name}-{key}-{seed}"
    folder.mkdir()
    _model_pool(folder, seed)
    _settings(folder, name, {key: "gpt-4o-2024-08-06", "temperature": 1.0})
    got = route_rows(folder, MODEL)
    assert got.inputs["sources"]["model"] == "not recorded"
    assert got.route == "grpo"
    assert got.provisional and "model_in_path" in finding_kinds(got)


@pytest.mark.parametrize(
    "side",
    [
        ("metadata.json", {"model": MODEL, "env_id": "math"}),  # a known tool's: sure
        ("config.yaml", {"model": MODEL}),  # names the model trained: nothing moves
        ("config.json", {"_name_or_path": "gpt2", "architectures": ["GPT2LMHeadModel"]}),
    ],
)
def test_a_settings_model_that_agrees_or_a_model_folder_stays_firm(
    tmp_path: Path, side: tuple[str, dict]
) -> None:
    _model_pool(tmp_path, 7)
    _settings(tmp_path, *side)
    got = route_rows(tmp_path, MODEL)
    assert got.route == "grpo" and not got.provisional
    if side[0] != "metadata.json":
        assert got.inputs["sources"]["model"] == "not recorded"
