"""Whether a row records greedy decoding (DESIGN section 1, "identical draws"): every place
and spelling a row records its decoding in, read one way for a whole file (:func:`frame_greedy`,
polars) and for the rows a plan looks at (:func:`row_decoding`, Python), so the draws' key and
the band's warning never disagree on what a row says.

A row says it decoded greedily by a ``temperature`` at most vLLM's ``_SAMPLING_EPS``
(:data:`~whilecli.io.aliases.GREEDY_TEMPERATURE`), a ``top_k`` of 1 under a sampler's object,
a ``do_sample`` false, a ``greedy`` true, or a decoding strategy named ``greedy`` (``beam``:
one reply per prompt too), numbers and flags written as text alike (``"0"``, ``"False"``).
It says it sampled by a temperature above that, a ``do_sample`` true, a ``greedy`` false or a
strategy named ``sample``. A row that says both is no greedy row (a judge's flat
``temperature: 0`` beside ``sampling_params.temperature: 1.0``).

A row's extras (``metadata``, ``info``, ``extra_info``: :data:`GREEDY_EXTRA_PLACES`) are read
too, but not an object that names a judge or a grader beside the setting
(``metadata: {judge_model: gpt-4o, temperature: 0}``: the judge's temperature). Read wrongly
there, a setting costs a hedge (the band is "not measured"); unread, greedy draws that
differ by a server's nondeterminism read as a sampler's band, firm.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

from whilecli.io.aliases import (
    FLAG_FALSE,
    FLAG_TRUE,
    GREEDY_TEMPERATURE,
    SAMPLING_PLACES,
    word,
)
from whilecli.io.shape import NUMBER, Leaves, Shape, split_path
from whilecli.io.words import NUMBER_TEXT

Kind = Literal["temperature", "top_k", "do_sample", "greedy", "strategy"]

#: A row's extras, read after :data:`~whilecli.io.aliases.SAMPLING_PLACES` for its decoding
#: only, where the object names no judge (:data:`_JUDGE_KEY`).
GREEDY_EXTRA_PLACES: tuple[str, ...] = (
    *("metadata.", "info.", "extra_info.", "extras.", "meta.", "params.", "inference_params."),
    *("sampling.", "generation.", "decoding.", "metadata.sampling_params."),
)
_PLACES: tuple[str, ...] = (*SAMPLING_PLACES, *GREEDY_EXTRA_PLACES)
#: A sampler's own objects (``sampling_params.``): never a judge's.
_SAMPLERS: tuple[str, ...] = tuple(p for p in SAMPLING_PLACES if p)
#: Each setting's names, in every place (``top_k`` under a sampler's object only: a flat or a
#: ``params`` ``top_k`` is a retrieval's depth as often).
SETTING_NAMES: dict[Kind, tuple[str, ...]] = {
    "temperature": ("temperature",),
    "top_k": ("top_k",),
    "do_sample": ("do_sample",),
    "greedy": ("greedy", "is_greedy", "greedy_decoding", "use_greedy"),
    "strategy": (
        *("decoding", "decoding_strategy", "decode_strategy", "decoding_method"),
        *("sampling_strategy", "sampling_method", "generation_strategy"),
    ),
}
#: A decoding strategy's name that draws one reply per prompt, and one that samples.
GREEDY_WORDS = frozenset(
    {"greedy", "greedy_search", "greedy-search", "greedy search", "argmax", "beam", "beam_search"}
    | {"beam-search", "beam search", "deterministic"}
)
SAMPLED_WORDS = frozenset(
    {"sample", "sampled", "sampling", "multinomial", "nucleus", "top_p", "top-p", "top_k"}
    | {"top-k", "random", "stochastic", "ancestral", "min_p", "min-p"}
)
#: A key that says its object holds a judge's or a grader's settings.
_JUDGE_KEY = re.compile(r"(?i)judge|grader|evaluator|annotator|scorer|critic|reward_model|rater")
_NUMBER = re.compile(NUMBER_TEXT)


@dataclass(frozen=True)
class Setting:
    """One place the rows record their decoding in, and how its values are written there."""

    alias: str
    kind: Kind
    text: bool  # written as text ("0", "False", "greedy")


def aliases() -> tuple[str, ...]:
    """Every place a row's decoding is looked for: what a plan reads and samples."""
    return tuple(alias for kind in SETTING_NAMES for alias in _aliases(kind))


def _aliases(kind: Kind) -> list[str]:
    places = _SAMPLERS if kind == "top_k" else _PLACES
    return [f"{place}{name}" for place in places for name in SETTING_NAMES[kind]]


