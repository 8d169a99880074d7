"""A provider's or Ollama's build of an open model (check 6): rows sampled through Ollama
(``llama3.1:8b``), Groq (``llama-3.1-8b-instant``), Together (``…-Instruct-Turbo``), Vertex
AI (``…-maas``) or Bedrock (``meta.llama3-1-8b-instruct-v1:0``), often behind a harness's
provider prefix (``ollama/``, ``ollama:chat:``, ``groq/``), name the weights of the model the
user trains at a precision the name does not state, and Ollama's and Groq's names leave out
that the build is the chat model. Such rows were "another model" before: a firm SFT.

The generator draws a model (family, version, size, variant), a build of it spelled as one
provider spells it, and a ``--model`` near it. The truth is built from the draw, never from
the rule under test: another size or version is another model; a ``--model`` stating the
variant the build serves is a copy of its weights (Async with a correction); one stating
another variant is another model; one stating no variant cannot be told apart (Qwen3-8B is
a chat model, Llama-3.1-8B a base one): unsure, so check 6 is unknown and the verdict
provisional."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from read_helpers import jsonl
from rows_files import drawn_rows
from whilecli.io.modelid import COPY, OTHER, SAME, UNSURE, model_identity, weights_relation
from whilecli.route import run_route
from whilecli.route.model import Route, Status

#: (family as the Hub writes it, as Ollama writes it, as Bedrock writes it, the Hub org).
FAMILIES = (
    ("Llama-3.1", "llama3.1", "llama3-1", "meta-llama"),
    ("Llama-3.2", "llama3.2", "llama3-2", "meta-llama"),
    ("Qwen2.5", "qwen2.5", "qwen2-5", "Qwen"),
    ("Qwen3", "qwen3", "qwen3", "Qwen"),
)
SIZES = (1, 3, 7, 8, 14, 70)
#: How a Hub name states a variant: the chat build, the base, or neither.
VARIANTS = {"chat": ("-Instruct", "-it", "-Chat"), "base": ("-Base",), None: ("",)}


def _hub(family: str, size: float, variant: str | None, pick: int) -> str:
    spelled = VARIANTS[variant]
    return f"{family}-{size:g}B{spelled[pick % len(spelled)]}"


@st.composite
def builds(draw: st.DrawFn) -> tuple[str, tuple[int, float, str]]:
    """A build's name, and what it serves: (family index, size, variant)."""
    index = draw(st.integers(0, len(FAMILIES) - 1))
    hub, ollama, bedrock, org = FAMILIES[index]
    size = float(draw(st.sampled_from(SIZES)))
    kind = draw(st.sampled_from(["ollama", "ollama-text", "groq", "together", "vertex"]))
    quant = draw(st.sampled_from(["", "-q4_K_M", "-q8_0", "-fp16"]))
    if kind == "ollama":
        prefix = draw(st.sampled_from(["", "ollama/", "ollama_chat/", "ollama:chat:"]))
        tag = draw(st.sampled_from(["", "-instruct"]))
        return f"{prefix}{ollama}:{size:g}b{tag}{quant}", (index, size, "chat")
    if kind == "ollama-text":
        return f"{ollama}:{size:g}b-text{quant}", (index, size, "base")
    if kind == "groq":
        prefix = draw(st.sampled_from(["", "groq/"]))
        word = draw(st.sampled_from(["instant", "versatile"]))
        return f"{prefix}{hub.lower()}-{size:g}b-{word}", (index, size, "chat")
    if kind == "together":
        prefix = draw(st.sampled_from(["", "together_ai/", "together/"]))
        return f"{prefix}{org}/{_hub(hub, size, 'chat', 0)}-Turbo", (index, size, "chat")
    return f"meta/{hub.lower()}-{size:g}b-instruct-maas", (index, size, "chat")


