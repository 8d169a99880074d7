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


@dataclass(frozen=True)
class Chat:
    """A chat template's pieces, each message rendered alone (``apply_chat_template([m])``)."""

    system: Callable[[str], str]
    user: Callable[[str], str]  # without the generation prompt
    prompt: str  # the generation prompt (add_generation_prompt=True)
    eos: str


CHATS = {
    "chatml": Chat(
        lambda s: f"<|im_start|>system\n{s}<|im_end|>\n",
        lambda u: f"<|im_start|>user\n{u}<|im_end|>\n",
        "<|im_start|>assistant\n",
        "<|im_end|>",
    ),
    "llama3": Chat(
        lambda s: f"<|start_header_id|>system<|end_header_id|>\n\n{s}<|eot_id|>",
        lambda u: f"<|start_header_id|>user<|end_header_id|>\n\n{u}<|eot_id|>",
        "<|start_header_id|>assistant<|end_header_id|>\n\n",
        "<|eot_id|>",
    ),
    "granite": Chat(
        lambda s: f"<|start_of_role|>system<|end_of_role|>{s}<|end_of_text|>\n",
        lambda u: f"<|start_of_role|>user<|end_of_role|>{u}<|end_of_text|>\n",
        "<|start_of_role|>assistant<|end_of_role|>",
        "<|end_of_text|>",
    ),
    "command-r": Chat(
        lambda s: f"<BOS_TOKEN><|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>{s}<|END_OF_TURN_TOKEN|>",
        lambda u: f"<|START_OF_TURN_TOKEN|><|USER_TOKEN|>{u}<|END_OF_TURN_TOKEN|>",
        "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
        "<|END_OF_TURN_TOKEN|>",
    ),
    "phi-4": Chat(
        lambda s: f"<|im_start|>system<|im_sep|>{s}<|im_end|>",
        lambda u: f"<|im_start|>user<|im_sep|>{u}<|im_end|>",
        "<|im_start|>assistant<|im_sep|>",
        "<|im_end|>",
    ),
    "vicuna": Chat(lambda s: f"{s}\n\n", lambda u: f"USER: {u} ", "ASSISTANT:", "</s>"),
}


def _earlier_turns(chat: Chat, layout: str, shots: list[tuple[str, str]]) -> list[str]:
    """A prompt's earlier turns: each question templated with the generation prompt and its
    answer as text (``turns``), or the question alone and the answer as an assistant message
    with its header (``headers``)."""
    out: list[str] = []
    for question, answer in shots:
        if layout == "turns":
            out += [chat.user(question) + chat.prompt, f"{answer}{chat.eos}"]
        else:
            out += [chat.user(question), f"{chat.prompt}{answer}{chat.eos}"]
    return out


def _history_dump(
    rng: random.Random, chat: Chat, layout: str, ks: tuple[int, int], multi: bool
) -> tuple[list[dict[str, Any]], list[int]]:
    """A step whose prompts hold earlier turns before the question: few-shot examples one of
    two sets shares, or a dialogue's history of its own length; then k rollouts each, a
    reply, an observation or none, more turns where ``multi``."""
    sets = [[(f"Example {s}.{n}?", f"{s * n}") for n in range(rng.randint(1, 3))] for s in (2, 3)]
    rows: list[dict[str, Any]] = []
    truth: list[int] = []
    for t in range(rng.randint(4, 12)):
        if layout == "history":
            turns = [(f"Hi {n}, help me?", "Of course!") for n in range(rng.randint(0, 3))]
            earlier = _earlier_turns(chat, "turns", turns)
        else:
            earlier = _earlier_turns(chat, layout, rng.choice(sets))
        prompt = [chat.system("Solve it."), *earlier, chat.user(f"Puzzle {t}?") + chat.prompt]
        p = rng.random()
        for _ in range(rng.randint(*ks)):
            passed = rng.random() < p
            content = list(prompt)
            for turn in range(rng.randint(1, 3) if multi else 1):
                content.append(f"<action>{rng.choice('udlr')}</action>{chat.eos}")
                if multi and turn < 2 and rng.random() < 0.5:
                    content.append(chat.user(f"State {rng.randint(0, 99)}") + chat.prompt)
            if rng.random() < 0.5:
                content.append(f"Environment: {'correct' if passed else 'incorrect'}")
            rows.append({"content": content, "rewards": float(passed), "input_lengths": 9})
            truth.append(t)
    return rows, truth


