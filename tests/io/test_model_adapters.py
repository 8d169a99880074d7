"""A LoRA adapter named after a model (``qwen3-8b-lora``, ``Qwen3-8B-lora-r16-math``,
``Qwen3-8B-QLoRA-sql``) is a build tuned from it: beside the model, unsure (check 6 unknown),
never another model's firm SFT nor the model itself, whatever words follow the adapter's.

The generator joins a model's name, an adapter's word and the words PEFT runs name adapters
with (rank, alpha, task); the truth is the model drawn: another size's adapter is another
model's."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.io.modelid import OTHER, UNSURE, weights_relation

MODELS = (("Qwen3-8B", "Qwen3-14B"), ("Llama-3.1-8B-Instruct", "Llama-3.1-70B-Instruct"))
WORDS = ("lora", "LoRA", "qlora", "QLoRA", "adapter", "peft", "dora")
EXTRAS = ("", "r16", "math", "r16-math", "r8-alpha16", "sql", "v2", "gsm8k-ep3")


@settings(max_examples=300)
@given(
    model=st.sampled_from(MODELS),
    org=st.sampled_from(("", "my-org/")),
    word=st.sampled_from(WORDS),
    extra=st.sampled_from(EXTRAS),
    join=st.sampled_from(("-", "_")),
)
def test_an_adapter_named_after_the_model_is_unsure(
    model: tuple[str, str], org: str, word: str, extra: str, join: str
) -> None:
    name, bigger = model
    tail = join.join(p for p in (word, extra) if p)
    written = f"{org}{name}{join}{tail}"
    assert weights_relation(written, name) == UNSURE, written
    assert weights_relation(name, written) == UNSURE, written
    assert weights_relation(f"{org}{bigger}{join}{tail}", name) == OTHER, written
