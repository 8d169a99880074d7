"""Which model a model string names: one rule for every reader of model names.

People and tools write one model many ways: a Hub id (``Qwen/Qwen3-8B``), a bare name
(``Qwen3-8B``, any case), vf-eval's folder spelling (``Qwen--Qwen3-8B``), a local directory
(``/models/Qwen3-8B/``), a training checkpoint under it (``/models/Qwen3-8B/checkpoint-100``,
verl's ``…/global_step_100/actor/huggingface``) or a Hugging Face cache snapshot
(``~/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/<sha>``). :func:`model_identity`
turns each into one :class:`ModelId`: the organisation where the string says it, the model's
name, the size its name states and the training step a checkpoint folder states. Two strings
name the same model when their :attr:`ModelId.key` agree (the name, case-insensitively,
without the organisation); nothing else is forgiven (``Qwen3-8B-Base`` is another model).

The reading layer names each row's model with it (:func:`whilecli.io.facts.model_name`), and
the route's checks, the size read from a name and ``config`` compare with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

#: A checkpoint folder and the step it holds: ``checkpoint-100``, ``global_step_100``,
#: ``step_100``, ``step-100``, ``iter_0000100``, ``ckpt-100``.
_STEP_DIR = re.compile(r"(?i)^(?:checkpoint|global[_-]?step|step|iter(?:ation)?|ckpt)[_-]?(\d+)$")
#: Folders inside a checkpoint that name no model (verl's ``actor/huggingface``, ...).
_INNER = frozenset({"actor", "critic", "huggingface", "hf", "hf_model", "model", "policy"})
#: Billions of parameters in a name: ``0.6B``, ``8b``, ``30B`` of ``30B-A3B``.
_SIZE = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)\s*[bB](?![A-Za-z0-9])")
#: Experts times billions: ``8x7B`` (Mixtral) holds about 8 × 7.
_EXPERTS = re.compile(r"(?<![A-Za-z0-9.])(\d+)[xX](\d+(?:\.\d+)?)[bB](?![A-Za-z0-9])")
#: Millions, with two digits or more (``135M``, ``360m``; a ``1M`` is a context length).
_MILLIONS = re.compile(r"(?<![A-Za-z0-9.])(\d{2,4}(?:\.\d+)?)[mM](?![A-Za-z0-9])")
#: A string that is a path, not a Hub id: absolute, relative to here or home, or Windows.
_PATH = re.compile(r"^(?:/|\./|\.\./|~|[A-Za-z]:[\\/])")


@dataclass(frozen=True)
class ModelId:
    """What a model string names."""

    name: str  # the model's name as written (``Qwen3-8B``), without organisation or path
    org: str | None = None  # ``Qwen`` of ``Qwen/Qwen3-8B``, where the string says it
    size_b: float | None = None  # billions of parameters the name states
    step: int | None = None  # the training step a checkpoint folder states
    path: bool = False  # the string was a local path

    @property
    def key(self) -> str:
        """What two strings naming one model share: the name, lower case."""
        return self.name.lower()

    @property
    def anonymous(self) -> bool:
        """A local path whose folder names a run, not a model (``/ckpt/run7/step_100``): no
        organisation, no size. Which model it holds cannot be read from it."""
        return self.path and self.org is None and self.size_b is None

    @property
    def display(self) -> str:
        """The model as a report names it: ``Org/Name``, or ``Name``."""
        return f"{self.org}/{self.name}" if self.org else self.name


def _size(name: str) -> float | None:
    """Billions of parameters the name states: ``0.6B``, ``8x7B`` (56), ``135M`` (0.135)."""
    experts = _EXPERTS.search(name)
    if experts is not None:
        return float(experts.group(1)) * float(experts.group(2))
    found = _SIZE.search(name)
    if found is not None:
        return float(found.group(1))
    millions = _MILLIONS.search(name)
    return float(millions.group(1)) / 1000 if millions is not None else None


def _split_org(part: str) -> tuple[str | None, str]:
    """vf-eval's ``org--name`` folder spelling."""
    if "--" in part:
        org, name = part.split("--", 1)
        if org and name:
            return org, name
    return None, part


@lru_cache(maxsize=4096)
def model_identity(text: str) -> ModelId:
    """The model ``text`` names (see the module doc); an empty string names ``""``."""
    raw = text.strip()
    is_path = bool(_PATH.match(raw)) or raw.replace("\\", "/").count("/") >= 2
    parts = [p for p in raw.replace("\\", "/").split("/") if p not in ("", ".")]
    cached = [i for i, p in enumerate(parts) if p.lower().startswith("models--")]
    if cached:  # a Hugging Face cache: models--Org--Name/snapshots/<sha>
        org, name = _split_org(parts[cached[-1]][len("models--") :])
        return ModelId(name, org, _size(name), None, True)
    if not parts:
        return ModelId(raw)
    if not is_path:  # a Hub id or a bare name (either may be vf-eval's org--name)
        org, name = (parts[0], parts[1]) if len(parts) == 2 else _split_org(parts[-1])
        return ModelId(name, org, _size(name))
    step = None
    while True:  # strip a checkpoint folder and the folders inside it (verl's actor/huggingface)
        at = len(parts) - 1
        while at > 0 and parts[at].lower() in _INNER:
            at -= 1
        found = _STEP_DIR.match(parts[at]) if at > 0 else None
        if found is None:
            break
        step = int(found.group(1)) if step is None else step
        del parts[at:]
    org, name = _split_org(parts[-1])
    return ModelId(name, org, _size(name), step, True)


def model_key(text: str) -> str:
    """:attr:`ModelId.key` of ``text``."""
    return model_identity(text).key


def same_model(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` name one model."""
    return model_key(a) == model_key(b)
