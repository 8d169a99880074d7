"""``route --by COLUMN`` routes each slice as its rows alone would be routed (DESIGN sections 1
and 2, "Data quality first"): what reading finds is a property of a slice's own rows.

The generator draws a file of two or three slices (two models' rows, and sometimes rows that
name no model), each with its own drawn defects: a share of error replies, ungraded rows,
partial credit, cut-off rows, per-row ids while prompts repeat, identical draws. The rows are
interleaved in a drawn order. For every slice the route of the combined file ``--by model``
must equal the route of a file holding that slice's rows alone (verdict, provisional,
findings, counts, warnings, every figure), its positions being those of the combined file
(``--show`` lists each task's first row by its line there). A slice its rows alone refuse
(most replies errors, no graded row, too much partial credit) is listed as refused, with the
same words, beside the slices that route.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.route import run_route
from whilecli.route.model import Route
from whilecli.route.slices import Slices

SHOW = ("split", "floor", "saturated", "singles", "truncated_passes")
SETTINGS = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@st.composite
def slice_rows(draw: st.DrawFn, model: str | None) -> list[dict[str, Any]]:
    """One slice's rows on shared questions, with the defects drawn for this slice."""
    tasks = draw(st.integers(3, 8))
    k = draw(st.integers(2, 4))
    error_share = draw(st.sampled_from([0.0, 0.0, 0.0, 0.15, 0.3, 0.8]))
    ungraded_share = draw(st.sampled_from([0.0, 0.0, 0.15]))
    partial_share = draw(st.sampled_from([0.0, 0.0, 0.0, 0.0, 0.03, 0.3]))
    per_row_ids = draw(st.booleans())
    repeated = draw(st.booleans())
    cut = draw(st.booleans())
    tag = model or "none"
    rank = draw(st.permutations(range(tasks * k)))
    rows = []
    for t in range(tasks):
        passes = draw(st.integers(0, k))
        for j in range(k):
            row: dict[str, Any] = {
                "task_id": f"{tag}-{t}-{j}" if per_row_ids else f"t{t}",
                "prompt": f"question {t}",
                "completion": f"answer {t}" if repeated else f"answer {t}.{j} by {tag}",
                "reward": 1.0 if j < passes else 0.0,
                "finish_reason": "length" if cut and j == 0 else "stop",
            }
            if model is not None:
                row["model"] = model
            u = rank[t * k + j] / (tasks * k)  # the defects spread over the slice's rows
            if u < error_share:
                row["error"] = "rate limit exceeded"
                row["completion"] = "Error code: 429 - rate limit exceeded"
                row["reward"] = 0.0
            elif u < error_share + ungraded_share:
                row["reward"] = None
            elif u < error_share + ungraded_share + partial_share:
                row["reward"] = 0.5
            rows.append(row)
    return rows


@st.composite
def sliced_files(draw: st.DrawFn) -> tuple[dict[str | None, list[int]], list[dict[str, Any]]]:
    """A combined file's rows in a drawn order, and each slice's rows as indexes into it."""
    models: list[str | None] = ["m/A", "m/B"] + draw(st.sampled_from([[], [None]]))
    parts = {m: draw(slice_rows(m)) for m in models}
    tagged = [(m, r) for m, rows in parts.items() for r in rows]
    order = draw(st.permutations(range(len(tagged))))
    combined = [tagged[i] for i in order]
    members: dict[str | None, list[int]] = {m: [] for m in models}
    for index, (m, _) in enumerate(combined):
        members[m].append(index)
    return members, [r for _, r in combined]


