"""Keys a JSONL writer adds only to some rows, past the rows that choose the columns.

The first :data:`~whilecli.io.read.SAMPLE_ROWS` rows of a JSONL file choose its columns. A
writer that sets a truncation flag, a model or log-probs only on some rows (a flag only on the
cut-off replies, say) may put the first of them far past those rows; the reader searches the
rest of the file for the keys of the optional fields the sample never carried, so that the
field is read where it is recorded instead of reported as never recorded.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.io.aliases import LAG_ALIASES
from whilecli.io.read import SAMPLE_ROWS, read_rows
from whilecli.io.shape import SCANNED_LATE, Shape, keep_paths, unseen_paths
from whilecli.io.sources import Source, rows_with_keys
from whilecli.route import run_route

N = SAMPLE_ROWS + 500


def _rows(extra: dict[int, dict[str, Any]]) -> list[dict[str, Any]]:
    rows = [{"task_id": f"t{i // 4}", "reward": float(i % 2)} for i in range(N)]
    for i, fields in extra.items():
        rows[i].update(fields)
    return rows


def _write(path: Path, rows: list[dict[str, Any]], blank_every: int = 0) -> Path:
    lines = []
    for i, row in enumerate(rows):
        lines.append(json.dumps(row))
        if blank_every and i % blank_every == 0:
            lines.append("")
    data = ("\n".join(lines) + "\n").encode()
    if path.suffix == ".gz":
        data = gzip.compress(data)
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("name", ["rows.jsonl", "rows.jsonl.gz"])
def test_a_truncation_flag_and_a_model_first_seen_late_are_read(tmp_path: Path, name: str) -> None:
    late = SAMPLE_ROWS + 300
    rows = _rows({late: {"is_truncated": True}, late + 1: {"model": "Qwen/Qwen3-0.6B"}})
    path = _write(tmp_path / name, rows, blank_every=97)
    read = read_rows([str(path)])
    frame = read.frame.collect()
    assert read.sources["truncated"] == "is_truncated"
    assert read.sources["model"] == "model"
    assert frame["truncated"].to_list().count(True) == 1
    assert frame["truncated"].null_count() == N - 1
    assert frame["model"].drop_nulls().to_list() == ["Qwen/Qwen3-0.6B"]


def test_the_route_counts_the_late_truncated_pass(tmp_path: Path) -> None:
    late = SAMPLE_ROWS + 101  # an odd row: reward 1, a pass
    path = _write(tmp_path / "rows.jsonl", _rows({late: {"truncated": True}}))
    report = run_route([str(path)]).to_dict()
    assert report["inputs"]["sources"]["truncated"] == "truncated"
    first = report["checks"][0]
    assert first["key"] == "truncated_passes" and first["status"] == "fail"
    assert first["measured"]["truncated_passes"] == 1
    assert first["measured"]["rows_with_truncation_recorded"] == 1


def test_without_late_keys_the_columns_are_the_sample_s(tmp_path: Path) -> None:
    path = _write(tmp_path / "rows.jsonl", _rows({}))
    read = read_rows([str(path)])
    assert read.sources["truncated"] == "not recorded (unknown)"


def test_a_resolved_field_is_never_switched_by_a_later_alias(tmp_path: Path) -> None:
    """``truncated`` beats ``is_truncated`` in the alias order, but the sample chose
    ``is_truncated``; a later row carrying ``truncated`` must not change that."""
    rows = _rows({SAMPLE_ROWS + 10: {"truncated": True}})
    for row in rows[:SAMPLE_ROWS]:
        row["is_truncated"] = False
    read = read_rows([str(_write(tmp_path / "rows.jsonl", rows))])
    assert read.sources["truncated"] == "is_truncated"


def test_unseen_paths_stop_at_the_first_missing_key_of_unresolved_tables() -> None:
    shape = Shape.from_rows([{"task_id": "a", "reward": 1, "response": {"id": 1}, "model": "m"}])
    paths = unseen_paths(shape)
    assert not any("model" in p or "model_name" in p for p in paths)  # the table is resolved
    assert {
        ("truncated",),
        ("is_truncated",),
        ("finish_reason",),
        ("response", "incomplete_details"),  # response seen: its missing child
        ("steps",),
        ("behavior_logprobs",),
        ("values",),
    } <= set(paths)


def test_keep_paths_keeps_only_what_lies_along_them() -> None:
    row = {
        "reward": 0.5,
        "model": "m",
        "is_truncated": True,
        "response": {"id": 2, "incomplete_details": {"reason": "max_output_tokens"}},
        "steps": [{"truncated": True, "x": 1}, {"x": 2}],
    }
    paths = [("is_truncated",), ("response", "incomplete_details"), ("steps", "[]", "truncated")]
    assert keep_paths(row, paths) == {
        "is_truncated": True,
        "response": {"incomplete_details": {"reason": "max_output_tokens"}},
        "steps": [{"truncated": True}, {}],
    }
    # a seen key holding another kind of value adds nothing
    assert keep_paths({"response": "text", "steps": 3}, paths) == {}


@pytest.mark.parametrize(
    ("extra", "field", "source"),
    [
        ({"reward": 0.5, "model": "m"}, "reward", "score"),
        ({"truncated": True, "model": "m"}, "truncated", "is_truncated"),
    ],
)
def test_a_late_row_found_for_one_key_brings_no_other(
    tmp_path: Path, extra: dict[str, Any], field: str, source: str
) -> None:
    """Found for its model, a late row also carries ``reward`` (a higher alias than the
    sample's ``score``) or ``truncated`` (higher than ``is_truncated``): neither switches."""
    rows = [
        {"task_id": f"t{i // 4}", "score": float(i % 2), "is_truncated": False} for i in range(N)
    ]
    rows[SAMPLE_ROWS + 10].update(extra)
    read = read_rows([str(_write(tmp_path / "rows.jsonl", rows))])
    frame = read.frame.collect()
    assert read.sources[field] == source
    assert read.sources["model"] == "model"
    assert frame["model"].drop_nulls().to_list() == ["m"]
    assert frame["reward"].null_count() == 0 and frame["truncated"].null_count() == 0


def test_rows_with_keys_numbers_lines_as_the_file_does(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(
        '{"a": 1}\n\n{"a": 2}\r\n{"finish_reason": "length"}\nnot json "finish_reason":\n'
    )
    source = Source(name=str(path), kind="jsonl", path=path)
    assert rows_with_keys(source, ["finish_reason"], after=0) == [(4, {"finish_reason": "length"})]
    assert rows_with_keys(source, ["finish_reason"], after=4) == []
    assert rows_with_keys(source, ["model"], after=0) == []
    assert rows_with_keys(source, [], after=0) == []


@pytest.mark.parametrize("nested", [False, True])
def test_a_late_key_of_any_value_is_found_by_the_one_scan(tmp_path: Path, nested: bool) -> None:
    """The scan itself looks for the top-level keys the sample lacks (read as any JSON text):
    a late list of log-probs is found whatever its shape; with the sample carrying a parent
    of a missing key (``response``), the file is searched line by line instead."""
    extra: dict[int, dict[str, Any]] = {SAMPLE_ROWS + 7: {"behavior_logprobs": [-0.5, -0.25]}}
    if nested:
        for i in range(N):
            extra.setdefault(i, {})["response"] = {"id": i}
    rows = _rows(extra)
    read = read_rows([str(_write(tmp_path / "rows.jsonl", rows))])
    assert read.has_logprobs is True
    assert read.frame.collect().height == N


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    first=st.integers(SAMPLE_ROWS, N - 1),
    option=st.sampled_from(["by", "map"]),
    nested=st.booleans(),
    gz=st.booleans(),
)
def test_a_column_an_option_names_is_found_past_the_sample(
    tmp_path_factory: pytest.TempPathFactory, first: int, option: str, nested: bool, gz: bool
) -> None:
    """``--by COLUMN`` and ``--map FIELD=COLUMN`` name a column the user says the rows carry;
    where a writer adds it only past the rows that choose the columns (a second run's rows
    appended to a first run's, a field a later version of the tool writes), it is read where
    it is, never refused as "the rows have no column" (which the route's own advice to route
    each model apart with ``--by model`` met on such a file)."""
    late = {i: ({"meta": {"grp": "b"}} if nested else {"grp": "b"}) for i in range(first, N)}
    if nested:  # the object is seen in the sample, its key only later
        for i in range(first):
            late[i] = {"meta": {"other": 1}}
    rows = _rows(late)
    column = "meta.grp" if nested else "grp"
    path = _write(tmp_path_factory.mktemp("late") / ("rows.jsonl.gz" if gz else "rows.jsonl"), rows)
    args = ["--by", column] if option == "by" else ["--map", f"model={column}"]
    result = CliRunner().invoke(app, ["route", str(path), "--format", "json", *args])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    if option == "by":
        slices = {s["slice"]: s["summary"]["rows"] for s in report["slices"]}
        assert slices == {"(none)": first, "b": N - first}, slices
    else:  # the rows before it name no model
        assert report["inputs"]["sources"]["model"] == f"{column} (--map)"
        on_policy = next(c for c in report["checks"] if c["key"] == "on_policy")
        assert on_policy["measured"]["models"] == {"b": N - first}


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    key=st.sampled_from(sorted(SCANNED_LATE)),
    first=st.integers(SAMPLE_ROWS, N - 2),
    gz=st.booleans(),
)
def test_a_version_first_written_past_the_sample_is_read(
    tmp_path_factory: pytest.TempPathFactory, key: str, first: int, gz: bool
) -> None:
    """A sampler that writes the policy version (or how many steps behind it sampled) only
    once it runs ahead of the trainer: rows past the sample at two versions, or one step
    behind, are an older copy's (Async), read wherever they sit; the rows before carry none.
    Check 6 passed on such a file ("rows from the model you train"), a firm GRPO."""
    lag = key in LAG_ALIASES
    late = {i: {key: (1 if lag else 6 + i % 2)} for i in range(first, N)}
    if lag:
        late[N - 1] = {key: 0}
    rows = [row | {"model": "Qwen/Qwen3-8B"} for row in _rows(late)]
    path = _write(tmp_path_factory.mktemp("v") / ("rows.jsonl.gz" if gz else "rows.jsonl"), rows)
    report = run_route([str(path)], model="Qwen/Qwen3-8B").to_dict()
    on_policy = next(c for c in report["checks"] if c["key"] == "on_policy")
    assert on_policy["measured"]["stale_rows"] >= 1, on_policy
    assert "async" in report["plan"], report["plan"]
