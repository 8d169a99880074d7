"""Hostile side files: a known tool's side file (vf-eval's ``metadata.json``, prime-rl's
``configs/*.json``, lm-eval's ``results_*.json``) that is there but cannot be read is one line
naming it (and the field, for a model of the wrong type), exit 2: never read as missing, which
changes the verdict. A side file that is not there is still no side file."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app

EXAMPLE_RUN = Path(__file__).resolve().parents[2] / "examples" / "run"
OTHER = "meta-llama/Llama-3-8B"


def route(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["route", *args])
    return result.exit_code, result.output


def _vf_rows(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "results.jsonl", "w") as fh:
        for t in range(40):
            for s in range(8):
                row = {
                    "example_id": t,
                    "prompt": [{"role": "user", "content": f"q{t}"}],
                    "completion": [{"role": "assistant", "content": f"a{t}-{s}"}],
                    "reward": float((t + s) % 3 == 0),
                    "is_truncated": False,
                }
                fh.write(json.dumps(row) + "\n")


def _broken(good: str, how: str, cut: int) -> str | None:
    """``good`` JSON object text broken one way; None where the break is not text."""
    return {
        "comma": good[:-1] + ",}",
        "cut": good[: 1 + cut % (len(good) - 1)],
        "empty": "",
        "garbage": "not json{",
        "array": json.dumps([json.loads(good)]),
        "dup": good[:-1] + ', "model": "x/y"}',
    }.get(how)


def _place(path: Path, how: str, text: str | None) -> None:
    if how == "folder":
        path.mkdir()
    elif how == "fifo":
        os.mkfifo(path)
    elif how == "loop":
        path.symlink_to(path.name)
    else:
        assert text is not None
        path.write_text(text)


HOWS = ["comma", "cut", "empty", "garbage", "array", "dup", "folder", "fifo", "loop"]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    how=st.sampled_from(HOWS),
    cut=st.integers(0, 10_000),
    env=st.text(st.characters(min_codepoint=97, max_codepoint=122), min_size=1, max_size=8),
)
def test_a_broken_vf_eval_metadata_is_refused_naming_it(
    tmp_path_factory: pytest.TempPathFactory, how: str, cut: int, env: str
) -> None:
    folder = tmp_path_factory.mktemp("vf")
    _vf_rows(folder)
    good = json.dumps({"env_id": env, "model": OTHER})
    _place(folder / "metadata.json", how, _broken(good, how, cut))
    code, out = route(str(folder), "--model", "Qwen/Qwen3-0.6B", "-q")
    assert code == 2 and out.count("\n") == 1 and "metadata.json" in out, out


@pytest.mark.parametrize("model", [5, 1.5, True, [OTHER], {"name": OTHER}])
def test_a_vf_eval_model_of_the_wrong_type_is_refused_naming_the_field(
    tmp_path: Path, model: object
) -> None:
    _vf_rows(tmp_path)
    (tmp_path / "metadata.json").write_text(json.dumps({"env_id": "g", "model": model}))
    code, out = route(str(tmp_path), "--model", "Qwen/Qwen3-0.6B", "-q")
    assert code == 2 and "metadata.json" in out and "field 'model'" in out, out


@pytest.mark.parametrize("meta", [None, {"env_id": "g", "model": OTHER}, {"env_id": "g"}])
def test_a_readable_or_absent_metadata_still_routes(tmp_path: Path, meta: object) -> None:
    _vf_rows(tmp_path)
    if meta is not None:
        (tmp_path / "metadata.json").write_text(json.dumps(meta))
    code, out = route(str(tmp_path), "--model", "Qwen/Qwen3-0.6B", "-q")
    assert code in (0, 1) and "error" not in out, out
    assert ("another model wrote" in out) == (meta is not None and "model" in meta)


@pytest.mark.parametrize("how", ["comma", "cut", "empty", "array", "folder", "fifo"])
def test_a_broken_prime_rl_config_is_refused_naming_it(tmp_path: Path, how: str) -> None:
    run = tmp_path / "run"
    shutil.copytree(EXAMPLE_RUN, run)
    cfg = run / "configs" / "orchestrator.json"
    good = cfg.read_text().strip()
    cfg.unlink()
    _place(cfg, how, _broken(good, how, 7))
    code, out = route(str(run), "--step", "3", "--model", OTHER, "-q")
    assert code == 2 and out.count("\n") == 1 and "orchestrator.json" in out, out


def _lm_eval(folder: Path, results: str) -> None:
    folder.mkdir()
    with open(folder / "samples_gsm8k_2024-01-01T00-00-00.jsonl", "w") as fh:
        for i in range(200):
            row = {
                "doc_id": i,
                "doc": {"q": f"q{i}"},
                "target": "1",
                "arguments": {"gen_args_0": {"arg_0": f"q{i}", "arg_1": {}}},
                "resps": [[f"r{i}"]],
                "filtered_resps": [f"r{i}"],
                "filter": "none",
                "acc": 1.0,
                "exact_match": float(i % 4 == 0),
            }
            fh.write(json.dumps(row) + "\n")
    (folder / "results_2024-01-01T00-00-00.json").write_text(results)


@pytest.mark.parametrize("how", ["comma", "cut", "empty", "garbage", "array", None])
def test_a_broken_lm_eval_results_file_is_refused_not_read_as_another_metric(
    tmp_path: Path, how: str | None
) -> None:
    good = json.dumps(
        {
            "results": {"gsm8k": {"alias": "gsm8k", "exact_match,none": 0.25}},
            "model_name": "Qwen/Qwen3-0.6B",
            "configs": {"gsm8k": {"repeats": 1}},
        }
    )
    text = good if how is None else _broken(good, how, 11)
    assert text is not None
    _lm_eval(tmp_path / "lm", text)
    code, out = route(str(tmp_path / "lm"), "--model", "Qwen/Qwen3-0.6B", "-q")
    if how is None:
        assert code in (0, 1) and "error" not in out, out
    else:
        assert code == 2 and out.count("\n") == 1 and "results_2024" in out, out


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    kept=st.integers(2, 6),
    repeats=st.one_of(st.integers(2, 12), st.integers(10_001, 10**40)),
)
def test_lm_eval_repeats_past_the_replies_or_the_bound_are_refused_naming_the_field(
    tmp_path_factory: pytest.TempPathFactory, kept: int, repeats: int
) -> None:
    folder = tmp_path_factory.mktemp("lm")
    with open(folder / "samples_humaneval_2024-01-01T00-00-00.jsonl", "w") as fh:
        for doc in range(30):
            row = {
                "doc_id": doc,
                "doc": {"task_id": f"HumanEval/{doc}"},
                "arguments": {"gen_args_0": {"arg_0": f"def f{doc}():\n", "arg_1": {}}},
                "resps": [[f"return {j}" for j in range(kept)]],
                "filtered_resps": [[f"return {j}" for j in range(kept)]],
                "filter": "create_test",
                "metrics": ["pass@1"],
                "pass@1": (doc % (kept + 1)) / kept if doc % (kept + 1) <= kept else 0.0,
            }
            fh.write(json.dumps(row) + "\n")
    results = {
        "results": {"humaneval": {"alias": "humaneval", "pass@1,create_test": 0.5}},
        "configs": {"humaneval": {"task": "humaneval", "repeats": repeats}},
        "model_name": "Qwen/Qwen2.5-Coder-7B",
    }
    (folder / "results_2024-01-01T00-00-00.json").write_text(json.dumps(results))
    code, out = route(str(folder), "-q")
    if repeats <= kept:
        assert "configs.humaneval.repeats" not in out, out
    else:
        assert code == 2 and out.count("\n") == 1, out
        assert "results_2024-01-01T00-00-00.json" in out, out
        assert "field 'configs.humaneval.repeats'" in out, out


def test_a_broken_metadata_json_beside_another_tools_rows_is_passed_over(tmp_path: Path) -> None:
    """Rows that read as no tool writing a ``metadata.json`` (a plain table naming its model)
    beside a broken one: anyone's file may be named so; it is passed over, not refused."""
    from whilecli.route import run_route

    rows = [
        {
            "task_id": f"t{i // 4}",
            "reward": float(i % 3 == 0),
            "model": "m",
            "finish_reason": "stop",
        }
        for i in range(160)
    ]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "metadata.json").write_text("{not json")
    assert run_route(str(tmp_path / "rows.jsonl"), model="m").method == "grpo"
