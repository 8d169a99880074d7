"""A hostile row corpus: every reader gives the same answer, or the same one-line refusal.

Generated JSON Lines files hold odd values where the grade and the task id go (NaN, the
infinities, -0.0, 1e308 and past it, integers past the float range, past 2^63 and past the
4300 digits Python converts, booleans,
numbers and words written as text, nested lists and objects, text, null, empty and very long
ids) in odd encodings (a UTF-8 byte order mark, UTF-16 with and without its mark, CRLF line
ends, a last line without its newline or ending in a lone ``\r``, blank lines, a line of
trailing garbage, a last object cut short, NUL bytes in a line or padding the file's end,
bytes that are not UTF-8).
The readers of ``route``/``check``, ``diff``/``size``, ``ada`` and ``update`` must all read
the same tasks and passes, or all refuse (``update`` trains on rewards as numbers, so a pool
whose rewards leave [0, 1], which the others refuse for want of a pass rule, is its to read) with an :class:`InputError` of one line that names
the file (and, where one row is to blame, its line); never another exception.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.commands.diff import read_tasks
from whilecli.errors import InputError
from whilecli.io.batch import read_batch
from whilecli.io.read import read_rows
from whilecli.io.table import read_table
from whilecli.route.pool import Counts, summarize

#: Grades as JSON text: ordinary ones and hostile ones.
REWARDS = (
    *("1", "0", "1.0", "0.0", "true", "false", '"1"', '"fail"', "null"),
    *("NaN", "Infinity", "-Infinity", "-0.0", "1e308", "1e400", "-1e400"),
    *("123456789012345678901234567890", "[1]", '{"x": 1}', '"maybe"', '"N/A"', "2", "0.5"),
    *('"true"', '"0.5"', '" 1 "', '"NaN"', '"inf"', "1E0", "5e-324", "1.0000000000000002"),
    *('{"score": null}', "[null]"),
    "1" + "0" * 5000,  # past the digits Python converts to an integer (4300)
)
#: Task ids as JSON text (absent: no key).
IDS = (
    *('"a"', '"b"', "7", "7.0", '"\\u00e9"', '""', "null", '"none"', "[1]", '{"k": 1}'),
    *('"' + "x" * 5000 + '"', "absent", "9" * 5000),
    *("1e400", "-1e400", "NaN", "true", str(2**63), str(2**64 + 1), "-0", '"Infinity"'),
)
ENCODINGS = ("utf-8", "bom", "utf-16", "utf-16-be", "crlf")
#: How the file ends: whole, its last line without a newline or ending in a lone CR, its last
#: object cut short, NUL bytes padding it (a crash, a preallocating writer).
ENDS = ("whole", "no-newline", "cr", "cut", "nul")


@st.composite
def corpora(draw: st.DrawFn) -> tuple[bytes, str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 8))):
        task = draw(st.sampled_from(IDS))
        reward = draw(st.sampled_from(REWARDS))
        pad = draw(st.sampled_from(["", " ", "\t"]))
        key = "" if task == "absent" else f'"task_id":{pad}{task}, '
        lines.append("{" + key + f'"reward": {reward}' + "}")
        if draw(st.integers(0, 9)) == 0:
            lines.append("")  # a blank line
    if draw(st.integers(0, 9)) == 0:
        lines.append(draw(st.sampled_from(["garbage", "{", '{"task_id": "a"} x', "[]"])))
    if draw(st.integers(0, 9)) == 0:  # a NUL byte inside a line
        at = draw(st.integers(0, len(lines) - 1))
        lines[at] = lines[at][: len(lines[at]) // 2] + "\x00" + lines[at][len(lines[at]) // 2 :]
    encoding = draw(st.sampled_from(ENCODINGS))
    end = "\r\n" if encoding == "crlf" else "\n"
    text = end.join(lines) + end
    ending = draw(st.sampled_from(ENDS))
    if ending == "no-newline":
        text = text.removesuffix(end)
    elif ending == "cr":
        text = text.removesuffix(end) + "\r"
    elif ending == "cut":
        text = text.removesuffix(end)[: -draw(st.integers(1, max(1, len(lines[-1]) - 1)))]
    if encoding == "utf-16":
        data = text.encode("utf-16")
    elif encoding == "utf-16-be":  # no byte order mark
        data = text.encode("utf-16-be")
    else:
        data = (b"\xef\xbb\xbf" if encoding == "bom" else b"") + text.encode("utf-8")
    if ending == "nul":
        data += b"\x00" * draw(st.integers(1, 4096))
    if draw(st.integers(0, 14)) == 0:
        data += b'{"task_id": "\xe9", "reward": 1}\n'  # Latin-1, not UTF-8
    return data, encoding


def _tasks(frame: Any) -> list[tuple[str, int, int]]:
    return sorted(
        (str(r["task_id"]), int(r["n"]), int(r["passes"])) for r in frame.iter_rows(named=True)
    )


def _grouped(ids: list[Any], passes: list[bool]) -> list[tuple[str, int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for task, passed in zip(ids, passes, strict=True):
        n, p = out.get(str(task), (0, 0))
        out[str(task)] = (n + 1, p + bool(passed))
    return sorted((k, n, p) for k, (n, p) in out.items())


def _readings(path: Path) -> dict[str, Any]:
    """Per reader, the tasks it read, or its refusal (never another exception)."""

    def route() -> Any:
        return _tasks(summarize(read_rows([str(path)], aggregate=Counts())).tasks)

    def diff() -> Any:
        return _tasks(read_tasks(str(path), mapping=None, pass_threshold=None, input_format=None))

    def ada() -> Any:
        table = read_table([str(path)]).canonical
        return _grouped(table["task_id"].to_list(), table["passed"].to_list())

    def update() -> Any:
        cols = read_batch(path)
        assert cols.rewards is not None
        if cols.task_ids is None or None in cols.task_ids:  # what grouped methods refuse
            raise InputError("no task id: a grouped method refuses the batch", file=str(path))
        return _grouped(cols.task_ids, [r >= 1.0 - 1e-9 for r in cols.rewards])

    out: dict[str, Any] = {}
    for name, read in (("route", route), ("diff", diff), ("ada", ada), ("update", update)):
        try:
            out[name] = read()
        except InputError as err:
            message = str(err)
            assert "\n" not in message and path.name in message, (name, message)
            out[name] = ("refused", message)
    return out


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(corpus=corpora())
def test_every_reader_agrees_on_a_hostile_corpus(
    tmp_path_factory: Any, corpus: tuple[bytes, str]
) -> None:
    data, _ = corpus
    path = tmp_path_factory.mktemp("hostile") / "rows.jsonl"
    path.write_bytes(data)
    got = _readings(path)
    route = got["route"]
    if isinstance(route, tuple) and "pass/fail is not defined" in route[1]:
        # rewards past [0, 1] or partial credit: no pass rule, but update trains on numbers
        got.pop("update")
    refused = {name for name, value in got.items() if isinstance(value, tuple)}
    assert refused in (set(), set(got)), got
    if not refused:
        first = got["route"]
        assert all(value == first for value in got.values()), got


#: Where hostile rows go among the good ones: first, past the rows that type a file read
#: whole (16), and past the rows Python parses before polars reads the rest (1,000).
PLACES = (0, 20, 1010)
PAD = 1100


def _pad_rows() -> list[str]:
    return [f'{{"task_id": "pad{i // 4}", "reward": {i % 2}}}' for i in range(PAD)]


@st.composite
def hostile_rows(draw: st.DrawFn) -> list[str]:
    """One to four rows with a hostile id or grade (the grades of :data:`REWARDS`, the ids of
    :data:`IDS`)."""
    out = []
    for _ in range(draw(st.integers(1, 4))):
        task = draw(st.sampled_from(IDS))
        reward = draw(st.sampled_from(REWARDS))
        key = "" if task == "absent" else f'"task_id": {task}, '
        out.append("{" + key + f'"reward": {reward}' + "}")
    return out


def _outcome(path: Path, at: int) -> Any:
    try:
        tasks = _tasks(summarize(read_rows([str(path)], aggregate=Counts())).tasks)
    except InputError as err:
        # the refusal, and its line counted from the first hostile row
        text = re.sub(r":\d+: |row \d+", "", str(err).replace(str(path), ""))
        return ("refused", text, None if err.line is None else err.line - at)
    return [t for t in tasks if not t[0].startswith("pad")]


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rows=hostile_rows())
def test_a_hostile_row_reads_the_same_wherever_it_is(
    tmp_path_factory: Any, rows: list[str]
) -> None:
    """The same rows, first in the file, past the typing rows, or past the rows parsed by
    Python: read to the same tasks, or refused at one of them (a row with two faults may be
    refused for either)."""
    tmp = tmp_path_factory.mktemp("placed")
    pad = _pad_rows()
    got = {}
    for at in PLACES:
        path = tmp / f"at{at}.jsonl"
        path.write_text("\n".join([*pad[:at], *rows, *pad[at:]]) + "\n")
        got[at] = _outcome(path, at)
    refused = [isinstance(v, tuple) for v in got.values()]
    assert all(refused) or not any(refused), (rows, got)
    if not any(refused):
        assert got[PLACES[0]] == got[PLACES[1]] == got[PLACES[2]], (rows, got)
        return
    for _, _, line in got.values():
        assert line is None or 1 <= line <= len(rows), (rows, got)
