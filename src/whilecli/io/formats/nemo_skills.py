"""NeMo-Skills generation outputs: one ``output-rs<seed>.jsonl`` per random seed, so the
rollouts of a task (``id``) are spread across files and k is the number of files. Each row has
the ``problem``, the ``generation``, the ``expected_answer`` and ``predicted_answer``, and a
boolean grade: ``symbolic_correct`` (math), ``judge_correct`` (an LLM judge) or ``is_correct``.
No model is recorded.

A run with no random seed writes ``output.jsonl``: its greedy evaluation (the generation
config's temperature is 0 unless set), which NeMo-Skills' metrics report apart from the
seeds' pass@k. Beside ``output-rs<seed>.jsonl`` files it is another evaluation
(:func:`named_decoding`)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from whilecli.io.aliases import NEMO_SKILLS_GRADES
from whilecli.io.shape import Shape

NAME = "nemo-skills"
FILE_NAME = re.compile(r"output-rs\d+\.jsonl(\.gz|\.zst)?")


def detect(shape: Shape, file_name: str) -> bool:
    return bool(FILE_NAME.fullmatch(file_name)) or (
        shape.has("generation") and any(shape.has(a) for a in NEMO_SKILLS_GRADES)
    )


#: The greedy run's file, beside the seeds' files.
GREEDY_FILE = re.compile(r"output\.jsonl(\.gz|\.zst)?")


def named_decoding(path: Path | None) -> tuple[str, str] | None:
    """How a NeMo-Skills file was decoded, by its name, where the greedy run's
    ``output.jsonl`` and seeds' ``output-rs<seed>.jsonl`` lie in one folder: ``greedy`` or
    ``sampled``, with the name that says so; None where they do not (a folder of seeds alone
    is one evaluation, whatever its sampler)."""
    if path is None:
        return None
    if GREEDY_FILE.fullmatch(path.name):
        other, found = FILE_NAME, ("greedy", f"{path.name}: NeMo-Skills' run with no random seed")
    elif FILE_NAME.fullmatch(path.name):
        other, found = GREEDY_FILE, ("sampled", f"{path.name}: NeMo-Skills' run of one seed")
    else:
        return None
    try:
        with os.scandir(path.parent) as entries:
            beside = any(other.fullmatch(e.name) for e in entries)
    except OSError:
        return None
    return found if beside else None
