"""Recognise what wrote a file and resolve each canonical field to an expression (a plan).

Formats (``Rows.format``): ``vf-eval`` (verifiers ``results.jsonl`` + ``metadata.json``),
``verifiers-traces`` (verifiers v1 ``traces.jsonl``), ``prime-rft`` (Prime hosted-RL sample
dumps), ``lm-eval`` (``samples_*.jsonl`` + ``results_*.json``), ``nemo-gym`` (NeMo Gym
rollouts), ``trl`` (TRL completion tables), ``whileai`` (the reference SDK's rows), else plain
``jsonl`` / ``parquet``. Field resolution follows DESIGN section 1 (first alias wins); a
format only adds what its writer records differently (a composite task key, a metric-named
reward, a sidecar model, a truncation rule).
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import polars as pl

from whilecli.errors import InputError, UsageError
from whilecli.io import decoding, draws, facts, words
from whilecli.io.aliases import (
    API_REPLY_ALIASES,
    COMPLETION_ALIASES,
    CUT_FLAGS,
    CUT_REASONS,
    CUT_STATUS,
    DONE,
    DRAW_COUNT_ALIASES,
    ENV_ALIASES,
    EPISODE_ALIASES,
    ERROR_ALIASES,
    ERROR_CLASS_ALIASES,
    ERROR_FLAG_ALIASES,
    ERROR_HOLDERS,
    ERROR_TEXT_ALIASES,
    EXTRA_PLACES,
    GRADE_LIST_ALIASES,
    GREEDY_TEMPERATURE,
    HTTP_STATUS_ALIASES,
    LAG_ALIASES,
    LAST_TURN,
    MODEL_ROLES,
    NOT_REASON_HOLDERS,
    PAIRED_CAPS,
    PASS_COUNT_ALIASES,
    REASON_ALIASES,
    REASON_NAMES,
    REQUEST_PLACES,
    REWARD_PARTS,
    SAMPLE_LIST_ALIASES,
    SAMPLE_REPLY_LISTS,
    SAMPLING_PLACES,
    STATUS_ALIASES,
    STEP_TURN_ALIASES,
    STOP_CUT,
    STOP_TYPE_CUT,
    TEXT_REPLY_ALIASES,
    TOKEN_CAP_ALIASES,
    TOKEN_COUNT_ALIASES,
    TOKEN_LIST_ALIASES,
    TRANSCRIPT_ALIASES,
    TURN_INDEX_ALIASES,
    VERSION_ALIASES,
    WEAK_CUT_FLAGS,
    correctness_first,
    error_named,
    names_a_prompts_id,
    says_failure,
    unsure_model_alias,
)
from whilecli.io.draw_parts import masked, reordered
from whilecli.io.formats import lighteval, lm_eval, nemo_rl, nemo_skills
from whilecli.io.formats.prime_rl import NAME as PRIME_RL
from whilecli.io.formats.registry import NAMES
from whilecli.io.rows import ABSENT
from whilecli.io.samples import Split, holds_replies, sole_reply_view, split_of
from whilecli.io.shape import (
    LITERAL_DOT,
    LOGPROB_ALIASES,
    MODEL_ALIASES,
    NUMBER,
    PROMPT_ALIASES,
    PROMPT_PARTS,
    REWARD_ALIASES,
    SCALAR,
    TASK_ALIASES,
    TRUNCATION_ALIASES,
    VALUE_ALIASES,
    Leaves,
    Shape,
    canonical_series,
    canonical_text,
    is_index,
    prompt_hash,
    prompt_hash_before_reply,
    prompt_part,
    prompt_part_hash,
    split_path,
)
from whilecli.io.sources import (
    Side,
    Source,
    Where,
    detect,
    lmeval_results,
    sidecar_cap,
    sidecar_env,
    sidecar_model,
    sidecar_temperature,
)
from whilecli.io.versions import VERSION_LIKE, path_step
from whilecli.names import folded

#: What ``--input-format`` takes: every format ``while formats`` lists (one registry).
FORMATS: tuple[str, ...] = NAMES
#: Columns a TRL completion table carries that are not reward functions.
TRL_NOT_REWARDS = frozenset({"step", "advantage", "prompt", "completion", "mode", "image"})


#: What a forced ``--input-format`` needs the rows to carry.
REQUIRED: dict[str, tuple[str, ...]] = {
    "verifiers-traces": ("task", "rewards"),
    "nemo-gym": ("response",),
    "nemo-rl": ("content", "rewards"),
    "prime-rft": ("step", "problem_id"),
    "lm-eval": ("doc_id",),
    "trl": ("step", "prompt"),
    "skyrl": ("input_prompt", "score"),
}
#: A writer's own id and prompt fields, looked for before the alias table's
#: (:mod:`whilecli.io.formats.lighteval`: ``doc.id``, ``doc.query`` or ``example``).
FORMAT_IDS: dict[str, tuple[str, ...]] = {lighteval.NAME: lighteval.IDS}
FORMAT_PROMPTS: dict[str, tuple[str, ...]] = {
    lighteval.NAME: lighteval.PROMPTS,
    lm_eval.NAME: lm_eval.PROMPTS,
}


def prompt_aliases(fmt: str) -> tuple[str, ...]:
    """Where a format's prompt text sits: its own fields, then the alias table's."""
    return (*FORMAT_PROMPTS.get(fmt, ()), *PROMPT_ALIASES)


@dataclass
class Plan:
    """How one file's rows become canonical columns."""

    format: str
    task_id: pl.Expr
    reward: pl.Expr
    truncated: pl.Expr
    model: pl.Expr  # the writer as recorded, "@version" suffix included
    policy_version: pl.Expr | None  # None: taken from the model where it carries "@"
    passed: pl.Expr | None  # set only by --map passed=COLUMN
    sources: dict[str, str]
    fields: dict[str, str]  # canonical field -> the name an error cites
    leaves: Leaves
    row_filter: pl.Expr | None = None
    has_logprobs: pl.Expr | None = None
    has_values: pl.Expr | None = None
    #: True where a completion holds something (not facts.empty_reply), null where absent;
    #: None: the rows carry no completion.
    generated: pl.Expr | None = None
    completion_field: str | None = None
    notes: list[str] = field(default_factory=list)
    env: str | None = None  # the evaluation the file's sidecars name (pooling)
    #: The prompt text, where the task id is not itself a hash of it (pooling: one task id
    #: carrying different prompts in different files); None where the rows hold none.
    prompt: pl.Expr | None = None
    slice: pl.Expr | None = None  # the --by column's value, as text
    slice_field: str | None = None  # the --by column, as the rows name it
    explode: bool = False  # --map reward=PATH[]...: one row per element of the list
    explode_truncated: bool = False  # --map truncated=PATH[]...: a flag per element, beside it
    #: A row of samples read one sample a row (:mod:`whilecli.io.samples`); None: a row is
    #: one rollout, or one task's pass count (:attr:`explode`).
    split: Split | None = None
    #: Rows read as not cut whose flag disputes their token count at the cap
    #: (:func:`cut_disputed`); None: no flag beside a count and its cap.
    cut_disputed: pl.Expr | None = None
    #: Each row's token cap as recorded (:func:`token_cap`); None: the rows record none.
    token_cap: pl.Expr | None = None
    #: Each row's reply token count where the rows record no cap beside it
    #: (:func:`reply_tokens`), and the field it is read from; None: a cap is recorded, or
    #: no count.
    reply_tokens: pl.Expr | None = None
    reply_tokens_field: str | None = None
    #: Rows whose error field names a request that failed at the API beside their reply
    #: (:data:`_CUT_SHORT`); None: the rows carry no such field, or no reply.
    cut: pl.Expr | None = None
    #: Rows whose reply is short and names a failure (:func:`whilecli.io.facts.
    #: failure_worded`); None: the rows keep no reply.
    worded: pl.Expr | None = None
    #: A column that may key the tasks finer than the ids, and its value as text
    #: (:func:`whilecli.io.subtasks.candidate`); None: none, or the rows carry a prompt.
    subtask: tuple[str, pl.Expr] | None = None
    #: The helper columns of each row's attempt code (:func:`whilecli.io.attempts.columns`)
    #: and whether the rows carry an attempt column, where the rows name a sample index, and
    #: where the draws were keyed; None: no sample index.
    attempts: tuple[list[pl.Expr], bool] | None = None
    attempts_field: str | None = None
    #: ``ok`` / ``empty`` / ``error`` per row (:func:`whilecli.io.facts.reply_state`).
    reply: pl.Expr = field(default_factory=lambda: pl.lit(facts.OK))
    #: True on a harness error that names a request failed at the API (a rate limit, a
    #: server's failure); None: the rows record no error that could.
    request_failed: pl.Expr | None = None
    #: The completion's draw key (:func:`whilecli.io.facts.draw_key`); None: no completion.
    draw: pl.Expr | None = None
    #: A key of the prompt in its one form (:func:`whilecli.io.shape.canonical_text`): ids
    #: are checked against prompts, and two pools pair by it. None: no prompt, or a task id
    #: that is a writer's composite of it.
    prompt_key: pl.Expr | None = None
    #: The task id keyed by the prompt, and the id column it would set aside (per-row ids).
    by_prompt: tuple[pl.Expr, str] | None = None
    #: :attr:`task_id` with an id that is no id (blank, a missing value's text) or one with
    #: whitespace around it kept as written (:func:`no_blank` left out), where that is the
    #: only difference: a group-by by it and a look at its distinct ids for such an id find
    #: the tasks :attr:`task_id` keys without stripping and lower-casing every row's id.
    #: None: none.
    task_key: pl.Expr | None = None
    prompt_field: str | None = None  # where the prompt text was read
    #: The column ``--map task_id=`` named; None: the task id is an alias's or the prompt's.
    task_mapped: str | None = None
    #: The row's dataset or environment (:data:`~whilecli.io.aliases.ENV_ALIASES`), as
    #: text, where the task id is an alias's; None: the rows carry none.
    row_env: pl.Expr | None = None
    #: A key of each row's (task, episode id), where the rows carry an episode id
    #: (:data:`~whilecli.io.aliases.EPISODE_ALIASES`): two rows of one key are turns of one
    #: episode, not two rollouts. None: no episode id (or rows of several rollouts each).
    episode: pl.Expr | None = None
    episode_field: str | None = None  # where the episode id was read
    #: A turn's index within its episode, where the rows carry one and no episode id
    #: (:data:`~whilecli.io.aliases.TURN_INDEX_ALIASES`), and where it was read.
    turn: pl.Expr | None = None
    turn_field: str | None = None
    #: The turn index is a plain ``step`` also read as a version
    #: (:data:`~whilecli.io.aliases.STEP_TURN_ALIASES`): rows are its turns only under the
    #: strict rule.
    turn_strict: bool = False
    #: Keys beside the grade's that spell it in another case (``Reward`` where ``reward``
    #: is read): rows that carry only such a key read as ungraded, and the facts name it.
    reward_spelled: tuple[str, ...] = ()
    #: Where every field naming the rows' model may name another's (a grader's, a
    #: dataset's): the first such field (:attr:`_Context.model_unsure`); None: a sure one.
    model_unsure: str | None = None
    #: The field whose prompt's end the task key guessed (:attr:`_Context.prompt_unsure`);
    #: None: every row marks it, or the key reads no such field.
    prompt_unsure: str | None = None
    #: The staleness field the versions were read from (:attr:`_Context.version_lag`).
    version_lag: str | None = None
    #: The prompt field keyed without the parts each row holds alone
    #: (:attr:`_Context.prompt_masked`); None: keyed as written.
    prompt_masked: str | None = None
    #: The prompt field keyed by its words in sorted order (:attr:`_Context.prompt_reordered`);
    #: None: keyed as written.
    prompt_reordered: str | None = None
    #: Where the sampled rows that keep a reply record greedy decoding, nearly all of them
    #: (:func:`_greedy_sampled`): the field, or the settings file beside them; None: not so.
    greedy_sampled: str | None = None
    #: How the file's rows were decoded, where nearly all the sampled rows, the settings
    #: beside them, or the writer's own naming say one way (:func:`_decoded_as`): ``greedy``
    #: or ``sampled``, with where it is said; None: not said. Files decoded apart are two
    #: evaluations (:func:`whilecli.io.read.refuse_mixed_pool`).
    decoded_as: tuple[str, str] | None = None
    #: Columns that may name a condition the draws were made under (a checkpoint, a
    #: sampler's setting: :func:`whilecli.io.factors.candidates`), each with its value as
    #: text; set by the reader once the plan has read its fields.
    factors: tuple[tuple[str, pl.Expr], ...] = ()
    #: The column that names each row's split, train or held out, and its value as text
    #: (:mod:`whilecli.io.splits`); set by the reader beside the factors. None: none.
    split_column: tuple[str, pl.Expr] | None = None

    @property
    def reward_given(self) -> bool:
        """Whether ``--map reward=COLUMN`` named the reward (the person said it grades)."""
        return self.sources.get("reward", "").endswith("(--map)")


def integral_id(task: pl.Expr) -> pl.Expr:
    """A numeric task id written as a float (``1.0``, ``-0.0``) reads as the integer (``1``,
    ``0``), and one a column renders in exponent form (``1e-7``) by its positional digits
    (``0.0000001``), as a JSON reader renders it, so ids are one task whichever reader or file
    type held them."""
    task = task.str.replace(r"^(-?\d+)\.0*$", "${1}").str.replace(r"^-0$", "0")  # -0.0 is 0.0
    # NaN or an infinity is no id: missing, refused at its row (never a task named "NaN")
    task = pl.when(~task.str.contains(r"(?i)^[+-]?(nan|inf|infinity)$")).then(task)
    exponent = task.str.contains(r"^-?[0-9.]+e[+-]?[0-9]+$")
    positional = task.map_batches(_positional, return_dtype=pl.String, is_elementwise=True)
    return pl.when(exponent).then(positional).otherwise(task)


def _positional(texts: pl.Series) -> pl.Series:
    import numpy as np

    def one(text: str | None) -> str | None:
        if text is None or "e" not in text:
            return text
        return np.format_float_positional(float(text), trim="-")

    if not texts.str.contains("e", literal=True).any():  # the usual column: nothing to do
        return texts
    return pl.Series(texts.name, [one(t) for t in texts.to_list()], dtype=pl.String)


#: Texts a writer leaves where a value was missing (``str(None)``, pandas' ``NaN``, SQL's
#: ``NULL``, JavaScript's ``undefined``), lowercased: never a task id, or every row missing
#: one would be one task.
MISSING_TEXTS = ("none", "null", "nan", "undefined")


#: Characters no one sees that are no whitespace (a zero-width space, a word joiner, a
#: byte-order mark): around a task id they are dropped as whitespace is.
INVISIBLE = "\u200b\u2060\ufeff"
#: What is dropped around a task id: Unicode whitespace (the White_Space characters, what
#: polars' ``strip_chars()`` drops) and :data:`INVISIBLE`.
_AROUND_IDS = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000"
    + INVISIBLE
)


def _mapped_path(shape: Shape, option: str, dotted: str, notes: list[str]) -> str:
    """The path an option's ``dotted`` names (:meth:`Shape.literal`: a nested path wins over
    a key with a dot). Where the rows hold both (a nested ``reward`` → ``x`` beside a key
    ``"reward.x"``), the report's notes say which was read and how to name the other."""
    found = shape.readings(dotted)
    if len(found) > 1:
        key = next(p for p in found if LITERAL_DOT in p)
        notes.append(
            f"{option} reads the nested path {dotted}; the rows also hold the key"
            f" {key.replace(LITERAL_DOT, '.')!r}: write {key.replace(LITERAL_DOT, chr(92) + '.')}"
            " to read that key"
        )
    return shape.literal(dotted)


def no_blank(task: pl.Expr) -> pl.Expr:
    """A task id without the whitespace (or :data:`INVISIBLE` characters) around it
    (``" t-1"`` is ``t-1``; case and digits
    are kept: ``T-1`` and ``t-01`` are other ids), in Unicode's composed form (NFC: ``café``
    written with a combining accent is ``café``, :func:`_composed`). One that is then empty or
    a missing value's text (:data:`MISSING_TEXTS`, in any case) is no id (null): read as one,
    every row without an id would be one task. Such a row is keyed by its prompt where it
    carries one, as a row without the field is."""
    word = task.str.strip_chars(_AROUND_IDS)
    said = (word.str.len_bytes() > 0) & ~word.str.to_lowercase().is_in(MISSING_TEXTS)
    return (
        pl.when(said).then(word).map_batches(_composed, return_dtype=pl.String, is_elementwise=True)
    )


