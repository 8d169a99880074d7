"""A path that exists is read as itself (DESIGN section 1, "Sources"): brackets, stars and
question marks in a real file name are no glob, in the expander and in every polars and pyarrow
call, even beside a file the name, read as a pattern, would match. Only a path that does not
exist is expanded as a glob."""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError
from whilecli.io.batch import read_batch
from whilecli.io.read import read_rows
from whilecli.io.sources import expand_paths, literal
from whilecli.io.table import read_table
from whilecli.route.summary_header import parquet_footer

#: Name pieces: plain text and every character a glob reads.
PIECES = st.sampled_from(
    ["a", "b", "1", "x", "[", "]", "*", "?", "[ab]", "[!c]", "{a,b}", "-", "^"]
)
names = (
    st.lists(PIECES, min_size=1, max_size=6)
    .map("".join)
    .filter(lambda n: any(c in n for c in "[*?") and not n.startswith("-"))
)


def neighbour(name: str) -> str | None:
    """A file name the pattern ``name`` matches that is not ``name`` itself, else None."""
    out, i = "", 0
    while i < len(name):
        c = name[i]
        if c == "*":
            out += "zz"
        elif c == "?":
            out += "q"
        elif c == "[" and "]" in name[i + 2 :]:
            end = name.index("]", i + 2)
            body = name[i + 1 : end]
            out += "c" if body.startswith("!") and "c" not in body else body.lstrip("!^")[:1] or "c"
            i = end
        else:
            out += c
        i += 1
    if out != name and fnmatch.fnmatchcase(out, name):
        return out
    return None


def rows(task: str, n: int) -> list[dict[str, object]]:
    return [
        {
            "task_id": task,
            "reward": float(i % 2),
            "logprobs": [-0.1, -0.2],
            "behavior_logprobs": [-0.1, -0.2],
            "action_mask": [1, 1],
        }
        for i in range(n)
    ]


def write(path: Path, data: list[dict[str, object]]) -> None:
    if path.suffix == ".parquet":
        pl.DataFrame(data).write_parquet(path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in data))


@settings(max_examples=25, deadline=None)
@given(name=names, suffix=st.sampled_from([".jsonl", ".parquet"]))
def test_an_odd_name_is_read_as_itself_beside_what_it_would_match(
    tmp_path_factory: pytest.TempPathFactory, name: str, suffix: str
) -> None:
    folder = tmp_path_factory.mktemp("odd")
    mine = folder / f"{name}{suffix}"
    write(mine, rows("mine", 4))
    other = neighbour(name)
    if other is not None:
        write(folder / f"{other}{suffix}", rows("other", 6))
    assert [s.path for s in expand_paths([str(mine)])] == [mine]
    frame = read_rows([str(mine)]).frame.collect()
    assert frame["task_id"].to_list() == ["mine"] * 4
    assert read_table([str(mine)]).canonical["task_id"].to_list() == ["mine"] * 4
    assert read_batch(mine).size == 4
    assert pl.scan_ndjson(literal(mine)).collect().height == 4 if suffix == ".jsonl" else True
    if suffix == ".parquet":
        footer = parquet_footer(mine)
        assert footer is not None and "task_id" in footer.names


def test_a_path_that_does_not_exist_is_a_glob(tmp_path: Path) -> None:
    write(tmp_path / "a1.jsonl", rows("a", 2))
    write(tmp_path / "a2.jsonl", rows("b", 2))
    found = expand_paths([str(tmp_path / "a[12].jsonl")])
    assert [s.path for s in found] == [tmp_path / "a1.jsonl", tmp_path / "a2.jsonl"]
    write(tmp_path / "a[12].jsonl", rows("c", 2))
    assert [s.path for s in expand_paths([str(tmp_path / "a[12].jsonl")])] == [
        tmp_path / "a[12].jsonl"
    ]
    with pytest.raises(InputError, match="glob matches no row file"):
        expand_paths([str(tmp_path / "z*.jsonl")])
