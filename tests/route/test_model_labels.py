"""Labels a harness puts after a model's name, and a quantizer's upload named after the Hub id
(check 6). ``qwen3-8b-nothink`` beside ``--model Qwen/Qwen3-8B`` routed firm SFT, "another
model wrote these rows": it is the model with its thinking off, the same weights.
``Qwen3-8B (thinking)`` is that model's thinking mode, or a model released as its Thinking
build (``Kimi-K2-Thinking``, ``Qwen3-Next-80B-A3B-Thinking``): the name cannot tell, so check
6 is unknown. ``bartowski/Qwen_Qwen3-8B-GGUF`` is a quantized copy of ``Qwen/Qwen3-8B``.

The generator draws a model (family, size, variant), a label spelled as harnesses spell it,
and a ``--model`` near it; the truth comes from the draw: another size, family or variant is
another model whatever the label; a thinking-off label is the model itself; a thinking label
is unsure; a release date after the label makes it a model's own name."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from read_helpers import jsonl
from rows_files import drawn_rows
from whilecli.io.modelid import COPY, OTHER, SAME, UNSURE, weights_relation
from whilecli.route import run_route
from whilecli.route.model import Route, Status

#: (family as the Hub writes it, the Hub org).
FAMILIES = (("Qwen3", "Qwen"), ("Qwen2.5", "Qwen"), ("Llama-3.1", "meta-llama"), ("QwQ", "Qwen"))
SIZES = (0.6, 4, 8, 32)
VARIANTS = ("", "-Instruct", "-Base")
#: Thinking-off labels (the model itself) and thinking labels (unsure), as harnesses write them.
OFF = ("-nothink", "_no_think", " (non-thinking)", "-non-thinking", "-NoThink", "-no-think-mode")
ON = ("-thinking", "-think", " (thinking)", "_thinking", "-Thinking")


@st.composite
def labelled(draw: st.DrawFn) -> tuple[str, str, str]:
    """A name with a label, a ``--model`` near it, and the truth."""
    family, org = draw(st.sampled_from(FAMILIES))
    size = draw(st.sampled_from(SIZES))
    variant = draw(st.sampled_from(VARIANTS))
    on = draw(st.booleans())
    label = draw(st.sampled_from(ON if on else OFF))
    dated = on and draw(st.integers(0, 3)) == 0  # Qwen3-4B-Thinking-2507: a release's name
    name = f"{family}-{size:g}B{variant}{label}" + ("-2507" if dated else "")
    name_variant = variant
    name = name.lower() if draw(st.booleans()) else name
    change = draw(st.sampled_from(["none", "none", "size", "variant", "family"]))
    if change == "size":
        size = draw(st.sampled_from([s for s in SIZES if s != size]))
    elif change == "variant":
        variant = draw(st.sampled_from([v for v in VARIANTS if v != variant]))
    elif change == "family":
        family, org = draw(st.sampled_from([f for f in FAMILIES if f[0] != family]))
    model = f"{org}/{family}-{size:g}B{variant}"
    # a chat label beside a plain name, in a family whose plain name is its chat model
    labelled = {variant, name_variant} == {"", "-Instruct"} and family in ("Qwen3", "QwQ")
    if change == "variant" and labelled and not on:
        return name, model, UNSURE
    if change != "none" or dated:
        return name, model, OTHER
    return name, model, UNSURE if on else SAME


@settings(max_examples=300, deadline=None)
@given(labelled())
def test_a_label_relates_a_name_to_a_model_as_the_draw_says(drawn: tuple[str, str, str]) -> None:
    name, model, truth = drawn
    assert weights_relation(name, model) == truth, (name, model)
    assert weights_relation(model, name) == truth, (model, name)
    assert weights_relation(name, name) == SAME


@pytest.mark.parametrize(
    ("name", "model", "truth"),
    [
        ("bartowski/Qwen_Qwen3-8B-GGUF", "Qwen/Qwen3-8B", COPY),
        (
            "bartowski/meta-llama_Llama-3.1-8B-Instruct-GGUF",
            "meta-llama/Llama-3.1-8B-Instruct",
            COPY,
        ),
        ("bartowski/Qwen_Qwen3-8B-GGUF", "Qwen/Qwen3-14B", OTHER),
        ("someone/grpo_Qwen3-8B", "Qwen/Qwen3-8B", OTHER),  # a run's prefix is no org
        ("moonshotai/Kimi-K2-Thinking", "moonshotai/Kimi-K2-Instruct", OTHER),
        ("Qwen/Qwen3-Next-80B-A3B-Thinking", "Qwen/Qwen3-Next-80B-A3B-Instruct", OTHER),
        ("Qwen/Qwen3-4B-Thinking-2507", "Qwen/Qwen3-4B", OTHER),
    ],
)
def test_uploads_and_releases(name: str, model: str, truth: str) -> None:
    assert weights_relation(name, model) == truth


@pytest.mark.parametrize(
    ("written", "status", "route"),
    [
        ("qwen3-8b-nothink", Status.PASS, "grpo"),
        ("Qwen3-8B (non-thinking)", Status.PASS, "grpo"),
        ("Qwen3-8B-thinking", Status.UNKNOWN, "grpo"),
    ],
)
def test_labelled_rows_route_as_their_weights_say(
    tmp_path: Path, written: str, status: Status, route: str
) -> None:
    rows = drawn_rows(120, 4, lambda t, j: (t * 7 + j) % 3 == 0, model=written)
    got = run_route(str(jsonl(tmp_path / "rows.jsonl", rows)), model="Qwen/Qwen3-8B")
    assert isinstance(got, Route)
    check = next(c for c in got.checks if c.key == "on_policy")
    assert check.status is status, check.why
    assert got.route == route
    if status is Status.UNKNOWN:
        assert got.provisional and "unsure_build" in [f.kind for f in got.data_quality]
        assert "thinking label" in check.why
