"""``route --by COLUMN`` opens and reads each input once (DESIGN section 1: "each input is
opened and read once (stdin, FIFOs and /dev/fd/N included)").

The files are drawn by the generator of :mod:`tests.route.test_by_slice` (two or three
slices, each with its own drawn defects: error replies, ungraded rows, partial credit, cut-off
rows, per-row ids, identical draws), written as JSON Lines or Parquet, whole or cut into two
files. Every source is read by one call of the reader of one source (``_read_source``) under
``--by model``, whatever the slices' count, and the sliced route makes at most two streaming
passes over each file, as the plain route does: a read, and a read again keyed by the prompt
where ids are one per row, which the plain route decides for the pool and the sliced one for
each value's rows (a pass over each slice on top of the pool's is what it must not make). A real FIFO through the command line routes every
slice, as the file it carries does.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from tests.route.test_by_slice import assert_refused_alike, sliced_files
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io import read
from whilecli.route import run_route
from whilecli.route.model import Route
from whilecli.route.slices import Slices

SETTINGS = settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _write(path: Path, rows: list[dict[str, Any]], kind: str) -> str:
    if kind == "parquet":
        pl.DataFrame(rows, infer_schema_length=None).write_parquet(path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


class Reads:
    """Calls of the one-source reader per source name, and streaming passes, while routing."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sources: Counter[str] = Counter()
        self.passes = 0
        source_reader = read._read_source
        scan = read._scan

        def counted_source(source: Any, *args: Any, **kwargs: Any) -> Any:
            self.sources[source.name] += 1
            return source_reader(source, *args, **kwargs)

        def counted_scan(*args: Any, **kwargs: Any) -> Any:
            self.passes += 1
            return scan(*args, **kwargs)

        monkeypatch.setattr(read, "_read_source", counted_source)
        monkeypatch.setattr(read, "_scan", counted_scan)

    def route(self, paths: list[str], **kw: Any) -> tuple[Counter[str], int, str]:
        """What routing ``paths`` read, and how it ended (routed, or the refusal's words)."""
        self.sources, self.passes = Counter(), 0
        try:
            got = run_route(paths, **kw)
            said = "routed" if not isinstance(got, Slices) else f"{len(got.routes)} slices"
        except InputError as err:
            said = "refused: " + err.detail.split(" (--by ")[0]
        return self.sources, self.passes, said


@SETTINGS
@given(
    drawn=sliced_files(),
    kind=st.sampled_from(["jsonl", "parquet"]),
    cut=st.booleans(),
    show=st.booleans(),
)
def test_by_reads_each_input_once(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    drawn: tuple[dict[str | None, list[int]], list[dict[str, Any]]],
    kind: str,
    cut: bool,
    show: bool,
) -> None:
    members, rows = drawn
    folder = tmp_path_factory.mktemp("once")
    if cut:  # two files of one pool, each holding rows of every slice or some
        half = len(rows) // 2
        paths = [
            _write(folder / f"a.{kind}", rows[:half], kind),
            _write(folder / f"b.{kind}", rows[half:], kind),
        ]
    else:
        paths = [_write(folder / f"all.{kind}", rows, kind)]
    reads = Reads(monkeypatch)
    extra: dict[str, Any] = {"show": ("split", "floor"), "limit": 5} if show else {}
    _, plain_passes, plain = reads.route(paths, **extra)
    sources, passes, sliced = reads.route(paths, by="model", **extra)
    event(f"{len(members)} slices, {kind}: {sliced[:40]}")
    # each input read by one call, however many slices it holds (a refusal may stop before
    # the next input)
    assert set(sources) <= set(paths) and set(sources.values()) == {1}, (sources, sliced)
    if not sliced.startswith("refused"):
        assert sources == Counter(paths), sliced
    if not plain.startswith("refused"):
        # a read, and one read again keyed by the prompt where ids are one per row: the
        # plain route decides that for the pool, the sliced one for each value's rows, so
        # their counts may differ by that pass; a pass per slice would make three or more
        assert passes <= 2 * len(paths), (sliced, passes, plain_passes)
        assert passes <= plain_passes + len(paths), (sliced, passes, plain_passes)


#: Where a row of a slice-alone file is in the sliced input: alone path -> (input path, the
#: 0-based index in the input of each of the alone file's rows).
Places = dict[str, tuple[str, list[int]]]


