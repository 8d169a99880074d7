"""LiveCodeBench graded rows (``lcb_runner/runner/main.py``): ``output/<model_repr>/
<scenario>_<n>_<temperature>[_cot]_eval_all.json``, one JSON array, one object per problem
with ``question_id``, ``code_list`` (its n samples) and ``graded_list`` (one grade each: the
rollouts). The model is named only by the folder (``model_repr``), where the file lies in the
tool's layout. The generations (``<...>.json``) and the summary (``<...>_eval.json``) beside it
are left out of a folder (:mod:`whilecli.io.formats.beside`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from whilecli.io.formats import Converted, entries

#: ``<scenario>_<n>_<temperature>[_cot][...]_eval_all.json`` (``Scenario.codegeneration_5_0.2``).
NAMED = re.compile(r"^(Scenario\.)?\w+_\d+_\d+(\.\d+)?.*_eval_all\.json$")


def is_eval_all(doc: list[Any]) -> bool:
    first = doc[0]
    return "question_id" in first and "graded_list" in first and "code_list" in first


def model_of(path: Any) -> str | None:
    """``model_repr`` from ``output/<model_repr>/<scenario>_<n>_<T>_eval_all.json``."""
    if not isinstance(path, Path) or not NAMED.match(path.name):
        return None
    return path.parent.name if path.parent.parent.name == "output" else None


def convert(doc: list[dict[str, Any]], path: Any) -> Converted:
    model = model_of(path)
    rows = doc if model is None else [r if "model" in r else {**r, "model": model} for r in doc]
    origins = {"model": "the folder name (LiveCodeBench output/<model_repr>/)"} if model else {}
    # model_repr is LiveCodeBench's display name (``DeepSeek-R1-Distill-Qwen-7B``)
    unsure = f"the output/<model_repr>/ folder ({model})" if model else None
    return Converted("json", rows, origins, positions=entries(len(rows)), model_unsure=unsure)