def settings(shape: Shape, within: Sequence[str] | None = None) -> list[Setting]:
    """The places ``shape`` holds a decoding setting in, each readable on every row (all of one
    kind of value, a number or a flag or their text; a strategy as text), outside a judge's
    object. ``within``: the paths a plan can read whole on every row (every step above an
    object), None for any."""
    found: list[Setting] = []
    for kind in SETTING_NAMES:
        for alias in _aliases(kind):
            if within is not None and alias not in within:
                continue
            kinds = shape.kinds_at(alias) - {"null"}
            if not kinds or _judges(shape, alias):
                continue
            text = kinds == {"string"}
            value_kinds = {"bool"} if kind in ("do_sample", "greedy") else NUMBER
            if kind == "strategy" and text or kind != "strategy" and (text or kinds <= value_kinds):
                found.append(Setting(alias, kind, text))
    return found


def _judges(shape: Shape, alias: str) -> bool:
    """Whether the object holding ``alias`` (not the row itself) names a judge or a grader."""
    path = split_path(alias)
    if len(path) < 2 or alias.startswith(_SAMPLERS):
        return False
    node = shape.get(path[:-1])
    return node is not None and any(_JUDGE_KEY.search(key) for key in node.children)


def row_decoding(
    found: Sequence[Setting], row: Mapping[str, object]
) -> tuple[bool, bool, str | None]:
    """What one row (a dict, as read) records of its decoding: whether a place says greedy,
    whether a place says it sampled, and the first place that says either (greedy's first)."""
    said, sampled, where, sampled_at = False, False, None, None
    for setting in found:
        value = _at(row, setting.alias)
        greedy, sample = _value_says(setting.kind, value)
        said, sampled = said or greedy, sampled or sample
        if greedy and where is None:
            where = setting.alias
        if sample and sampled_at is None:
            sampled_at = setting.alias
    return said, sampled, where if said and not sampled else sampled_at if sampled else where


def _value_says(kind: Kind, value: object) -> tuple[bool, bool]:
    """What one value says: (greedy, sampled)."""
    if kind == "strategy":
        if not isinstance(value, str):
            return False, False
        text = word(value)
        return text in GREEDY_WORDS, text in SAMPLED_WORDS
    if kind in ("do_sample", "greedy"):
        flag = _flag(value)
        if flag is None:
            return False, False
        return (not flag, flag) if kind == "do_sample" else (flag, not flag)
    number = _number(value)
    if number is None:
        return False, False
    if kind == "top_k":
        return number == 1, False
    return 0 <= number <= GREEDY_TEMPERATURE, number > GREEDY_TEMPERATURE


def _flag(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = word(value)
        return True if text in FLAG_TRUE else False if text in FLAG_FALSE else None
    return None


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and _NUMBER.match(word(value)):
        value = float(word(value))
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def _at(row: Mapping[str, object], dotted: str) -> object:
    value: object = row
    for key in split_path(dotted):
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def frame_greedy(found: Sequence[Setting], leaves: Leaves) -> pl.Expr | None:
    """True where a row records greedy decoding (:func:`row_decoding`, as an expression over the
    file's rows); null elsewhere. None where ``found`` is empty."""
    said: list[pl.Expr] = []
    sampled: list[pl.Expr] = []
    for setting in found:
        greedy, sample = _expr_says(setting, leaves)
        said.append(greedy.fill_null(False))
        if sample is not None:
            sampled.append(sample.fill_null(False))
    return said_greedy(said, sampled)


def said_greedy(said: Sequence[pl.Expr], sampled: Sequence[pl.Expr]) -> pl.Expr | None:
    """True where any of ``said`` holds and none of ``sampled``; null elsewhere."""
    if not said:
        return None
    greedy = pl.any_horizontal(said)
    if sampled:
        greedy = greedy & ~pl.any_horizontal(sampled)
    return pl.when(greedy).then(pl.lit(True))


def _expr_says(setting: Setting, leaves: Leaves) -> tuple[pl.Expr, pl.Expr | None]:
    if setting.kind == "strategy":
        text = _text(leaves, setting.alias)
        return text.is_in(sorted(GREEDY_WORDS)), text.is_in(sorted(SAMPLED_WORDS))
    if setting.kind in ("do_sample", "greedy"):
        if setting.text:
            text = _text(leaves, setting.alias)
            flag: pl.Expr = (
                pl.when(text.is_in(sorted(FLAG_TRUE)))
                .then(pl.lit(True))
                .when(text.is_in(sorted(FLAG_FALSE)))
                .then(pl.lit(False))
            )
        else:
            flag = leaves.expr(setting.alias, pl.Boolean)
        return (~flag, flag) if setting.kind == "do_sample" else (flag, ~flag)
    if setting.text:
        number = _text(leaves, setting.alias).cast(pl.Float64, strict=False)
    else:
        number = leaves.expr(setting.alias, pl.Float64)
    number = pl.when(number.is_finite()).then(number)
    if setting.kind == "top_k":
        return number == 1, None
    return (number >= 0) & (number <= GREEDY_TEMPERATURE), number > GREEDY_TEMPERATURE


def _text(leaves: Leaves, alias: str) -> pl.Expr:
    """The text at ``alias`` as :func:`~whilecli.io.aliases.word` compares it (ASCII)."""
    return leaves.expr(alias, pl.String).str.strip_chars().str.to_lowercase()
