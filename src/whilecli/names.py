"""Method names: the key each command takes, and the label the reports print.

A user may type a method as the report prints it (``FlashReinforce``, ``GroupwiseGrading``),
as the command documents it (``flash_reinforce``), or in any case and with ``-`` for ``_``:
:func:`method_key` maps every such spelling to the one key.
"""

from __future__ import annotations

from collections.abc import Iterable

#: How each method is named in prose (the route's headline and plan).
METHOD_LABELS: dict[str, str] = {
    "grpo": "GRPO",
    "max_rl": "MaxRL",
    "rae": "prime-rl rae",
    "opd": "OPD",
    "opsd": "OPSD",
    "sft": "SFT",
    "groupwise": "GroupwiseGrading",
    "dpo": "DPO",
    "rm": "RM",
    "flash_reinforce": "FlashReinforce",
    "sao": "SAO",
    "bpco": "BPCO",
    "async": "Async",
    "reinforce_ada": "ReinforceAda",
}


def folded(text: str) -> str:
    """``text``'s letters and digits, case folded: ``Task_ID``, ``task-id``, ``Task ID`` and
    ``taskId`` all fold to ``taskid``."""
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def method_key(text: str, known: Iterable[str]) -> str | None:
    """The key among ``known`` that ``text`` names, or None.

    ``text`` matches a key or its label, ignoring case, spaces, ``-`` and ``_``
    (``FlashReinforce``, ``flash-reinforce`` and ``FLASH_REINFORCE`` are ``flash_reinforce``;
    ``prime-rl rae`` is ``rae``).
    """
    want = folded(text)
    for key in known:
        label = METHOD_LABELS.get(key, key)
        if want in (folded(key), folded(label)):
            return key
    return None
