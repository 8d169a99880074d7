"""Lists beside a row's samples that are not one value per sample (DESIGN section 1: one
row per rollout; :mod:`whilecli.io.samples`).

A generator mixes into each per-sample layout of :mod:`test_sample_lists` the lists tools
keep beside the samples that are the row's, not the samples': a client's log of the errors
it retried past (empty on most rows), token counts left empty by a server that reports
none, multiple-choice options (strings or ``{label, text}`` objects, as many as the samples
or not), a code problem's expected test outputs (key order first), the stop token ids under
``stop_reason``, few-shot examples under ``samples``, retrieved passages under
``candidates``. Each such pool must read as the same pool written one row per draw. A row
of one draw (a scalar grade) never takes its reply or finish reason from the first of a list
of earlier drafts or few-shot examples.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_sample_lists import MAPS, _read, one_row_per_draw, one_row_per_prompt, simulate

from rows_files import write_rows

#: Extra lists the generator may mix in, and the layouts already holding that name.
EXTRAS: dict[str, tuple[str, ...]] = {
    "retry_log": ("choices", "outputs", "plural", "flags", "openr1"),  # errors
    "empty_counts": (),
    "option_texts": ("choices",),
    "option_objects": ("choices",),
    "test_outputs": ("outputs",),
    "stop_tokens": (),
    "fewshot": (),
    "passages": (),
}
LAYOUTS = ["choices", "outputs", "plural", "objects", "flags", "openr1"]


def _extra(name: str, rnd: random.Random, k: int, n: int) -> dict[str, Any]:
    """The list ``name`` of one row, ``n`` long where its length is free (never ``k`` for a
    list of texts or objects that could be read as replies)."""
    if name == "retry_log":
        return {"errors": ["RateLimitError: 429, retried after 2s"] * (rnd.random() < 0.3)}
    if name == "empty_counts":
        return {"completion_tokens": [rnd.randint(80, 400) for _ in range(k)] * (n % 2)}
    if name == "option_texts":
        return {"choices": [chr(65 + j) for j in range(n)]}
    if name == "option_objects":
        return {"choices": [{"label": chr(65 + j), "text": f"option {j}"} for j in range(n)]}
    if name == "test_outputs":
        return {"outputs": [str(7 * j) for j in range(n if n != k else k + 1)]}
    if name == "stop_tokens":
        return {"stop_reason": [151643, 151645][: 1 + n % 2]}
    if name == "fewshot":
        return {"samples": [{"text": f"Example: {j}+{j} = {2 * j}"} for j in range(1 + n % 3)]}
    assert name == "passages"
    return {"candidates": [{"title": f"doc {j}", "text": f"passage {j}"} for j in range(n)]}


def _folder(tmp: Path, name: str) -> Path:
    """A new folder ``name`` under ``tmp``."""
    (tmp / name).mkdir()
    return tmp / name


def _mixed(
    rows: list[dict[str, Any]], extras: list[str], seed: int, k: int, first: bool
) -> list[dict[str, Any]]:
    """``rows`` with the lists of ``extras`` added, of lengths drawn per row (before the
    row's own keys where ``first``)."""
    rnd = random.Random(seed)
    out = []
    for row in rows:
        added: dict[str, Any] = {}
        for name in extras:
            added |= _extra(name, rnd, k, rnd.choice([1, 2, 3, k, 5, 6]))
        out.append(added | row if first else row | added)
    return out


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    layout=st.sampled_from(LAYOUTS),
    picked=st.sets(st.sampled_from(sorted(EXTRAS)), min_size=1, max_size=3),
    seed=st.integers(0, 10_000),
    first=st.booleans(),
)
def test_lists_beside_the_samples_are_the_rows(
    tmp_path_factory: Any, layout: str, picked: set[str], seed: int, first: bool
) -> None:
    """A row of samples with the row's own lists beside them reads as one row per draw."""
    extras = [e for e in sorted(picked) if layout not in EXTRAS[e]]
    k = 4
    pool = simulate(seed, "cut-passes", tasks=16, k=k)
    tmp = tmp_path_factory.mktemp("beside")
    want = _read(write_rows(_folder(tmp, "draws"), one_row_per_draw(pool, False), "jsonl"), {})
    rows = _mixed(one_row_per_prompt(pool, layout, False), extras, seed, k, first)
    got = _read(write_rows(_folder(tmp, "lists"), rows, "jsonl"), MAPS.get(layout, {}))
    assert got == want, (layout, extras, first)


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    holder=st.sampled_from(["generations", "samples", "completions", "responses"]),
    reason=st.sampled_from(["length", "stop", None]),
    count=st.integers(1, 3),
    seed=st.integers(0, 10_000),
)
def test_a_draw_takes_nothing_from_a_list_of_other_drafts(
    tmp_path_factory: Any, holder: str, reason: str | None, count: int, seed: int
) -> None:
    """One row per draw with a list of earlier drafts or few-shot examples beside its own
    reply and grade: the draws' reply and finish reason are their own."""
    pool = simulate(seed, "cut-passes", tasks=16, k=4)
    rows = one_row_per_draw(pool, False)
    tmp = tmp_path_factory.mktemp("drafts")
    want = _read(write_rows(_folder(tmp, "plain"), rows, "jsonl"), {})
    mark = {"finish_reason": reason} if reason else {}
    drafts = [{"text": f"draft {j}"} | mark for j in range(count)]
    mixed = [r | {holder: drafts} for r in rows]
    got = _read(write_rows(_folder(tmp, "mixed"), mixed, "jsonl"), {})
    assert got == want, (holder, reason)
    alone = [{"model_answer": r.pop("completion"), **r} for r in rows]
    want = _read(write_rows(_folder(tmp, "alone"), alone, "jsonl"), {})
    unnamed = [r | {holder: drafts} for r in alone]
    assert _read(write_rows(_folder(tmp, "unnamed"), unnamed, "jsonl"), {}) == want
