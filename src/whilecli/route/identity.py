"""Model names as people write them (DESIGN section 2, check 6): one rule for every command
that compares models (``route``, ``check --fail-on off-policy``, ``config --from``).

Two names are the same model when they agree case-insensitively, with or without the
organisation (``Qwen/Qwen3-0.6B`` = ``Qwen3-0.6B`` = ``qwen/qwen3-0.6b``), and in vf-eval's
folder spelling ``org--name`` (``qwen--qwen3-0.6b``). Nothing else is forgiven: a near miss
(``Qwen3-0.6B-Base``, ``Qwen3-1.7B``, ``Qwen3-0.6B-Instruct``) is another model, and
:func:`closest` names the names it was nearest to.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def model_key(name: str) -> str:
    """The part of a model name that identifies it: lower case, without the organisation.
    A local path names its model: a Hugging Face cache path ``…/models--Org--Name/snapshots/
    <sha>`` is ``Name``, ``/models/Name/`` is ``Name``."""
    key = name.strip().lower().rstrip("/")
    parts = key.split("/")
    cached = [p for p in parts if p.startswith("models--")]
    if cached:
        return cached[-1].split("--")[-1]
    key = parts[-1]
    if "--" in key:  # vf-eval folders: org--name
        key = key.split("--", 1)[1]
    return key


def size_from_name(model: str | None) -> float | None:
    """Billions of parameters the name states (``Qwen3-0.6B`` → 0.6; ``30B-A3B`` → 30)."""
    import re

    if not model:
        return None
    m = re.search(r"(?<![\w.])(\d+(?:\.\d+)?)[bB](?![a-zA-Z])", model_key(model))
    return float(m.group(1)) if m else None


def same_model(a: str, b: str) -> bool:
    return model_key(a) == model_key(b)


def closest(name: str, seen: Iterable[str], n: int = 3) -> list[str]:
    """The names in ``seen`` nearest to ``name`` (difflib's ratio on the keys), best first."""
    names = sorted(set(seen))
    keys = {model_key(s): s for s in names}
    hits = difflib.get_close_matches(model_key(name), list(keys), n=n, cutoff=0.5)
    return [keys[h] for h in hits]
