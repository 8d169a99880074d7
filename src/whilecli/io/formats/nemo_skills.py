"""NeMo-Skills generation outputs: one ``output-rs<seed>.jsonl`` per random seed, so the
rollouts of a task (``id``) are spread across files and k is the number of files. Each row has
the ``problem``, the ``generation``, the ``expected_answer`` and ``predicted_answer``, and a
boolean grade: ``symbolic_correct`` (math), ``judge_correct`` (an LLM judge) or ``is_correct``.
No model is recorded."""

from __future__ import annotations

import re

from whilecli.io.aliases import NEMO_SKILLS_GRADES
from whilecli.io.shape import Shape

NAME = "nemo-skills"
FILE_NAME = re.compile(r"output-rs\d+\.jsonl(\.gz|\.zst)?")


def detect(shape: Shape, file_name: str) -> bool:
    return bool(FILE_NAME.fullmatch(file_name)) or (
        shape.has("generation") and any(shape.has(a) for a in NEMO_SKILLS_GRADES)
    )
