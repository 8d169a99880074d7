"""`whilecli config` end to end: TOML on stdout or in a file, the report on the other stream,
JSON, refusals with exit 2 and one line, and `--from ROWS`."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from prime_rl_schema import header_problems, problems
from rows_files import drawn_rows, write_rows
from whilecli.cli import app
from whilecli.io.aliases import COMPLETION_ALIASES, PROMPT_ALIASES

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "data"
TEACHER = "Qwen/Qwen3-32B@http://127.0.0.1:8001/v1"


def invoke(*args: str):
    return CliRunner().invoke(app, ["config", *args])


def test_design_card_example_as_typed() -> None:
    r = invoke("--method", "opsd", "--privileged", "reference")
    assert r.exit_code == 0, r.stderr
    c = tomllib.loads(r.stdout)
    assert problems(c) == []
    assert c["orchestrator"]["algo"] == {"type": "opsd", "demo_key": "reference"}
    assert "inference" in c
    assert "prime-rl reads" in r.stderr and "prime-rl ignores" in r.stderr
    assert "\nwarning: " in r.stderr and "--env ID" in r.stderr
    assert "uv run rl @" not in r.output  # the TOML went to stdout: no file to launch yet


@pytest.mark.parametrize("depth", [1, 6])
def test_the_written_path_and_run_command_are_never_wrapped(tmp_path: Path, depth: int) -> None:
    out = tmp_path.joinpath(*["a-long-folder-name-for-configs"] * depth) / "rl.toml"
    r = invoke("--method", "grpo", "--env", "reverse-text", "-o", str(out))
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert f"run: uv run rl @ {out}" in lines  # one line a user can copy, however long
    assert f"wrote {out} (grpo)" in lines


def test_file_output_atomic_and_never_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "cfg" / "rl.toml"
    r = invoke("--method", "grpo", "--env", "reverse-text", "-o", str(out))
    assert r.exit_code == 0, r.stderr
    first = out.read_text()
    assert problems(tomllib.loads(first)) == []
    assert f"uv run rl @ {out}" in r.stdout and "prime-rl reads" in r.stdout
    assert "[orchestrator]" not in r.stdout  # the TOML went to the file only
    r = invoke("--method", "max_rl", "-o", str(out))
    assert r.exit_code == 2
    assert "--force" in r.stderr
    assert out.read_text() == first
    r = invoke("--method", "max_rl", "-o", str(out), "--force")
    assert r.exit_code == 0
    assert tomllib.loads(out.read_text())["orchestrator"]["algo"]["type"] == "max_rl"
    assert [p.name for p in out.parent.iterdir()] == ["rl.toml"]  # no temporary left behind


def test_json_format() -> None:
    r = invoke("--method", "grpo", "--async", "--correction", "icepop", "--format", "json")
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    assert set(d) >= {"config", "toml", "reads", "ignored", "warnings", "command"}
    assert tomllib.loads(d["toml"]) == d["config"]
    assert d["config"]["trainer"]["loss"]["import_path"] == "whilecli.emit.losses.icepop_loss"
    assert all({"knob", "where"} == set(x) for x in d["reads"])
    assert all({"knob", "why"} == set(x) for x in d["ignored"])


def test_all_options_reach_the_file() -> None:
    r = invoke(
        "--method", "opd", "--model", "Qwen/Qwen3-4B", "--env", "reverse-text", "--gpus", "4",
        "--steps", "50", "--prompts", "10", "--group-size", "2", "--full", "--lr", "2e-6",
        "--temperature", "0.7", "--max-tokens", "2048", "--seq-len", "4096",
        "--teacher", TEACHER, "--async", "--off-policy-steps", "2",
        "--set", "trainer.optim.weight_decay=0.0", "--set", "run.name=x",
    )  # fmt: skip
    assert r.exit_code == 0, r.stderr
    c = tomllib.loads(r.stdout)
    assert problems(c) == []
    assert (c["max_steps"], c["seq_len"]) == (50, 4096)
    assert c["orchestrator"]["batch_size"] == 20 and c["orchestrator"]["group_size"] == 2
    assert c["orchestrator"]["max_off_policy_steps"] == 2
    assert c["trainer"]["optim"] == {"lr": 2e-6, "weight_decay": 0.0}
    assert "model" not in c["trainer"]
    assert c["orchestrator"]["train"]["sampling"] == {
        "temperature": 0.7,
        "max_completion_tokens": 2048,
    }
    assert c["deployment"] == {"num_train_gpus": 2, "num_infer_gpus": 2}
    assert c["run"] == {"name": "x"}


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--method", "flash_reinforce"], "batch-mean baseline"),
        (["--method", "sao"], "value model"),
        (["--method", "bpco"], "clip"),
        (["--method", "nope"], "grpo, max_rl, rae, opd, opsd, sft"),
        (["--method", "FlashReinforce"], "prime-rl's rae"),
        (["--method", "grpo", "--correction", "clip", "--async"], "--correction"),
        (["--method", "grpo", "--data", "d"], "--data is the dataset of an SFT config"),
        (["--method", "sft", "--group-size", "4"], "does not apply to sft"),
        (["--method", "sft", "--async"], "does not apply to sft"),
        (["--method", "sft", "--gpus", "9"], "--gpus"),
        (["--method", "sft", "--set", "data.name=x"], "--data"),
        (["--method", "sft", "--set", "trainer.optim.lr=1e-5"], "no key"),
        (["--method", "opd", "--teacher", "T@http://localhost:8000/v1"], "port 8000"),
        (["--method", "opsd", "--async", "--correction", "tis"], "ignores [trainer.loss]"),
        (["--method", "grpo", "--set", "trainer.loss.eps=0.3"], "no key"),
        (["--method", "grpo", "--gpus", "1"], "at least 2"),
        (["--method", "grpo", "--format", "yaml"], "--format"),
        ([], "--method"),
        (["--method", "grpo", "--map", "reward=score"], "--from"),
        (["--method", "grpo", "--from", "x.parquet"], "not both"),
    ],
)
def test_refusals_exit_2_with_one_line(args: list[str], needle: str) -> None:
    r = invoke(*args)
    assert r.exit_code == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("whilecli: error: ")
    assert needle in lines[0]
    assert "Traceback" not in r.stderr


def test_from_mixed_rows_writes_grpo() -> None:
    r = invoke("--from", str(EXAMPLES / "mixed.parquet"), "--model", "Qwen/Qwen3-0.6B")
    assert r.exit_code == 0, r.stderr
    c = tomllib.loads(r.stdout)
    assert c["orchestrator"]["algo"]["type"] == "grpo"
    assert c["model"]["name"] == "Qwen/Qwen3-0.6B"
    assert "routed from the rows" in r.stderr
    assert problems(c) == []


def test_from_floor_rows_writes_opsd_with_reference() -> None:
    r = invoke("--from", str(EXAMPLES / "floor.parquet"), "--size-b", "8", "--format", "json")
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["config"]["orchestrator"]["algo"] == {"type": "opsd", "demo_key": "reference"}


def test_from_single_rollout_rows_writes_rae(tmp_path: Path) -> None:
    out = tmp_path / "rae.toml"
    r = invoke(
        "--from", str(EXAMPLES / "single.parquet"), "--model", "Qwen/Qwen3-0.6B", "-o", str(out)
    )
    assert r.exit_code == 0, r.stderr
    text = out.read_text()
    assert header_problems(text) == []
    c = tomllib.loads(text)
    assert problems(c) == []
    assert c["orchestrator"]["algo"] == {"type": "rae", "decay": 0.95}
    assert c["orchestrator"]["group_size"] == 1
    assert "route single-rollout" in r.stdout and "flash_reinforce" in r.stdout


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("truncated_passes.parquet", "nothing can train yet"),
        ("saturated.parquet", "GroupwiseGrading"),
    ],
)
def test_from_rows_no_config_possible(name: str, needle: str, tmp_path: Path) -> None:
    out = tmp_path / "x.toml"
    r = invoke("--from", str(EXAMPLES / name), "--model", "Qwen/Qwen3-0.6B", "-o", str(out))
    assert r.exit_code == 1
    assert r.stdout == ""
    assert needle in r.stderr and "no config written" in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_from_floor_rows_under_7b_routes_to_sft_with_nothing_to_train_on(tmp_path: Path) -> None:
    out = tmp_path / "sft.toml"
    r = invoke("--from", str(EXAMPLES / "floor.parquet"), "--size-b", "4", "-o", str(out))
    assert r.exit_code == 1
    assert "none of the 128 rows passes" in r.stderr and "stronger model" in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_from_other_model_rows_without_text_refused_naming_the_fields(tmp_path: Path) -> None:
    """The route says SFT; the rows hold no prompt or reply, so there is no dataset to write."""
    out = tmp_path / "sft.toml"
    r = invoke(
        "--from",
        str(EXAMPLES / "other_model.parquet"),
        "--model",
        "Qwen/Qwen3-0.6B",
        "-o",
        str(out),
    )
    assert r.exit_code == 2
    line = r.stderr.strip()
    assert len(line.splitlines()) == 1 and line.startswith("whilecli: error: ")
    assert "other_model.parquet" in line and "no text" in line
    assert ", ".join(PROMPT_ALIASES) in line  # the alias table, as it stands
    assert ", ".join(COMPLETION_ALIASES) in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("typed", "method"),
    [("GRPO", "grpo"), ("prime-rl rae", "rae"), ("MaxRL", "max_rl"), ("max-rl", "max_rl"),
     ("OPSD", "opsd"), ("SFT", "sft")],
)  # fmt: skip
def test_method_names_as_displayed(typed: str, method: str) -> None:
    r = invoke("--method", typed, "--format", "JSON")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["method"] == method


def test_correction_case_insensitive() -> None:
    r = invoke("--method", "grpo", "--async", "--correction", "TIS", "--format", "json")
    assert r.exit_code == 0, r.stderr
    loss = json.loads(r.stdout)["config"]["trainer"]["loss"]
    assert loss["import_path"] == "whilecli.emit.losses.tis_loss"


def test_help_groups_options_and_lists_choices() -> None:
    import click
    import typer.main

    from whilecli.commands.config import PANELS

    group = typer.main.get_command(app)
    command = group.get_command(click.Context(group), "config")  # type: ignore[attr-defined]
    assert command is not None
    panels = {p.name: getattr(p, "rich_help_panel", None) for p in command.params}
    assert set(panels.values()) == set(PANELS), panels  # every option in one named group
    r = CliRunner().invoke(app, ["config", "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0
    assert "grpo|max_rl|rae|opd|opsd|sft" in r.stdout
    assert "ipo|icepop|tis" in r.stdout and "text|json" in r.stdout


def test_console_script_subprocess(tmp_path: Path) -> None:
    exe = shutil.which("whilecli")
    if exe is None:
        pytest.skip("the whilecli console script is not on PATH")
    out = tmp_path / "rl.toml"
    p = subprocess.run(
        [exe, "config", "--method", "rae", "--env", "reverse-text", "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    assert tomllib.loads(out.read_text())["orchestrator"]["algo"] == {"type": "rae", "decay": 0.95}
    assert "moving average" in p.stdout
    p = subprocess.run([exe, "config", "--method", "sao"], capture_output=True, text=True)
    assert p.returncode == 2 and "Traceback" not in p.stderr


def test_json_with_a_file_writes_both(tmp_path: Path) -> None:
    out = tmp_path / "rl.toml"
    r = invoke("--method", "rae", "-o", str(out), "--format", "json")
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["command"] == f"uv run rl @ {out}"
    assert out.read_text() == d["toml"]


# ------------------------------------------------------------- what its own checks call broken


@st.composite
def group_cases(draw: st.DrawFn) -> tuple[str, list[str], bool]:
    """A method, its group-size arguments (a flag or a --set), and whether prime-rl's
    orchestrator would abort on the file (grpo and max_rl at a group of one)."""
    method = draw(st.sampled_from(["grpo", "max_rl", "rae", "opsd"]))
    group = draw(st.integers(1, 4))
    spelled = draw(st.sampled_from(["flag", "set"]))
    args = (
        ["--group-size", str(group)]
        if spelled == "flag"
        else ["--set", f"orchestrator.group_size={group}", "--prompts", str(2 * 3 * 4)]
    )
    return method, args, method in ("grpo", "max_rl") and group < 2


@settings(max_examples=20, deadline=None)
@given(group_cases(), st.booleans())
def test_a_file_its_checks_call_broken_is_written_only_with_force(
    case: tuple[str, list[str], bool], to_file: bool
) -> None:
    method, args, broken = case
    extra = ["--privileged", "reference"] if method == "opsd" else []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rl.toml"
        target = ["-o", str(out)] if to_file else []
        r = invoke("--method", method, "--env", "x", *extra, *args, *target)
        if not broken:
            assert r.exit_code == 0, r.stderr
            return
        assert r.exit_code == 2, r.output
        assert r.stdout == "" and not out.exists()
        err = r.stderr.strip()
        assert len(err.splitlines()) == 1 and err.startswith("whilecli: error: not written: ")
        assert "aborts" in err and "--force" in err
        forced = invoke("--method", method, "--env", "x", *extra, *args, *target, "--force")
        assert forced.exit_code == 0, forced.stderr
        written = out.read_text() if to_file else forced.stdout
        assert tomllib.loads(written)["orchestrator"]["group_size"] == 1
        assert "aborts" in forced.output  # still said, as a warning


def test_o_dash_prints_no_run_line() -> None:
    r = invoke("--method", "grpo", "--env", "x", "-o", "-")
    assert r.exit_code == 0, r.stderr
    assert "run:" not in r.stdout and "run:" not in r.stderr
    assert tomllib.loads(r.stdout)["orchestrator"]["group_size"] == 8


def _vf_eval_dump(folder: Path, meta: dict) -> Path:
    """A vf-eval dump: the real wiki-search rows, with ``meta`` as its metadata.json."""
    real = ROOT / "tests" / "data" / "real" / "verifiers" / "wiki_search"
    src = real / "qwen--qwen3-4b-instruct-2507__e762fd98" / "results.jsonl"
    folder.mkdir(parents=True)
    shutil.copy(src, folder / "results.jsonl")
    (folder / "metadata.json").write_text(json.dumps(meta))
    return folder / "results.jsonl"


def _meta(env: str = "wiki-search", **sampling: object) -> dict:
    return {"env_id": env, "model": "qwen/qwen3-4b-instruct-2507", "sampling_args": sampling}


def test_from_writes_what_the_dumps_sidecar_says(tmp_path: Path) -> None:
    rows = _vf_eval_dump(tmp_path / "d", _meta(max_tokens=1024, temperature=0.6, n=1))
    out = tmp_path / "rl.toml"
    r = invoke("--from", str(rows), "-o", str(out))
    assert r.exit_code == 0, r.stderr
    c = tomllib.loads(out.read_text())
    assert problems(c) == []
    assert c["orchestrator"]["train"]["source"][0]["env"]["taskset"]["id"] == "wiki-search"
    sampling = c["orchestrator"]["train"]["sampling"]
    assert sampling["max_completion_tokens"] == 1024 and sampling["temperature"] == 0.6
    assert "from the dumps: --env wiki-search (metadata.json: env_id)" in r.stdout
    # the command line wins over the sidecar
    r = invoke("--from", str(rows), "--env", "mine", "--max-tokens", "512", "-o", "-")
    assert r.exit_code == 0, r.stderr
    c = tomllib.loads(r.stdout)
    assert c["orchestrator"]["train"]["source"][0]["env"]["taskset"]["id"] == "mine"
    assert c["orchestrator"]["train"]["sampling"]["max_completion_tokens"] == 512
    assert "from the dumps: --env" not in r.stderr


def test_from_leaves_out_what_the_dumps_disagree_on(tmp_path: Path) -> None:
    a = _vf_eval_dump(tmp_path / "a", _meta(max_tokens=1024))
    b = _vf_eval_dump(tmp_path / "b", _meta(max_tokens=2048))
    r = invoke("--from", str(a), "--from", str(b), "-o", "-")  # one env: they pool
    assert r.exit_code == 0, r.stderr
    c = tomllib.loads(r.stdout)
    assert c["orchestrator"]["train"]["source"][0]["env"]["taskset"]["id"] == "wiki-search"
    assert c["orchestrator"]["train"]["sampling"]["max_completion_tokens"] != 1024
    assert "name different values for --max-tokens (1024, 2048)" in " ".join(r.stderr.split())


@pytest.mark.parametrize("dotted", [False, True])
@pytest.mark.parametrize(
    ("data", "config"),
    [
        ("out", "out"),  # the same path
        ("out", "out/sft.toml"),  # the config inside the dataset folder
        ("out", "out/sub/sub/sft.toml"),
        ("out/data", "out"),  # the dataset folder inside the config's path
        ("out/sub/data", "out"),
    ],
)
def test_an_sft_dataset_and_config_that_overlap_are_refused_before_any_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: str, config: str, dotted: bool
) -> None:
    """--data and -o that overlap: exit 2 in one line, and nothing is written."""
    monkeypatch.chdir(tmp_path)
    rows = str(EXAMPLES / "other_model.parquet")
    data = f"./{data}" if dotted else data
    result = invoke(
        "--method", "sft", "--from", rows, "--data", data, "-o", config, "--model", "Qwen/Qwen3-8B"
    )
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "overlap" in lines[0], result.output
    assert list(tmp_path.iterdir()) == []


#: Each option that writes one key (emit.inputs.OPTION_KEYS), with values it takes.
OPTION_VALUES = {
    "--steps": (3, 7, 50),
    "--seq-len": (8192, 16384),
    "--max-tokens": (1024, 2048),
    "--group-size": (4, 8, 16),
    "--lr": (1e-5, 2e-5, 3e-6),
    "--temperature": (0.7, 1.0),
    "--off-policy-steps": (1, 2, 4),
}


@settings(max_examples=30, deadline=None)
@given(option=st.sampled_from(sorted(OPTION_VALUES)), data=st.data())
def test_an_option_and_a_set_of_its_key_with_two_values_are_refused(
    option: str, data: st.DataObject
) -> None:
    """``--steps 50 --set max_steps=7`` gives one key two values: refused in one line naming
    both, never settled by the --set; the same value twice is one value, and passes."""
    from whilecli.emit.inputs import OPTION_KEYS

    key = OPTION_KEYS[option]
    mine, other = data.draw(st.permutations(OPTION_VALUES[option]))[:2]
    extra = ["--async"] if option == "--off-policy-steps" else []
    base = ["--method", "grpo", *extra, "-o", "-", option, str(mine)]
    two = invoke(*base, "--set", f"{key}={other!r}")
    assert two.exit_code == 2 and two.stdout == ""
    assert two.stderr.count("\n") == 1 and option in two.stderr
    assert f"--set {key}=" in two.stderr
    one = invoke(*base, "--set", f"{key}={mine!r}")
    assert one.exit_code == 0, one.stderr
    assert f"{key.rpartition('.')[2]} = " in one.stdout


def test_sft_options_follow_the_same_rule() -> None:
    r = invoke("--method", "sft", "--steps", "5", "--set", "max_steps=7")
    assert r.exit_code == 2 and "--steps 5 and --set max_steps=7" in r.stderr


@pytest.mark.parametrize(
    ("writer", "model", "copy"),
    [
        ("Qwen/Qwen3-8B-AWQ", "Qwen/Qwen3-8B", "a copy at another precision"),
        ("llama3.1:8b", "meta-llama/Llama-3.1-8B-Instruct", "a copy at another precision"),
        ("Qwen/Qwen3-8B@3", "Qwen/Qwen3-8B@9", "an older copy"),
    ],
)
def test_from_names_the_copy_that_sends_the_method_to_async(
    tmp_path: Path, writer: str, model: str, copy: str
) -> None:
    """The config's header says which copy of the model wrote the rows, as the route does:
    a quantized copy or a provider's build is no older copy."""
    drawn = drawn_rows(60, 4, lambda task, draw: (task + draw) % 3 == 0, model=writer)
    rows = write_rows(tmp_path, drawn, "jsonl")
    r = invoke("--from", str(rows), "--model", model, "-o", "-")
    assert r.exit_code == 0, r.stderr
    header = " ".join(line.lstrip("# ") for line in r.stdout.splitlines() if line.startswith("#"))
    assert f"{copy} wrote rows: --async with a correction" in header, header


@pytest.mark.parametrize("command", [["config", "--from"], ["route"], ["check"]])
def test_a_route_report_given_as_rows_is_named_and_refused(
    tmp_path: Path, command: list[str]
) -> None:
    """``route --format json`` writes a report, not rows: read as rows it is refused in one
    line that names it and asks for the rows it was routed from."""
    rows = Path(__file__).parents[2] / "examples" / "data" / "mixed.parquet"
    report = CliRunner().invoke(app, ["route", str(rows), "--format", "json"])
    path = tmp_path / "route.json"
    path.write_text(report.stdout)
    got = CliRunner().invoke(app, [*command, str(path)])
    assert got.exit_code == 2
    assert "a whilecli route report" in got.output and "graded rows" in got.output
    assert len(got.output.strip().splitlines()) == 1
