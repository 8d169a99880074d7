"""NeMo-RL's dumps, from a seeded simulator of what its source writes, with a known truth.

GRPO training (``train_data_step<N>.jsonl``, ``nemo_rl/algorithms/grpo.py``): ``content`` is
every message of a rollout's ``message_log`` as text, no roles. Each message is templated on
its own (``nemo_rl/data/processors.py``): a system message without the generation prompt, the
user's with it; the reply is the generated text; ``run_multi_turn_rollout``
(``nemo_rl/experience/rollouts.py``) appends the environment's observation after every reply
(the math environment's ``"Environment: correct"``, a puzzle's next state as a templated user
turn), one to four turns. The task is the messages before the FIRST reply: a key of all but
the last message read every rollout as its own task (k = 1, a firm FlashReinforce on a
grouped pool). Where no entry marks the prompt's end (a template whose markers are not
known), the key is the entries the rows share, and the verdict provisional.

Standalone evaluation (``nemo_rl/evals/eval.py``, ``_save_evaluation_data_to_json``):
``evaluation_data.json`` = ``{"evaluation_data": [{prompt, response, reward, message_log,
extra_env_info, sample_index}]}`` beside ``config.json`` (``model_name``,
``num_tests_per_prompt``): the rows file, which a folder refused as a sidecar.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from rows_files import finding_kinds, route_rows
from whilecli.errors import InputError
from whilecli.io.read import read_rows


@dataclass(frozen=True)
class Template:
    """How one chat template renders a message alone (``apply_chat_template([m])``)."""

    system: Callable[[str], str]
    user: Callable[[str], str]  # with the generation prompt (add_generation_prompt=True)
    eos: str


TEMPLATES = {
    "chatml": Template(
        lambda s: f"<|im_start|>system\n{s}<|im_end|>\n",
        lambda u: f"<|im_start|>user\n{u}<|im_end|>\n<|im_start|>assistant\n",
        "<|im_end|>",
    ),
    "qwen3-no-think": Template(
        lambda s: f"<|im_start|>system\n{s}<|im_end|>\n",
        lambda u: (
            f"<|im_start|>user\n{u}<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
        ),
        "<|im_end|>",
    ),
    "llama3": Template(
        lambda s: f"<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n{s}<|eot_id|>",
        lambda u: (
            f"<|start_header_id|>user<|end_header_id|>\n\n{u}<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n"
        ),
        "<|eot_id|>",
    ),
    "gemma": Template(
        lambda s: f"<start_of_turn>user\n{s}\n",
        lambda u: f"<start_of_turn>user\n{u}<end_of_turn>\n<start_of_turn>model\n",
        "<end_of_turn>",
    ),
    "deepseek-r1": Template(
        lambda s: f"<｜begin▁of▁sentence｜>{s}",
        lambda u: f"<｜User｜>{u}<｜Assistant｜><think>\n",
        "<｜end▁of▁sentence｜>",
    ),
}
#: A template whose generation prompt no reader knows: the prompt's end is a guess.
UNKNOWN = Template(lambda s: f"[[sys]]{s}[[/sys]]", lambda u: f"[[usr]]{u}[[/usr]][[bot]]", "")


def _train_dump(
    rng: random.Random, template: Template, system: bool, multi: bool, ks: tuple[int, int]
) -> tuple[list[dict[str, Any]], list[int]]:
    """A step's rows (prompts of k in ``ks`` draws each, side by side) and each row's truth
    task. Every rollout ends with the environment's observation, or (a neighbour) its reply."""
    rows: list[dict[str, Any]] = []
    truth: list[int] = []
    for t in range(rng.randint(4, 12)):
        p = rng.random()
        prompt = [template.user(f"Solve puzzle {t}: reach state {rng.randint(0, 10**6)}.")]
        if system:
            prompt.insert(0, template.system("You are a helpful assistant."))
        for _ in range(rng.randint(*ks)):
            passed = rng.random() < p
            content = list(prompt)
            turns = rng.randint(1, 4) if multi else 1
            for turn in range(turns):
                # a short reply two draws may share: the key must not read it
                content.append(f"<action>{rng.choice('udlr')}</action>{template.eos}")
                last = turn == turns - 1
                if multi and not last:
                    content.append(template.user(f"New state {rng.randint(0, 99)} after move"))
                elif rng.random() < 0.8:
                    content.append(f"Environment: {'correct' if passed else 'incorrect'}")
            tokens = rng.randint(4, 9)
            rows.append(
                {
                    "content": content,
                    "rewards": float(passed),
                    "generation_logprobs": [0.0] * 3 + [-rng.random() for _ in range(tokens)],
                    "prev_logprobs": [0.0] * 3 + [-rng.random() for _ in range(tokens)],
                    "input_lengths": 3 + tokens,
                }
            )
            truth.append(t)
    return rows, truth


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path


def _partition(ids: list[Any]) -> set[frozenset[int]]:
    """The rows (by index) each key holds."""
    groups: dict[Any, set[int]] = {}
    for i, key in enumerate(ids):
        groups.setdefault(key, set()).add(i)
    return {frozenset(g) for g in groups.values()}