#: A text that begins or ends with one of :data:`_AROUND_IDS` (a regular expression).
_AROUND_EDGE = "^[{0}]|[{0}]$".format("".join(f"\\x{{{ord(c):x}}}" for c in _AROUND_IDS))


def maybe_blank(task: pl.Expr) -> pl.Expr:
    """True for every task id that :func:`no_blank` reads otherwise (as null, or as other
    text), and for few others: an id that begins or ends with a character it drops, one no
    longer than the longest missing value's text (lower-casing never makes a text shorter in
    characters), or one holding a non-ASCII character (:func:`_composed` may compose it);
    null where the id is. An id past all three reads as written, so a table's ids are
    trimmed, lower-cased and composed to be compared only where this holds."""
    short = task.str.len_chars() <= max(len(text) for text in MISSING_TEXTS)
    wide = task.str.len_bytes() != task.str.len_chars()
    return task.str.contains(_AROUND_EDGE) | short | wide


def _composed(texts: pl.Series) -> pl.Series:
    """Each text in Unicode's composed form (NFC), so an id written with combining marks
    (NFD, as macOS file names and some tokenizers' decoders write it) is the id written
    composed. Only texts holding a non-ASCII character are normalised; a batch of ASCII ids
    (the usual one) is returned as it is."""
    wide = texts.str.len_bytes() != texts.str.len_chars()
    if not wide.any():
        return texts
    at = wide.arg_true()
    return texts.clone().scatter(at, texts.gather(at).str.normalize("NFC"))


def _prompt_keys(ctx: _Context, fields: list[str]) -> list[str]:
    """The prompt fields that key a task: every one the rows carry, but a field that holds
    a value of its own on every sampled row while another repeats (few-shot examples drawn
    per draw, the prompt and its reply together in ``input``): keyed by it, each draw would
    be a task of its own."""
    rows = ctx.sample or ctx.id_rows
    if len(fields) < 2 or not rows:
        return fields
    seen = {f: [str(v) for r in rows if (v := _value_at(r, f)) is not None] for f in fields}
    own = {f for f, vs in seen.items() if len(vs) > 1 and len(set(vs)) == len(vs)}
    repeats = [f for f in fields if f not in own and len(set(seen[f])) < len(seen[f])]
    return [f for f in fields if f not in own] if repeats else fields


#: Sampled rows a chat prompt's parts are weighed on before a part keys the task
#: (:func:`_repeating_part`): fewer say nothing of what repeats.
MIN_PART_ROWS = 16
#: The most rows of one task a part may group (:func:`_repeating_part`): a task's draws, not
#: one instruction shared by many questions.
MAX_PART_GROUP = 128


def _repeating_part(ctx: _Context, alias: str) -> str | None:
    """The part of a chat prompt (:data:`~whilecli.io.shape.PROMPT_PARTS`) that keys the task
    where the whole prompt varies per draw: as :func:`_prompt_keys` sets aside a field that
    holds a value of its own on every row, inside one message list. Read from the rows the
    plan holds; a part keys the task only where all of these hold: the whole prompt is one
    row's own on half the rows or more, while the part repeats (on a tenth of
    the rows or more, no group past a quarter of them or :data:`MAX_PART_GROUP`); the rest (a
    system turn, an earlier turn) is one template up to its digits (a timestamp, a seed) on
    nine rows in ten or more; and the rest's values are a draw's own, not a set shared across
    tasks: half of them or more stand beside one value of the part only. A rest that differs
    in words (a persona per row), or a few rests over many questions (three personas asked the
    same questions), is part of the task. None where no part does."""
    rows = ctx.sample or ctx.id_rows
    texts = [
        json.dumps(v, ensure_ascii=False)
        for r in rows
        if isinstance(v := _value_at(r, alias), list)
    ]
    n = len(texts)
    if n < MIN_PART_ROWS:
        return None
    for part in PROMPT_PARTS:
        split = [prompt_part(t, part, before_reply=alias == "messages") for t in texts]
        if any(s is None for s in split):
            continue
        kept = [canonical_text(s[0]) for s in split if s is not None]
        rest = [canonical_text(s[1]) for s in split if s is not None]
        beside: dict[str, set[str]] = {}
        for k, r in zip(kept, rest, strict=True):
            beside.setdefault(r, set()).add(k)
        own = sum(1 for ks in beside.values() if len(ks) == 1)
        templates = {re.sub(r"\d+", "#", r) for r in rest}
        if (
            _repeats_as_draws(kept)
            and len(templates) * 10 <= n
            and own * 2 >= len(beside) > 1
            and len(set(zip(kept, rest, strict=True))) * 2 >= n
        ):
            return part
    return None


def _masked_repeats(ctx: _Context, alias: str) -> bool:
    """A prompt that differs per draw only in a part of its own (a request's uuid or hash, a
    timestamp: :func:`whilecli.io.draw_parts.masked`), as :func:`_repeating_part` reads a chat
    prompt's turns: read from the rows the plan holds, true only where the whole prompt is
    one row's own on half the rows or more, the masked prompt differs from it on those rows
    and repeats (on a tenth of the rows or more, no group past a quarter of them or
    :data:`MAX_PART_GROUP`). Keyed by the whole prompt, each draw would be a task of its
    own: a k = 8 pool read as one rollout per prompt."""
    found = _own_prompts(ctx, alias, masked)
    if found is None:
        return False
    texts, own, kept = found
    changed = sum(1 for i in own if kept[i] != texts[i])
    return changed * 2 >= len(own) and _repeats_as_draws(kept)


def _own_prompts(
    ctx: _Context, alias: str, key: Callable[[pl.Expr], pl.Expr]
) -> tuple[list[str], list[int], list[str]] | None:
    """The sampled rows' prompts at ``alias`` (a list as its JSON text), the positions of
    those that are one row's own, and each prompt under ``key`` (:func:`whilecli.io.
    draw_parts.masked`, :func:`~whilecli.io.draw_parts.reordered`); None where fewer than
    :data:`MIN_PART_ROWS` rows hold one, or the prompt repeats on more than half of them."""
    rows = ctx.sample or ctx.id_rows
    texts = [
        v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
        for r in rows
        if isinstance(v := _value_at(r, alias), (str, list))
    ]
    if len(texts) < MIN_PART_ROWS:
        return None
    seen = Counter(texts)
    own = [i for i, t in enumerate(texts) if seen[t] == 1]
    if len(own) * 2 < len(texts):
        return None
    frame = pl.DataFrame({"t": texts}, schema={"t": pl.String})
    return texts, own, frame.select(key(pl.col("t")))["t"].to_list()


def _reordered_repeats(ctx: _Context, alias: str) -> bool:
    """A prompt whose words come in another order from draw to draw (a question's options
    shuffled per draw: :func:`whilecli.io.draw_parts.reordered`), as :func:`_masked_repeats`
    reads a part of a draw's own: read from the rows the plan holds, true only where the
    whole prompt is one row's own on half the rows or more, half of those rows or more share
    their words in sorted order with another row, and those keys repeat as a prompt's draws
    do (:func:`_repeats_as_draws`). Keyed by the whole prompt, each draw would be a task of
    its own: a k = 8 pool read as one rollout per prompt. A chat transcript (``messages``,
    whose reply is cut off its text before hashing) is not read so."""
    found = _own_prompts(ctx, alias, reordered)
    if found is None:
        return False
    _, own, kept = found
    shared = Counter(kept)
    return sum(1 for i in own if shared[kept[i]] > 1) * 2 >= len(own) and _repeats_as_draws(kept)


def _repeats_as_draws(keys: list[str]) -> bool:
    """Sampled rows' task keys repeat as a prompt's draws do: on a tenth of the rows or more
    (two at least), no key past a quarter of them or :data:`MAX_PART_GROUP` (one instruction
    shared by many questions)."""
    n = len(keys)
    return n - len(set(keys)) >= max(2, n // 10) and max(Counter(keys).values()) <= min(
        n // 4, MAX_PART_GROUP
    )


def _part_hashed(expr: pl.Expr, part: str, before_reply: bool) -> pl.Expr:
    """:func:`~whilecli.io.shape.prompt_part_hash` of a chat prompt's ``part``."""
    return expr.map_batches(
        lambda s: prompt_part_hash(s, part, before_reply),
        return_dtype=pl.String,
        is_elementwise=True,
    )


def _holds_text(shape: Shape, alias: str) -> bool:
    """The rows carry ``alias`` as text or a chat list."""
    kinds = shape.kinds_at(alias) - {"null"}
    return bool(kinds) and (kinds <= {"string"} or kinds == {"list"})


def _nemo_prompt_hash(contents: pl.Series) -> pl.Series:
    """:func:`~whilecli.io.shape.prompt_hash` of each NeMo-RL rollout's messages before its
    first reply (:func:`whilecli.io.formats.nemo_rl.prompt_texts`); a whole column, not
    elementwise: where no entry marks the prompt's end, the rows' shared prefix does."""
    texts = nemo_rl.prompt_texts(contents.to_list())
    return prompt_hash(pl.Series(contents.name, texts, dtype=pl.String))


def _hashed(expr: pl.Expr, prompt_only: bool = False) -> pl.Expr:
    fn = prompt_hash_before_reply if prompt_only else prompt_hash
    return expr.map_batches(fn, return_dtype=pl.String, is_elementwise=True)


def _reordered_hash(series: pl.Series) -> pl.Series:
    """:func:`~whilecli.io.shape.prompt_hash` of each text's words in sorted order
    (:func:`whilecli.io.draw_parts.reordered`), sorted inside the batch: the streaming
    engine runs the list operations of an expression ahead of a Python function slower than
    the function runs them itself (2.7 s against 1.2 s on 200,000 prompts)."""
    return prompt_hash(series.to_frame("t").select(reordered(pl.col("t"))).to_series())


def _first(
    shape: Shape,
    aliases: tuple[str, ...],
    kinds: frozenset[str],
    ctx: _Context | None = None,
    what: str = "a task id",
) -> str | None:
    """The first alias whose values are all of ``kinds``. With ``ctx``, an alias that holds
    such values on some rows and others (an object, a list) on other rows is refused at its
    first bad row, rather than the field silently falling to the next alias."""
    for alias in aliases:
        node_kinds = shape.kinds_at(alias)
        if node_kinds and (node_kinds - {"null"} <= kinds):
            return alias
        if ctx is not None and node_kinds & kinds:
            _refuse_mixed(ctx, alias, kinds, what)
    return None


def _first_other(ctx: _Context, alias: str, kinds: frozenset[str]) -> tuple[object, Where] | None:
    """The first sampled row's value at ``alias`` of none of ``kinds``, with where its row
    is; None where every sampled row's is one of them (or none)."""
    from whilecli.io.shape import json_kind

    for i, row in enumerate(ctx.sample):
        value = _value_at(row, alias)
        if value is not None and json_kind(value) not in kinds:
            return value, ctx.source.where(ctx.sample_lines[i] if ctx.sample_lines else i + 1)
    return None


def _refuse_mixed(ctx: _Context, alias: str, kinds: frozenset[str], what: str) -> None:
    from whilecli.io.shape import kind_words

    if (found := _first_other(ctx, alias, kinds)) is not None:
        value, where = found
        raise InputError(
            f"holds {kind_words(value)} here and {_kinds(kinds)} on other rows:"
            f" {what} is {_kinds(kinds, one=True)}",
            file=ctx.source.name,
            field=alias,
            **where,
        )
    raise InputError(
        f"holds values of several kinds: {what} is {_kinds(kinds, one=True)}",
        file=ctx.source.name,
        field=alias,
    )


def _kinds(kinds: frozenset[str], one: bool = False) -> str:
    if kinds == frozenset({"string"}):
        return "a string" if one else "strings"
    return "a string or a number" if one else "plain values"


def _one_field_a_column(
    mapping: Mapping[str, str], fields: Mapping[str, str], shape: Shape, source: Source
) -> None:
    """Refuse a column that would feed two canonical fields: the task id's or the grade's
    column given to ``--map`` for another field (``--map task_id=reward``, ``--map
    truncated=reward``), or one column given for two (``--map passed=x --map model=x``). A
    column is read as one type, and an id is not its own grade; a pass read from the grade's
    column is the grade."""
    used = {name: col for name, col in fields.items() if name in ("task_id", "reward")}
    for name, col in mapping.items():
        if col == ABSENT or not shape.has(col):  # a field read as absent: no column at all
            continue
        other = next((o for o, c in used.items() if c == col and o != name), None)
        if other is not None and {name, other} != {"passed", "reward"}:  # a pass is a grade
            what = {"task_id": "task id", "reward": "grade"}.get(other, other)
            raise InputError(
                f"--map {name}={col}: {col!r} is the {what}'s column; map each field to its"
                " own column",
                file=source.name,
                field=col,
            )
        used[name] = col


