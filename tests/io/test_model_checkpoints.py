"""A training checkpoint is a step of a run, not the released model: a folder named after the
model with a step under it (``/ckpt/Qwen3-8B/checkpoint-500``, ``ckpt-500``, ``step_200``,
``iter_0000200``, verl's ``global_step_100/actor/huggingface``) may hold the model trained
500 steps, or the model's own name for the run: beside the release, unsure (check 6 unknown,
provisional), never the model; two steps are two versions of the run; the same checkpoint
spelled twice is one.

The generator lays a checkpoint out as trainers write them (root, run folder, step folder,
the folders inside); the truth is the step drawn and the run's model."""

from __future__ import annotations

import json
import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.io.modelid import OTHER, SAME, UNSURE, same_model, weights_relation, without_step
from whilecli.route import run_route
from whilecli.route.model import Route

MODELS = (("Qwen/Qwen3-8B", "Qwen3-8B", "Qwen3-14B"), ("meta-llama/Llama-3.1-8B", "Llama-3.1-8B", "Llama-3.1-70B"))  # fmt: skip
ROOTS = ("/ckpt/", "/home/u/runs/", "./out/", "~/train/", "C:\\runs\\")
LAYOUTS = (
    "checkpoint-{n}",
    "ckpt-{n}",
    "step_{n}",
    "iter_{n:07d}",
    "global_step_{n}",
    "global_step_{n}/actor/huggingface",
    "global_step{n}/actor",
)


def _checkpoint(root: str, folder: str, layout: str, step: int) -> str:
    path = f"{root}{folder}/{layout.format(n=step)}"
    return path.replace("/", "\\") if root.startswith("C:") else path


@settings(max_examples=300)
@given(
    model=st.sampled_from(MODELS),
    root=st.sampled_from(ROOTS),
    layout=st.sampled_from(LAYOUTS),
    step=st.integers(1, 10**6),
    other=st.integers(1, 10**6),
)
def test_a_checkpoint_is_not_the_release(
    model: tuple[str, str, str], root: str, layout: str, step: int, other: int
) -> None:
    hub, folder, bigger = model
    written = _checkpoint(root, folder, layout, step)
    assert not same_model(written, hub), written
    assert weights_relation(written, hub) == UNSURE, written
    assert weights_relation(hub, written) == UNSURE, written
    assert same_model(without_step(written), hub), written
    assert weights_relation(written, _checkpoint(ROOTS[0], folder, LAYOUTS[0], step)) == SAME
    later = _checkpoint(root, folder, layout, other)
    assert (weights_relation(written, later) == SAME) == (step == other), (written, later)
    assert weights_relation(_checkpoint(root, bigger, layout, step), hub) == OTHER, written


def _rows(models: list[str]) -> list[dict[str, object]]:
    rng = random.Random(3)
    rows = []
    for task in range(120):
        rate = rng.random()
        for draw in range(8):
            rows.append(
                {
                    "task_id": f"t{task}",
                    "reward": float(rng.random() < rate),
                    "completion": f"reply {task}.{draw}",
                    "finish_reason": "stop",
                    "model": models[draw % len(models)],
                }
            )
    return rows


@settings(max_examples=6, deadline=None)
@given(layout=st.sampled_from(LAYOUTS), half=st.booleans())
def test_rows_from_a_checkpoint_are_not_on_policy_for_the_release(
    tmp_path_factory: object, layout: str, half: bool
) -> None:
    """Rows a checkpoint wrote, alone or beside rows the release wrote, leave check 6 unknown
    (the verdict provisional) where ``--model`` names the release; where it names the
    checkpoint's step, they are that copy's."""
    ckpt = _checkpoint("/ckpt/", "Qwen3-8B", layout, 500)
    path = Path(str(tmp_path_factory.mktemp("ckpt"))) / "rows.jsonl"  # type: ignore[attr-defined]
    rows = _rows(["Qwen/Qwen3-8B", ckpt] if half else [ckpt])
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    route = run_route(str(path), model="Qwen/Qwen3-8B")
    assert isinstance(route, Route)
    on_policy = next(c for c in route.checks if c.key == "on_policy")
    assert on_policy.status.value == "unknown", on_policy.why
    assert route.provisional
    mine = run_route(str(path), model="Qwen/Qwen3-8B@500")
    assert isinstance(mine, Route)
    check = next(c for c in mine.checks if c.key == "on_policy")
    assert check.status.value == "pass" or half, check.why
