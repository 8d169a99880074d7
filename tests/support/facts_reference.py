"""The row facts of DESIGN section 1, the slow way: one Python loop over parsed rows.

The reading layer decides them with polars expressions (:mod:`whilecli.io.facts`); the tests
hold it to this plain reading of the same rules, row by row.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

TOLERANCE = 2.0**-22  # the pass rule's: float32's rounding at 1
#: Messages a client library raises, whole (lower case, a final full stop optional).
WHOLE = {
    "request timed out",
    "connection error",
    "rate limit",
    "rate limited",
    "rate limit exceeded",
    "rate limit reached",
    "too many requests",
    "internal server error",
    "service unavailable",
    "bad gateway",
    "gateway timeout",
    "gateway time-out",
    "overloaded",
}
#: How a client's one-line error message opens (lower case).
OPENERS = (
    "rate limit reached",
    "rate limit exceeded",
    "this model's maximum context length is",
    "this model’s maximum context length is",
    "request timed out",
    "resource has been exhausted",
    "resource exhausted",
    "you exceeded your current quota",
    "the server had an error",
    "the server is overloaded",
    "that model is currently overloaded",
    "prompt is too long",
    "upstream connect error",
    "no healthy upstream",
)
#: How an error's name joins its words: a space, an underscore, or nothing
#: (``ServiceUnavailableError``, ``context_window_exceeded``).
_JOIN = (" ", "_", "")
_JOINS = [(a, b) for a in _JOIN for b in _JOIN]
FAILURE_WORDS = (
    "rate limit",
    "rate_limit",
    "rate-limit",
    "ratelimit",
    "too many requests",
    "connection error",
    "connection refused",
    "connection reset",
    "connection aborted",
    "connection closed",
    "connecterror",
    "apiconnectionerror",
    *(f"context{a}{what}{b}exceeded" for what in ("length", "window") for a, b in _JOINS),
    "maximum context length",
    *(f"internal{a}server{b}error" for a, b in _JOINS),
    *(f"bad{a}gateway" for a in _JOIN),
    *(f"service{a}unavailable" for a in _JOIN),
    *(f"service{a}temporarily{b}unavailable" for a, b in _JOINS),
    "overloaded",
)
CODES = ("http", "status", "status code", "error code", "error")


#: Unicode's White_Space characters (what a regex's ``\s`` matches; ``str.strip`` takes more).
SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + ("\u2028\u2029\u202f\u205f\u3000")
)
STATUS_CODES = ("429", *(str(c) for c in range(500, 600)))
#: The words after a status code that make it a status, not a number in a sentence.
REASONS = (
    "too many requests",
    "bad gateway",
    "service unavailable",
    "service temporarily unavailable",
    "internal server error",
    "gateway timeout",
    "gateway time-out",
    "overloaded",
    "rate limit",
    "rate_limit",
    "rate-limit",
    "ratelimit",
)
#: Words that open an error's label when a colon, ``=``, ``(`` or a status code follows.
LABEL_WORDS = ("error", "exception", "api error", "request failed", "fatal")


def _word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _coded(text: str) -> bool:
    """``text`` opens with a status code used as one: alone, before punctuation, or before its
    reason phrase."""
    if text[:3] not in STATUS_CODES:
        return False
    after = text[3:].lstrip(SPACE)
    return after == "" or after[0] in ":-–—([{," or after.startswith(REASONS)


def _after_word(rest: str) -> bool:
    """What follows ``Error`` in a label: a colon, ``=`` or ``(``, or a status code."""
    trimmed = rest.lstrip(SPACE)
    if trimmed[:1] in (":", "=", "(") and trimmed:
        return True
    return trimmed != rest and _coded(trimmed)


def _word_label(text: str) -> bool:
    """``Error: …``, ``Error code: 429``, ``Exception (…)``, ``Error 503 …``."""
    for word in LABEL_WORDS:
        if not text.startswith(word):
            continue
        rest = text[len(word) :]
        if _after_word(rest):
            return True
        trimmed = rest.lstrip(SPACE)
        if trimmed != rest and trimmed.startswith("code") and _after_word(trimmed[4:]):
            return True
    return False


def _class_label(text: str) -> bool:
    """An exception's (dotted) name and then a colon or the end: ``openai.RateLimitError: …``."""
    if not text or not (text[0] == "_" or "a" <= text[0] <= "z"):
        return False
    end = 1
    while end < len(text) and (_word(text[end]) or text[end] == "."):
        end += 1
    name, rest = text[:end], text[end:].lstrip(SPACE)
    if rest and rest[0] != ":":
        return False
    return any(name.endswith(s) and len(name) > len(s) for s in ("error", "exception", "timeout"))


def _status_tail(rest: str) -> bool:
    rest = rest.lstrip(SPACE)
    if rest[:1] in (":", "="):
        rest = rest[1:]
    return _coded(rest.lstrip(SPACE))


def _status_label(text: str) -> bool:
    """``HTTP 503``, ``HTTP/1.1 502 Bad Gateway``, ``HTTP Error 503:``, ``Status: 502``."""
    heads = {"https": "error", "http": "error", "status": "code"}
    for head, extra in heads.items():
        if not text.startswith(head):
            continue
        rest = text[len(head) :]
        if head != "status" and rest[:1] == "/" and rest[1:2].isdecimal() and rest[1:2].isascii():
            rest = rest[2:]
            if rest[:1] == "." and rest[1:2].isdecimal() and rest[1:2].isascii():
                rest = rest[2:]
        if _status_tail(rest):
            return True
        trimmed = rest.lstrip(SPACE)
        if trimmed != rest and trimmed.startswith(extra) and _status_tail(trimmed[len(extra) :]):
            return True
    return False


def _labelled(low: str) -> bool:
    """The text opens with an error's label, never with a sentence's first word."""
    text = low.lstrip(SPACE)
    if text.startswith(("[error]", "traceback (most recent call last)")):
        return True
    return _word_label(text) or _class_label(text) or _status_label(text) or _coded(text)


def _server_error(text: str) -> bool:
    """A web server's JSON error body: a ``detail``, ``message``, ``error_message`` or
    ``errormessage`` first, holding a client's whole or one-line message (then its closing
    quote) or a text that opens with an error's label (either quotes)."""
    if not text.startswith("{"):
        return False
    body = text[1:].lstrip(SPACE)
    for key in ("detail", "message", "error_message", "errormessage"):
        n = len(key)
        if body[:1] in ('"', "'") and body[1 : 1 + n] == key and body[1 + n : 2 + n] in ('"', "'"):
            rest = body[2 + n :].lstrip(SPACE)
            value = rest[1:].lstrip(SPACE)
            if not rest.startswith(":") or value[:1] not in ('"', "'"):
                return False
            said = value[1:]
            ends = [i for i, ch in enumerate(said) if ch in ('"', "'")]
            whole = any(_whole(said[:i]) or _one_line(said[:i]) for i in ends)
            return whole or _labelled(said)
    return False


def _json_error(text: str, valued: bool = False) -> bool:
    """``{"error": …``, ``{"type": "error"`` or ``{"object": "error"`` first (either quotes);
    ``valued``: the error's value opens an object or a string."""
    if not text.startswith("{"):
        return False
    body = text[1:].lstrip(SPACE)
    for key in ("error", "type", "object"):
        n = len(key)
        if not (
            body[:1] in ('"', "'") and body[1 : 1 + n] == key and body[1 + n : 2 + n] in ('"', "'")
        ):
            continue
        rest = body[2 + n :].lstrip(SPACE)
        if not rest.startswith(":"):
            continue
        if key == "error":
            return not valued or rest[1:].lstrip(SPACE)[:1] in ("{", '"', "'")
        value = rest[1:].lstrip(SPACE)
        if value[:1] in ('"', "'") and value[1:6] == "error" and value[6:7] in ('"', "'"):
            return True
    return False


def _one_line(low: str) -> bool:
    """A client's one-line message: an opening of :data:`OPENERS` as words, nothing after the
    line's end but blanks."""
    text = low.lstrip(SPACE)
    for opener in OPENERS:
        if text.startswith(opener) and not _word(text[len(opener) : len(opener) + 1] or " "):
            return "\n" not in text.rstrip(SPACE)
    return False


def _last_line(text: str) -> str:
    body = text.rstrip(SPACE)
    return body[body.rfind("\n") + 1 :]


def _shaped(low: str) -> bool:
    """An error's shape at any length: an HTML page whose title names a status or failure, a
    JSON error body naming a failure, a traceback whose last line is an exception naming one."""
    text = low.lstrip(SPACE)
    for page in ("<html", "<!doctype html"):
        if text.startswith(page) and not _word(text[len(page) : len(page) + 1] or " "):
            at = text.find("<title>")
            end = text.find("</title>", at)
            title = text[at + 7 : end] if at != -1 and end != -1 else ""
            if at != -1 and end != -1 and "<" not in title:
                coded = any(
                    title[i : i + 3] in STATUS_CODES
                    and (i == 0 or not _word(title[i - 1]))
                    and not _word(title[i + 3 : i + 4] or " ")
                    for i in range(len(title))
                )
                if coded or _names_a_failure(title):
                    return True
            break
    shaped = _json_error(text, valued=True) or _server_error(text)
    if shaped and text.rstrip(SPACE).endswith("}"):
        return _names_a_failure(text[: len(text.rstrip(SPACE)) - 1])
    if text.startswith("traceback (most recent call last)") and "\n" in text.rstrip(SPACE):
        line = _last_line(text).lstrip(" \t")
        name, colon, rest = line.partition(":")
        name = name.rstrip(" \t")
        if colon and _class_label(name + ":") and "\n" not in name:
            return _names_a_failure(rest)
    return False


def _time_out(low: str) -> bool:
    """``timeout`` anywhere, or time/timed and out with a space, ``_`` or ``-`` between."""
    if "timeout" in low:
        return True
    at = low.find("time")
    while at != -1:
        rest = low[at + 4 :]
        for head in ("", " ", "_", "-"):
            for d in ("", "d"):
                for sep in ("", " ", "_", "-"):
                    body = head + d + sep
                    if rest.startswith(body + "out") and not _word(
                        rest[len(body) + 3 : len(body) + 4] or " "
                    ):
                        return True
        at = low.find("time", at + 1)
    return False


def _coded_failure(low: str) -> bool:
    """``HTTP 503``, ``status code: 502``, ``error 429`` anywhere (as words)."""
    for name in CODES:
        at = low.find(name)
        while at != -1:
            if at == 0 or not _word(low[at - 1]):
                start = at + len(name)
                for width in range(4):
                    gap, after = low[start : start + width], low[start + width :]
                    if (
                        len(gap) == width
                        and not any(_word(c) for c in gap)
                        and after[:3] in STATUS_CODES
                        and not _word(after[3:4] or " ")
                    ):
                        return True
            at = low.find(name, at + 1)
    return False


def _names_a_failure(low: str) -> bool:
    return any(word in low for word in FAILURE_WORDS) or _time_out(low) or _coded_failure(low)


def _whole(low: str) -> bool:
    """One of the messages client libraries raise, whole, with their advice to retry."""
    text = low.strip(SPACE)
    for message in WHOLE:
        for full in (message, message + "."):
            if text == full:
                return True
            rest = text[len(full) :] if text.startswith(full) else ""
            advice = rest.lstrip(SPACE)
            if not rest or advice == rest:
                continue
            polite = advice[6:].lstrip(SPACE)
            if advice.startswith("please") and polite != advice[6:]:
                advice = polite
            for verb in ("retry", "try again", "wait"):
                tail = advice[len(verb) :]
                if advice.startswith(verb) and not _word(tail[:1] or " ") and "\n" not in tail:
                    return True
    return False


def is_harness_error(text: str | None) -> bool:
    """A completion that is a harness error message: short, and either a whole client message
    or an error's label first (never a sentence's first word) and a failure named anywhere."""
    if text is None:
        return False
    low = text.lower()
    if _shaped(low):
        return True
    if len(text.encode()) > 600:
        return False
    if _whole(low) or _one_line(low):
        return True
    return _labelled(low) and _names_a_failure(low)


#: A reply that holds nothing, as text: empty, an empty JSON value, a missing value's word.
EMPTY = ("", "[]", '""', "{}", "null", "NULL", "None", "nan", "NaN")


#: Template text around a reply, none of its own: special tokens, an empty reasoning block.
TEMPLATE_TOKENS = re.compile(
    r"<\|[^|<>]{1,64}\|>|</?s>|<(eos|bos|pad|unk|eot|end_of_turn|endoftext)>"
)
EMPTY_REASONING = re.compile(r"<(think|thinking|reasoning)>\s*</\1>")


def holds_nothing(text: str) -> bool:
    """Empty once what a template writes around a reply, and format characters, are taken
    out: looked at in replies of 256 bytes or fewer."""
    if text.strip() in EMPTY:
        return True
    if len(text.encode()) > 256:
        return False
    bare = EMPTY_REASONING.sub("", TEMPLATE_TOKENS.sub("", text))
    bare = "".join(c for c in bare if unicodedata.category(c) != "Cf")
    return bare.strip() in EMPTY


def reply(row: dict[str, Any]) -> str:
    """An error is what a harness recorded instead of a reply: a finish reason ``error`` or a
    non-null ``error`` field whatever is beside it; a reply that is a harness error message
    only where the grader gave it no credit."""
    text = row.get("completion")
    empty = text is None or holds_nothing(text)
    if str(row.get("finish_reason")).lower() == "error":
        return "error"
    error = row.get("error")
    if error is not None and str(error).strip() != "":  # whatever stands beside it
        return "error"
    reward = row.get("reward")
    credited = isinstance(reward, (int, float)) and reward > 0  # True is 1
    if is_harness_error(text) and not credited:
        return "error"
    if text is not None and empty:
        return "empty"
    return "ok"


def graded(reward: Any) -> bool:
    return reward is not None and not (isinstance(reward, float) and math.isnan(reward))


def _credited(reward: Any) -> bool:
    return isinstance(reward, (int, float)) and not math.isnan(reward) and reward > 0


#: Where a harness files a failure beside the reply (``error`` is read whatever stands
#: beside it), and the words of a request that failed at the API.
FAILURE_FIELDS = ("exception", "api_error", "llm_error")
FAILED_REQUEST_WORDS = (
    *("rate limit", "ratelimit", "rate_limit", "429", "too many requests", "quota", "throttl"),
    *("overload", "connection error", "connectionerror", "apiconnection", "server error"),
    *("service unavailable", "bad gateway"),
)


def _filed_failure(row: dict[str, Any]) -> bool:
    """A request's failure filed beside the row's reply (under :data:`FAILURE_FIELDS` or
    ``metadata.error``)."""
    said = [row.get(name) for name in FAILURE_FIELDS]
    meta = row.get("metadata")
    if isinstance(meta, dict):
        said.append(meta.get("error"))
    texts = [str(v).lower() for v in said if isinstance(v, str)]
    return any(word in text for text in texts for word in FAILED_REQUEST_WORDS)


def harness_errors(
    rows: list[dict[str, Any]], states: list[str], keys: list[str], cut: float, missing: str
) -> tuple[set[int], set[int]]:
    """The rows read as the harness's errors by their tasks' grades (``keys``: each row's
    task): those that keep no reply (``completion`` None), and those whose reply stands
    beside a request's failure, each by :func:`_marked_errors`."""
    absent = [r.get("completion") is None for r in rows]
    filed = [
        states[i] != "error" and _filed_failure(r) and r.get("completion") is not None
        for i, r in enumerate(rows)
    ]
    return (
        _marked_errors(rows, states, keys, cut, missing, absent)
        | _placeholders(rows, states, keys, cut, missing),
        _marked_errors(rows, states, keys, cut, missing, filed),
    )


#: A word a harness's placeholder says (``ERROR``, ``no response``, ``<failed>``).
_FAILURE_WORD = re.compile(
    r"(?:^|[^a-z])(?:err(?:or)?s?|fail(?:ed|ure)?|time[ _-]?out|timed[ _-]?out|exception"
    r"|unavailable|refused|no[ _-]?(?:response|reply|output|answer|completion)|none|null|n/?a"
    r"|empty|invalid|abort(?:ed)?|cancel+ed|crash(?:ed)?|missing|placeholder"
    r"|rate[ _-]?limit(?:ed)?|overloaded|skipped)(?:$|[^a-z])",
    re.IGNORECASE,
)


def _placeholders(
    rows: list[dict[str, Any]], states: list[str], keys: list[str], cut: float, missing: str
) -> set[int]:
    """The counted rows whose reply (trimmed) is at most 48 characters naming a failure,
    written alike in 5 tasks or more, passes on none of them and is empty on none, where 5 passes or more were due among them at
    their tasks' other rows' pass rate."""
    counted = [  # the rows that keep a reply: a null one is :func:`_marked_errors`'
        states[i] == "ok"
        and isinstance(r.get("completion"), str)
        and (graded(r.get("reward")) or missing == "fail")
        for i, r in enumerate(rows)
    ]
    where: dict[str, set[str]] = defaultdict(set)
    passing: set[str] = set()
    for i, r in enumerate(rows):
        if not counted[i]:
            continue
        text = r["completion"]
        where[text.strip()].add(keys[i])
        reward = r.get("reward")
        if graded(reward) and reward >= cut - TOLERANCE:
            passing.add(text.strip())
    alike = {
        t
        for t, tasks in where.items()
        if len(tasks) >= 5 and t not in passing and len(t) <= 48 and _FAILURE_WORD.search(t)
    }
    marked = [counted[i] and r["completion"].strip() in alike for i, r in enumerate(rows)]
    tasks: dict[str, list[int]] = defaultdict(list)
    for i, key in enumerate(keys):
        if counted[i]:
            tasks[key].append(i)
    due = 0.0
    for members in tasks.values():
        others = [i for i in members if not marked[i]]
        flagged = [i for i in members if marked[i]]
        if not others or not flagged:
            continue
        passes = 0
        for i in others:
            reward = rows[i].get("reward")
            passes += graded(reward) and reward >= cut - TOLERANCE
        due += len(flagged) * passes / len(others)
    if due + 1e-9 < 5:
        return set()
    return {i for i, m in enumerate(marked) if m}


def _marked_errors(
    rows: list[dict[str, Any]],
    states: list[str],
    keys: list[str],
    cut: float,
    missing: str,
    marked: list[bool],
) -> set[int]:
    """The ``marked`` rows of the tasks that hold a counted row not marked beside a counted
    marked one, where no counted marked row has credit and 5 passes or more were due among
    them at their tasks' other rows' pass rate."""
    tasks: dict[str, list[int]] = defaultdict(list)
    for i, key in enumerate(keys):
        tasks[key].append(i)
    due, credit, chosen = 0.0, 0, set()
    for members in tasks.values():
        counted = [
            i
            for i in members
            if states[i] != "error" and (graded(rows[i].get("reward")) or missing == "fail")
        ]
        others = [i for i in counted if not marked[i]]
        flagged = [i for i in counted if marked[i]]
        if not others or not flagged:
            continue
        passes = 0
        for i in others:
            reward = rows[i].get("reward")
            passes += graded(reward) and reward >= cut - TOLERANCE
        for i in flagged:
            reward = rows[i].get("reward")
            credit += _credited(reward) or (graded(reward) and reward >= cut - TOLERANCE)
        due += len(flagged) * passes / len(others)
        chosen |= {i for i in members if marked[i]}
    if credit or due + 1e-9 < 5:
        return set()
    return chosen


def _without_checkpoint(path: str) -> str:
    """``/models/Name/checkpoint-100`` → ``/models/Name``; verl's
    ``…/Name/global_step_100/actor/huggingface`` → ``…/Name``; any other path as it is."""
    parts = path.rstrip("/").split("/")
    inner = {"actor", "critic", "huggingface", "hf", "hf_model", "model", "policy"}
    prefixes = ("checkpoint", "global_step", "global-step", "globalstep", "step", "iteration",
                "iter", "ckpt")  # fmt: skip
    end = len(parts)
    while end > 2 and parts[end - 1].lower() in inner:
        end -= 1
    last = parts[end - 1].lower() if end >= 2 else ""
    for prefix in prefixes:
        rest = last[len(prefix) :].lstrip("_-") if last.startswith(prefix) else ""
        if rest.isdigit() and len(last) - len(rest) <= len(prefix) + 1 and end >= 3:
            return "/".join(parts[: end - 1])
    return path


def model_name(raw: str | None) -> str | None:
    """``…/models--Org--Name/snapshots/<sha>`` → ``Org/Name``; ``/models/Name/`` → ``Name``
    (``Org__Name`` or ``Org--Name`` → ``Org/Name``); a
    checkpoint folder under a model folder → the model folder's name; any other local path →
    its last part; a name as it is."""
    if raw is None:
        return None
    parts = raw.split("/")
    for part in parts:
        if part.startswith("models--") and part.count("--") >= 2:
            org, _, name = part[len("models--") :].partition("--")
            if org and name:
                return f"{org}/{name}"
    if raw.startswith(("/", "./", "../", "~/")):  # a checkpoint folder names its model
        raw = _without_checkpoint(raw)
        kept = [p for p in raw.rstrip("/").split("/")]
        for i, part in enumerate(kept[:-1]):
            if part == "models" and kept[i + 1]:
                name = kept[i + 1]
                break
        else:
            name = kept[-1]
        if (joined := _org_joined(name)) is not None:
            return joined
        return name if _names_a_model(name) else raw  # a run's folder: kept as written
    return raw


def _org_joined(name: str) -> str | None:
    """A folder named ``Org--Name`` (vf-eval) or ``Org__Name`` (lm-eval's sanitized model
    name) names the Hub id ``Org/Name``."""
    for join in ("--", "__"):
        org, sep, rest = name.partition(join)
        if sep and org and rest:
            return f"{org}/{rest}"
    return None


def _is_number(text: str) -> bool:
    whole, dot, frac = text.partition(".")
    return whole.isdigit() and (not dot or frac.isdigit())


def _names_a_model(name: str) -> bool:
    """A folder names a model when it says an organisation (``Org--Name``) or a size: a
    token ``8B``/``0.6b``, ``8x7B`` or ``135M`` between dashes, underscores or slashes."""
    org, sep, rest = name.partition("--")
    if sep and org and rest:
        return True
    for token in name.replace("_", "-").split("-"):
        low = token.lower()
        if low.endswith("b") and (_is_number(low[:-1]) or _experts(low[:-1])):
            return True
        if low.endswith("m") and _is_number(low[:-1]) and 2 <= len(low[:-1].split(".")[0]) <= 4:
            return True
    return False


def _experts(text: str) -> bool:
    count, x, size = text.partition("x")
    return bool(x) and count.isdigit() and _is_number(size)


@dataclass
class Expected:
    refused: str | None = None
    tasks: dict[str, tuple[int, int]] = field(default_factory=dict)  # task -> (n, passes)
    rows: int = 0
    ungraded: int = 0
    errors: int = 0
    request_errors: int = 0  # of the errors, requests that failed at the API
    empty: int = 0
    empty_passes: int = 0
    partial: int = 0
    first_ungraded: int | None = None  # 1-based line
    first_error: int | None = None
    models: dict[str | None, int] = field(default_factory=dict)
    versions: dict[str | None, int] = field(default_factory=dict)
    compared: int = 0
    repeated: int = 0
    per_row_ids: bool = False
    conflict: str | None = None
    retried: int = 0  # earlier attempts of a draw whose retry the rows hold: left out
    retry_lost: int = 0  # attempts whose retry is missing: left out
    repeated_samples: int = 0  # rows repeating a (task, sample index), no attempt column


#: A draw's index within its task, and which attempt a row is (the reader's tables, in
#: order: the first the rows hold values at).
SAMPLE_INDEX_KEYS = (
    *("sample_idx", "sample_index", "sample_id", "sample_num", "sample_no", "sample_number"),
    *("rollout_idx", "rollout_index", "rollout_id", "rollout_num", "draw_idx", "draw_index"),
    *("generation_idx", "generation_index", "gen_idx", "completion_idx", "completion_index"),
)
ATTEMPT_KEYS = (
    *("attempt", "attempt_idx", "attempt_index", "attempt_number", "attempt_no", "attempt_num"),
    *("attempt_id", "try", "try_idx", "try_index", "try_number", "retry", "retry_idx"),
    *("retry_index", "retry_number", "retry_count", "retries", "num_retries", "n_retries"),
    *("is_retry", "retried", "was_retried"),
)
RETRY_OF_KEYS = ("retry_of", "retried_from", "retry_from", "retry_of_id")


def attempt_codes(rows: list[dict[str, Any]], keys: list[str]) -> list[int]:
    """Per row: 1 an earlier attempt of its (task, sample index) whose later attempt the rows
    hold; 3 an attempt standing alone at a value that, where draws were retried, marks only
    replaced attempts, while most lone rows hold a final value (its retry is missing); 2 a
    row repeating an earlier row's (task, sample index) at the same attempt, or with no
    attempt column; else 0. ``keys``: each row's task."""

    def held(key: str) -> bool:
        return any(r.get(key) is not None for r in rows)

    sample = next((k for k in SAMPLE_INDEX_KEYS if held(k)), None)
    if sample is None:
        return [0] * len(rows)
    attempt = next((k for k in (*ATTEMPT_KEYS, *RETRY_OF_KEYS) if held(k)), None)

    def rank(r: dict[str, Any]) -> float:
        value = r.get(attempt) if attempt is not None else None
        if attempt in RETRY_OF_KEYS:
            return float(value is not None and str(value).strip() != "")
        return 0.0 if value is None else float(value)

    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        if r.get(sample) is not None:
            groups[(keys[i], str(r[sample]))].append(i)
    codes = [0] * len(rows)
    if attempt is None:
        for members in groups.values():
            for i in members[1:]:
                codes[i] = 2
        return codes
    replaced: set[float] = set()
    final: set[float] = set()
    lone: list[int] = []
    for members in groups.values():
        last = max(rank(rows[i]) for i in members)
        at_last = [i for i in members if rank(rows[i]) == last]
        for i in members:
            if rank(rows[i]) < last:
                codes[i] = 1
                replaced.add(rank(rows[i]))
        for i in at_last[1:]:
            codes[i] = 2
        if len(members) > 1:
            final.add(last)
        else:
            lone.append(members[0])
    lost = [i for i in lone if rank(rows[i]) in replaced - final]
    if len(lost) < len(lone) - len(lost):
        for i in lost:
            codes[i] = 3
    return codes


#: Where a row keeps its reply: the first of these any row has; else the first of
#: ``TEXT_REPLY_KEYS`` whose every value is text (or null) and, in JSON Lines, one at least
#: text: a key null on every row there could as well hold an API's object (a ``response``),
#: where a Parquet column typed as text is a text field whatever it holds.
REPLY_KEYS = ("completion", "generation", "predicted_text")
TEXT_REPLY_KEYS = (
    "response",
    "output",
    "output_response",
    "model_output",
    "generated_text",
    "prediction",
)


def _replies_as_completion(rows: list[dict[str, Any]], typed: bool) -> list[dict[str, Any]]:
    """The rows with their reply moved to ``completion``, wherever the file keeps it
    (``typed``: a Parquet file, whose columns' types say what they hold)."""
    key = next((k for k in REPLY_KEYS if any(k in r for r in rows)), None)
    if key is None:
        key = next(
            (
                k
                for k in TEXT_REPLY_KEYS
                if any(k in r for r in rows)
                and (typed or any(isinstance(r.get(k), str) for r in rows))
                and all(isinstance(r.get(k), str) or r.get(k) is None for r in rows)
            ),
            None,
        )
    if key is None or key == "completion":
        return rows
    return [
        {**{c: v for c, v in r.items() if c != key}, "completion": r[key]} if key in r else r
        for r in rows
    ]


def _per_row_ids(rows: list[dict[str, Any]]) -> bool:
    """Ids one per row while prompts repeat: tasks keyed by the prompt."""
    per_id: dict[str, int] = defaultdict(int)
    for r in rows:
        per_id[str(r["task_id"])] += 1
    with_prompt = [r["prompt"] for r in rows if r.get("prompt") is not None]
    return bool(
        with_prompt
        and len(per_id) >= 2
        and max(per_id.values()) == 1
        and len(set(with_prompt)) < len(with_prompt)
    )


def expected(
    rows: list[dict[str, Any]],
    threshold: float | None = None,
    missing: str = "skip",
    kind: str = "parquet",
) -> Expected:
    """What reading ``rows`` (one file of ``kind``, in order) should find, or which refusal
    it meets."""
    rows = _replies_as_completion(rows, typed=kind == "parquet")
    out = Expected(rows=len(rows))
    states = [reply(r) for r in rows]
    grades = [graded(r.get("reward")) for r in rows]
    out.per_row_ids = _per_row_ids(rows)
    keys = [r["prompt"] if out.per_row_ids else str(r["task_id"]) for r in rows]
    cut = 1.0 if threshold is None else threshold
    codes = attempt_codes(rows, [str(r.get("task_id")) for r in rows])
    out.retried, out.retry_lost = codes.count(1), codes.count(3)
    out.repeated_samples = codes.count(2)
    absent, cut_short = harness_errors(rows, states, keys, cut, missing)
    for i in absent | cut_short:
        states[i] = "error"
    out.request_errors = len(cut_short)
    for i, (state, grade) in enumerate(zip(states, grades, strict=True)):
        if codes[i] in (1, 3):  # the harness's attempt: left out, never an error
            states[i] = "left"
            continue
        if state == "error":
            out.errors += 1
            out.first_error = out.first_error or i + 1
        elif not grade:
            out.ungraded += 1
            out.first_ungraded = out.first_ungraded or i + 1
        if state == "empty":
            out.empty += 1
            reward = rows[i].get("reward")
            out.empty_passes += grade and reward >= cut - TOLERANCE
    if out.errors and out.errors >= 0.5 * len(rows):
        out.refused = "errors"
        return out
    counted_graded = [
        r["reward"]
        for r, s, g in zip(rows, states, grades, strict=True)
        if s not in ("error", "left") and g
    ]
    if not counted_graded:
        out.refused = "ungraded"
        return out
    # ids against prompts
    prompts: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        if r.get("prompt") is not None:
            prompts[str(r["task_id"])].add(r["prompt"])
    conflicts = sorted(t for t, ps in prompts.items() if len(ps) > 1)
    texts = [r.get("completion") for r in rows if "completion" in r]
    credited = any(isinstance(r.get("reward"), (int, float)) and r["reward"] > 0 for r in rows)
    # every reply empty: nothing generated; a reply field null on every row is so too, unless
    # a row was given credit (a file that grades rows it kept no reply of)
    if (
        texts
        and all(t is None or holds_nothing(t) for t in texts)
        and (any(t is not None for t in texts) or not credited)
    ):
        out.refused = "nothing"
        return out
    outside = min(counted_graded) < -1e-12 or max(counted_graded) > 1 + 1e-12
    if threshold is None and outside:
        out.refused = "unbounded"
        return out
    out.partial = sum(1 for x in counted_graded if TOLERANCE < x < 1 - TOLERANCE)
    if threshold is None and out.partial >= 0.1 * len(counted_graded):
        out.refused = "partial"
        return out
    if conflicts:  # after the grades, which say more
        out.refused, out.conflict = "conflict", conflicts[0]
        return out
    draws: dict[str, list[str | None]] = defaultdict(list)
    for r, s, g in zip(rows, states, grades, strict=True):
        if s in ("error", "left") or (not g and missing != "fail"):
            continue
        task = r["prompt"] if out.per_row_ids else str(r["task_id"])
        n, p = out.tasks.get(task, (0, 0))
        passed = g and r["reward"] >= cut - TOLERANCE
        out.tasks[task] = (n + 1, p + int(passed))
        model = model_name(r.get("model"))
        version = r.get("policy_version")
        if model is not None and "@" in model:
            model, _, tail = model.partition("@")
            version = version if version is not None else f"{model}@{tail}"
        out.models[model] = out.models.get(model, 0) + 1
        key = None if version is None else str(version)
        out.versions[key] = out.versions.get(key, 0) + 1
        draws[task].append(r.get("completion"))
    ones: list[str] = []  # the one reply of each compared task whose replies are all one
    given: dict[str, set[str]] = defaultdict(set)  # each reply's tasks
    for task, replies in draws.items():
        for text in replies:
            if text is not None:
                given[text.strip()].add(task)
        if len(replies) >= 2 and all(t is not None for t in replies):
            out.compared += 1
            said = {t.strip() for t in replies if t is not None}
            if len(said) == 1:
                ones.append(said.pop())
    # a task's one reply that another task gives too agrees by chance where a tenth of the
    # compared tasks or more hold several replies (the sampler samples)
    sampled = out.compared - len(ones) >= 0.1 * out.compared
    out.repeated = sum(1 for one in ones if not (sampled and len(given[one]) >= 2))
    return out