def build_plan(
    shape: Shape,
    source: Source,
    leaves: Leaves,
    mapping: Mapping[str, str],
    forced: str | None,
    first_row: Mapping[str, object] | None,
    sample: Sequence[Mapping[str, object]] = (),
    by: str | None = None,
    sample_lines: Sequence[int] = (),
    id_rows: Sequence[Mapping[str, object]] = (),
    metric_rows: Sequence[Mapping[str, object]] = (),
) -> Plan:
    """Resolve every canonical field of one file (DESIGN section 1; ``--map`` wins).
    ``id_rows``: the first rows' id alias values where ``sample`` is not given;
    ``metric_rows``: their objects of named metrics (``metric``, ``metrics``)."""
    fmt = forced or detect(shape, source)
    if forced is not None:
        missing = [key for key in REQUIRED.get(forced, ()) if not shape.has(key)]
        if forced == lighteval.NAME and not lighteval.detect(shape):
            missing = ["doc.query, model_response and metric (or metrics and predictions)"]
        if missing:
            raise InputError(
                f"--input-format {forced}: the rows have no {', '.join(missing)}", file=source.name
            )
    notes: list[str] = []
    sources: dict[str, str] = {}
    fields: dict[str, str] = {}
    mapping = {n: _mapped_path(shape, f"--map {n}={c}", c, notes) for n, c in mapping.items()}
    if "reward" in mapping and says_failure(mapping["reward"]):
        notes.append(
            f"--map reward={mapping['reward'].replace(LITERAL_DOT, '.')}: the column's name says"
            " it marks failures, and its true (or 1) is read as a pass; if it does, every rate"
            " is inverted: map a column that grades the pass"
        )
    by = None if by is None or by == "source" else _mapped_path(shape, f"--by {by}", by, notes)

    def mapped(name: str) -> str | None:
        col = mapping.get(name)
        if col is not None and not shape.has(col):
            said = col.replace(LITERAL_DOT, "\\.")  # as written: a key's dots escaped
            column = repr(col) if said == col else f"'{said}'"
            raise InputError(
                f"--map {name}={said}: the rows have no column {column}", file=source.name
            )
        return col

    ctx = _Context(
        shape, source, leaves, fmt, first_row, sources, fields, notes, sample, sample_lines
    )
    ctx.id_rows = id_rows
    ctx.metric_rows = metric_rows
    task, row_filter = _task_id(ctx, mapped("task_id"))
    passed: pl.Expr | None = None
    if (col := mapped("passed")) is not None:
        # read as a grade is read (true/false, numbers, pass/fail words; other text refused at
        # its line): any grade but 0 passes, as a number cast to a flag would
        passed = leaves.grade(col, shape.kinds_at(col)) != 0
        sources["passed"] = f"{col} (--map)"
    reward = _reward(ctx, mapped("reward"), passed, mapping.get("passed"))
    _one_field_a_column(mapping, fields, shape, source)
    exploding = "[]" in mapping.get("reward", "") or ctx.explode

    cut_col = mapped("truncated")
    cut_listed = cut_col is not None and "[]" in cut_col
    if cut_listed and not exploding:
        raise UsageError(
            f"--map truncated={cut_col}: a list of flags reads one per rollout, beside a reward"
            " read one per rollout (--map reward=COLUMN[])"
        )
    grade_list = mapping.get("reward") if "[]" in mapping.get("reward", "") else ctx.grade_list
    split = None
    if grade_list is not None:  # a row of k samples: read as k rows, every list split alike
        split = split_of(shape, grade_list, cut_col if cut_listed else None)
        shape = ctx.shape = split.view(shape)
        leaves.split(split.names)
        reward = leaves.grade(split.one(grade_list), shape.kinds_at(split.one(grade_list)))
        if cut_listed:
            assert cut_col is not None
            cut_col, cut_listed = split.one(cut_col), False
            mapping = {**mapping, "truncated": cut_col}
        notes.append(
            f"each row holds one value per sample in {split.said()}: split, one row a sample"
        )
    else:  # a row of one draw: no reply from a list of other drafts, examples or options
        shape = ctx.shape = sole_reply_view(shape, mapping.values())
    if cut_col is None:
        _check_token_numbers(ctx)
    side_cap = sidecar_cap(source)
    truncated, disputed = _truncation(
        shape, leaves, cut_col, fmt, sources, ctx.sample or ctx.id_rows, side_cap
    )
    cap_expr = token_cap(shape, leaves, side_cap)
    no_count = cap_expr is not None or exploding or split is not None
    tokens = None if no_count else reply_tokens(shape, leaves)
    capped = None if cut_listed else _capped(shape, leaves)
    model, version = _model(
        shape, leaves, mapped("model"), mapped("policy_version"), fmt, source, sources, ctx
    )

    for key, origin in source.origins:  # a converted document says where it read each field
        if key in sources and key not in mapping:
            sources[key] = origin
    notes.extend(source.notes)
    replies = _reply_fields(shape)
    completion = replies[0] if replies else None
    prompt_alias = next((a for a in prompt_aliases(fmt) if shape.has(a)), None)
    prompt = prompt_key = None
    by_prompt: tuple[pl.Expr, str] | None = None
    if prompt_alias is not None and sources.get("task_id", "").startswith(
        f"hash of prompt text ({prompt_alias}"
    ):
        # the task id is the prompt's hash: its key is the prompt's, so a pool keyed by the
        # prompt pairs by it with a pool keyed by ids
        prompt_key = pl.when(task.is_not_null()).then(task.hash(seed=0))
    elif prompt_alias is not None and "hash" not in sources.get("task_id", ""):
        # the prompt's hash is taken of its one form (shape.canonical_text), so every check
        # of ids against prompts, and every pairing of two pools by them, reads one key
        prompt = _hashed(leaves.text(prompt_alias), prompt_only=prompt_alias == "messages")
        # a row with no prompt has no key (polars hashes a null to a number like any other)
        prompt_key = pl.when(prompt.is_not_null()).then(prompt.hash(seed=0))
        if "task_id" not in mapping and fields.get("task_id") is not None:
            by_prompt = (prompt, fields["task_id"])
            if row_filter is None and sources["task_id"] == fields["task_id"]:
                # a row without an id (null, empty) is keyed by its prompt, as a file without
                # an id column is; only those rows' prompts are hashed
                def keyed(task: pl.Expr) -> pl.Expr:
                    own = pl.when(task.is_null()).then(leaves.text(prompt_alias))
                    return pl.coalesce(task, _hashed(own, prompt_only=prompt_alias == "messages"))

                task = keyed(task)
                if ctx.task_key is not None:
                    ctx.task_key = keyed(ctx.task_key)
    said = facts.reply_of(
        [(leaves.text(a), "list" in shape.kinds_at(a), a in TRANSCRIPT_ALIASES) for a in replies]
    )
    if capped is not None:  # an error naming the step budget beside the episode: its cap
        if said is not None:  # a row that kept no episode is a harness error all the same
            capped = capped & ~facts.empty_reply(said).fill_null(True)
        truncated = pl.when(capped).then(pl.lit(True)).otherwise(truncated)
        read_as = sources.get("truncated", "not recorded")
        sources["truncated"] = f"{read_as}; or an error naming the step budget (max iterations)"
    replied = None if said is None else ~facts.empty_reply(said).fill_null(True)
    named = () if said is None else _named_errors(shape, leaves, fields.values())
    # a column --map reads as a field (--map reward=error) records no error besides
    taken = frozenset(mapping.values())
    # a request that failed at the API beside a reply: a stream it cut short, or a retry's
    # leftover (the file's grades decide which: facts.cut_failures)
    failed = (((*_CUT_SHORT, *named), "failed"),)
    cut_short = None if said is None else _recorded_error(shape, leaves, failed, taken=taken)
    reply = facts.reply_state(
        said,
        always=_recorded_error(shape, leaves, _ALWAYS, capped, replied, taken),
        unless_replied=_recorded_error(shape, leaves, _UNLESS_REPLIED, capped, taken=taken),
        beside_no_reply=_recorded_error(
            shape, leaves, (*_BESIDE_NO_REPLY, (named, "field")), taken=taken
        ),
        credited=facts.credited(reward.list.max() if exploding and split is None else reward),
    )
    request_failed = _request_failed(shape, leaves, reply, named)
    if named:
        sources["error"] = ", ".join(named) + " (beside an empty or absent reply)"
    slice_expr = None
    if by is not None:
        if not shape.has(by):
            raise InputError(
                f"--by {by}: the rows have no column {by!r}", file=source.name, field=by
            )
        value = leaves.text(by)  # a blank value is none, as a missing one is: "(none)"
        blank = value.str.strip_chars() == ""
        slice_expr = pl.when(blank).then(pl.lit(None, dtype=pl.String)).otherwise(value)
    episode = _episode(ctx, task)
    # a plain step may count an agent's steps only in rows of no known tool, and not mapped
    turn = _turn_index(
        shape, leaves, step=fmt in STEP_TURN_FORMATS and mapped("policy_version") is None
    )
    lp = next((a for a in LOGPROB_ALIASES if "list" in shape.kinds_at(a)), None)
    vals = next((a for a in VALUE_ALIASES if "list" in shape.kinds_at(a)), None)
    agree = _token_lists_agree(shape, leaves)
    has_logprobs = None
    if lp is not None:  # a list of probabilities, or of zeros only, carries no log-probs
        has_logprobs = leaves.nonempty(lp) & agree & leaves.logprob_values(lp).fill_null(True)
        notes.extend(_logprob_notes(ctx, lp))
    if vals is not None:  # a list of zeros only carries no critic's values
        notes.extend(_value_notes(ctx, vals))
    found = decoding.settings(shape, _readable(shape, decoding.aliases()))
    decoded = Decoding(found, sidecar_temperature(source, fmt), _rows_decoded(ctx, found))
    return Plan(
        format=fmt,
        task_id=task,
        task_key=ctx.task_key,
        reward=reward,
        truncated=truncated,
        cut_disputed=None
        if exploding or disputed is None
        else disputed & ~capped.fill_null(False)
        if capped is not None
        else disputed,
        token_cap=cap_expr,
        reply_tokens=None if tokens is None else tokens[0],
        reply_tokens_field=None if tokens is None else tokens[1],
        model=model,
        policy_version=version,
        passed=passed,
        sources={k: v.replace(LITERAL_DOT, ".") for k, v in sources.items()},
        fields=fields,
        leaves=leaves,
        row_filter=row_filter,
        has_logprobs=has_logprobs,
        has_values=None
        if vals is None
        else leaves.nonempty(vals) & agree & leaves.critic_values(vals).fill_null(True),
        generated=None if said is None else ~facts.empty_reply(said),
        completion_field=completion,
        notes=notes,
        env=sidecar_env(fmt, source),
        prompt=prompt,
        slice=slice_expr,
        slice_field=by if slice_expr is not None else None,
        explode=exploding,
        explode_truncated=cut_listed,
        split=split,
        reply=reply,
        request_failed=request_failed,
        cut=None if cut_short is None else cut_short & (reply != facts.ERROR),
        worded=None if said is None else facts.failure_worded(said.text),
        # a row of several rollouts keeps one reply beside them: no draw of its own, unless
        # its samples' replies are split with them
        draw=None
        if exploding and not _sampled_reply(split, replies)
        else facts.draw_key(said, _greedy(decoded, leaves)),
        prompt_key=prompt_key,
        by_prompt=by_prompt,
        prompt_field=prompt_alias,
        task_mapped=mapped("task_id"),
        row_env=_row_env(shape, leaves, fields, sources),
        episode=None if exploding or episode is None else episode[0],
        episode_field=None if exploding or episode is None else episode[1],
        turn=None if exploding or episode is not None or turn is None else turn[0],
        turn_field=None if exploding or episode is not None or turn is None else turn[1],
        turn_strict=turn is not None and turn[1] in STEP_TURN_ALIASES,
        reward_spelled=_spelled_otherwise(shape, fields.get("reward")),
        model_unsure=ctx.model_unsure,
        prompt_unsure=ctx.prompt_unsure,
        version_lag=ctx.version_lag,
        prompt_masked=ctx.prompt_masked,
        prompt_reordered=ctx.prompt_reordered,
        greedy_sampled=None if said is None else _greedy_sampled(decoded),
        decoded_as=_decoded_as(decoded, source),
    )


def _sampled_reply(split: Split | None, replies: list[str]) -> bool:
    """Whether the reply a row of samples is read with is each sample's own (a split list,
    :mod:`whilecli.io.samples`), not one reply beside them all."""
    if split is None or not replies:
        return False
    own = {*split.names.values(), *split.wrapped}
    return split_path(replies[0])[0] in own


def _spelled_otherwise(shape: Shape, field: str | None) -> tuple[str, ...]:
    """The keys beside ``field`` (a dotted path the rows carry) that differ from its last
    key only in case (``Reward`` beside ``reward``), as dotted paths; () where there are
    none, or ``field`` is no plain path."""
    if not field or "[" in field:
        return ()
    path = split_path(field)
    parent = shape.get(path[:-1])
    if parent is None:
        return ()
    last = path[-1]
    return tuple(
        ".".join((*path[:-1], key))
        for key in parent.children
        if key != last and key.casefold() == last.casefold()
    )


def _row_env(
    shape: Shape, leaves: Leaves, fields: dict[str, str], sources: dict[str, str]
) -> pl.Expr | None:
    """The rows' dataset or environment column (:data:`ENV_ALIASES`, first scalar one
    that is not the task id's own), where the task id is a column's (an alias's or
    ``--map``'s; a prompt's hash or a writer's composite key is one task already); None
    otherwise."""
    task = fields.get("task_id")
    if task is None or sources.get("task_id") not in (task, f"{task} (--map)"):
        return None
    alias = _first(shape, tuple(a for a in ENV_ALIASES if a != task), SCALAR)
    if alias is None:
        return None
    fields["env"] = alias
    return leaves.expr(alias, pl.String)


def _episode(ctx: _Context, task: pl.Expr) -> tuple[pl.Expr, str] | None:
    """A key of each row's (task, episode id) from the first episode alias the rows hold as
    text or numbers (:data:`~whilecli.io.aliases.EPISODE_ALIASES`), null where a row names
    no episode; with the alias. None: the rows carry none."""
    shape, leaves = ctx.shape, ctx.leaves
    for alias in EPISODE_ALIASES:
        kinds = shape.kinds_at(alias) - {"null"}
        if not kinds or not kinds <= VERSION_KINDS:
            continue
        said = facts.version_text(leaves.expr(alias, pl.String))
        pair = pl.struct(task.cast(pl.String).alias("task"), said.alias("episode"))
        return pl.when(said.is_not_null()).then(pair.hash(seed=0)), alias
    return None


#: The formats whose ``step`` is the rows' own (any JSON Lines, Parquet, CSV or JSON rows):
#: read as a turn index under the strict rule (:data:`~whilecli.io.aliases.STEP_TURN_ALIASES`).
#: A known tool's converter writes ``step`` as the version it read (verl's, AReaL's
#: ``head_version``): never a turn.
STEP_TURN_FORMATS = frozenset({"jsonl", "parquet", "csv", "json"})


def _turn_index(shape: Shape, leaves: Leaves, step: bool = False) -> tuple[pl.Expr, str] | None:
    """Each row's turn index, from the first turn alias the rows hold as numbers
    (:data:`~whilecli.io.aliases.TURN_INDEX_ALIASES`), else, where ``step``, a plain ``step``
    (:data:`~whilecli.io.aliases.STEP_TURN_ALIASES`: tested under the strict rule); with the
    alias. None: none."""
    alias = _first_number(shape, TURN_INDEX_ALIASES + (STEP_TURN_ALIASES if step else ()))
    if alias is not None:
        return leaves.expr(alias, pl.Float64), alias
    return None


@dataclass(frozen=True)
class Decoding:
    """What a file records of its decoding: the settings its rows carry
    (:func:`whilecli.io.decoding.settings`), and the temperature the settings beside them
    record (:func:`whilecli.io.sources.sidecar_temperature`: vf-eval's
    ``sampling_args.temperature``), where there are any; and what the sampled rows record
    of it (:func:`_rows_decoded`), read once for the band's warning and the pooling rule."""

    found: list[decoding.Setting]
    side: Side | None
    seen: _Decoded | None = None


def _greedy(decoded: Decoding, leaves: Leaves) -> pl.Expr | None:
    """True where a row records greedy decoding (:func:`whilecli.io.decoding.frame_greedy`:
    every place and spelling :mod:`~whilecli.io.decoding` reads); where the rows record none,
    the temperature the settings beside them record on every row; None where neither says."""
    side = decoded.side
    if not decoded.found and side is not None:
        low = 0 <= side.value <= GREEDY_TEMPERATURE
        return decoding.said_greedy([pl.lit(low)], [pl.lit(not low)])
    return decoding.frame_greedy(decoded.found, leaves)


def _readable(shape: Shape, aliases: Sequence[str]) -> list[str]:
    return [a for a in aliases if _within(shape, a)]


#: The share of the sampled rows recording greedy decoding from which the band reads as
#: greedy decoding's (:func:`_greedy_sampled`).
GREEDY_SAMPLED_SHARE = 0.9


def _greedy_sampled(decoded: Decoding) -> str | None:
    """Where nearly all the sampled rows (:data:`GREEDY_SAMPLED_SHARE`, 16 rows or more)
    record greedy decoding, as :func:`whilecli.io.decoding.row_decoding` reads it (a
    temperature of 0, a ``top_k`` of 1, a ``do_sample`` false, none saying it sampled), or the
    settings beside them record a temperature of 0 where no row records greedy decoding: the
    field, or the settings file. Draws that differ at temperature 0 differ by the server's
    nondeterminism, not by sampling, so the band they show is greedy decoding's, not a
    training sampler's."""
    seen = decoded.seen
    if seen is None:
        return None
    kind = seen.kind()
    if kind is not None:
        return seen.named[kind] if kind == "greedy" else None
    side = decoded.side
    if "greedy" not in seen.named and side is not None and 0 <= side.value <= GREEDY_TEMPERATURE:
        return side.where
    return None


@dataclass(frozen=True)
class _Decoded:
    """What the sampled rows record of their decoding: how many record greedy decoding and
    how many sampling (:func:`whilecli.io.decoding.row_decoding`), of how many rows, and the
    first field that says each."""

    counts: dict[str, int]
    rows: int
    named: dict[str, str]

    def kind(self) -> str | None:
        """``greedy`` or ``sampled`` where nearly all the rows (:data:`GREEDY_SAMPLED_SHARE`)
        record it; None else."""
        for kind in ("greedy", "sampled"):
            if self.counts[kind] and self.counts[kind] >= GREEDY_SAMPLED_SHARE * self.rows:
                return kind
        return None


def _rows_decoded(ctx: _Context, found: list[decoding.Setting]) -> _Decoded | None:
    """What the sampled rows record of their decoding; None where they are too few to say
    (under :data:`MIN_PART_ROWS`)."""
    rows = ctx.sample or ctx.id_rows
    if len(rows) < MIN_PART_ROWS:
        return None
    counts = {"greedy": 0, "sampled": 0}
    named: dict[str, str] = {}
    for row in rows:
        greedy, sampled, where = decoding.row_decoding(found, row)
        kind = "greedy" if greedy and not sampled else "sampled" if sampled else None
        if kind is not None:
            counts[kind] += 1
            if where is not None:
                named.setdefault(kind, where)
    return _Decoded(counts, len(rows), named)


def _decoded_as(decoded: Decoding, source: Source) -> tuple[str, str] | None:
    """How a file's rows were decoded (:attr:`Plan.decoded_as`): as nearly all its sampled
    rows record it (:func:`_rows_decoded`), else as the settings beside them record it
    (a temperature), else as the writer names its files (NeMo-Skills' ``output.jsonl``,
    greedy, beside its ``output-rs<seed>.jsonl``, sampled); None where none says."""
    seen = decoded.seen
    kind = None if seen is None else seen.kind()
    if seen is not None and kind is not None:
        return kind, f"{seen.named[kind]} on its rows"
    side = decoded.side
    if side is not None:
        kind = "greedy" if 0 <= side.value <= GREEDY_TEMPERATURE else "sampled"
        value = f" {side.value:g}" if side.where.endswith("temperature") else ""
        return kind, f"{side.where}{value}"
    return nemo_skills.named_decoding(source.path)


