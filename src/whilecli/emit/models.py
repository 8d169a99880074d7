"""What a model's name tells the config writer: renderer, size, and whether it thinks.

prime-rl's ``[orchestrator.renderer] name = "auto"`` works only when the model name is an exact
key of the ``renderers`` package's model map (``spec/prime-rl.md`` §4: Qwen/Qwen3-*, Qwen3.5,
Llama-3.2 Instruct, gpt-oss, GLM, Kimi, DeepSeek, ...); any other name fails validation unless
``name = "default"`` or a family name is set. The map changes from one renderers release to
the next, so a name is treated as known only when it starts with one of the families below.
"""

from __future__ import annotations

#: Model-name prefixes of the renderers map's families (renderers 2846a3d / PyPI 0.1.12).
KNOWN_RENDERER_PREFIXES: tuple[str, ...] = (
    "Qwen/Qwen3-",
    "Qwen/Qwen3.5-",
    "meta-llama/Llama-3.2-",
    "openai/gpt-oss-",
    "zai-org/GLM-",
    "moonshotai/Kimi-",
    "deepseek-ai/DeepSeek-",
)

#: Family renderer names prime-rl accepts for ``orchestrator.renderer.name``, by a name
#: fragment that suggests them (lower case), most specific first.
FAMILY_RENDERERS: tuple[tuple[str, str], ...] = (
    ("qwen3.5", "qwen3.5"),
    ("qwen3", "qwen3"),
    ("llama-3", "llama-3"),
    ("gpt-oss", "gpt-oss"),
)

#: prime-rl's default model (``[model] name``).
DEFAULT_MODEL = "Qwen/Qwen3-0.6B"

_THINKING = ("thinking", "qwq", "-r1", "r1-", "gpt-oss", "reasoning")


def renderer_known(model: str) -> bool:
    """Whether ``auto`` can be expected to find ``model`` in the renderers map.

    Llama-3.2 needs an Instruct variant; every other family is matched by its prefix.
    """
    if not model.startswith(KNOWN_RENDERER_PREFIXES):
        return False
    return not (model.startswith("meta-llama/Llama-3.2-") and "Instruct" not in model)


def family_renderer(model: str) -> str | None:
    """A family renderer name that ``model`` suggests, or None."""
    low = model.lower()
    for fragment, name in FAMILY_RENDERERS:
        if fragment in low:
            return name
    return None


def size_from_name(model: str) -> float | None:
    """Billions of parameters written in the name (``Qwen3-0.6B`` → 0.6; ``30B-A3B`` → 30;
    a local checkpoint or cache path of the model names its size too)."""
    from whilecli.io.modelid import model_identity

    return model_identity(model).size_b


def is_thinking(model: str) -> bool:
    """Whether the name marks a model that reasons before it answers by default.

    Qwen3 base checkpoints think unless told not to (the 2507 ``Instruct`` releases do not);
    names with ``Thinking``, ``QwQ``, ``R1``, ``gpt-oss`` or ``reasoning`` do.
    """
    from whilecli.io.modelid import model_key

    name = model_key(model)  # a local checkpoint or cache path: the model it names
    if any(t in name for t in _THINKING):
        return True
    return name.startswith("qwen3-") and "instruct" not in name