def _write(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _moved(value: Any, alone: str, combined: str, lines: list[int]) -> Any:
    """A slice-alone report with its positions told as the combined file's (line ``i`` of
    the slice's own file is line ``lines[i - 1]`` of the combined file)."""
    if isinstance(value, str):
        pattern = re.escape(alone) + r" line (\d+)"
        return re.sub(pattern, lambda m: f"{combined} line {lines[int(m[1]) - 1]}", value)
    if isinstance(value, list):
        return [_moved(v, alone, combined, lines) for v in value]
    if isinstance(value, dict):
        out = {k: _moved(v, alone, combined, lines) for k, v in value.items()}
        if out.get("file") == alone and isinstance(out.get("line"), int):
            out["file"], out["line"] = combined, lines[out["line"] - 1]
        return out
    return value


def words(refusal: str) -> str:
    """A refusal's words before its counts and places: what a slice and its rows alone, read
    from two files, say alike."""
    return refusal.removeprefix("refused: ").split(" (")[0]


def assert_refused_alike(sliced: dict[str, Any], alone: dict[str, Any]) -> None:
    """Each slice of ``sliced`` is refused exactly where its rows alone are, in their words,
    with exit code 2; the report's exit code is 2 where any is."""
    got = {s["slice"]: s for s in sliced["slices"]}
    table = {t["slice"]: t for t in sliced["summary"]}
    for name, want in alone.items():
        if isinstance(want, str):
            assert "refused" in got[name], (name, want)
            assert words(want) in got[name]["refused"], (want, got[name]["refused"])
            assert got[name]["exit_code"] == 2 and table[name]["route"] == "refused"
        else:
            assert "refused" not in got[name], got[name]
    if any(isinstance(r, str) for r in alone.values()):
        assert sliced["exit_code"] == 2


def _route(paths: list[str], **kw: Any) -> dict[str, Any] | str:
    """The route's JSON report, or the refusal's words (without the place)."""
    try:
        got = run_route(paths, show=SHOW, limit=100, **kw)
    except InputError as err:
        return "refused: " + err.detail.split(" (--by ")[0]
    if isinstance(got, Slices):
        return got.to_dict()
    out = got.to_dict()
    out["facts"] = out.pop("inputs").get("facts")  # the paths read differ, not the facts
    return out


@SETTINGS
@given(drawn=sliced_files())
def test_each_slice_routes_as_its_rows_alone(
    tmp_path_factory: pytest.TempPathFactory,
    drawn: tuple[dict[str | None, list[int]], list[dict[str, Any]]],
) -> None:
    members, rows = drawn
    folder = tmp_path_factory.mktemp("by")
    combined = _write(folder / "all.jsonl", rows)
    alone: dict[str, dict[str, Any] | str] = {}
    for model, indexes in members.items():
        name = "(none)" if model is None else model
        path = _write(folder / f"{name.replace('/', '_')}.jsonl", [rows[i] for i in indexes])
        report = _route([path])
        lines = [i + 1 for i in indexes]
        alone[name] = _moved(report, path, combined, lines) if isinstance(report, dict) else report
    sliced = _route([combined], by="model")
    if isinstance(sliced, str):  # the file as a whole is refused, as the plain route says
        event("the whole file refused")
        assert isinstance(_route([combined]), str), sliced
        return
    got = {s["slice"]: s for s in sliced["slices"]}
    assert list(got) == [n for n in alone] or set(got) == set(alone)
    event("a slice refused" if any(isinstance(r, str) for r in alone.values()) else "routed")
    assert_refused_alike(sliced, alone)
    for name, want in alone.items():
        if isinstance(want, str):
            continue
        have = dict(got[name])
        have.pop("slice")
        have["facts"] = have.pop("inputs").get("facts")
        for key in want:
            assert have[key] == want[key], (name, key)
        for kind in want["data_quality"]:
            event(f"finding: {kind['kind']}")
        # every task listed by --show names its first row in the combined file, of this slice
        for listed in have["show"].values():
            for task in listed["shown"]:
                assert task["file"] == combined and task["line"] is not None
                row = rows[task["line"] - 1]
                assert row.get("model", None) == (None if name == "(none)" else name)


def test_a_slice_of_error_replies_is_refused_by_name(tmp_path: Path) -> None:
    """A slice whose replies are mostly errors is refused as its rows alone are, naming the
    slice, though the file as a whole is under half errors."""
    rows = []
    for model, errors in (("m/A", 0), ("m/B", 3), ("m/C", 0)):
        for t in range(4):
            for j in range(2):
                row = {"task_id": f"t{t}", "reward": float(j and t >= errors), "model": model}
                # an error reply is graded 0 (a reply the grader credits is a reply)
                row["completion"] = "Error code: 429" if t < errors else f"answer {j}"
                rows.append(row)
    path = _write(tmp_path / "all.jsonl", rows)
    run_route([path])  # the file as a whole: 6 of 24 rows are errors, counted
    sliced = run_route([path], by="model")
    assert isinstance(sliced, Slices) and sliced.exit_code == 2
    assert [name for name, _ in sliced.refused] == ["m/B"]
    assert {name for name, r in sliced.routes if isinstance(r, Route)} == {"m/A", "m/C"}
    (line,) = sliced.refusal_lines()
    assert re.search(r"most replies are errors.*\(--by model: m/B\)$", line), line
    result = CliRunner().invoke(app, ["route", path, "--by", "model"])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"whilecli: error: {line}", result.stderr
    assert "Refused: " in result.stdout and "── model: m/A" in result.stdout


@settings(SETTINGS, max_examples=10)
@given(drawn=sliced_files())
def test_each_source_routes_as_itself(
    tmp_path_factory: pytest.TempPathFactory,
    drawn: tuple[dict[str | None, list[int]], list[dict[str, Any]]],
) -> None:
    """``--by source``: each file's route is the file's own, findings and positions included."""
    members, rows = drawn
    folder = tmp_path_factory.mktemp("src")
    paths = []
    alone: dict[str, dict[str, Any] | str] = {}
    for model, indexes in members.items():
        name = "none" if model is None else model.replace("/", "_")
        path = _write(folder / f"{name}.jsonl", [rows[i] for i in indexes])
        paths.append(path)
        alone[path] = _route([path])
    sliced = _route(paths, by="source")
    assert isinstance(sliced, dict), sliced  # one file refused leaves the others routed
    got = {s["slice"]: s for s in sliced["slices"]}
    assert len(got) == len(alone)
    assert_refused_alike(sliced, alone)
    for (name, have), want in zip(got.items(), alone.values(), strict=True):
        if isinstance(want, str):
            continue
        have = dict(have)
        have.pop("slice")
        have["facts"] = have.pop("inputs").get("facts")
        for key in want:
            assert have[key] == want[key], (name, key)


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_a_blank_value_is_the_slice_of_none(tmp_path: Path, fmt: str) -> None:
    """``--by env`` over rows whose env is missing, null, ``""`` or blanks: one slice,
    ``(none)``, not a slice with an empty name beside it."""
    import polars as pl

    rows = []
    for t in range(40):
        env = ["", None, "a", "  ", "missing"][t % 5]
        for j in range(4):
            row: dict[str, Any] = {"task_id": f"t{t}", "completion": f"{t}.{j}",
                                   "reward": float((t + j) % 2), "env": env}  # fmt: skip
            if env == "missing":
                del row["env"]
            rows.append(row)
    path = tmp_path / f"rows.{fmt}"
    if fmt == "parquet":
        pl.DataFrame(rows).write_parquet(path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    got = run_route([str(path)], by="env")
    assert isinstance(got, Slices)
    tasks = {name: r.summary["tasks"] for name, r in got.routes if isinstance(r, Route)}
    assert tasks == {"(none)": 32, "a": 8}, tasks
