"""Rows as a table (``whilecli.io.table``): the row methods read what the route reads.

For every input the table's canonical columns (task id, reward, pass, truncation, model)
equal ``read_rows(...).frame.collect()``, row for row, and every input column sits beside
them; ``ada`` and the row methods refuse a rubric sum as ``route`` does, take
``--pass-threshold`` (``ada --threshold`` still works, with a note), and read directories.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io.read import read_rows
from whilecli.io.table import frame_table, read_table

REAL = Path(__file__).resolve().parent.parent / "data" / "real"
PRIME = REAL / "prime-rft/security-verifiers/j1i1ys9rpdcluvtqneql2o4l/results.jsonl"
WORDLE = REAL / "verifiers/wordle"
WORDLE_41 = WORDLE / "gpt-4.1-mini__816ec3b0/results.jsonl"
SHARED = Path("/work/shared/data-real")
GSM8K = SHARED / "verifiers/gsm8k"
LMEVAL = next((REAL / "lm-eval/negotiationtom/Qwen__Qwen3-8B").glob("samples_*.jsonl"))
runner = CliRunner()

ROWS = [
    {"problem_id": 7, "score": 1.0, "factor": 0.5, "finish_reason": "stop"},
    {"problem_id": 7, "score": 0.0, "factor": None, "finish_reason": "length"},
    {"problem_id": 8, "score": 0.25, "factor": 0.9, "model": "m@3"},
    {"problem_id": "p", "score": True, "factor": 0.1},
]


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text(
        "".join(json.dumps(r) + "\n" + ("\n" if i == 1 else "") for i, r in enumerate(rows))
    )
    return path


def _inputs(tmp_path: Path) -> dict[str, tuple[list[str], float | None]]:
    plain = _jsonl(tmp_path / "plain.jsonl", ROWS[:3])
    parquet = tmp_path / "rows.parquet"
    pl.DataFrame(ROWS[:3]).write_parquet(parquet)
    gz = tmp_path / "rows.jsonl.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    parts = tmp_path / "dir"
    parts.mkdir()
    _jsonl(parts / "a.jsonl", ROWS[:2])
    pl.DataFrame(ROWS[2:3]).write_parquet(parts / "b.parquet")
    rubric = tmp_path / "rubric.jsonl"
    _jsonl(
        rubric,
        [
            {"task_id": "t", "rewards": {"acc": {"score": 1.0, "weight": 0.75}, "fmt": None}},
            {"task_id": "t", "rewards": {"acc": {"score": 0.0}, "fmt": {"score": 1.0}}},
        ],
    )
    return {
        "jsonl": ([str(plain)], 1.0),  # 0.25 on a third of the rows: a threshold is needed
        "parquet": ([str(parquet)], 1.0),
        "gzip": ([str(gz)], 1.0),
        "directory": ([str(parts)], 1.0),
        "rewards-dict": ([str(rubric)], 1.0),
        "prime-rft": ([str(PRIME)], None),
        "vf-eval": ([str(WORDLE_41)], 1.0),
        "vf-eval-dir": ([str(WORDLE)], 1.0),
        "gsm8k-dir": ([str(GSM8K)], None),
        "lm-eval": ([str(LMEVAL)], None),
        "two-files": ([str(plain), str(PRIME)], 1.0),
    }


NAMES = [
    "jsonl",
    "parquet",
    "gzip",
    "directory",
    "rewards-dict",
    "prime-rft",
    "vf-eval",
    "vf-eval-dir",
    "gsm8k-dir",
    "lm-eval",
    "two-files",
]


@pytest.mark.parametrize("name", NAMES)
def test_the_table_reads_what_the_route_reads(tmp_path: Path, name: str) -> None:
    paths, threshold = _inputs(tmp_path)[name]
    if not all(Path(p).exists() for p in paths):
        pytest.skip(f"{paths} not here")
    if name == "gsm8k-dir":  # an intermediate save: refused by both, the same way
        with pytest.raises(InputError, match="nothing was generated") as by_table:
            read_table(paths, pass_threshold=threshold)
        with pytest.raises(InputError, match="nothing was generated") as by_route:
            read_rows(paths, pass_threshold=threshold)
        assert str(by_table.value) == str(by_route.value)
        return
    table = read_table(paths, pass_threshold=threshold)
    route = read_rows(paths, pass_threshold=threshold)
    want = route.frame.collect()
    assert table.canonical.columns == want.columns
    assert table.canonical.equals(want)
    assert table.frame.height == table.canonical.height
    assert table.columns == route.sources
    assert table.format == route.format


def test_extra_columns_sit_beside_their_rows(tmp_path: Path) -> None:
    plain = _jsonl(tmp_path / "plain.jsonl", ROWS)
    table = read_table([str(plain)], pass_threshold=1.0)
    assert table.canonical["task_id"].to_list() == ["7", "7", "8", "p"]
    assert table.frame["factor"].to_list() == [0.5, None, 0.9, 0.1]
    # a Prime RFT row keeps its own columns beside the (step, problem_id) key
    prime = read_table([str(PRIME)])
    raw = pl.read_ndjson(PRIME)
    keys = raw.select(pl.concat_str(pl.col("step"), pl.col("problem_id"), separator=":"))
    assert prime.canonical["task_id"].to_list() == keys.to_series().to_list()
    assert prime.frame["sample_id"].to_list() == raw["sample_id"].to_list()


def test_errors_name_the_file_and_line_of_a_table_row(tmp_path: Path) -> None:
    a = _jsonl(tmp_path / "a.jsonl", ROWS[:2])  # a blank line after the second row
    b = _jsonl(tmp_path / "b.jsonl", ROWS[:3])
    table = read_table([str(a), str(b)], pass_threshold=1.0)
    assert str(table.error("bad", row=4, field="factor")) == f"{b}:4: field 'factor': bad"
    assert str(table.error("bad", row=1)) == f"{a}:2: bad"
    parquet = tmp_path / "rows.parquet"
    pl.DataFrame(ROWS[:3]).write_parquet(parquet)
    got = read_table([str(parquet)], pass_threshold=1.0)
    assert str(got.error("bad", row=2)) == f"{parquet}: row 2: bad"
    memory = frame_table(pl.DataFrame({"task_id": ["a"], "reward": [1.0]}))
    assert str(memory.error("bad", row=0, field="x")) == "row 0: field 'x': bad"


def test_bad_rows_are_refused_as_the_route_refuses_them(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "a", "reward": 1}\n\n{"task_id": "a", "reward": "x"}\n')
    with pytest.raises(InputError) as ours:
        read_table([str(bad)])
    with pytest.raises(InputError) as theirs:
        read_rows([str(bad)])
    assert str(ours.value) == str(theirs.value)
    assert str(ours.value).startswith(f"{bad}:3: field 'reward'")
    with pytest.raises(InputError, match=r"^row 1: field 'task_id': no task id"):
        frame_table(pl.DataFrame({"task_id": ["a", None], "reward": [1.0, 0.0]}))


def test_a_bad_value_in_a_document_names_its_row_as_the_route_does(tmp_path: Path) -> None:
    doc = tmp_path / "rows.json"  # a JSON array: its elements are rows, not lines
    rows = [{"task_id": "a", "reward": 1.0}, {"task_id": "a", "reward": 0.0}]
    doc.write_text(json.dumps([*rows, {"task_id": "b", "reward": "x"}]))
    with pytest.raises(InputError) as ours:
        read_table([str(doc)])
    with pytest.raises(InputError) as theirs:
        read_rows([str(doc)])
    assert str(ours.value) == str(theirs.value)
    assert str(ours.value).startswith(f"{doc}: entry 2: field 'reward'")


def test_optional_fields_read_as_null(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "pairs.jsonl", [{"chosen_score": 1.0, "rejected_score": 0.0}])
    with pytest.raises(InputError, match="no task id column"):
        read_table([str(path)])
    table = read_table([str(path)], optional=("task_id", "reward"))
    assert table.absent == {"task_id", "reward"}
    assert table.canonical["task_id"].to_list() == [None]
    assert table.frame["chosen_score"].to_list() == [1.0]


def test_a_reward_just_past_1_by_rounding_is_inside(tmp_path: Path) -> None:
    """Within the pass rule's tolerance (float32's, 2⁻²²) of 0 or 1 is inside [0, 1]; past it
    is refused."""
    frame = pl.DataFrame({"task_id": ["a", "a"], "reward": [1.0 + 1.2e-7, -1e-10]})
    assert frame_table(frame).canonical["passed"].to_list() == [True, False]
    with pytest.raises(InputError, match="outside"):
        frame_table(frame.with_columns(reward=pl.Series([1.0 + 3e-7, 0.0])))


# --- the commands ---------------------------------------------------------------------


def _error_line(result) -> str:
    return next(line for line in result.stderr.splitlines() if "error:" in line)


def test_ada_refuses_the_rubric_sum_as_route_does() -> None:
    route = runner.invoke(app, ["route", str(WORDLE_41)])
    ada = runner.invoke(app, ["ada", str(WORDLE_41)])
    assert route.exit_code == ada.exit_code == 2
    assert _error_line(ada) == _error_line(route)
    assert "check_answer_reward_func" in _error_line(ada)
    rows = runner.invoke(app, ["update", str(WORDLE_41), "--method", "rm"])
    assert rows.exit_code == 2 and "outside [0, 1]" in rows.stderr
    ok = runner.invoke(app, ["ada", str(WORDLE_41), "--pass-threshold", "1", "--format", "json"])
    assert ok.exit_code == 0, ok.output
    report = json.loads(ok.stdout)
    assert report["knobs"]["pass_threshold"] == 1.0
    assert report["columns"]["task_id"] == "example_id"


def test_ada_threshold_is_a_deprecated_name() -> None:
    old = runner.invoke(app, ["ada", str(WORDLE_41), "--threshold", "1", "--format", "json"])
    new = runner.invoke(app, ["ada", str(WORDLE_41), "--pass-threshold", "1", "--format", "json"])
    assert old.exit_code == new.exit_code == 0, old.output
    assert json.loads(old.stdout) == json.loads(new.stdout)
    notes = [line for line in old.stderr.splitlines() if line]
    assert len(notes) == 1 and "--threshold is deprecated" in notes[0]
    assert "--pass-threshold" in notes[0] and new.stderr == ""
    help_text = runner.invoke(app, ["ada", "--help"]).stdout
    assert "--pass-threshold" in help_text and "--threshold " not in help_text


def test_ada_and_the_row_methods_read_a_directory(tmp_path: Path) -> None:
    ada = runner.invoke(app, ["ada", str(WORDLE), "--pass-threshold", "1", "--format", "json"])
    assert ada.exit_code == 0, ada.output
    assert ada.stdout and json.loads(ada.stdout)["stats"]["rows"] == 30
    parts = tmp_path / "rows"
    parts.mkdir()
    rows = [
        {"prompt_id": "a", "reward": 1, "factor": 1.0},
        {"prompt_id": "a", "reward": 1, "factor": 0.5},
        {"prompt_id": "a", "reward": 0},
        {"prompt_id": "a", "reward": 0},
    ]
    _jsonl(parts / "one.jsonl", rows[:2])
    pl.DataFrame(rows[2:]).write_parquet(parts / "two.parquet")
    out = tmp_path / "out.jsonl"
    result = runner.invoke(
        app, ["update", str(parts), "--method", "groupwise", "-o", str(out), "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    advantage = pl.read_ndjson(out)["advantage"].to_list()
    assert advantage == pytest.approx([2 / 3, 1 / 3, -0.5, -0.5])


def test_row_method_errors_name_the_file_of_the_row(tmp_path: Path) -> None:
    good = _jsonl(tmp_path / "a.jsonl", [{"task_id": "a", "reward": 1, "factor": 0.5}])
    bad = _jsonl(
        tmp_path / "b.jsonl",
        [{"task_id": "a", "reward": 0}, {"task_id": "a", "reward": 1, "factor": 2.0}],
    )
    result = runner.invoke(app, ["update", str(good), "--method", "groupwise"])
    assert result.exit_code == 0, result.output
    both = runner.invoke(app, ["update", str(tmp_path), "--method", "groupwise"])
    assert both.exit_code == 2
    assert f"{bad}:2: field 'factor': value 2.0 is outside (0.0, 1.0]" in both.stderr
    assert "polars" not in both.stderr.lower() and "Traceback" not in both.output


def test_ada_and_the_row_methods_take_map_and_stdin(tmp_path: Path) -> None:
    rows = [
        {"q": "a", "ok": 1, "reward": 5.0, "factor": 1.0},
        {"q": "a", "ok": 1, "reward": 5.0, "factor": 0.5},
        {"q": "a", "ok": 0, "reward": 5.0},
        {"q": "a", "ok": 0, "reward": 5.0},
    ]
    path = _jsonl(tmp_path / "rows.jsonl", rows)
    flags = ["--map", "task_id=q", "--map", "reward=ok", "--format", "json"]
    ada = runner.invoke(app, ["ada", str(path), *flags])
    assert ada.exit_code == 0, ada.output
    report = json.loads(ada.stdout)
    assert report["columns"]["task_id"] == "q (--map)" and report["stats"]["retired"] == 1
    gar = runner.invoke(app, ["update", str(path), "--method", "groupwise", *flags])
    assert gar.exit_code == 0, gar.output
    assert json.loads(gar.stdout)["stats"]["groups_touched"] == 1
    piped = runner.invoke(app, ["ada", "-", *flags], input=path.read_text())
    assert piped.exit_code == 0 and json.loads(piped.stdout)["stats"] == report["stats"]
