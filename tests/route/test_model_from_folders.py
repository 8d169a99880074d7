"""A model read from a folder's name (OpenCompass' results/<abbr>/, LiveCodeBench's
output/<model_repr>/, OpenPipe ART's models/<name>/) is the name a config or a run gave it
(``qwen2.5-7b-instruct-hf``, ``agent-001``), not the writer's own record: check 6 reads it,
and where it names another model than ``--model``'s the verdict SFT rests on what the folder
means, so it is provisional (``model_unsure``). A folder naming ``--model``'s model as such
tools spell it (the engine it was served by, ``3_1`` for ``3.1``) is the model: on-policy.

And the spellings themselves: a name and the same name with the engine that served or
converted it (``-hf``, ``-vllm``, ``-turbomind``, ``-lmdeploy``, ``-sglang``) or a version's
``_`` for its ``.`` name one model; a name and its ``-Base``, its quantized copy, or another
size name another."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rows_files import finding_kinds
from whilecli.io.modelid import same_model
from whilecli.route import run_route
from whilecli.route.model import Route

TRAINED = "Qwen/Qwen2.5-7B-Instruct"
#: The trained model as OpenCompass, LiveCodeBench and vLLM-served configs name it.
SAME = ("qwen2.5-7b-instruct-hf", "qwen2_5-7b-instruct-vllm", "Qwen2.5-7B-Instruct")
#: Names a config gives another model.
OTHER = ("llama-3_1-8b-instruct-hf", "qwen2.5-72b-instruct-turbomind")
#: A run's own name, which names no model (no organisation, size or family).
LABELS = ("agent-001", "email-agent", "run_7")


def _tasks(rng: random.Random, n: int = 120) -> list[list[bool]]:
    return [[rng.random() < p for _ in range(4)] for p in (rng.random() for _ in range(n))]


def _opencompass(root: Path, folder: str, tasks: list[list[bool]]) -> Path:
    work = root / "20250101_000000"
    (work / "predictions" / folder).mkdir(parents=True)
    (work / "results" / folder).mkdir(parents=True)
    for run in range(4):
        details = {
            str(t): {"prompt": f"Q{t}", "predictions": "5", "references": "5", "correct": g[run]}
            for t, g in enumerate(tasks)
        }
        doc = {"accuracy": 50.0, "details": details}
        (work / "results" / folder / f"gsm8k-run{run}.json").write_text(json.dumps(doc))
    return work


def _livecodebench(root: Path, folder: str, tasks: list[list[bool]]) -> Path:
    out = root / "output" / folder
    out.mkdir(parents=True)
    doc = [
        {
            "question_id": f"lcb{t}",
            "question_content": f"Write program {t}.",
            "code_list": [f"print({t}, {j})" for j in range(len(g))],
            "graded_list": g,
            "pass@1": sum(g) / len(g),
        }
        for t, g in enumerate(tasks)
    ]
    path = out / "Scenario.codegeneration_4_0.2_eval_all.json"
    path.write_text(json.dumps(doc))
    return path


def _art(root: Path, folder: str, tasks: list[list[bool]]) -> Path:
    out = root / ".art" / "proj" / "models" / folder / "trajectories" / "train"
    out.mkdir(parents=True)
    lines = []
    for t, grades in enumerate(tasks):
        group = [
            {
                "reward": float(g),
                "messages_and_choices": [
                    {"role": "user", "content": f"Find email {t}"},
                    {
                        "finish_reason": "stop",
                        "index": 0,
                        "message": {"role": "assistant", "content": f"reply {t}.{j}"},
                    },
                ],
            }
            for j, g in enumerate(grades)
        ]
        lines.append(json.dumps({"trajectories": group}))
    path = out / "0003.jsonl"
    path.write_text("\n".join(lines))
    return path


LAYOUTS: dict[str, Any] = {"opencompass": _opencompass, "livecodebench": _livecodebench}
LAYOUTS["art"] = _art


def _route(tmp_path: Path, layout: str, folder: str) -> Route:
    tasks = _tasks(random.Random(7))
    path = LAYOUTS[layout](tmp_path, folder, tasks)
    route = run_route(str(path), model=TRAINED)
    assert isinstance(route, Route)
    return route


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("folder", OTHER)
def test_another_model_named_by_a_folder_is_provisional(
    tmp_path: Path, layout: str, folder: str
) -> None:
    route = _route(tmp_path, layout, folder)
    assert (route.method, route.provisional) == ("sft", True)
    assert "model_unsure" in finding_kinds(route)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("folder", LABELS)
def test_a_run_named_by_a_folder_leaves_check_6_unknown(
    tmp_path: Path, layout: str, folder: str
) -> None:
    """ART's ``models/agent-001/`` names the run, not the model it trains: whether
    ``--model``'s model wrote the rows is unknown, never another model's (a SFT)."""
    route = _route(tmp_path, layout, folder)
    on_policy = next(c for c in route.checks if c.key == "on_policy")
    assert on_policy.status.value == "unknown", on_policy.why
    assert route.method != "sft"


@pytest.mark.parametrize("layout", ["opencompass", "livecodebench"])
@pytest.mark.parametrize("folder", SAME)
def test_the_trained_model_named_by_a_folder_is_on_policy(
    tmp_path: Path, layout: str, folder: str
) -> None:
    route = _route(tmp_path, layout, folder)
    on_policy = next(c for c in route.checks if c.key == "on_policy")
    assert on_policy.status.value == "pass", route.why
    assert route.method != "sft"


BASES = ("Qwen2.5-7B-Instruct", "Llama-3.1-8B-Instruct", "internlm2.5-7b-chat", "Qwen3-0.6B")
SERVED = ("", "-hf", "-vllm", "-turbomind", "-lmdeploy", "-sglang", "_hf", "-HF")


@given(
    base=st.sampled_from(BASES),
    served=st.sampled_from(SERVED),
    underscore=st.booleans(),
    org=st.sampled_from(("", "org/")),
    lower=st.booleans(),
)
def test_the_engine_and_a_version_underscore_name_no_other_model(
    base: str, served: str, underscore: bool, org: str, lower: bool
) -> None:
    written = base.replace(".", "_") if underscore else base
    written = org + written + served
    written = written.lower() if lower else written
    assert same_model(written, base)
    for other in (f"{base}-Base", f"{base}-AWQ", base.replace("7B", "14B").replace("8B", "70B")):
        if other != base:
            assert not same_model(written, other), other
