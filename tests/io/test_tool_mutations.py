"""Every tool's layout with one value made hostile: read, or refused in one located line.

The generators of ``tests/io/test_tools.py`` write each tool's files as its writer does. Here
one value anywhere in one of those files (a JSON line, a JSON document, a Parquet cell) is
replaced by what a broken or hostile writer leaves: null, the wrong kind (a list, an object,
text, a boolean), an empty string or list, NaN's text, an integer past 64 bits, a value
nested past the depth guard. Each converter and the generic reader then reads the rows or
refuses them with :class:`~whilecli.errors.InputError`, one line that names the file; never
another exception (which the command line reports as exit 70), and the route of what it
reads never raises either.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tests.io.test_tools import CASES, TOOLS, write

from whilecli.errors import InputError, WhileError
from whilecli.io.read import read_rows
from whilecli.route import run_route

#: What a broken or hostile writer leaves in place of a value.
HOSTILE: list[Any] = [
    None,
    [],
    {},
    "",
    "NaN",
    "  ",
    True,
    [1, "two", None],
    {"value": None},
    2**70,
    -1.5e308,
    "x" * 2000,
    "\u202e\x00\x1b[2J",
]


def _deep() -> Any:
    value: Any = 1
    for _ in range(400):
        value = [value]
    return value


def _places(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value (its root included)."""
    out = [path]
    if isinstance(node, dict):
        for key, sub in node.items():
            out += _places(sub, (*path, key))
    elif isinstance(node, list):
        for i, sub in enumerate(node):
            out += _places(sub, (*path, i))
    return out


def _replace(node: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    node[path[0]] = _replace(node[path[0]], path[1:], value)
    return node


def mutate(content: Any, rng: random.Random, value: Any) -> Any | None:
    """``content`` (JSON Lines or a JSON document as text or bytes, or Parquet columns) with
    one value replaced; None where there is nothing to mutate (a zip, a pickle)."""
    if isinstance(content, dict):  # Parquet columns
        column = rng.choice(sorted(content))
        cells = list(content[column])
        if not cells:
            return None
        cells[rng.randrange(len(cells))] = None
        return {**content, column: cells}
    if isinstance(content, bytes):
        if content[:2] == b"PK":  # a zip: an .eval log, a torch.save file
            return None
        content = content.decode()
    text = content
    if not isinstance(text, str):
        return None
    try:
        doc = json.loads(text)
    except ValueError:
        lines = [line for line in text.splitlines() if line.strip()]
        try:
            rows = [json.loads(line) for line in lines]
        except ValueError:
            return None  # CSV, TSV or other text: the table tests cover them
        i = rng.randrange(len(rows))
        place = rng.choice(_places(rows[i]))
        rows[i] = _replace(rows[i], place, value)
        return "".join(json.dumps(r) + "\n" for r in rows)
    place = rng.choice(_places(doc))
    return json.dumps(_replace(doc, place, value), indent=1)


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    case=st.sampled_from(CASES),
    seed=st.integers(0, 10_000),
    value=st.sampled_from([*HOSTILE, "deep"]),
)
@example(case=("tinker", "math"), seed=461, value=True)  # one file keyed by a column of its own
def test_one_hostile_value_in_any_tool_layout_is_read_or_refused_in_one_line(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[str, str], seed: int, value: Any
) -> None:
    name, variant = case
    rng = random.Random(seed)
    dump = TOOLS[name](rng, variant)
    files = dict(dump["files"])
    target = rng.choice(sorted(files))
    changed = mutate(files[target], rng, _deep() if value == "deep" else value)
    if changed is None:
        return
    files[target] = changed
    folder = tmp_path_factory.mktemp("mutated")
    path = write(folder, {**dump, "files": files})
    try:
        rows = read_rows([str(path)])
    except InputError as err:
        message = str(err)
        assert "\n" not in message, message
        assert str(folder) in message or path.name in message or err.file, message
        return
    except WhileError:
        return  # a usage-level refusal (no rows to pool), one line by construction
    assert rows.frame.collect().height >= 0
    try:
        run_route(str(path))
    except WhileError as err:
        assert "\n" not in str(err), str(err)


def test_the_mutations_reach_every_kind_of_file() -> None:
    rng = random.Random(0)
    lines = mutate('{"a": 1}\n{"a": 2}\n', rng, "NaN")
    assert lines is not None and len(lines.splitlines()) == 2
    doc = mutate('{"a": [1, 2]}', rng, [])
    assert doc is not None and json.loads(doc) != {"a": [1, 2]}
    cells = mutate({"a": [1, 2]}, rng, None)
    assert cells is not None and sorted(cells["a"], key=str) in ([1, None], [2, None])
    assert mutate(b"PK\x03\x04", rng, None) is None  # a zip: the zip tests cover it
    assert mutate("task_id,reward\nt,1\n", rng, None) is None  # CSV: the table tests


@pytest.mark.parametrize(
    "key", ["task_id", "reward", "policy_version", "step", "truncated", "model", "prompt"]
)
@pytest.mark.parametrize("value", [2**70, -(2**64), 2**63])
def test_an_integer_past_64_bits_in_any_field_is_read_or_refused_at_its_line(
    tmp_path: Path, key: str, value: int
) -> None:
    """A policy_version of 2**70 exited 70 (polars could not build the column)."""
    rows = [{"task_id": f"t{i // 4}", "reward": float(i % 2), key: 1} for i in range(16)]
    rows[6][key] = value
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    try:
        run_route(str(path))
    except InputError as err:
        assert "\n" not in str(err) and str(err).startswith(str(path)), str(err)
