"""A key written twice in one object with two different values is refused at its line
wherever it sits: in the rows the reader parses with Python and past them, where polars
reads alone (and would take the first value in silence).

Generated files of a few rows or past the sample (1,000 rows) repeat one field of one row,
at the top level or inside an object the reading looks into, with a different value (or
the same one, which is the one value it is). Every command's reader
(:func:`tests.support.read_helpers.every_reader`) refuses it in one line naming the file,
the line and the field, or reads it when the value is the same.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.read_helpers import every_reader

from whilecli.errors import InputError
from whilecli.io.read import SAMPLE_ROWS

#: Where a repeated field goes: its path, and the value the row holds there.
FIELDS = {
    ("task_id",): lambda i: f"t{i // 4}",
    ("reward",): lambda i: float(i % 2),
    ("prompt",): lambda i: f"question {i // 4}",
    ("completion",): lambda i: f"answer {i}",
    ("model",): lambda i: "org/model",
    ("truncated",): lambda i: False,
    ("info",): lambda i: {"note": "n", "score": 1.0},
    ("info", "score"): lambda i: 1.0,
}
#: A second value unlike the first, per field.
OTHER = {
    ("task_id",): "elsewhere",
    ("reward",): 0.5,
    ("prompt",): "another question",
    ("completion",): "another answer",
    ("model",): "org/other",
    ("truncated",): True,
    ("info",): {"note": "m", "score": 0.0},
    ("info", "score"): 0.0,
}


def row_text(i: int, repeat: tuple[str, ...] | None, second: object, spacing: str) -> str:
    """Row ``i`` as JSON text, with the key at ``repeat`` written a second time."""
    row = {
        "task_id": FIELDS[("task_id",)](i),
        "prompt": FIELDS[("prompt",)](i),
        "completion": FIELDS[("completion",)](i),
        "reward": FIELDS[("reward",)](i),
        "model": "org/model",
        "truncated": False,
        "info": {"note": "n", "score": 1.0},
    }
    if repeat is None:
        return json.dumps(row)
    if len(repeat) == 1:
        text = json.dumps(row)[:-1]
        return text + f', "{repeat[0]}"{spacing}: {json.dumps(second)}' + "}"
    inner = json.dumps(row["info"])[:-1] + f', "{repeat[1]}"{spacing}: {json.dumps(second)}' + "}"
    rest = {k: v for k, v in row.items() if k != "info"}
    return json.dumps(rest)[:-1] + f', "info": {inner}' + "}"


@settings(
    max_examples=16,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    size=st.sampled_from([12, 40, 1030]),
    at=st.integers(1, 1030),
    field=st.sampled_from(sorted(FIELDS)),
    same=st.integers(0, 4),
    spacing=st.sampled_from(["", " "]),
)
def test_a_repeated_key_is_refused_at_its_line_wherever_it_is(
    tmp_path_factory: pytest.TempPathFactory,
    size: int,
    at: int,
    field: tuple[str, ...],
    same: int,
    spacing: str,
) -> None:
    at = (at - 1) % size + 1
    second = FIELDS[field](at - 1) if same == 0 else OTHER[field]
    lines = [row_text(i, field if i == at - 1 else None, second, spacing) for i in range(size)]
    path = tmp_path_factory.mktemp("repeat") / "rows.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    readers = every_reader(path)
    if field[0] == "info" and at > SAMPLE_ROWS:
        # a key no field is read from: the sample's guard refuses it, and past the sample
        # the readers that keep whole rows (update's); the others never read its value
        readers = readers[3:]
    for read in readers:
        if same == 0:
            read()
            continue
        with pytest.raises(InputError, match="written twice") as err:
            read()
        assert err.value.line == at, (size, at, field)
        assert field[-1] in str(err.value) and path.name in str(err.value)
        assert "\n" not in str(err.value)


def test_a_field_read_under_many_names_is_no_repeat(tmp_path: Path) -> None:
    """Names written more often than polars reads values (nulls, the same name in a nested
    object) send the rows to the exact search, which finds no repeat and reads them."""
    rows = [
        {"task_id": f"t{i // 4}", "reward": None if i % 7 == 0 else 1.0, "x": {"reward": 3}}
        for i in range(1100)
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for read in every_reader(path):
        read()


def listed_row(i: int, element: int | None, second: object, spacing: str) -> str:
    """Row ``i`` with its grades in a list of samples (reasoning-gym's ``completions[].score``),
    element ``element`` writing ``score`` a second time."""
    samples = [{"text": f"answer {j}", "score": float((i + j) % 2)} for j in range(3)]
    parts = [json.dumps(s) for s in samples]
    if element is not None:
        parts[element] = parts[element][:-1] + f', "score"{spacing}: {json.dumps(second)}' + "}"
    head = json.dumps({"task_id": f"t{i // 4}", "prompt": f"question {i // 4}"})[:-1]
    return head + ', "completions": [' + ", ".join(parts) + "]}"


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    size=st.sampled_from([12, 1030]),
    at=st.integers(1, 1030),
    element=st.integers(0, 2),
    same=st.integers(0, 3),
    spacing=st.sampled_from(["", " "]),
)
def test_a_key_repeated_inside_a_list_element_is_refused_at_its_line(
    tmp_path_factory: pytest.TempPathFactory,
    size: int,
    at: int,
    element: int,
    same: int,
    spacing: str,
) -> None:
    """A grade read from the objects of a list, written twice in one of them: refused at its
    line before the sample and past it, as at the top level."""
    at = (at - 1) % size + 1
    first = float((at - 1 + element) % 2)
    second = first if same == 0 else 1.0 - first
    lines = [listed_row(i, element if i == at - 1 else None, second, spacing) for i in range(size)]
    path = tmp_path_factory.mktemp("listed") / "rows.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for read in every_reader(path):
        if same == 0:
            read()
            continue
        with pytest.raises(InputError, match="written twice") as err:
            read()
        assert err.value.line == at, (size, at, element)
        assert "score" in str(err.value) and path.name in str(err.value)
