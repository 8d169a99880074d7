"""What a policy version is: one rule for the rows' versions and for ``--model M@VERSION``.

Trainers write one version many ways: a number (``100``; ``100.0`` where pandas upcast a
column with a gap), a step (``step_100``, ``global_step_100``, ``checkpoint-100``,
``iter_0000100``, ``ckpt-100``, ``v100``) or a checkpoint folder holding one
(``ckpt/global_step_100``, verl's ``…/global_step_100/actor/huggingface``). Each reads as its
step number (:func:`version_id`), so the rows and ``--model`` name one version however each
spells it. Any other text (``run-a``, ``v1.2``, a timestamp, a commit) is a version of its
own, compared as written. :func:`version_order` orders versions; a field named like a
version (``model_version``) holds a version, not a model, where its text reads as one
(:data:`VERSION_LIKE`). Rows that record no version take the one their file's path states
(:func:`path_step`: ``step_100/rollouts.jsonl``, ``rollouts_step100.jsonl``).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

#: The words a step is written after: ``checkpoint-100``, ``global_step_100``, ``step_100``,
#: ``step-100``, ``step100``, ``iter_0000100``, ``iteration_7``, ``ckpt-100``.
STEP_WORDS = r"(?:checkpoint|global[_-]?step|step|iter(?:ation)?|ckpt)[_-]?"
#: A checkpoint folder and the step it holds.
STEP_DIR = re.compile(rf"(?i)^{STEP_WORDS}(\d+)$")
#: Folders inside a checkpoint that name no model and no step (verl's ``actor/huggingface``).
INNER = frozenset({"actor", "critic", "huggingface", "hf", "hf_model", "model", "policy"})
#: An integral number written as a float (``100.0``): the integer's text is the version.
INTEGRAL = r"^(-?\d+)\.0*$"
#: A version's text that carries one step: a number (``100``, ``100.0``), a step word and
#: its number, or ``v`` / ``version`` and its number (``v7``).
_ONE_STEP = re.compile(rf"(?i)^(?:(?:{STEP_WORDS}|v|version[_-]?)(\d+)|(-?\d+)(?:\.0*)?)$")
#: Text that reads as a version, not a model's name: a step as above, or a dotted version
#: number (``v1.2``, ``1.2.3``). The pattern is polars' and Python's alike.
VERSION_LIKE = rf"(?i)^(?:{STEP_WORDS}|v|version[_-]?)?\d+(?:\.\d+)*$"
_VERSION_LIKE = re.compile(VERSION_LIKE)


def version_step(version: object) -> int | None:
    """The step number a version states, where it states exactly one in a step's form:
    ``100``, ``100.0``, ``step_100``, ``global_step_100``, ``checkpoint-100``, ``v100``, or a
    checkpoint folder's path ending in one (``ckpt/global_step_40``, verl's
    ``…/global_step_40/actor/huggingface``), alone or after ``model@``; None for any other
    version."""
    text = str(version).strip()
    if "@" in text:
        text = text.rpartition("@")[2].strip()
    parts = [p for p in text.replace("\\", "/").split("/") if p]
    while len(parts) > 1 and parts[-1].lower() in INNER:
        parts.pop()
    if not parts:
        return None
    if len(parts) > 1:  # a path: its last folder is a checkpoint's
        found = STEP_DIR.match(parts[-1])
        return int(found.group(1)) if found else None
    found = _ONE_STEP.match(parts[0])
    if found is None:
        return None
    return int(found.group(1) if found.group(1) is not None else found.group(2))


def version_id(version: object) -> str:
    """A version's identity: the part after ``@`` of ``model@version`` (or the version
    itself), as its step number where it states one (:func:`version_step`: ``step_100``,
    ``100.0`` and ``M@checkpoint-100`` are all ``100``), else its text as written."""
    text = str(version).strip()
    if "@" in text:
        text = text.rpartition("@")[2].strip()
    step = version_step(text)
    return text if step is None else str(step)


def same_version(a: object, b: object) -> bool:
    return version_id(a) == version_id(b)


def is_version_text(text: str) -> bool:
    """Whether ``text`` reads as a version (``v7``, ``7``, ``step_7``, ``v1.2``), not as a
    model's name."""
    return _VERSION_LIKE.match(text.strip()) is not None


def version_order(version: str) -> tuple[int, float, tuple[tuple[int, int, str], ...]]:
    """Numbers in number order (``10`` after ``9``), other versions after them in natural
    order: the digit runs of a text as numbers (``step_100`` after ``step_90``, ``v1.10``
    after ``v1.9``), the rest as text."""
    try:
        number = float(version)
    except ValueError:
        number = math.nan
    if math.isfinite(number):
        return (0, number, ())
    runs = _RUNS.findall(version)
    return (1, 0.0, tuple((0, int(r), "") if r[0] in _DIGITS else (1, 0, r) for r in runs))


def newer(a: str, b: str) -> bool | None:
    """Whether version ``a`` is newer than ``b``: known only where both state a step
    (:func:`version_step`); None where either is other text (``run-a``, a commit)."""
    x, y = version_step(a), version_step(b)
    return None if x is None or y is None else x > y


_DIGITS = "0123456789"
_RUNS = re.compile(r"[0-9]+|[^0-9]+")


#: A step a file's name states among its words: ``rollouts_step100``, ``eval-checkpoint-300``,
#: ``step_100_train`` (never inside a word: ``multistep2`` states none).
_FILE_STEP = re.compile(rf"(?i)(?<![a-z0-9]){STEP_WORDS}(\d+)(?![a-z0-9])")
#: How many folders above a file are read for a checkpoint's step folder: the file's own
#: (``step_100/rollouts.jsonl``) and the one above it (``global_step_100/eval/rows.jsonl``).
PATH_STEP_FOLDERS = 2


def path_step(path: Path) -> tuple[int, str] | None:
    """The policy step a file's path states, and the part that states it: its name, where
    it holds exactly one step (:data:`_FILE_STEP`: ``rollouts_step100.jsonl``), else the
    nearest of its :data:`PATH_STEP_FOLDERS` folders named as a checkpoint is
    (:data:`STEP_DIR`: ``step_100``, ``checkpoint-300``, ``global_step_7``). Dumps of two
    checkpoints kept in sibling folders are two policy versions, as rows recording them
    are; None where the path states no step."""
    found = _FILE_STEP.findall(path.name.split(".")[0])
    if len(found) == 1:
        return int(found[0]), path.name
    for folder in list(path.absolute().parents)[:PATH_STEP_FOLDERS]:
        step = STEP_DIR.match(folder.name)
        if step is not None:
            return int(step.group(1)), f"{folder.name}/"
    return None
