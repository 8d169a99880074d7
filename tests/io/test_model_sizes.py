"""The size a model name states, drawn from the conventions of Hugging Face names.

A name is drawn from parts whose size is known: a family whose own number is a version
(``Llama-3.1``, ``Qwen2.5``, ``gemma-2``, ``stablelm-2``, ``phi``), a size written as Hub
names write it (``1.6B``, ``1_6b``, ``1p5b``, ``7b``, ``500M``, ``135M``), a mixture of
experts (``30B-A3B``: the total, ``8x22B``: at least one expert's model), a suffix whose
numbers are no size (``-chat``, ``-Instruct``, ``-2507``, ``-v0.1``, ``-bnb-4bit``,
``-4k-instruct``, ``-Instruct-1M``), and a spelling around it (Hub id, bare, vf-eval's
``org--name``, a local folder, a checkpoint under it, a Hugging Face cache snapshot). Names
that state no size (``phi-2``, ``DeepSeek-V3``, ``Qwen1.5-MoE-A2.7B``) read as unknown,
never a guess. :func:`whilecli.io.modelid.model_identity` holds the one rule.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.emit.models import size_from_name as config_size
from whilecli.io.modelid import model_identity
from whilecli.route.identity import size_from_name

#: Families as Hub names write them; the digits in them are versions.
FAMILIES = (
    "Qwen3",
    "Qwen2.5",
    "Qwen2.5-Math",
    "Llama-3.1",
    "Llama-2",
    "Meta-Llama-3",
    "gemma-2",
    "stablelm-2",
    "Yi-1.5",
    "pythia",
    "SmolLM2",
    "OLMo-2-1124",
    "deepseek-coder",
    "phi",
    "gpt-oss",
    "open_llama",
)
#: Suffixes whose numbers are no size.
SUFFIXES = (
    "",
    "-chat",
    "-it",
    "-Instruct",
    "-Base",
    "-hf",
    "-2507",
    "-Instruct-2507",
    "-v0.1",
    "-bnb-4bit",
    "-4k-instruct",
    "-Instruct-1M",
    "-GGUF",
    "-deduped",
)
#: Names that state no size: unknown.
SIZELESS = (
    "phi-2",
    "phi-4",
    "DeepSeek-V3",
    "DeepSeek-R1",
    "Llama-3.1",
    "Qwen2.5",
    "Phi-3-mini-4k-instruct",
    "Qwen1.5-MoE-A2.7B",
    "gpt2",
    "Mistral-Nemo-Instruct-2407",
    "c4ai-command-r-v01",
    "run_0b",  # no model has 0 parameters
    "ckpt-0B",
)
ORGS = st.sampled_from(["Qwen", "meta-llama", "stabilityai", "my_lab", "org-2"])


@st.composite
def written_sizes(draw: st.DrawFn) -> tuple[str, float]:
    """A size as a name writes it, and the billions it states."""
    kind = draw(st.sampled_from(["whole", "point", "underscore", "p", "millions", "moe"]))
    b = draw(st.sampled_from(["b", "B"]))
    if kind == "whole":
        n = draw(st.integers(1, 700))
        return f"{n}{b}", float(n)
    if kind == "millions":
        n = draw(st.integers(10, 999))
        return f"{n}{draw(st.sampled_from(['m', 'M']))}", n / 1000
    whole, tenth = draw(st.integers(0, 70)), draw(st.integers(1, 9))
    if kind == "moe":  # the total, then the active share
        return f"{whole + 1}{b}-A{tenth}{b}", float(whole + 1)
    sep = {"point": ".", "underscore": "_", "p": "p"}[kind]
    return f"{whole}{sep}{tenth}{b}", float(f"{whole}.{tenth}")


@st.composite
def spelled(draw: st.DrawFn, name: str) -> str:
    """``name`` written as a Hub id, bare, vf-eval's folder, a local path or a cache path."""
    org = draw(ORGS)
    kind = draw(st.sampled_from(["hub", "bare", "vf", "dir", "checkpoint", "cache"]))
    if kind == "hub":
        return f"{org}/{name}"
    if kind == "bare":
        return name
    if kind == "vf":
        return f"{org}--{name}"
    if kind == "dir":
        return f"/models/{name}/"
    if kind == "checkpoint":
        return f"./out/{name}/checkpoint-{draw(st.integers(0, 10**5))}"
    sha = draw(st.text("0123456789abcdef", min_size=8, max_size=40))
    return f"~/.cache/huggingface/hub/models--{org}--{name}/snapshots/{sha}"


def _read(text: str) -> float | None:
    found = model_identity(text).size_b
    assert size_from_name(text) == config_size(text) == found, text
    return found