def _placed(value: Any, places: Places) -> Any:
    """A slice-alone report with its positions told as the sliced input's (a JSON Lines line
    is 1-based, a Parquet row 0-based)."""
    if isinstance(value, str):
        for alone, (there, index) in places.items():
            value = re.sub(
                re.escape(alone) + r" (line|row) (\d+)",
                lambda m, there=there, index=index: (
                    f"{there} line {index[int(m[2]) - 1] + 1}"
                    if m[1] == "line"
                    else f"{there} row {index[int(m[2])]}"
                ),
                value,
            ).replace(alone, there)  # a note of a pool of files names its file
        return value
    if isinstance(value, list):
        return [_placed(v, places) for v in value]
    if isinstance(value, dict):
        out = {k: _placed(v, places) for k, v in value.items()}
        if value.get("file") in places:
            index = places[value["file"]][1]
            if isinstance(out.get("line"), int):
                out["line"] = index[out["line"] - 1] + 1
            if isinstance(out.get("row"), int):
                out["row"] = index[out["row"]]
        return out
    return value


SHOW = ("split", "floor", "saturated", "singles", "truncated_passes")


def _report(paths: list[str], **kw: Any) -> dict[str, Any] | str:
    try:
        got = run_route(paths, show=SHOW, limit=100, **kw)
    except InputError as err:
        return "refused: " + err.detail.split(" (--by ")[0]
    out = got.to_dict()
    if not isinstance(got, Slices):
        out["facts"] = out.pop("inputs").get("facts")
    return out


