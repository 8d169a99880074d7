"""lm-evaluation-harness ``samples_<task>_<stamp>.jsonl``: one row per (``doc_id``, ``filter``)
with ``doc``, ``target``, ``resps`` / ``filtered_resps`` and one key per metric; newer versions
add a ``metrics`` list and ``filter``, 0.4.x writes neither. The results file beside it
(``results_<stamp>.json``, or renamed) names the model (``model_name``), the task and its
metrics. The pass/fail is the first 0/1 metric; a continuous one (``bleu_max``) never is."""

from __future__ import annotations

from whilecli.io.shape import Shape

NAME = "lm-eval"


def detect(shape: Shape) -> bool:
    has = shape.has
    return has("doc_id") and (has("filter") or has("resps") or has("filtered_resps"))
