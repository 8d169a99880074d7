"""One registry: ``while formats`` lists what ``--input-format`` takes, and each name forces its
format (or refuses the file in one line)."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.commands import _common
from whilecli.errors import InputError
from whilecli.io.formats import FORMATS
from whilecli.io.plan import FORMATS as PLAN_FORMATS
from whilecli.io.read import read_rows


def test_formats_lists_what_input_format_takes() -> None:
    listed = json.loads(CliRunner().invoke(app, ["formats", "--json"]).output)["formats"]
    names = tuple(f["name"] for f in listed)
    assert names == _common.INPUT_FORMATS == tuple(PLAN_FORMATS) == tuple(f.name for f in FORMATS)
    assert "prime-rl" in names and "inspect-ai" in names and "csv" in names


@pytest.mark.parametrize("name", [f.name for f in FORMATS])
def test_every_listed_name_is_taken_by_input_format(name: str, tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"task_id": "a", "reward": i % 2}) + "\n" for i in range(4)))
    done = CliRunner().invoke(app, ["route", str(rows), "--input-format", name])
    assert done.exit_code in (0, 1, 2), done.output
    assert "one of" not in done.output  # the name is taken; the file may not be that format
    if done.exit_code == 2:
        lines = done.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("whilecli: error: "), done.output


def test_forcing_a_converted_format(tmp_path: Path) -> None:
    table = tmp_path / "rows.txt"
    table.write_text("task_id,reward\na,1\na,0\nb,1\nb,1\n")
    assert read_rows([str(table)], input_format="csv").frame.collect().height == 4
    traces = tmp_path / "traces.jsonl"
    episode = {"task": {"key": "k"}, "rewards": {"c": {"score": 1.0, "weight": 1.0}}}
    traces.write_text(json.dumps(episode) + "\n" + json.dumps(episode) + "\n")
    rows = read_rows([str(traces)], input_format="prime-rl")
    assert rows.format == "prime-rl" and rows.frame.collect()["task_id"].to_list() == ["k", "k"]
    with pytest.raises(InputError, match="--input-format inspect-ai: the file does not read as"):
        read_rows([str(traces)], input_format="inspect-ai")


def test_a_tsv_gz_is_read_with_tabs(tmp_path: Path) -> None:
    path = tmp_path / "rows.tsv.gz"
    path.write_bytes(gzip.compress(b"task_id\treward\na\t1\na\t0\nb\t1\nb\t1\n"))
    frame = read_rows([str(path)]).frame.collect()
    assert frame["task_id"].to_list() == ["a", "a", "b", "b"]


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.from_regex(r"0{0,2}[0-9]{1,3}(\.[0-9]{1,2}0?)?", fullmatch=True),
        min_size=1,
        max_size=8,
    ),
    st.sampled_from([",", "\t"]),
)
def test_csv_ids_are_text(
    tmp_path_factory: pytest.TempPathFactory, ids: list[str], separator: str
) -> None:
    """Ids read as written: 7 and 07, 1.1 and 1.10 are different tasks (a slow loop over the
    text keeps every id apart); only a whole number's trailing ``.0`` goes (``7.0`` is 7, as
    a JSON reader has it), so a float id a writer added beside an integer one is one task."""
    folder = tmp_path_factory.mktemp("csv")
    suffix = ".tsv" if separator == "\t" else ".csv"
    lines = [separator.join(["task_id", "reward"])]
    lines += [separator.join([i, str(n % 2)]) for n, i in enumerate(ids)]
    path = folder / f"rows{suffix}"
    path.write_text("\n".join(lines) + "\n")
    frame = read_rows([str(path)]).frame.collect()
    assert frame["task_id"].to_list() == [re.sub(r"^(\d+)\.0*$", r"\1", i) for i in ids]
    assert frame["reward"].to_list() == [float(n % 2) for n in range(len(ids))]


def test_sidecars_nested_past_the_parser_are_refused_naming_them(tmp_path: Path) -> None:
    """A side file the parser cannot take is refused naming it, never read as missing."""
    (tmp_path / "metadata.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "config.toml").write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    rows = tmp_path / "results.jsonl"
    rows.write_text(
        "".join(
            json.dumps({"example_id": i % 2, "reward": i % 2, "prompt": "p", "completion": "c"})
            + "\n"
            for i in range(4)
        )
    )
    with pytest.raises(InputError, match=r"metadata\.json: JSON nests deeper"):
        read_rows([str(rows)])


@pytest.mark.parametrize("forced", ["jsonl", "parquet"])
@pytest.mark.parametrize("written", ["rows.jsonl", "rows.parquet", "rows.csv", "doc.jsonl"])
def test_a_forced_plain_format_reads_only_that_format(
    tmp_path: Path, forced: str, written: str
) -> None:
    """``--input-format jsonl`` or ``parquet`` reads a file of that kind, and refuses any other
    in one line naming what the file reads as (never read as another kind in silence)."""
    rows = [{"task_id": f"t{i % 3}", "reward": float(i % 2)} for i in range(6)]
    path = tmp_path / written
    if written == "rows.parquet":
        import polars as pl

        pl.DataFrame(rows).write_parquet(path)
        reads_as = "parquet"
    elif written == "rows.csv":
        path.write_text(
            "task_id,reward\n" + "".join(f"{r['task_id']},{r['reward']}\n" for r in rows)
        )
        reads_as = "csv"
    elif written == "doc.jsonl":  # one JSON object on one line holding the rows
        path.write_text(json.dumps({"samples": rows}) + "\n")
        reads_as = "json"
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        reads_as = "jsonl"
    if reads_as == forced:
        assert read_rows([str(path)], input_format=forced).frame.collect().height == 6
        return
    with pytest.raises(InputError) as caught:
        read_rows([str(path)], input_format=forced)
    assert str(caught.value) == (
        f"{path}: --input-format {forced}: the file does not read as {forced} (it reads as"
        f" {reads_as})"
    )
