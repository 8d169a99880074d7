"""A key with a dot in it (``"scores.acc"``, as a flattened table names its columns) is one key:
the path the reader's hints name for it (``--map reward=scores.acc``) reads it, nested or
flat, beside nested keys it could be taken for, in JSON Lines and Parquet, for every field and
``--by``. The hint once named a ``--map`` the reader then refused ("no column").

Each pool is written twice, the grade under a drawn path whose keys may hold dots and under a
plain ``reward``: the route of the first with its ``--map`` equals the route of the second.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError
from whilecli.io.read import read_rows
from whilecli.io.shape import Shape, split_path
from whilecli.route import run_route

WORD = st.sampled_from(["scores", "acc", "feedback", "correct", "x", "m"])


@st.composite
def dotted_paths(draw: st.DrawFn) -> list[str]:
    """Keys from outermost to innermost, each one to three words joined by dots."""
    depth = draw(st.integers(1, 3))
    return [".".join(draw(st.lists(WORD, min_size=1, max_size=3))) for _ in range(depth)]


def nest(keys: list[str], value: Any) -> dict[str, Any]:
    for key in reversed(keys):
        value = {key: value}
    return value  # type: ignore[no-any-return]


def rows(keys: list[str] | None, decoy: bool) -> list[dict[str, Any]]:
    out = []
    for i in range(48):
        grade = float((i * 7 + i // 4) % 3 == 0)
        row: dict[str, Any] = {"task_id": f"t{i // 4}", "completion": f"c{i}"}
        if keys is None:
            row["reward"] = grade
        else:
            row.update(nest(keys, grade))
            if decoy and len(keys) == 1 and "." in keys[0]:
                # the nested path the dotted key could be taken for, holding other numbers
                head, _, rest = keys[0].partition(".")
                row.setdefault(head, {})
                if isinstance(row[head], dict):
                    row[head][rest] = 0.5
        out.append(row)
    return out


def write(path: Path, data: list[dict[str, Any]]) -> Path:
    if path.suffix == ".parquet":
        pl.DataFrame(data).write_parquet(path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in data))
    return path


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(keys=dotted_paths(), decoy=st.booleans(), suffix=st.sampled_from([".jsonl", ".parquet"]))
def test_the_dotted_path_of_a_key_reads_it(
    tmp_path: Path, keys: list[str], decoy: bool, suffix: str
) -> None:
    path = ".".join(keys)
    if keys == ["reward"]:
        return
    plain = run_route(str(write(tmp_path / f"plain{suffix}", rows(None, False))))
    dotted = write(tmp_path / f"dotted{suffix}", rows(keys, decoy))
    try:
        got = run_route(str(dotted), mapping={"reward": path})
    except InputError as err:  # only a collision of the drawn keys with the decoy may refuse
        assert decoy, str(err)
        return
    assert got.summary["pass_at_1"] == plain.summary["pass_at_1"]
    assert got.route == plain.route and got.exit_code == plain.exit_code
    assert got.inputs["sources"]["reward"] == f"{path} (--map)"


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_the_hint_for_a_flattened_table_is_a_map_that_reads_it(tmp_path: Path, suffix: str) -> None:
    data = [
        {"task_id": f"t{i // 4}", "scores.acc": float(i % 3 == 0), "scores.len": 0.25 * (i % 4)}
        for i in range(40)
    ]
    path = write(tmp_path / f"flat{suffix}", data)
    with pytest.raises(InputError, match=r"--map reward=scores\.acc") as refused:
        read_rows([str(path)])
    assert "scores.len" in str(refused.value)
    got = run_route(str(path), mapping={"reward": "scores.acc"})
    assert got.summary["rows"] == 40
    sliced = read_rows([str(path)], mapping={"reward": "scores.acc", "model": "scores.len"})
    assert sliced.sources["model"] == "scores.len (--map)"


def test_a_nested_path_wins_over_a_key_with_a_dot() -> None:
    shape = Shape.from_rows([{"a": {"b": 1}, "a.b": 2, "c.d": {"e": 3}}])
    assert shape.literal("a.b") == "a.b"
    assert split_path(shape.literal("c.d.e")) == ("c.d", "e")
    assert shape.literal("nowhere.at.all") == "nowhere.at.all"


def _grades(i: int, salt: int) -> float:
    return float((i * 7 + i // 4 + salt) % 3 == 0)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(head=WORD, tail=WORD, suffix=st.sampled_from([".jsonl", ".parquet"]))
def test_a_key_with_a_dot_beside_the_nested_path_is_named_and_can_be_chosen(
    tmp_path: Path, head: str, tail: str, suffix: str
) -> None:
    """A key ``"a.b"`` beside a nested ``a`` → ``b`` holding other grades: ``--map
    reward=a.b`` reads the nested path and the notes name the key and how to write it;
    ``--map reward=a\\.b`` reads the key. Each reading routes as the same grades under a
    plain ``reward``."""
    dotted = f"{head}.{tail}"
    data = [
        {
            "task_id": f"t{i // 4}",
            "completion": f"c{i}",
            dotted: _grades(i, 0),
            head: {tail: _grades(i, 1)},
        }
        for i in range(48)
    ]
    path = write(tmp_path / f"both{suffix}", data)
    plain = {
        salt: run_route(
            str(
                write(
                    tmp_path / f"plain{salt}{suffix}",
                    [
                        {
                            "task_id": r["task_id"],
                            "completion": r["completion"],
                            "reward": _grades(i, salt),
                        }
                        for i, r in enumerate(data)
                    ],
                )
            )
        )
        for salt in (0, 1)
    }
    nested = run_route(str(path), mapping={"reward": dotted})
    assert nested.summary["pass_at_1"] == plain[1].summary["pass_at_1"]
    assert any(f"the key '{dotted}'" in n and f"{head}\\.{tail}" in n for n in nested.notes)
    key = run_route(str(path), mapping={"reward": f"{head}\\.{tail}"})
    assert key.summary["pass_at_1"] == plain[0].summary["pass_at_1"]
    assert not any("also hold the key" in n for n in key.notes)


def test_an_escaped_key_the_rows_lack_is_named_as_written(tmp_path: Path) -> None:
    path = write(tmp_path / "rows.jsonl", rows(None, False))
    with pytest.raises(
        InputError, match=r"--map reward=scores\\\.acc: the rows have no column 'scores\\\.acc'"
    ):
        read_rows([str(path)], mapping={"reward": "scores\\.acc"})
