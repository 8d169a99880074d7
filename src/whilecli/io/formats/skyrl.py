"""SkyRL evaluation dumps: ``{export_path}/dumped_evals/{global_step}_evals/{data_source}.jsonl``,
one line per generated sample, and ``aggregated_results.jsonl`` (the eval metrics) beside them
(``NovaSky-AI/SkyRL``, ``skyrl_train/utils/trainer_utils.py``:
``dump_per_dataset_eval_results``).

A line: ``input_prompt`` and ``output_response`` (the prompt's and the reply's token ids
decoded), ``score`` (the reward: a number, or token-level rewards whose sum is the reward),
``stop_reason`` (the generator's: ``length`` when the reply hit the token limit), ``env_class``,
``env_extras`` and ``data_source``. No id and no model are written: the task is a hash of
``input_prompt`` (the ``n_samples_per_prompt`` samples of a prompt are its rollouts), and the
evaluation is the data source the file is named by.
"""

from __future__ import annotations

from pathlib import Path

from whilecli.io.shape import Shape

NAME = "skyrl"
#: The metrics file written beside the per-dataset rows: no rows of its own.
AGGREGATED = "aggregated_results.jsonl"


def detect(shape: Shape) -> bool:
    return (
        shape.has("input_prompt")
        and shape.has("output_response")
        and shape.has("score")
        and (shape.has("env_class") or shape.has("data_source"))
    )


def data_source(path: Path) -> str:
    """The evaluation a dump file holds: the data source it is named by, at the step its
    folder names (``global_step_10_evals``): two steps' evaluations are two checkpoints'."""
    name = path.name
    for suffix in (".gz", ".zst", ".jsonl"):
        name = name.removesuffix(suffix)
    step = path.parent.name.removesuffix("_evals")
    return f"{name} at {step}" if step != path.parent.name else name
