"""What a row means, decided once (DESIGN section 1): the row facts every command inherits.

Each fact is a polars expression over a file's narrow frame (see :mod:`whilecli.io.read`)
or an aggregation of those expressions, so reading computes all of them in the one
streaming pass it makes over each file:

- ``passed``: reward ≥ threshold − :data:`PASS_TOLERANCE` (a rubric sum of
  0.9999999999999999 is a pass, and so is one summed in float32, 0.9999999403953552); the
  same rule in every command.
- ``graded``: the grade is present and not NaN. An ungraded row among graded ones is left
  out of every rate and counted (``--missing fail``: counted as a failure instead); a file
  with no graded row is refused.
- ``reply``: ``ok`` / ``empty`` / ``error``. ``error``: the harness recorded an error instead
  of a reply (an error field holding one, an error flag set, a failed request's status, an
  HTTP error status 400-599 or an error class naming a failed request beside no reply, a
  stop/finish reason ``error``, ``abort`` or ``rate_limited``, or a reply that is a harness
  error message: HTTP 429/5xx, rate limit, timeout, connection error, context length
  exceeded), or recorded nothing: no reply (null) beside replies of its task, where such rows
  never pass and passes were due among them (:func:`absent_failures`), or a reply beside an
  error naming a failed request, by the same rule (:func:`cut_failures`). Error rows are left
  out of every rate and counted; a file whose replies are errors half the time or more is
  refused. ``empty`` is the model's reply. The reply is resolved once (:class:`Reply`) and
  its empty state, error text and draw key all read it.
- partial credit: graded rows strictly between 0 and a pass at 1.0. Under
  :data:`PARTIAL_SHARE` of the graded rows, threshold 1.0 applies and they are counted;
  more, without an explicit threshold, is refused.
- ``model``: a local path names its model (``…/models--Org--Name/snapshots/<sha>`` is
  ``Org/Name``, ``/models/Name/checkpoint-100`` is ``Name``: :mod:`whilecli.io.modelid`);
  ``version``: ``model@v``, an integer or string ``policy_version`` / ``step`` /
  ``checkpoint_step``, else the step of a checkpoint folder in the model path.
- task ids against prompts (each prompt in one form, :func:`whilecli.io.shape.canonical_text`):
  one id carrying two prompts in one file is refused; ids that are one per row while prompts
  repeat are set aside and tasks keyed by the prompt; rows without an id whose prompt one
  id's rows carry are that id's task.
- identical draws: a grouped task whose completions are all the same bytes (after trimming
  whitespace) is one draw repeated, as is one whose rows keep no completion and record greedy
  decoding (temperature 0, top_k 1, do_sample false: :func:`draw_key`);
  :attr:`Facts.repeated_share` says how many.
- draws written twice: per (task, reply) the rows and passes (:func:`draw_counts`, added
  up across files): rows repeating another row of their task, with the same grade, in a
  task whose every reply is written equally often (a file pooled with itself) are counted
  (:attr:`Facts.repeated_rows`); a reply graded both pass and fail anywhere in the pool is
  the grader's split (:attr:`Facts.graded_apart`, the tasks holding one).

:class:`Facts` carries the counts (with the first row of each kind) and the coverage of the
optional fields; :attr:`whilecli.io.rows.Rows.facts` holds it for every consumer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import polars as pl

from whilecli import jsonout, knobs
from whilecli.errors import InputError, MostlyErrorReplies
from whilecli.io import attempts
from whilecli.io.aliases import (
    CUT_NEGATED,
    CUT_REASONS,
    CUT_WORDS,
    ERROR_REASONS,
    ERROR_STATUSES,
    FAILED_REQUEST_WORDS,
    FINISHED_REASONS,
    FLAG_TRUE,
    HTTP_ERROR,
    MODEL_LIKE,
    NO_ERROR_TEXTS,
    NO_REPLY_REASONS,
    NO_REPLY_STATUSES,
    PLACEHOLDER_MODELS,
    TOKEN_LIMIT_WORDS,
)
from whilecli.io.aliases import MISSING_CHOICES as MISSING_CHOICES
from whilecli.io.modelid import CLOUDFLARE, joined_writers, model_identity
from whilecli.io.versions import INTEGRAL
from whilecli.io.words import (
    BLANKS,
    FLAG_CUT,
    FLAG_FALSE,
    GRADE_FALSE,
    GRADE_TRUE,
    NO_VALUE,
    NUMBER_TEXT,
    WRAPPED_TEXT,
)

#: Rounding forgiven at a pass threshold: reward ≥ threshold − 2⁻²² passes (float32's).
PASS_TOLERANCE = knobs.PASS_TOLERANCE
#: Graded rows with partial credit (strictly between 0 and 1) tolerated under threshold 1.0.
PARTIAL_SHARE = 0.10
#: Error replies at this share of a file's rows or more: the harness failed, refused.
ERROR_SHARE = 0.5
#: Grouped tasks whose draws are one draw repeated, past this share: the band is unmeasured.
REPEAT_SHARE = 0.5
#: A completion longer than this is a harness error only in an error's shape
#: (:data:`ERROR_SHAPE`): an HTML error page, a JSON error body, a client's traceback.
ERROR_TEXT_MAX = 600
#: Reply states, in the canonical frame's ``reply`` column.
OK, EMPTY, ERROR = "ok", "empty", "error"

#: What a harness writes in place of a reply. A completion is an error message when it opens
#: with an error's label and names a failure, or is one of the messages client libraries
#: raise, whole (with their advice to retry). A label is what a harness or client writes
#: first, never the first word of a sentence: ``Error:``, ``Error code: 429``, ``[ERROR]``,
#: an exception's name and its colon (``openai.RateLimitError:``), a traceback's first line,
#: a status (``HTTP 503``, ``Status: 502``, ``502 Bad Gateway``); a JSON error body or an
#: HTML error page only in an error's shape (:data:`ERROR_SHAPE`: an ``error`` that holds
#: something, a page whose title names the failure), never by a failure word anywhere in a
#: JSON answer or a page's form (``{"error": null, "timeout": 30}``). Model text that starts like one ("Error analysis:
#: the timeout in step 2 …", "HTTP 502 errors happen when …", "Error 502 usually means …")
#: has no label: it is the model's reply, however it goes on.
_FAILURE = (
    r"(?:\b(?:http|status|status code|error code|error)\W{0,3}(?:429|5[0-9][0-9])\b"
    r"|rate[ _-]?limit|too many requests|time[ _-]?d?[ _-]?out\b|timeout"
    r"|connection (?:error|refused|reset|aborted|closed)|connecterror|apiconnectionerror"
    r"|context[ _]?(?:length|window)[ _]?exceeded|maximum context length"
    r"|internal[ _]?server[ _]?error|bad[ _]?gateway"
    r"|service[ _]?(?:temporarily[ _]?)?unavailable|overloaded)"
)
_CODE = r"(?:429|5[0-9][0-9])"
#: The words a status code is followed by when it is a status, not a number in a sentence.
_REASON = (
    r"(?:too many requests|bad gateway|service (?:temporarily )?unavailable"
    r"|internal server error|gateway time-?out|overloaded|rate[ _-]?limit)"
)
#: A status code as a label: at the end, before punctuation, or before its reason phrase.
_CODED = rf"{_CODE}\s*(?:$|[:\-–—(\[{{,]|{_REASON})"
_LABEL = (
    r"(?:\[error\]"
    rf"|(?:error|exception|api error|request failed|fatal)(?:\s+code)?(?:\s*[:=(]|\s+{_CODED})"
    r"|[a-z_][\w.]*(?:error|exception|timeout)\s*(?::|$)"
    r"|traceback \(most recent call last\)"
    rf"|(?:https?(?:/[0-9](?:\.[0-9])?)?(?:\s+error)?|status(?:\s+code)?)\s*[:=]?\s*{_CODED}"
    rf"|{_CODED})"
)
_WHOLE = (
    r"(?:request timed out\.?|connection error\.?|rate limit(?:ed| exceeded| reached)?\.?"
    r"|too many requests\.?|internal server error\.?|service unavailable\.?|bad gateway\.?"
    r"|gateway time-?out\.?|overloaded\.?)"
)
#: How a client's error message opens, where it is one line that says the rest itself
#: (OpenAI's ``Rate limit reached for gpt-4o in organization …`` and ``This model's maximum
#: context length is 8192 tokens. However, …``, vLLM's ``Request timed out after 600s``,
#: Gemini's ``Resource has been exhausted``, Anthropic's ``prompt is too long: …``, Envoy's
#: ``upstream connect error or disconnect/reset before headers``).
_OPENER = (
    r"(?:rate limit (?:reached|exceeded)|this model['’]s maximum context length is"
    r"|request timed out|resource (?:has been )?exhausted|you exceeded your current quota"
    r"|the server (?:had an error|is overloaded)|that model is currently overloaded"
    r"|prompt is too long|upstream connect error|no healthy upstream)\b"
)
#: A client's message of one line: its opening, then nothing past the line's end.
_ONE_LINE = rf"^\s*{_OPENER}[^\n]*\s*$"
#: What may follow a whole message: the client's advice to wait (``Please retry after 20s.``).
_RETRY = r"(?:\s+(?:please\s+)?(?:retry|try again|wait)\b[^\n]*)?"
_WHOLE_MESSAGE = rf"^\s*{_WHOLE}{_RETRY}\s*$"
#: A completion that opens as a harness error (a label) or is a client's whole message.
HARNESS_ERROR = rf"(?is){_WHOLE_MESSAGE}|{_ONE_LINE}|^\s*{_LABEL}"
#: ... and names a failure somewhere (a whole message names its own).
HARNESS_FAILURE = rf"(?is){_WHOLE_MESSAGE}|{_ONE_LINE}|{_FAILURE}"
_CODE_OR_FAILURE = rf"(?:\b{_CODE}\b|{_FAILURE})"
#: A harness error at any length, by its shape, from its first character to its last: an HTML
#: page whose title names a status or failure (a proxy's ``502 Bad Gateway``); a JSON error
#: body (``{"error": {…}`` or a message, Anthropic's ``{"type": "error", …}``, vLLM's
#: ``{"object": "error", …}``) that names a failure (a web server's is
#: :data:`SERVER_ERROR_BODY`); a
#: Python traceback whose last line is an exception naming a failure (``openai.RateLimitError:
#: Error code: 429``). A reply that quotes one after its own words opens with those words.
ERROR_SHAPE = (
    r"(?is)"
    rf"^\s*<(?:!doctype html|html)\b.*?<title>[^<]*{_CODE_OR_FAILURE}[^<]*</title>"
    rf"|^\s*\{{\s*[\"'](?:error[\"']\s*:\s*[{{\"']|(?:type|object)[\"']\s*:\s*[\"']error[\"'])"
    rf".*{_FAILURE}.*\}}\s*$"
    r"|^\s*traceback \(most recent call last\).*\n[ \t]*[a-z_][\w.]*(?:error|exception|timeout)"
    rf"[ \t]*:[^\n]*{_FAILURE}[^\n]*\s*$"
)


# --- values written as text (the rule: :mod:`whilecli.io.words`) ------------------------


def lower_word(text: pl.Expr) -> pl.Expr:
    """A text column's words as every reader compares them (:func:`whilecli.io.aliases.word`)."""
    return _lower(text)


def _lower(text: pl.Expr) -> pl.Expr:
    """:func:`~whilecli.io.aliases.word` then :func:`~whilecli.io.words.unwrapped`, over a
    text column."""
    word = text.str.strip_chars(BLANKS)
    ascii_only = word.str.contains(r"^[\x00-\x7f]*$")
    low = pl.when(ascii_only).then(word.str.to_lowercase()).otherwise(word)
    return low.str.replace(WRAPPED_TEXT, "${1}${2}").str.strip_chars(BLANKS)


