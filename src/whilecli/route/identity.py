"""Model names as people write them (DESIGN section 2, check 6): one rule for every command
that compares models (``route``, ``check --fail-on off-policy``, ``config --from``).

Two names are the same model when they agree case-insensitively, with or without the
organisation (``Qwen/Qwen3-0.6B`` = ``Qwen3-0.6B`` = ``qwen/qwen3-0.6b``), in vf-eval's
folder spelling ``org--name`` (``qwen--qwen3-0.6b``) and lm-eval's ``org__name``
(``Qwen__Qwen3-0.6B``), as local paths (a checkpoint folder, a Hugging Face cache
snapshot), with the engine that served it (``-hf``) and however its parts are separated
(``Qwen3 0.6B``, ``qwen3_0.6b``): :mod:`whilecli.io.modelid` holds the one rule.
Nothing else is forgiven: a near miss
(``Qwen3-0.6B-Base``, ``Qwen3-1.7B``, ``Qwen3-0.6B-Instruct``) is another model, and
:func:`closest` names the names it was nearest to. A quantized copy (``Qwen3-0.6B-AWQ``,
``-FP8``, ``-GPTQ-Int4``), and a provider's or Ollama's build of it (``llama3.1:8b``,
``…-Instruct-Turbo``), is the model's weights at another precision (:func:`same_weights`):
the sampler is not the trainer, as an older copy is not. A build whose name leaves out
what would tell (:func:`unsure_weights`) leaves check 6 unknown.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from whilecli.io.modelid import COPY, UNSURE, match_key, model_identity, weights_relation
from whilecli.io.modelid import same_model as modelid_same_model


def model_key(name: str) -> str:
    """The part of a model name that identifies it: the name, lower case, without the
    organisation or the path around it (:func:`whilecli.io.modelid.model_identity`): a Hugging
    Face cache path ``…/models--Org--Name/snapshots/<sha>`` and a checkpoint under a local
    model folder ``/models/Name/checkpoint-100`` are ``name``; two spellings of one model
    (``Qwen3 8B``, ``qwen3_8b``) one key (:func:`whilecli.io.modelid.match_key`)."""
    return match_key(name)


def size_from_name(model: str | None) -> float | None:
    """Billions of parameters the name states (``Qwen3-0.6B`` → 0.6; ``30B-A3B`` → 30)."""
    return model_identity(model).size_b if model else None


def step_from_name(model: str | None) -> int | None:
    """The training step a checkpoint folder in the name states (``checkpoint-100`` → 100)."""
    return model_identity(model).step if model else None


def shown(model: str) -> str:
    """A model as a report names it: a local path as the model it names
    (``/models/Qwen3-8B/checkpoint-100`` → ``Qwen3-8B``), any other name as written."""
    found = model_identity(model)
    return found.display if found.path else model


same_model = modelid_same_model


def same_weights(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` name one model's weights at two precisions: one a quantized
    copy of the other (``Qwen3-8B-AWQ`` of ``Qwen3-8B``), two quantizations of one model
    (:attr:`whilecli.io.modelid.ModelId.weights_key`), or a provider's or Ollama's build of
    it (``llama3.1:8b``, ``Meta-Llama-3.1-8B-Instruct-Turbo`` of ``Llama-3.1-8B-Instruct``:
    :func:`whilecli.io.modelid.weights_relation`)."""
    return weights_relation(a, b) == COPY


def unsure_weights(a: str, b: str) -> bool:
    """Whether ``a`` may or may not hold ``b``'s weights (:func:`whilecli.io.modelid.
    weights_relation`, :func:`whilecli.io.modelid.unsure_reason`): a provider's or Ollama's
    build whose name leaves out the variant or the size that would tell (``llama3.1:8b``,
    Ollama's chat build, beside ``Llama-3.1-8B``; ``ollama/llama3.1``), a hosted provider's
    endpoint (``together_ai/Qwen/Qwen3-8B``), or a thinking label (``Qwen3-8B-thinking``)."""
    return weights_relation(a, b) == UNSURE


def closest(name: str, seen: Iterable[str], n: int = 3) -> list[str]:
    """The names in ``seen`` nearest to ``name`` (difflib's ratio on the keys), best first."""
    names = sorted(set(seen))
    keys = {model_key(s): s for s in names}
    hits = difflib.get_close_matches(model_key(name), list(keys), n=n, cutoff=0.5)
    return [keys[h] for h in hits]
