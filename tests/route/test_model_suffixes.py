"""A model name's ``:suffix`` and its stated step (:mod:`whilecli.io.modelid`).

A Hub revision (``Qwen/Qwen3-8B:main``) and a Hub id whose ``/`` a script wrote ``_``
(``Qwen_Qwen3-8B``) name the model itself; a provider's routing variant (OpenRouter's
``qwen/qwen3-8b:free``) names it served by a hosted provider at a precision the name does
not state (unsure beside it, never another model); Ollama's size and precision tags keep
their meaning. A step stated at
the end of a checkpoint's name (``my-org/qwen3-8b-grpo-checkpoint-100``, ``…-step-200``, a W&B
alias ``qwen3-8b-grpo:v3``) is that run's version, as a local checkpoint folder's is: the
route reads the rows as an older copy (Async), never as another model (SFT).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.io.modelid import OTHER, UNSURE, model_identity, weights_relation, without_step
from whilecli.route import run_route
from whilecli.route.identity import same_model, same_weights

ORGS = st.sampled_from(["Qwen", "meta-llama", "my-org", "allenai"])
FAMILIES = st.sampled_from(["Qwen3", "Llama-3.1", "OLMo-2", "gemma-3"])
SIZES = st.sampled_from(["0.6", "1.7", "8", "14", "32", "70"])
ROUTING = st.sampled_from(["free", "nitro", "beta", "extended", "thinking", "floor", "online"])
REVISIONS = st.sampled_from(["latest", "main", "master"])
WORDS = st.sampled_from(["checkpoint-", "step-", "step_", "global_step", "global_step_", "ckpt-"])
STEPS = st.integers(0, 10**6)


@st.composite
def names(draw: st.DrawFn) -> tuple[str, str, float]:
    """(organisation, name, size in billions)."""
    size = draw(SIZES)
    return (
        draw(ORGS),
        f"{draw(FAMILIES)}-{size}B{draw(st.sampled_from(['', '-Instruct']))}",
        float(size),
    )


@settings(max_examples=80)
@given(
    model=names(),
    revision=REVISIONS,
    routing=ROUTING,
    sha=st.text("0123456789abcdef", min_size=7, max_size=40),
)
def test_a_revision_names_the_model_and_a_routing_variant_its_hosted_build(
    model: tuple[str, str, float], revision: str, routing: str, sha: str
) -> None:
    """``org/name:main`` (and ``:latest``, a commit) is the model; ``org/name:free`` (and
    ``openrouter/org/name:nitro``) is the model served by a hosted provider at a precision
    the name does not state: unsure beside it, never another model. Another size or
    ``-Base`` stays another."""
    org, name, size = model
    hub = f"{org}/{name}"
    for spelled in (f"{hub}:{revision}", f"{hub}:{sha}"):
        assert same_model(spelled, hub), spelled
    for spelled in (f"{hub}:{routing}", f"openrouter/{hub.lower()}:{routing}"):
        assert weights_relation(spelled, hub) == UNSURE, spelled
    for spelled in (f"{hub}:{revision}", f"{hub}:{routing}", f"{hub}:{sha}"):
        assert model_identity(spelled).size_b == size
        assert model_identity(spelled).step is None
    for tag in (revision, routing):
        assert weights_relation(f"{org}/{name}-Base:{tag}", hub) == OTHER


@settings(max_examples=60)
@given(model=names())
def test_an_underscore_org_join_is_the_hub_id(model: tuple[str, str, float]) -> None:
    """``Qwen_Qwen3-8B`` and ``meta-llama_Llama-3.1-8B`` are the Hub id written without a
    ``/``; a run's prefix (``grpo_Qwen3-8B``) and a name's own ``_`` are not an organisation."""
    org, name, _ = model
    family = name.split("-")[0]
    hub_org = {"Qwen3": "Qwen", "Llama": "meta-llama", "OLMo": "allenai", "gemma": "google"}
    for spelled in (f"{hub_org[family]}_{name}", f"{hub_org[family].lower()}_{name}"):
        assert same_model(spelled, f"{org}/{name}"), spelled
    assert not same_model(f"grpo_{name}", name)
    assert not same_model(f"my_run_{name}", name)
    assert not same_model(f"{family}-1B_on_{name}", name)


@settings(max_examples=60)
@given(
    model=names(),
    quant=st.sampled_from(["q4_K_M", "Q8_0", "fp16"]),
)
def test_ollama_tags_keep_their_meaning(model: tuple[str, str, float], quant: str) -> None:
    """``qwen3:8b-instruct`` is Ollama's build of ``Qwen3-8B-Instruct`` (its weights at
    another precision), ``qwen3:8b`` may be ``Qwen3-8B``'s (a chat build beside a name that
    states no variant: unsure); ``llama:3.1-8b`` (no size first) is ``Llama-3.1-8B``;
    ``:8b-q4_K_M`` is the weights at another precision; a ``v7`` in a name
    (``DeepSeek-V3``, ``Qwen3-8B-v7``) is the name's, not a step."""
    from whilecli.io.modelid import UNSURE, weights_relation

    org, name, _ = model
    family, _, rest = name.partition("-")
    tagged = f"{family.lower()}:{rest.lower()}"
    copy = f"{tagged}-{quant}"
    if family == "Qwen3" and not name.endswith("-Instruct"):
        assert weights_relation(tagged, f"{org}/{name}") == UNSURE
        assert weights_relation(copy, name) == UNSURE
    elif family == "Qwen3":
        assert same_weights(tagged, f"{org}/{name}") and not same_model(tagged, name)
        assert same_weights(copy, name) and not same_model(copy, name)
    else:
        assert same_model(tagged, f"{org}/{name}")
        assert same_weights(copy, name) and not same_model(copy, name)
    assert model_identity(f"{name}-v7").step is None and not same_model(f"{name}-v7", name)


