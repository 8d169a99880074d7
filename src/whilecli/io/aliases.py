"""Where each canonical field is found in other tools' rows: the alias tables of DESIGN
section 1, shared by every reader of :mod:`whilecli.io`.

First match wins in every table. ``task`` is a label (the environment's name), never a task
id. Dotted names are fields of a struct column (``task.key`` is ``{"task": {"key": ...}}``).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from whilecli.errors import UsageError

#: Task id columns; with none of them, a hash of the prompt (:data:`PROMPT_ALIASES`).
#: ``group_index`` is the group of rollouts of one prompt in a trainer's batch (OpenPipe ART
#: ``trajectories/<split>/<step>.parquet``, ``src/art/utils/trajectory_logging.py``; slime's
#: samples): right within one step, and where two steps' groups share an index but not a
#: prompt, the check of ids against prompts refuses them.
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
    "group_index",
    "task.key",
    "id",
)
#: The words of a column's name that say it names a prompt, and the last words that say it
#: is an id (``problem_idx``, ``prompt_index``, ``itemId``); a name with a word for a draw
#: or a run in it (``sample_idx``, ``seed_id``, ``step_index``) is none.
PROMPT_ID_WORDS = ("task", "problem", "prompt", "question", "item", "example", "doc", "query")
ID_WORDS = ("id", "idx", "index", "uid", "key", "no", "num", "number")
DRAW_ID_WORDS = (
    *("sample", "rollout", "seed", "attempt", "try", "draw", "gen", "generation", "run"),
    *("step", "turn", "epoch", "version", "batch", "rank", "worker", "shard", "response"),
)

#: A draw's index within its task (verl's ``sample_idx``, a harness's ``rollout_idx``):
#: with an attempt column beside it (:data:`ATTEMPT_NAMES`), the last attempt of each
#: (task, index) is the draw (:mod:`whilecli.io.attempts`).
SAMPLE_INDEX_NAMES: tuple[str, ...] = (
    *("sample_idx", "sample_index", "sample_id", "sample_num", "sample_no", "sample_number"),
    *("rollout_idx", "rollout_index", "rollout_id", "rollout_num", "draw_idx", "draw_index"),
    *("generation_idx", "generation_index", "gen_idx", "completion_idx", "completion_index"),
)
#: Which attempt of a draw a row is, as a number or a flag: ``attempt`` (1, 2, ...),
#: ``retry_count`` (0, 1, ...), ``is_retry`` (false, true). Never a count of attempts over
#: the whole task (``num_attempts``: :data:`DRAW_COUNT_ALIASES`).
ATTEMPT_NAMES: tuple[str, ...] = (
    *("attempt", "attempt_idx", "attempt_index", "attempt_number", "attempt_no", "attempt_num"),
    *("attempt_id", "try", "try_idx", "try_index", "try_number", "retry", "retry_idx"),
    *("retry_index", "retry_number", "retry_count", "retries", "num_retries", "n_retries"),
    *("is_retry", "retried", "was_retried"),
)
#: A field naming the attempt a row retries (``retry_of``): a retry where it holds one.
RETRY_OF_NAMES: tuple[str, ...] = ("retry_of", "retried_from", "retry_from", "retry_of_id")


def names_a_prompts_id(name: str) -> bool:
    """``name`` reads as a prompt's id: a word of :data:`PROMPT_ID_WORDS` and, last, one of
    :data:`ID_WORDS`, no word of :data:`DRAW_ID_WORDS` (``problem_idx``, ``questionIndex``)."""
    words = [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+", name)]
    return (
        len(words) >= 2
        and words[-1] in ID_WORDS
        and any(w in PROMPT_ID_WORDS for w in words[:-1])
        and not any(w in DRAW_ID_WORDS for w in words)
    )


#: The dataset or environment a row's task belongs to, where one file holds several: verl's
#: ``data_source``, verifiers' and NeMo Gym's environment names, a benchmark's subset. Read
#: only where a task id alias names the task and the same id stands under two or more of
#: its values (verl numbers each dataset's rows from 0 in ``index``): the task is then the
#: pair (:func:`whilecli.io.read` keys it ``value:id``). ``task`` is such a label too. Never
#: ``split`` (one task's draws are written under ``test`` and ``Test``, or a fold number, as
#: often as a dataset's splits number their rows from 0 alike), ``partition`` or ``shard``.
ENV_ALIASES: tuple[str, ...] = (
    "data_source",
    "env_id",
    "env",
    "environment",
    "dataset",
    "dataset_name",
    "benchmark",
    "subset",
    "task",
    "task_name",
)
#: Where the prompt text sits when no task id does (its hash becomes the task id), and what
#: task ids are checked against: SkyRL's eval dumps write ``input_prompt``; MATH, NuminaMath
#: and evalchemy's math examples ``problem``; MetaMathQA and TRL's PPO logs ``query``;
#: Alpaca and AlpacaEval ``instruction``; Arena-Hard's games ``user_prompt``; lighteval's
#: details the ``doc`` with its ``query``; MLflow's ``eval_results_table.json`` (``mlflow.evaluate``)
#: ``inputs``; Ragas' results (``EvaluationResult.to_pandas()``, ragas 0.2 on) ``user_input``. ``context`` is none: a reading-comprehension or
#: retrieval row holds its passage there beside the question, one passage for many tasks.
PROMPT_ALIASES: tuple[str, ...] = (
    "prompt",
    "responses_create_params.input",
    "question",
    "input",
    "input_prompt",
    "problem",
    "query",
    "instruction",
    "prompt_text",
    "user_prompt",
    "messages",
    "doc.query",
    "inputs",
    "user_input",
)
#: The model's reply: a file whose every reply is empty generated nothing (DESIGN section 1).
#: A chat list here (verifiers' ``completion``) is the reply's turns.
COMPLETION_ALIASES: tuple[str, ...] = ("completion", "generation", "predicted_text")
#: Reply columns read only where they hold text, after :data:`COMPLETION_ALIASES` (verl's
#: generation dumps write ``output``, SkyRL's eval dumps ``output_response``; NeMo Gym's
#: ``response`` is an API object, not a reply). ``text`` is not one: datasets keep the prompt or
#: a passage there.
TEXT_REPLY_ALIASES: tuple[str, ...] = (
    "response",
    "output",
    "output_response",
    "model_output",
    "generated_text",
    "prediction",
    "outputs",
)
#: Where an API response saved whole keeps its reply text, after :data:`TEXT_REPLY_ALIASES`:
#: an OpenAI chat completion's ``choices[0].message.content``, a text completion's
#: ``choices[0].text`` (and the many servers that answer in those shapes: vLLM, SGLang,
#: LiteLLM), a vLLM ``RequestOutput``'s ``outputs[0].text``, a sample object's ``text``.
API_REPLY_ALIASES: tuple[str, ...] = (
    *("choices[0].message.content", "choices[0].text", "outputs[0].text"),
    *("completions[0].text", "samples[0].text", "responses[0].text", "generations[0].text"),
)
#: A chat transcript holding the prompt and the reply: the reply is its turns from the first
#: assistant turn on (the prompt is the turns before it, :data:`PROMPT_ALIASES`). Read for the
#: reply only where no alias above holds one.
TRANSCRIPT_ALIASES: tuple[str, ...] = ("messages",)
#: Reward columns; booleans read as 1.0 / 0.0.
REWARD_ALIASES: tuple[str, ...] = (
    "reward",
    "score",
    "correct",
    "resolved",
    "symbolic_correct",
    "judge_correct",
    "is_correct",
    "is_resolved",
    "passed",
    "acc",
    "test_result.report.resolved",
)
#: Words in a grade column's name that say it grades the answer's correctness (the task
#: solved): such a column is the pass/fail a method is picked on.
CORRECTNESS_WORDS: tuple[str, ...] = (
    *("acc", "correct", "pass", "resolved", "solved", "success", "verif", "exact", "score"),
)
#: Words that say a grade column scores the form of a reply, not its correctness: a format,
#: tag or length reward, a style or repetition penalty (TRL's ``format_reward``,
#: ``cosine_scaled_reward``, open-r1's ``tag_count_reward``, DAPO's overlong penalty).
AUXILIARY_GRADE_WORDS: tuple[str, ...] = (
    *("format", "length", "len_", "_len", "style", "tag_", "xml", "cosine", "repetition"),
    *("penalty", "overlong", "token", "reasoning_steps", "language"),
)


#: Words of a column's name that say it marks a failure (``incorrect``, ``is_wrong``,
#: ``failed``, ``unsolved``): its true, or its 1, is a fail.
FAILURE_WORDS = frozenset(
    {"wrong", "fail", "fails", "failed", "failure", "failing", "error", "errors", "errored"}
    | {"invalid", "mistake", "mistaken", "bad", "incorrect", "unsolved", "unresolved"}
    | {"unsuccessful", "inaccurate", "inexact", "unverified", "unpassed", "nonpass"}
)
#: Words that negate the correctness word after them (``not_correct``, ``no_pass``).
_NEGATIONS = frozenset({"not", "no", "non", "never"})
_NAME_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def says_failure(name: str) -> bool:
    """Whether a column's name (its last part) says it marks a failure (:data:`FAILURE_WORDS`,
    or a correctness word after a negation: ``not_correct``, ``isNotPassed``): read as a
    grade, its true would be a pass, and every rate inverted."""
    words = [w.lower() for w in _NAME_WORDS.findall(name.rsplit(".", 1)[-1])]
    if any(w in FAILURE_WORDS for w in words):
        return True
    return any(
        a in _NEGATIONS and any(c in b for c in CORRECTNESS_WORDS)
        for a, b in zip(words, words[1:], strict=False)
    )


def correctness_first(names: Sequence[str]) -> list[str]:
    """Grade columns in the order a ``--map reward=`` hint offers them (DESIGN section 1: the
    reward is the pass/fail of the task): names saying correctness (:data:`CORRECTNESS_WORDS`)
    first, then the others, then names saying form (:data:`AUXILIARY_GRADE_WORDS`) last;
    the rows' order within each. A name that says failure (:func:`says_failure`:
    ``incorrect``, ``failed``) is never offered: ``--map reward=`` reads a pass as its true."""

    def rank(name: str) -> int:
        low = name.lower()
        if any(w in low for w in AUXILIARY_GRADE_WORDS):
            return 2
        return 0 if any(w in low for w in CORRECTNESS_WORDS) else 1

    return sorted((n for n in names if not says_failure(n)), key=rank)


#: NeMo-Skills' grades (a boolean each), also in :data:`REWARD_ALIASES`.
NEMO_SKILLS_GRADES: tuple[str, ...] = ("symbolic_correct", "judge_correct", "is_correct")
#: OpenHands' SWE-bench evaluation (``evaluation/benchmarks/swe_bench/eval_infer.py``,
#: ``output.swebench_eval.jsonl``) nests its verdict in ``test_result.report.resolved``, the model
#: in ``metadata.llm_config.model``.
#: terminal-bench writes ``is_resolved`` (null where the harness failed: ungraded), HumanEval-style
#: harnesses ``passed``, verl's reward functions ``acc``; NeMo-RL's training dumps a number under
#: ``rewards`` (a reward alias only where it holds numbers: a dict there is :data:`REWARD_PARTS`).
#: A grade alias holding a list: one grade per sample (read as one rollout per element) where it
#: is LiveCodeBench's ``graded_list`` or the row holds a list of replies (Qwen2.5-Math's
#: ``score`` beside ``code``); per token where the row holds one text reply (SkyRL's token-level
#: rewards: the reward is their sum); else undecided (refused, naming ``--map reward=NAME[]``).
GRADE_LIST_ALIASES: tuple[str, ...] = ("graded_list", *REWARD_ALIASES, "rewards", "scores")
#: Lists of replies, one per sample (LiveCodeBench ``code_list``, Qwen2.5-Math ``code``).
SAMPLE_REPLY_LISTS: tuple[str, ...] = (
    *("code", "code_list", "output_list", "outputs", "responses", "completions"),
    *("generations", "pred", "preds", "predictions"),
)
#: Lists of samples whose elements carry a grade (reasoning-gym ``completions[].score``).
SAMPLE_LIST_ALIASES: tuple[str, ...] = ("completions", "samples", "responses", "generations")
#: A row holding a prompt's k samples (an ``n=8`` request, a best-of-n dump, OpenR1-Math's
#: ``generations``) beside its list of k grades is read as k rows, one per sample
#: (:func:`whilecli.io.plan.per_sample`): every list below that holds one value per sample is
#: split with the grades, element by element, and each element read as the one-row-per-draw
#: reader reads that field. Lists of per-sample objects (OpenAI's ``choices``, vLLM's
#: ``outputs``, Gemini's ``candidates``, reasoning-gym's ``completions``): each sample's
#: object stands where a one-sample response keeps it (``choices[0].finish_reason``).
SAMPLE_HOLDERS: tuple[str, ...] = ("choices", "outputs", "candidates", *SAMPLE_LIST_ALIASES)
#: Lists of scalars, one per sample, named for the field each element is (a list under a
#: truncation flag's, a finish reason's, an error's or a token count's own name,
#: ``truncated: [false, true, ...]``), or in the plural: OpenR1-Math's ``finish_reasons``, a
#: client's ``errors``, and the reply lists of :data:`SAMPLE_REPLY_LISTS` (each element a
#: ``completion``). A scalar beside them applies to every sample.
SAMPLE_PLURALS: dict[str, str] = {
    "finish_reasons": "finish_reason",
    "stop_reasons": "stop_reason",
    "errors": "error",
    "exceptions": "exception",
}
#: With none of them: a reward in named parts (verifiers), ``{name: {score, weight} | None}``,
#: read as Σ score × weight (weight 1 when absent; a None part or score adds nothing).
REWARD_PARTS = "rewards"
#: Where harnesses keep a row's extra fields, each name of a kind read in every one of them,
#: top level first: ``metadata`` (inspect_ai samples, OpenAI evals, many harnesses), ``info``
#: (verifiers' rollout extras, gym's ``info`` dict), ``extra_info`` (verl's dataset rows and
#: generation dumps), ``extras`` and ``meta`` (lighteval's and other harnesses' per-row
#: extras). A field one of them holds is the row's own (``metadata.truncated`` is
#: ``truncated``).
EXTRA_PLACES: tuple[str, ...] = ("", "metadata.", "info.", "extra_info.", "extras.", "meta.")
#: Where an error is recorded, after :data:`EXTRA_PLACES`: ``result`` (an Anthropic Message
#: Batches line's ``result.error``, a harness's result object), ``state`` (verifiers' rollout
#: ``State``) and ``response`` (an OpenAI Responses API object saved whole).
ERROR_HOLDERS: tuple[str, ...] = (*EXTRA_PLACES, "result.", "state.", "response.")
#: Where a sampler or a client records the request a row was drawn with, beside
#: :data:`SAMPLING_PLACES`: ``request`` (a request body saved with its response: an OpenAI
#: Batch API line's ``body``, a client's log) and ``config`` (a harness's per-row generation
#: config). Read for a token cap, never for greedy decoding (a judge's settings are filed
#: there as often).
REQUEST_PLACES: tuple[str, ...] = ("request.", "config.")
#: Served-model names: what an OpenAI-compatible server is called with in place of the
#: model's own name (SGLang's and vLLM's ``--served-model-name`` set to ``default``, TGI's ``tgi``,
#: ``policy``, ``actor``; a harness's role name ``main``, ``local``). A model field
#: holding one names no model, so the row's next model field speaks
#: (``model: "default"`` beside ``model_name_or_path: Qwen/Qwen2.5-7B-Instruct``); any case.
PLACEHOLDER_MODELS = frozenset(
    {"default", "policy", "model", "actor", "main", "local", "current", "dummy"}
    | {"served", "served_model", "served-model", "local_model", "local-model"}
    | {"policy_model", "actor_model", "vllm", "sglang", "local-vllm", "local_vllm"}
    | {"openai", "server", "endpoint", "tgi", "llm", "custom", "fake", "mock"}
)
#: Field names that hold the model that wrote the row (a name, a path, or an object whose
#: ``name`` / ``id`` / ``model`` is one, or a one-element list of one).
MODEL_NAMES: tuple[str, ...] = (
    *("model", "agent_model", "model_name", "model_name_or_path", "model_id", "model_path"),
    *("served_model_name", "policy_model", "actor_model", "generation_model", "generator_model"),
    "hf_model",
)
#: Names a harness gives the writer by its role (``generator``, ``policy``, ``agent``,
#: ``llm``, ``engine``): as often a non-model word (``policy: "greedy"``, ``agent:
#: "terminus"``), so read only where the value looks like a model's name
#: (:data:`MODEL_LIKE`).
MODEL_ROLES: tuple[str, ...] = ("generator", "policy", "llm", "engine", "agent")
#: What a model's name looks like, searched in lower case: a Hub id (``Org/Name``), a size
#: (``7b``, ``135m``, ``8x7b``), or a model family's name (the families graders and writers
#: are drawn from, as :data:`whilecli.io.judge.GRADER_VALUE`). A polars (Rust) pattern: no
#: look-around.
MODEL_LIKE = (
    r"^[\w.-]+/[\w.-]+$|(?:^|[^a-z0-9.])\d+(?:[._p]\d+)?[bm](?:$|[^a-z0-9])|\d+x\d+b"
    r"|gpt|claude|gemini|\bo[134](?:\b|-)|llama|qwen|mistral|mixtral|deepseek|grok|command-r"
    r"|phi-?[234]|gemma|nemotron|olmo|kimi|glm|yi-|internlm|falcon|granite|hermes|sonnet|opus|haiku"
)
#: Where a model field stands besides :data:`EXTRA_PLACES`: a sampler's or a client's objects
#: (``sampling``, ``sampler``, ``request``, ``response``: an API response names its model;
#: NeMo Gym's ``response.model`` stands beside its request's, which is not read), a harness's
#: ``config`` and its agent's (verifiers traces' ``agent.config.model``), OpenHands'
#: ``metadata.llm_config``.
MODEL_PLACES: tuple[str, ...] = (
    *EXTRA_PLACES,
    *("sampling.", "sampler.", "request.", "response."),
    *("config.", "agent.config.", "metadata.llm_config."),
)
#: The model an API response names under another name than ``model``: a Gemini
#: ``GenerateContentResponse``'s ``modelVersion`` (``gemini-2.5-flash``), read in a response
#: saved whole under ``response`` (a top-level ``modelVersion`` is as often a version).
RESPONSE_MODEL_NAMES: tuple[str, ...] = ("modelVersion",)
#: The sub-fields of a model object that name it (``{"name": ..., "provider": ...}``).
MODEL_OBJECT_KEYS: tuple[str, ...] = ("name", "id", "model")


def _model_aliases() -> tuple[str, ...]:
    """Every place a model field is read, in order: each place of :data:`MODEL_PLACES` in
    turn, top level first; under each the names of :data:`MODEL_NAMES` (a model object's
    keys, :data:`MODEL_OBJECT_KEYS`, and a one-element list after ``model`` and
    ``model_name``), then the role names (:data:`MODEL_ROLES`). On the top level
    ``model_version`` and ``policy_version`` (a model where it carries ``@``) come after
    ``agent_model``, as they always have."""
    out: list[str] = []
    for place in MODEL_PLACES:
        names = MODEL_NAMES
        if not place:
            names = (*MODEL_NAMES[:2], "model_version", "policy_version", *MODEL_NAMES[2:])
        for name in names:
            out.append(place + name)
            if name in ("model", "model_name"):
                out.extend(f"{place}{name}.{key}" for key in MODEL_OBJECT_KEYS)
                out.append(f"{place}{name}[0]")
        out.extend(place + role for role in MODEL_ROLES)
        if place == "response.":
            out.extend(place + name for name in RESPONSE_MODEL_NAMES)
    return tuple(dict.fromkeys(out))


#: Places whose model field names the writer as often as a grader's, a dataset's or a tool's
#: (a judge's ``config.model``, verl's ``extra_info`` from the dataset, a reward model's
#: ``info.model``), and names that do the same (the role words; ``generation_model``, the
#: model that wrote a dataset's reference answer).
UNSURE_MODEL_PLACES: tuple[str, ...] = (
    "metadata.",
    "info.",
    "extra_info.",
    "extras.",
    "meta.",
    "config.",
)
UNSURE_MODEL_NAMES: tuple[str, ...] = (*MODEL_ROLES, "generation_model", "generator_model")


def unsure_model_alias(alias: str) -> bool:
    """Whether a model alias's field may name another model than the writer's
    (:data:`UNSURE_MODEL_PLACES`, :data:`UNSURE_MODEL_NAMES`): read after every sure one, and
    a verdict resting on it alone is provisional."""
    place, _, name = alias.rpartition(".")
    head = name.partition("[")[0]
    if head in UNSURE_MODEL_NAMES or place.rpartition(".")[2] in UNSURE_MODEL_NAMES:
        return True
    if alias.startswith("metadata.llm_config."):
        return False
    return any(alias.startswith(p) for p in UNSURE_MODEL_PLACES)


#: The model that wrote the row (``M@version`` keeps the version apart): every name of
#: :data:`MODEL_NAMES` and :data:`MODEL_ROLES` in every place of :data:`MODEL_PLACES`
#: (:func:`_model_aliases`), the unsure ones (:func:`unsure_model_alias`) after every other,
#: each row's first that names a model read.
MODEL_ALIASES: tuple[str, ...] = tuple(
    sorted(_model_aliases(), key=lambda alias: unsure_model_alias(alias))
)

#: The policy version that wrote the row, where no ``model@version`` says it: a string or a
#: number (a trainer's step), each read as its text. First match wins, row by row.
#: ``weight_version`` is SGLang's ``meta_info["weight_version"]`` (the weights that served the
#: request; slime gathers it into ``weight_versions``), kept flat or under ``meta_info``;
#: ``metadata.policy_version`` the same key in the ``metadata`` object where harnesses keep a
#: row's extra fields; ``step`` a trainer's step (TRL completion tables, verl's dumps, Prime
#: RFT); ``global_step`` ROLL's per-sample column and the Hugging Face ``Trainer``'s
#: ``state.global_step``; ``checkpoint_step`` a checkpoint's. The other names trainers and
#: harnesses give the weights' version: ``training_step`` / ``train_step`` / ``trainer_step``
#: (the optimizer step whose weights sampled the row), ``policy_step``, ``checkpoint`` /
#: ``ckpt`` / ``checkpoint_id`` (``ckpt-350``, ``global_step_100``), ``model_version``
#: (``v0`` .. ``v7``; also a model alias, read as a model only where its text is no version:
#: :data:`whilecli.io.versions.VERSION_LIKE`),
#: ``model_revision`` (a Hugging Face revision: a commit or a branch such as ``step100``),
#: ``weights_version``. Never ``iteration`` or ``turn``: an agent's loop counts its turns
#: there, and one policy writes every turn of an episode.
VERSION_ALIASES: tuple[str, ...] = (
    "policy_version",
    "weight_version",
    "meta_info.weight_version",
    "metadata.policy_version",
    # the sampler's side, before the trainer's: a row sampled at step 10, consumed at 12
    *("behavior_version", "behavior_policy_version", "sampler_version", "sampler_step"),
    *("rollout_version", "rollout_step", "generation_step", "generator_step", "inference_step"),
    "step",
    "global_step",
    "checkpoint_step",
    "training_step",
    "train_step",
    "trainer_step",
    "policy_step",
    "checkpoint",
    "ckpt",
    "checkpoint_id",
    "model_version",
    "model_revision",
    "weights_version",
)
#: How many policy updates behind the trainer each row was sampled (an async sampler's
#: staleness): 0 is the policy you train, 2 a copy two steps older. Read where no
#: :data:`VERSION_ALIASES` field is, as the version ``-lag`` (:func:`whilecli.io.plan._model`),
#: the policy you train at 0 (:attr:`whilecli.io.facts.Facts.version_lag`).
LAG_ALIASES: tuple[str, ...] = (
    *("staleness", "policy_staleness", "sample_staleness", "off_policy_steps"),
    *("offpolicyness", "off_policyness", "policy_lag", "version_lag", "steps_behind"),
)
#: An episode's id, where the rows carry one (text or a number): a rollout is one episode,
#: so rows of one task that repeat an episode id are its turns (or the episode written
#: twice), not rollouts, and are refused (:func:`whilecli.io.read.refuse_turns`). Read in
#: every place of :data:`EXTRA_PLACES` (``metadata.episode_id``, ``info.trajectory_id``,
#: ``extra_info.traj_id``), top level first. Not an index within a group (tinker's
#: ``traj_idx``, unique within its task anyway).
EPISODE_NAMES: tuple[str, ...] = (
    *("episode_id", "trajectory_id", "traj_id", "episode_uuid", "trajectory_uuid"),
)
EPISODE_ALIASES: tuple[str, ...] = tuple(p + n for p in EXTRA_PLACES for n in EPISODE_NAMES)
#: No id that names an episode as often as something wider or narrower is an episode alias
#: (``conversation_id``, ``session_id``, ``chat_id``, ``thread_id``, ``rollout_id``,
#: ``sample_id``, ``run_id``): the n choices of one request share its ``chat_id`` and one
#: sandbox's attempts its ``session_id``, and rows whose turns share one cannot be told from
#: them by the ids alone.
#: A turn's index within its episode, named where rows repeat an episode: read as a
#: version (:data:`VERSION_ALIASES`) it would be a turn index, not a policy's step.
TURN_ALIASES: tuple[str, ...] = ("turn", "turn_id", "turn_idx", "step", "step_id", "step_idx")
#: A turn's place within its episode, written on rows of one turn each where no episode id
#: stands beside it: rows of one task under several such indices, each index from the first
#: under it on as many rows or fewer, are turns of episodes (``turns`` and ``num_turns``
#: count an episode's turns and are no index). An agent's step index (``step_idx``,
#: ``step_id``, as :data:`TURN_ALIASES`) and a message's place in the conversation
#: (``message_index``, ``message_idx``) are one too; never a plain ``step`` or ``round``,
#: which count a trainer's steps or a run's rounds (a policy's version:
#: :data:`VERSION_ALIASES`).
TURN_INDEX_ALIASES: tuple[str, ...] = (
    *("turn", "turn_idx", "turn_index", "turn_id", "turn_number", "turn_num", "turn_no"),
    *("step_idx", "step_id", "message_index", "message_idx"),
)
#: A plain ``step``, read as a policy's version (:data:`VERSION_ALIASES`), is an agent's step
#: within its episode where the rows say so beyond doubt (:func:`whilecli.io.read.
#: _turn_indices`, strict): every task's rows run through steps 0, 1, 2, … with no gap, each
#: step on as many rows as the one before or fewer, fewer in a fifth of those tasks or more,
#: most tasks hold several steps and one task three or more. A trainer's steps do not: a
#: task is drawn at a few steps far apart, or at every checkpoint evaluated, each on the same
#: rows. Only in rows of no known tool (:data:`whilecli.io.plan.STEP_TURN_FORMATS`): a
#: tool's converter writes ``step`` as the version it read.
STEP_TURN_ALIASES: tuple[str, ...] = ("step",)
#: Where a row records the sampling parameters it was drawn with: flat, or in the object a
#: sampler or harness keeps them in (vLLM's and SGLang's ``sampling_params``, verifiers'
#: ``sampling_args``, Hugging Face's ``generation_config`` and ``generation_kwargs``,
#: lm-eval's ``gen_kwargs``, NeMo Gym's ``responses_create_params``). Never a generic object
#: (``metadata``, ``params``, ``request``, ``response``, ``sampling``, ``inference_params``):
#: a judge's or a retriever's settings are filed there as often (``metadata.temperature: 0``
#: of a grader, ``params.top_k: 1`` of a retrieval).
SAMPLING_PLACES: tuple[str, ...] = (
    *("", "sampling_params.", "sampling_args.", "generation_config.", "generation_kwargs."),
    *("gen_kwargs.", "responses_create_params."),
)
#: The temperature at or under which a sampler decodes greedily (vLLM's ``_SAMPLING_EPS``).
GREEDY_TEMPERATURE = 1e-5
#: ``--missing``: what an ungraded row (no grade, or NaN) counts as: left out, or a failure.
MISSING_CHOICES: tuple[str, ...] = ("skip", "fail")
#: Where a harness records an error in place of the reply, every one the rows carry read: a
#: value there records an error unless it records none (null, blank, ``false``, ``0``,
#: ``"None"``, ``"null"``, an empty object or list: :data:`NO_ERROR_TEXTS`). ``error``:
#: inspect_ai samples, OpenAI batch output lines, Braintrust and LangSmith runs, many
#: harnesses; ``exception``: W&B Weave calls; then ``error`` in every place of :data:`ERROR_HOLDERS`
#: (``metadata.error``, verifiers' ``info.error`` and ``state.error``, an Anthropic batch
#: line's ``result.error``, an OpenAI Responses API object's ``response.error``), and a sample
#: object's (``completions[0].error``: a row of samples read one sample a row,
#: :mod:`whilecli.io.samples`).
#: ``error`` (first) records one whatever stands beside it (DESIGN section 1); the others
#: only where the row holds no reply (:func:`whilecli.io.facts.reply_state`).
ERROR_ALIASES: tuple[str, ...] = (
    "error",
    "exception",
    *(place + "error" for place in ERROR_HOLDERS if place),
    *(f"{name}[0].error" for name in SAMPLE_LIST_ALIASES),
)
#: A failure's class or code, filed beside the reply: an API client's (``RateLimitError``,
#: ``APITimeoutError``, ``429``, ``overloaded_error``), or a grader's verdict on the model's
#: answer (BFCL's ``error_type``: ``simple_function_checker:wrong_func_name``). Any value there
#: records an error where the row's reply is empty or absent in rows that keep replies; in
#: rows that keep none, only a value that names a failed request
#: (:data:`whilecli.io.facts.REQUEST_FAILURE`).
ERROR_CLASS_ALIASES: tuple[str, ...] = ("error_type", "exception_type", "error_class", "error_code")
#: A column's name that says it records a harness's error where no list here holds it
#: (:func:`error_named`): ``api_error``, ``exception_message``, ``traceback``, ``crashed``,
#: ``request_failed``, ``generation_timeout`` (words joined by ``_``, ``-``, a space or
#: camelCase, any case). Read as an error field beside an empty or absent reply in rows that
#: keep replies (:data:`whilecli.io.plan._BESIDE_NO_REPLY`): a harness that writes its
#: failures beside the rows it graded 0 under a name of its own.
ERROR_NAME = re.compile(
    r"^(?:[a-z0-9]+_)*?(?:errors?|exceptions?|traceback|stack_?trace|crash(?:ed|es)?)"
    r"(?:_(?:message|msg|text|detail|details|info|str|repr|trace|name))?$"
    r"|^(?:request|api|call|http|network|connection|server|client|generation|inference|sampling"
    r"|rollout|llm|provider)_(?:failed|failure|timeout|timed_out|aborted)$"
)
#: What the model's own work failed at, named before ``_error`` (a parse or format error, its
#: code's exception, an answer's distance from the truth): the model's graded failure, never
#: the harness's, whatever its reply.
MODEL_ERROR_NAME = re.compile(
    r"^(?:format|formatting|parse|parsing|syntax|compile|compilation|runtime|execution|exec"
    r"|test|tests|code|program|answer|extraction|abs|absolute|relative|rel|mean|squared|mse"
    r"|mae|rmse|numeric|type|value|key|name|index|assertion|attribute|zero_division|tool"
    r"|model|policy)_"
)


def error_named(name: str) -> bool:
    """Whether a column named ``name`` records a harness's error by its name
    (:data:`ERROR_NAME`, not :data:`MODEL_ERROR_NAME`)."""
    word = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    word = re.sub(r"[\s-]+", "_", word).lower()
    return bool(ERROR_NAME.match(word)) and not MODEL_ERROR_NAME.match(word)


#: Messages that record an error only where they are a harness error message (the matcher a
#: reply's text meets): NeMo-Skills writes ``error_message`` for its code sandbox's result
#: (``<not_executed>``, or the model's own code's exception: the model's failure), other
#: harnesses the client's error there.
ERROR_TEXT_ALIASES: tuple[str, ...] = ("error_message",)
#: Flags that say the reply is an error where true (``true``, ``1``, ``"yes"``): ``is_error``
#: of the Claude Agent SDK's result messages and of Anthropic tool results.
ERROR_FLAG_ALIASES: tuple[str, ...] = ("is_error",)
#: A request's status: one of :data:`ERROR_STATUSES` records an error (a request aborted or
#: cancelled); one of :data:`NO_REPLY_STATUSES` records one only on a row whose reply is empty
#: or absent (LangSmith runs and job queues write ``error`` and ``failed`` for a request that
#: returned nothing; a test harness writes ``error``, ``failed`` or ``timeout`` beside the
#: model's reply when the model's code failed: the model's failure, graded); any other value
#: (``ok``, ``success``, ``completed``) records none.
STATUS_ALIASES: tuple[str, ...] = ("status", "response.status")
#: A request that failed at the API, in the words harnesses and clients write for it (any
#: case, words joined by ``_``, ``-`` or a space): a rate limit, an overloaded or failing
#: server, a lost connection. Never the model's: read as a status beside no reply
#: (:data:`NO_REPLY_STATUSES`) and as a finish reason whatever stands beside it
#: (:data:`ERROR_REASONS`).
FAILED_REQUEST_WORDS = frozenset(
    {"rate_limit", "rate_limited", "ratelimit", "ratelimited", "rate_limit_exceeded"}
    | {"rate_limit_error", "ratelimiterror", "throttled", "too_many_requests", "overloaded"}
    | {"overloaded_error", "server_error", "internal_server_error", "internal_error"}
    | {"api_error", "apierror", "service_unavailable", "bad_gateway", "gateway_timeout"}
    | {"connection_error", "apiconnectionerror", "quota_exceeded", "resource_exhausted"}
)
#: A request that ran out of time (any case, joined as :data:`FAILED_REQUEST_WORDS`): the
#: API's, or a test harness's verdict on the model's code beside its reply. An error only
#: beside no reply, as a status or a finish reason.
TIMEOUT_WORDS = frozenset(
    {"timeout", "timed_out", "timedout", "request_timeout", "apitimeouterror", "deadline_exceeded"}
)
ERROR_STATUSES = frozenset({"aborted", "abort", "cancelled", "canceled"})
NO_REPLY_STATUSES = frozenset(
    {"error", "errored", "failed", "failure", "expired"} | TIMEOUT_WORDS | FAILED_REQUEST_WORDS
)
#: An HTTP response's status code (a number, or its text: ``429``, ``"503"``, ``"HTTP 502"``,
#: ``"503 Service Unavailable"``): ``status`` and ``response.status`` (beside their words,
#: :data:`STATUS_ALIASES`), ``status_code`` (LiteLLM's and the OpenAI client's exceptions,
#: an OpenAI Batch API line's ``response.status_code``), ``http_status``. A code from 400 to
#: 599 (a client error, a rate limit, a server error) records an error only where the row's
#: reply is empty or absent in rows that keep replies (:func:`whilecli.io.facts.http_error`);
#: in rows that keep no reply at all it is as often the task's own observable (the status a
#: tested app or a browsed page answered with: the model's graded failure), and says nothing.
#: Any other number says nothing: 2xx and 3xx are no error, and a status under 100 or past 599
#: is no HTTP code (``0`` / ``1`` a tool's pass and fail, a process's exit status).
HTTP_STATUS_ALIASES: tuple[str, ...] = (
    *("status", "status_code", "http_status", "http_status_code", "statusCode", "http_code"),
    *("response.status", "response.status_code"),
)
#: An HTTP error status as text (after :func:`word`): a code from 400 to 599, written whole
#: (``429``, ``429.0``), after ``HTTP`` or ``HTTP/1.1``, or before its reason phrase.
HTTP_ERROR = r"^(?:https?(?:/\d(?:\.\d)?)?\s*)?[45]\d\d(?:\.0+)?(?:\s+[a-z][a-z ._-]*)?$"
#: Where a client or a harness keeps a reply, or the whole API response it came in, beside
#: the row's extras (:data:`EXTRA_PLACES`): ``response`` (an OpenAI chat completion, an
#: Anthropic Message or a Gemini ``GenerateContentResponse`` saved whole), ``generation`` and ``output`` (a sampler's output object),
#: ``model_response`` (LiteLLM's ``ModelResponse``), ``response.body`` (an OpenAI Batch API
#: line), ``result.message`` (an Anthropic Message Batches result), ``meta_info`` (SGLang)
#: and ``details`` (TGI's generate details).
REPLY_HOLDERS: tuple[str, ...] = (
    *("response.", "generation.", "output.", "model_response."),
    *("response.body.", "result.message.", "meta_info.", "details."),
)
#: Objects a sampler or a client files a reply's finish / stop reason in beside
#: :data:`REPLY_HOLDERS`: ``generation_metadata``, LangChain's ``response_metadata`` and
#: ``generation_info``, ``llm_output``; any other top-level object holding a reason's name
#: is read too, but a judge's, a grader's or a tool's (:data:`NOT_REASON_HOLDERS`).
REASON_HOLDERS: tuple[str, ...] = (
    *("generation_metadata.", "generation_info.", "response_metadata.", "llm_output."),
    *("output_metadata.", "completion_metadata.", "sampling_output."),
)
#: Words in a top-level object's name that say its finish / stop reason is another call's
#: (a judge's, a grader's, a tool's, a reference's), never the reply's.
NOT_REASON_HOLDERS = re.compile(
    r"judge|grade|grading|reward|score|eval|critic|tool|result|reference|verifier|annotat",
    re.IGNORECASE,
)
#: Lists of a multi-turn episode's turns, each element with its own finish / stop reason:
#: the last one that records a reason decides the episode (its final reply).
TURN_LISTS: tuple[str, ...] = (
    *("turns", "steps", "messages", "trajectory", "history", "rounds", "calls"),
    *("interactions", "exchanges", "responses"),
)
#: The lists of replies a response keeps, read at their first element: OpenAI's ``choices``,
#: vLLM's ``outputs`` (a ``RequestOutput``), Gemini's ``candidates``, and the lists of sample
#: objects of :data:`SAMPLE_LIST_ALIASES` (reasoning-gym's ``completions``). A row of k
#: samples is read one sample a row, each sample's object first in its list
#: (:mod:`whilecli.io.samples`).
REPLY_LISTS: tuple[str, ...] = tuple(
    f"{name}[0]." for name in ("choices", "outputs", "candidates", *SAMPLE_LIST_ALIASES)
)
#: A finish / stop reason's names: OpenAI's and vLLM's ``finish_reason``, Anthropic's
#: ``stop_reason``, Gemini's ``finishReason``, Bedrock's ``stopReason``, Ollama's
#: ``done_reason``.
REASON_NAMES: tuple[str, ...] = (
    *("finish_reason", "stop_reason", "finishReason", "stopReason", "done_reason"),
)
#: Every place a finish / stop reason is read, one list for every reader (truncation,
#: :data:`TRUNCATION_ALIASES`; an error, :data:`REASON_ALIASES`): each name of
#: :data:`REASON_NAMES` on the top level and in each place of :data:`EXTRA_PLACES` and
#: :data:`REPLY_HOLDERS`, and in each list of :data:`REPLY_LISTS` there
#: (``response.choices[0].finish_reason``, ``response.candidates[0].finishReason``,
#: ``generation.finish_reason``), top level first. Never a ``result`` object's: a judge's or
#: a tool's result records its own call's end as often.
REASON_PLACES: tuple[str, ...] = tuple(
    dict.fromkeys(
        holder + inner + name
        for holder in (*EXTRA_PLACES, *REPLY_HOLDERS, *REASON_HOLDERS)
        for inner in ("", *REPLY_LISTS)
        for name in REASON_NAMES
    )
)
#: Stop / finish reasons, every one the rows carry read (:data:`REASON_PLACES`): one of
#: :data:`ERROR_REASONS` records an error, not a reply.
REASON_ALIASES: tuple[str, ...] = REASON_PLACES
#: Stop / finish reasons that record an error, any case: ``error`` (inspect_ai, LiteLLM),
#: ``abort`` (vLLM's and SGLang's aborted requests), ``aborted``, ``cancelled``, and a
#: request that failed at the API (:data:`FAILED_REQUEST_WORDS`: ``rate_limited``).
ERROR_REASONS = frozenset(
    {"error", "abort", "aborted", "cancelled", "canceled"} | FAILED_REQUEST_WORDS
)
#: Stop / finish reasons that record an error only beside no reply (:data:`TIMEOUT_WORDS`).
NO_REPLY_REASONS = TIMEOUT_WORDS
#: What a field that records an error holds when it records none, as text in lower case
#: (a JSON ``false`` reads ``"false"``; an object whose members are all null reads as ``{}``).
NO_ERROR_TEXTS = frozenset(
    {"", "false", "0", "0.0", "no", "none", "null", "nil", "nan", "n/a", "na", "undefined"}
    | {"{}", "[]", '""', "ok", "success"}
)


#: A finish / stop reason that means the reply was cut off at a token limit, in any case:
#: OpenAI and vLLM ``length``, Anthropic and inspect ``max_tokens`` (Gemini ``MAX_TOKENS``),
#: the Responses API ``max_output_tokens``, inspect ``model_length``, and the context's end.
CUT_REASONS = frozenset(
    {"length", "max_tokens", "max_output_tokens", "max_new_tokens", "max_length"}
    | {"model_length", "context_length", "max_total_tokens", "model_context_window_exceeded"}
)


#: What a written word is trimmed of before it is compared: space, tab, CR, LF.
BLANKS = " \t\r\n"


def word(text: str) -> str:
    """A word as every reader compares it (a flag, a grade, a finish / stop reason): trimmed
    of :data:`BLANKS`, in lower case where it is ASCII (``" Length\\n"`` is ``length``)."""
    trimmed = text.strip(BLANKS)
    return trimmed.lower() if trimmed.isascii() else trimmed


#: A finish / stop reason that names a limit the reply ran into, in the words no list
#: spells out (``exceeded_max_length``, ``FINISH_REASON_MAX_TOKENS``, ``max_turns``,
#: ``token_limit``, ``context_window_exceeded``, ``truncated``): cut off; a negated one
#: (``not_truncated``, ``no_length_limit``) and another limit (``max_retries_exceeded``,
#: ``rate_limit_exceeded``) are not.
CUT_WORDS = (
    r"length|max_?(?:new_?|output_?|total_?|input_?)?tokens?|tokens?_?limit"
    r"|context_?(?:length|window)|too_?long|\btruncated$|max_?(?:turns?|steps?|iterations?)"
)
#: The words of :data:`CUT_WORDS` that name a limit on tokens or the context (not a budget
#: of turns or steps): what cuts an episode whatever its stop condition is called.
TOKEN_LIMIT_WORDS = CUT_WORDS.rpartition("|max_?(?:turns?")[0]
#: A cut-off word negated (``not_truncated``, ``no_length_limit``): says nothing.
CUT_NEGATED = r"\b(?:not|no|non|un)[_ -]?(?:truncat|cut|length)"
#: Finish / stop reasons that say the reply ended on its own, as OpenAI, Anthropic, Gemini,
#: vLLM, SGLang, TGI and Ollama write them: not cut off. A reason in neither list is not
#: known (a tool's own word says nothing about the cap), never read as "not cut".
FINISHED_REASONS = frozenset(
    {"stop", "stopped", "eos", "eos_token", "stop_sequence", "stop_token", "end_turn"}
    | {"end_of_turn", "tool_calls", "tool_call", "tool_use", "function_call", "content_filter"}
    | {"safety", "recitation", "refusal", "pause_turn", "blocklist", "prohibited_content"}
    | {"spii", "malformed_function_call", "finish_reason_stop", "completed", "complete"}
    | {"finished", "done", "end", "natural", "matched", "load", "unload", "abort", "error"}
)
_CUT_WORDS, _CUT_NEGATED = re.compile(CUT_WORDS), re.compile(CUT_NEGATED)


def reason_text(reason: object) -> str | None:
    """A finish / stop reason as one word: a string as :func:`word` reads it; SGLang's
    ``{"type": "length", "length": 4096}`` its ``type``; a list of reasons its first."""
    if isinstance(reason, dict):
        reason = reason.get("type")
    elif isinstance(reason, list):
        reason = reason[0] if reason else None
    return word(reason) if isinstance(reason, str) else None


def cut_reason(reason: object) -> bool | None:
    """Whether a finish / stop reason says the reply was cut off: true for a cut-off reason
    (:data:`CUT_REASONS`, or a word naming a limit, :data:`CUT_WORDS`), false for one that
    says it ended on its own (:data:`FINISHED_REASONS`), None where it says neither (no
    reason, a number, a tool's own word)."""
    text = reason_text(reason)
    if text is None:
        return None
    if text in CUT_REASONS or (_CUT_WORDS.search(text) and not _CUT_NEGATED.search(text)):
        return True
    return False if text in FINISHED_REASONS else None


#: ``stop_condition``: the name of the condition that ended a verifiers or prime-rl episode.
#: A limit on tokens or the context (:data:`TOKEN_LIMIT_WORDS`: ``max_output_tokens``,
#: ``context_length``, ``prompt_too_long``, ``length``) cut it, as do these; any other name
#: is the environment's own end, not a cut: ``max_turns_reached`` ends every rollout of
#: verifiers' ``SingleTurnEnv`` (a ``MultiTurnEnv`` of ``max_turns=1``), ``is_completed``,
#: ``has_error`` (an error, read as one where the row holds no reply), a task's own stop.
STOP_CUT = frozenset({"max_turns", "compaction_failed"})
_TOKEN_LIMIT = re.compile(TOKEN_LIMIT_WORDS)


def cut_stop(condition: object) -> bool | None:
    """Whether a ``stop_condition`` says the episode was cut off (:data:`STOP_CUT`): true for
    a limit on tokens or the context and for :data:`STOP_CUT`, false for any other name,
    None where none is written."""
    text = reason_text(condition)
    if not text:
        return None
    limit = _TOKEN_LIMIT.search(text) is not None and _CUT_NEGATED.search(text) is None
    return text in STOP_CUT or limit


#: A truncation flag written as text (``"true"``, ``"False"``, ``"1"``): its words, any case.
FLAG_TRUE = frozenset({"true", "t", "yes", "y", "1", "1.0"})
FLAG_FALSE = frozenset({"false", "f", "no", "n", "0", "0.0"})

#: Flags that say a reply was cut off at its token limit, under the names other tools give
#: them (beside ``truncated`` and ``is_truncated``): ``was_truncated``; ``hit_max_tokens`` /
#: ``max_tokens_reached``; ``exceed_length`` / ``exceeded_length`` / ``length_exceeded``;
#: ``hit_length_limit``;
#: ``exceed_max_length`` / ``exceeded_max_length``; ``response_clipped`` (a reply clipped at the
#: response cap); llama.cpp server's ``stopped_limit`` (stopped at ``n_predict``). Never a bare
#: ``clipped``: a reward's, a gradient's or a ratio's clipping is written so as often. A flag
#: that marks a length *region* or a soft penalty is not one (:data:`LENGTH_REGION_FLAGS`).
CUT_FLAGS: tuple[str, ...] = (
    *("was_truncated", "hit_max_tokens", "max_tokens_reached"),
    *("exceed_length", "exceeded_length", "length_exceeded", "hit_length_limit"),
    *("exceed_max_length", "exceeded_max_length", "response_clipped", "stopped_limit"),
)
#: The cut flags of weaker standing: names other tools also give to other things
#: (``exceed_max_length``: a prompt-length filter's flag as often; ``response_clipped``: text
#: trimmed after the answer; ``stopped_limit``), read with :data:`DONE_FLAGS` and
#: ``stop_type`` only where a row records no finish reason, no long-standing flag
#: (``truncated``, ``is_truncated``, the rest of :data:`CUT_FLAGS`) and no token count beside
#: its cap (:func:`whilecli.io.plan._truncation`).
WEAK_CUT_FLAGS: frozenset[str] = frozenset(
    {"exceed_max_length", "exceeded_max_length", "response_clipped", "stopped_limit"}
)
#: Flags that mark a reply's length as inside a penalty region, never as cut off: verl's DAPO
#: reward manager writes ``overlong = overlong_reward < 0``, true for every reply longer than
#: ``max_resp_len - overlong_buffer.len``, finished or not (a correct reply that ended inside
#: the soft buffer is a real pass, only penalised in ``score``). Only a finish reason, a cut
#: flag (:data:`CUT_FLAGS`) or a token count at the cap says a reply was cut off; these say
#: nothing about it, so no reader takes them for truncation.
LENGTH_REGION_FLAGS: tuple[str, ...] = (
    *("overlong", "is_overlong", "overlong_reward", "overlong_penalty", "over_soft_limit"),
    *("soft_overlong", "in_overlong_buffer", "length_penalty"),
)
#: Flags that say the reply was *not* cut off where true: OpenR1's ``is_reasoning_complete``
#: (false where the ``<think>`` block never closed: generation stopped at the token cap
#: before the reasoning ended).
DONE_FLAGS: tuple[str, ...] = ("is_reasoning_complete",)
#: Marks a flag of :data:`DONE_FLAGS` in :data:`TRUNCATION_ALIASES`: read inverted.
DONE: frozenset[str] = frozenset({"false"})
#: llama.cpp server's ``stop_type`` (``"limit"``: stopped at ``n_predict``; ``"eos"``,
#: ``"word"``: finished; ``"none"``: not stopped).
STOP_TYPE_CUT = frozenset({"limit"})
#: An OpenAI Responses API ``status`` that says the response stopped before its end:
#: ``incomplete``, cut off where ``incomplete_details.reason`` beside it is
#: ``max_output_tokens`` (or records no reason), not where it is ``content_filter``;
#: ``completed`` is not cut. Read in ``response`` only: at the top level a ``status`` is any
#: harness's (``completed`` an episode's end, not its reply's).
CUT_STATUS: frozenset[str] = frozenset({"incomplete"})
#: Marks a reason read from every turn of a list (:data:`TURN_LISTS`) in
#: :data:`TRUNCATION_ALIASES`: the last turn's reason decides.
LAST_TURN: frozenset[str] = frozenset(set(CUT_REASONS))  # its own object: marked by identity
#: Truncation: (path, values that mean "cut off", compared in lower case); ``None`` = a
#: boolean flag (true/false, 0/1, or those words as text); :data:`DONE` = such a flag that
#: says the reply was finished (OpenR1's ``is_reasoning_complete``). The flags are read in every place
#: of :data:`EXTRA_PLACES` (``metadata.truncated``, verifiers' ``info.truncated``), top level
#: first; the finish / stop reasons in every place of :data:`REASON_PLACES` (verl's
#: ``extra_info.finish_reason``, a stored chat completion's
#: ``response.choices[0].finish_reason``, Anthropic's ``response.stop_reason``, Gemini's
#: ``response.candidates[0].finishReason``).
TRUNCATION_ALIASES: tuple[tuple[str, frozenset[str] | None], ...] = (
    *(
        (place + flag, None)
        for place in EXTRA_PLACES
        for flag in ("truncated", "is_truncated", *CUT_FLAGS)
    ),
    *((place + flag, DONE) for place in EXTRA_PLACES for flag in DONE_FLAGS),
    *((reason, CUT_REASONS) for reason in REASON_PLACES),
    *((place + "stop_type", STOP_TYPE_CUT) for place in EXTRA_PLACES),
    ("incomplete_details.reason", CUT_REASONS),  # an OpenAI Responses API response
    ("response.incomplete_details.reason", frozenset({"max_output_tokens"})),
    ("stop_condition", STOP_CUT),
    ("steps[].truncated", None),
    # a Responses API object's (a top-level ``status`` is any harness's word: not read)
    ("response.status", CUT_STATUS),
    *((f"{turns}[].{reason}", LAST_TURN) for turns in TURN_LISTS for reason in REASON_NAMES),
)
#: Where no flag or reason is recorded for a row, its reply's token count beside the cap it was
#: sampled under says it, by the same rule (:data:`TRUNCATION_ALIASES`): a count that reaches
#: the cap was cut off there, one under it was not; a count past the cap is not a count of the
#: tokens that cap limits (characters, a prompt's tokens beside the reply's, every turn's):
#: not known. First match wins in each table.
#: The reply's token count under the names tools give it (``num_tokens``, ``output_length``,
#: ``response_len``), in every place of :data:`EXTRA_PLACES`, then in a usage object (an
#: OpenAI or Anthropic response's ``usage``) and SGLang's ``meta_info``.
TOKEN_COUNTS: tuple[str, ...] = (
    *("completion_tokens", "num_completion_tokens", "response_length", "response_tokens"),
    *("num_response_tokens", "output_tokens", "num_output_tokens", "generated_tokens"),
    *("num_generated_tokens", "completion_length", "num_tokens", "output_length"),
    "response_len",
)
TOKEN_COUNT_ALIASES: tuple[str, ...] = tuple(
    dict.fromkeys(
        (
            *(place + name for place in EXTRA_PLACES for name in TOKEN_COUNTS),
            *("usage.completion_tokens", "usage.output_tokens", "meta_info.completion_tokens"),
            "meta_info.output_tokens",
        )
    )
)
#: The cap a reply was sampled under, under the names samplers give it (vLLM's
#: ``max_tokens``, Hugging Face's ``max_new_tokens``, lm-eval's ``max_gen_toks``, OpenAI's
#: ``max_completion_tokens``, verl's ``max_response_length``), in every sampler's place
#: (:data:`SAMPLING_PLACES`: ``sampling_args.max_tokens``, ``gen_kwargs.max_gen_toks``), then
#: in a request's (:data:`REQUEST_PLACES`) and the row's extras (:data:`EXTRA_PLACES`).
#: ``max_length`` and ``max_response_len`` only beside ``output_length`` and ``response_len``
#: (Hugging Face's ``max_length`` counts the prompt too).
TOKEN_CAPS: tuple[str, ...] = (
    *("max_tokens", "max_new_tokens", "max_completion_tokens", "max_output_tokens"),
    *("max_response_length", "max_gen_toks", "max_generation_tokens"),
)
#: A count that is read only against its own cap (:data:`TOKEN_CAPS` are read against any).
PAIRED_CAPS: dict[str, tuple[str, ...]] = {
    "output_length": ("max_length", "max_output_length"),
    "response_len": ("max_response_len",),
}
TOKEN_CAP_ALIASES: tuple[str, ...] = tuple(
    dict.fromkeys(
        place + name
        for place in (*SAMPLING_PLACES, *REQUEST_PLACES, *EXTRA_PLACES)
        for name in TOKEN_CAPS
    )
)
#: Per-token lists: the sampler's (behaviour) log-probs, the policy's, critic values.
LOGPROB_ALIASES: tuple[str, ...] = (
    "behavior_logprobs",
    "token_logprobs",
    "inference_logprobs",
    "completion_logprobs",
    "rollout_logprobs",
    "generation_logprobs",
    "logprobs",
)
VALUE_ALIASES: tuple[str, ...] = ("values",)
#: Per-token: which tokens the policy wrote (false on tokens the environment wrote).
MASK_ALIASES: tuple[str, ...] = ("action_mask", "loss_mask", "completion_mask", "token_loss_mask")
#: Per-token log-probs under the reference policy (the β KL) and under a teacher (OPD).
REF_LOGPROB_ALIASES: tuple[str, ...] = ("ref_logprobs",)
TEACHER_LOGPROB_ALIASES: tuple[str, ...] = ("teacher_logprobs",)
#: The sampler's log-probs: the alias table's log-prob columns other than the policy's own.
_BEHAVIOR_ALIASES = tuple(a for a in LOGPROB_ALIASES if a != "logprobs")
#: Per-token list fields (the update's batch) and the columns that carry them, first match wins.
TOKEN_LIST_ALIASES: dict[str, tuple[str, ...]] = {
    "logprobs": ("logprobs",),
    "behavior_logprobs": _BEHAVIOR_ALIASES,
    "action_mask": MASK_ALIASES,
    "values": VALUE_ALIASES,
    "ref_logprobs": REF_LOGPROB_ALIASES,
    "teacher_logprobs": TEACHER_LOGPROB_ALIASES,
}


def parse_field_map(items: Sequence[str], known: Collection[str]) -> dict[str, str]:
    """``["task_id=my_col", ...]`` (the CLI's ``--map``) → ``{"task_id": "my_col"}``, each
    field one of ``known`` and mapped once (dotted columns are nested fields)."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, column = item.partition("=")
        name, column = name.strip(), column.strip()
        if not sep or not name or not column:
            raise UsageError(f"--map {item!r}: expected FIELD=COLUMN, e.g. task_id=my_col")
        if name not in known:
            raise UsageError(f"--map {item!r}: unknown field {name!r}; fields: {', '.join(known)}")
        if name in out and out[name] != column:
            raise UsageError(f"--map {name} given twice ({out[name]!r} and {column!r})")
        out[name] = column
    return out


#: Per-task pass counts, one row per task: the draws that passed and the draws made (an
#: eval harness's ``num_correct`` of ``num_samples``, a pass@k script's ``n_correct`` of
#: ``n``). Each such row is read as its draws, ``passes`` of them passing: one rollout per
#: draw (:func:`whilecli.io.plan._pass_counts`).
PASS_COUNT_ALIASES = (
    *("num_correct", "n_correct", "correct_count", "num_passed", "n_passed", "passed_count"),
    *("num_pass", "n_pass", "pass_count", "num_successes", "n_success", "successes"),
)
DRAW_COUNT_ALIASES = (
    *("num_samples", "n_samples", "num_total", "n_total", "num_attempts", "n_attempts"),
    *("attempts", "num_generations", "n_generations", "num_rollouts", "n_rollouts", "trials"),
    *("n", "k"),
)
