"""OpenHands evaluation folders (``All-Hands-AI/OpenHands``, ``evaluation/benchmarks/swe_bench/``:
``run_infer.py`` writes ``<eval_output_dir>/output.jsonl`` and ``metadata.json``, with
``infer_logs/`` and ``llm_completions/``; ``eval_infer.py --input-file .../output.jsonl`` grades
it into ``output.swebench_eval.jsonl`` beside it, and ``scripts/eval/update_output_with_eval.py``
adds ``report.json``).

``output.jsonl`` holds one instance a line with the agent's ``test_result.git_patch`` and no
verdict: it is the ungraded inference output. ``output.swebench_eval.jsonl`` is the same lines
with ``test_result.report.resolved`` added: the graded rows (its fields are read through the
alias table: ``instance_id``, ``test_result.report.resolved``, ``metadata.llm_config.model``,
``error``). ``output.swebench.jsonl`` (the predictions converted for the SWE-bench harness),
``report.json`` (the same verdicts, summed up) and the log folders hold no other grade. So in a
folder that holds ``output.swebench_eval.jsonl``, that file is the folder's rows, and every other
file in the folder or under it is left out (named in a note). ``--n-runs`` writes one folder per
run (``..._run_1``, ``..._run_2``): each keeps its own graded file, so k is across folders.
"""

from __future__ import annotations

from typing import Any

from whilecli.io.formats.beside import OPENHANDS_GRADED, graded_only

#: The graded rows ``eval_infer.py`` writes beside the inference output.
GRADED = OPENHANDS_GRADED


def rows_only(sources: list[Any], notes: list[str] | None = None) -> list[Any]:
    """A folder's files, less what a tool's graded file beside them supersedes: the general
    rule of :mod:`whilecli.io.formats.beside` (OpenHands' ungraded ``output.jsonl``, report and
    logs; LiveCodeBench's, EvalPlus' and AlpacaEval's ungraded generations); the rest as they
    are."""
    return graded_only(sources, notes)
