"""A hosted provider's id names the model it serves, at a precision the id does not state:
check 6 cannot tell it holds the model's weights (unsure), never that it is the model nor
another one; an ``@`` in an id is not a policy's version where the scheme writes one
(Cloudflare's ``@cf/``) or where it says a precision (LM Studio's ``model@q4_k_m``).

The generator writes a model's name in each provider's scheme (Fireworks'
``accounts/<account>/models/<m>``, with or without LiteLLM's prefix; Cloudflare's
``@cf/<org>/<m>`` and ``@hf/``; Vertex AI's ``publishers/<org>/models/<m>``, with or without
its project and location; Azure ML's registries; a Bedrock ARN) in the provider's own
spelling of the name (lower case, Fireworks' ``v3p1``); the truth is the scheme it was written
in: hosted → unsure beside the model, another size's id → another model."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.io.modelid import (
    COPY,
    OTHER,
    SAME,
    UNSURE,
    model_identity,
    names_model,
    same_model,
    version_split,
    weights_relation,
)

#: (Hub id, family, version, size, tier): the model and the parts a provider spells.
MODELS = (
    ("Qwen/Qwen3-8B", "qwen", "3", "8", ""),
    ("Qwen/Qwen2.5-7B-Instruct", "qwen", "2.5", "7", "instruct"),
    ("meta-llama/Llama-3.1-8B-Instruct", "llama", "3.1", "8", "instruct"),
    ("mistralai/Mistral-7B-Instruct-v0.3", "mistral", "", "7", "instruct-v0.3"),
)
SCHEMES = (
    "accounts/fireworks/models/{fw}",
    "accounts/my-team/models/{fw}",
    "fireworks_ai/accounts/fireworks/models/{fw}",
    "@cf/{org}/{name}",
    "@hf/{org}/{name}",
    "publishers/{org}/models/{name}",
    "projects/my-proj/locations/us-central1/publishers/{org}/models/{name}",
    "azureml://registries/azureml/models/{name}/versions/3",
)


def _written(model: tuple[str, str, str, str, str], scheme: str, size: str) -> str:
    hub, family, version, _, tier = model
    org = hub.split("/")[0].lower()
    v = version.replace(".", "p")
    fw = "-".join(p for p in (f"{family}-v{v}" if v else family, f"{size}b", tier) if p)
    name = "-".join(p for p in (f"{family}-{version}" if version else family, f"{size}b", tier) if p)  # fmt: skip
    return scheme.format(fw=fw, org=org, name=name)


@settings(max_examples=200)
@given(model=st.sampled_from(MODELS), scheme=st.sampled_from(SCHEMES))
def test_a_hosted_providers_id_is_unsure_beside_its_model(
    model: tuple[str, str, str, str, str], scheme: str
) -> None:
    written = _written(model, scheme, model[3])
    assert names_model(written), written
    assert not same_model(written, model[0]), written
    assert weights_relation(written, model[0]) == UNSURE, written
    assert weights_relation(model[0], written) == UNSURE, written


@settings(max_examples=200)
@given(model=st.sampled_from(MODELS), scheme=st.sampled_from(SCHEMES))
def test_a_hosted_id_of_another_size_is_another_model(
    model: tuple[str, str, str, str, str], scheme: str
) -> None:
    written = _written(model, scheme, "70" if model[3] != "70" else "8")
    assert weights_relation(written, model[0]) == OTHER, written


ARNS = (
    "arn:aws:bedrock:us-east-1::foundation-model/{id}",
    "arn:aws:bedrock:us-west-2:123456789012:inference-profile/us.{id}",
)


@given(
    arn=st.sampled_from(ARNS),
    pair=st.sampled_from(
        (
            ("meta.llama3-1-8b-instruct-v1:0", "meta-llama/Llama-3.1-8B-Instruct"),
            ("anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet-20241022"),
        )
    ),
)
def test_a_bedrock_arn_is_the_bedrock_id_it_holds(arn: str, pair: tuple[str, str]) -> None:
    held, model = pair
    written = arn.format(id=held)
    assert weights_relation(written, model) == weights_relation(held, model) != OTHER, written
    assert weights_relation(written, "Qwen/Qwen3-8B") == OTHER


def test_an_accounts_own_bedrock_model_names_no_model() -> None:
    found = model_identity("arn:aws:bedrock:us-east-1:123456789012:provisioned-model/abc123xyz")
    assert found.anonymous


def test_an_apis_model_on_vertex_is_itself() -> None:
    written = "projects/p/locations/us-central1/publishers/google/models/gemini-1.5-pro-002"
    assert weights_relation(written, "gemini-1.5-pro-002") == SAME


QUANT_TAGS = ("q4_k_m", "Q8_0", "q6_k", "iq4_xs", "4bit", "8bit", "mlx-4bit", "fp16", "bf16")


@given(model=st.sampled_from([m[0].lower() for m in MODELS]), tag=st.sampled_from(QUANT_TAGS))
def test_lm_studios_at_quantization_is_a_precision_not_a_version(model: str, tag: str) -> None:
    written = f"{model}@{tag}"
    assert version_split(written) == (written, None)
    assert weights_relation(written, model) == COPY, written


@given(
    model=st.sampled_from([m[0] for m in MODELS]),
    version=st.sampled_from(("3", "120", "v7", "step_40", "2024-06-01T00:00")),
)
def test_a_version_after_at_is_still_a_version(model: str, version: str) -> None:
    assert version_split(f"{model}@{version}") == (model, version)
    assert version_split(f"@cf/meta/llama-3.1-8b-instruct@{version}")[1] == version
    assert not names_model(f"@{version}")
