"""lighteval details: ``{output_dir}/details/{model_name}/{date_id}/details_{task}_{date_id}.parquet``,
one row per document of one task (``huggingface/lighteval``,
``src/lighteval/logging/evaluation_tracker.py``: ``EvaluationTracker.save_details`` writes
``asdict`` of each ``DetailsLogger.Detail`` of ``src/lighteval/logging/info_loggers.py``).

Two layouts:

- since 0.10, ``doc`` (the ``Doc`` of ``src/lighteval/tasks/requests.py``: ``query``,
  ``choices``, ``gold_index``, ``task_name``, ``id``, ``specific``), ``model_response`` (the
  ``ModelResponse`` of ``src/lighteval/models/model_output.py``: ``input``, ``text`` (one per
  sample), ``logprobs``, ``truncated_tokens_count`` (the *prompt's* truncation), ...) and
  ``metric`` (the document's score per metric name);
- before, ``example``, ``instruction``, ``full_prompt``, ``predictions``, ``gold``,
  ``truncated`` / ``padded`` (prompt token counts), ``choices``, ``gold_index``, ``metrics``
  and ``specifics``.

A task is a document: ``doc.id`` where the writer set one, else the query (``doc.query``,
``example``). A metric that is the mean correctness of a document's n samples
(``math_pass@1:4_samples``, ``pass@k:k=1&n=4``, ``avg@n:n=4``; n from the name, else the count
of ``model_response.text``) is its pass count: n rollouts, round(metric × n) of them passes
(:mod:`whilecli.io.draws`), the metric of most draws first. Else the grade is the first metric
that is 0 or 1 on the rows (``extractive_match``, ``em``, ``acc``); a metric over several
samples that is not their mean (``pass@10:64_samples``, ``maj@4``) is one score of the
document, never a rollout's grade. The reply's finish is not written (the truncation
counts are the prompt's). The model is ``config_general.model_name`` in
``results/{model_name}/results_{date_id}.json`` beside ``details/``; the evaluation is the
task the file is named by (``suite|task|fewshot``).
"""

from __future__ import annotations

from pathlib import Path

from whilecli.io.shape import Shape

NAME = "lighteval"
#: Where a document's id and prompt sit, in the two layouts (the id first, in the newer).
IDS = ("doc.id",)
PROMPTS = ("doc.query", "example", "full_prompt")


def detect(shape: Shape) -> bool:
    newer = shape.has("doc.query") and shape.has("model_response") and shape.has("metric")
    older = (
        shape.has("metrics")
        and shape.has("predictions")
        and (shape.has("example") or shape.has("full_prompt"))
    )
    return newer or older


def task_of(path: Path) -> str | None:
    """The task a details file is named by: ``details_{task}_{date_id}.parquet`` in the
    ``{date_id}`` folder (the date kept off the name's end)."""
    stem = path.name
    for suffix in (".parquet", ".jsonl", ".json"):
        stem = stem.removesuffix(suffix)
    if not stem.startswith("details_"):
        return None
    stem = stem.removeprefix("details_")
    date = path.parent.name
    if stem.endswith(f"_{date}"):
        return stem[: -len(date) - 1] or None
    return stem.rsplit("_", 1)[0] or None