@pytest.mark.parametrize("chat", sorted(CHATS))
@pytest.mark.parametrize("layout", ["turns", "headers", "history"])
@pytest.mark.parametrize("multi", [False, True])
@pytest.mark.parametrize("seed", range(2))
def test_a_prompt_holding_earlier_turns_ends_before_the_first_generated_reply(
    tmp_path: Path, chat: str, layout: str, multi: bool, seed: int
) -> None:
    """Few-shot examples and a dialogue's history are marked like the question: a key at the
    first mark read every rollout as one task; the rows say which mark ends the prompt."""
    rng = random.Random(f"{chat}{layout}{multi}{seed}")
    rows, truth = _history_dump(rng, CHATS[chat], layout, (2, 8), multi)
    frame, got = _read(_write(tmp_path / "train_data_step1.jsonl", rows))
    assert _partition(frame["task_id"].to_list()) == _partition(truth)
    assert got.facts.prompt_unsure is None


@pytest.mark.parametrize("layout", ["turns", "headers"])
@pytest.mark.parametrize("seed", range(3))
def test_shared_examples_before_prompts_drawn_once_each_are_not_one_task(
    tmp_path: Path, layout: str, seed: int
) -> None:
    """k = 1 on every prompt, the examples every row's: one task of the whole dump is wrong."""
    rng = random.Random(seed)
    chat = CHATS["chatml"]
    shots = [("What is 2+2?", "4"), ("What is 3*3?", "9")]
    rows, truth = [], []
    for t in range(rng.randint(5, 40)):
        earlier = _earlier_turns(chat, layout, shots)
        prompt = [chat.system("Solve it."), *earlier, chat.user(f"What is {t}^2?") + chat.prompt]
        rows.append({"content": [*prompt, f"{t * t}{chat.eos}"], "rewards": 1.0})
        rows[-1]["input_lengths"] = 9
        truth.append(t)
    frame, _ = _read(_write(tmp_path / "train_data_step1.jsonl", rows))
    assert _partition(frame["task_id"].to_list()) == _partition(truth)


@pytest.mark.parametrize("observed", [False, True])
@pytest.mark.parametrize("ks", [(2, 8), (1, 8)])
@pytest.mark.parametrize("seed", range(3))
def test_an_unmarked_prompt_end_the_rows_bear_out_is_not_a_guess(
    tmp_path: Path, observed: bool, ks: tuple[int, int], seed: int
) -> None:
    """A template no reader knows, the reply each rollout's last entry and every prompt drawn
    k > 1 times: the shared prefix is the prompt on every row, and the key is sure. An
    observation after the reply, or a prompt drawn once, leaves it a guess."""
    rng = random.Random(seed)
    rows, truth = [], []
    for t in range(rng.randint(4, 12)):
        prompt = [UNKNOWN.system("Be brief."), UNKNOWN.user(f"Puzzle {t}")]
        for n in range(rng.randint(*ks)):
            extra = ["Environment: done"] if observed and rng.random() < 0.5 else []
            reply = f"<action>{n}{rng.random()}</action>"
            rows.append({"content": [*prompt, reply, *extra], "rewards": 1.0, "input_lengths": 9})
            truth.append(t)
    frame, got = _read(_write(tmp_path / "train_data_step1.jsonl", rows))
    assert _partition(frame["task_id"].to_list()) == _partition(truth)
    alone = any(truth.count(t) == 1 for t in set(truth[:-1]) - {truth[-1]})
    sure = not any(len(r["content"]) == 4 for r in rows) and not alone
    assert (got.facts.prompt_unsure is None) is sure
