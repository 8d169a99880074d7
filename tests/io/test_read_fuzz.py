"""Hostile input: every generated file ends in a correct report or a one-line ``WhileError``.

Hypothesis writes JSONL and Parquet with wrong types per field, NaN and ±inf, mixed types in
a column, duplicate keys, truncated files, invalid UTF-8, enormous lines, empty files and
unicode task ids. Every case goes through the whole route: ``read_rows`` must give a frame
in the canonical schema with every task id present and every reward finite, and
``run_route`` on the same input a report that renders in all four formats (text, JSON,
Markdown, GitHub) with no NaN or infinity in a printed number; or the input is refused with
a ``WhileError`` on one line with exit code 2 (naming the file). Any other exception fails.
``OUTCOMES`` counts the cases; the last test checks that at least :data:`MIN_CASES` ran and
that both ends were reached.
"""

from __future__ import annotations

import io
import json
import math
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.errors import WhileError
from whilecli.io.read import read_rows
from whilecli.route import run_route
from whilecli.route.model import CANONICAL_SCHEMA, Rows
from whilecli.route.report import render

OUTCOMES: Counter[str] = Counter()
EXAMPLES = 100
#: The four fuzzers run EXAMPLES cases each; the Parquet one skips the few column sets
#: polars cannot build, so a full run counts at least this many.
MIN_CASES = 350
FORMATS = ("text", "json", "markdown", "github")
#: A non-finite number as the reports print one: Rate.format, a bare value, a JSON constant.
NON_FINITE = re.compile(r"(?<![\w.])[-+]?(nan|inf|infinity)(?![\w])", re.IGNORECASE)
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
)
ANY = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
GOOD_TASK = st.one_of(st.integers(0, 4), st.sampled_from(["a", "é", "日本", "1", "", "\u0000"]))
GOOD_REWARD = st.sampled_from([0, 1, 0.5, 0.25, True, False, 1.0])
BAD_REWARD = st.one_of(
    st.sampled_from([1.5, -1, "1", "x"]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.just(10**400),
    ANY,
)


def mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``good`` nine times in ten, so that whole files of valid rows come up too."""
    return st.integers(0, 9).flatmap(lambda i: bad if i == 0 else good)


TASK = mostly(GOOD_TASK, ANY)
REWARD = mostly(GOOD_REWARD, BAD_REWARD)
NAME = st.text(max_size=6)
EXTRAS: dict[str, st.SearchStrategy[Any]] = {
    "example_id": GOOD_TASK,
    "prompt": st.one_of(NAME, st.lists(st.fixed_dictionaries({"content": NAME}), max_size=2)),
    "score": GOOD_REWARD,
    "correct": st.booleans(),
    "truncated": st.one_of(st.none(), st.booleans()),
    "finish_reason": st.one_of(st.none(), st.sampled_from(["stop", "length"])),
    "model": st.one_of(st.none(), NAME),
    "policy_version": st.one_of(st.none(), st.sampled_from(["m@1", "m@2", "n"])),
    "response": st.fixed_dictionaries({"id": NAME, "incomplete_details": st.none()}),
    "steps": st.lists(st.fixed_dictionaries({"truncated": st.booleans()}), max_size=2),
    "task": NAME,
    "agent_model": NAME,
    "values": st.lists(st.floats(-1, 1), max_size=2),
}
KEYS = sorted(EXTRAS)


@st.composite
def rows(draw: st.DrawFn) -> list[dict[str, Any]]:
    out = []
    for _ in range(draw(st.integers(1, 6))):
        row: dict[str, Any] = {}
        if draw(st.integers(0, 19)) > 0:
            row["task_id"] = draw(TASK)
        if draw(st.integers(0, 19)) > 0:
            row["reward"] = draw(REWARD)
        for key in draw(st.lists(st.sampled_from(KEYS), max_size=2)):
            row[key] = draw(mostly(EXTRAS[key], ANY))
        out.append(row)
    return out


def encode(row: dict[str, Any], duplicate: bool, same: bool = False) -> bytes:
    """One line; ``duplicate``: ``reward`` written again at the end, with 0 (a second value,
    refused) or, ``same``, with the row's own value (read once)."""
    text = json.dumps(row, allow_nan=True, ensure_ascii=False)
    if duplicate and text.endswith("}") and len(text) > 2:
        again = json.dumps(row.get("reward"), allow_nan=True) if same else "0"
        text = text[:-1] + f', "reward": {again}}}'
    return text.encode("utf-8", "surrogatepass")


@st.composite
def jsonl_bytes(draw: st.DrawFn) -> bytes:
    lines = [encode(r, draw(st.integers(0, 9)) == 0) for r in draw(rows())]
    if draw(st.integers(0, 5)) == 0:
        lines.insert(draw(st.integers(0, len(lines))), b"")
    if draw(st.integers(0, 9)) == 0:
        lines.append(b'{"task_id": "big", "reward": 1, "pad": "' + b"x" * 60_000 + b'"}')
    data = b"\n".join(lines) + b"\n"
    mutation = draw(st.integers(0, 11))
    if mutation == 0:
        data = data[: draw(st.integers(0, len(data)))]  # a truncated file
    elif mutation == 1:
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80"])) + data[at:]
    elif mutation == 2:
        data = b""
    return data


def _refused(err: WhileError, name: str) -> None:
    assert "\n" not in str(err) and err.exit_code == 2
    assert str(err).startswith(name) or "--" in str(err), str(err)


def _no_constant(token: str) -> float:
    raise AssertionError(f"the JSON report holds {token}")


def _printed_numbers_finite(report: str, fmt: str, names: set[str]) -> None:
    """No NaN or infinity printed; ``names`` (task ids, models: free text from the input)
    are cut out first, since a model may be called "nan"."""
    if fmt == "json":
        json.loads(report, parse_constant=_no_constant)
        return
    for name in sorted(names, key=len, reverse=True):
        if name:
            report = report.replace(name, " ")
    assert NON_FINITE.search(report) is None, NON_FINITE.search(report)


def check(read: Callable[[], Rows], route: Callable[[], Any], name: str) -> None:
    """The whole route on one input: valid canonical rows and a report in all four formats,
    or a one-line WhileError from both; anything else fails the test."""
    try:
        got = read()
    except WhileError as err:
        _refused(err, name)
        with pytest.raises(WhileError) as again:
            route()
        _refused(again.value, name)
        OUTCOMES["error"] += 1
        return
    frame = got.frame.collect()
    assert frame.schema == pl.Schema(CANONICAL_SCHEMA)
    assert frame.height > 0
    assert frame["task_id"].null_count() == 0
    assert all(math.isfinite(r) for r in frame["reward"].to_list())
    assert frame["passed"].null_count() == 0
    assert isinstance(got.sources, dict) and "task_id" in got.sources
    routed = route()
    assert routed.exit_code in (0, 1)
    names = {str(v) for c in ("task_id", "model", "policy_version") for v in frame[c].to_list()}
    for fmt in FORMATS:
        _printed_numbers_finite(render(routed, fmt), fmt, names)
    OUTCOMES["rows"] += 1


@FUZZ
@given(data=jsonl_bytes(), threshold=st.sampled_from([None, 0.5]))
def test_fuzz_jsonl_file(tmp_path: Path, data: bytes, threshold: float | None) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(data)
    check(
        lambda: read_rows([str(path)], pass_threshold=threshold),
        lambda: run_route([str(path)], pass_threshold=threshold),
        str(path),
    )


@FUZZ
@given(data=jsonl_bytes())
def test_fuzz_stdin(data: bytes) -> None:
    check(
        lambda: read_rows(["-"], stdin=io.BytesIO(data)),
        lambda: run_route(["-"], stdin=io.BytesIO(data)),
        "<stdin>",
    )


COLUMN = st.one_of(
    st.lists(
        st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)), min_size=1, max_size=6
    ),
    st.lists(st.one_of(st.none(), st.integers(-3, 3)), min_size=1, max_size=6),
    st.lists(st.one_of(st.none(), st.booleans()), min_size=1, max_size=6),
    st.lists(st.one_of(st.none(), st.text(max_size=5)), min_size=1, max_size=6),
    st.lists(st.lists(st.integers(0, 2), max_size=2), min_size=1, max_size=6),
)