@settings(max_examples=80)
@given(model=names(), word=WORDS, step=STEPS, sep=st.sampled_from(["-", "_"]))
def test_a_step_at_the_end_of_a_name_is_its_version(
    model: tuple[str, str, float], word: str, step: int, sep: str
) -> None:
    """``org/name-grpo-checkpoint-100`` is ``org/name-grpo`` at step 100; so is the W&B
    alias ``name-grpo:v100`` and a local folder named so."""
    org, name, size = model
    run = f"{name}{sep}grpo"
    for spelled in (f"{org}/{run}{sep}{word}{step}", f"{run}:v{step}", f"/ckpt/{run}-{word}{step}"):
        found = model_identity(spelled)
        assert (found.key, found.step, found.size_b) == (run.lower(), step, size), spelled
        # a step of the run, not the run's name: the run's only without its step
        assert not same_model(spelled, f"{org}/{run}")
        assert same_model(without_step(spelled), f"{org}/{run}")


def _write(path: Path, models: list[str], seed: int) -> None:
    rng = random.Random(seed)
    lines = []
    for t in range(60):
        p = rng.uniform(0.2, 0.8)
        for d in range(8):
            model = models[(t * 8 + d) * len(models) // 480]
            row = {"task_id": f"t{t}", "reward": float(rng.random() < p), "model": model}
            lines.append(json.dumps({**row, "truncated": False, "completion": f"r{t}-{d}"}))
    path.write_text("\n".join(lines) + "\n")


CHECKPOINTS = [
    ("my-org/qwen3-8b-grpo-checkpoint-{}", "my-org/qwen3-8b-grpo-checkpoint-{}"),
    ("my-org/qwen3-8b-grpo-step-{}", "my-org/qwen3-8b-grpo-step-{}"),
    ("qwen3-8b-grpo:v{}", "qwen3-8b-grpo:v{}"),
    ("my-org/Qwen3-8B-ckpt-{}", "Qwen/Qwen3-8B@{}"),
]


@pytest.mark.parametrize(("rows", "option"), CHECKPOINTS)
@pytest.mark.parametrize("mixed", [False, True])
@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(old=st.integers(1, 500), ahead=st.integers(1, 500), seed=st.integers(0, 99))
def test_an_older_named_checkpoint_routes_async(
    tmp_path: Path, rows: str, option: str, mixed: bool, old: int, ahead: int, seed: int
) -> None:
    """Rows of an older checkpoint named in Hub or W&B style (all of them, or half beside
    the current one's) are an older copy of the model trained: Async, not SFT."""
    new = old + ahead
    path = tmp_path / f"rows{seed}.jsonl"
    writers = [rows.format(old), rows.format(new)] if mixed else [rows.format(old)]
    _write(path, writers, seed)
    report = run_route([str(path)], model=option.format(new))
    check = next(c for c in report.checks if c.key == "on_policy")
    assert report.method != "sft" and report.route != "off-policy", check.why
    assert "async" in report.plan, (report.plan, check.why)


@pytest.mark.parametrize("rows", ["Qwen/Qwen3-8B:main", "Qwen_Qwen3-8B"])
def test_a_revision_routes_on_policy(tmp_path: Path, rows: str) -> None:
    """Rows a revision of the model wrote are on-policy (the probe's firm SFT)."""
    path = tmp_path / "rows.jsonl"
    _write(path, [rows], 3)
    report = run_route([str(path)], model="Qwen/Qwen3-8B")
    assert report.method == "grpo" and not report.provisional
    assert next(c for c in report.checks if c.key == "on_policy").status.value == "pass"


@pytest.mark.parametrize("rows", ["qwen/qwen3-8b:free", "openrouter/qwen/qwen3-8b:nitro"])
def test_a_routing_variant_routes_provisional_never_sft(tmp_path: Path, rows: str) -> None:
    """Rows OpenRouter served: the model at a precision the name does not state, so check 6
    is unknown and the verdict provisional; never another model's firm SFT."""
    path = tmp_path / "rows.jsonl"
    _write(path, [rows], 3)
    report = run_route([str(path)], model="Qwen/Qwen3-8B")
    assert report.method == "grpo" and report.provisional
    check = next(c for c in report.checks if c.key == "on_policy")
    assert check.status.value == "unknown" and "hosted provider" in check.why
