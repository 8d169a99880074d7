"""The reading's cheap forms of two per-row text rules read each text as the plain rule does.

:func:`whilecli.io.facts.named_model` tells a model name from no name by one regular
expression over the text as written (:func:`whilecli.io.facts.word_in`), not by trimming and
lower-casing every row's text; :func:`whilecli.io.plan.maybe_blank` keeps every task id that
:func:`whilecli.io.plan.no_blank` reads otherwise, so a table's ids are trimmed and
lower-cased only where it holds. Both are checked against the plain rule on texts built
from the words, the characters around them and letters that lower-case oddly (the Kelvin
sign lower-cases to ``k``, ``İ`` to two characters).
"""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.io.aliases import PLACEHOLDER_MODELS
from whilecli.io.facts import lower_word, named_model, word_in
from whilecli.io.plan import MISSING_TEXTS, maybe_blank, no_blank
from whilecli.io.words import NO_VALUE

NOT_NAMES = sorted(NO_VALUE | PLACEHOLDER_MODELS)
ODD = ["\u212a", "\u0130", "\u017f", "\u00df", "\u03a3", "\u00e9", "\u00a0", "\u200b", "\x00"]
AROUND = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\u3000", "\u2007", "\u200b", "\ufeff"]
PIECES = [*NOT_NAMES, *MISSING_TEXTS, *ODD, *AROUND, "@", "@v2", "Qwen/Qwen3-8B", "task-1", "x"]


def _cased(draw: st.DrawFn, text: str) -> str:
    return "".join(draw(st.sampled_from([c, c.upper()])) for c in text)


@st.composite
def texts(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(st.sampled_from(PIECES), max_size=4))
    return "".join(_cased(draw, p) for p in pieces)


def _plain_named(raw: pl.Expr) -> pl.Expr:
    name = lower_word(raw.str.splitn("@", 2).struct.field("field_0"))
    return pl.when(~name.is_in(NOT_NAMES)).then(raw)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), texts(), st.text(max_size=6)), min_size=1, max_size=200))
def test_named_model_reads_as_the_plain_rule(values: list[str | None]) -> None:
    frame = pl.DataFrame({"m": values}, schema={"m": pl.String})
    got = frame.select(fast=named_model(pl.col("m")), plain=_plain_named(pl.col("m")))
    assert got["fast"].to_list() == got["plain"].to_list()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), texts(), st.text(max_size=6)), min_size=1, max_size=200))
def test_maybe_blank_keeps_every_id_no_blank_reads_otherwise(values: list[str | None]) -> None:
    task = pl.col("t")
    frame = pl.DataFrame({"t": values}, schema={"t": pl.String})
    got = frame.select(
        otherwise=task.is_not_null() & no_blank(task).ne_missing(task),
        kept=maybe_blank(task).fill_null(False),
    )
    missed = got.filter(pl.col("otherwise") & ~pl.col("kept"))
    assert missed.height == 0, values


def test_word_in_matches_words_around_blanks_and_before_a_mark() -> None:
    values = [None, "", " None ", "NONE@v3", "none\u00a0", "\u212aey", "n/a", "N/A@", "model-x"]
    frame = pl.DataFrame({"m": values}, schema={"m": pl.String})
    got = frame.select(word_in(pl.col("m"), ["none", "n/a", "key", ""], before="@"))
    assert got.to_series().to_list() == [None, True, True, True, False, False, True, True, False]


def test_word_in_takes_only_lower_case_ascii_words() -> None:
    for bad in ("None", "caf\u00e9", "a b"):
        with pytest.raises(ValueError):
            word_in(pl.col("m"), [bad])
