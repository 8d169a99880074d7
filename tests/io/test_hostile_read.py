"""The route's reader on hostile files: one line naming file, line or row and field, exit 2,
never a silently switched field or a polars message."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io.aliases import MODEL_ALIASES, VERSION_ALIASES, unsure_model_alias
from whilecli.io.read import read_rows


def route(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["route", *args])
    return result.exit_code, result.output


def test_parquet_steps_truncated_list(tmp_path: Path) -> None:
    path = tmp_path / "steps.parquet"
    pl.DataFrame(
        {
            "task_id": ["a", "a", "b"],
            "reward": [1.0, 0.0, 0.0],
            "steps": [[{"truncated": True}], [{"truncated": False}], [{"truncated": False}]],
        }
    ).write_parquet(path)
    frame = read_rows([str(path)]).frame.collect()
    assert frame["truncated"].to_list() == [True, False, False]


def test_a_task_id_that_is_sometimes_an_object_is_refused_at_its_row(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    rows = [{"task_id": "x", "reward": 1.0}, {"task_id": {"a": 1}, "reward": 0.0}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match=r"rows\.jsonl:2: field 'task_id': holds a JSON object"):
        read_rows([str(path)])


@pytest.mark.parametrize(
    ("body", "what"),
    [
        (b'{"task_id": "a", "reward": 1}\n\xff\xfe\n', "UTF-8"),
        (b'{"task_id": "a", "reward": 1}\n' + b"[" * 5000 + b"]" * 5000 + b"\n", ""),
        (b'{"task_id": "a", "reward": 1}\n{"task_id": "b", "reward": }\n', "JSON"),
    ],
)
def test_bad_lines_are_one_line_errors(tmp_path: Path, body: bytes, what: str) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(body)
    code, out = route(str(path))
    assert code == 2 and out.count("\n") == 1 and "rows.jsonl" in out and what in out
    assert "Traceback" not in out and "polars" not in out.lower()


def test_corrupt_gzip(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"task_id": "a", "reward": 1}\n' * 100)[:40])
    code, out = route(str(path))
    assert code == 2 and out.count("\n") == 1 and "rows.jsonl.gz" in out


def test_parquet_named_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    pl.DataFrame({"task_id": ["a"], "reward": [1.0]}).write_parquet(path)
    code, out = route(str(path))
    assert code in (0, 2) and "Traceback" not in out and "internal error" not in out


def test_a_model_that_is_sometimes_a_number_is_refused_at_its_row(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    rows = [
        {"task_id": "a", "reward": 1.0, "model": "m"},
        {"task_id": "b", "reward": 0.0, "model": 5},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match=r"rows\.jsonl:2: field 'model': holds a number"):
        read_rows([str(path)])


def _nested(alias: str, value: object) -> dict[str, object]:
    head, _, rest = alias.partition(".")
    return {head: _nested(rest, value) if rest else value}


#: The sure places a model is named in (an object or a one-element list there is read by its
#: name, tests/io/test_field_places.py; an unsure place holding a number says nothing).
SURE_MODEL_PLACES = [
    a
    for a in MODEL_ALIASES
    if a not in VERSION_ALIASES
    and not unsure_model_alias(a)
    and "[" not in a
    and a.count(".") <= 1
    and not a.endswith((".name", ".id", ".model"))
]


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@pytest.mark.parametrize("value", [5, 1.5, True])
@pytest.mark.parametrize("alias", SURE_MODEL_PLACES[:12])
def test_a_model_alias_holding_no_names_is_refused_naming_file_and_field(
    tmp_path: Path, kind: str, value: object, alias: str
) -> None:
    rows = [{"task_id": f"t{i % 2}", "reward": float(i % 2), **_nested(alias, value)} for i in range(4)]  # fmt: skip
    path = tmp_path / f"rows.{kind}"
    if kind == "parquet":
        pl.DataFrame(rows).write_parquet(path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError) as err:
        read_rows([str(path)])
    said = str(err.value)
    assert "\n" not in said and str(path) in said and f"field '{alias}'" in said, said
    assert (f"{path}:1:" in said) == (kind == "jsonl"), said


@pytest.mark.parametrize("alias", ["model_version", "policy_version"])
def test_a_version_alias_of_numbers_is_a_version_not_a_refused_model(
    tmp_path: Path, alias: str
) -> None:
    path = tmp_path / "rows.jsonl"
    rows = [{"task_id": f"t{i % 2}", "reward": float(i % 2), alias: i} for i in range(4)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert read_rows([str(path)]).frame.collect().height == 4


_LINE_ENDS = {"\r": "CR alone", "\x85": "U+0085", "\u2028": "U+2028", "\u2029": "U+2029"}


@settings(max_examples=80, deadline=None)
@given(
    rows=st.integers(min_value=2, max_value=40),
    data=st.data(),
    end=st.sampled_from(sorted(_LINE_ENDS)),
    crlf=st.booleans(),
)
def test_rows_ending_in_a_line_end_other_than_lf_are_named_at_their_line(
    rows: int, data: st.DataObject, end: str, crlf: bool
) -> None:
    import tempfile

    swapped = data.draw(
        st.sets(st.integers(min_value=0, max_value=rows - 2), min_size=1), label="swapped"
    )
    lf = "\r\n" if crlf and end != "\r" else "\n"
    text = "".join(
        json.dumps({"task_id": f"t{i % 3}", "reward": float(i % 2)}) + (end if i in swapped else lf)
        for i in range(rows)
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rows.jsonl"
        path.write_bytes(text.encode("utf-8"))
        with pytest.raises(InputError) as err:
            read_rows([str(path)])
    said = str(err.value)
    line = min(swapped) + 1  # the first row ending so: its line, counted in LFs
    assert "\n" not in said and f"{path}:{line}:" in said, said
    assert _LINE_ENDS[end] in said and "Extra data" not in said, said
