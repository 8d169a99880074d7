"""prime-rl SFT configs: the TOML against the SFT schema table, the dataset of passing rows
(prompt/completion message lists, in a folder beside the TOML), and `config --from` routing
another model's rows there. Expected datasets are written out by hand from the rows."""

from __future__ import annotations

import json
import os
import shlex
import tomllib
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from prime_rl_schema import header_problems, problems, sft_problems
from whilecli.cli import app
from whilecli.emit import schema
from whilecli.emit.sft import sft_config
from whilecli.emit.sft_data import messages
from whilecli.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parents[1] / "golden"
STUDENT = "Qwen/Qwen3-0.6B"
SYSTEM = {"role": "system", "content": "Be brief."}


def invoke(*args: str):
    return CliRunner().invoke(app, ["config", *args])


def _rows(model: str) -> list[dict[str, Any]]:
    """Four tasks, two rollouts each, one pass and one fail (t3: two passes, one empty)."""
    rows: list[dict[str, Any]] = []
    for i in range(3):
        rows.append(
            {"task_id": f"t{i}", "prompt": f"Reverse: ab{i}", "completion": f"{i}ba", "reward": 1}
        )
        rows.append(
            {"task_id": f"t{i}", "prompt": f"Reverse: ab{i}", "completion": "no", "reward": 0}
        )
    chat = [SYSTEM, {"role": "user", "content": "2+2?"}]
    rows.append({"task_id": "t3", "prompt": chat, "completion": [{"role": "assistant", "content": "4"}], "reward": 1})  # fmt: skip
    rows.append({"task_id": "t3", "prompt": chat, "completion": "", "reward": 1})
    for r in rows:
        r["model"] = model
        r["truncated"] = False
    return rows


#: The passing rows with text of _rows(), as prime-rl's SFT reader will see them.
EXPECTED = [
    {
        "prompt": [{"role": "user", "content": f"Reverse: ab{i}"}],
        "completion": [{"role": "assistant", "content": f"{i}ba"}],
    }
    for i in range(3)
] + [
    {
        "prompt": [SYSTEM, {"role": "user", "content": "2+2?"}],
        "completion": [{"role": "assistant", "content": "4"}],
    }
]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def other_rows(tmp_path: Path) -> Path:
    return _write(tmp_path / "gpt.jsonl", _rows("gpt-4.1-mini"))


def _assert_sft_file(toml: Path) -> dict[str, Any]:
    text = toml.read_text(encoding="utf-8")
    assert header_problems(text) == []
    c = tomllib.loads(text)
    assert sft_problems(c) == []
    schema.check_sft_keys(c)
    return c


def test_other_models_rows_route_to_sft_with_the_passing_rows(
    tmp_path: Path, other_rows: Path
) -> None:
    out = tmp_path / "out" / "sft.toml"
    r = invoke("--from", str(other_rows), "--model", STUDENT, "-o", str(out))
    assert r.exit_code == 0, r.stderr
    c = _assert_sft_file(out)
    folder = tmp_path / "out" / "sft.data"
    assert c["data"]["name"] == os.path.abspath(folder)
    assert c["model"] == {"name": STUDENT}
    assert "inference" not in c and "trainer" not in c
    assert sorted(p.name for p in folder.iterdir()) == ["train.parquet"]
    assert pl.read_parquet(folder / "train.parquet").to_dicts() == EXPECTED
    assert f"uv run sft @ {out}" in r.stdout
    assert "route off-policy" in r.stdout and "4 passing rows of 8" in r.stdout
    assert "1 passing rows with an empty prompt or reply were left out" in r.stdout