@FUZZ
@given(
    columns=st.dictionaries(
        st.sampled_from(
            ["task_id", "example_id", "reward", "score", "truncated", "model", "prompt"]
        ),
        COLUMN,
        min_size=1,
        max_size=4,
    ),
    cut=st.one_of(st.none(), st.integers(0, 400)),
)
def test_fuzz_parquet(tmp_path: Path, columns: dict[str, list[Any]], cut: int | None) -> None:
    height = min(len(v) for v in columns.values())
    try:
        frame = pl.DataFrame({k: v[:height] for k, v in columns.items()}, strict=False)
    except Exception:  # a column polars itself cannot build: nothing to write
        return
    path = tmp_path / "fuzz.parquet"
    frame.write_parquet(path)
    if cut is not None:
        path.write_bytes(path.read_bytes()[:cut])
    check(lambda: read_rows([str(path)]), lambda: run_route([str(path)]), str(path))


UNICODE_TASK = st.one_of(
    st.integers(0, 3),
    # no U+0000: polars reads a lone surrogate escape as U+0000, so an id holding one is refused;
    # no empty id, which is no id (test_blank_ids)
    st.sampled_from(["a", "é", "日本", "1", "🙂", "a\nb", "x" * 300]),
)
LEGAL_ROW = st.fixed_dictionaries(
    {"task_id": UNICODE_TASK, "reward": GOOD_REWARD},
    optional={
        "truncated": st.one_of(st.none(), st.booleans()),
        "model": st.one_of(st.none(), NAME, st.sampled_from(["nan", "inf", "m@1"])),
        "junk": ANY,  # a column the route never reads, of any type, mixed across rows
        "meta": st.dictionaries(st.text(max_size=3), ANY, max_size=2),
    },
)