def _read(path: Path) -> tuple[pl.DataFrame, Any]:
    got = read_rows([str(path)])
    return got.frame.collect(), got


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@pytest.mark.parametrize("system", [False, True])
@pytest.mark.parametrize("multi", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_a_rollout_is_keyed_by_the_messages_before_its_first_reply(
    tmp_path: Path, name: str, system: bool, multi: bool, seed: int
) -> None:
    rng = random.Random(f"{name}{system}{multi}{seed}")
    rows, truth = _train_dump(rng, TEMPLATES[name], system, multi, (1, 8))
    frame, got = _read(_write(tmp_path / "logs" / "train_data_step2.jsonl", rows))
    assert frame["reward"].to_list() == [r["rewards"] for r in rows]  # read in file order
    assert _partition(frame["task_id"].to_list()) == _partition(truth)
    assert got.facts.prompt_unsure is None


@pytest.mark.parametrize("system", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_a_reply_templated_as_a_message_ends_the_prompt(
    tmp_path: Path, system: bool, seed: int
) -> None:
    """A neighbour layout: each turn templated with its header, the reply's included."""
    rng = random.Random(seed)
    rows, truth = _train_dump(rng, TEMPLATES["chatml"], system, True, (1, 6))
    for row in rows:
        row["content"] = [
            e.removesuffix("<|im_start|>assistant\n")
            if e.startswith("<|im_start|>")
            else f"<|im_start|>assistant\n{e}"
            if e.startswith("<action>")
            else e
            for e in row["content"]
        ]
    frame, got = _read(_write(tmp_path / "train_data_step1.jsonl", rows))
    assert _partition(frame["task_id"].to_list()) == _partition(truth)
    assert got.facts.prompt_unsure is None


@pytest.mark.parametrize("system", [False, True])
@pytest.mark.parametrize("multi", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_an_unmarked_prompt_end_is_guessed_from_the_shared_entries_and_said(
    tmp_path: Path, system: bool, multi: bool, seed: int
) -> None:
    rng = random.Random(seed)
    rows, truth = _train_dump(rng, UNKNOWN, system, multi, (4, 8))
    frame, got = _read(_write(tmp_path / "train_data_step1.jsonl", rows))
    assert _partition(frame["task_id"].to_list()) == _partition(truth)
    assert got.facts.prompt_unsure == "content"
    assert "guessed" in got.sources["task_id"]


def test_a_guessed_prompt_end_makes_the_verdict_provisional(tmp_path: Path) -> None:
    """Firm where the template marks the prompt's end, provisional where it was guessed."""
    rng = random.Random(5)
    for template, guessed in ((TEMPLATES["chatml"], False), (UNKNOWN, True)):
        rows: list[dict[str, Any]] = []
        while len({r["content"][0] for r in rows}) < 150:
            more, _ = _train_dump(rng, template, False, False, (8, 8))
            rows += more
        got = route_rows(_write(tmp_path / f"{guessed}" / "train_data_step1.jsonl", rows), "m")
        assert got.route == "grpo"
        assert ("prompt_end_guessed" in finding_kinds(got)) is guessed
        if guessed:
            assert got.provisional


def _eval_run(
    rng: random.Random, folder: Path, model: str | None
) -> tuple[Path, list[int], list[float]]:
    """``evaluation_data.json`` (and ``config.json`` where ``model``) as eval.py saves them."""
    prompts, k = rng.randint(3, 15), rng.choice([1, 2, 4, 8])
    data, truth = [], []
    for t in range(prompts):
        prompt = TEMPLATES["chatml"].user(f"AIME problem {t}: find x.")
        p = rng.random()
        for i in range(k):
            reply = f"draw {i} \\boxed{{{rng.randint(0, 9)}}}"
            log = [{"role": "user", "content": prompt}, {"role": "assistant", "content": reply}]
            data.append(
                {
                    "prompt": prompt,
                    "response": reply,
                    "reward": float(rng.random() < p),
                    "message_log": str(log),
                    "extra_env_info": str({"ground_truth": str(t)}),
                    "sample_index": i,
                }
            )
            truth.append(t)
    folder.mkdir(parents=True)
    (folder / "evaluation_data.json").write_text(json.dumps({"evaluation_data": data}, indent=2))
    if model is not None:
        config = {"model_name": model, "dataset_name": "aime2024", "num_tests_per_prompt": k}
        (folder / "config.json").write_text(json.dumps(config, indent=2))
    return folder, truth, [d["reward"] for d in data]


@pytest.mark.parametrize("model", ["Qwen/Qwen2.5-Math-1.5B-Instruct", None])
@pytest.mark.parametrize("named", ["folder", "file"])
@pytest.mark.parametrize("seed", range(4))
def test_an_evaluation_data_file_is_read_as_draws_of_its_prompts(
    tmp_path: Path, model: str | None, named: str, seed: int
) -> None:
    folder, truth, rewards = _eval_run(random.Random(seed), tmp_path / "results" / "aime", model)
    path = folder if named == "folder" else folder / "evaluation_data.json"
    frame, got = _read(path)
    assert frame["reward"].to_list() == rewards
    assert _partition(frame["task_id"].to_list()) == _partition(truth)
    assert set(frame["model"].to_list()) == {model}
    assert got.sources["model"].startswith("config.json" if model else "not recorded")


def test_a_folder_without_rows_names_the_document_it_could_not_read(tmp_path: Path) -> None:
    """A JSON document with no row list, beside a run's settings, is refused as itself,
    never as another tool's sidecar."""
    (tmp_path / "config.json").write_text(json.dumps({"model_name": "m", "num_tests": 4}))
    (tmp_path / "scores.json").write_text(json.dumps({"evaluation": [{"a": 1}], "n": {"b": 2}}))
    with pytest.raises(InputError) as err:
        read_rows([str(tmp_path)])
    assert "scores.json" in str(err.value) and "sidecar" not in str(err.value)
    (tmp_path / "scores.json").unlink()
    with pytest.raises(InputError, match="sidecar"):
        read_rows([str(tmp_path)])
