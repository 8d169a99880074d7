"""``--show``: the tasks behind each count and where their first rows are, checked against a
plain-Python reading of the same files (line numbers for JSON Lines, 0-based rows for Parquet
and for documents converted in memory), the ``--limit`` bound, and the first position kept
across files and Parquet row ranges."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.errors import UsageError
from whilecli.route import run_route
from whilecli.route.drill import parse_show, show_heading, show_item

ALL = ("truncated_passes", "floor", "saturated", "split", "singles")


def by_hand(rows: list[dict], places: list[int]) -> dict[str, list[tuple[str, int]]]:
    """Each kind's (task, place of its first row), in the order of those places."""
    first: dict[str, int] = {}
    first_cut: dict[str, int] = {}  # the first truncated passing row
    n: dict[str, int] = {}
    passes: dict[str, int] = {}
    cut: set[str] = set()
    for row, place in zip(rows, places, strict=True):
        t = row["task_id"]
        first.setdefault(t, place)
        n[t] = n.get(t, 0) + 1
        passed = row["reward"] >= 1.0
        passes[t] = passes.get(t, 0) + passed
        if row.get("truncated") and passed:
            cut.add(t)
            first_cut.setdefault(t, place)
    kinds = {
        "truncated_passes": [t for t in n if t in cut],
        "floor": [t for t in n if n[t] >= 2 and passes[t] == 0],
        "saturated": [t for t in n if n[t] >= 2 and passes[t] == n[t]],
        "split": [t for t in n if n[t] >= 2 and 0 < passes[t] < n[t]],
        "singles": [t for t in n if n[t] == 1],
    }
    return {
        k: sorted(
            ((t, (first_cut if k == "truncated_passes" else first)[t]) for t in ts),
            key=lambda p: p[1],
        )
        for k, ts in kinds.items()
    }


ROWS = st.lists(
    st.fixed_dictionaries(
        {
            "task_id": st.sampled_from([f"t{i}" for i in range(8)]),
            "reward": st.sampled_from([0.0, 1.0]),
            "truncated": st.booleans(),
        }
    ),
    min_size=1,
    max_size=40,
)


@given(ROWS, st.lists(st.booleans(), min_size=40, max_size=40), st.integers(1, 5))
@settings(max_examples=40, deadline=None)
def test_jsonl_lines_with_blank_lines_between(rows: list[dict], blanks: list[bool], limit: int):
    import tempfile

    text, lines, lineno = "", [], 0
    for row, blank in zip(rows, blanks, strict=False):
        if blank:  # a blank line: the reader skips it, the line numbers count it
            text += "\n"
            lineno += 1
        text += json.dumps(row) + "\n"
        lineno += 1
        lines.append(lineno)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rows.jsonl"
        path.write_text(text, encoding="utf-8")
        route = run_route(str(path), show=ALL, limit=limit)
    expected = by_hand(rows, lines)
    for kind in ALL:
        entry = route.show[kind]
        assert entry["count"] == len(expected[kind])
        assert entry["left_out"] == max(0, len(expected[kind]) - limit)
        got = [(i["task_id"], i["line"]) for i in entry["shown"]]
        assert got == expected[kind][:limit]
        assert all(i["file"] == str(path) and i["row"] is None for i in entry["shown"])


def test_parquet_rows_across_files(tmp_path: Path) -> None:
    rows = [
        {"task_id": f"t{(i * 5) % 6}", "reward": float(i % 3 == 0), "truncated": i == 20}
        for i in range(30)
    ]
    first, second = tmp_path / "a.parquet", tmp_path / "b.jsonl"
    pl.DataFrame(rows[:24]).write_parquet(first)
    extra = [{"task_id": "late", "reward": 1.0}, {"task_id": "t1", "reward": 0.0}]
    second.write_text("".join(json.dumps(r) + "\n" for r in extra), encoding="utf-8")
    route = run_route([str(first), str(second)], show=ALL, limit=10)
    expected = by_hand(rows[:24] + extra, list(range(24)) + [1, 2])
    for kind in ALL:
        got = [i["task_id"] for i in route.show[kind]["shown"]]
        assert sorted(got) == sorted(t for t, _ in expected[kind]), kind
    places = {i["task_id"]: i for e in route.show.values() for i in e["shown"]}
    for task, at in expected["split"] + expected["floor"] + expected["saturated"]:
        assert places[task]["file"] == str(first) and places[task]["row"] == at
    assert places["late"]["file"] == str(second) and places["late"]["line"] == 1
    assert places["t0"]["rows"] == sum(r["task_id"] == "t0" for r in rows[:24])


def test_converted_document_names_rows(tmp_path: Path) -> None:
    rows = [
        {"task_id": "x", "reward": 1.0},
        {"task_id": "y", "reward": 0.0},
        {"task_id": "x", "reward": 0.0},
        {"task_id": "z", "reward": 1.0},
    ]
    doc = tmp_path / "rows.json"
    doc.write_text(json.dumps(rows, indent=2), encoding="utf-8")  # one JSON array
    route = run_route(str(doc), show=("split", "singles"))
    assert [(i["task_id"], i["row"], i["line"]) for i in route.show["split"]["shown"]] == [
        ("x", 0, None)
    ]
    assert [(i["task_id"], i["row"]) for i in route.show["singles"]["shown"]] == [
        ("y", 1),
        ("z", 3),
    ]


def test_compressed_jsonl_and_summaries(tmp_path: Path) -> None:
    rows = [{"task_id": "a", "reward": 1.0}, {"task_id": "b", "reward": 0.0}]
    path = tmp_path / "rows.jsonl.gz"
    path.write_bytes(gzip.compress(b"\n" + "".join(json.dumps(r) + "\n" for r in rows).encode()))
    route = run_route(str(path), show=("singles",))
    assert [(i["task_id"], i["line"]) for i in route.show["singles"]["shown"]] == [
        ("a", 2),
        ("b", 3),
    ]
    from whilecli.io.read import read_rows
    from whilecli.route.summary import write_summary

    summary = tmp_path / "tasks.parquet"
    write_summary(read_rows([str(path)]), summary)
    summed = run_route(str(summary), show=("singles",))
    shown = summed.show["singles"]["shown"]
    assert [i["task_id"] for i in shown] == ["a", "b"]  # no position: by task id
    assert all(i["file"] is None and i["line"] is None and i["row"] is None for i in shown)


def test_parse_show_and_words() -> None:
    assert parse_show(["split", "floor,singles", "truncated-passes"]) == (
        "truncated_passes",
        "floor",
        "split",
        "singles",
    )
    assert parse_show(None) == ()
    with pytest.raises(UsageError, match="one of truncated-passes"):
        parse_show(["splits"])
    one = {"count": 1, "shown": [{}], "left_out": 0}
    assert show_heading("split", one) == "1 split task"
    many = {"count": 5, "shown": [{}, {}], "left_out": 3}
    assert (
        show_heading("floor", many) == "5 grouped tasks at 0 (2 listed, 3 left out: raise --limit)"
    )
    item = {"task_id": "t", "rows": 1, "passes": 0, "file": "f.jsonl", "line": 4, "row": None}
    assert show_item(item) == "t: f.jsonl line 4 (1 row, 0 passing)"
    item = {"task_id": "t", "rows": 3, "passes": 1, "file": None, "line": None, "row": None}
    assert show_item(item) == "t: position not recorded (3 rows, 1 passing)"
