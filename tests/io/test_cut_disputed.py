"""A truncation flag that disputes the token count (DESIGN section 1, ``truncated``; section 2,
"Data quality first"): a harness that writes ``truncated: false`` on every row beside replies
whose token count reached ``max_tokens`` is believed, row by row, yet the read counts those
rows, and where some of them pass the verdict rests on the flag (were they cut, a cut-off
reply passes: fix the reward), so it is provisional.

The generator writes files of rows with a flag (true, false, null or absent), a finish reason
on some rows (``stop`` at the cap is a reply whose end token fell on it), and token counts
at, under and past the cap; the slow reference below counts, per file, the graded rows the
flag reads as not cut whose count reached the cap and no reason speaks, in files where no
row reads as cut. The route's side: pools of known truth with the flag written false on
every row.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rows_files import finding_kinds, route_rows, write_rows
from whilecli.io.read import read_rows

CAP = 64
MODEL = "Qwen/Qwen3-8B"
ABSENT = object()


@st.composite
def files(draw: st.DrawFn) -> list[list[dict[str, Any]]]:
    out = []
    for _ in range(draw(st.integers(1, 2))):
        rows = []
        with_reason = draw(st.booleans())
        for t in range(draw(st.integers(1, 4))):
            for _ in range(draw(st.integers(1, 4))):
                row: dict[str, Any] = {
                    "task_id": f"t{t}",
                    "reward": draw(st.sampled_from([0.0, 1.0, None])),
                    "completion_tokens": draw(st.sampled_from([3, CAP - 1, CAP, CAP, CAP + 1])),
                    "max_tokens": CAP,
                }
                flag = draw(st.sampled_from([False, False, False, True, None, ABSENT]))
                if flag is not ABSENT:
                    row["truncated"] = flag
                if with_reason:
                    row["finish_reason"] = draw(st.sampled_from(["stop", "length", None]))
                rows.append(row)
        if all(r["reward"] is None for r in rows):
            rows[0]["reward"] = 0.0
        out.append(rows)
    return out


def _read_as_cut(row: dict[str, Any], paired: bool) -> bool:
    """The reader's rule for one row: a flag or reason saying cut; else, where none speaks,
    the count at its cap (where the file's counts and cap pair)."""
    flag, reason = row.get("truncated"), row.get("finish_reason")
    if flag is True or reason == "length":
        return True
    if flag is False or reason is not None:
        return False
    return paired and row["completion_tokens"] == CAP


def _disputed(row: dict[str, Any]) -> bool:
    return (
        row.get("truncated") is False
        and row.get("finish_reason") is None
        and row["completion_tokens"] == CAP
        and row["reward"] is not None
    )


def slow_disputed(file_rows: list[list[dict[str, Any]]]) -> tuple[int, int]:
    """(disputed rows, those that pass) over files that read no row as cut, whose counts
    and cap pair (fewer than two counts past the cap, or not every row's of a one-row file:
    else the cap is another budget's; one such row is that row's oddity)."""
    rows = passes = 0
    for one in file_rows:
        past = sum(r["completion_tokens"] > CAP for r in one)
        paired = not past or past < min(2, len(one))
        if not paired or any(_read_as_cut(r, paired) for r in one):
            continue
        for r in one:
            if _disputed(r):
                rows += 1
                passes += r["reward"] == 1.0
    return rows, passes


@settings(max_examples=60, deadline=None)
@given(files())
def test_disputed_rows_match_the_slow_reading(
    tmp_path_factory: pytest.TempPathFactory, file_rows: list[list[dict[str, Any]]]
) -> None:
    folder = tmp_path_factory.mktemp("disputed")
    paths = []
    for i, rows in enumerate(file_rows):
        path = folder / f"part{i}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        paths.append(str(path))
    got = read_rows(paths, pool=True).facts
    assert (got.cut_disputed, got.cut_disputed_passes) == slow_disputed(file_rows)
    assert (got.first_cut_disputed is None) == (got.cut_disputed == 0)


def pool(seed: int, cut_passes: bool, flags: str, k: int = 8) -> list[dict[str, Any]]:
    """600 tasks of k draws at a mid-band rate each; a twentieth of the replies run to the
    cap (a third of those pass where ``cut_passes``). ``flags``: ``false`` on every row
    (the harness never flags a cut), ``kept`` (true on the cut rows), or ``reason``
    (false on every row beside a finish reason)."""
    rnd = random.Random(seed)
    rows = []
    for t in range(600):
        p = rnd.uniform(0.2, 0.8)
        for j in range(k):
            cut = rnd.random() < 0.05
            passed = rnd.random() < (1 / 3 if cut_passes else 0.0) if cut else rnd.random() < p
            row = {
                "task_id": f"t{t:04d}",
                "reward": float(passed),
                "completion_tokens": 4096 if cut else rnd.randint(50, 4000),
                "max_tokens": 4096,
                "truncated": cut and flags == "kept",
                "completion": f"reply {j} to {t}: {rnd.random():.8f}",
                "model": MODEL,
            }
            if flags == "reason":
                row["finish_reason"] = "length" if cut else "stop"
            rows.append(row)
    return rows


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@pytest.mark.parametrize("seed", [3, 11])
def test_false_on_every_row_beside_passes_at_the_cap_is_provisional(
    tmp_path: Path, kind: str, seed: int
) -> None:
    got = route_rows(write_rows(tmp_path, pool(seed, True, "false"), kind), MODEL)
    assert got.route == "grpo" and got.provisional
    assert "cut_disputed" in finding_kinds(got)
    kept = route_rows(write_rows(tmp_path, pool(seed, True, "kept"), kind), MODEL)
    assert kept.route == "fix-reward"  # where the harness flags its cuts, they are cuts
    assert not {"cut_disputed", "cut_disputed_failing"} & set(finding_kinds(kept))


@pytest.mark.parametrize("seed", [3, 11])
def test_disputed_rows_that_all_fail_are_listed_and_leave_the_verdict_firm(
    tmp_path: Path, seed: int
) -> None:
    got = route_rows(write_rows(tmp_path, pool(seed, False, "false"), "jsonl"), MODEL)
    assert (got.route, got.provisional) == ("grpo", False)
    assert "cut_disputed_failing" in finding_kinds(got)
    assert "cut_disputed" not in finding_kinds(got)


def test_a_finish_reason_settles_the_count(tmp_path: Path) -> None:
    """A reason beside the flag says what the count cannot: ``stop`` at the cap ended on its
    own, ``length`` was cut."""
    got = route_rows(write_rows(tmp_path, pool(5, True, "reason"), "jsonl"), MODEL)
    assert got.route == "fix-reward"
    assert not {"cut_disputed", "cut_disputed_failing"} & set(finding_kinds(got))
    rows = pool(5, False, "false")
    for row in rows:
        row["finish_reason"] = "stop"  # every reply ended on its own, one at the cap among them
    got = route_rows(write_rows(tmp_path, rows, "jsonl"), MODEL)
    assert (got.route, got.provisional) == ("grpo", False)
    assert not {"cut_disputed", "cut_disputed_failing"} & set(finding_kinds(got))


@pytest.mark.parametrize("place", ["config.max_tokens", "metadata.max_tokens", "max_tokens"])
def test_a_cap_the_counts_run_past_is_no_cap_of_the_reply(tmp_path: Path, place: str) -> None:
    """A cap that many replies' counts run past (a judge's budget, one turn's of several) is
    not the reply's: the rows at it are neither cut nor disputed."""
    rnd = random.Random(9)
    rows = []
    for t in range(400):
        p = rnd.uniform(0.2, 0.8)
        for j in range(8):
            row: dict[str, Any] = {"task_id": f"t{t}", "reward": float(rnd.random() < p),
                                   "completion_tokens": rnd.choice([1024, rnd.randint(200, 3000)]),
                                   "truncated": False, "model": MODEL,
                                   "completion": f"{t}.{j}.{rnd.random()}"}  # fmt: skip
            head, _, last = place.rpartition(".")
            (row.setdefault(head, {}) if head else row)[last] = 1024
            rows.append(row)
    got = route_rows(write_rows(tmp_path, rows, "jsonl"), MODEL)
    assert (got.route, got.provisional) == ("grpo", False)
    assert not {"cut_disputed", "cut_disputed_failing"} & set(finding_kinds(got))