def _refused(text: pl.Expr, bad: pl.Expr, dtype: type[pl.DataType]) -> pl.Expr:
    """Null, or a strict cast that fails on the first ``bad`` row: the scan stops, and the
    reader that names lines (or the row locator) says where and why."""
    failed = pl.when(bad).then(pl.concat_str([pl.lit("?"), text])).cast(pl.Float64, strict=True)
    return failed.cast(dtype)


def grade_of_text(text: pl.Expr) -> pl.Expr:
    """:func:`grade_text` over a text column (a string column, or JSON values read as text:
    ``true`` is ``"true"``, ``1`` is ``"1"``). A text that is no grade fails the query."""
    low = _lower(text)
    number = low.str.contains(NUMBER_TEXT)
    known = low.is_in(sorted(GRADE_TRUE | GRADE_FALSE | NO_VALUE)) | number
    value = (
        pl.when(low.is_in(sorted(GRADE_TRUE)))
        .then(pl.lit(1.0))
        .when(low.is_in(sorted(GRADE_FALSE)))
        .then(pl.lit(0.0))
        .when(number)
        .then(low.cast(pl.Float64, strict=False))
    )
    return pl.coalesce(value, _refused(text, ~known.fill_null(True), pl.Float64))


def bad_grade_text(text: pl.Expr) -> pl.Expr:
    """True where a text column holds no grade (what :func:`grade_of_text` fails on)."""
    low = _lower(text)
    known = low.is_in(sorted(GRADE_TRUE | GRADE_FALSE | NO_VALUE)) | low.str.contains(NUMBER_TEXT)
    return ~known.fill_null(True)


def flag_of_text(text: pl.Expr) -> pl.Expr:
    """:func:`flag_text` over a text column. A text that says nothing fails the query."""
    low = _lower(text)
    known = low.is_in(sorted(FLAG_CUT | FLAG_FALSE | NO_VALUE))
    value = (
        pl.when(low.is_in(sorted(FLAG_CUT)))
        .then(pl.lit(True))
        .when(low.is_in(sorted(FLAG_FALSE)))
        .then(pl.lit(False))
    )
    return pl.coalesce(value, _refused(text, ~known.fill_null(True), pl.Boolean))


def reason_word(text: pl.Expr) -> pl.Expr:
    """A finish / stop reason over a text column as one word, read as every reader reads a
    word (:func:`whilecli.io.aliases.reason_text`): ``" Length\\n"`` is ``length``, SGLang's
    ``{"type": "abort", ...}`` its type, a list its first reason."""
    raw = text.str.strip_chars(BLANKS)
    one = (
        pl.when(raw.str.starts_with("{"))
        .then(raw.str.extract(r'"type"\s*:\s*"([^"]*)"'))
        .when(raw.str.starts_with("["))
        .then(raw.str.extract(r'^\[\s*"([^"]*)"'))
        .otherwise(raw)
    )
    return _lower(one)


def cut_of_reason(text: pl.Expr, cut: frozenset[str] | None = None) -> pl.Expr:
    """A finish / stop reason over a text column, its text read as every reader reads a word
    (:func:`whilecli.io.aliases.word`: ``" Length\\n"`` is ``length``; SGLang's
    ``{"type": "length", ...}`` its type, a list its first reason), as
    :func:`whilecli.io.aliases.cut_reason` reads one: true for a cut-off reason, false for one
    that ended on its own, null for any other word, where none is written (null, or a missing
    value's text: :data:`~whilecli.io.words.NO_VALUE`) or where the reason is a number
    (Gemini's ``FinishReason`` written as its code, 2 for ``MAX_TOKENS``: no word to read).
    ``cut``: a field naming what ended an episode (``stop_condition``,
    :func:`whilecli.io.aliases.cut_stop`): true where one of ``cut`` or a limit on tokens or
    the context (:data:`~whilecli.io.aliases.TOKEN_LIMIT_WORDS`), false where another name."""
    low = reason_word(text)
    said = ~low.is_in(sorted(NO_VALUE)) & ~low.str.contains(r"^[+-]?\d+(?:\.\d*)?$")
    negated = low.str.contains(CUT_NEGATED)
    if cut is not None:
        limit = low.str.contains(TOKEN_LIMIT_WORDS) & ~negated
        return pl.when(said).then(low.is_in(sorted(cut)) | limit)
    is_cut = low.is_in(sorted(CUT_REASONS)) | (low.str.contains(CUT_WORDS) & ~negated)
    return (
        pl.when(said & is_cut)
        .then(pl.lit(True))
        .when(said & low.is_in(sorted(FINISHED_REASONS)))
        .then(pl.lit(False))
    )


def flag_of_number(value: pl.Expr) -> pl.Expr:
    """A truncation flag written as a number (a Parquet column of integers or floats): 1 is
    cut, 0 not, null unknown; any other number (2, -1, 0.5) fails the query, as it is refused
    in JSON Lines (:func:`bad_flag_number` finds its row)."""
    value = value.cast(pl.Float64)
    said = pl.when(value == 1).then(pl.lit(True)).when(value == 0).then(pl.lit(False))
    return pl.coalesce(said, _refused(value.cast(pl.String), bad_flag_number(value), pl.Boolean))


def bad_flag_number(value: pl.Expr) -> pl.Expr:
    """True where a numeric column holds no truncation flag: a number other than 0 and 1."""
    return (value.is_not_null() & ~value.cast(pl.Float64).is_in([0.0, 1.0])).fill_null(False)


def bad_flag_text(text: pl.Expr) -> pl.Expr:
    """True where a text column holds no truncation flag (what :func:`flag_of_text` fails on)."""
    return ~_lower(text).is_in(sorted(FLAG_CUT | FLAG_FALSE | NO_VALUE)).fill_null(True)


def passed(reward: pl.Expr, threshold: float) -> pl.Expr:
    """The pass rule: reward ≥ threshold − :data:`PASS_TOLERANCE`."""
    return reward >= threshold - PASS_TOLERANCE


def credited(reward: pl.Expr) -> pl.Expr:
    """True where the grader gave the row credit: a reward above 0 (NaN, which polars orders
    above every number, is none)."""
    return (reward > 0) & ~reward.is_nan()


def graded(reward: pl.Expr, mapped_passed: pl.Expr | None = None) -> pl.Expr:
    """True where the row carries a grade: a reward that is neither null nor NaN (or, with
    ``--map passed=COLUMN``, a pass/fail value)."""
    has = reward.is_not_null() & ~reward.is_nan().fill_null(True)
    if mapped_passed is not None:
        has = has | mapped_passed.is_not_null()
    return has.fill_null(False)


def partial(reward: pl.Expr) -> pl.Expr:
    """A graded reward strictly between 0 and a pass at 1.0, past rounding at either end:
    partial credit."""
    return (reward > PASS_TOLERANCE) & (reward < 1.0 - PASS_TOLERANCE)


#: Draw counts a reward may be the mean of (a pass rate c/k): partial rewards all on one
#: grid of 1/k read as per-task means. 10 is left out: a score rounded to one decimal lies
#: on its grid too.
MEAN_KS = tuple(k for k in range(3, 17) if k != 10)


def grid_aggregates(values: pl.Expr) -> list[pl.Expr]:
    """Over the partial rewards (``values``: a graded row's reward where it is partial, null
    on every other row): per k of :data:`MEAN_KS`, whether every partial reward is a
    multiple of 1/k (``grid_k{k}``; the nulls are passed over), and how many distinct
    partial rewards there are (``partial_values``)."""
    out = []
    for k in MEAN_KS:
        scaled = values * k
        out.append(((scaled - scaled.round()).abs() <= 1e-6).all().alias(f"grid_k{k}"))
    out.append(values.drop_nulls().n_unique().alias("partial_values"))
    return out


#: A web server's JSON error body, first key ``detail``, ``message`` or ``error_message``
#: (FastAPI's ``{"detail": "Internal Server Error"}``, an API gateway's
#: ``{"message": "Internal server error"}``, ``{"errorMessage": "Error: timeout"}``), whose
#: text is a client's whole or one-line message or opens with an error's label; a failure
#: named in it too (:func:`error_message`). A JSON answer with such a key holds the model's words:
#: ``{"message": "a timeout of 30s is enough"}``.
SERVER_ERROR_BODY = (
    r"(?is)^\s*\{\s*[\"'](?:detail|message|error_?message)[\"']\s*:\s*[\"']\s*"
    rf"(?:{_WHOLE}{_RETRY}\s*[\"']|{_OPENER}[^\n]*[\"']|{_LABEL}).*\}}\s*$"
)


def error_message(text: pl.Expr) -> pl.Expr:
    """True where a reply's text is a harness error message: short, opening with an error's
    label and naming a failure, or a client's whole message or one-line message (see
    :data:`HARNESS_ERROR`); or, at any length, in an error's shape (:data:`ERROR_SHAPE`, or a
    server's body naming a failure: :data:`SERVER_ERROR_BODY`)."""
    labelled = (text.str.len_bytes() <= ERROR_TEXT_MAX) & text.str.contains(HARNESS_ERROR)
    named = pl.when(labelled).then(text).str.contains(HARNESS_FAILURE)  # labelled rows only
    served = text.str.contains(SERVER_ERROR_BODY) & text.str.contains(rf"(?is){_FAILURE}")
    shaped = text.str.contains(ERROR_SHAPE) | served
    return named.fill_null(False) | shaped.fill_null(False)


#: An error that names the agent's own step budget (OpenHands' "Agent reached maximum
#: iteration", ``max_steps``, a turn limit): the episode ran to its cap, a cut-off reply the
#: grader scored, not a harness failure.
CAP_ERROR = (
    r"(?i)\b(?:reached|hit|exceeded|exhausted|ran out of)\b[^\n]{0,30}?"
    r"\b(?:max(?:imum)?[ _-]?(?:number[ _]of[ _])?(?:iterations?|steps?|turns?|rounds?)"
    r"|(?:iterations?|steps?|turns?|rounds?)[ _-](?:limit|budget|cap))\b"
    r"|\b(?:max(?:imum)?[ _-]?(?:number[ _]of[ _])?(?:iterations?|steps?|turns?)"
    r"|(?:iteration|step|turn)[ _-]limit)"
    r"[ _-](?:reached|exceeded|hit)\b"
)
#: What a step-budget word beside is not the budget: retries of a request, a negation.
NOT_CAP = r"(?i)\bretr(?:y|ies)\b|\bnot (?:yet )?(?:reached|exceeded|hit)\b"


def cap_error(value: pl.Expr) -> pl.Expr:
    """True where an error field's text names the step budget the agent ran into
    (:data:`CAP_ERROR`)."""
    said = value.str.contains(CAP_ERROR) & ~value.str.contains(NOT_CAP)
    return said.fill_null(False)


