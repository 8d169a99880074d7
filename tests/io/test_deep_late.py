"""A row nested past the one JSON parser's depth guard is refused at its line wherever it
sits: in the rows the reader samples with Python and past them, where polars reads alone.

Generated files put one row of a given depth (nested lists or objects, and brackets inside
strings, which do not nest) at any line, before or after the first 1,000; the route's rows,
the row methods' table and update's batch refuse it at its line exactly when the parser
would (:func:`whilecli.jsonout.parse`, the slow reference), and read it otherwise.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli import jsonout
from whilecli.errors import InputError
from whilecli.io.batch import read_batch
from whilecli.io.read import read_rows
from whilecli.io.table import read_table


def nested(depth: int, kind: str) -> str:
    if kind == "list":
        return "[" * depth + "]" * depth
    if kind == "object":
        return '{"a": ' * depth + "1" + "}" * depth
    return json.dumps("[" * depth + "{" * depth)  # brackets inside a string: no nesting


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    depth=st.sampled_from([50, 99, 100, 101, 150]),
    kind=st.sampled_from(["list", "object", "text"]),
    at=st.sampled_from([3, 999, 1000, 1001, 1002, 1100]),
)
def test_a_deep_row_is_refused_at_its_line_wherever_it_is(
    tmp_path_factory: pytest.TempPathFactory, depth: int, kind: str, at: int
) -> None:
    lines = [
        json.dumps({"task_id": f"t{i % 40}", "reward": float(i % 2), "logprobs": [-0.1]})
        for i in range(1100)
    ]
    lines[at - 1] = lines[at - 1][:-1] + f', "extra": {nested(depth, kind)}}}'
    path = tmp_path_factory.mktemp("deep") / "rows.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        jsonout.parse(lines[at - 1])
        refused = False
    except jsonout.TooDeep:
        refused = True
    readers = {
        "route": lambda: read_rows([str(path)]).frame.collect(),
        "table": lambda: read_table([str(path)]),
        "batch": lambda: read_batch(path),
    }
    for name, read in readers.items():
        if refused:
            with pytest.raises(InputError, match="nested too deeply") as err:
                read()
            assert err.value.line == at, name
        else:
            read()