@st.composite
def options(draw: st.DrawFn, served: tuple[int, float, str]) -> tuple[str, str]:
    """A ``--model`` near what the build serves, and the truth of how they relate."""
    index, size, variant = served
    hub, _, _, org = FAMILIES[index]
    change = draw(st.sampled_from(["none", "size", "family"]))
    if change == "size":
        size = draw(st.sampled_from([s for s in SIZES if s != size]))
    elif change == "family":
        index = draw(st.sampled_from([i for i in range(len(FAMILIES)) if i != index]))
        hub, _, _, org = FAMILIES[index]
    stated = draw(st.sampled_from(["chat", "base", None]))
    name = f"{org}/{_hub(hub, size, stated, draw(st.integers(0, 2)))}"
    if change != "none" or (stated is not None and stated != variant):
        return name, OTHER
    return name, COPY if stated == variant else UNSURE


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_a_build_relates_to_a_model_as_the_draw_says(data: st.DataObject) -> None:
    build, served = data.draw(builds())
    model, truth = data.draw(options(served))
    assert weights_relation(build, model) == truth, (build, model)
    assert weights_relation(model, build) == truth, (model, build)
    assert weights_relation(build, build) == SAME


#: LiteLLM's prefixes for a hosted provider (the model at a precision the name does not
#: state) and for a server the user runs (the model itself).
HOSTED = ("together_ai/", "fireworks_ai/", "deepinfra/", "openrouter/", "nebius/", "huggingface/")
LOCAL = ("hosted_vllm/", "openai/")


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_a_hosted_endpoint_relates_to_a_model_as_the_draw_says(data: st.DataObject) -> None:
    """``together_ai/Qwen/Qwen3-8B``: a provider serves the named weights at a precision it
    does not state, so beside the model it names it is unsure (never the same, never a firm
    copy); the name is a Hub name as written, so another size, family or variant is another
    model. A server the user runs (``hosted_vllm/``, ``openai/``) serves the model itself."""
    index = data.draw(st.integers(0, len(FAMILIES) - 1))
    hub, _, _, org = FAMILIES[index]
    size = float(data.draw(st.sampled_from(SIZES)))
    variant = data.draw(st.sampled_from(["chat", "base", None]))
    local = data.draw(st.booleans())
    prefix = data.draw(st.sampled_from(LOCAL if local else HOSTED))
    pick = data.draw(st.integers(0, 2))  # how the variant is spelled (-Instruct, -it, -Chat)
    served = f"{prefix}{org}/{_hub(hub, size, variant, pick)}"
    if data.draw(st.booleans()):
        served = served.lower()
    model, change = served, data.draw(st.sampled_from(["none", "size", "family", "variant"]))
    m_index, m_size, m_variant = index, size, variant
    if change == "size":
        m_size = float(data.draw(st.sampled_from([s for s in SIZES if s != size])))
    elif change == "family":
        m_index = data.draw(st.sampled_from([i for i in range(len(FAMILIES)) if i != index]))
    elif change == "variant":
        m_variant = data.draw(st.sampled_from([v for v in ("chat", "base", None) if v != variant]))
    m_hub, _, _, m_org = FAMILIES[m_index]
    model = f"{m_org}/{_hub(m_hub, m_size, m_variant, pick)}"
    # the Hub name as written: another size, family or variant is another model, but for a
    # chat label beside a plain name in a family whose plain name is its chat model (Qwen3)
    labelled = change == "variant" and {variant, m_variant} == {"chat", None} and hub == "Qwen3"
    truth = UNSURE if labelled else OTHER if change != "none" else SAME if local else UNSURE
    assert weights_relation(served, model) == truth, (served, model)
    assert weights_relation(model, served) == truth, (model, served)


@pytest.mark.parametrize(
    ("name", "model"),
    [
        ("gpt-4-turbo", "gpt-4"),  # an API's own models: the word is the model's
        ("gpt-3.5-turbo", "gpt-3.5"),
        ("gemini-2.0-flash-lite", "gemini-2.0-flash"),
        ("claude-instant-1", "claude-1"),
        ("deepseek-ai/DeepSeek-V2-Lite", "deepseek-ai/DeepSeek-V2"),
        ("Qwen/Qwen3-8B-Base", "Qwen/Qwen3-8B"),
    ],
)
def test_words_of_a_models_own_name_are_not_a_build(name: str, model: str) -> None:
    assert weights_relation(name, model) == OTHER
    assert model_identity(name).build is None


@pytest.mark.parametrize(
    ("name", "model"),
    [
        ("openai:chat:gpt-4o", "gpt-4o"),  # promptfoo's provider and API before the model
        ("anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet"),  # Bedrock
        ("Qwen/Qwen3-8B:latest", "Qwen/Qwen3-8B"),  # a Hub id's alias, not Ollama's
        ("Qwen/Qwen3-8B:0000000b", "Qwen/Qwen3-8B"),  # a commit that reads like a size
    ],
)
def test_a_providers_spelling_of_an_api_model_names_it(name: str, model: str) -> None:
    assert weights_relation(name, model) == SAME


