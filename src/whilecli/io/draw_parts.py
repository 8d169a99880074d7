"""The parts of a task id or a prompt that are one draw's own, not its task's: a uuid, a
timestamp, a run of eight hex digits or more (a request's hash), a token of sixteen letters
and digits or more (a request's id). Masked, the ids of one prompt's draws (``t12-<uuid>``)
or its prompts (``[request 9f3a…] Solve …``) read as one; the route and the reader both
mask them with :func:`masked`, one rule. The order of a prompt's words, where a harness
shuffles a question's options per draw, is a draw's own too: :func:`reordered`.
"""

from __future__ import annotations

import polars as pl

#: The separators of an id's parts (``gsm8k/12/sample_3``, ``t12-s3``, ``item4#1``), and of a
#: prompt's words (blanks, brackets, quotes, a JSON text's escapes).
SEP, PART = r"[\s_\-.:#/\\\[\](){}<>\"',;=|]", r"[^\s_\-.:#/\\\[\](){}<>\"',;=|]"
#: A uuid, in any case.
DRAW_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
#: A date and time (ISO 8601, ``2026-11-03T12:31:02.5Z``, or with a space).
DRAW_TIME = (
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?"
    r"(?:Z|[+-][0-9]{2}:?[0-9]{2})?"
)
#: A part between separators (or the ends) of eight hex digits or more, or sixteen letters
#: and digits or more; the separators are kept (groups 1 and 2).
DRAW_TOKEN = rf"(^|{SEP})(?:[0-9a-fA-F]{{8,}}|[0-9A-Za-z]{{16,}})({SEP}|$)"
#: What a masked part reads as.
MASK = "#"


def masked(text: pl.Expr) -> pl.Expr:
    """``text`` with each draw's own part (:data:`DRAW_UUID`, :data:`DRAW_TIME`,
    :data:`DRAW_TOKEN`) replaced by :data:`MASK`."""
    return (
        text.str.replace_all(DRAW_UUID, MASK)
        .str.replace_all(DRAW_TIME, MASK)
        .str.replace_all(DRAW_TOKEN, f"${{1}}{MASK}${{2}}")
    )


#: What each word of a prompt is trimmed of before the words are sorted (:func:`reordered`):
#: the quotes, brackets and commas a chat list's JSON text puts around its first and last.
WORD_TRIM = '"{}[],'


def reordered(text: pl.Expr) -> pl.Expr:
    """``text`` as its words in sorted order, each trimmed (:data:`WORD_TRIM`): a question
    whose options a harness shuffled per draw (``(A) red (B) blue`` against ``(A) blue (B)
    red``, on one line or one option a line) reads as one. A JSON text's escaped line end or
    tab (``\\n``, ``\\t``) parts words as a blank does."""
    return (
        text.str.replace_all(r"\\[nrt]|\s+", " ")
        .str.strip_chars(" ")
        .str.split(" ")
        .list.eval(pl.element().str.strip_chars(WORD_TRIM))
        .list.sort()
        .list.join(" ")
    )