#: What a run of the model's own program says of it, in an error field beside its reply
#: (DESIGN section 1: a harness error is recorded *instead of* a reply): an exception user
#: code raises, as a message's first line or a traceback's last (``NameError: name 'n' is
#: not defined``, ``AssertionError``, ``SyntaxError``); a judge's verdict (``Wrong Answer``,
#: ``Time Limit Exceeded``, ``Compilation Error``, ``Runtime Error``, ``WA``); a test
#: run's failures (``FAILED test_x``, ``2 failed, 3 passed``); a compiler's error
#: (``main.cpp:3:5: error:``, ``error[E0308]``, ``undefined reference to``). The model's
#: graded failure, never the harness's, unless the text also reads as a harness error
#: (:func:`program_error`).
PROGRAM_ERROR = (
    r"(?im)^\s*(?:NameError|TypeError|ValueError|IndexError|KeyError|AttributeError"
    r"|ZeroDivisionError|AssertionError|SyntaxError|IndentationError|TabError|RecursionError"
    r"|UnboundLocalError|OverflowError|ImportError|ModuleNotFoundError|NotImplementedError"
    r"|StopIteration|EOFError|FloatingPointError|Unicode(?:De|En)codeError)\b"
    r"|^\s*(?:wrong answer|runtime error|compil(?:ation|e) error|presentation error"
    r"|(?:time|memory|output) limit exceeded|segmentation fault|failed tests?|tests? failed"
    r"|assertion failed)\b"
    r"|^\s*(?:wa|tle|mle|ole|re|ce)\s*$"
    r"|^\s*FAILED\s+\S+|\b\d+ failed(?:,|\s+in\b)"
    r"|^\s*\S+\.(?:c|cc|cpp|cxx|h|hpp|rs|go|java|kt|cs|py|js|ts):\d+(?::\d+)?:\s*(?:fatal\s+)?error\b"
    r"|\berror\[E\d{4}\]|\bundefined reference to\b|\bwas not declared in this scope\b"
    r"|\bcannot find symbol\b"
)


def program_error(value: pl.Expr) -> pl.Expr:
    """True where an error field's text is what the model's own program did
    (:data:`PROGRAM_ERROR`: its exception, a judge's verdict, a failed test, a compile
    error) and not a harness error (no :func:`error_message`, no :func:`failed_request`,
    no timeout or context overflow: :data:`HARNESS_FAILURE`): beside the model's reply, the
    model's graded failure."""
    said = value.str.contains(PROGRAM_ERROR).fill_null(False)
    harness = error_message(value) | failed_request(value)
    harness = harness | value.str.contains(HARNESS_FAILURE).fill_null(False)
    return said & ~harness


def recorded_error(value: pl.Expr) -> pl.Expr:
    """True where a field that records an error (:data:`~whilecli.io.aliases.ERROR_ALIASES`),
    read as text, holds one: anything but what records none (null, blank, ``false``, ``0``,
    a missing value's word, an empty object or list, an object whose members are all null or
    empty: :data:`~whilecli.io.aliases.NO_ERROR_TEXTS`)."""
    word = _lower(value)
    bare = word.str.replace_all(r"\s+", "")
    for pattern in (r'"[^"]*":(?:null|""|\{\}|\[\]|false)', ","):
        bare = bare.str.replace_all(pattern, "")
    none = word.is_in(sorted(NO_ERROR_TEXTS)) | (bare == "{}")
    return (~none).fill_null(False)


def error_flag(value: pl.Expr) -> pl.Expr:
    """True where an error flag (:data:`~whilecli.io.aliases.ERROR_FLAG_ALIASES`), read as
    text, is set (``true``, ``1``, ``yes``)."""
    return _lower(value).is_in(sorted(FLAG_TRUE)).fill_null(False)


def _joined(word: pl.Expr) -> pl.Expr:
    """A word whose parts are joined by ``_`` whatever joined them (``-``, blanks)."""
    return word.str.replace_all(r"[\s-]+", "_")


def error_status(value: pl.Expr) -> pl.Expr:
    """True where a request's status (:data:`~whilecli.io.aliases.STATUS_ALIASES`) is one of
    :data:`~whilecli.io.aliases.ERROR_STATUSES`."""
    return _lower(value).is_in(sorted(ERROR_STATUSES)).fill_null(False)


def no_reply_status(value: pl.Expr) -> pl.Expr:
    """True where a request's status is one of :data:`~whilecli.io.aliases.NO_REPLY_STATUSES`
    (``rate-limited`` is ``rate_limited``): an error only on a row that holds no reply
    (:func:`reply_state`)."""
    return _joined(_lower(value)).is_in(sorted(NO_REPLY_STATUSES)).fill_null(False)


def http_error(value: pl.Expr) -> pl.Expr:
    """True where a status (:data:`~whilecli.io.aliases.HTTP_STATUS_ALIASES`), a number or its
    text, is an HTTP error code, 400 to 599 (:data:`~whilecli.io.aliases.HTTP_ERROR`): an
    error only on a row that holds no reply. Any other number (200, 0 and 1 for pass and fail,
    an exit status) is none."""
    return _lower(value).str.contains(HTTP_ERROR).fill_null(False)


#: An error's class or code that names a request that failed at the API, not the model's
#: answer: a rate limit or quota, an overloaded or failing server, a lost connection, the
#: API's timeout, an HTTP 429 or 5xx (``RateLimitError``, ``APIConnectionError``,
#: ``overloaded_error``, ``InternalServerError``, ``APITimeoutError``, ``503``).
REQUEST_FAILURE = (
    r"(?i)rate[ _-]?limit|throttl|quota|exhausted|too[ _-]?many[ _-]?requests|overload"
    r"|connection|server[ _-]?error|internal[ _-]?error|unavailable|bad[ _-]?gateway"
    r"|api[ _-]?(?:error|timeout|status)|\b(?:429|5[0-9][0-9])\b"
)


def request_failure(value: pl.Expr) -> pl.Expr:
    """True where an error's class or code (:data:`~whilecli.io.aliases.ERROR_CLASS_ALIASES`)
    names a request that failed at the API (:data:`REQUEST_FAILURE`)."""
    return value.str.contains(REQUEST_FAILURE).fill_null(False)


#: A failed request in an error's words, read from any field that records one and from a
#: reply that is an error message: a rate limit or quota, an overloaded or failing server, a
#: lost connection, an HTTP 429 or 5xx as a status. The API's, never the model's failure; a
#: timeout or a context overflow can be the model's (a reply that ran too long) and is not
#: one (:func:`failed_request`).
FAILED_REQUEST = (
    r"(?i)rate[ _-]?limit|throttl|quota|resource[ _-]?(?:has[ _-]been[ _-])?exhausted"
    r"|too[ _-]?many[ _-]?requests|overload|connection[ _-]?(?:error|refused|reset|aborted|closed)"
    r"|api[ _-]?connection|connecterror|internal[ _-]?server[ _-]?error|\bserver[ _-]?error"
    r"|service[ _-]?(?:temporarily[ _-]?)?unavailable|bad[ _-]?gateway"
    r"|\b(?:http|status|status code|error code|error)\W{0,3}(?:429|5[0-9][0-9])\b"
    r"|^\s*(?:https?(?:/[0-9](?:\.[0-9])?)?\s*)?(?:429|5[0-9][0-9])(?:\.0+)?\b"
)


def failed_request(value: pl.Expr) -> pl.Expr:
    """True where a text that records an error (an error field, class or message, a status,
    a finish reason, an error reply) names a request that failed at the API
    (:data:`FAILED_REQUEST`, or a word of :data:`~whilecli.io.aliases.FAILED_REQUEST_WORDS`):
    an error that is no failure of the model's, counted as one under no reading."""
    word = _joined(reason_word(value)).is_in(sorted(FAILED_REQUEST_WORDS))
    return (word | value.str.contains(FAILED_REQUEST)).fill_null(False)


def error_reason(value: pl.Expr) -> pl.Expr:
    """True where a stop / finish reason (a word, SGLang's ``{"type": ...}``, a list's first)
    is one of :data:`~whilecli.io.aliases.ERROR_REASONS` (``rate-limited`` is
    ``rate_limited``)."""
    return _joined(reason_word(value)).is_in(sorted(ERROR_REASONS)).fill_null(False)


def no_reply_reason(value: pl.Expr) -> pl.Expr:
    """True where a stop / finish reason is one of :data:`~whilecli.io.aliases.NO_REPLY_REASONS`
    (a timeout): an error only on a row that holds no reply (:func:`reply_state`)."""
    return _joined(reason_word(value)).is_in(sorted(NO_REPLY_REASONS)).fill_null(False)


@dataclass(frozen=True)
class Reply:
    """The reply of each row, resolved once from where the rows keep it; empty replies, error
    texts and draw keys are all read from it.

    ``text``: the reply as text (a chat list as its JSON: the reply's turns); ``turns``:
    whether it is a chat list; ``said``: what the model said last, where error messages are
    looked for (the text itself, or a chat list's last assistant turn's content)."""

    text: pl.Expr
    turns: bool = False

    @property
    def said(self) -> pl.Expr:
        if not self.turns:
            return self.text
        return self.text.map_batches(
            lambda texts: texts.map_elements(last_assistant_text, return_dtype=pl.String),
            return_dtype=pl.String,
            is_elementwise=True,
        )


def reply_of(fields: Sequence[tuple[pl.Expr, bool, bool]]) -> Reply | None:
    """The :class:`Reply` read from the places a row may keep it, in order (the first that
    holds a reply on the row is its reply), each ``(text, turns, transcript)``: a reply as
    written, a chat list of the reply's turns (``turns``), or a chat transcript holding the
    prompt too (``transcript``: the reply is its turns from the first assistant turn on; none
    where it has no assistant turn). None: no place."""
    if not fields:
        return None
    texts = [
        text.map_batches(
            lambda column: column.map_elements(reply_turns, return_dtype=pl.String),
            return_dtype=pl.String,
            is_elementwise=True,
        )
        if transcript
        else text
        for text, _, transcript in fields
    ]
    turns = any(listed or transcript for _, listed, transcript in fields)
    return Reply(texts[0] if len(texts) == 1 else pl.coalesce(texts), turns)


def chat_list(text: str) -> list[Any] | None:
    """A chat list written as JSON text (control characters raw inside its strings read as
    themselves), or None where the text is no list."""
    if text[:1] != "[":
        return None
    try:
        value = jsonout.parse(text, controls=True)
    except ValueError:
        return None
    return value if isinstance(value, list) else None


def _assistant(turn: Any) -> bool:
    return isinstance(turn, dict) and turn.get("role") == "assistant"


def reply_turns(text: str) -> str | None:
    """A chat transcript's reply: its turns from the first assistant turn on, as JSON; None
    where it has no assistant turn (or is no list)."""
    turns = chat_list(text)
    if turns is None:
        return None
    first = next((i for i, turn in enumerate(turns) if _assistant(turn)), None)
    if first is None:
        return None
    return json.dumps(turns[first:], ensure_ascii=False)


def last_assistant_text(text: str) -> str | None:
    """The content of a chat list's one assistant turn as text (a list of content parts: the
    text of its parts, one after another); the text itself where it is no chat list. None
    where the model spoke in no turn or in several: an agent whose last turn reports a tool's
    ``Error: 503`` was answered by the harness, which did not fail."""
    turns = chat_list(text)
    if turns is None:
        return text
    spoken = [turn for turn in turns if _assistant(turn)]
    if len(spoken) != 1:
        return None
    last = spoken[0]
    content = last.get("content")
    if isinstance(content, list):
        parts = [p.get("text") if isinstance(p, dict) else p for p in content]
        return "".join(p for p in parts if isinstance(p, str))
    return content if isinstance(content, str) else None


