"""Replies piled at a file's longest token count where no cap is recorded (DESIGN section 2,
"Data quality first"; :attr:`whilecli.io.facts.Facts.cut_at_longest`), against a slow
reading of the rows.

The generator writes one or two files of rows with token counts drawn from a few values
(so a pile forms as often as not), a flag (true, false, null or absent), a finish reason on
some files' rows, and ungraded rows; the slow reference below finds, per file, the graded
rows at its longest count, the graded rows in the tenth of counts below it, and counts those
at the longest not read as cut where they pile, in files that read no row as cut.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.io.read import read_rows

ABSENT = object()


@st.composite
def files(draw: st.DrawFn) -> list[list[dict[str, Any]]]:
    out = []
    for _ in range(draw(st.integers(1, 2))):
        rows = []
        with_reason = draw(st.booleans())
        cuts = draw(st.booleans())  # whether any row may be flagged cut
        flags = [False, False, None, ABSENT, *([True] if cuts else [])]
        reasons = ["stop", "stop", None, *(["length"] if cuts else [])]
        pile = [30, 50, 95, 100, 100]
        counts = draw(st.sampled_from([[30, 61, 63, 64, 91, 95, 100], pile, pile]))
        for t in range(draw(st.integers(1, 10))):
            for _ in range(draw(st.integers(1, 4))):
                row: dict[str, Any] = {
                    "task_id": f"t{t}",
                    "reward": draw(st.sampled_from([0.0, 1.0, 1.0, None])),
                    "completion_tokens": draw(st.sampled_from(counts)),
                }
                flag = draw(st.sampled_from(flags))
                if flag is not ABSENT:
                    row["truncated"] = flag
                if with_reason:
                    row["finish_reason"] = draw(st.sampled_from(reasons))
                rows.append(row)
        if all(r["reward"] is None for r in rows):
            rows[0]["reward"] = 0.0
        out.append(rows)
    return out


def _read_as_cut(row: dict[str, Any]) -> bool:
    return row.get("truncated") is True or row.get("finish_reason") == "length"


def slow_longest(file_rows: list[list[dict[str, Any]]]) -> tuple[int, int, float | None]:
    """(rows at the longest count not read as cut, those that pass, the longest count) over
    files that read no row as cut and whose graded rows pile at their longest count: five or
    more, in three tasks or more, at 64 tokens or more, at least five times one more than
    the rows per count in the tenth of counts below it."""
    rows = passes = 0
    longest_seen: float | None = None
    for one in file_rows:
        if any(_read_as_cut(r) for r in one):
            continue
        graded = [r for r in one if r["reward"] is not None]
        longest = max(r["completion_tokens"] for r in graded)
        at = [r for r in graded if r["completion_tokens"] == longest]
        below = [r for r in graded if 0.9 * longest <= r["completion_tokens"] < longest]
        tasks = {r["task_id"] for r in at}
        per_count = len(below) / max(1.0, 0.1 * longest)
        if longest < 64 or len(at) < 5 or len(tasks) < 3 or len(at) < 5 * (per_count + 1):
            continue
        rows += len(at)
        passes += sum(r["reward"] == 1.0 for r in at)
        longest_seen = max(longest_seen or 0.0, float(longest))
    return rows, passes, longest_seen


@settings(max_examples=80, deadline=None)
@given(files())
def test_rows_at_the_longest_count_match_the_slow_reading(
    tmp_path_factory: pytest.TempPathFactory, file_rows: list[list[dict[str, Any]]]
) -> None:
    folder = tmp_path_factory.mktemp("longest")
    paths = []
    for i, rows in enumerate(file_rows):
        path = folder / f"part{i}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        paths.append(str(path))
    got = read_rows(paths, pool=True).facts
    want = slow_longest(file_rows)
    assert (got.cut_at_longest, got.cut_at_longest_passes) == want[:2]
    if want[0]:
        assert got.longest_tokens == want[2]
        assert got.longest_field == "completion_tokens"
    assert (got.first_cut_at_longest is None) == (got.cut_at_longest == 0)