def test_bedrock_names_the_model_it_serves() -> None:
    for name in ("meta.llama3-1-8b-instruct-v1:0", "us.meta.llama3-1-8b-instruct-v1:0"):
        assert weights_relation(name, "meta-llama/Llama-3.1-8B-Instruct") == COPY
        assert weights_relation(name, "meta-llama/Llama-3.1-70B-Instruct") == OTHER
    mistral = "mistral.mistral-7b-instruct-v0:2"  # the version lives in Bedrock's suffix
    assert weights_relation(mistral, "mistralai/Mistral-7B-Instruct-v0.2") == UNSURE


def _rows(path: Path, model: str, rate: float | None = None, tasks: int = 80, k: int = 4) -> Path:
    """Rows that name ``model``, each task at a rate of its own (or at ``rate``)."""
    rng = random.Random(11)
    rates = [
        rate if rate is not None else rng.choice([0.1, 0.3, 0.5, 0.7, 0.9]) for _ in range(tasks)
    ]
    drawn = drawn_rows(tasks, k, lambda task, _: rng.random() < rates[task], model=model)
    return jsonl(path, drawn)


@pytest.mark.parametrize(
    ("rows_name", "model", "truth"),
    [
        ("llama3.1:8b", "meta-llama/Llama-3.1-8B-Instruct", COPY),
        ("ollama/llama3.1:8b", "meta-llama/Llama-3.1-8B", UNSURE),
        ("ollama/llama3.1", "meta-llama/Llama-3.1-8B-Instruct", UNSURE),
        ("groq/llama-3.1-8b-instant", "meta-llama/Llama-3.1-8B-Instruct", COPY),
        ("together_ai/meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo", "Llama-3.1-8B-Instruct", COPY),
        ("llama3.1:70b", "meta-llama/Llama-3.1-8B-Instruct", OTHER),
        ("qwen3:8b", "Qwen/Qwen3-8B-Base", OTHER),
        ("together_ai/Qwen/Qwen3-8B", "Qwen/Qwen3-8B", UNSURE),
        ("openrouter/qwen/qwen3-8b", "Qwen/Qwen3-8B", UNSURE),
    ],
)
def test_the_route_reads_a_build_by_what_it_serves(
    tmp_path: Path, rows_name: str, model: str, truth: str
) -> None:
    """A copy: not another model, the sampler's precision sends the method to Async. Unsure:
    check 6 unknown, a finding, provisional, never a firm SFT. Another model: off-policy."""
    route = run_route(str(_rows(tmp_path / "rows.jsonl", rows_name)), model=model)
    assert isinstance(route, Route)
    check = next(c for c in route.checks if c.key == "on_policy")
    if truth == COPY:
        assert check.status is Status.FAIL and check.decides is None
        assert check.measured["quantized_models"] == [rows_name]
        assert route.method != "sft" and "async" in route.plan
    elif truth == UNSURE:
        assert check.status is Status.UNKNOWN and route.provisional
        assert "unsure_build" in [f.kind for f in route.data_quality]
    else:
        assert check.status is Status.FAIL and check.decides == "off-policy"
        assert route.method == "sft"


def test_a_teacher_that_may_be_the_student_leaves_opd_provisional(tmp_path: Path) -> None:
    """Teacher rows from Ollama's ``qwen3:8b`` beside a student ``Qwen/Qwen3-8B`` (which the
    build may serve): the teacher may be the student; a stronger teacher's OPD is not firm.
    Named as a build of another size, it is a teacher like any other."""
    student = _rows(tmp_path / "student.jsonl", "Qwen/Qwen3-8B", rate=0.02, tasks=120)
    teacher = _rows(tmp_path / "teacher.jsonl", "qwen3:8b", rate=0.9, tasks=120)
    route = run_route(str(student), teacher=[str(teacher)], model="Qwen/Qwen3-8B")
    assert isinstance(route, Route) and route.provisional
    assert "teacher_may_be_student" in [f.kind for f in route.data_quality]
    larger = run_route(str(student), teacher=[str(teacher)], model="Qwen/Qwen3-0.6B")
    assert isinstance(larger, Route)
    assert "teacher_may_be_student" not in [f.kind for f in larger.data_quality]