def reply_state(
    reply: Reply | None,
    *,
    always: pl.Expr | None = None,
    unless_replied: pl.Expr | None = None,
    beside_no_reply: pl.Expr | None = None,
    credited: pl.Expr | None = None,
) -> pl.Expr:
    """``ok`` / ``empty`` / ``error`` per row (DESIGN section 1: an error is what a harness
    recorded *instead of* a reply).

    ``error`` where: ``always`` says so (a finish reason ``error``, an aborted request); an
    error field, message or flag says so (``unless_replied``) and the row holds no reply, or
    the rows keep none at all; a status ``error``/``failed``/``timeout`` says so
    (``beside_no_reply``) and the row's reply is empty or absent; or the reply is a harness
    error message (:func:`error_message`) that the grader gave no credit (``credited``: a
    reply it passed, or scored above 0, is a reply, whatever it says) and that the model said
    in one turn (an agent that spoke several times was answered by the harness). ``empty``:
    the reply is empty (nothing generated); else ``ok``."""
    failed = pl.lit(False) if always is None else always
    if reply is None:
        return pl.when(failed | _or_false(unless_replied)).then(pl.lit(ERROR)).otherwise(pl.lit(OK))
    unreplied = empty_reply(reply).fill_null(True)
    failed = failed | (unreplied & (_or_false(unless_replied) | _or_false(beside_no_reply)))
    texted = error_message(reply.said)
    if credited is not None:
        texted = texted & ~credited.fill_null(False)
    failed = failed | texted
    return (
        pl.when(failed)
        .then(pl.lit(ERROR))
        .when(empty_reply(reply))
        .then(pl.lit(EMPTY))
        .otherwise(pl.lit(OK))
    )


def _or_false(expr: pl.Expr | None) -> pl.Expr:
    return pl.lit(False) if expr is None else expr.fill_null(False)


#: A completion that holds nothing, as text: empty, an empty JSON value, or a missing value
#: written as text (JSON's ``null``, Python's ``None``, pandas' ``nan``).
EMPTY_TEXTS = ("", "[]", '""', "{}", "null", "NULL", "None", "nan", "NaN")
#: What a tokenizer or a chat template writes around a reply, none of the reply's own text:
#: special tokens (``<|im_end|>``, ``<|eot_id|>``, ``</s>``, ``<eos>``, ``<end_of_turn>``),
#: an empty reasoning block (``<think>\n\n</think>``), format characters (zero-width
#: spaces, byte-order marks: Unicode's Cf). A reply of these alone is empty.
NO_TEXT = (
    r"<\|[A-Za-z0-9_.:\- ]{1,64}\|>|</?s>|<(?:eos|bos|pad|unk|eot|end_of_turn|endoftext)>"
    r"|<(?:think|thinking|reasoning)>\s*</(?:think|thinking|reasoning)>|\p{Cf}"
)
#: Replies longer than this, in bytes, are never empty: :data:`NO_TEXT` is looked for
#: in shorter ones only.
NO_TEXT_BYTES = 256


def empty_reply(reply: Reply) -> pl.Expr:
    """True where a reply holds nothing (``""``, ``[]``, ``{}``, ``null``, blanks, or only
    what a template writes around a reply: :data:`NO_TEXT`); null where the row has none. A chat list is empty when each turn's content is one of those and it
    carries nothing else but its role and null fields
    (``[{"role": "assistant", "content": "{}"}]``)."""
    text = reply.text
    head = text.str.slice(0, NO_TEXT_BYTES)
    bared = head.str.replace_all(NO_TEXT, "").str.strip_chars()
    plain = text.str.strip_chars().is_in(EMPTY_TEXTS) | (
        (text.str.len_bytes() <= NO_TEXT_BYTES) & bared.is_in(EMPTY_TEXTS)
    )
    if not reply.turns:
        return plain
    bare = text.str.replace_all(NO_TEXT, "").str.replace_all(r"\s+", "")
    for pattern in (
        r'"role":"[^"]*"',
        r'"[A-Za-z_]+":null',
        r'"content":(""|"\{\}"|"\[\]"|\[\])',
        ",",
    ):
        bare = bare.str.replace_all(pattern, "")
    return plain | bare.str.contains(r"^\[(\{\})*\]$")


#: The draw key of a row decoded greedily (:func:`draw_key`): every such row of a task is
#: one draw. A fixed number no reply's hash is in practice; the per-reply counts
#: (:func:`draw_counts`) leave these rows out, as their replies say nothing of the grader.
GREEDY_DRAW = 0x9E3779B97F4A7C15


def draw_key(reply: Reply | None, greedy: pl.Expr | None = None) -> pl.Expr | None:
    """A reply's bytes after trimming whitespace, hashed: equal keys are one draw. A row
    with no reply has no key (polars hashes every null alike: rows that logged no reply
    would read as one draw repeated). A row that keeps no reply and records greedy decoding
    (``greedy``, :func:`whilecli.io.decoding.frame_greedy`) is keyed :data:`GREEDY_DRAW`: the k greedy draws of a prompt
    are one draw, as identical replies are. Where the row keeps its reply, the reply is the key
    (an API model or an agent's environment at temperature 0 draws different replies, and
    those are draws). None: neither a reply nor greedy rows."""
    key = None
    if reply is not None:
        text = reply.text
        key = pl.when(text.is_not_null()).then(text.str.strip_chars().hash(seed=0))
    if greedy is None:
        return key
    greedy_key = pl.when(greedy.fill_null(False)).then(pl.lit(GREEDY_DRAW, dtype=pl.UInt64))
    return greedy_key if key is None else pl.coalesce(key, greedy_key)


def word_in(text: pl.Expr, words: Iterable[str], before: str = "") -> pl.Expr:
    """Whether a text column's word (:func:`lower_word`) is one of ``words``, null where the
    text is: ``lower_word(text).is_in(words)`` as one regular expression over the text as
    written, so no row's text is copied (trimmed, lower-cased) on the way. ``words`` are
    lower-case ASCII without :data:`~whilecli.io.words.BLANKS`; each letter matches either
    case, and only ASCII letters do (a word holding any other character is never lower-cased,
    and no such word is among ``words``). ``before``: the word is the text's part before the
    first ``before`` (one character), where it holds one."""
    listed = sorted(words)
    for one in listed:
        if not one.isascii() or one != one.lower() or any(c in one for c in BLANKS + before):
            raise ValueError(f"not a lower-case ASCII word: {one!r}")
    blank = "[" + "".join(_ESCAPED[c] for c in BLANKS) + "]*"
    either = "|".join("".join(_letter(c) for c in one) for one in listed)
    end = "$" if not before else f"(?:{re.escape(before)}|$)"
    return text.str.contains(f"^{blank}(?:{either}){blank}{end}")


_ESCAPED = {" ": " ", "\t": "\\t", "\r": "\\r", "\n": "\\n"}


def _letter(char: str) -> str:
    """One character of a word as :func:`word_in` matches it: a letter in either case."""
    if char.isalpha():
        return f"[{char}{char.upper()}]"
    return re.escape(char)


def named_model(raw: pl.Expr) -> pl.Expr:
    """A recorded model name, null where it names no model (:func:`whilecli.io.modelid.names_model`:
    blank, a missing value's text such as ``None`` or ``N/A``, or a bare ``@version``; or a
    served-model placeholder, :data:`~whilecli.io.aliases.PLACEHOLDER_MODELS`: ``default``,
    ``policy``): its part before the first ``@`` is one of those words (:func:`word_in`)."""
    unnamed = word_in(raw, NO_VALUE | PLACEHOLDER_MODELS, before="@")
    return pl.when(~unnamed | raw.str.contains(CLOUDFLARE)).then(raw)


def model_like(raw: pl.Expr) -> pl.Expr:
    """A recorded name where it looks like a model's (:data:`~whilecli.io.aliases.MODEL_LIKE`:
    a Hub id, a size, a model family), else null: what a field named by the writer's role
    (``policy``, ``agent``: :data:`~whilecli.io.aliases.MODEL_ROLES`) names."""
    bare = raw.str.replace(CLOUDFLARE, "")  # Cloudflare's @cf/: no version's @
    name = _lower(bare.str.splitn("@", 2).struct.field("field_0"))
    return pl.when(name.str.contains(MODEL_LIKE)).then(named_model(raw))


def model_name(raw: pl.Expr, seen: Iterable[str] | None = None) -> pl.Expr:
    """The model a recorded name or local path names (:mod:`whilecli.io.modelid`): a Hugging
    Face cache path is ``Org/Name``, a checkpoint under a model folder the folder's name; a
    plain name as it is. ``seen``: the distinct strings ``raw`` holds, each looked at once
    (None: each batch's own)."""
    if seen is None:
        return raw.map_batches(
            lambda names: names.replace(_named(names.drop_nulls().unique())),
            return_dtype=pl.String,
            is_elementwise=True,
        )
    named = _named(seen)
    return raw.replace(named) if named else raw


def _named(seen: Iterable[str]) -> dict[str, str]:
    """Each local path as the model it names; a path that names none, a provider's
    build (``together_ai/meta-llama/…-Turbo``: what it serves is read from all of it), or a
    training checkpoint (``/ckpt/Qwen3-8B/checkpoint-500``: a step of a run, not the
    released weights, :func:`whilecli.io.modelid.weights_relation`) is kept as written."""
    found = {n: model_identity(n) for n in seen}
    return {
        n: m.display
        for n, m in found.items()
        if m.path and not m.anonymous and m.build is None and m.step is None
    }


def name_of(model: str) -> str:
    """One recorded name as :func:`model_name` names it."""
    return _named([model]).get(model, model)


def model_step(raw: pl.Expr, seen: Iterable[str]) -> pl.Expr | None:
    """The training step a recorded model path's checkpoint folder states, as text
    (``/models/Qwen3-8B/checkpoint-100`` → ``100``), null where it states none; None when no
    string in ``seen`` states one."""
    steps = {n: str(model_identity(n).step) for n in seen if model_identity(n).step is not None}
    if not steps:
        return None
    return raw.replace_strict(steps, default=None, return_dtype=pl.String)


def path_version(raw: pl.Expr, step: int) -> pl.Expr:
    """``step``, the version a file's path states (:func:`whilecli.io.versions.path_step`),
    as text for each row whose model records none, null for the others: a ``model@version``
    and a checkpoint's step in the model's name or path (:func:`model_step`) are the row's
    own and come first."""

    def unstated(names: pl.Series) -> pl.Series:
        seen = names.drop_nulls().unique().to_list()
        stated = [n for n in seen if "@" in n or model_identity(n).step is not None]
        return ~names.is_in(stated).fill_null(False)

    own = raw.map_batches(unstated, return_dtype=pl.Boolean, is_elementwise=True)
    return pl.when(own).then(pl.lit(str(step), dtype=pl.String))


def version_text(value: pl.Expr) -> pl.Expr:
    """A version (an integer step, a float or a string) as its text, so ``5``, ``5.0`` and
    ``"5"`` are one version (``3.0`` reads as ``3``). A version that is not one is null (not
    recorded): NaN (pandas writes a missing integer as NaN), an infinity, blank text or a
    missing value's text (:data:`~whilecli.io.words.NO_VALUE`). Other spellings of a step
    (``step_5``) stay as written: :func:`whilecli.io.versions.version_id` reads them, for the
    rows and ``--model M@VERSION`` alike."""
    text = value.cast(pl.String).str.strip_chars(BLANKS)
    low = _lower(text)
    missing = low.is_in(sorted(NO_VALUE)) | low.str.contains(r"^[+-]?inf(?:inity)?$")
    return pl.when(~missing).then(text.str.replace(INTEGRAL, "${1}"))


# --- what reading found ----------------------------------------------------------------


