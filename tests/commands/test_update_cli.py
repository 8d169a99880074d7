"""`whilecli update`: knobs, batch files in, stats and notes out, one row per trajectory written."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import torch
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.io.batch import read_batch_rows
from whilecli.methods.batch import Batch
from whilecli.methods.registry import METHODS, make_method
from whilecli.methods.sao import SAO

DATA = Path(__file__).parents[1] / "data" / "batch_single.jsonl"
EXAMPLE = Path(__file__).parents[2] / "examples" / "data" / "batch.jsonl"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["update", *args])
    return result.exit_code, result.output


@pytest.mark.parametrize("method", ["flash_reinforce", "sao", "bpco"])
def test_each_method_prints_stats_and_notes(method: str) -> None:
    code, out = run("--method", method, str(DATA), "--format", "json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["method"] == method and doc["trajectories"] == 8
    assert 0 <= doc["stats"]["admitted_share"] <= 1
    assert isinstance(doc["notes"], list) and doc["output"] is None
    code, text = run("--method", method, str(DATA))
    assert code == 0 and "admitted share" in text


def test_writes_rows_equal_to_the_library_and_refuses_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "out.parquet"
    code, text = run("--method", "sao", str(DATA), "--ratio", "0.8,1.5", "-o", str(out))
    assert code == 0, text
    rows = read_batch_rows(DATA)
    batch = Batch.from_rows(rows)
    update = SAO(ratio=(0.8, 1.5)).update(batch)
    back = pq.read_table(out).to_pylist()
    assert len(back) == batch.size
    for i, row in enumerate(back):
        n = len(rows[i]["logprobs"])
        assert row["coefficients"] == update.coefficients[i, :n].tolist()
        assert row["advantages"] == update.advantages[i, :n].tolist()
        assert row["task_id"] == rows[i]["task_id"]
    code, text = run("--method", "sao", str(DATA), "-o", str(out))
    assert code == 2 and "--force" in text
    code, _ = run("--method", "sao", str(DATA), "-o", str(out), "--force")
    assert code == 0


def test_example_batch_runs() -> None:
    code, out = run("--method", "sao", str(EXAMPLE))
    assert code == 0, out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--method", "flash_reinforce", "--beta", "0.1"],
            "--beta does not apply to flash_reinforce",
        ),
        (["--method", "sao", "--trust", "0.1"], "--trust does not apply to sao"),
        (["--method", "flash_reinforce", "--trust", "-1"], "default 0.003"),
        (["--method", "sao", "--ratio", "0.7"], "LOW,HIGH"),
        (["--method", "sao", "--ratio", "1.2,6"], "default (0.7, 6.0)"),
        (["--method", "bpco", "--reward-range", "1,0"], "--reward-range must be LO,HI"),
        (
            ["--method", "grpo", "--loss-type", "dr_grpo", "--max-len", "0"],
            "grpo: --max-len must be an integer ≥ 1",
        ),
        (["--method", "grpo", "--max-len", "8"], "--max-len applies only with --loss-type dr_grpo"),
        (["--method", "nope"], "known: flash_reinforce, sao, bpco"),
        (["--method", "sao", "--format", "xml"], "--format"),
        (["--method", "sao", "--dtype", "float16"], "--dtype"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args: list[str], message: str) -> None:
    code, out = run(*args, str(DATA))
    assert code == 2
    assert message in out
    assert "Traceback" not in out


def test_bad_batch_names_file_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    rows = [json.loads(line) for line in DATA.read_text().splitlines()][:3]
    rows[2]["values"] = [2.0] * len(rows[2]["values"])
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out = run("--method", "bpco", str(bad))
    assert code == 2
    assert "bad.jsonl:3: field 'values'" in out and "reward_range" in out
    code, out = run("--method", "flash_reinforce", str(bad))
    assert code == 0
    rows[1]["logprobs"][0] = 0.7
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out = run("--method", "flash_reinforce", str(bad))
    assert code == 2 and "bad.jsonl:2: field 'logprobs'" in out
    no_values = tmp_path / "nv.jsonl"
    no_values.write_text(json.dumps({"reward": 1.0, "logprobs": [-0.1]}) + "\n")
    code, out = run("--method", "sao", str(no_values))
    assert code == 2 and "values" in out
    code, out = run("--method", "sao", str(tmp_path / "missing.jsonl"))
    assert code == 2 and "no such file" in out


def test_map_and_dtype(tmp_path: Path) -> None:
    path = tmp_path / "b.jsonl"
    path.write_text(json.dumps({"grade": 1.0, "reward": "ignored", "logprobs": [-0.2]}) + "\n")
    code, out = run(
        "--method",
        "flash_reinforce",
        str(path),
        "--map",
        "reward=grade",
        "--format",
        "json",
        "--dtype",
        "float32",
    )
    assert code == 0, out
    doc = json.loads(out)
    assert doc["sources"]["reward"] == "grade" and doc["dtype"] == "float32"


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU refusal")
def test_cuda_without_gpu_refused() -> None:
    code, out = run("--method", "sao", str(DATA), "--device", "cuda")
    assert code == 2 and "no CUDA device" in out


def test_registry_passes_only_given_knobs() -> None:
    assert list(METHODS)[:3] == ["flash_reinforce", "sao", "bpco"]
    assert make_method("sao", {"gae_alpha": 2.0, "ratio": None}).gae_alpha == 2.0
    assert make_method("bpco", {}).clip == 0.2
    with pytest.raises(Exception, match="does not apply"):
        make_method("bpco", {"trust": 0.1})


def test_rae_state_file_and_correction(tmp_path: Path) -> None:
    pytest.importorskip("whilecli.methods.corrections")
    if "rae" not in METHODS or not hasattr(METHODS["rae"], "load_state"):
        pytest.skip("rae is not available")
    state = tmp_path / "state.json"
    code, out = run("--method", "rae", str(DATA), "--state", str(state), "--format", "json")
    assert code == 0, out
    first = json.loads(state.read_text())
    code, out = run("--method", "rae", str(DATA), "--state", str(state), "--correction", "icepop")
    assert code == 0, out
    assert json.loads(state.read_text()) != first  # the baselines moved on
    code, out = run("--method", "sao", str(DATA), "--state", str(state))
    assert code == 2 and "--state does not apply to sao" in out


def test_json_never_holds_infinity_or_nan() -> None:
    """An infinite knob is written null: JSON has no Infinity (docs/json-schema.md)."""
    from whilecli.cli import app as while_app

    batch = str(Path(__file__).resolve().parents[2] / "examples" / "data" / "batch.jsonl")
    args = ["update", batch, "--method", "flash_reinforce", "--trust", "inf", "--format", "json"]
    r = CliRunner().invoke(while_app, args)
    assert r.exit_code == 0, r.stderr
    assert "Infinity" not in r.stdout and "NaN" not in r.stdout
    assert json.loads(r.stdout)["knobs"]["trust"] is None
    r = CliRunner().invoke(while_app, [*args, "-o", "-"])
    assert r.exit_code == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(rows) == json.loads(r.stderr)["trajectories"] and "coefficients" in rows[0]


def test_rae_state_is_written_last_and_never_over_the_output(tmp_path: Path) -> None:
    """rae's baselines are folded in once per batch: a failed output leaves them as they were
    (a rerun would fold the batch twice), and -o may not name the state file."""
    state = tmp_path / "state.json"
    code, out = run(str(EXAMPLE), "--method", "rae", "-o", "/dev/full", "--state", str(state), "--force")  # fmt: skip
    assert code == 2 and not state.exists(), out
    same = tmp_path / "same.json"
    code, out = run(str(EXAMPLE), "--method", "rae", "-o", str(same), "--state", str(same), "--force")  # fmt: skip
    assert code == 2 and "the same file" in out and not same.exists()
    code, out = run(str(EXAMPLE), "--method", "rae", "-o", str(tmp_path / "o.jsonl"), "--state", str(state))  # fmt: skip
    assert code == 0 and state.exists(), out