def test_dataset_and_toml_never_overwritten_without_force(tmp_path: Path, other_rows: Path) -> None:
    out = tmp_path / "sft.toml"
    assert invoke("--from", str(other_rows), "--model", STUDENT, "-o", str(out)).exit_code == 0
    data = tmp_path / "sft.data" / "train.parquet"
    before = (out.read_bytes(), data.read_bytes())
    out.unlink()  # the TOML may go; the dataset left behind still blocks
    r = invoke("--from", str(other_rows), "--model", STUDENT, "-o", str(out))
    assert r.exit_code == 2 and "--force" in r.stderr and "train.parquet" in r.stderr
    assert not out.exists() and data.read_bytes() == before[1]
    r = invoke("--from", str(other_rows), "--model", STUDENT, "-o", str(out), "--force")
    assert r.exit_code == 0, r.stderr
    assert (out.read_bytes(), data.read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpt.jsonl", "sft.data", "sft.toml"]


def test_data_folder_with_other_files_refused(tmp_path: Path, other_rows: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "notes.txt").write_text("x")
    r = invoke("--from", str(other_rows), "--model", STUDENT, "--data", str(folder), "-o", "-")
    assert r.exit_code == 2 and "notes.txt" in r.stderr
    assert r.stdout == ""


def test_stdout_needs_a_data_folder(tmp_path: Path, other_rows: Path) -> None:
    r = invoke("--from", str(other_rows), "--model", STUDENT)
    assert r.exit_code == 2 and "--data" in r.stderr and r.stdout == ""
    folder = tmp_path / "ds"
    r = invoke("--from", str(other_rows), "--model", STUDENT, "--data", str(folder))
    assert r.exit_code == 0, r.stderr
    assert tomllib.loads(r.stdout)["data"]["name"] == os.path.abspath(folder)
    assert pl.read_parquet(folder / "train.parquet").height == len(EXPECTED)


def test_method_sft_takes_any_rows_without_routing(tmp_path: Path) -> None:
    """The student's own rows route to grpo; --method sft writes their passes anyway."""
    rows = _write(tmp_path / "own.jsonl", _rows(STUDENT))
    out = tmp_path / "own.toml"
    r = invoke("--method", "sft", "--from", str(rows), "--model", STUDENT, "-o", str(out), "--format", "json")  # fmt: skip
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["method"] == "sft" and d["command"] == f"uv run sft @ {out}"
    assert d["dataset"]["written"] == 4 and d["dataset"]["passed"] == 5
    assert d["dataset"]["path"] == str(tmp_path / "own.data" / "train.parquet")
    assert tomllib.loads(d["toml"]) == d["config"]
    assert "routed" not in " ".join(d["warnings"])


def test_model_identity_is_the_routes(tmp_path: Path) -> None:
    """`Qwen3-0.6B` is the student written another way (grpo); `-Base` is another model (SFT)."""
    same = _write(tmp_path / "same.jsonl", _rows("qwen/qwen3-0.6b"))
    r = invoke("--from", str(same), "--model", "Qwen3-0.6B", "--format", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["method"] == "grpo"
    base = _write(tmp_path / "base.jsonl", _rows("Qwen/Qwen3-0.6B-Base"))
    r = invoke("--from", str(base), "--model", "Qwen3-0.6B", "-o", str(tmp_path / "b.toml"))
    assert r.exit_code == 0, r.stderr
    assert "uv run sft @" in r.stdout


def test_messages_chats_are_cut_at_the_first_assistant_turn(tmp_path: Path) -> None:
    chat = [SYSTEM, {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    rows = [
        {"task_id": "a", "messages": chat, "reward": 1.0},
        {"task_id": "a", "messages": chat[:2], "reward": 1.0},  # no reply: left out
        {"task_id": "b", "messages": chat, "reward": 0.0},
    ]
    src = _write(tmp_path / "chats.jsonl", rows)
    r = invoke("--method", "sft", "--from", str(src), "-o", str(tmp_path / "c.toml"))
    assert r.exit_code == 0, r.stderr
    got = pl.read_parquet(tmp_path / "c.data" / "train.parquet").to_dicts()
    assert got == [{"prompt": chat[:2], "completion": chat[2:]}]


def test_no_passing_row_writes_nothing(tmp_path: Path) -> None:
    rows = [dict(r, reward=0) for r in _rows("gpt-4.1-mini")]
    src = _write(tmp_path / "fail.jsonl", rows)
    r = invoke("--method", "sft", "--from", str(src), "-o", str(tmp_path / "f.toml"))
    assert r.exit_code == 1 and "nothing to fine-tune on" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fail.jsonl"]


def test_rows_with_a_prompt_but_no_reply_name_the_completion_fields(tmp_path: Path) -> None:
    rows = [{"task_id": "a", "question": "q", "reward": 1.0}] * 2
    src = _write(tmp_path / "q.jsonl", rows)
    r = invoke("--method", "sft", "--from", str(src), "-o", str(tmp_path / "q.toml"))
    assert r.exit_code == 2
    line = r.stderr.strip()
    assert line.startswith(f"whilecli: error: {src}: field 'completion': ")
    assert "no completion (looked for completion, generation, predicted_text" in line
    assert "no prompt" not in line


def test_real_verifiers_rows_give_message_lists() -> None:
    """vf-eval rows: prompt and completion are message lists; the env's turns keep their role."""
    from whilecli.emit.sft_data import build_sft_data

    path = ROOT / "tests/data/real/verifiers/wordle/gpt-5-mini__019a631c/results.jsonl"
    data = build_sft_data([str(path)], mapping={"reward": "check_answer_reward_func"})
    raw = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    passing = [r for r in raw if r["check_answer_reward_func"] >= 1.0]
    assert (data.rows, data.passed, data.frame.height) == (len(raw), len(passing), len(passing))
    first = data.frame.to_dicts()[0]
    want = [{"role": m["role"], "content": m["content"]} for m in passing[0]["completion"]]
    assert first["completion"] == want
    assert first["prompt"][0]["role"] == "system"


@pytest.mark.parametrize(
    ("value", "role", "want"),
    [
        ("hi", "user", [{"role": "user", "content": "hi"}]),
        ("  ", "user", None),
        (None, "assistant", None),
        ([], "assistant", None),
        ({"role": "assistant", "content": "x"}, "user", [{"role": "assistant", "content": "x"}]),
        (
            [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}],
            "user",
            [{"role": "user", "content": "ab"}],
        ),
        ([{"role": "assistant", "content": None, "tool_calls": []}], "assistant", None),
        ([{"content": "no role"}], "user", None),
        (3, "user", None),
        ('[{"role": "system", "content": "s"}]', "user", [{"role": "system", "content": "s"}]),
        ("[not json", "user", [{"role": "user", "content": "[not json"}]),
        ("[1, 2]", "user", [{"role": "user", "content": "[1, 2]"}]),
    ],
)  # fmt: skip
def test_messages(value: Any, role: str, want: Any) -> None:
    assert messages(value, role) == want


def test_golden_sft() -> None:
    cfg = sft_config(model="Qwen/Qwen3-8B", dataset="/data/sft.data")
    path = GOLDEN / "sft.toml"
    if os.environ.get("WHILECLI_UPDATE_GOLDEN"):
        path.write_text(cfg.to_toml(), encoding="utf-8")
    assert path.read_text(encoding="utf-8") == cfg.to_toml()
    assert sft_problems(tomllib.loads(cfg.to_toml())) == []
    assert header_problems(cfg.to_toml()) == []


def test_unknown_model_gets_the_default_renderer() -> None:
    cfg = sft_config(model="org/x-7B")
    assert cfg.config["renderer"] == {"name": "default"}
    assert sft_problems(cfg.config) == []


@pytest.mark.parametrize(
    ("override", "needle"),
    [
        ("inference.server.port=8001", "only used for online evals"),
        ("trainer.optim.lr=1e-5", "no key"),
        ("data.nme='x'", "no key"),
        ("data.type='fake'", "exists only with"),
        ("data.micro_batch_size=5", "divisible"),
        ("deployment.num_train_gpus=9", "GPUs"),
        ("optim.lr='fast'", "takes float"),
        ("data.shuffle=1", "takes bool"),
    ],
)
def test_sft_refusals(override: str, needle: str) -> None:
    with pytest.raises(UsageError, match=needle):
        sft_config(dataset="d", overrides=[override])


@pytest.mark.parametrize(
    ("key", "value"),
    [("trainer", {}), ("data.nme", 1), ("inference", {}), ("data.shuffle", 1)],
)
def test_both_sft_tables_catch_a_bad_key(key: str, value: Any) -> None:
    c = sft_config(dataset="d").config
    head, *rest = key.split(".")
    if rest:
        c[head][rest[0]] = value
    else:
        c[head] = value
    assert sft_problems(c)
    with pytest.raises(UsageError):
        from whilecli.emit.sft import check_sft_config

        check_sft_config(c)


def test_rl_table_refuses_an_sft_key_and_back() -> None:
    rl = {"trainer": {}, "orchestrator": {}, "data": {"name": "x"}}
    assert problems(rl)
    with pytest.raises(UsageError):
        schema.check_keys(rl)
    with pytest.raises(UsageError):
        schema.check_sft_keys({"orchestrator": {}})


@settings(max_examples=40, deadline=None)
@given(
    gpus=st.integers(1, 8),
    steps=st.integers(1, 10_000),
    batch=st.none() | st.integers(1, 512),
    seq_len=st.none() | st.integers(1, 65536),
    lr=st.none() | st.floats(1e-8, 1e-2),
    model=st.none() | st.sampled_from(["Qwen/Qwen3-4B", "org/x-7B"]),
)
def test_any_valid_sft_knobs_give_a_file_the_spec_accepts(
    gpus: int, steps: int, batch: int | None, seq_len: int | None, lr: float | None, model: Any
) -> None:
    cfg = sft_config(model=model, gpus=gpus, steps=steps, batch_size=batch, seq_len=seq_len, lr=lr)
    text = cfg.to_toml()
    assert header_problems(text) == []
    parsed = tomllib.loads(text)
    assert parsed == cfg.config and sft_problems(parsed) == []
    assert parsed["max_steps"] == steps and parsed["deployment"]["num_train_gpus"] == gpus
    assert parsed["data"]["batch_size"] == (batch or 32)


def _readme_config_commands() -> list[list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## `whilecli config`") :]
    start = section.index("```bash\n") + len("```bash\n")
    block = section[start : section.index("```", start)].replace("\\\n", " ")
    return [shlex.split(line, comments=True) for line in block.splitlines() if line.strip()]


def test_readme_config_examples_run_in_order_on_a_fresh_clone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    monkeypatch.chdir(tmp_path)
    commands = _readme_config_commands()
    assert len(commands) >= 6
    for argv in commands:
        assert argv[:2] == ["whilecli", "config"], argv
        r = CliRunner().invoke(app, argv[1:])
        assert r.exit_code == 0, (argv, r.stderr)
    for toml in tmp_path.glob("*.toml"):
        text = toml.read_text(encoding="utf-8")
        assert header_problems(text) == []
        c = tomllib.loads(text)
        assert (sft_problems(c) if "data" in c else problems(c)) == [], toml.name


@pytest.mark.parametrize("how", [{"truncated": True}, {"finish_reason": "length"}])
def test_cut_off_passes_are_no_sft_data(tmp_path: Path, how: dict[str, Any]) -> None:
    """A passing reply cut off at the cap would teach the model to run to it: left out with
    a note, and with no other pass, no config at all (exit 1)."""
    rows = _rows(STUDENT)
    rows[0] = {k: v for k, v in rows[0].items() if k != "truncated"} | how  # t0's pass
    path = _write(tmp_path / "own.jsonl", rows)
    out = tmp_path / "own.toml"
    r = invoke("--method", "sft", "--from", str(path), "--model", STUDENT, "-o", str(out), "--format", "json")  # fmt: skip
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["dataset"]["written"] == 3 and d["dataset"]["passed"] == 5
    written = pl.read_parquet(tmp_path / "own.data" / "train.parquet").to_dicts()
    assert EXPECTED[0] not in written and EXPECTED[1:] == written
    cut = [{k: v for k, v in r.items() if k != "truncated"} | how for r in rows if r["reward"]]
    alone = _write(tmp_path / "cut.jsonl", cut)
    r = invoke("--method", "sft", "--from", str(alone), "--model", STUDENT, "-o", str(tmp_path / "c.toml"))  # fmt: skip
    assert r.exit_code == 1 and "cut off at the token cap" in r.output
    assert not (tmp_path / "c.toml").exists() and not (tmp_path / "c.data").exists()


def test_a_toml_that_cannot_be_written_takes_back_its_dataset(tmp_path: Path) -> None:
    """The dataset, then the TOML that names it; a failed TOML (a full disk) leaves no new
    dataset or folder behind, so a rerun needs no --force."""
    rows = _write(tmp_path / "own.jsonl", _rows(STUDENT))
    data = tmp_path / "new" / "deeper" / "d.data"
    r = invoke("--method", "sft", "--from", str(rows), "--model", STUDENT, "--data", str(data), "-o", "/dev/full", "--force")  # fmt: skip
    assert r.exit_code == 2 and "/dev/full" in r.output
    assert not (tmp_path / "new").exists()
    out = tmp_path / "ok.toml"
    r = invoke("--method", "sft", "--from", str(rows), "--model", STUDENT, "--data", str(data), "-o", str(out))  # fmt: skip
    assert r.exit_code == 0, r.output
    assert (data / "train.parquet").exists() and out.exists()


@pytest.mark.parametrize("bad", ["\n", "\r", "\t", "\x00", "\x1b", "\x7f", "\x85", "\u2028"])
@pytest.mark.parametrize("where", ["a{}b", "{}ab", "ab{}"])
def test_data_with_a_control_or_blank_character_is_refused_naming_the_option(
    bad: str, where: str
) -> None:
    data = where.format(bad)
    if not data.strip():
        return
    result = invoke("--method", "sft", "--data", data, "-o", "-")
    assert result.exit_code == 2, result.output
    assert "--data" in result.output and "character (U+" in result.output
    assert "Traceback" not in result.output


def test_data_naming_a_hub_dataset_with_a_space_is_refused(tmp_path: Path) -> None:
    result = invoke("--method", "sft", "--data", "org/my set", "-o", "-")
    assert result.exit_code == 2 and "--data" in result.output
    folder = tmp_path / "my set"
    folder.mkdir()
    (folder / "train.jsonl").write_text("")
    ok = invoke("--method", "sft", "--data", str(folder), "-o", "-")
    assert "holds a space" not in ok.output
