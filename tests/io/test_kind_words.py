"""One table names a JSON value's kind in every reader's refusal (the plan's mixed-kind
column, inspect_ai's shape checks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError
from whilecli.io.formats import inspect_ai
from whilecli.io.read import read_rows
from whilecli.io.shape import KIND_WORDS, json_kind, kind_words

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(), inner, max_size=2),
    max_leaves=4,
)


@settings(max_examples=50)
@given(JSON_VALUES)
def test_every_json_value_has_its_words(value: object) -> None:
    assert kind_words(value) == KIND_WORDS[json_kind(value)]


@pytest.mark.parametrize(
    ("value", "words"),
    [(2.5, "a number"), (True, "a boolean"), ([1], "a JSON list"), ({"a": 1}, "a JSON object")],
)
def test_the_plan_names_a_mixed_column_with_the_table(
    tmp_path: Path, value: object, words: str
) -> None:
    path = tmp_path / "rows.jsonl"
    rows = [{"task_id": "a", "reward": 1.0, "model": "m"}, {"task_id": "b", "reward": 0.0}]
    rows[1]["model"] = value
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match=rf"rows\.jsonl:2: field 'model': holds {words} here"):
        read_rows([str(path)])


@pytest.mark.parametrize("sample", [None, 3, "s", [1]])
def test_inspect_names_a_sample_that_is_no_object_with_the_table(sample: object) -> None:
    log = {"eval": {"model": "m", "task": "t"}, "status": "success", "samples": [sample]}
    with pytest.raises(InputError, match=f"found {kind_words(sample)}$"):
        inspect_ai.from_log(log, "log.json")
