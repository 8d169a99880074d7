"""The distinct task ids a read checks are first narrowed to those that could be refused
(:func:`whilecli.io.read.maybe_bad_id`): no id the slow, per-id rule refuses may be left out."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError
from whilecli.io.locate import MISSING_TEXTS, id_problem, no_id
from whilecli.io.read import maybe_bad_id, read_rows
from whilecli.route.pool import Counts

#: Letters whose case changes their UTF-8 length, or that case-fold to ASCII ones.
_ODD = "İıſKÅẞσςΣ\u0130\u212a"


def _variants(word: str) -> st.SearchStrategy[str]:
    """``word`` in any mix of cases, with odd letters and NULs around it."""
    cased = st.tuples(*(st.sampled_from([c, c.upper()]) for c in word)).map("".join)
    pad = st.text(alphabet=st.sampled_from([" ", "\x00", *_ODD]), max_size=2)
    return st.tuples(pad, cased, pad).map("".join)


ids = st.one_of(
    st.text(max_size=14),
    st.text(alphabet=st.sampled_from(["n", "N", "u", "l", "a", "\x00", *_ODD]), max_size=10),
    st.sampled_from(MISSING_TEXTS).flatmap(_variants),
)


@settings(max_examples=300)
@given(st.lists(st.one_of(st.none(), ids), max_size=30))
def test_every_refused_id_is_kept(texts: list[str | None]) -> None:
    frame = pl.DataFrame({"task_id": texts}, schema={"task_id": pl.String})
    flags = frame.select(bad=no_id().fill_null(True), maybe=maybe_bad_id()).rows()
    for text, (bad, maybe) in zip(texts, flags, strict=True):
        slow = id_problem(text, "here") is not None  # the per-id rule, in Python
        assert bad == slow, text
        if slow:
            assert maybe, f"{text!r} is refused but was not looked at"


@pytest.mark.parametrize("missing", ["NULL", "None", "nan", "UNDEFINED", "a\x00b" * 9])
def test_a_refused_id_among_many_long_ones_is_refused(tmp_path: Path, missing: str) -> None:
    rows = 4000
    frame = pl.DataFrame(
        {
            "task_id": [f"a-long-task-identifier-{i // 4}" for i in range(rows - 1)] + [missing],
            "reward": [float(i % 2) for i in range(rows)],
        }
    )
    path = tmp_path / "rows.parquet"
    frame.write_parquet(path)
    for aggregate in (None, Counts(located=False)):  # ids checked per row, or per distinct id
        with pytest.raises(InputError):
            read_rows([str(path)], aggregate=aggregate)
