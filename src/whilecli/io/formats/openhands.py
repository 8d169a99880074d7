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

from pathlib import Path
from typing import Any

from whilecli.io.formats import leave_out_beside

#: The graded rows ``eval_infer.py`` writes beside the inference output.
GRADED = "output.swebench_eval.jsonl"


def rows_only(sources: list[Any], notes: list[str] | None = None) -> list[Any]:
    """A folder's files, less what an OpenHands evaluation folder holds beside its graded
    rows (the ungraded ``output.jsonl``, the report, the logs); the rest as they are."""
    folders = [s.path.parent for s in sources if isinstance(s.path, Path) and s.path.name == GRADED]
    return leave_out_beside(
        sources,
        folders,
        lambda owner, path: path == owner / GRADED,
        notes,
        lambda count, shown: (
            f"OpenHands evaluation folder: its graded rows are {GRADED}; {count} other"
            f" files beside it ({shown}) are the ungraded inference output, reports and logs,"
            " left out"
        ),
    )