@settings(SETTINGS, max_examples=12)
@given(drawn=sliced_files(), kind=st.sampled_from(["jsonl", "parquet"]), cut=st.booleans())
def test_each_slice_of_any_input_routes_as_its_rows_alone(
    tmp_path_factory: pytest.TempPathFactory,
    drawn: tuple[dict[str | None, list[int]], list[dict[str, Any]]],
    kind: str,
    cut: bool,
) -> None:
    """The spec of :mod:`tests.route.test_by_slice` over Parquet files and pools of two files:
    each slice of the one read routes as its rows alone, in files of their own, do."""
    members, rows = drawn
    folder = tmp_path_factory.mktemp("spec")
    bounds = [(0, len(rows) // 2), (len(rows) // 2, len(rows))] if cut else [(0, len(rows))]
    paths = [
        _write(folder / f"in{n}.{kind}", rows[lo:hi], kind) for n, (lo, hi) in enumerate(bounds)
    ]
    alone: dict[str, dict[str, Any] | str] = {}
    for model, indexes in members.items():
        name = "(none)" if model is None else model
        tag = name.replace("/", "_")
        places: Places = {}
        for n, (lo, hi) in enumerate(bounds):
            mine = [i - lo for i in indexes if lo <= i < hi]
            if mine:  # a file without the slice's rows is no input of it
                own = _write(folder / f"{tag}-{n}.{kind}", [rows[lo + i] for i in mine], kind)
                places[own] = (paths[n], mine)
        report = _report(list(places))
        alone[name] = _placed(report, places) if isinstance(report, dict) else report
    sliced = _report(paths, by="model")
    if isinstance(sliced, str):  # the input as a whole is refused, as the plain route says
        event(f"{kind}: the whole input refused")
        assert isinstance(_report(paths), str), sliced
        return
    refused = any(isinstance(r, str) for r in alone.values())
    event(f"{kind}{', two files' if cut else ''}: {'a slice refused' if refused else 'routed'}")
    got = {s["slice"]: s for s in sliced["slices"]}
    assert set(got) == set(alone)
    assert_refused_alike(sliced, alone)
    for name, want in alone.items():
        if isinstance(want, str):
            continue
        have = dict(got[name])
        have.pop("slice")
        have["facts"] = have.pop("inputs").get("facts")
        for key in want:
            assert have[key] == want[key], (name, key)


@settings(SETTINGS, max_examples=12)
@given(
    drawn=sliced_files(),
    kind=st.sampled_from(["jsonl", "parquet"]),
    by=st.sampled_from(["reward", "finish_reason", "task_id", "prompt", "error", "model"]),
)
def test_any_column_slices_the_rows_it_holds(
    tmp_path_factory: pytest.TempPathFactory,
    drawn: tuple[dict[str | None, list[int]], list[dict[str, Any]]],
    kind: str,
    by: str,
) -> None:
    """``--by`` a column that a canonical field reads too (the reward, the cut-off flag, the
    id, the prompt) slices the rows by its value, never reads the field as text: the route
    ends routed or refused, and the slices' rows add up to the pool's."""
    _, rows = drawn
    path = _write(tmp_path_factory.mktemp("col") / f"all.{kind}", rows, kind)
    try:
        got = run_route([path], by=by)
    except InputError as err:  # the input as a whole refused, or too many values
        event(f"--by {by}: refused")
        assert err.file is not None or err.field is not None, err
        return
    event(f"--by {by}: routed")
    assert isinstance(got, Slices)
    whole = run_route([path])
    assert not isinstance(whole, Slices)
    if got.refused:  # a slice its rows alone refuse: listed, the others routed
        event(f"--by {by}: a slice refused")
        assert got.exit_code == 2 and all(r.message for _, r in got.refused)
        return
    routes = [route for _, route in got.routes if isinstance(route, Route)]
    assert sum(route.summary["rows"] for route in routes) == whole.summary["rows"]


def test_a_slice_read_once_keeps_its_own_facts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One read, yet each slice's findings its own: one model's per-row ids keyed by the
    prompt and its error replies counted over its rows, the other's rows untouched."""
    rows = []
    for t in range(6):
        for j in range(4):
            rows.append(
                {"task_id": f"a-{t}-{j}", "prompt": f"q{t}", "reward": float(j % 2), "model": "A"}
            )
            reply = "Error code: 429" if t == 0 and j < 2 else f"answer {t}.{j}"
            rows.append(
                {"task_id": f"t{t}", "prompt": f"q{t}", "completion": reply, "model": "B"}
                | {"reward": float(j < 2 and reply.startswith("answer"))}  # errors graded 0
            )
    path = _write(tmp_path / "all.jsonl", rows, "jsonl")
    reads = Reads(monkeypatch)
    got = run_route([path], by="model")
    assert reads.sources == Counter([path])
    assert isinstance(got, Slices)
    routes = dict(got.routes)
    a, b = routes["A"].to_dict(), routes["B"].to_dict()
    assert a["summary"]["tasks"] == 6 and a["summary"]["rows"] == 24
    assert "keyed by the prompt" in json.dumps(a["data_quality"])
    assert "keyed by the prompt" not in json.dumps(b["data_quality"])
    assert b["summary"]["rows"] == 22  # two error replies left out of its rate
    assert "harness errors" in json.dumps(b["data_quality"])
    assert "harness errors" not in json.dumps(a["data_quality"])


def _feed(path: Path, data: bytes) -> threading.Thread:
    def write() -> None:
        fd = os.open(path, os.O_WRONLY)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        except BrokenPipeError:
            pass
        finally:
            os.close(fd)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def _cli(args: list[str]) -> tuple[int, str]:
    out: list[tuple[int, str]] = []

    def target() -> None:
        result = CliRunner().invoke(app, args)
        out.append((result.exit_code, result.output))

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(120)
    assert not thread.is_alive(), f"while {' '.join(args)} hung (the FIFO opened twice?)"
    return out[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_a_fifo_routes_every_slice(tmp_path: Path, kind: str) -> None:
    rows = []
    for model, tasks in (("m/A", 5), ("m/B", 7), ("m/C", 4)):
        for t in range(tasks):
            for j in range(4):
                reward = float(j < (t % 5))
                rows.append({"task_id": f"t{t}", "reward": reward, "model": model})
    path = Path(_write(tmp_path / f"rows.{kind}", rows, kind))
    fifo = tmp_path / "rows.fifo"
    os.mkfifo(fifo)
    writer: Callable[[], None] = _feed(fifo, path.read_bytes()).join
    try:
        code, out = _cli(["route", "--by", "model", str(fifo), "--format", "json"])
    finally:
        writer()
    want_code, want = _cli(["route", "--by", "model", str(path), "--format", "json"])
    assert (code, want_code) == (want_code, want_code) and code in (0, 1), out
    got = json.loads(out)
    assert [s["slice"] for s in got["summary"]] == ["m/A", "m/B", "m/C"]
    assert [s["tasks"] for s in got["summary"]] == [5, 7, 4]
    assert [s["rows"] for s in got["summary"]] == [20, 28, 16]
    assert got["summary"] == json.loads(want)["summary"]
