"""A file whose task id or reward key is an alias spelled another way (``Task_ID``, ``Task
ID``, ``TASK-ID``, ``taskId``, ``Reward``, ``SCORE``) is refused in one line that names the
key and the ``--map`` that reads it, quoted for the shell where the key holds a space; and the
command the line gives routes the file."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app

WORDS = {"task_id": ["task", "id"], "problem_id": ["problem", "id"], "doc_id": ["doc", "id"]}


@st.composite
def spelled(draw: st.DrawFn) -> tuple[str, str]:
    """An id alias in another case and with other separators than its own."""
    alias = draw(st.sampled_from(sorted(WORDS)))
    words = [draw(st.sampled_from([w, w.upper(), w.capitalize()])) for w in WORDS[alias]]
    key = draw(st.sampled_from(["_", " ", "-", ""])).join(words)
    return alias, key


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    id_key=spelled(),
    reward_key=st.sampled_from(["Reward", "REWARD", "Score", "is_correct"]),
    kind=st.sampled_from(["jsonl", "csv"]),
)
def test_an_alias_spelled_another_way_is_named_with_its_map(
    id_key: tuple[str, str], reward_key: str, kind: str, tmp_path: Path
) -> None:
    alias, key = id_key
    rows = [{key: f"t{i % 6}", reward_key: float(i % 3 == 0)} for i in range(24)]
    path = tmp_path / f"rows.{kind}"
    if kind == "csv":
        lines = [f"{key},{reward_key}"] + [f"{r[key]},{r[reward_key]}" for r in rows]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    runner = CliRunner()
    expected = [] if key == alias else [f"task_id={key}"]
    if reward_key in ("Reward", "REWARD", "Score"):
        expected.append(f"reward={reward_key}")
    given_maps: list[str] = []
    for _ in range(3):  # follow each refusal's --map, as a person would
        args = [a for m in given_maps for a in ("--map", m)]
        result = runner.invoke(app, ["route", str(path), *args], env={"COLUMNS": "400"})
        if result.exit_code != 2:
            break
        said = result.output.strip()
        assert "\n" not in said, said
        found = re.search(r"pass (--map (?:'[^']*'|\S+))", said)
        assert found is not None, said
        _, value = shlex.split(found.group(1))
        column = value.partition("=")[2]
        assert f"{column!r}" in said or f"reward={column}" in said, said
        given_maps.append(value)
    assert result.exit_code in (0, 1), result.output
    assert given_maps == expected, (given_maps, expected)


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    names=st.lists(
        st.sampled_from(["acc", "format", "correct", "length_penalty", "judge_score"]),
        min_size=1,
        max_size=3,
        unique=True,
    ),
    key=st.sampled_from(["reward", "score", "rewards"]),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_a_grade_of_named_parts_names_the_map_that_picks_one(
    names: list[str], key: str, kind: str, tmp_path: Path
) -> None:
    """``"reward": {"acc": 1, "format": 0.1}`` (a reward function each) is refused with the
    ``--map`` that reads one part, and that command routes the file on that part."""
    import polars as pl

    rows = [{"task_id": f"t{i % 6}", key: {n: float(i % 3 == 0) for n in names}} for i in range(24)]
    path = tmp_path / f"rows.{kind}"
    if kind == "parquet":
        pl.DataFrame(rows).write_parquet(path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    runner = CliRunner()
    result = runner.invoke(app, ["route", str(path)], env={"COLUMNS": "400"})
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    found = re.search(r"--map ([^\s;]+)", result.output)
    assert found is not None and found[1] in {f"reward={key}.{n}" for n in names}, result.output
    again = runner.invoke(app, ["route", str(path), "--map", found[1], "--format", "json"])
    assert again.exit_code in (0, 1), again.output
    assert json.loads(again.output)["summary"]["rows"] == 24
