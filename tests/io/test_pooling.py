"""Pooling (DESIGN section 1): files of different evaluations are refused unless pooled on
purpose, and ``--by source`` / ``--by COLUMN`` route each slice apart in every format."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.io.read import PoolingError, read_rows

REAL = Path(__file__).resolve().parents[1] / "data" / "real"
WIKI = REAL / "verifiers/wiki_search"
WORDLE = REAL / "verifiers/wordle"


def write(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_two_environments_are_refused_and_named() -> None:
    with pytest.raises(PoolingError, match=r"different evaluations.*wiki-search.*wordle"):
        read_rows([str(WIKI), str(WORDLE)], pass_threshold=1.0)
    rows = read_rows([str(WIKI), str(WORDLE)], pass_threshold=1.0, pool=True)
    assert rows.frame.collect().height == 230


def test_one_environment_two_models_pools() -> None:
    assert read_rows([str(WIKI)]).frame.collect().height == 200


def test_same_id_different_prompts_is_refused(tmp_path: Path) -> None:
    a = write(
        tmp_path / "a.jsonl", [{"id": i, "prompt": f"add {i}", "reward": 1.0} for i in range(5)]
    )
    b = write(
        tmp_path / "b.jsonl", [{"id": i, "prompt": f"spell {i}", "reward": 0.0} for i in range(5)]
    )
    with pytest.raises(PoolingError, match=r"task id '0' carries different prompts"):
        read_rows([str(a), str(b)])
    same = write(
        tmp_path / "c.jsonl", [{"id": i, "prompt": f"add {i}", "reward": 0.0} for i in range(5)]
    )
    assert read_rows([str(a), str(same)]).frame.collect().height == 10


def test_cli_refuses_with_exit_2_and_offers_the_flags() -> None:
    result = CliRunner().invoke(app, ["route", str(WIKI), str(WORDLE), "--pass-threshold", "1"])
    assert result.exit_code == 2
    assert "--by source" in result.output and "--pool" in result.output


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "github"])
def test_by_source_routes_each_file(fmt: str) -> None:
    args = ["route", str(WIKI), str(WORDLE), "--pass-threshold", "1", "--by", "source"]
    result = CliRunner().invoke(app, [*args, "--format", fmt])
    assert result.exit_code == 0, result.output
    if fmt == "json":
        report = json.loads(result.output)
        assert report["by"] == "source" and len(report["slices"]) == 4
        assert [s["tasks"] for s in report["summary"]] == [100, 100, 5, 5]
        assert {s["route"] for s in report["slices"]} >= {"single-rollout"}
    else:
        assert result.output.count("results.jsonl") >= 4


def test_by_column_routes_each_value(tmp_path: Path) -> None:
    rows = [
        {"task_id": f"{d}{t}", "reward": float((t + r) % 2), "difficulty": d}
        for d in ("easy", "hard")
        for t in range(6)
        for r in range(4)
    ]
    path = write(tmp_path / "rows.jsonl", rows)
    result = CliRunner().invoke(app, ["route", str(path), "--by", "difficulty", "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert [s["slice"] for s in report["summary"]] == ["easy", "hard"]
    assert [s["rows"] for s in report["summary"]] == [24, 24]
    bad = CliRunner().invoke(app, ["route", str(path), "--by", "nope"])
    assert bad.exit_code == 2 and "--by nope" in bad.output


def test_check_and_diff_take_pool_too(tmp_path: Path) -> None:
    runner = CliRunner()
    args = [str(WIKI), str(WORDLE), "--pass-threshold", "1"]
    assert runner.invoke(app, ["check", *args]).exit_code == 2
    pooled = runner.invoke(app, ["check", *args, "--pool"])
    # pooled, the rows route; a judge (judge_reward_func) grades the wiki rows, unaudited
    assert pooled.exit_code == 1 and "judge-unaudited" in pooled.output, pooled.output
    mixed = tmp_path / "mixed"
    shutil.copytree(WIKI, mixed / "wiki")
    shutil.copytree(WORDLE, mixed / "wordle")
    both = ["diff", str(mixed), str(WIKI), "--pass-threshold", "1"]
    refused = runner.invoke(app, both)
    assert refused.exit_code == 2 and "--pool" in refused.output
    assert runner.invoke(app, [*both, "--pool"]).exit_code in (0, 1)


def _two_evaluations(folder: Path) -> Path:
    """One folder of two files whose task ids carry different prompts, each k = 4 with
    log-probs, so every row command can read them."""
    for name, words in (("a", "add"), ("b", "spell")):
        rows = [
            {
                "task_id": f"t{t}",
                "prompt": f"{words} {t}",
                "completion": f"reply {j}",
                "reward": float((t + j) % 2),
                "logprobs": [-0.5, -0.25],
                "behavior_logprobs": [-0.5, -0.25],
                "factor": 1.0,
            }
            for t in range(8)
            for j in range(4)
        ]
        write(folder / f"{name}.jsonl", rows)
    return folder


ROW_COMMANDS = {
    "route": ["route"],
    "ada": ["ada"],
    "grpo": ["update", "--method", "grpo"],
    "groupwise": ["update", "--method", "groupwise"],
}


@pytest.mark.parametrize("command", list(ROW_COMMANDS))
def test_every_command_that_reads_rows_as_one_pool_refuses_two_evaluations(
    tmp_path: Path, command: str
) -> None:
    """ada and the methods read the same pool the route reads: one task id with two prompts
    in two files is refused by each, in the route's words, and each takes ``--pool``
    (``ada`` and ``update`` once merged the two prompts into one task's group)."""
    folder = _two_evaluations(tmp_path / "rows")
    args = [*ROW_COMMANDS[command], str(folder)]
    if command in ("grpo", "groupwise"):
        args += ["-o", str(tmp_path / "out.jsonl"), "--force"]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 2, refused.output
    assert "carries different prompts" in refused.output and "--pool" in refused.output
    pooled = CliRunner().invoke(app, [*args, "--pool"])
    assert pooled.exit_code in (0, 1), pooled.output
