"""``--map`` reaches into lists: ``[N]`` one element, ``[]`` every element (one row each); a
path it cannot follow is refused with exit 2, never an internal error. ``while formats``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io.formats import FORMATS
from whilecli.io.plan import FORMATS as FORCEABLE
from whilecli.io.read import read_rows
from whilecli.io.shape import split_path

REAL = Path(__file__).resolve().parents[1] / "data" / "real"


def test_split_path() -> None:
    assert split_path("choices[0].review.result") == ("choices", "[0]", "review", "result")
    assert split_path("scores[]") == ("scores", "[]")
    assert split_path("a.b[].c") == ("a", "b", "[]", "c")


@pytest.fixture
def rows(tmp_path: Path) -> Path:
    path = tmp_path / "rows.jsonl"
    lines = [
        {"id": 1, "choices": [{"review": {"result": True}}], "scores": [1.0, 0.0, 1.0]},
        {"id": 2, "choices": [{"review": {"result": False}}], "scores": [0.0, 0.0]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def test_index_into_a_list(rows: Path) -> None:
    got = read_rows([str(rows)], mapping={"reward": "choices[0].review.result"})
    assert got.frame.collect()["reward"].to_list() == [1.0, 0.0]
    assert got.sources["reward"] == "choices[0].review.result (--map)"


def test_every_element_is_a_row(rows: Path) -> None:
    frame = read_rows([str(rows)], mapping={"reward": "scores[]"}).frame.collect()
    assert frame["reward"].to_list() == [1.0, 0.0, 1.0, 0.0, 0.0]
    assert frame["task_id"].to_list() == ["1", "1", "1", "2", "2"]


def test_out_of_range_index_names_the_row(rows: Path) -> None:
    with pytest.raises(InputError, match=r"rows\.jsonl:1: field 'choices\[3\]"):
        read_rows([str(rows)], mapping={"reward": "choices[3].review.result"})


@pytest.mark.parametrize(
    "path", ["choices.review", "nope[0]", "choices[0].nope", "scores[0][1]", "choices[].review"]
)
def test_paths_that_cannot_be_followed_exit_2(rows: Path, path: str) -> None:
    result = CliRunner().invoke(app, ["route", str(rows), "--map", f"reward={path}"])
    assert result.exit_code == 2, result.output
    assert "internal error" not in result.output


def test_formats_lists_every_format() -> None:
    names = {f.name for f in FORMATS}
    assert set(FORCEABLE) <= names
    assert {"inspect-ai", "evalscope", "helm", "atropos", "nemo-skills", "tau-bench"} <= names
    result = CliRunner().invoke(app, ["formats", "--json", "--aliases"])
    assert result.exit_code == 0
    report = json.loads(result.output)
    assert {f["name"] for f in report["formats"]} == names
    assert "symbolic_correct" in report["aliases"]["reward"]
    text = CliRunner().invoke(app, ["formats"]).output
    assert "inspect-ai" in text and "detected:" in text


# ------------------------------------------------------- a listed reward beside other columns


def _graded_generations(seed: int, tasks: int = 12) -> tuple[list[dict], list[bool], list[float]]:
    """Rows as a dataset of graded generations keeps them (one row per problem: lists of
    generations, grades and finish reasons, a chat list of one example beside them), with
    the truth per rollout: (rows, cut, reward)."""
    import random

    rnd = random.Random(seed)
    rows, cut, reward = [], [], []
    for t in range(tasks):
        k = rnd.randint(1, 4)
        grades = [rnd.random() < 0.5 for _ in range(k)]
        reasons = [rnd.choice(["stop", "length", "stop"]) for _ in range(k)]
        rows.append(
            {
                "problem": f"Solve {t}",
                "uuid": f"u{t}",
                "generations": [f"gen {t}.{j}" for j in range(k)],
                "correctness_math_verify": grades,
                "finish_reasons": reasons,
                "messages": [
                    {"role": "user", "content": f"Solve {t}"},
                    {"role": "assistant", "content": "one example answer"},
                ],
            }
        )
        cut += [r == "length" for r in reasons]
        reward += [float(g) for g in grades]
    return rows, cut, reward


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_a_listed_reward_beside_a_transcript_and_listed_reasons(
    tmp_path: Path, seed: int, kind: str
) -> None:
    """One rollout per element of the grade list, its flag from the reasons list beside it;
    the row's one transcript is not a draw of each (never read as one reply repeated)."""
    import polars as pl

    rows, cut, reward = _graded_generations(seed)
    path = tmp_path / f"rows.{kind}"
    if kind == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        pl.DataFrame(rows).write_parquet(path)
    mapping = {"reward": "correctness_math_verify[]", "truncated": "finish_reasons[]"}
    read = read_rows([str(path)], mapping=mapping)
    frame = read.frame.collect()
    assert frame["truncated"].to_list() == cut
    assert frame["reward"].to_list() == reward
    assert read.facts.repeated_tasks == 0
    only = read_rows([str(path)], mapping={"reward": mapping["reward"]})
    assert only.frame.collect()["reward"].to_list() == reward


def test_a_listed_flag_needs_a_listed_reward(tmp_path: Path) -> None:
    rows, _, _ = _graded_generations(0)
    path = tmp_path / "rows.jsonl"
    text = "".join(json.dumps(r | {"reward": 1.0}) + "\n" for r in rows)
    path.write_text(text, encoding="utf-8")
    done = CliRunner().invoke(
        app, ["route", str(path), "--map", "truncated=finish_reasons[]", "--map", "task_id=uuid"]
    )
    assert done.exit_code == 2 and "reward=COLUMN[]" in done.output
