"""A quantized build of a model is the model's weights at a lower precision, however its
quantizer spells the build (check 6: a copy, Async; check 4: the student's own copy is no
teacher): llama.cpp's file types (``Q4_K_M``, ``Q8_0``, ``IQ4_XS``, unsloth's ``UD-Q4_K_XL``,
a ``.gguf`` file), exllama's bits per weight (``exl2-4.0bpw``, ``6.0bpw-h6``), GPTQ's and
AWQ's group sizes (``gptq-4bit-128g``), bitsandbytes' (``nf4``, ``bnb-4bit``, ``int8``), MLC's
(``q4f16_1-MLC``), AQLM, HQQ, EETQ, SpQR, QuIP#, Marlin, torchao, compressed-tensors
(``w8a8``).

The generator builds each spelling from the quantizer's grammar (its method, bits, group,
file type) and joins it to a model's name; the truth is how it was built: the model's own
name plus a quantization is a copy of that model, another model's name plus the same
quantization (another size, ``-Base``, ``-Math``) is another model's copy, never the model."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.io.modelid import COPY, OTHER, weights_relation

MODELS = ("Qwen3-8B", "Llama-3.1-8B-Instruct", "gemma-2-9b-it", "Mistral-7B-Instruct-v0.3")
ORGS = ("", "unsloth/", "bartowski/", "turboderp/", "mlc-ai/", "ISTA-DASLab/", "/models/")


@st.composite
def gguf(draw: st.DrawFn) -> str:
    bits = draw(st.sampled_from("2345678"))
    if draw(st.booleans()):  # an i-quant: IQ1_S … IQ4_XS, IQ4_NL
        kind = f"IQ{draw(st.sampled_from('1234'))}_{draw(st.sampled_from(('XXS', 'XS', 'S', 'M', 'NL')))}"  # fmt: skip
    elif draw(st.booleans()):  # a k-quant: Q4_K_M, Q6_K, Q4_K_XL
        kind = f"Q{bits}_K" + draw(st.sampled_from(("", "_S", "_M", "_L", "_XL")))
    else:  # a legacy type: Q4_0, Q8_0, Q5_1
        kind = f"Q{bits}_{draw(st.sampled_from('01'))}"
    kind = draw(st.sampled_from((kind, kind.lower())))
    return draw(st.sampled_from(("", "UD-"))) + kind + draw(st.sampled_from(("", ".gguf")))


@st.composite
def exllama(draw: st.DrawFn) -> str:
    bpw = draw(st.sampled_from(("2.5", "3.0", "4.0", "4.65", "6.0", "8.0", "4", "6")))
    head = draw(st.sampled_from(("exl2-", "exl2_", "EXL2-", "exl3-", "")))
    return head + f"{bpw}bpw" + draw(st.sampled_from(("", "-h6", "-h8")))


@st.composite
def grouped(draw: st.DrawFn) -> str:
    method = draw(st.sampled_from(("gptq", "GPTQ", "awq", "AWQ")))
    bits = draw(st.sampled_from(("-4bit", "-8bit", "-Int4", "-Int8", "")))
    group = draw(st.sampled_from(("-128g", "-32g", "-g128", "-64g", "")))
    return method + bits + group


@st.composite
def bitsandbytes(draw: st.DrawFn) -> str:
    return draw(st.sampled_from(("nf4", "fp4", "int8", "4bit", "8bit", "bnb-4bit", "bnb-nf4")))


@st.composite
def others(draw: st.DrawFn) -> str:
    return draw(
        st.sampled_from(
            (
                *("q4f16_1-MLC", "q0f16-MLC", "q4f32_1-MLC", "q3f16_1"),
                *("AQLM", "AQLM-2Bit-1x16", "hqq", "HQQ-4bit-g64", "EETQ", "SpQR", "QuIP#"),
                *("marlin", "gptq-marlin", "torchao-int4wo", "int4wo", "w8a8", "W4A16"),
                *("quantized.w8a8", "FP8-dynamic", "compressed-tensors"),
            )
        )
    )


QUANTS = st.one_of(gguf(), exllama(), grouped(), bitsandbytes(), others())
JOINS = st.sampled_from(("-", "_", "."))


@settings(max_examples=400)
@given(model=st.sampled_from(MODELS), org=st.sampled_from(ORGS), join=JOINS, quant=QUANTS)
def test_a_quantized_build_is_the_models_copy(model: str, org: str, join: str, quant: str) -> None:
    join = join if quant[0].isalpha() else "-"  # v0.3.4bpw: a version's point or a bpw's?
    written = f"{org}{model}{join}{quant}"
    assert weights_relation(written, model) == COPY, written
    assert weights_relation(model, written) == COPY, written


@settings(max_examples=300)
@given(
    model=st.sampled_from(MODELS),
    org=st.sampled_from(ORGS),
    join=JOINS,
    quant=QUANTS,
    change=st.sampled_from(("-Base", "-Math", "-VL", "size")),
)
def test_another_models_quantized_build_is_another_model(
    model: str, org: str, join: str, quant: str, change: str
) -> None:
    """The neighbours: the same quantization of another model (another size, or a variant
    word beside the name) is never the model nor its copy."""
    other = model.replace("8B", "14B").replace("9b", "27b").replace("7B", "12B")
    if change != "size":
        other = model + change
    join = join if quant[0].isalpha() else "-"
    written = f"{org}{other}{join}{quant}"
    assert weights_relation(written, model) == OTHER, written
