"""verifiers ``vf-eval`` outputs: ``results.jsonl`` beside ``metadata.json`` (``env_id`` or, in
the Aug–Sep 2025 layout, ``env``; ``model``; ``sampling_args``). Rows carry ``prompt`` and
``completion`` message lists, ``example_id`` (``id`` in the old layout), ``reward`` and each
rubric function's score beside it (or a ``rewards`` dict), ``task`` (a label, never the task id),
and in newer versions ``is_truncated`` and ``stop_condition``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from whilecli.io.shape import Shape

NAME = "vf-eval"


def detect(shape: Shape, metadata: Any) -> bool:
    has = shape.has
    if has("prompt") and has("completion") and (has("example_id") or has("id")):
        return True
    return isinstance(metadata, dict) and "env_id" in metadata


def metadata_path(rows: Path) -> Path:
    return rows.parent / "metadata.json"