def plain_pass_at_1(data: bytes, threshold: float) -> tuple[float, int, int]:
    """(pass@1, tasks, rows) by hand: Python's JSON (a key repeated with its own value read
    once), rows grouped by ``str(task_id)``, the mean of the per-task pass rates."""
    tasks: dict[str, list[int]] = {}
    for line in data.decode("utf-8").split("\n"):
        if not line.strip():
            continue
        row = json.loads(line, object_pairs_hook=lambda pairs: dict(reversed(pairs)))
        entry = tasks.setdefault(str(row["task_id"]), [0, 0])
        entry[0] += 1
        entry[1] += float(row["reward"]) >= threshold
    rates = [p / n for n, p in tasks.values()]
    return sum(rates) / len(rates), len(tasks), sum(n for n, _ in tasks.values())


@FUZZ
@given(
    rows=st.lists(LEGAL_ROW, min_size=1, max_size=10),
    duplicate=st.lists(st.booleans(), min_size=10, max_size=10),
    blank=st.booleans(),
    threshold=st.sampled_from([None, 0.5]),
)
def test_fuzz_legal_rows_route_to_the_plain_numbers(
    tmp_path: Path,
    rows: list[dict[str, Any]],
    duplicate: list[bool],
    blank: bool,
    threshold: float | None,
) -> None:
    """Rows that are legal but odd (unicode and empty task ids, models called "nan", unread
    columns of mixed types and non-finite values, a key repeated with its own value, blank
    lines) always route,
    and the report's pass@1, tasks and rows are the plain-Python ones. Without a threshold
    the rewards are 0/1 (partial credit on a tenth of the rows or more is refused)."""
    if threshold is None:
        rows = [{**r, "reward": float(r["reward"] >= 0.5)} for r in rows]
    lines = [encode(r, d, same=True) for r, d in zip(rows, duplicate, strict=False)]
    if blank:
        lines.insert(len(lines) // 2, b"   ")
    data = b"\n".join(lines) + b"\n"
    path = tmp_path / "legal.jsonl"
    path.write_bytes(data)
    check(
        lambda: read_rows([str(path)], pass_threshold=threshold),
        lambda: run_route([str(path)], pass_threshold=threshold),
        str(path),
    )
    summary = run_route([str(path)], pass_threshold=threshold).to_dict()["summary"]
    want, tasks, n_rows = plain_pass_at_1(data, 1.0 if threshold is None else threshold)
    assert summary["pass_at_1"]["value"] == pytest.approx(want, abs=1e-12)
    assert (summary["tasks"], summary["rows"]) == (tasks, n_rows)


def test_fuzz_ran_enough_cases_and_both_outcomes() -> None:
    """At least MIN_CASES hostile inputs went through the whole route, some ending in a
    report and some in a refusal (run after the fuzzers, in file order)."""
    total = sum(OUTCOMES.values())
    if total == 0:
        pytest.skip("run with the fuzz tests above (they count the cases)")
    assert total >= MIN_CASES, dict(OUTCOMES)
    assert OUTCOMES["rows"] > 0 and OUTCOMES["error"] > 0, dict(OUTCOMES)
    print(f"fuzz cases through the whole route: {total} ({dict(OUTCOMES)})")