def _logprob_notes(ctx: _Context, lp: str) -> list[str]:
    """What the rows the plan holds say of the log-prob lists at ``lp`` that hold none
    (:meth:`Leaves.logprob_values`): values above 0 (probabilities), or only zeros (a
    placeholder). Those rows are read as carrying no log-probs."""
    rows = ctx.id_rows or ctx.sample
    lists = [v for row in rows if isinstance(v := _value_at(row, lp), list) and v]
    numbers = [[x for x in v if isinstance(x, (int, float))] for v in lists]
    above = sum(1 for v in numbers if any(x > 0 for x in v))
    zeros = sum(
        1
        for v, n in zip(lists, numbers, strict=True)
        if len(n) == len(v) and all(x == 0 for x in n)
    )
    out = []
    if above:
        out.append(
            f"{lp} holds values above 0 on {above} of {len(lists)} sampled rows: probabilities,"
            " not log-probs (a log-prob is at most 0); those rows carry no sampler log-probs"
        )
    if zeros:
        out.append(
            f"{lp} is all 0 on {zeros} of {len(lists)} sampled rows: a placeholder, not"
            " log-probs; those rows carry no sampler log-probs"
        )
    return out


def _value_notes(ctx: _Context, vals: str) -> list[str]:
    """What the rows the plan holds say of the critic value lists at ``vals`` that hold none
    (:meth:`Leaves.critic_values`): only zeros (a placeholder). Those rows are read as
    carrying no critic values."""
    rows = ctx.id_rows or ctx.sample
    lists = [v for row in rows if isinstance(v := _value_at(row, vals), list) and v]
    zeros = sum(1 for v in lists if all(isinstance(x, (int, float)) and x == 0 for x in v))
    if not zeros:
        return []
    return [
        f"{vals} is all 0 on {zeros} of {len(lists)} sampled rows: a placeholder, not a"
        " critic's values; those rows carry no critic values"
    ]


def _refuse_twins(ctx: _Context, alias: str) -> None:
    """Refuse a reward read where a column whose name differs from it only in case
    (``Reward`` beside ``reward``, ``SCORE`` beside ``score``) grades a row looked at
    otherwise: which one grades the rows is not said, and reading one would drop the other's
    grades without a word. Columns that agree on every row looked at are one grade."""
    path = split_path(alias)
    if len(path) != 1:
        return
    twins = [k for k in ctx.shape.children if k != alias and k.casefold() == alias.casefold()]
    rows = ctx.sample or ctx.id_rows
    for twin in twins:
        differ = sum(
            1
            for row in rows
            if (a := _grade_of(row.get(alias))) is not None
            and (b := _grade_of(row.get(twin))) is not None
            and abs(a - b) > facts.PASS_TOLERANCE
        )
        if differ:
            raise InputError(
                f"the rows carry {alias!r} and {twin!r}, names that differ only in case, and"
                f" their grades differ on {differ} of the {len(rows)} rows looked at: pass"
                f" --map reward={alias} or --map reward={twin} to say which grades",
                file=ctx.source.name,
                field=alias,
            )


