"""``--map FIELD=COLUMN`` onto any column of any type: the rows read, or one located refusal.

A column of text, numbers, flags, lists or objects, or the very column another field reads
(``--map task_id=reward``, ``--map truncated=reward``), mapped to any canonical field of a
JSON Lines or Parquet file, ends routed or refused with an :class:`InputError` that names the
file; never another exception (``--map truncated=reward`` exited 70 with a polars error).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError
from whilecli.io.read import MAPPABLE, read_rows
from whilecli.route import run_route
from whilecli.route.slices import Slices

#: Columns of every kind a file holds beside the canonical ones.
COLUMNS: dict[str, Any] = {
    "text": lambda i: f"w{i % 3}",
    "words": lambda i: ["pass", "fail", "yes"][i % 3],
    "number": lambda i: float(i % 2),
    "count": lambda i: i,
    "flag": lambda i: i % 2 == 0,
    "list": lambda i: [i, i + 1],
    "object": lambda i: {"a": i},
    "sparse": lambda i: None if i % 2 else "x",
}


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    maps=st.dictionaries(
        st.sampled_from(MAPPABLE),
        st.sampled_from([*COLUMNS, "task_id", "reward", "finish_reason"]),
        min_size=1,
        max_size=3,
    ),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_any_column_mapped_to_any_field_reads_or_is_refused(
    tmp_path: Path, maps: dict[str, str], kind: str
) -> None:
    rows = [
        {
            "task_id": f"t{i % 4}",
            "reward": float(i % 3 == 0),
            "finish_reason": "length" if i % 5 == 0 else "stop",
            **{name: make(i) for name, make in COLUMNS.items()},
        }
        for i in range(16)
    ]
    path = tmp_path / f"rows.{kind}"
    frame = pl.DataFrame(rows)
    if kind == "parquet":
        frame.write_parquet(path)
    else:
        frame.write_ndjson(path)
    try:
        route = run_route([str(path)], mapping=maps)
    except InputError as err:
        said = str(err)
        assert "\n" not in said and str(path) in said, said
        return
    assert not isinstance(route, Slices) and route.summary["rows"] <= 16


@pytest.mark.parametrize("field", [f for f in MAPPABLE if f not in ("task_id", "reward", "passed")])
def test_the_grades_column_feeds_no_other_field(tmp_path: Path, field: str) -> None:
    path = tmp_path / "rows.jsonl"
    pl.DataFrame({"task_id": ["a", "b"] * 4, "reward": [0.0, 1.0] * 4}).write_ndjson(path)
    with pytest.raises(InputError, match=rf"--map {field}=reward: 'reward' is the grade's column"):
        run_route([str(path)], mapping={field: "reward"})


#: Lists and objects a task id may be mapped to (a prompt's messages): read as their JSON text.
HELD = {
    "strings": lambda i: [f"t{i % 3}", "x"],
    "numbers": lambda i: [i % 3],
    "messages": lambda i: [{"role": "user", "content": f"q{i % 3}"}],
    "object": lambda i: {"name": f"t{i % 3}", "n": i % 2},
    "nested": lambda i: [[f"t{i % 3}"]],
}


def _write(rows: list[dict[str, Any]], path: Path) -> None:
    frame = pl.DataFrame(rows)
    if path.suffix == ".parquet":
        frame.write_parquet(path)
    else:
        frame.write_ndjson(path)


@pytest.mark.parametrize("held", sorted(HELD))
def test_task_id_mapped_to_lists_or_objects_reads_the_same_ids_in_every_reader(
    tmp_path: Path, held: str
) -> None:
    rows = [{"task_id": f"t{i}", "reward": float(i % 2), "col": HELD[held](i)} for i in range(12)]
    ids = {}
    for kind in ("jsonl", "parquet"):
        path = tmp_path / f"rows.{kind}"
        _write(rows, path)
        frame = read_rows([str(path)], mapping={"task_id": "col"}).frame.collect()
        ids[kind] = frame["task_id"].to_list()
    assert ids["jsonl"] == ids["parquet"]
    assert len(set(ids["jsonl"])) == len({json.dumps(HELD[held](i)) for i in range(12)})


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@pytest.mark.parametrize("held", sorted(HELD))
@pytest.mark.parametrize("step", ["[]", "[].a", "[].role"])
def test_task_id_mapped_to_each_element_of_a_list_is_refused_in_every_reader(
    tmp_path: Path, kind: str, held: str, step: str
) -> None:
    rows = [{"task_id": f"t{i}", "reward": float(i % 2), "col": HELD[held](i)} for i in range(8)]
    path = tmp_path / f"rows.{kind}"
    _write(rows, path)
    col = f"col{step}"
    with pytest.raises(InputError) as err:
        run_route([str(path)], mapping={"task_id": col})
    said = str(err.value)
    assert "\n" not in said and str(path) in said, said
    assert "field 'col" in said or f"--map task_id={col}" in said, said
    assert "polars" not in said and "expression" not in said, said


class _Tagged(pa.ExtensionType):
    def __init__(self) -> None:
        super().__init__(pa.binary(4), "whilecli.test.tagged")

    def __arrow_ext_serialize__(self) -> bytes:
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: Any, serialized: bytes) -> _Tagged:
        return cls()


def _not_text(name: str, n: int) -> pa.Array:
    if name == "duration":
        return pa.array(list(range(n)), pa.duration("ms"))
    if name == "list":
        return pa.array([[f"t{i}"] for i in range(n)], pa.list_(pa.string()))
    if name == "fixed list":
        return pa.array([[i, i] for i in range(n)], pa.list_(pa.int64(), 2))
    return pa.ExtensionArray.from_storage(
        _Tagged(), pa.array([f"t{i:03d}".encode()[:4] for i in range(n)], pa.binary(4))
    )


@pytest.mark.parametrize(
    ("name", "mapped"),
    [
        ("duration", False),
        ("duration", True),
        ("extension", False),
        ("extension", True),
        ("list", False),  # mapped, a list reads as its JSON text (above)
        ("fixed list", False),
    ],
)
def test_a_parquet_task_id_of_a_type_with_no_text_is_refused_naming_the_field(
    tmp_path: Path, name: str, mapped: bool
) -> None:
    with contextlib.suppress(pa.ArrowKeyError):  # registered by an earlier case
        pa.register_extension_type(_Tagged())
    column = "my_id" if mapped else "task_id"
    path = tmp_path / "rows.parquet"
    table = pa.table({column: _not_text(name, 8), "reward": pa.array([0.0, 1.0] * 4)})
    pq.write_table(table, path)
    with pytest.raises(InputError) as err:
        run_route([str(path)], mapping={"task_id": column} if mapped else None)
    said = str(err.value)
    assert "\n" not in said and str(path) in said and f"field '{column}'" in said, said
    assert "polars" not in said and "expression" not in said and "cast" not in said, said
