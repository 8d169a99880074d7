"""Training rows and held-out rows (DESIGN section 1, "Pooling").

A trainer writes the rollouts it trains on beside those it evaluates on held-out prompts:
TRL's ``completions/train/`` and ``completions/eval/`` (rows with a ``mode`` column), Tinker's
``train_rollout_summaries.jsonl`` beside ``eval_<name>_rollout_summaries.jsonl`` (``split``),
prime-rl's ``step_N/train`` and ``step_N/eval``, a dataset's ``split`` column. The two are
different evaluations (other prompts, often another sampler and another k): pooled, the
held-out set's saturated or empty tasks read as the training pool's band. They are read
apart, or pooled only on purpose (``--pool``).

A split is named by a column (:data:`COLUMNS`) whose every sampled value is a split's word
(:data:`TRAIN`, :data:`HELD_OUT`), else by the path: the file's name (``train_…``,
``…_eval``, ``test.jsonl``), else the nearest folder named for one (``train/``, ``eval/``,
``eval-rollout/``; a trainer's ``rollout/``, training rows). Test, validation and evaluation rows are one kind here, held out: it is
training rows beside held-out ones that the reader refuses to pool.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import PurePath

from whilecli.io.aliases import EXTRA_PLACES
from whilecli.io.factors import value_at
from whilecli.io.shape import Shape, split_path

__all__ = ["COLUMNS", "HELD_OUT", "TRAIN", "column", "kind", "of_path", "paths"]

#: Columns that name the split a row belongs to, where their values are split words.
COLUMNS = ("split", "mode", "phase", "stage", "subset")
#: Words for training rows.
TRAIN = frozenset({"train", "training"})
#: Words for held-out rows: evaluation, test and validation sets.
HELD_OUT = frozenset(
    {"eval", "evals", "evaluation", "test", "testing", "val", "valid", "validation", "dev"}
)
#: What parts a name's words.
_SEPARATORS = re.compile(r"[_\-.\s]+")
#: Folders named for a split: its word (``train/``, ``eval/``), or a word for evaluation or
#: training that begins the name (``eval-rollout/``, ``train_rollouts/``); not ``test_x/``,
#: a test harness's temporary folder.
_FOLDER_HEADS = frozenset({"eval", "evals", "train", "training", "validation"})
#: Folders a trainer writes its training rollouts to (verl's ``trainer.rollout_data_dir``
#: beside its ``validation_data_dir``): training rows, as a folder's whole name only (a
#: file ``rollout_eval.jsonl`` is not one, nor a ``rollouts/`` folder, any harness's).
ROLLOUT_FOLDERS = frozenset({"rollout", "rollout_data"})


def kind(value: object) -> str | None:
    """``train`` or ``eval`` for a split's word (any case, spaces around), else None."""
    if not isinstance(value, str):
        return None
    word = value.strip().lower()
    return "train" if word in TRAIN else "eval" if word in HELD_OUT else None


def paths(shape: Shape) -> list[str]:
    """The dotted paths of :data:`COLUMNS` the rows carry as text (at the top level, then in
    a row's extras: ``metadata.split``), in that order."""
    found = []
    for place in EXTRA_PLACES:
        for name in COLUMNS:
            node = shape.get(split_path(f"{place}{name}"))
            if node is not None and node.kinds - {"null"} and node.kinds - {"null"} <= {"string"}:
                found.append(f"{place}{name}")
    return found


def column(sample: Sequence[Mapping[str, object]], candidates: Sequence[str]) -> str | None:
    """The first of ``candidates`` (:func:`paths`, less those the plan reads for another
        field) whose every value in ``sample`` that is not null names a split, on at least one row (a frame's rows keyed by the path, or a JSON row's
    objects); None where none does."""
    for path in candidates:
        present = [v for v in (value_at(row, path) for row in sample) if v is not None]
        if present and all(kind(v) is not None for v in present):
            return path
    return None


def of_path(path: str | PurePath | None) -> tuple[str, str] | None:
    """The split a file's path names, and the name that says it: the file's own name first
    (``train_rollout_summaries.jsonl``, ``gsm8k_test.parquet``), else the nearest folder
    (``completions/eval/completions_00040.parquet``); None where neither does."""
    if path is None:
        return None
    pure = PurePath(path)
    words = _SEPARATORS.split(pure.name.lower().split(".")[0])
    for word in (words[0], words[-1]):  # train_rollout_summaries, gsm8k_test
        if (found := kind(word)) is not None:
            return found, pure.name
    for folder in pure.parents:
        name = folder.name.lower()
        head = _SEPARATORS.split(name, maxsplit=1)[0]
        if (found := kind(name)) is not None or (
            head in _FOLDER_HEADS and (found := kind(head)) is not None
        ):
            return found, f"{folder.name}/"
        if name in ROLLOUT_FOLDERS:
            return "train", f"{folder.name}/"
    return None