def _grade_of(value: object) -> float | None:
    """A sampled value as a grade (a number, a flag, or a grade's word), None where none."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    return words.grade_text(value) if isinstance(value, str) else None


def _value_at(row: Mapping[str, object], dotted: str) -> object:
    value: object = row
    for key in split_path(dotted):
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _reply_fields(shape: Shape) -> list[str]:
    """Where the rows keep the model's reply, in the order a row's reply is looked for (the
    first that holds one on the row is its reply): the first of :data:`COMPLETION_ALIASES`
    the rows carry, the first of :data:`TEXT_REPLY_ALIASES` and :data:`API_REPLY_ALIASES`
    that holds text (null on every row, a ``response`` or ``output`` says nothing of what it
    would hold), and a chat transcript (:data:`TRANSCRIPT_ALIASES`) that holds lists.
    Empty where they keep none."""
    texts = (*TEXT_REPLY_ALIASES, *API_REPLY_ALIASES)
    found = [
        next((a for a in COMPLETION_ALIASES if shape.has(a)), None),
        next(
            (a for a in texts if _within(shape, a) and shape.kinds_at(a) - {"null"} == {"string"}),
            None,
        ),
        next((a for a in TRANSCRIPT_ALIASES if shape.kinds_at(a) - {"null"} == {"list"}), None),
    ]
    return [a for a in found if a is not None]


def _text_at(shape: Shape, leaves: Leaves, dotted: str) -> pl.Expr:
    """The value at ``dotted`` as text (:meth:`Leaves.text`); where it lies inside a reply
    field that is read whole (:func:`_reply_fields`: ``generation: {"text": ...,
    "finish_reason": ...}``), from that field's JSON text, since a JSON Lines scan reads one
    field one way: the finish reason a reply object keeps is read beside the reply."""
    path = split_path(dotted)
    for whole in _reply_fields(shape):
        head = split_path(whole)
        if len(path) > len(head) and path[: len(head)] == head:
            rest = "".join(step if is_index(step) else f".{step}" for step in path[len(head) :])
            return leaves.text(whole).str.json_path_match(f"${rest}")
    return leaves.text(dotted)


def _within(shape: Shape, dotted: str) -> bool:
    """Whether the rows hold ``dotted`` and every step above it is always an object (or a list,
    before an index), so that one path reads it on every row."""
    if not shape.has(dotted):
        return False
    path = split_path(dotted)
    for end in range(1, len(path)):
        step = path[end]
        want = "list" if is_index(step) else "dict"
        node = shape.get(path[:end])
        if node is None or node.kinds - {"null"} != {want}:
            return False
    return True


#: Where an error is recorded, by how much a reply beside it outweighs it (DESIGN section 1:
#: an error is recorded "instead of a reply"). A non-null ``error`` (inspect samples, many
#: harnesses: DESIGN names it), a finish reason ``error`` or ``abort`` and a status
#: ``aborted`` or ``cancelled`` record an error whatever text the request left.
_ALWAYS = (
    (ERROR_ALIASES[:1], "field"),
    (STATUS_ALIASES, "status"),
    (REASON_ALIASES, "reason"),
)
#: The other error fields (``exception``, ``metadata.error``, ...), an error message, an error
#: flag, an error class that names a failed request (``error_type: RateLimitError``): an
#: error where the row holds no reply, or where the rows keep no reply at all; beside the
#: model's reply it is what a code runner said of the model's code
#: (``exception: "NameError: ..."``), its graded failure.
_UNLESS_REPLIED = (
    (ERROR_ALIASES[1:], "field"),
    (ERROR_TEXT_ALIASES, "message"),
    (ERROR_FLAG_ALIASES, "flag"),
    (ERROR_CLASS_ALIASES, "request"),
)
#: A status ``error``, ``failed``, ``timeout`` or ``rate_limited``, a finish reason
#: ``timeout``, any error class or code, an HTTP error status (``status_code: 429``): an
#: error only beside an empty or absent reply in rows that keep replies (pytest's and
#: SWE-bench's outcomes are grades too, as are BFCL's error types; an HTTP status beside the
#: model's reply is what the model's code served, and in rows that keep no reply at all the
#: status a tested app or a browsed page answered with, the task's observable).
_BESIDE_NO_REPLY = (
    (STATUS_ALIASES, "unreplied"),
    (REASON_ALIASES, "unreplied reason"),
    (ERROR_CLASS_ALIASES, "field"),
    (HTTP_STATUS_ALIASES, "http"),
)
#: The error fields other than ``error`` (which is read whatever stands beside it) that,
#: naming a request that failed at the API (:func:`whilecli.io.facts.failed_request`: a rate
#: limit, a server's failure, a lost connection) beside a reply, mark it as one the failure
#: may have cut short (:attr:`Plan.cut`); a column named as an error (:func:`_named_errors`)
#: too. Whether it did, or a retry won the reply and left the first try's error beside it,
#: the file's grades decide (:func:`whilecli.io.facts.cut_failures`).
_CUT_SHORT = ERROR_ALIASES[1:]
#: Where a harness error names a request that failed at the API (a rate limit, a server's
#: failure, a lost connection: :func:`whilecli.io.facts.failed_request`), an error no
#: reading counts as the model's failure.
_REQUEST_FAILED = (
    *(ERROR_ALIASES + ERROR_TEXT_ALIASES + ERROR_CLASS_ALIASES),
    *(STATUS_ALIASES + REASON_ALIASES + HTTP_STATUS_ALIASES),
)
_HOLDS = {
    "status": facts.error_status,
    "reason": facts.error_reason,
    "field": facts.recorded_error,
    "message": facts.error_message,
    "flag": facts.error_flag,
    "http": facts.http_error,
    "request": facts.request_failure,
    "unreplied": facts.no_reply_status,
    "unreplied reason": facts.no_reply_reason,
    "failed": facts.failed_request,
}
#: What a reader of each kind reads: a scalar, or (a finish reason) SGLang's
#: ``{"type": ..., ...}`` and a list of reasons too; an error field anything.
_READS = {
    "reason": SCALAR | {"dict", "list"},
    "unreplied reason": SCALAR | {"dict", "list"},
}


def _request_failed(
    shape: Shape, leaves: Leaves, reply: pl.Expr, named: Sequence[str] = ()
) -> pl.Expr | None:
    """True on an error row (``reply``) whose error fields (:data:`_REQUEST_FAILED`: an error,
    its class or message, a status, a finish reason, an HTTP status) name a request that
    failed at the API (:func:`whilecli.io.facts.failed_request`); None where the rows carry
    no such field. A reply that reads as an error message is not asked: an agent's last
    words can be one (``Error: the weather API returned 503``), its own failure. Each field
    is read on error rows only (the others are null to the matcher)."""
    error = reply == facts.ERROR
    texts = [
        _text_at(shape, leaves, alias)
        for alias in dict.fromkeys((*_REQUEST_FAILED, *named))
        if shape.kinds_at(alias) - {"null"} and _within(shape, alias)
    ]
    if not texts:
        return None
    return error & pl.any_horizontal([facts.failed_request(pl.when(error).then(t)) for t in texts])


#: Every column an alias list above reads as an error, a status or a reason.
_ERROR_READ = frozenset(
    alias for aliases, _ in (*_ALWAYS, *_UNLESS_REPLIED, *_BESIDE_NO_REPLY) for alias in aliases
)
#: What a column named as an error (:func:`_named_errors`) holds to be read as one: text, a
#: flag or an object; a number under such a name is a measure (``abs_error``, ``num_errors``).
_ERROR_KINDS = frozenset({"string", "bool", "dict", "list"})


def _named_errors(shape: Shape, leaves: Leaves, fields: Iterable[str]) -> tuple[str, ...]:
    """Columns whose name says they record a harness's error (:func:`whilecli.io.aliases.
    error_named`: ``api_error``, ``exception_message``, ``crashed``) under a name no alias
    list reads, at the top level or in a place errors are kept (:data:`ERROR_HOLDERS`), not
    read as any field (``fields``, ``leaves``), holding text, a flag or an object: each an
    error beside an empty or absent reply in rows that keep replies (DESIGN section 1: rate
    limits scored 0 are no split tasks); beside a reply, the reply is graded."""
    read = {split_path(name) for name in fields} | set(leaves.paths)
    tops = {path[0] for path in read if path}
    found: list[str] = []
    for place in dict.fromkeys(ERROR_HOLDERS):
        node = shape if not place else shape.get(split_path(place[:-1]))
        if node is None:
            continue
        for key in node.children:
            alias = place + key
            if (
                alias in _ERROR_READ
                or (key in tops if not place else split_path(alias) in read)
                or not error_named(key)
                or not _within(shape, alias)
            ):
                continue
            kinds = shape.kinds_at(alias) - {"null"}
            if kinds and kinds <= _ERROR_KINDS:
                found.append(alias)
    return tuple(found)


def _token_lists_agree(shape: Shape, leaves: Leaves) -> pl.Expr:
    """True where the row's per-token lists (those the update reads, :data:`TOKEN_LIST_ALIASES`) are
    of one length (empty lists aside): a row whose critic values or log-probs do not line up with its other lists
    carries no token the update can use, and ``whilecli update`` refuses it at that row."""
    found = (
        next((a for a in aliases if "list" in shape.kinds_at(a)), None)
        for aliases in TOKEN_LIST_ALIASES.values()
    )
    lengths = [_nonzero(leaves.list_len(alias)) for alias in found if alias is not None]
    if len(lengths) < 2:
        return pl.lit(True)
    return (pl.max_horizontal(lengths) == pl.min_horizontal(lengths)).fill_null(True)


def _nonzero(length: pl.Expr) -> pl.Expr:
    """An empty list is a field the row does not carry (:meth:`Leaves.nonempty`)."""
    return pl.when(length > 0).then(length)


def _recorded_error(
    shape: Shape,
    leaves: Leaves,
    readers: tuple[tuple[tuple[str, ...], str], ...],
    spare: pl.Expr | None = None,
    replied: pl.Expr | None = None,
    taken: frozenset[str] = frozenset(),
) -> pl.Expr | None:
    """True where any of ``readers``' fields the rows carry records an error
    (:mod:`whilecli.io.aliases`); None where they carry none. ``taken``: columns ``--map``
    reads as a field, read as no error. ``spare``: rows whose error
    field names the step budget beside their episode (:func:`_capped`), cut off, not failed.
    ``replied``: rows that hold a reply, where an error field that holds what the model's own
    program did (:func:`whilecli.io.facts.program_error`: its traceback, a failed test, a
    judge's verdict) records the model's graded failure, not the harness's (DESIGN section
    1: a harness error stands *instead of* a reply)."""
    said: list[pl.Expr] = []
    for aliases, kind in readers:
        for alias in aliases:
            kinds = shape.kinds_at(alias) - {"null"}
            if alias in taken or not _within(shape, alias):
                continue
            if kinds and (kind in ("field", "failed") or kinds <= _READS.get(kind, SCALAR)):
                text = _text_at(shape, leaves, alias)
                held = _HOLDS[kind](text)
                if kind == "field" and replied is not None:
                    held = held & ~(replied & facts.program_error(text))
                said.append(held)
    if not said:
        return None
    held = pl.any_horizontal(said)
    return held if spare is None else held & ~spare


def _capped(shape: Shape, leaves: Leaves) -> pl.Expr | None:
    """True where an error field names the agent's step budget (:data:`facts.CAP_ERROR`):
    the episode was cut off at its cap; None where the rows carry no error field."""
    said = [
        facts.cap_error(leaves.text(alias))
        for alias in ERROR_ALIASES
        if shape.kinds_at(alias) - {"null"} and _within(shape, alias)
    ]
    return pl.any_horizontal(said) if said else None


@dataclass
class _Context:
    """What resolving one file's fields reads and writes."""

    shape: Shape
    source: Source
    leaves: Leaves
    fmt: str
    first_row: Mapping[str, object] | None
    sources: dict[str, str]
    fields: dict[str, str]
    notes: list[str]
    sample: Sequence[Mapping[str, object]] = ()
    sample_lines: Sequence[int] = ()
    explode: bool = False  # the reward is a list of grades: one rollout per element
    grade_list: str | None = None  # where a list of grades, one per sample, was found
    task_key: pl.Expr | None = None  # the task id with no-ids as written (Plan.task_key)
    #: Rows holding the id aliases' values (a Parquet file's first rows), where the sample is
    #: not given: what :func:`_grouping_id` reads.
    id_rows: Sequence[Mapping[str, object]] = ()
    #: A Parquet file's first rows' objects of named metrics, where the sample is not given:
    #: what :func:`_metric_struct` reads a metric's 0/1 values on.
    metric_rows: Sequence[Mapping[str, object]] = ()
    #: The one kind of field the rows name their model in, where every such field may name
    #: another model than the writer's (:func:`whilecli.io.aliases.unsure_model_alias`).
    model_unsure: str | None = None
    #: A conversation field with no roles where no entry marks the prompt's end (NeMo-RL's
    #: ``content`` under an unknown chat template): the task key's cut is a guess.
    prompt_unsure: str | None = None
    #: The field of :data:`LAG_ALIASES` the versions were read from (``-lag``): the policy
    #: you train is version 0.
    version_lag: str | None = None
    #: A prompt field keyed without the parts each row holds alone (:func:`_masked_repeats`):
    #: a guess at what the task is, as :attr:`prompt_unsure` is.
    prompt_masked: str | None = None
    #: A prompt field keyed by its words in sorted order (:func:`_reordered_repeats`): a
    #: guess as :attr:`prompt_masked` is.
    prompt_reordered: str | None = None


def _task_id(ctx: _Context, col: str | None) -> tuple[pl.Expr, pl.Expr | None]:
    """The task id (first alias wins; a writer's composite key; else a prompt hash)."""
    shape, leaves, fmt, sources, fields = ctx.shape, ctx.leaves, ctx.fmt, ctx.sources, ctx.fields
    row_filter: pl.Expr | None = None
    if col is not None:
        _check_mapped_id(ctx, col)
        if ctx.shape.kinds_at(col) & {"dict", "list"}:  # a prompt's messages: their JSON text
            ctx.task_key = leaves.text(col).map_batches(
                canonical_series, return_dtype=pl.String, is_elementwise=True
            )
        else:
            ctx.task_key = leaves.expr(col, pl.String)
        task = no_blank(ctx.task_key)
        sources["task_id"], fields["task_id"] = f"{col} (--map)", col
    elif fmt == "prime-rft" and shape.has("step") and shape.has("problem_id"):
        task = pl.concat_str(
            [leaves.expr("step", pl.String), leaves.expr("problem_id", pl.String)], separator=":"
        )
        sources["task_id"], fields["task_id"] = "(step, problem_id)", "problem_id"
    elif fmt == "nemo-rl" and shape.has("content"):
        task = leaves.expr("content", pl.List(pl.String)).map_batches(
            _nemo_prompt_hash, return_dtype=pl.String
        )
        sources["task_id"] = "hash of content before its first reply"
        fields["task_id"] = "content"
        ctx.notes.append("no task id column: tasks are keyed by a hash of the prompt's messages")
        if not nemo_rl.marked(ctx.sample):
            ctx.prompt_unsure = "content"
            sources["task_id"] += " (the prompt's end guessed: no generation prompt marks it)"
    elif fmt == "trl" and shape.has("prompt") and shape.has("step"):
        task = pl.concat_str(
            [leaves.expr("step", pl.String), _hashed(leaves.text("prompt"))],
            separator=":",
        )
        sources["task_id"] = "(step, hash of prompt text)"
        fields["task_id"] = "prompt"
    elif (
        alias := _first(shape, (ids := (*FORMAT_IDS.get(fmt, ()), *TASK_ALIASES)), SCALAR, ctx)
    ) is not None:
        if (grouping := _grouping_id(ctx, alias, ids)) is not None:
            later, said = grouping
            ctx.notes.append(f"{alias} {said} while {later} repeats: tasks are keyed by {later}")
            alias = later
        ctx.task_key = leaves.expr(alias, pl.String)
        task = no_blank(ctx.task_key)
        # a no-id reads as itself, never as a number; a CSV's every id is text, its numbers
        # written by whichever writer made the line (``1`` beside ``1.0``)
        if "float" in shape.kinds_at(alias) or fmt == "csv":
            task, ctx.task_key = integral_id(task), integral_id(ctx.task_key)
        sources["task_id"], fields["task_id"] = alias, alias
        if fmt == "lm-eval" and shape.has("filter"):
            keep = ctx.first_row.get("filter") if ctx.first_row else None
            if isinstance(keep, str):
                row_filter = leaves.expr("filter", pl.String) == keep
                sources["task_id"] = f"doc_id (rows of filter {keep!r})"
                ctx.notes.append(
                    "lm-eval writes one row per (doc, filter), not rollouts: the rows of"
                    f" filter {keep!r} are read and any other filter's rows skipped"
                )
    elif (alias := next((a for a in prompt_aliases(fmt) if shape.has(a)), None)) is not None:
        # every prompt field the rows carry keys the task: a shared template in ``prompt``
        # beside the question in ``question`` is one task per question, not per template
        keys = _prompt_keys(
            ctx, [a for a in dict.fromkeys(prompt_aliases(fmt)) if _holds_text(shape, a)]
        ) or [alias]
        # a transcript (messages) holds the reply too: only the turns before it are the prompt
        hashes = [_hashed(leaves.text(a), prompt_only=a == "messages") for a in keys]
        part = _repeating_part(ctx, keys[0]) if len(keys) == 1 else None
        if part is not None:
            hashes = [_part_hashed(leaves.text(keys[0]), part, keys[0] == "messages")]
            keys = [f"{keys[0]}, {part}"]
            ctx.notes.append(
                f"{alias} differs on every row in a part of its own (a timestamp, a seed) while"
                f" its {part} repeats: tasks are keyed by the {part}"
            )
        elif len(keys) == 1 and _masked_repeats(ctx, keys[0]):
            hashes = [_hashed(masked(leaves.text(keys[0])), prompt_only=keys[0] == "messages")]
            ctx.prompt_masked = keys[0]
            keys = [f"{keys[0]}, its own ids masked"]
            ctx.notes.append(
                f"{alias} differs on every row in an id of its own (a uuid, a hash, a"
                " timestamp) while the rest repeats: tasks are keyed by the rest"
            )
        elif len(keys) == 1 and keys[0] != "messages" and _reordered_repeats(ctx, keys[0]):
            hashes = [
                leaves.text(keys[0]).map_batches(
                    _reordered_hash, return_dtype=pl.String, is_elementwise=True
                )
            ]
            ctx.prompt_reordered = keys[0]
            keys = [f"{keys[0]}, its words in sorted order"]
            ctx.notes.append(
                f"{alias} differs on most rows while its words, in another order, repeat"
                " (options shuffled per draw): tasks are keyed by the words in sorted order"
            )
        task = hashes[0]
        if len(hashes) > 1:
            some = pl.any_horizontal([h.is_not_null() for h in hashes])
            joined = pl.concat_str(hashes, separator=":", ignore_nulls=True)
            task = pl.when(some).then(joined)
        named = " + ".join(keys)
        sources["task_id"], fields["task_id"] = f"hash of prompt text ({named})", alias
        ctx.notes.append(f"no task id column: tasks are keyed by a hash of {named}")
    elif (held := _ids_held_in_objects(shape, ids)) is not None:
        alias, what = held
        raise InputError(what, file=ctx.source.name, field=alias)
    else:
        raise InputError(
            "no task id column (looked for "
            + ", ".join(TASK_ALIASES)
            + ") and no prompt text to hash; "
            + _id_hint(shape),
            file=ctx.source.name,
            field="task_id",
        )
    return task, row_filter


def _grouping_id(ctx: _Context, first: str, aliases: Sequence[str]) -> tuple[str, str] | None:
    """A later id alias that groups rows the first one keeps apart: where the first id alias
    the rows carry holds one id per row (a row index, a uuid) and a later one, on the same
    rows, repeats (a prompt's id beside each sample's), the later one is the task id. Read
    from the rows the plan holds (a JSON Lines file's sample, a Parquet file's first rows);
    None where they show no such pair (fewer than two ids, the first repeating, no later
    alias repeating). Likewise where the first holds one value on every row (a label: a
    benchmark's name, ``default``) and a later one groups the rows into several tasks. In
    both cases a column named for a prompt's id that no alias lists is a later one
    (:func:`~whilecli.io.aliases.names_a_prompts_id`: ``problem_idx``). With what the first
    holds, for the note."""
    rows = ctx.id_rows or ctx.sample
    later = [a for a in aliases[aliases.index(first) + 1 :] if _scalar(ctx.shape, a)]
    owned = [(row, own) for row in rows if (own := _id_at(row, first)) is not None]
    firsts = [own for _, own in owned]
    if len(firsts) < 2:
        return None
    one_per_row = len(set(firsts)) == len(firsts)
    if one_per_row or len(set(firsts)) == 1:  # a prompt's id no alias lists (problem_idx)
        later += [
            c
            for c in ctx.shape.children
            if c not in aliases and names_a_prompts_id(c) and _scalar(ctx.shape, c)
        ]
    if not later:
        return None
    # one value on every row (a benchmark's name, "default") beside ids that group the rows
    # into several tasks: the first is a label, the later one the task id
    one_for_all = len(set(firsts)) == 1 and len(firsts) >= MIN_LABEL_ROWS
    if not (one_per_row or one_for_all):
        return None
    for alias in later:
        values = [_id_at(row, alias) for row, _ in owned]
        held = [v for v in values if v is not None]
        groups = len(set(held))
        if len(held) == len(values) and groups < len(held) and (one_per_row or groups > 1):
            return alias, "holds one id per row" if one_per_row else "holds one value on every row"
    return None


def _scalar(shape: Shape, name: str) -> bool:
    """The rows hold ``name`` as scalars (and nulls) only, on some rows at least."""
    kinds = shape.kinds_at(name) - {"null"}
    return bool(kinds) and kinds <= SCALAR


#: Rows that must all hold one value of the first id alias before it is read as a label
#: beside a later id (:func:`_grouping_id`): fewer could be one task's draws.
MIN_LABEL_ROWS = 8


def _id_at(row: Mapping[str, object], dotted: str) -> str | None:
    """The id at ``dotted`` in one parsed row, as text (None: none, or no id)."""
    value = _value_at(row, dotted)
    if value is None or isinstance(value, (dict, list)):
        return None
    text = str(value).strip()
    return None if not text or text.lower() in MISSING_TEXTS else text


def _reward(
    ctx: _Context, col: str | None, passed: pl.Expr | None, passed_col: str | None
) -> pl.Expr:
    """The reward: an alias, a writer's metric, Σ score × weight, or a mapped pass/fail."""
    shape, leaves, fmt, sources, fields = ctx.shape, ctx.leaves, ctx.fmt, ctx.sources, ctx.fields
    if col is not None:
        reward = leaves.grade(col, shape.kinds_at(col))
        sources["reward"], fields["reward"] = f"{col} (--map)", col
    elif fmt == "lm-eval" and (found := _lm_metric(ctx)) is not None:
        metric, origin = found
        reward = leaves.grade(metric, shape.kinds_at(metric))
        sources["reward"], fields["reward"] = f"{metric} ({origin})", metric
    elif (counts := _pass_counts(ctx)) is not None:
        passes, n = (leaves.expr(c, pl.Int64) for c in counts)
        reward = draws.as_draws(passes, n)  # null outside 0..n: no grade, ungraded, and said
        ctx.explode = True
        sources["reward"], fields["reward"] = (
            f"{counts[0]} of {counts[1]}, one rollout per draw",
            counts[0],
        )
        ctx.notes.append(
            f"each row holds a task's pass count ({counts[0]} of {counts[1]} draws): read as"
            " that many rollouts, the replies and their truncation not recorded"
        )
    elif (alias := _scalar_reward(shape, _grade_list(shape))) is not None:
        _refuse_twins(ctx, alias)
        reward = leaves.grade(alias, shape.kinds_at(alias))
        sources["reward"], fields["reward"] = alias, alias
    elif (names := _reward_parts(shape)) is not None:
        # a null part adds nothing; a row without the dict has no reward (refused as missing)
        parts = pl.sum_horizontal(
            [
                leaves.expr(f"rewards.{n}.score", pl.Float64)
                * leaves.expr(f"rewards.{n}.weight", pl.Float64).fill_null(1.0)
                for n in names
            ]
        )
        reward = pl.when(pl.col("rewards").is_not_null()).then(parts)
        sources["reward"], fields["reward"] = "Σ rewards[].score × weight", "rewards"
    elif shape.kinds_at(REWARD_PARTS) and shape.kinds_at(REWARD_PARTS) - {"null"} <= NUMBER | {
        "bool"
    }:
        reward = leaves.expr(REWARD_PARTS, pl.Float64)  # a number there, not named parts
        sources["reward"], fields["reward"] = REWARD_PARTS, REWARD_PARTS
    elif (listed := _grade_list(shape)) is not None:
        path, per_token = listed
        reward = leaves.expr(path, pl.Float64)
        fields["reward"] = path.partition("[")[0]
        if per_token:
            reward = reward.list.sum()
            sources["reward"] = f"Σ {path} (per-token rewards beside one reply)"
        else:
            ctx.explode, ctx.grade_list = True, path
            sources["reward"] = f"{path}, one rollout per element"
            ctx.notes.append(f"{fields['reward']} holds one grade per sample: each is a rollout")
    elif (mean := _sample_mean_metric(ctx)) is not None:
        metric, n, said = mean
        reward = draws.as_draws(draws.passes_expr(leaves.expr(metric, pl.Float64), n), n)
        ctx.explode = True
        sources["reward"] = f"{metric} × n ({said}): passes per doc, one rollout per draw"
        fields["reward"] = metric
        ctx.notes.append(
            f"{metric} is each doc's mean correctness over n sampled replies ({said}), not"
            f" which reply passed: each doc is read as n rollouts, round({metric} × n) of them"
            " passes; a doc whose mean is no count of n is ungraded"
        )
    elif (named := _metric_struct(ctx)) is not None:
        reward = leaves.expr(named, pl.Float64)
        sources["reward"], fields["reward"] = f"{named} (the first 0/1 metric)", named
    elif fmt == "trl" and (cols := _trl_reward_columns(shape)):
        reward = summed_columns([leaves.expr(c, pl.Float64) for c in cols])
        sources["reward"] = f"Σ reward functions ({', '.join(cols)}), weights taken as 1"
        fields["reward"] = " + ".join(cols)  # what a refusal of the rewards' range names
        ctx.notes.append("TRL tables keep each reward function's score, not their weights: Σ at 1")
    elif passed is not None:
        reward = passed.cast(pl.Float64)
        sources["reward"], fields["reward"] = f"{passed_col} as 1.0/0.0", str(passed_col)
    else:
        raise InputError(
            "no reward column (looked for "
            + ", ".join(REWARD_ALIASES)
            + ", a rewards dict); "
            + _reward_hint(shape),
            file=ctx.source.name,
            field="reward",
        )
    return reward


def _shell(arg: str) -> str:
    """``arg`` as a person types it in a shell: as it is where it holds only the letters,
    digits and marks a shell leaves alone (``reward=outcome.scores[]``), else quoted."""
    return arg if _PLAIN_ARG.fullmatch(arg) else shlex.quote(arg)


_PLAIN_ARG = re.compile(r"[\w.\-=/\[\]:@+,%]+")


def _check_mapped_id(ctx: _Context, col: str) -> None:
    """``--map task_id=COLUMN``: one id per row, in every reader. A column of JSON lists or
    objects (a prompt's messages) is read as its JSON text, in JSON Lines as in Parquet; a
    list step (``tags[]``: one value per element) is refused naming the field."""
    if "[]" in col:
        one = _shell("task_id=" + col.replace("[]", "[N]", 1))
        raise InputError(
            f"--map task_id={col}: a task id is one value per row, not one per element of a"
            f" list: pass --map {one} to read one element as the task id",
            file=ctx.source.name,
            field=col,
        )


def _ids_held_in_objects(shape: Shape, aliases: Sequence[str]) -> tuple[str, str] | None:
    """The first task-id alias the rows carry whose every value is a JSON object or list
    (``{"task_id": {"name": "t1"}}``), with what to say: which key (or element) to read as
    the id. None where no alias holds only such values."""
    for alias in aliases:
        node = shape.get(split_path(alias))
        kinds = set() if node is None else node.kinds - {"null"}
        if not kinds or not kinds <= {"dict", "list"}:
            continue
        assert node is not None
        if kinds == {"list"}:
            return alias, (
                f"the column holds JSON lists, not ids: pass --map {_shell(f'task_id={alias}[N]')}"
                " to read one element as the task id (or --map task_id=COLUMN)"
            )
        keys = [
            key
            for key, sub in node.children.items()
            if sub.kinds - {"null"} and sub.kinds - {"null"} <= SCALAR
        ]
        key = keys[0] if keys and kinds == {"dict"} else "KEY"
        shown = f"; its keys: {', '.join(keys[:6])}" if len(keys) > 1 else ""
        return alias, (
            f"the column holds JSON objects, not ids: pass --map"
            f" {_shell(f'task_id={alias}.{key}')} to read one of its keys as the task id"
            f"{shown}"
        )
    return None


def _id_hint(shape: Shape) -> str:
    """What ``--map task_id=`` to pass: a top-level key that spells a task-id alias in
    another case or with other separators (``Task_ID``, ``Task ID``), else ``COLUMN``."""
    spelled = {folded(a): a for a in TASK_ALIASES if "." not in a and a != "id"}
    found = [
        (key, spelled[folded(key)])
        for key, sub in shape.children.items()
        if folded(key) in spelled and sub.kinds - {"null"} <= SCALAR
    ]
    if not found:
        return "pass --map task_id=COLUMN"
    (key, alias), more = found[0], [k for k, _ in found[1:4]]
    others = f"; other candidates: {', '.join(more)}" if more else ""
    return (
        f"the rows have {key!r}, {alias} spelled another way:"
        f" pass --map {_shell('task_id=' + key)}{others}"
    )


#: How deep :func:`_reward_hint` looks for a grade (``a.b.c``).
HINT_DEPTH = 3
#: Words in a field's name that say it may hold a grade (``feedback``: LangSmith's feedback
#: keys, each an evaluator's score; ``result``, ``outcome``, ``verdict``, ``status``: a
#: harness's pass/fail, often as a word, ``"PASS"``, ``"correct"``).
GRADE_WORDS = (
    *("reward", "score", "correct", "pass", "acc", "resolved", "success", "grade", "feedback"),
    *("result", "outcome", "verdict", "status", "judg", "solved", "exact", "verif"),
)


def _reward_hint(shape: Shape) -> str:
    """What ``--map reward=`` to pass: the numeric fields (three levels deep, as OpenHands'
    ``test_result.report.resolved``) whose names, or whose object's names, say grade
    (``rewards.format``), a list of them as ``NAME[]`` (one rollout per element); else
    ``COLUMN``. Correctness before form (:func:`~whilecli.io.aliases.correctness_first`)."""
    found: list[str] = []
    worded: list[str] = []  # text fields whose names say grade: grades written as words?
    level = list(shape.children.items())
    for _ in range(HINT_DEPTH):
        for path, sub in level:
            # the field, or the object it sits in, says grade (rewards.format: a part of one)
            if not any(w in part.lower() for part in path.split(".") for w in GRADE_WORDS):
                continue
            if _grades(sub):
                found.append(path)
            elif sub.kinds - {"null"} == {"list"} and _grades(sub.item):
                found.append(f"{path}[]")
            elif sub.kinds - {"null"} == {"string"} and any(
                w in path.rsplit(".", 1)[-1].lower() for w in GRADE_WORDS
            ):  # a text field whose own name says grade (never reward_model.style)
                worded.append(path)
        level = [(f"{path}.{k}", child) for path, sub in level for k, child in sub.children.items()]
    failing = [p for p in (*found, *worded) if says_failure(p)]
    found, worded = correctness_first(found), correctness_first(worded)
    if failing and not found and not worded:
        return (
            f"{failing[0]!r} marks failures (its true is a fail), which --map reward= would read"
            " as passes: write the pass/fail as a column of its own (its negation) and map that"
        )
    if not found and worded:
        more = f"; other candidates: {', '.join(worded[1:4])}" if len(worded) > 1 else ""
        return (
            f"where {worded[0]!r} holds grades written as text (1/0, true/false, pass/fail,"
            f" correct/incorrect, yes/no), pass --map {_shell('reward=' + worded[0])}{more}"
        )
    if not found:
        if not _any_grade_like(shape):
            return (
                "the rows hold no number and no true/false value a grade could be (ungraded"
                " generations?): pass the graded file written beside them, or --map"
                " reward=COLUMN"
            )
        return "pass --map reward=COLUMN"
    listed = _listed_hint(shape, found[0]) if found[0].endswith("[]") else ""
    if draws.n_unsaid(found[0].rpartition(".")[2]):
        listed = (
            " only where each doc was sampled once: it is a mean over n samples and the rows"
            " write neither n nor the replies; with n > 1, rerun writing them"
        )
    more = f"; other candidates: {', '.join(found[1:4])}" if len(found) > 1 else ""
    return f"pass --map {_shell('reward=' + found[0])}{listed}{more}"


def _listed_hint(shape: Shape, grades: str) -> str:
    """What a list of grades named by ``--map reward=NAME[]`` reads: one rollout per element,
    with every per-sample list the row holds split beside it (:mod:`whilecli.io.samples`)."""
    beside = [c + "[]" for c in split_of(shape, grades).columns()[1:]]
    split = f"; split with it, one value a sample: {', '.join(beside)}" if beside else ""
    return f" (a list: one rollout per element{split})"


#: Keys of an lm-eval sample row that are not metrics.
LM_EVAL_KEYS = frozenset(
    {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics"}
    | {"doc_hash", "prompt_hash", "target_hash"}
)


def _lm_metric(ctx: _Context) -> tuple[str, str] | None:
    """The pass/fail metric of lm-eval rows: the first 0/1 metric of the row's ``metrics`` list,
    else of the results file's metric names, else the first 0/1 numeric key beside ``doc_id``.
    A continuous metric (``bleu_max``, 0..72) is never the pass/fail."""
    shape, first_row = ctx.shape, ctx.first_row
    listed = first_row.get("metrics") if first_row else None
    candidates: list[tuple[str, str]] = []
    if isinstance(listed, list):
        candidates += [(n, "the row's metrics list") for n in listed if isinstance(n, str)]
    found = lmeval_results(ctx.source)
    if found is not None and isinstance(found[1], dict):
        for block in (found[1].get("results") or {}).values():
            if isinstance(block, dict):
                for key in block:
                    name = key.split(",")[0]
                    if not name.endswith("_stderr") and name != "alias":
                        candidates.append((name, f"a metric of {found[0].name}"))
    candidates += [(n, "the row's numeric key") for n in shape.children if n not in LM_EVAL_KEYS]
    rows = list(ctx.sample) or ([first_row] if first_row else [])
    seen: set[str] = set()
    for name, origin in candidates:
        if name in seen:
            continue
        seen.add(name)
        kinds = shape.kinds_at(name)
        if not kinds or not kinds - {"null"} <= NUMBER | {"bool"}:
            continue
        values = [r.get(name) for r in rows if r.get(name) is not None]
        if values and all(v in (0, 1) for v in values):
            if origin.startswith("the row's numeric") or name != candidates[0][0]:
                ctx.notes.append(
                    f"lm-eval: {name} is the pass/fail (the first 0/1 metric"
                    + (f"; {candidates[0][0]} is not 0/1" if name != candidates[0][0] else "")
                    + ")"
                )
            return name, origin
    return None


def _pass_counts(ctx: _Context) -> tuple[str, str] | None:
    """The (passes, draws) columns of rows that hold one task's pass count each
    (:data:`~whilecli.io.aliases.PASS_COUNT_ALIASES`, :data:`~whilecli.io.aliases.
    DRAW_COUNT_ALIASES`: whole numbers, top level, and no per-row reward beside them); None
    where the rows hold no such pair, or where a task's id repeats on the first rows (counts
    on each of a task's rows are one reply's, its unit tests passed of those run)."""
    shape = ctx.shape
    if any(shape.has(a) for a in ("reward", "score", "rewards")) or _scalar_reward(shape, None):
        return None  # a row's own grade: the counts beside it are its unit tests'
    rows = ctx.sample or ctx.id_rows
    key = ctx.fields.get("task_id")
    if key is not None and rows:
        ids = [str(v) for r in rows if (v := _value_at(r, key)) is not None]
        if len(set(ids)) < len(ids):
            return None

    def whole(name: str) -> bool:
        return shape.has(name) and shape.kinds_at(name) - {"null"} == {"int"}

    passes = next((a for a in PASS_COUNT_ALIASES if whole(a)), None)
    draws = next((a for a in DRAW_COUNT_ALIASES if whole(a)), None)
    return None if passes is None or draws is None else (passes, draws)


def _scalar_reward(shape: Shape, listed: tuple[str, bool] | None) -> str | None:
    """The first reward alias the rows carry, other than the list of grades
    :func:`_grade_list` reads (one grade per sample, or per token)."""
    skip = None if listed is None else listed[0].partition("[")[0]
    return next((a for a in REWARD_ALIASES if shape.has(a) and a != skip), None)


#: Names of numeric fields that count or place a row, never grade it (``extra_info.index``
#: of verl's ``main_generation`` output, ``sample_idx``, ``num_tokens``, ``created_at``):
#: a row carrying only these holds no value a grade could be.
NOT_GRADE_NAME = re.compile(
    r"(?:^|_)(?:index|idx|id|ids|step|steps|epoch|seed|count|len|length|lengths|tokens?|time"
    r"|timestamp|created|updated|at|year|version|position|offset|rank|line|lineno|n|num)$"
    r"|^(?:num|n)_"
)


def _any_grade_like(shape: Shape) -> bool:
    """Whether any field (or list of fields), :data:`HINT_DEPTH` levels deep, holds numbers
    or true/false values: something ``--map reward=`` could name. A field whose name says it
    counts or places the row (:data:`NOT_GRADE_NAME`) is none."""
    level = list(shape.children.items())
    for _ in range(HINT_DEPTH):
        for name, sub in level:
            if NOT_GRADE_NAME.search(name.lower()):
                continue
            if _grades(sub) or (sub.item is not None and _grades(sub.item)):
                return True
        level = [(k, child) for _, sub in level for k, child in sub.children.items()]
    return False


def _grades(node: Shape | None) -> bool:
    """Whether a list's elements are grades: numbers or booleans."""
    kinds = set() if node is None else node.kinds - {"null"}
    return bool(kinds) and kinds <= NUMBER | {"bool"}


def _texts(node: Shape | None) -> bool:
    """Whether a node is a list of texts (one reply per sample)."""
    if node is None or node.kinds - {"null"} != {"list"} or node.item is None:
        return False
    return node.item.kinds - {"null"} == {"string"}


#: Lists of a response's samples, an object each (an ``n=8`` request's ``choices``, a vLLM
#: ``RequestOutput``'s ``outputs``, Gemini's ``candidates``): a list of grades beside one holds
#: one grade per sample, as beside a list of replies.
REPLY_LISTS_OF_SAMPLES = ("choices", "outputs", "candidates")


def _grade_list(shape: Shape) -> tuple[str, bool] | None:
    """A list of grades, one per sample (``graded_list[]``, ``completions[].score``, a list
    beside a list of replies or of sample objects, :data:`REPLY_LISTS_OF_SAMPLES`), and
    whether it is per token instead: a list beside one text reply (SkyRL's token-level
    rewards) is summed, not spread over rollouts."""
    reply = next((a for a in COMPLETION_ALIASES + TEXT_REPLY_ALIASES if shape.has(a)), None)
    one_text = reply is not None and shape.kinds_at(reply) - {"null"} == {"string"}
    samples = any(_texts(shape.get((a,))) for a in SAMPLE_REPLY_LISTS) or any(
        holds_replies(shape.get((a,))) for a in REPLY_LISTS_OF_SAMPLES
    )
    for alias in GRADE_LIST_ALIASES:
        node = shape.get((alias,))
        if node is not None and node.kinds - {"null"} == {"list"} and _grades(node.item):
            if alias == "graded_list" or samples:
                return f"{alias}[]", False
            if one_text:
                return f"{alias}[]", True
            return None  # per sample, per turn or per token: --map says which
    for alias in SAMPLE_LIST_ALIASES:
        node = shape.get((alias,))
        item = None if node is None or node.kinds - {"null"} != {"list"} else node.item
        if item is None or "dict" not in item.kinds:
            continue
        grade = next((g for g in REWARD_ALIASES if _grades(item.children.get(g))), None)
        if grade is not None:
            return f"{alias}[].{grade}", False
    return None


#: Objects of named metrics, one number each (lighteval's details: ``metric``).
METRIC_STRUCTS = ("metric", "metrics")
#: Where a doc keeps its sampled replies, one per sample (lighteval's ``model_response.text``
#: since 0.10, ``predictions`` before): their count is n where a metric's name does not say.
SAMPLED_REPLIES = ("model_response.text", "predictions")


def _sample_mean_metric(ctx: _Context) -> tuple[str, pl.Expr, str] | None:
    """The metric of an object of named metrics that is each doc's mean correctness over n
    samples (:func:`whilecli.io.draws.sample_mean`: ``metric.math_pass@1:4_samples``), with
    n (from its name, else each doc's count of sampled replies) and where n came from; of
    several, the one of most draws (a count of replies ranks as 2). Decided by the names and
    the rows' shape, not by any row's values. None where no metric is such a mean of more
    than one sample, or where n cannot be told: then no 0/1 reading of it is a draw's. None
    too where a row is no doc (:func:`_one_doc_a_row`): beside rows that are draws of a task,
    each with its own grade, such a mean is the task's summary, no draws of its own."""
    if not _one_doc_a_row(ctx):
        return None
    found: list[tuple[int, str, pl.Expr, str]] = []
    for name in METRIC_STRUCTS:
        node = ctx.shape.get((name,))
        if node is None or node.kinds - {"null"} != {"dict"}:
            continue
        for key, sub in node.children.items():
            mean, n = draws.sample_mean(key)
            if not mean or not _grades(sub):
                continue
            if n is not None and n > 1:
                found.append((n, f"{name}.{key}", pl.lit(n, dtype=pl.Int64), f"n = {n}, its name"))
            elif n is None and (listed := _sampled_replies(ctx)) is not None:
                count = ctx.leaves.expr(listed, pl.List(pl.String)).list.len().cast(pl.Int64)
                found.append((2, f"{name}.{key}", count, f"n = the replies in {listed}[]"))
    if not found:
        return None
    _, path, n_expr, said = max(found, key=lambda f: f[0])
    return path, n_expr, said


def _one_doc_a_row(ctx: _Context) -> bool:
    """Whether each row is one doc, what a mean over n samples sums up: lighteval details,
    or rows whose task ids (else prompts) do not repeat on the sampled rows. Rows that
    repeat an id are draws of that task, each a rollout of its own."""
    if ctx.fmt == lighteval.NAME:
        return True
    rows = ctx.sample or ctx.id_rows
    alias = next((a for a in (*TASK_ALIASES, *PROMPT_ALIASES) if ctx.shape.has(a)), None)
    if alias is None:
        return True
    seen = [repr(v) for v in (_value_at(row, alias) for row in rows) if v is not None]
    return len(seen) == len(set(seen))


def _sampled_replies(ctx: _Context) -> str | None:
    """The list of a doc's sampled replies (:data:`SAMPLED_REPLIES`, a list of texts): its
    length on each row is that doc's n. Outside lighteval details a list is the samples only
    where it holds as many texts, at least one, on every sampled row (n is the run's); a
    list whose length varies (the answers extracted from one reply, none on a fail) is not."""
    for path in SAMPLED_REPLIES:
        if not _texts(ctx.shape.get(split_path(path))):
            continue
        if ctx.fmt == lighteval.NAME or _same_length(ctx.sample, path):
            return path
    return None


def _same_length(rows: Sequence[Mapping[str, object]], path: str) -> bool:
    """Whether the list at ``path`` holds as many values, at least one, on every one of
    ``rows`` that holds a list there."""
    lengths = {len(v) for v in (_value_at(row, path) for row in rows) if isinstance(v, list)}
    return len(lengths) == 1 and 0 not in lengths


def _metric_struct(ctx: _Context) -> str | None:
    """The first 0/1 metric of an object of named metrics (``metric.extractive_match``): 0 or 1
    on every sampled row (a Parquet file's first rows: :attr:`_Context.metric_rows`); without
    one, the first numeric one. A
    metric over several samples that is not their mean (``maj@4``, ``pass@10:64_samples``:
    :func:`whilecli.io.draws.aggregate`) is no rollout's grade and never picked, nor is a
    mean of samples whose n cannot be told (``pass@k:k=1`` beside no replies): read as one
    draw's grade it would be k = 1 where the doc may hold several."""
    for name in METRIC_STRUCTS:
        node = ctx.shape.get((name,))
        if node is None or node.kinds - {"null"} != {"dict"}:
            continue
        numeric = [
            k
            for k, sub in node.children.items()
            if _grades(sub) and not draws.aggregate(k) and not draws.n_unsaid(k)
        ]
        rows = list(ctx.sample) or list(ctx.metric_rows)
        rows = rows or ([ctx.first_row] if ctx.first_row else [])
        for key in numeric:
            objects = [row.get(name) for row in rows]
            values = [o.get(key) for o in objects if isinstance(o, dict)]
            values = [v for v in values if v is not None]
            if not rows or (values and all(v in (0, 1) for v in values)):
                return f"{name}.{key}"
    return None


def _reward_parts(shape: Shape) -> list[str] | None:
    node = shape.get(("rewards",))
    if node is None or "dict" not in node.kinds:
        return None
    # verifiers: {name: {score, weight} | None}; None = not scored, adds nothing
    names = [
        n
        for n, sub in node.children.items()
        if sub.kinds <= {"dict", "null"} and ("score" in sub.children or sub.kinds == {"null"})
    ]
    return names or None


def summed_columns(parts: Sequence[pl.Expr]) -> pl.Expr:
    """A reward kept in named columns, one per reward function (TRL's completion tables):
    their sum, null where any of them is null. A function that returns None could not grade
    the row (TRL's ``accuracy_reward`` where the gold answer does not parse): the row is
    ungraded (left out per ``--missing``, and said), never a failure, however many columns
    there are. (A verifiers ``rewards`` dict is another rule: a None part there is a part
    not scored, :func:`_reward_parts`.)"""
    total = pl.sum_horizontal(parts)
    return pl.when(pl.any_horizontal([p.is_null() for p in parts])).then(None).otherwise(total)


def _trl_reward_columns(shape: Shape) -> list[str]:
    return [
        name
        for name, sub in shape.children.items()
        if name not in TRL_NOT_REWARDS and sub.kinds - {"null"} and sub.kinds - {"null"} <= NUMBER
    ]


def _truncation(
    shape: Shape,
    leaves: Leaves,
    col: str | None,
    fmt: str,
    sources: dict[str, str],
    sample: Sequence[Mapping[str, object]] = (),
    side_cap: Side | None = None,
) -> tuple[pl.Expr, pl.Expr | None]:
    """Whether each row's reply was cut off (DESIGN section 1): true, false, or null (not
    recorded). ``--map`` wins; verifiers v1 traces and lighteval have their own rules. Else
    every alias of :data:`TRUNCATION_ALIASES` the rows carry is read, and the first that says
    something about a row decides that row (a pool joining a harness that writes
    ``truncated`` with one that writes only ``finish_reason``, or ``truncated: null`` beside a
    reason, reads both). A reason's text is read as every word is (:func:`facts.cut_of_reason`:
    ``" Length\\n"`` is ``length``). A NeMo Gym response with no ``incomplete_details``
    finished, as did a row with no ``stop_condition`` where that is the first alias the rows
    carry (where another comes first, such a row is not known).

    Precedence, one rule (:func:`_by_standing`): a finish / stop reason the row records
    decides; else a long-standing flag (``truncated``, ``is_truncated``, ...); else the token
    count beside its cap; else the answers above for rows that say nothing; only then a flag
    of weaker standing (:data:`WEAK_CUT_FLAGS`, ``is_reasoning_complete``, ``stop_type``:
    names other tools give to other things), which never outvotes a recorded reason or a
    count under the cap.

    The second value: where a flag says a row was not cut while its token count reached its
    recorded cap and no finish reason speaks (:func:`cut_disputed`), else None."""
    if col is not None and "[]" in col:  # one per rollout of a listed reward: read each
        sources["truncated"] = f"{col}, one per rollout (--map)"
        if "string" in shape.kinds_at(col):
            return leaves.expr(col, pl.String).list.eval(facts.cut_of_reason(pl.element())), None
        return leaves.expr(col, pl.Boolean), None
    if col is not None:
        if "string" in shape.kinds_at(col):
            sources["truncated"] = f"{col}, a finish reason: 'length', 'max_tokens', ... (--map)"
            return facts.cut_of_reason(leaves.text(col)), None
        sources["truncated"] = f"{col} (--map)"
        return leaves.expr(col, pl.Boolean), None
    if fmt == "verifiers-traces" and (shape.has("stop_condition") or shape.has("calls")):
        sources["truncated"] = (
            f"stop_condition a limit on tokens or the context, or in"
            f" {{{', '.join(sorted(STOP_CUT))}}}, or the last call's finish_reason == 'length'"
        )
        return _trace_truncation(shape, leaves), None
    if fmt == lighteval.NAME:  # its truncated / truncated_tokens_count count the prompt's tokens
        sources["truncated"] = "not recorded (lighteval counts the prompt's truncated tokens)"
        return pl.lit(None, dtype=pl.Boolean), None
    said: list[pl.Expr] = []  # per alias: true / false where the row records it, else null
    reasons: list[pl.Expr] = []  # finish / stop reasons
    flags: list[pl.Expr] = []  # long-standing flags
    weak: list[pl.Expr] = []  # flags of weaker standing
    finished: list[pl.Expr] = []  # what a row the aliases say nothing about means
    shown: list[tuple[int, str]] = []  # (standing, words)
    for alias, values in (*TRUNCATION_ALIASES, *_held_reasons(shape)):
        if values is LAST_TURN or values is CUT_STATUS:
            # a status beside its incomplete_details is read through that reason's alias
            detailed = values is CUT_STATUS and shape.has(_beside(alias))
            if shape.has(alias) and not detailed:
                said.append(
                    _last_turn(leaves, alias)
                    if values is LAST_TURN
                    else _status(shape, leaves, alias)
                )
                reasons.append(said[-1])
                shown.append(
                    (0, _turn_words(alias) if values is LAST_TURN else _status_words(alias))
                )
            continue
        nemo = alias == "response.incomplete_details.reason"
        responses = alias == "incomplete_details.reason"
        parent = alias.rpartition(".")[0]
        if not (shape.has(alias) or ((nemo or responses) and shape.has(parent))):
            continue
        if alias == "steps[].truncated":
            said.append(leaves.expr(alias, pl.Boolean).list.any())
            flags.append(said[-1])
            shown.append((1, "any steps[].truncated"))
            continue
        if values is None or values is DONE:
            flag = _flag(shape, leaves, alias)
            said.append(flag if values is None else ~flag)
            lesser = values is DONE or alias.rpartition(".")[2] in WEAK_CUT_FLAGS
            (weak if lesser else flags).append(said[-1])
            shown.append((3 if lesser else 1, alias if values is None else f"not {alias}"))
            continue
        generic = values is CUT_REASONS
        reason = _text_at(shape, leaves, alias) if generic else leaves.expr(alias, pl.String)
        said.append(facts.cut_of_reason(reason, None if generic else values))
        lesser = values is STOP_TYPE_CUT
        (weak if lesser else reasons).append(said[-1])
        words = ", ".join(repr(v) for v in sorted(values))
        if values is CUT_REASONS:
            words = "'length', 'max_tokens', 'max_output_tokens', 'model_length', ... (any case)"
        elif values is STOP_CUT:
            words = f"{words}, or a limit on tokens or the context"
        one = f"{alias} == {words}" if len(values) == 1 else f"{alias} in {{{words}}}"
        shown.append((3 if lesser else 0, one))
        if nemo:
            finished.append(pl.when(pl.col("response").is_not_null()).then(pl.lit(False)))
        elif alias == "incomplete_details.reason" and shape.has("status"):
            done = facts.lower_word(leaves.text("status")) == "completed"
            finished.append(pl.when(done).then(pl.lit(False)))
        elif alias == "stop_condition" and len(said) == 1:
            finished.append(pl.lit(False))
    counted = _count_at_cap(shape, leaves, sample, side_cap)
    if counted is not None:  # what a row no reason or long-standing flag speaks of says
        finished.insert(0, counted[0])
        shown.append((2, counted[1]))
    if not said and counted is None:
        unread = unread_cut_field(shape)
        sources["truncated"] = (
            "not recorded (unknown)" if unread is None else f"{NOT_READ}{unread}{_NOT_READ_END}"
        )
        return pl.lit(None, dtype=pl.Boolean), None
    if not said:
        assert counted is not None
        sources["truncated"] = counted[1]
        return counted[0], None
    sources["truncated"] = _standing_words(shown)
    if len(said) == 1 and not finished:
        return said[0], None
    read = _by_standing(reasons, flags, finished, weak)
    if counted is None or not flags:
        return read, None
    return read, cut_disputed(flags, reasons, counted[0])


def _held_reasons(shape: Shape) -> list[tuple[str, frozenset[str]]]:
    """The finish / stop reasons of top-level objects no table names
    (:data:`~whilecli.io.aliases.TRUNCATION_ALIASES`): any object holding a reason's name
    (:data:`~whilecli.io.aliases.REASON_NAMES`), but a judge's, a grader's or a tool's
    (:data:`~whilecli.io.aliases.NOT_REASON_HOLDERS`)."""
    known = {alias for alias, _ in TRUNCATION_ALIASES}
    out: list[tuple[str, frozenset[str]]] = []
    for name, child in shape.children.items():
        if "dict" not in child.kinds or NOT_REASON_HOLDERS.search(name) or "." in name:
            continue
        for reason in REASON_NAMES:
            alias = f"{name}.{reason}"
            if reason in child.children and alias not in known:
                out.append((alias, CUT_REASONS))
    return out


def _last_turn(leaves: Leaves, alias: str) -> pl.Expr:
    """An episode's finish / stop reason from a list of its turns (``turns[].finish_reason``):
    the last turn that records one decides, as :func:`facts.cut_of_reason` reads it."""
    listed = leaves.expr(alias, pl.String)
    return facts.cut_of_reason(listed.list.drop_nulls().list.last())


def _turn_words(alias: str) -> str:
    turns, _, reason = alias.partition("[].")
    return f"the last {turns}[].{reason} in {{'length', 'max_tokens', ...}}"


def _status(shape: Shape, leaves: Leaves, alias: str) -> pl.Expr:
    """An OpenAI Responses API ``status`` (:data:`~whilecli.io.aliases.CUT_STATUS`) where
    the rows keep no ``incomplete_details`` beside it (where they do, its reason decides:
    ``max_output_tokens`` cut, ``content_filter`` not): ``incomplete`` is cut off, the
    API's incomplete but for a content filter, which names itself; ``completed`` is not
    cut; any other word says nothing."""
    status = facts.lower_word(leaves.text(alias))
    incomplete = status.is_in(sorted(CUT_STATUS))
    return pl.when(incomplete).then(pl.lit(True)).when(status == "completed").then(pl.lit(False))


def _beside(status: str) -> str:
    """The ``incomplete_details`` object beside a Responses API ``status``."""
    return status[: -len("status")] + "incomplete_details"


def _status_words(alias: str) -> str:
    return f"{alias} == 'incomplete' (no {_beside(alias)} recorded)"


#: Names of fields that record whether a reply was cut off, wherever they stand: a finish /
#: stop reason, a truncation flag, a Responses API's ``incomplete_details``.
_CUT_FIELD_NAMES = frozenset(
    {*REASON_NAMES, "truncated", "is_truncated", *CUT_FLAGS, "incomplete_details"}
)


#: How the sources name truncation that a field may record in a form not read.
NOT_READ, _NOT_READ_END = "not read: ", " may record it in a form not read (unknown)"


def unread_of(said: str) -> str | None:
    """The field the sources' truncation words (``said``) name as not read, or None."""
    if not said.startswith(NOT_READ) or not said.endswith(_NOT_READ_END):
        return None
    return said[len(NOT_READ) : -len(_NOT_READ_END)]


def unread_cut_field(shape: Shape, depth: int = 4) -> str | None:
    """The first field, at any depth the sample shows (lists stepped into with ``[]``),
    whose name says it records a cut (:data:`_CUT_FIELD_NAMES`), where none was read: a
    field the reader does not follow, so truncation is not read, not "not recorded"."""

    def walk(node: Shape, path: str, left: int) -> str | None:
        for name, child in node.children.items():
            here = f"{path}{name}"
            if name in _CUT_FIELD_NAMES and child.kinds - {"null"}:
                return here
            if left > 0:
                found = walk(child, f"{here}.", left - 1)
                if found is not None:
                    return found
        if node.item is not None and left > 0:
            return walk(node.item, f"{path[:-1]}[].", left - 1)
        return None

    return walk(shape, "", depth)


def _standing_words(shown: list[tuple[int, str]]) -> str:
    """The words that say where truncation was read, in the order :func:`_by_standing`
    weighs them: within one standing "or" (any that says cut), between them "else"."""
    tiers = [[words for rank, words in shown if rank == tier] for tier in range(4)]
    return "; else ".join(" or ".join(words) for words in tiers if words)


def _either(said: list[pl.Expr]) -> pl.Expr:
    """Records of one standing together: cut where any says so (a harness's own flag that
    tracks the context's end beside another: one saw the cut), else not cut where one says
    not, else null (none speaks)."""
    if not said:
        return pl.lit(None, dtype=pl.Boolean)
    cut = pl.any_horizontal([x.fill_null(False) for x in said])
    spoke = pl.any_horizontal([x.is_not_null() for x in said])
    return pl.when(cut).then(pl.lit(True)).otherwise(pl.when(spoke).then(pl.lit(False)))


def _by_standing(
    reasons: list[pl.Expr], flags: list[pl.Expr], finished: list[pl.Expr], weak: list[pl.Expr]
) -> pl.Expr:
    """Whether a row was cut off, the first record that speaks deciding (DESIGN section 1):
    a finish / stop reason or a long-standing flag (``truncated``, ``is_truncated``, ...),
    together (:func:`_either`: a harness's flag that tracks the context's end beside the
    API's ``stop`` saw a cut the API did not); else ``finished`` (the token count beside its
    cap, then what a row the aliases say nothing about means); else a flag of weaker
    standing (:data:`WEAK_CUT_FLAGS`, ``is_reasoning_complete``, ``stop_type``), which so
    never outvotes a recorded normal stop or a count under the cap."""
    return pl.coalesce([_either([*reasons, *flags]), *finished, _either(weak)])


def cut_disputed(flags: list[pl.Expr], reasons: list[pl.Expr], at_cap: pl.Expr) -> pl.Expr:
    """Rows a flag says were not cut off while their token count reached the recorded cap,
    and no finish reason speaks (a reason of ``stop`` at the cap is a reply whose end token
    fell on it, as vLLM records). The flag is believed, so such a row reads as not cut; a
    harness that writes ``false`` on every row beside replies cut at the cap looks the same,
    and the read counts these rows (:attr:`whilecli.io.facts.Facts.cut_disputed`) for the
    route to weigh (DESIGN section 2, "Data quality first")."""
    says_not = pl.any_horizontal([f.eq(False).fill_null(False) for f in flags])
    says_cut = pl.any_horizontal([f.fill_null(False) for f in flags])
    spoke = pl.any_horizontal([r.is_not_null() for r in reasons]) if reasons else pl.lit(False)
    return at_cap.fill_null(False) & says_not & ~says_cut & ~spoke


#: Sampled rows whose token count runs past their cap that say the cap limits something
#: else (a judge's budget, one turn of several): fewer are those rows' own oddity, read as
#: not known at them.
PAST_CAP_ROWS = 2


def _count_at_cap(
    shape: Shape,
    leaves: Leaves,
    sample: Sequence[Mapping[str, object]] = (),
    side_cap: Side | None = None,
) -> tuple[pl.Expr, str] | None:
    """Whether each row's reply reached its token cap, where the rows carry the reply's
    token count and the cap as numbers (:data:`TOKEN_COUNT_ALIASES`,
    :data:`TOKEN_CAP_ALIASES`, first match each): true where the count reaches the cap, false
    where it stays under it, null where either is missing or the count is past the cap (not a
    count of the tokens that cap limits). None where the rows carry no such pair; else the
    expression and the words that say where it was read. A count past its cap on any sampled row (``sample``)
    says the cap limits something else (a judge's budget, one turn of several): no pair,
    from :data:`PAST_CAP_ROWS` such rows (or every sampled row, where fewer are sampled).
    Where the rows carry a count and no cap, the cap the settings beside them record
    (``side_cap``, :func:`whilecli.io.sources.sidecar_cap`: vf-eval's
    ``metadata.json: sampling_args.max_tokens``) is every row's, by the same rule (a count
    read only against its own cap, :data:`PAIRED_CAPS`, is not paired with it)."""
    count_col = _number_at(shape, TOKEN_COUNT_ALIASES)
    paired = PAIRED_CAPS.get(count_col.rpartition(".")[2]) if count_col is not None else None
    cap_col = _cap_col(shape, count_col)
    if count_col is not None and cap_col is None and side_cap is not None and not paired:
        return _count_at_side_cap(shape, leaves, sample, count_col, side_cap)
    if count_col is None or cap_col is None or count_col == cap_col:
        return None
    if not (shape.kinds_at(count_col) - {"null"} and shape.kinds_at(cap_col) - {"null"}):
        return None  # null on every sampled row: nothing is said
    if _past_cap(sample, count_col, lambda row: _value_at(row, cap_col)):
        return None
    count = leaves.expr(count_col, pl.Float64)
    cap = leaves.expr(cap_col, pl.Float64)
    reached = pl.when((cap > 0) & (count >= 0) & (count <= cap)).then(count >= cap)
    return reached, f"{count_col} reaching {cap_col} (the reply's tokens at its cap)"


def _cap_col(shape: Shape, count_col: str | None) -> str | None:
    """Where the rows record the token cap their replies were sampled under: the first of
    :data:`TOKEN_CAP_ALIASES` they hold numbers at, and beside a count read only against
    its own cap (:data:`PAIRED_CAPS`: ``output_length`` and ``max_length``), that cap."""
    caps = TOKEN_CAP_ALIASES
    paired = PAIRED_CAPS.get(count_col.rpartition(".")[2]) if count_col is not None else None
    if paired:
        places = (*SAMPLING_PLACES, *REQUEST_PLACES, *EXTRA_PLACES)
        caps = (*caps, *dict.fromkeys(place + cap for place in places for cap in paired))
    return _number_at(shape, caps)


def token_cap(shape: Shape, leaves: Leaves, side_cap: Side | None) -> pl.Expr | None:
    """Each row's token cap as recorded (:func:`_cap_col`), else the cap the settings beside
    the rows record (``side_cap``); None where neither is. What check 4 compares between a
    teacher's rows and the student's (a teacher sampled under a larger cap may win only with
    replies the student's cap would cut)."""
    col = _cap_col(shape, _number_at(shape, TOKEN_COUNT_ALIASES))
    if col is not None:
        cap = leaves.expr(col, pl.Float64)
        return pl.when(cap > 0).then(cap)
    if side_cap is not None:
        return pl.lit(float(side_cap.value), dtype=pl.Float64)
    return None


def reply_tokens(shape: Shape, leaves: Leaves) -> tuple[pl.Expr, str] | None:
    """Each row's reply token count (the first of :data:`TOKEN_COUNT_ALIASES` the rows hold
    numbers at; null where negative) and its field, read where no cap is recorded beside it:
    replies piled at one longest count are replies cut at a cap no field names
    (:attr:`whilecli.io.facts.Facts.cut_at_longest`). None where the rows hold no count."""
    col = _number_at(shape, TOKEN_COUNT_ALIASES)
    if col is None or not shape.kinds_at(col) - {"null"}:
        return None
    count = leaves.expr(col, pl.Float64)
    return pl.when(count >= 0).then(count), col.replace(LITERAL_DOT, ".")


def _check_token_numbers(ctx: _Context) -> None:
    """A reply's token count and its cap, where the rows carry both (the first alias of
    each they hold, :data:`TOKEN_COUNT_ALIASES`, :data:`TOKEN_CAP_ALIASES`) and numbers
    there, are numbers on every row: a sampled row's text, flag, list or object among them
    is refused at its row, as the same value past the sample is (read on one of the first
    rows, it silently left the whole file's truncation unread). A field that holds no
    number on any sampled row (``max_tokens: "inf"``) is no count or cap: not paired."""
    shape = ctx.shape
    held = [
        next((a for a in aliases if shape.kinds_at(a) - {"null"}), None)
        for aliases in (TOKEN_COUNT_ALIASES, TOKEN_CAP_ALIASES)
    ]
    if None in held:
        return
    for alias in held:
        assert alias is not None
        kinds = shape.kinds_at(alias) - {"null"}
        if kinds <= NUMBER or not kinds & NUMBER:  # numbers, or no numbers at all: no pair
            continue
        from whilecli.io.shape import kind_words

        found = _first_other(ctx, alias, NUMBER | {"null"})
        value, where = found if found is not None else (None, {})
        other = frozenset(shape.kinds_at(alias) - NUMBER - {"null"})
        what = kind_words(value) if found is not None else _kinds(other)
        raise InputError(
            f"holds {what}, not a number: a token count and its cap are numbers",
            file=ctx.source.name,
            field=alias,
            **where,
        )


def _count_at_side_cap(
    shape: Shape,
    leaves: Leaves,
    sample: Sequence[Mapping[str, object]],
    count_col: str,
    side_cap: Side,
) -> tuple[pl.Expr, str] | None:
    """:func:`_count_at_cap` against the cap a file beside the rows records: true where the
    count reaches it, false under it, null past it; None where the count is null on every
    sampled row or past the cap on enough of them (:func:`_past_cap`: it counts something
    else)."""
    if not shape.kinds_at(count_col) - {"null"}:
        return None
    limit = float(side_cap.value)
    if _past_cap(sample, count_col, lambda row: limit):
        return None
    count = leaves.expr(count_col, pl.Float64)
    reached = pl.when((count >= 0) & (count <= limit)).then(count >= limit)
    return (
        reached,
        f"{count_col} reaching {side_cap.where} = {limit:g} (the reply's tokens at its cap)",
    )


def _past_cap(
    sample: Sequence[Mapping[str, object]],
    count_col: str,
    cap_of: Callable[[Mapping[str, object]], object],
) -> bool:
    """Whether the sampled rows say a cap limits something else than the count: a count
    past its cap (``cap_of`` a row) on :data:`PAST_CAP_ROWS` rows or more (on every sampled
    row, where fewer are sampled); one such row is that row's oddity."""
    past = 0
    for row in sample:
        n, limit = _value_at(row, count_col), cap_of(row)
        numbers = isinstance(n, int | float) and isinstance(limit, int | float)
        past += bool(numbers and not isinstance(n, bool) and 0 < limit < n)  # type: ignore[operator]
    return bool(past) and past >= min(PAST_CAP_ROWS, len(sample))


def _number_at(shape: Shape, aliases: tuple[str, ...]) -> str | None:
    """The first of ``aliases`` the rows hold numbers at, each step above it an object."""
    return next(
        (a for a in aliases if shape.has(a) and shape.kinds_at(a) - {"null"} <= NUMBER),
        None,
    )


def _flag(shape: Shape, leaves: Leaves, alias: str) -> pl.Expr:
    """A truncation flag: true/false and 0/1 as they are; written as text, what
    :func:`whilecli.io.words.flag_text` says (``"true"``, ``"False"``, ``"1"``, a cut-off
    reason such as ``"length"``: any case; ``"n/a"``: unknown; ``"maybe"``: refused at its
    row), the same rule for every command."""
    return leaves.flag(alias, shape.kinds_at(alias))


#: What a version column may hold: text or numbers, each read as its text.
VERSION_KINDS = frozenset({"string", "int", "float"})


def _first_number(shape: Shape, aliases: Sequence[str]) -> str | None:
    """The first of ``aliases`` the rows hold numbers (and nulls) in, or None."""
    for alias in aliases:
        kinds = shape.kinds_at(alias) - {"null"}
        if kinds and kinds <= {"int", "float"}:
            return alias
    return None


def _version_aliases(shape: Shape) -> list[str]:
    """The version columns the rows carry (:data:`VERSION_ALIASES`, in order) that hold
    text or numbers only: a trainer's step, a version name, or both in one column."""
    out = []
    for alias in VERSION_ALIASES:
        kinds = shape.kinds_at(alias) - {"null"}
        if kinds and kinds <= VERSION_KINDS:
            out.append(alias)
    return out


def _trace_truncation(shape: Shape, leaves: Leaves) -> pl.Expr:
    """verifiers v1 ``Trace.is_truncated``: a framework limit, or the last error-free call
    finished for length (each read as a reason is, :func:`facts.cut_of_reason`)."""
    stop = pl.lit(False)
    if shape.has("stop_condition"):
        stop = facts.cut_of_reason(leaves.expr("stop_condition", pl.String), STOP_CUT)
        stop = stop.fill_null(False)
    if not (shape.has("calls[].finish_reason") and leaves.reachable("calls[].finish_reason")):
        return stop
    leaves.expr("calls[].finish_reason", pl.String)
    has_error = shape.has("calls[].error") and leaves.reachable("calls[].error")
    calls = pl.col("calls")
    if has_error:
        leaves.text("calls[].error")
        calls = calls.list.eval(pl.element().filter(pl.element().struct.field("error").is_null()))
    last = calls.list.eval(pl.element().struct.field("finish_reason").cast(pl.String)).list.last()
    return stop | facts.cut_of_reason(last).fill_null(False)


def _model(
    shape: Shape,
    leaves: Leaves,
    col: str | None,
    version_col: str | None,
    fmt: str,
    source: Source,
    sources: dict[str, str],
    ctx: _Context | None = None,
) -> tuple[pl.Expr, pl.Expr | None]:
    """The model that wrote each row, as recorded (``@version`` kept), and its version where
    a column records one. First match wins row by row in :data:`MODEL_ALIASES` and in
    :data:`VERSION_ALIASES`; a name that names no model (blank, ``None``, ``N/A``: see
    :func:`facts.named_model`) is no name, so the row falls to the next alias, the sidecar's
    model, or none. ``policy_version`` names a model only where it carries ``@``;
    ``model_version`` where it carries ``@`` or its text reads as no version (``v7``, ``7`` and
    ``step_7`` are versions, :data:`whilecli.io.versions.VERSION_LIKE`). A row that records
    no version, in ``@`` or a checkpoint's name, takes the step its file's path states
    (:func:`whilecli.io.versions.path_step`: ``step_100/rollouts.jsonl``), as a sidecar's
    model fills a row naming none; prime-rl's run layout reads its step folder itself."""
    raw: pl.Expr | None = None
    if col is not None:
        raw = facts.named_model(leaves.expr(col, pl.String))
        sources["model"] = f"{col} (--map)"
    elif fmt == "verifiers-traces" and shape.has("agent.config.model"):
        raw = facts.named_model(leaves.expr("agent.config.model", pl.String))
        sources["model"] = "agent.config.model"
    elif present := [a for a in MODEL_ALIASES if _model_alias(shape, a, ctx)]:
        # First match wins row by row: a row without the first alias falls to the next.
        raw = pl.coalesce([_model_at(leaves, a) for a in present])
        sources["model"] = " else ".join(a + _model_part(a) for a in present)
        if all(unsure_model_alias(a) for a in present) and ctx is not None:
            ctx.model_unsure = present[0]
        elif source.model_unsure is not None and ctx is not None:
            ctx.model_unsure = source.model_unsure  # a converted document's model, from a name
    side = sidecar_model(fmt, source)
    if raw is None and side is not None:
        raw = pl.lit(side.value, dtype=pl.String)
        sources["model"] = side.where
        if side.unsure and ctx is not None:  # a settings file's model: a judge's as often
            ctx.model_unsure = f"{side.where} (a settings file beside the rows)"
    elif raw is not None and side is not None:
        raw = raw.fill_null(pl.lit(side.value, dtype=pl.String))
        sources["model"] += f" (else {side.where})"
    if raw is None:
        raw = pl.lit(None, dtype=pl.String)
        sources["model"] = "not recorded"
    version: pl.Expr | None = None  # None: the part after '@' in the model, where present
    if version_col is not None:
        version = facts.version_text(leaves.expr(version_col, pl.String))
        sources["policy_version"] = f"{version_col} (--map)"
    elif aliases := _version_aliases(shape):
        read = [facts.version_text(leaves.expr(a, pl.String)) for a in aliases]
        version = read[0] if len(read) == 1 else pl.coalesce(read)
        sources["policy_version"] = " else ".join(aliases)
    elif (lag := _first_number(shape, LAG_ALIASES)) is not None:
        steps = leaves.expr(lag, pl.Float64).round(0).cast(pl.Int64)
        version = pl.when(steps.is_not_null()).then((-steps).cast(pl.String))
        sources["policy_version"] = f"-{lag} (steps behind: 0 is the policy you train)"
        if ctx is not None:
            ctx.version_lag = lag
    elif sources["model"] == "not recorded":
        sources["policy_version"] = "not recorded"
    else:
        sources["policy_version"] = f"{sources['model']}, where it carries '@version'"
    if version is not None:
        sources["policy_version"] += " (else the model where it carries '@version')"
    stated = path_step(source.path) if source.path is not None and fmt != PRIME_RL else None
    if stated is not None:  # the path's step, for rows that record none (prime-rl: its own)
        from_path = facts.path_version(raw, stated[0])
        version = from_path if version is None else version.fill_null(from_path)
        sources["policy_version"] += f" (else {stated[0]}, the step of {stated[1]})"
    return raw, version


def _model_part(alias: str) -> str:
    """Which part of a version-named alias names a model, as the sources say it."""
    if alias == "policy_version":
        return " (before '@')"
    if alias in VERSION_ALIASES:
        return " (where it names a model, not a version)"
    return ""


def _model_alias(shape: Shape, alias: str, ctx: _Context | None) -> bool:
    """Whether the rows hold model names at ``alias`` (strings; a column that mixes them with
    other kinds is refused at its first such row). ``policy_version`` may mix numbers with
    its text: only its ``M@version`` strings name a model. A nested field whose object also
    holds a grader's field (:func:`_graders_object`) names the grader's model, not the
    writer's."""
    if alias == "policy_version":
        kinds = shape.kinds_at(alias)
        found = _first(shape, (alias,), VERSION_KINDS, ctx, "a policy version")
        return found is not None and "string" in kinds
    if not shape.has(alias) or not _within(shape, alias) or _graders_object(shape, alias):
        return False
    if _first(shape, (alias,), frozenset({"string"}), ctx, "a model name") is not None:
        return True
    held = shape.kinds_at(alias) - {"null"}
    # numbers or flags where a sure field names the model: no name, said (an object or a
    # list is read by its name's key or its one element, MODEL_ALIASES)
    scalar = bool(held) and held <= {"int", "float", "bool"}
    sure = alias not in VERSION_ALIASES and not unsure_model_alias(alias)
    if ctx is not None and scalar and sure:
        _refuse_not_names(ctx, alias, held)
    return False


def _refuse_not_names(ctx: _Context, alias: str, held: set[str]) -> None:
    """A sure model alias whose every value is a number or a flag: no model name, refused at
    its first row rather than read as "no model" (a version alias holding numbers is a
    version, read so elsewhere; an object or a list is read by its name's key or its one
    element)."""
    from whilecli.io.shape import KIND_WORDS, kind_words

    hint = (
        f"pass --map {_shell(f'model={alias}')} to read its values as text, or --map"
        " model=COLUMN to read the model from another column"
    )
    if (found := _first_other(ctx, alias, frozenset({"string"}))) is not None:
        value, where = found
        raise InputError(
            f"holds {kind_words(value)}, not a model name (a string): {hint}",
            file=ctx.source.name,
            field=alias,
            **where,
        )
    words = " and ".join(sorted({KIND_WORDS.get(k, k) for k in held}))
    raise InputError(
        f"holds {words}, not model names (strings): {hint}", file=ctx.source.name, field=alias
    )


#: A field's name that says a grader's: the judge words (:data:`whilecli.io.judge.JUDGE_WORDS`),
#: and ``grader``, ``scorer``, ``evaluator``, ``reward_model``, ``rubric``, ``verdict``.
_GRADER_FIELD = re.compile(
    r"judge|judgment|judgement|annotator|grader|grading|scorer|evaluator|reward_?model|rubric|verdict"
)


def _graders_object(shape: Shape, alias: str) -> bool:
    """Whether a nested model field's object (``metadata`` of ``metadata.model``, ``config``
    of ``config.model``) also holds a field a grader writes (``judge_prompt``, ``grader``,
    ``verdict``), or is itself under such a name: its ``model`` is the judge's as often."""
    path = split_path(alias)
    for end in range(1, len(path)):
        node = shape.get(path[:end])
        if node is None or _GRADER_FIELD.search(path[end - 1].lower()):
            return True
        if end == len(path) - 1 and any(_GRADER_FIELD.search(k.lower()) for k in node.children):
            return True
    return False


def _model_at(leaves: Leaves, alias: str) -> pl.Expr:
    """The model names at ``alias``, null where a row names none; under a role's name
    (:data:`MODEL_ROLES`: ``policy``, ``agent``) only a name that looks like a model's."""
    raw = leaves.expr(alias, pl.String)
    if alias.rpartition(".")[2] in MODEL_ROLES:
        return facts.model_like(raw)
    text = facts.named_model(raw)
    at = text.str.contains("@", literal=True)
    if alias == "policy_version":
        return pl.when(at).then(text)
    if alias in VERSION_ALIASES:  # model_version: "v7" is a version, "Qwen3-8B" a model
        return pl.when(at | ~text.str.strip_chars().str.contains(VERSION_LIKE)).then(text)
    return text