@settings(max_examples=300, deadline=None)
@given(data=st.data(), size=written_sizes())
def test_a_stated_size_reads_as_written(data: st.DataObject, size: tuple[str, float]) -> None:
    written, billions = size
    family = data.draw(st.sampled_from(FAMILIES))
    name = f"{family}-{written}{data.draw(st.sampled_from(SUFFIXES))}"
    text = data.draw(spelled(name))
    found = _read(text)
    assert found is not None and abs(found - billions) < 1e-9, (text, found, billions)


@settings(max_examples=100, deadline=None)
@given(
    data=st.data(),
    experts=st.integers(2, 16),
    each=st.sampled_from([("7B", 7.0), ("22B", 22.0), ("1_6b", 1.6), ("0.5B", 0.5)]),
)
def test_experts_read_as_the_least_total_they_guarantee(
    data: st.DataObject, experts: int, each: tuple[str, float]
) -> None:
    """``Mixtral-8x22B`` does not state its total (141B: the experts share attention), only
    that it is at least one expert's model: 22, never 8 × 22 = 176."""
    name = f"Mixtral-{experts}x{each[0]}{data.draw(st.sampled_from(SUFFIXES))}"
    assert _read(data.draw(spelled(name))) == each[1], name


@settings(max_examples=100, deadline=None)
@given(data=st.data(), name=st.sampled_from(SIZELESS), suffix=st.sampled_from(SUFFIXES))
def test_a_name_without_a_size_reads_as_unknown(
    data: st.DataObject, name: str, suffix: str
) -> None:
    text = data.draw(spelled(name + suffix))
    assert _read(text) is None, text


def test_the_named_conventions() -> None:
    """The conventions one by one (each also drawn above)."""
    cases = {
        "stabilityai/stablelm-2-1_6b": 1.6,
        "Mixtral-8x22B": 22.0,
        "Mixtral-8x7B-Instruct-v0.1": 7.0,
        "Qwen/Qwen3-30B-A3B": 30.0,
        "allenai/OLMoE-1B-7B-0924": 7.0,
        "openai/gpt-oss-20b": 20.0,
        "Llama-4-Scout-17B-16E-Instruct": 17.0,
        "deepseek-ai/DeepSeek-V3": None,
        "x-1p5b": 1.5,
        "Qwen2.5-0.5B": 0.5,
        "bloom-560m": 0.56,
        "SmolLM2-135M": 0.135,
        "llama-2-7b-chat": 7.0,
        "Meta-Llama-3-70B-Instruct": 70.0,
        "meta-llama/Llama-3.1-8B": 8.0,
        "Qwen/Qwen2.5-Math-1.5B-Instruct": 1.5,
        "microsoft/phi-2": None,
        "google/gemma-2-9b-it": 9.0,
        "Qwen/Qwen3-4B-2507": 4.0,
        "Qwen/Qwen2.5-7B-Instruct-1M": 7.0,
        "/root/.cache/huggingface/hub/models--Qwen--Qwen3-0.6B/snapshots/3b9f0a": 0.6,
        "/models/stablelm-2-1_6b/checkpoint-20": 1.6,
    }
    assert {name: _read(name) for name in cases} == cases


#: How a name joins two models' sizes: a distillation's teacher and student, a base and the
#: traces it learned from.
JOINS = ("-distill-from-", "-distilled-into-", "-sft-on-", "-from-", "-to-", "_on_", "-with-")


@settings(max_examples=200, deadline=None)
@given(data=st.data(), a=written_sizes(), b=written_sizes(), join=st.sampled_from(JOINS))
def test_a_name_stating_two_models_sizes_reads_as_unknown(
    data: st.DataObject, a: tuple[str, float], b: tuple[str, float], join: str
) -> None:
    """``Qwen3-0.6B-distill-from-70B`` names a 0.6B model and the 70B one it learned from:
    which the rows' model is, the name does not say (it was read as 70, over the 7B rule)."""
    if abs(a[1] - b[1]) < 1e-9:
        return
    family = data.draw(st.sampled_from(FAMILIES))
    other = data.draw(st.sampled_from(FAMILIES))
    name = f"{family}-{a[0]}{join}{other}-{b[0]}{data.draw(st.sampled_from(SUFFIXES))}"
    assert _read(data.draw(spelled(name))) is None, name


def test_active_then_total_is_one_model() -> None:
    """The one pair a name writes for one model: ``OLMoE-1B-7B`` (active, then total)."""
    assert _read("allenai/OLMoE-1B-7B-0924") == 7.0
    assert _read("OLMoE-1B-7B-0924-distilled-into-Qwen3-0.6B") is None
