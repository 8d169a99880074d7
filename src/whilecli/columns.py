"""Where each canonical field is found in other tools' rows: the alias tables of DESIGN
section 1, shared by the route's reader and the batch and row readers of the methods.

First match wins in every table. ``task`` is a label (the environment's name), never a task
id. Dotted names are fields of a struct column (``task.key`` is ``{"task": {"key": ...}}``).
"""

from __future__ import annotations

#: Task id columns; with none of them, a hash of the prompt (:data:`PROMPT_ALIASES`).
TASK_ALIASES: tuple[str, ...] = (
    "scenario_id",
    "task_id",
    "example_id",
    "prompt_id",
    "problem_id",
    "doc_id",
    "question_id",
    "instance_id",
    "_ng_task_index",
    "task.key",
    "id",
)
#: Where the prompt text sits when no task id does (its hash becomes the task id).
PROMPT_ALIASES: tuple[str, ...] = (
    "prompt",
    "responses_create_params.input",
    "question",
    "input",
    "messages",
)
#: Reward columns; booleans read as 1.0 / 0.0.
REWARD_ALIASES: tuple[str, ...] = ("reward", "score", "correct", "resolved")
#: With none of them: a reward in named parts (verifiers), ``{name: {score, weight} | None}``,
#: read as Σ score × weight (weight 1 when absent; a None part or score adds nothing).
REWARD_PARTS = "rewards"
#: The model that wrote the row (``M@version`` keeps the version apart).
MODEL_ALIASES: tuple[str, ...] = (
    "model",
    "agent_model",
    "model_version",
    "policy_version",
    "model_name",
    "sampling.model",
    "response.model",
)