@dataclass
class Facts:
    """The row facts of one read: what was counted, what was left out, and where.

    Counts are rows unless named otherwise. ``first_*`` name the first such row
    (``file line N`` / ``file row N``). ``coverage`` is how many rows carry each optional
    field (``truncated``, ``model``, ``policy_version``, ``completion``).
    """

    rows: int = 0  # rows read, before any is left out
    counted: int = 0  # rows every rate counts
    missing: str = "skip"  # --missing: what an ungraded row counts as
    ungraded: int = 0
    first_ungraded: str | None = None
    #: Where rows are ungraded: a key the rows carry that spells the grade's in another case
    #: (``'Reward'`` beside ``'reward'``), what the note says those rows hold.
    ungraded_spelled: str | None = None
    errors: int = 0
    first_error: str | None = None
    #: Of the errors, those that name a request failed at the API (a rate limit, a server's
    #: failure: :func:`failed_request`): no reading counts them as the model's failures.
    request_errors: int = 0
    #: Of the errors, rows that keep no reply beside replies of their task, where such rows
    #: never pass: nothing recorded (:func:`absent_failures`).
    unrecorded: int = 0
    #: A column that parts the task ids into groups of draws, where the rows carry no prompt
    #: (``question_idx`` beside ``task_id: "aime24"``), with (ids, groups, rows): the ids may
    #: name a dataset or a category (:mod:`whilecli.io.subtasks`); None: none found.
    coarse_ids: tuple[str, int, int, int] | None = None
    empty: int = 0
    first_empty: str | None = None
    #: Of the empty replies, those the grader passed: credit for no text, a grader's fault
    #: as a cut-off reply's pass is.
    empty_passes: int = 0
    partial: int = 0
    #: The draw counts k of :data:`MEAN_KS` on whose grid (multiples of 1/k) every partial
    #: reward lies (None: no partial reward read), and the distinct partial rewards (the
    #: most of any one file's).
    partial_grid: list[int] | None = None
    partial_values: int = 0
    #: Graded rows a flag reads as not cut while their token count reached its recorded cap,
    #: in files that record no cut anywhere (:func:`whilecli.io.plan.cut_disputed`: a
    #: harness writing ``false`` on every row looks so), and those of them that pass.
    cut_disputed: int = 0
    cut_disputed_passes: int = 0
    first_cut_disputed: str | None = None
    #: Graded rows not read as cut off whose reply token count is their file's longest,
    #: where replies pile there (:func:`longest_pile`) in files that record no cap and flag
    #: no row cut: replies cut at a cap no field names; those of them that pass, the count,
    #: the field it is read from and the first such row.
    cut_at_longest: int = 0
    cut_at_longest_passes: int = 0
    longest_tokens: float | None = None
    longest_field: str | None = None
    first_cut_at_longest: str | None = None
    #: Where no truncation was read, a field whose name says it records a cut (a finish
    #: reason the reader does not follow: :func:`whilecli.io.plan.unread_cut_field`); None:
    #: none, or truncation was read.
    cut_unread: str | None = None
    #: Cut-off replies (truncated) that earn partial credit: reward above 0, yet no pass.
    cut_partial: int = 0
    first_cut_partial: str | None = None
    #: Grouped tasks whose completions can be compared, and those whose draws are all one.
    compared_tasks: int = 0
    repeated_tasks: int = 0
    #: Rows that keep no reply and record greedy decoding (temperature 0, top_k 1, do_sample
    #: false): each such row of a task is one draw (:func:`draw_key`).
    greedy_rows: int = 0
    #: Tasks holding a reply graded both pass and fail (one reply given two grades, in one
    #: file or across the pool), and how many such replies.
    graded_apart: int = 0
    apart_replies: int = 0
    #: Rows that repeat an earlier row of their task (the same reply, the same grade) in
    #: tasks whose every reply is written the same number of times, twice or more: one
    #: draw written twice (a file pooled with itself, a resumed run's overlap).
    repeated_rows: int = 0
    #: Rows that repeat another row's (task, sample index) with no attempt column to say
    #: which is the draw (:mod:`whilecli.io.attempts`): each counted as a draw, as a row
    #: written twice is; the first of them.
    repeated_samples: int = 0
    first_repeated_sample: str | None = None
    #: Earlier attempts of a draw whose later attempt the rows hold (the harness's retry),
    #: and attempts whose retry is missing: both left out of every rate, never errors; the
    #: first of them, and where the draws were keyed (:meth:`whilecli.io.attempts.
    #: Attempts.words`).
    retried: int = 0
    retry_lost: int = 0
    first_retried: str | None = None
    attempts_field: str | None = None
    #: The id column set aside because it holds one id per row while prompts repeat.
    per_row_ids: str | None = None
    #: Rows keyed by the prompt for it, the prompts (tasks) they form, and the rows under ids.
    rekeyed_rows: int = 0
    rekeyed_prompts: int = 0
    id_rows: int = 0
    #: The field the rows name their model in where every such field may name another model
    #: than the writer's (``config.model``, ``generator``: :func:`whilecli.io.aliases.
    #: unsure_model_alias`); None where a sure field names it, or none does.
    model_unsure: str | None = None
    #: The conversation field whose prompt's end the task key guessed, no entry marking it
    #: (NeMo-RL's ``content`` under an unknown chat template); None: a sure key.
    prompt_unsure: str | None = None
    #: The prompt field whose rows were keyed without a part each holds alone (a uuid, a
    #: hash, a timestamp), where the whole prompt differs on every row: a guess at the task.
    prompt_masked: str | None = None
    #: The prompt field whose rows were keyed by their words in sorted order, where the whole
    #: prompt differs on most rows (a question's options shuffled per draw): a guess.
    prompt_reordered: str | None = None
    #: Task ids that carry several prompts, kept as ``--map task_id=`` keys them
    #: (:meth:`IdsWithPrompts.words`, with the column); None: every id carries one prompt.
    mapped_prompts: str | None = None
    #: Where the rows that keep a reply record greedy decoding, nearly all of them (a
    #: ``temperature`` of 0, or the settings beside them): their draws differ by a server's
    #: nondeterminism, and the band is greedy decoding's. None: they sampled, or say nothing.
    greedy_sampled: str | None = None
    #: The staleness field (``off_policy_steps``) the rows' versions were read from, as
    #: ``-lag``: the policy you train is version 0, whatever versions the rows hold; None:
    #: versions as written.
    version_lag: str | None = None
    #: The largest token cap the rows record (their replies were sampled under it); None:
    #: none recorded.
    token_cap: float | None = None
    #: Where the rows name no model: the first part of a file's path that names one
    #: (:func:`whilecli.io.modelid.path_model`: ``gpt-4o-airline.json``), or the settings
    #: file beside it that does (``config.yaml: model = gpt-4o``); pooled reads naming
    #: different models, each (:func:`whilecli.io.modelid.joined_writers`); None: none does.
    path_model: str | None = None
    #: Where the reward read (no ``--map``) holds one value on every graded row, a column
    #: beside it that grades both ways (``is_correct (412 of 800 rows at 1)``, a ``verdict``
    #: in words: :func:`whilecli.io.locate.grade_beside_sample`): the grade a placeholder
    #: reward may stand in for. None: none does.
    grade_beside: str | None = None
    #: Where the reward read grades both ways, a grade beside it that disagrees with the
    #: pass on it (``correct disagrees with the pass on score on 40 of 96 rows sampled``,
    #: :func:`whilecli.io.locate.grade_disagrees`). None: none does.
    grade_disagrees: str | None = None
    #: Rows of a selection that leaves out every zero-advantage episode (prime-rl's
    #: ``effective`` traces, open-instruct's GRPO traces): the groups that all pass or all
    #: fail are not there.
    selected: int = 0
    #: What such rows are and what to read instead
    #: (:func:`whilecli.io.formats.selected.selection`).
    selected_by: tuple[str, str] | None = None
    coverage: dict[str, int] = field(default_factory=dict)

    @property
    def selection(self) -> tuple[str, str]:
        """What the selected rows are and what to read instead, named where the dump is
        known (:attr:`selected_by`)."""
        return self.selected_by or ("a selection of the rollouts", "read them all")

    @property
    def repeated_share(self) -> float | None:
        """The share of compared grouped tasks whose draws are one draw repeated."""
        return self.repeated_tasks / self.compared_tasks if self.compared_tasks else None

    @property
    def repeated(self) -> bool:
        """Most grouped tasks are one draw repeated: the band is not measured."""
        share = self.repeated_share
        return share is not None and share > REPEAT_SHARE

    @property
    def mean_of(self) -> int | None:
        """The k of per-task means of k draws the partial rewards look like: the smallest k
        on whose grid every one lies, two distinct values or more (one value, as 0.5, is
        half credit as much); None where they are not."""
        if not self.partial or not self.partial_grid or self.partial_values < 2:
            return None
        return min(self.partial_grid)

    def add(self, other: Facts) -> None:
        """Add another file's facts (the first rows stay the earliest file's)."""
        if self.partial_grid is None:
            self.partial_grid = other.partial_grid
        elif other.partial_grid is not None:
            self.partial_grid = sorted(set(self.partial_grid) & set(other.partial_grid))
        self.partial_values = max(self.partial_values, other.partial_values)
        for name in (
            *("rows", "counted", "ungraded", "errors", "empty", "partial", "cut_partial"),
            "empty_passes",
            *("selected", "greedy_rows", "cut_disputed", "cut_disputed_passes"),
            *("request_errors", "cut_at_longest", "cut_at_longest_passes", "unrecorded"),
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in (
            *("compared_tasks", "repeated_tasks", "graded_apart", "apart_replies"),
            *("repeated_rows", "repeated_samples", "retried", "retry_lost"),
            *("rekeyed_rows", "rekeyed_prompts"),
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        if other.per_row_ids is not None:
            self.id_rows += other.id_rows
        if other.token_cap is not None:
            self.token_cap = max(self.token_cap or 0.0, other.token_cap)
        names = (
            *("first_ungraded", "ungraded_spelled", "first_error", "first_empty"),
            *("first_cut_partial", "per_row_ids", "first_cut_disputed", "model_unsure"),
            *("prompt_unsure", "grade_beside", "first_cut_at_longest", "longest_field"),
            "grade_disagrees",
            *("version_lag", "prompt_masked", "greedy_sampled", "mapped_prompts"),
            *("prompt_reordered", "coarse_ids", "selected_by", "first_retried"),
            *("attempts_field", "first_repeated_sample", "cut_unread"),
        )
        if other.longest_tokens is not None:
            self.longest_tokens = max(self.longest_tokens or 0.0, other.longest_tokens)
        self.path_model = joined_writers(self.path_model, other.path_model)
        for name in names:
            if getattr(self, name) is None:
                setattr(self, name, getattr(other, name))
        for key, value in other.coverage.items():
            self.coverage[key] = self.coverage.get(key, 0) + value

    def found(self) -> bool:
        """Whether reading found anything that changes what the numbers mean (partial credit
        is reported with the summary's ``partial_rows``)."""
        counts = (
            *(self.ungraded, self.errors, self.empty, self.repeated_tasks),
            *(self.repeated_rows, self.graded_apart, self.repeated_samples),
            *(self.retried, self.retry_lost),
        )
        return any(counts) or self.per_row_ids is not None

    def warnings(self) -> list[str]:
        """What changes what the numbers mean, one line each (DESIGN section 2, "Data quality
        first")."""
        out: list[str] = []
        if self.errors:
            out.append(
                f"{self.errors} of {self.rows} rows are harness errors, not replies (first:"
                f" {self.first_error}): left out of every rate"
            )
        if self.ungraded:
            what = (
                "counted as failures (--missing fail)"
                if self.missing == "fail"
                else "left out of every rate (--missing fail counts them as failures)"
            )
            out.append(
                f"{self.ungraded} of {self.rows} rows are ungraded (no grade, or not a number; first:"
                f" {self.first_ungraded}{self.spelled_words()}): {what}"
            )
        if self.repeated:
            out.append(
                f"{self.repeated_tasks} of {self.compared_tasks} grouped tasks repeat one draw"
                f" ({self.repeat_cause()}): the band is not measured; sample at temperature > 0"
            )
        elif self.repeated_tasks:
            out.append(
                f"{self.repeated_tasks} of {self.compared_tasks} grouped tasks repeat one draw"
                f" ({self.repeat_cause()})"
            )
        if self.repeated_rows:
            out.append(
                f"{self.repeated_rows} of {self.counted} rows repeat another row of their task"
                " (the same reply, the same grade): one draw written twice"
            )
        if self.repeated_samples:
            out.append(
                f"{self.repeated_samples} of {self.counted} rows repeat another row's"
                f" {self.attempts_field} (first: {self.first_repeated_sample}): each is"
                " counted as a draw, though one may be a retry of the other"
            )
        if self.retried or self.retry_lost:
            out.append(self.attempt_words())
        if self.graded_apart:
            out.append(
                f"{self.graded_apart} tasks hold a reply graded both pass and fail"
                f" ({self.apart_replies} replies): the grader, not the draws, splits them"
            )
        rekey = self.rekey_words()
        if rekey is not None:
            out.append(f"{rekey[0]}: {rekey[1]}")
        if self.selected:
            what, fix = self.selection
            out.append(
                f"{self.selected} of {self.rows} rows are {what}: the pass and split rates lean"
                f" to the middle; {fix}"
            )
        return out + self.doubts()

    def doubts(self, option: str = "--map") -> list[str]:
        """What makes pass@1 itself unsure however the counts fall, one line each: a reward
        of one value beside a column that grades both ways (a placeholder the grader never
        filled), and replies that look cut off at the token cap yet pass, their flag saying
        not cut (:attr:`cut_disputed`, :attr:`cut_at_longest`). A verdict read from such a
        pass@1 (``diff``'s) is provisional; ``route`` weighs each against its band
        (:mod:`whilecli.route.quality`). ``option``: the option that maps these rows'
        fields (``--teacher-map`` for a teacher's)."""
        out: list[str] = []
        if self.grade_beside is not None:
            out.append(
                f"every graded row's reward is one value, while {self.grade_beside}, a"
                " grade-looking column beside it, grades both ways: the reward may be a"
                f" placeholder; {option} reward=COLUMN says which column grades"
            )
        cut = self.cut_disputed_passes + self.cut_at_longest_passes
        if cut:
            first = self.first_cut_disputed or self.first_cut_at_longest
            out.append(
                f"{cut} passing replies look cut off at the token cap (their count at the cap,"
                f" or piled at the longest; first: {first}) though not flagged cut: were they"
                " cut, a cut-off reply passes; record each reply's finish reason"
            )
        return out

    def attempt_words(self) -> str:
        """The attempts left out as the harness's (:attr:`retried`, :attr:`retry_lost`)."""
        parts = []
        if self.retried:
            parts.append(
                f"{self.retried} of {self.rows} rows are earlier attempts of a draw the"
                " harness retried"
            )
        if self.retry_lost:
            parts.append(
                f"{self.retry_lost} {'are' if not parts else ''} attempts whose retry is"
                " missing (their value marks only replaced attempts where a draw was retried)"
            )
        return (
            f"{'; '.join(parts)} (first: {self.first_retried}): the draw is"
            f" {self.attempts_field}; the rest are left out of every rate"
        ).replace("  ", " ")

    @property
    def left_ungraded(self) -> int:
        """The ungraded rows left out of every rate: all of them, unless ``--missing fail``
        counts them as failures."""
        return 0 if self.missing == "fail" else self.ungraded

    def repeat_cause(self) -> str:
        """What says the draws of a task are one: identical completions, and greedy decoding
        where rows record it."""
        if not self.greedy_rows:
            return "identical completions"
        return (
            f"identical completions, or greedy decoding recorded (temperature 0, top_k 1 or"
            f" do_sample false) on {self.greedy_rows} of {self.rows} rows that keep no reply"
        )

    def rekey_words(self) -> tuple[str, str] | None:
        """What was found and what was done where ids one per row were keyed by the prompt
        (DESIGN section 1, "Task ids are checked against prompts"): every row, or how many
        rows and the prompts they form, the other rows keeping their ids. None: no rekey."""
        column = self.per_row_ids
        if column is None:
            return None
        if not self.rekeyed_rows or self.rekeyed_rows >= self.id_rows:
            return (
                f"{column} holds one id per row while prompts repeat",
                "tasks are keyed by the prompt, so a prompt's rollouts form one group",
            )
        rows, prompts = self.rekeyed_rows, self.rekeyed_prompts
        return (
            f"{column} holds one id per row on {rows} of {self.id_rows} rows, whose"
            f" {prompts} prompt{'s' if prompts != 1 else ''} each recur under several of"
            " those ids",
            f"those {rows} rows are keyed by the prompt ({prompts} task{'s' if prompts != 1 else ''});"
            f" the other rows keep their {column} as the task",
        )

    def spelled_words(self) -> str:
        """What the ungraded note adds where the rows spell the grade's key otherwise too."""
        return f"; {self.ungraded_spelled}" if self.ungraded_spelled else ""

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["repeated_share"] = self.repeated_share
        return out


def refuse_partial(
    partial_rows: int, graded_rows: int, hint: list[str], file: str, field: str
) -> None:
    """Refuse rewards with partial credit on :data:`PARTIAL_SHARE` of the graded rows or
    more, when no threshold was given: pass/fail is not defined (exit 2)."""
    if graded_rows == 0 or partial_rows < PARTIAL_SHARE * graded_rows:
        return
    cols = (
        "binary-looking columns the rows carry: " + ", ".join(hint)
        if hint
        else "the rows carry no binary-looking column"
    )
    raise InputError(
        f"{partial_rows} of {graded_rows} graded rows have a reward strictly between 0 and 1"
        " (a judge's probability or a rubric score), so pass/fail is not defined; "
        f"{cols}. Pass --pass-threshold T, or --map reward={hint[0] if hint else 'COLUMN'}",
        file=file,
        field=field,
    )


def refuse_errors(errors: int, rows: int, file: str, first: str | None) -> None:
    """Refuse a file whose replies are harness errors half the time or more (exit 2)."""
    if rows and errors >= ERROR_SHARE * rows:
        where = f" (first: {first})" if first else ""
        raise MostlyErrorReplies(
            f"most replies are errors: the harness failed, not the model ({errors} of {rows}"
            f" rows{where})",
            errors=errors,
            rows=rows,
            file=file,
        )


def spelled_otherwise(field: str, keys: Sequence[str], *, none_graded: bool = False) -> str | None:
    """What to say of rows that carry ``keys``, each ``field`` (the grade's key) in another
    case, and what to do: rows that spell it so are read as ungraded. Where no row is graded
    (``none_graded``), reading that key is the fix. None where there are none."""
    if not keys:
        return None
    named = " and ".join(repr(k) for k in keys)
    fix = f"pass --map reward={keys[0]}" if none_graded else f"write it as {field!r} in every row"
    return f"some rows carry {named}, the grade's key {field!r} in another case, which is not read: {fix}"


def refuse_ungraded(
    rows: int,
    file: str,
    field: str,
    line: int | None = None,
    row: int | None = None,
    at: str | None = None,
    spelled: str | None = None,
    binary: Sequence[str] = (),
) -> None:
    """Refuse a file with no graded row (exit 2), at its first row; ``spelled``: what the
    rows hold under a key that spells the grade's in another case (:func:`spelled_otherwise`);
    ``binary``: the columns the rows carry that hold 0/1 values (the likely grade)."""
    hint = "pass --map reward=COLUMN"
    if binary:
        hint = (
            f"binary-looking columns the rows carry: {', '.join(binary)}; pass --map"
            f" reward={binary[0]}"
        )
    raise InputError(
        f"no graded row: all {rows} rows have no grade (null, not a number, or absent), this one first;"
        f" {spelled or hint}",
        file=file,
        field=field,
        line=line,
        row=row,
        at=at,
    )


# --- the aggregations reading runs ------------------------------------------------------

#: Auxiliary columns of a file's narrow frame that the facts read.
GRADED, DRAW, PROMPT = "__graded", "__draw", "__prompt"
#: The key of a row's (task, episode id), where the rows carry an episode id.
EPISODE = "__episode"
#: A row's turn index within its episode, where the rows carry one and no episode id.
TURN = "__turn"
#: A harness error that names a request failed at the API (:func:`failed_request`).
REQUEST = "__request"
#: An error field naming a request that failed at the API beside a reply (a stream it may
#: have cut short, :func:`cut_failures`).
CUT = "__cut"
#: A reply whose short text names a failure (:func:`failure_worded`): what a harness's
#: placeholder says, read as one where the rows' grades say so (:func:`placeholder_failures`).
WORDED = "__worded"
#: A row a flag reads as not cut whose token count reached its cap
#: (:func:`whilecli.io.plan.cut_disputed`).
DISPUTED = "__disputed"
#: A row's token cap as recorded (:func:`whilecli.io.plan.token_cap`).
CAP = "__cap"
#: A row's reply token count where no cap is recorded (:func:`whilecli.io.plan.reply_tokens`).
TOKENS = "__tokens"
#: Where replies pile at their file's longest token count (:func:`longest_pile`): the share
#: of that count below it whose rows are its neighbours, and how many times their density
#: per count the pile must hold, with at least :data:`PILE_ROWS` rows in
#: :data:`PILE_TASKS` tasks, at a count of :data:`PILE_TOKENS` or more (a short answer's
#: few counts tie as often as not).
PILE_BELOW, PILE_TIMES, PILE_ROWS, PILE_TASKS, PILE_TOKENS = 0.1, 5.0, 5, 3, 64.0
#: Stats keys merged across a file's row ranges by ``min`` (first rows), the rest by sum.
FIRST_KEYS = (
    *("f_first_error", "f_first_ungraded", "f_first_empty", "f_first_cut_partial"),
    "f_first_disputed",
)


def kept(missing: str) -> pl.Expr:
    """The rows every rate counts: not a harness error, and graded (``--missing fail``:
    ungraded rows too, as failures)."""
    ok = pl.col("reply") != ERROR
    return ok if missing == "fail" else ok & pl.col(GRADED)


def passed_column(threshold: float) -> pl.Expr:
    """``passed`` of a narrow frame: a mapped pass/fail, else the pass rule; an ungraded row
    never passes."""
    rule = pl.col("__passed").fill_null(passed(pl.col("reward"), threshold))
    return pl.when(pl.col(GRADED)).then(rule).otherwise(pl.lit(False))


def reward_column() -> pl.Expr:
    """``reward`` of a narrow frame: the grade of a graded row; null (no grade) on an
    ungraded one, whether it was written null or NaN. A row kept by ``--missing fail`` is a
    failure (DESIGN section 1, "graded") and adds nothing to a sum of rewards, never NaN."""
    return pl.when(pl.col(GRADED)).then(pl.col("reward")).otherwise(pl.lit(None, pl.Float64))


def row_aggregates(at: str, tokens: bool = True) -> list[pl.Expr]:
    """One row of counts over a narrow frame (its positions in column ``at``; ``tokens``:
    whether its rows carry reply token counts, :data:`TOKENS`, else those counts are not
    looked at)."""
    left = pl.col("reply") == ERROR
    # an earlier attempt of a draw is left out, never a harness error (:mod:`attempts`)
    error = left & ~pl.col(attempts.CODE).fill_null(0).is_in(list(attempts.LEFT_OUT_CODES))
    empty = pl.col("reply") == EMPTY
    grade = pl.col(GRADED) & ~left
    ungraded = ~pl.col(GRADED) & ~left
    cut_partial = (
        grade
        & pl.col("truncated").fill_null(False)
        & (pl.col("reward") > 0)
        & ~pl.col("passed").fill_null(False)
    )
    disputed = grade & pl.col(DISPUTED).fill_null(False)

    def first(rows: pl.Expr) -> pl.Expr:  # the smallest position of such a row (null: none)
        return pl.when(rows).then(pl.col(at)).min()

    # a count over some rows is a sum of both conditions (a null of either is passed over)
    return [
        error.sum().alias("f_errors"),
        (error & pl.col(REQUEST).fill_null(False)).sum().alias("f_request"),
        ungraded.sum().alias("f_ungraded"),
        empty.sum().alias("f_empty"),
        (empty & grade & pl.col("passed").fill_null(False)).sum().alias("f_empty_passes"),
        grade.sum().alias("f_graded"),
        (partial(pl.col("reward")) & grade).sum().alias("f_partial"),
        first(error).alias("f_first_error"),
        first(ungraded).alias("f_first_ungraded"),
        first(empty).alias("f_first_empty"),
        pl.col("truncated").count().alias("f_cov_truncated"),
        pl.col("model").count().alias("f_cov_model"),
        pl.col("policy_version").count().alias("f_cov_policy_version"),
        (pl.col("__lp") & grade).sum().alias("f_cov_logprobs"),
        (pl.col("__vals") & grade).sum().alias("f_cov_values"),
        cut_partial.sum().alias("f_cut_partial"),
        first(cut_partial).alias("f_first_cut_partial"),
        pl.col("truncated").fill_null(False).sum().alias("f_cut"),
        disputed.sum().alias("f_disputed"),
        (disputed & pl.col("passed").fill_null(False)).sum().alias("f_disputed_passes"),
        first(disputed).alias("f_first_disputed"),
        (pl.col("reply") != OK).sum().alias("f_not_ok"),
        (pl.col(DRAW) == GREEDY_DRAW).sum().alias("f_greedy"),
        pl.col(CAP).max().alias("f_cap"),
        *(_longest_aggregates(at) if tokens else _no_longest()),
        *attempts.aggregates(at),
    ]


def _longest_aggregates(at: str) -> list[pl.Expr]:
    """Over the counted rows' reply token counts (:data:`TOKENS`): the longest, the rows at
    it and in the tenth of counts below it, and those at it not read as cut off (how many,
    passing, the first): :func:`longest_pile`'s inputs but the tasks those rows fall in,
    counted only where the rest make a pile (:func:`longest_rows`)."""
    tokens = _counted_tokens()
    longest = tokens.max()
    at_longest = (tokens == longest).fill_null(False)
    uncut = _uncut(at_longest)
    return [
        longest.alias("f_longest"),
        at_longest.sum().alias("f_at_longest"),
        ((tokens < longest) & (tokens >= (1 - PILE_BELOW) * longest)).sum().alias("f_below"),
        uncut.sum().alias("f_longest_uncut"),
        (uncut & pl.col("passed").fill_null(False)).sum().alias("f_longest_passes"),
        pl.when(uncut).then(pl.col(at)).min().alias("f_first_longest"),
    ]


def longest_rows(longest: float) -> pl.Expr:
    """The counted rows at the longest token count ``longest`` that are not read as cut off
    (:func:`_longest_aggregates`' ``uncut``), to count the tasks they fall in."""
    return _uncut((_counted_tokens() == longest).fill_null(False))


def _counted_tokens() -> pl.Expr:
    """A counted row's reply token count (:data:`TOKENS`); null on a harness error's or an
    ungraded row."""
    return pl.when(pl.col(GRADED) & (pl.col("reply") != ERROR)).then(pl.col(TOKENS))


def _uncut(rows: pl.Expr) -> pl.Expr:
    """Of ``rows``, those not read as cut off."""
    return rows & ~pl.col("truncated").fill_null(False)


def _no_longest() -> list[pl.Expr]:
    """:func:`_longest_aggregates` of rows that carry no token counts."""
    return [
        pl.lit(None, dtype=pl.Float64).alias("f_longest"),
        *(pl.lit(0).alias(k) for k in ("f_at_longest", "f_below", "f_longest_uncut")),
        pl.lit(0).alias("f_longest_passes"),
        pl.lit(None, dtype=pl.Int64).alias("f_first_longest"),
    ]


def longest_pile(longest: float | None, at_longest: int, below: int, tasks: int) -> bool:
    """Whether a file's replies pile at its longest token count, as replies cut at a cap
    do (a count no field records as the cap): :data:`PILE_ROWS` rows or more in
    :data:`PILE_TASKS` tasks (one task's repeated draw is one reply) at a count of
    :data:`PILE_TOKENS` or more, :data:`PILE_TIMES` times the rows per count the
    :data:`PILE_BELOW` share of counts below it hold, plus one. Lengths that end on their
    own spread over the counts; a cap stacks every reply that reached it on one."""
    if longest is None or longest < PILE_TOKENS or at_longest < PILE_ROWS or tasks < PILE_TASKS:
        return False
    per_count = below / max(1.0, PILE_BELOW * longest)
    return at_longest >= PILE_TIMES * (per_count + 1)


def task_facts(missing: str, with_prompt: bool, with_draw: bool) -> list[pl.Expr]:
    """Per task (aggregations of a group-by by ``task_id``): its rows, its counted rows
    (``k``), the smallest and largest prompt key (one id with two prompts) and how many
    prompts it carries, and over counted rows the completions' draw keys (one draw
    repeated)."""
    count = kept(missing)
    aggs = [pl.len().cast(pl.Int64).alias("n_all"), count.sum().cast(pl.Int64).alias("k")]
    if with_prompt:
        aggs += [pl.col(PROMPT).min().alias("p_lo"), pl.col(PROMPT).max().alias("p_hi")]
        aggs.append(pl.col(PROMPT).n_unique().cast(pl.Int64).alias("p_n"))
    if with_draw:
        draw = pl.when(count).then(pl.col(DRAW))
        aggs += [
            draw.count().cast(pl.Int64).alias("d_n"),
            draw.min().alias("d_lo"),
            draw.max().alias("d_hi"),
            (count & pl.col("passed").fill_null(False)).sum().cast(pl.Int64).alias("d_pass"),
        ]
        absent = count & pl.col(DRAW).is_null()
        cut = count & pl.col(CUT).fill_null(False)
        passed = pl.col("passed").fill_null(False)
        credit = passed | credited(pl.col("reward")).fill_null(False)
        aggs += [
            (absent & passed).sum().cast(pl.Int64).alias("a_pass"),
            (absent & credit).sum().cast(pl.Int64).alias("a_cred"),
            cut.sum().cast(pl.Int64).alias("c_n"),
            (cut & passed).sum().cast(pl.Int64).alias("c_pass"),
            (cut & credit).sum().cast(pl.Int64).alias("c_cred"),
        ]
    return aggs


#: The passes the rows that keep no reply would hold, were they drawn as their tasks' replied
#: rows are, from which none passing reads as a harness that recorded nothing
#: (:func:`absent_failures`): a sum of draws with this mean holds none 0.7% of the time.
ABSENT_EXPECTED = 5.0


def absent_failures(table: pl.DataFrame) -> tuple[pl.Series, int] | None:
    """The tasks whose rows that keep no reply (null, in a file that keeps replies) are a
    harness's failures, not the model's, and how many such rows they hold; None where the
    rows do not say so.

    A row with no reply beside replies of its own task is either not kept (a writer that
    logs some replies only) or nothing recorded (a timeout, a crash) and scored 0. The grades
    tell them apart: where no such row has credit while their tasks' replied rows pass
    often enough that :data:`ABSENT_EXPECTED` passes or more were due among them, the writer
    did not pick them at random: nothing was recorded, as an error field would have said.
    A task whose rows keep no reply at all is left as it is (its replies were not kept)."""
    if not {"k", "d_n", "d_pass", "a_pass", "a_cred"} <= set(table.columns):
        return None
    return _marked_failures(table, pl.col("k") - pl.col("d_n"), "a_pass", "a_cred")


def cut_failures(table: pl.DataFrame) -> tuple[pl.Series, int] | None:
    """The tasks whose rows that keep a reply beside an error field naming a request that
    failed at the API (a rate limit, a server's failure: :data:`CUT`) are the harness's
    failures, and how many such rows they hold; None where the rows do not say so.

    Such a row is a stream the failure cut short, scored 0, or a reply a retry won with the
    first try's error left beside it. The grades tell them apart as for rows that keep no
    reply (:func:`absent_failures`): where none of those rows has credit while their tasks'
    other rows pass often enough that :data:`ABSENT_EXPECTED` passes were due among them,
    the failure cut them short."""
    if not {"k", "d_pass", "c_n", "c_pass", "c_cred"} <= set(table.columns):
        return None
    return _marked_failures(table, pl.col("c_n"), "c_pass", "c_cred")


def _marked_failures(
    table: pl.DataFrame, marked: pl.Expr, passes: str, credit: str
) -> tuple[pl.Series, int] | None:
    """The tasks holding ``marked`` counted rows beside others, and those rows' count, where
    none of them has credit (``credit``) and the other rows' pass rate per task puts
    :data:`ABSENT_EXPECTED` passes or more among them; None otherwise."""
    others = pl.col("k") - marked
    mixed = table.filter((others > 0) & (marked > 0))
    if mixed.height == 0:
        return None
    rate = (pl.col("d_pass") - pl.col(passes)) / others
    sums = ((marked * rate).sum().alias("due"), pl.col(credit).sum(), marked.sum().alias("n"))
    due, credited_rows, rows = mixed.select(sums).row(0)
    if credited_rows or due + 1e-9 < ABSENT_EXPECTED:
        return None
    return mixed["task_id"], int(rows)


#: The share of a file's greedy tasks (:data:`GREEDY_DRAW`) graded both pass and fail past
#: which its greedy rows are read as draws that differ, not one draw repeated
#: (:func:`draws_found`).
GREEDY_SPLIT_SHARE = 0.1
#: The share of compared tasks whose draws differ at or above which the rows' draws are the
#: sampler's (:func:`draws_found`): a task of one reply that another task's draws also all
#: give (``B``, ``42``: an answer space a sampler meets by chance) is then sampled agreement,
#: not one draw repeated. Greedy decoding of short answers leaves nearly every task of one
#: reply (batch nondeterminism flips a few); a sampler leaves many tasks apart.
SAMPLED_SHARE = 0.1


def draws_found(table: pl.DataFrame, draws: pl.DataFrame | None = None) -> tuple[int, int, int]:
    """(grouped tasks whose completions can be compared, those whose draws are all one, and
    of those the ones graded both pass and fail: one reply, two grades, so what splits
    them is the grader, never the draws).

    A task whose rows are one greedy draw (:data:`GREEDY_DRAW`: no reply, greedy decoding
    recorded) yet graded both pass and fail is no draw repeated: one draw cannot pass and
    fail, so the decoding recorded is not the sampler's or the draws differ (an API model at
    temperature 0). Such a task is compared and found not one; where more than
    :data:`GREEDY_SPLIT_SHARE` of the greedy tasks are split so, the rows are not one draw
    repeated (a grader that grades one reply two ways splits a few tasks, not that many),
    and no greedy task is compared.

    A task of one reply that another task gives too (a letter, a number: a small answer
    space; read from ``draws``, the per-(task, reply) counts of :func:`draw_counts`, else
    among the tasks of one reply), where :data:`SAMPLED_SHARE` of the compared tasks or more
    hold several replies (the sampler samples), agrees by chance: compared, not one draw
    repeated (its one reply graded both ways is the grader's all the same)."""
    if "d_n" not in table.columns:
        return 0, 0, 0
    compared = (pl.col("k") >= 2) & (pl.col("d_n") == pl.col("k"))
    one = compared & (pl.col("d_lo") == pl.col("d_hi"))
    split = (pl.col("d_pass") > 0) & (pl.col("d_pass") < pl.col("k"))
    greedy = one & (pl.col("d_lo") == pl.lit(GREEDY_DRAW, dtype=pl.UInt64)).fill_null(False)
    tasks, torn = table.select(greedy.sum().alias("g"), (greedy & split).sum().alias("s")).row(0)
    if torn and int(torn) > GREEDY_SPLIT_SHARE * int(tasks or 0):  # the draws differ
        compared = compared & ~greedy
        one = one & ~greedy
    else:
        one = one & ~(greedy & split)
    apart = one & split
    reply = pl.when(one & ~greedy).then(pl.col("d_lo"))
    if draws is not None and draws.height:
        common = draws.group_by("d").len().filter(pl.col("len") >= 2).get_column("d")
        shared = reply.is_in(common.implode()).fill_null(False)
    else:
        shared = reply.is_not_null() & (reply.count().over(reply) >= 2)
    sampled = (compared & ~one).sum() >= SAMPLED_SHARE * compared.sum()
    repeated = one & ~(shared & sampled)
    out = table.select(
        compared.sum().alias("c"), repeated.sum().alias("r"), apart.sum().alias("a")
    ).row(0)
    return int(out[0] or 0), int(out[1] or 0), int(out[2] or 0)


def replied_draw() -> pl.Expr:
    """True where a row's draw key is its reply's (not a greedy row's, :data:`GREEDY_DRAW`):
    the rows :func:`draw_counts` counts."""
    return pl.col(DRAW).is_not_null() & (pl.col(DRAW) != GREEDY_DRAW)


def draw_counts(missing: str) -> list[pl.Expr]:
    """Per (task, reply) (aggregations of a group-by by the task's hash ``t`` and the draw
    key ``d`` over the counted rows that hold a reply, :func:`replied_draw`): how many rows
    write that reply (``n``), how many of them pass (``p``), how many are empty (``e``: no
    text generated), and whether it names a failure (``w``, :func:`failure_worded`). Tables
    of several files add up by key."""
    passes = (kept(missing) & pl.col("passed").fill_null(False)).sum()
    empty = (pl.col("reply") == EMPTY).sum()
    return [
        pl.len().cast(pl.UInt32).alias("n"),
        passes.cast(pl.UInt32).alias("p"),
        empty.cast(pl.UInt32).alias("e"),
        pl.col(WORDED).fill_null(False).all().alias("w"),
    ]


def merged_draws(tables: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """The per-(task, reply) counts of :func:`draw_counts` over several tables, added up."""
    both = pl.concat(list(tables), how="vertical")
    return both.group_by("t", "d").agg(
        pl.col("n").sum(), pl.col("p").sum(), pl.col("e").sum(), pl.col("w").all()
    )


#: The tasks one reply must be written in, never passing, to read as a harness's
#: placeholder (:func:`placeholder_failures`).
PLACEHOLDER_TASKS = 5
#: The longest placeholder (characters, trimmed): a word or a short phrase.
PLACEHOLDER_CHARS = 48
#: Words a harness's placeholder for a failed request says (``ERROR``, ``[timeout]``,
#: ``<failed>``, ``no response``, ``N/A``, ``rate limited``).
_FAILURE_WORDS = (
    r"(?i)(?:^|[^a-z])(?:err(?:or)?s?|fail(?:ed|ure)?|time[ _-]?out|timed[ _-]?out|exception"
    r"|unavailable|refused|no[ _-]?(?:response|reply|output|answer|completion)|none|null|n/?a"
    r"|empty|invalid|abort(?:ed)?|cancel+ed|crash(?:ed)?|missing|placeholder"
    r"|rate[ _-]?limit(?:ed)?|overloaded|skipped)(?:$|[^a-z])"
)


def failure_worded(text: pl.Expr) -> pl.Expr:
    """Whether a reply is short (:data:`PLACEHOLDER_CHARS`) and names a failure
    (:data:`_FAILURE_WORDS`): what a harness writes in place of a reply it did not get."""
    trimmed = text.str.strip_chars()
    short = trimmed.str.len_chars() <= PLACEHOLDER_CHARS
    return (short & trimmed.str.contains(_FAILURE_WORDS)).fill_null(False)


def placeholder_failures(draws: pl.DataFrame) -> tuple[pl.Series, int] | None:
    """The draw keys of replies a harness wrote in place of the model's (``ERROR``,
    ``timeout``, ``<failed>``), and how many rows hold them; None where the rows do not say so.

    A short reply naming a failure (:func:`failure_worded`: ``ERROR``, ``no response``)
    written alike in :data:`PLACEHOLDER_TASKS` tasks or more answers none of their prompts:
    a sampler's own reply to one prompt is not the reply to four others, but for a short
    answer (``B``, ``42``, ``None``), which some task then credits. Where such a reply passes
    nowhere while its tasks' other replies pass often enough that
    :data:`ABSENT_EXPECTED` passes or more were due among its rows, it is the harness's
    failure scored 0, as a null reply is (:func:`absent_failures`): a reply no task credits
    by chance would have passed as often as its tasks' others. An empty reply is counted as
    the model's stop (its own rules, ``empty``)."""
    if draws.height == 0 or "w" not in draws.columns:
        return None
    n, p = pl.col("n").cast(pl.Int64), pl.col("p").cast(pl.Int64)
    per_reply = draws.group_by("d").agg(
        tasks=pl.len(), p=p.sum(), e=pl.col("e").sum(), w=pl.col("w").all()
    )
    alike = (pl.col("tasks") >= PLACEHOLDER_TASKS) & (pl.col("p") == 0) & (pl.col("e") == 0)
    alike = alike & pl.col("w")
    keys = per_reply.filter(alike).get_column("d")
    if keys.len() == 0:
        return None
    marked = pl.col("d").is_in(keys.implode())
    per_task = draws.group_by("t").agg(k=n.sum(), d_pass=p.sum(), m=n.filter(marked).sum())
    others = pl.col("k") - pl.col("m")
    due = (pl.col("m") * pl.col("d_pass") / others).filter(others > 0).sum().alias("due")
    expected, rows = per_task.select(due, pl.col("m").sum()).row(0)
    if (expected or 0.0) + 1e-9 < ABSENT_EXPECTED:
        return None
    return keys, int(rows)


def replies_written(draws: pl.DataFrame) -> tuple[int, int, int]:
    """(rows that repeat an earlier row of their task with the same reply and the same grade,
    in tasks of two replies or more each written the same number of times, twice or more:
    the task written over, as a file pooled with itself is; replies graded both pass and
    fail; the tasks holding one of those). A task of one reply is one draw repeated
    (:func:`draws_found`); a task whose replies recur unevenly, or all recur in other tasks
    (short answers that recur by chance: ``B``, ``42``), is not written over."""
    if draws.height == 0:
        return 0, 0, 0
    n, p = pl.col("n").cast(pl.Int64), pl.col("p").cast(pl.Int64)
    one_grade = (p == 0) | (p == n)
    own = pl.len().over("d") == 1  # a reply no other task gives
    per_task = (
        draws.with_columns(own=own)
        .group_by("t")
        .agg(
            replies=pl.len(),
            lo=n.min(),
            hi=n.max(),
            again=(n - 1).filter(one_grade).sum(),
            apart=(~one_grade).sum(),
            own=pl.col("own").any(),
        )
    )
    over = (pl.col("replies") >= 2) & (pl.col("lo") == pl.col("hi")) & (pl.col("lo") >= 2)
    over = over & pl.col("own")
    out = per_task.select(
        pl.col("again").filter(over).sum(),
        pl.col("apart").sum().alias("replies"),
        (pl.col("apart") > 0).sum().alias("tasks"),
    ).row(0)
    return int(out[0] or 0), int(out[1] or 0), int(out[2] or 0)


def per_row_ids(table: pl.DataFrame) -> pl.Series | None:
    """The task ids that are one per row while their prompt repeats: ids of one row each
    whose prompt key another such id carries too (a per-row uuid on the rollouts of those
    prompts). Their rows are keyed by the prompt; ids shared by a task's rows elsewhere in
    the file stay as they are. None: no such id."""
    if "p_lo" not in table.columns or table.height < 2:
        return None
    singles = table.filter((pl.col("n_all") == 1) & pl.col("p_lo").is_not_null())
    ids = singles.filter(pl.len().over("p_lo") >= 2).get_column("task_id")
    return ids if ids.len() else None


def idless_owners(table: pl.DataFrame) -> pl.DataFrame | None:
    """The tasks keyed by their prompt for want of an id (an id missing, null or blank on
    their rows: the task id is the prompt's hash, whose key is its ``p_lo``) whose prompt is
    carried by the rows of exactly one id, with that id: (``task_id``, ``to``, ``n_all``).
    Those rows are that task's. A prompt carried by no id's rows, or by several ids', keeps
    its rows keyed by the prompt. None: no such task."""
    if "p_lo" not in table.columns:
        return None
    task = pl.col("task_id")
    keyed = task.is_not_null() & (task.hash(seed=0) == pl.col("p_lo"))
    idless = table.filter(keyed)
    if idless.height == 0:
        return None
    one_prompt = task.is_not_null() & ~keyed & (pl.col("p_lo") == pl.col("p_hi"))
    owners = (
        table.filter(one_prompt)
        .group_by("p_lo")
        .agg(task.first().alias("to"), pl.len().alias("ids"))
        .filter(pl.col("ids") == 1)
    )
    found = idless.join(owners, on="p_lo").select("task_id", "to", "n_all")
    return found if found.height else None


#: The share of the rows under ids that carry two prompts or more past which those prompts
#: read as one per draw (:func:`ids_with_prompts`): keyed by the prompt, most such rows
#: would be tasks of one row.
PROMPT_PER_DRAW_SHARE = 0.5


@dataclass(frozen=True)
class IdsWithPrompts:
    """Task ids that carry two prompts or more (:func:`ids_with_prompts`): ``ids`` of them
    holding ``rows`` rows under ``prompts`` distinct prompts, one id to show with its own."""

    ids: int
    rows: int
    prompts: int
    first: str
    first_rows: int
    first_prompts: int

    @property
    def per_draw(self) -> bool:
        """The prompts differ from draw to draw (shuffled options, few-shot examples drawn
        per draw) more than they mark tasks under one id (two datasets' ids colliding, each
        prompt drawn k times): keyed by the prompt, the rows would make tasks of fewer than
        two rows on average."""
        return self.prompts > PROMPT_PER_DRAW_SHARE * self.rows

    def words(self) -> str:
        """The ids as the report names them."""
        return (
            f"{self.ids} task ids carry several prompts ({self.prompts} prompts in"
            f" {self.rows} rows; {self.first!r}: {self.first_prompts} in {self.first_rows})"
        )


def ids_with_prompts(table: pl.DataFrame) -> IdsWithPrompts | None:
    """The task ids of a task table (:func:`task_facts`) that carry two prompts or more, or
    None where every id carries one."""
    if "p_n" not in table.columns:
        return None
    bad = table.filter(pl.col("p_lo") != pl.col("p_hi")).sort("task_id")
    if bad.height == 0:
        return None
    return IdsWithPrompts(
        ids=bad.height,
        rows=int(bad["n_all"].sum()),
        prompts=int(bad["p_n"].sum()),
        first=str(bad["task_id"][0]),
        first_rows=int(bad["n_all"][0]),
        first_prompts=int(bad["p_n"][0]),
    )


def merged_task_facts(table: pl.DataFrame) -> pl.DataFrame:
    """Per task, the facts of :func:`task_facts` over tables of some of its rows each (a
    task's rows under each value of a ``--by`` column): counts added, each key's smallest
    and largest kept."""
    merge = {"p_lo": pl.min, "d_lo": pl.min, "p_hi": pl.max, "d_hi": pl.max}
    columns = [c for c in table.columns if c != "task_id"]
    return table.group_by("task_id").agg(merge.get(c, pl.sum)(c) for c in columns)
