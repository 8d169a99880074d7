"""`whilecli update --method groupwise|rm` and `whilecli ada`, end to end through a Typer app."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest
import typer
from typer.testing import CliRunner

from whilecli.commands._common import user_errors
from whilecli.commands.ada import ada_command, run_ada
from whilecli.commands.rowwise import run_row_method
from whilecli.errors import InputError, UsageError

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command("update")
@user_errors
def _update(
    rows: str,
    method: str = typer.Option(..., "--method"),
    mode: str | None = typer.Option(None, "--mode"),
    floor: float | None = typer.Option(None, "--floor"),
    cap: float | None = typer.Option(None, "--cap"),
    min_factor: float | None = typer.Option(None, "--min-factor"),
    hack_zero: bool | None = typer.Option(None, "--hack-zero/--no-hack-zero"),
    pass_threshold: float = typer.Option(1.0, "--pass-threshold"),
    output: str | None = typer.Option(None, "-o", "--output"),
    force: bool = typer.Option(False, "--force"),
    fmt: str = typer.Option("text", "--format"),
) -> None:
    code = run_row_method(
        method,
        rows,
        mode=mode,
        floor=floor,
        cap=cap,
        min_factor=min_factor,
        hack_zero=hack_zero,
        pass_threshold=pass_threshold,
        output=output,
        force=force,
        fmt=fmt,
    )
    raise typer.Exit(code)


app.command("ada")(ada_command)
runner = CliRunner()

GAR_ROWS = [
    {"prompt_id": "a", "reward": 1, "factor": 1.0, "score": 2.0},
    {"prompt_id": "a", "reward": 1, "factor": 0.5, "score": 0.0},
    {"prompt_id": "a", "reward": 0, "score": 1.0},
    {"prompt_id": "a", "reward": 0, "score": -1.0},
    {"prompt_id": "b", "reward": 1, "factor": 0.9, "score": 0.0},
    {"prompt_id": "b", "reward": 1, "factor": 0.2, "score": 0.0},
]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_groupwise_advantage_end_to_end(tmp_path: Path) -> None:
    rows = write_jsonl(tmp_path / "rows.jsonl", GAR_ROWS)
    out = tmp_path / "out.parquet"
    result = runner.invoke(app, ["update", str(rows), "--method", "groupwise", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "groups touched" in result.stdout and f"wrote rows: {out}" in result.stdout
    frame = pl.read_parquet(out)
    assert frame["advantage"].to_list() == pytest.approx([2 / 3, 1 / 3, -0.5, -0.5, 0.0, 0.0])
    assert frame["reward"].to_list()[4:] == [1.0, 1.0]  # all-pass group b is unchanged
    again = runner.invoke(app, ["update", str(rows), "--method", "groupwise", "-o", str(out)])
    assert again.exit_code == 2 and "exists; pass --force" in again.stderr
    forced = runner.invoke(
        app, ["update", str(rows), "--method", "groupwise", "-o", str(out), "--force", "--cap", "1"]
    )
    assert forced.exit_code == 0
    # cap 1: λ = 1, passes get f·A = [0.5, 0.25], mean re-subtracted (−0.0625)
    assert pl.read_parquet(out)["advantage"].to_list()[:4] == pytest.approx(
        [0.5625, 0.3125, -0.4375, -0.4375]
    )


def test_groupwise_json_and_stdout_rows(tmp_path: Path) -> None:
    rows = write_jsonl(tmp_path / "rows.jsonl", GAR_ROWS)
    result = runner.invoke(app, ["update", str(rows), "--method", "groupwise", "--format", "json"])
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert report["mode"] == "advantage" and report["stats"]["groups_touched"] == 1
    assert report["stats"]["lambda_mean"] == pytest.approx(4 / 3)
    assert report["columns"]["task_id"] == "prompt_id"
    assert report["output"] is None and report["spread"]["n"] == 2
    piped = runner.invoke(app, ["update", str(rows), "--method", "groupwise", "-o", "-"])
    assert piped.exit_code == 0
    lines = [json.loads(x) for x in piped.stdout.splitlines()]
    assert [round(r["advantage"], 3) for r in lines] == [0.667, 0.333, -0.5, -0.5, 0.0, 0.0]
    assert "groups touched" in piped.stderr


def test_rows_from_stdin() -> None:
    text = "".join(json.dumps(r) + "\n" for r in GAR_ROWS)
    result = runner.invoke(
        app, ["update", "-", "--method", "groupwise", "--format", "json"], input=text
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["stats"]["groups_touched"] == 1


def test_groupwise_reward_mode_and_spread_warning(tmp_path: Path) -> None:
    rows = write_jsonl(
        tmp_path / "rows.jsonl",
        [
            {"task_id": "a", "reward": 1.0, "solution_score": 0.8, "behavior_score": 1.0},
            {"task_id": "a", "reward": 1.0, "solution_score": 0.8, "behavior_score": 1.0},
            {"task_id": "a", "reward": 0.0, "solution_score": 0.1, "behavior_score": 1.0},
            {"task_id": "b", "reward": 1.0, "solution_score": None, "behavior_score": 1.0},
        ],
    )
    out = tmp_path / "out.jsonl"
    result = runner.invoke(
        app, ["update", str(rows), "--method", "groupwise", "--mode", "reward", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "warning: std of the scores 0.00 < 0.05" in result.stdout
    back = pl.read_ndjson(out)
    assert back["reward"].to_list() == pytest.approx([0.8, 0.8, 0.0, 1.0])
    assert back["reward_original"].to_list() == [1.0, 1.0, 0.0, 1.0]
    assert "grader missing rows" in result.stdout


def test_rm_end_to_end(tmp_path: Path) -> None:
    rows = write_jsonl(tmp_path / "rows.jsonl", GAR_ROWS)
    out = tmp_path / "rm.parquet"
    result = runner.invoke(
        app, ["update", str(rows), "--method", "rm", "--format", "json", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["stats"]["pairs"] == 2 and report["stats"]["accuracy"] == 1.0
    assert "program" in report["why_rarely"]
    grads = pl.read_parquet(out)["rm_grad"].to_list()
    # pair (0, 2): Δ = 1 → ∓σ(−1); pair (1, 3): Δ = 1 → ∓σ(−1); b is unpaired
    s = 1 / (1 + 2.718281828459045)
    assert grads == pytest.approx([-s, -s, s, s, 0.0, 0.0])
    text = runner.invoke(app, ["update", str(rows), "--method", "rm"])
    assert "the program is the reward" in text.stdout


def test_bad_input_names_file_line_and_field(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        '{"task_id": "a", "reward": 1, "factor": 0.5}\n'
        '{"task_id": "a", "reward": 0}\n'
        '{"task_id": "a", "reward": 1, "factor": 2.5}\n'
    )
    out = tmp_path / "out.parquet"
    result = runner.invoke(app, ["update", str(rows), "--method", "groupwise", "-o", str(out)])
    assert result.exit_code == 2
    assert f"{rows}:3: field 'factor': value 2.5 is outside (0.0, 1.0]" in result.stderr
    assert "Traceback" not in result.output and not out.exists()
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"task_id": "a", "reward": 1}\n{"task_id": \n')
    result = runner.invoke(app, ["update", str(broken), "--method", "rm"])
    assert result.exit_code == 2 and f"{broken}:2: not valid JSON" in result.stderr
    with pytest.raises(InputError, match=re.escape(f"{rows}: field 'score': no reward-model")):
        run_row_method("rm", str(rows))
    with pytest.raises(UsageError, match="groupwise or rm"):
        run_row_method("grpo", str(rows))
    with pytest.raises(UsageError, match="extension"):
        run_row_method("groupwise", str(rows), output=str(tmp_path / "out.csv"))
    with pytest.raises(UsageError, match=r"floor must be in \[0, 1\) \(default 0\)"):
        run_row_method("groupwise", str(rows), floor=2.0)
    nan = tmp_path / "nan.jsonl"
    nan.write_text(
        '{"task_id": "a", "reward": 1, "factor": 0.5}\n\n{"task_id": "a", "reward": NaN}\n'
    )
    result = runner.invoke(app, ["update", str(nan), "--method", "groupwise"])
    # as the route reads it: NaN parses, and a NaN grade is an ungraded row, left out and named
    assert result.exit_code == 0, result.output
    assert "1 of 2 rows are ungraded" in result.stdout and f"{nan} line 3" in result.stdout
    missing = runner.invoke(app, ["update", str(tmp_path / "nope.jsonl"), "--method", "rm"])
    assert missing.exit_code == 2 and "no such file" in missing.stderr


ADA_ROWS = (
    [{"task_id": "a", "reward": r} for r in (1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0)]
    + [{"task_id": "b", "reward": 0.0} for _ in range(8)]
    + [{"task_id": "c", "reward": 0.9} for _ in range(16)]
)


def test_ada_end_to_end(tmp_path: Path) -> None:
    rows = write_jsonl(tmp_path / "rows.jsonl", ADA_ROWS)
    # c's sixteen rewards of 0.9 are partial credit on half the graded rows: as the route
    # does, ada refuses them without a threshold
    refused = runner.invoke(app, ["ada", str(rows)])
    assert refused.exit_code == 2 and "strictly between 0 and 1" in refused.stderr
    nxt, sel = tmp_path / "next.jsonl", tmp_path / "sel.parquet"
    args = ["ada", str(rows), "--next-round", str(nxt), "-o", str(sel), "--max-rounds", "2"]
    args += ["--pass-threshold", "1"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "retired share" in result.stdout and "grpo flat share" in result.stdout
    assert "max_rounds = 2" in result.stdout  # c drew 2 rounds, all right: exhausted
    assert pl.read_ndjson(nxt)["task_id"].to_list() == ["b"]
    selection = pl.read_parquet(sel)
    assert selection["task_id"].to_list() == ["a"] * 4
    assert selection["advantage"].to_list() == pytest.approx([0.625, -0.375, -0.375, 0.625])
    again = runner.invoke(app, args)
    assert again.exit_code == 2 and "exists; pass --force" in again.stderr
    # c's rewards of 0.9 fail at the pass threshold 1.0 ...
    flags = ["--format", "json", "--exit", "positive", "--pass-threshold", "1"]
    js = runner.invoke(app, ["ada", str(rows), *flags])
    report = json.loads(js.stdout)
    assert report["next_round"] == ["b", "c"] and report["knobs"]["pass_threshold"] == 1.0
    assert report["columns"]["passed"] == "reward ≥ 1"
    assert any("strictly between 0 and 1" in n for n in report["notes"])
    # ... and pass at 0.7
    flags = ["--format", "json", "--exit", "positive", "--pass-threshold", "0.7"]
    report = json.loads(runner.invoke(app, ["ada", str(rows), *flags]).stdout)
    assert report["next_round"] == ["b"] and report["knobs"]["exit"] == "positive"
    assert report["stats"]["retired"] == 2 and report["knobs"]["pass_threshold"] == 0.7


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--keep", "1"], "--keep must be an integer >= 2 (default 4), got 1"),
        (["--round-size", "2"], "--round-size must be an integer >= keep (4) (default 8)"),
        (["--max-rounds", "0"], "(default 4), got 0"),
        (["--exit", "all"], "--exit must be balanced or positive (default balanced)"),
        (["--pass-threshold", "nan"], "--pass-threshold must be a finite number (default 1.0)"),
        (["--threshold", "nan"], "--pass-threshold must be a finite number (default 1.0)"),
        (["--threshold", "0.5", "--pass-threshold", "0.5"], "old name of --pass-threshold"),
        (["--format", "yaml"], "--format must be text or json"),
    ],
)
def test_ada_refuses_bad_knobs(tmp_path: Path, flags: list[str], message: str) -> None:
    rows = write_jsonl(tmp_path / "rows.jsonl", ADA_ROWS)
    result = runner.invoke(app, ["ada", str(rows), *flags])
    assert result.exit_code == 2
    assert message in result.stderr


def test_ada_refuses_one_file_for_both(tmp_path: Path) -> None:
    rows = write_jsonl(tmp_path / "rows.jsonl", ADA_ROWS)
    same = str(tmp_path / "x.parquet")
    with pytest.raises(UsageError, match="same file"):
        run_ada(str(rows), next_round=same, output=same)
