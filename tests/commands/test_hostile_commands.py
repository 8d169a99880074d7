"""Hostile use of the commands that write or compute (update, the row methods, ada, config,
summarize, diff, size, check, watch): every case exits 0, 1 or 2; an exit 2 is one line on
stderr starting ``whilecli: error:``; never a traceback, never exit 70; and no file the user
owns changes unless the command was asked to write it.

Generated: option values (negative, zero, NaN, infinities, past int64, empty, words) for
every numeric option of every command; ``--set`` of every prime-rl key with values of every
TOML type; each writer aimed at its own input (the same path, another spelling, a link, a
file of an input folder) with ``--force``; each writer aimed at a character device or a pipe
(``/dev/null``, ``/dev/full``, ``/dev/stdout``), which is written through, never replaced.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from conftest import EXAMPLES
from whilecli.cli import app
from whilecli.emit import schema

PREFIX = "whilecli: error: "
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")


def _run(args: list[str], cwd: Path | None = None) -> tuple[int, str, str]:
    """Run in process; the outcome, checked against the contract."""
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = CliRunner().invoke(app, args)
    finally:
        os.chdir(old)
    err, out = result.stderr, result.stdout
    shown = f"{args}: exit {result.exit_code}\n{err}"
    assert result.exit_code in (0, 1, 2), shown
    assert "Traceback" not in err + out, shown
    if result.exit_code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(PREFIX), shown
    return result.exit_code, out, err


def _digest(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (links and devices by their kind) and its bytes' hash."""
    out: dict[str, str] = {}
    for p in sorted(folder.rglob("*")):
        mode = os.lstat(p).st_mode
        if stat.S_ISREG(mode):
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
        else:
            out[str(p)] = stat.filemode(mode)
    return out


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """Copies of the examples a user would own, and the files hostile options point at."""
    for name in ("mixed.jsonl", "batch.jsonl", "grouped_batch.jsonl", "student.jsonl"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    shutil.copy(EXAMPLES / "teacher.jsonl", tmp_path / "teacher.jsonl")
    (tmp_path / "shards").mkdir()
    shutil.copy(EXAMPLES / "mixed.jsonl", tmp_path / "shards" / "part-0.jsonl")
    (tmp_path / "notes.txt").write_text("mine\n")
    return tmp_path


# --- a writer aimed at its own input ------------------------------------------------------

#: Each writer and the place its target goes in its command line (``OUT``), ``IN`` its input.
WRITERS = {
    "update": ["update", "IN", "--method", "flash_reinforce", "-o", "OUT"],
    "groupwise": ["update", "IN", "--method", "groupwise", "-o", "OUT"],
    "ada-output": ["ada", "IN", "-o", "OUT"],
    "ada-next-round": ["ada", "IN", "--next-round", "OUT"],
    "config-from": ["config", "--from", "IN", "-o", "OUT"],
    "summarize": ["summarize", "IN", "-o", "OUT"],
}
SPELLINGS = ("same", "dotted", "link", "glob", "in-folder")


def _own_input(writer: str, spelling: str, box: Path) -> tuple[list[str], Path]:
    """The command line that writes over its input, and the input file it would replace."""
    source = box / ("batch.jsonl" if writer == "update" else "mixed.jsonl")
    if writer == "summarize":  # a summary is Parquet: its input here is Parquet too
        CliRunner().invoke(app, ["summarize", str(source), "-o", str(box / "rows.parquet")])
        source = box / "rows.parquet"
    target, given = str(source), str(source)
    if spelling == "dotted":
        target = str(box / "shards" / ".." / source.name)
    elif spelling == "link":
        os.symlink(source, box / f"link{source.suffix}")
        target = str(box / f"link{source.suffix}")
    elif spelling == "glob":
        given = str(box / f"*{source.suffix}")
    elif spelling == "in-folder":
        folder = box / "only"
        folder.mkdir()
        shutil.move(source, folder / source.name)
        source = folder / source.name
        target, given = str(source), str(folder)
    if writer == "update" and spelling == "glob":
        given = str(source)  # update takes one batch file, not a glob
    args = [given if a == "IN" else target if a == "OUT" else a for a in WRITERS[writer]]
    return [*args, "--force"], source


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_writer_never_replaces_its_own_input(writer: str, spelling: str, sandbox: Path) -> None:
    args, source = _own_input(writer, spelling, sandbox)
    before = _digest(sandbox)
    code, _, err = _run(args)
    assert code == 2, err
    assert "is an input of this command" in err
    assert _digest(sandbox) == before, "an input was changed"


@pytest.mark.parametrize("spelling", ["same", "link"])
def test_rae_state_is_not_the_batch(spelling: str, sandbox: Path) -> None:
    batch = sandbox / "grouped_batch.jsonl"
    state = str(batch)
    if spelling == "link":
        os.symlink(batch, sandbox / "state.json")
        state = str(sandbox / "state.json")
    before = _digest(sandbox)
    code, _, err = _run(["update", str(batch), "--method", "rae", "--state", state])
    assert code == 2 and "is an input" in err
    assert _digest(sandbox) == before


def test_sft_dataset_is_not_its_rows(sandbox: Path) -> None:
    real = "tests/data/real/verifiers/wordle/gpt-5-mini__019a631c/results.jsonl"
    rows = str(Path(__file__).resolve().parents[2] / real)
    toml = str(sandbox / "sft.toml")
    m = ["--map", "reward=check_answer_reward_func"]
    code, _, err = _run(["config", "--method", "sft", "--from", rows, *m, "-o", toml])
    assert code == 0, err
    data = sandbox / "sft.data" / "train.parquet"
    before = _digest(sandbox)
    for rows_at in (str(data), str(data.parent)):
        args = ["config", "--method", "sft", "--from", rows_at, "-o", toml, "--force"]
        code, _, err = _run(args)
        assert code == 2 and "is an input" in err, err
    assert _digest(sandbox) == before


# --- a writer aimed at a device or a pipe ---------------------------------------------------

#: A writer whose target may carry any name, and the name its target must have.
DEVICE_WRITERS = {
    "config": (["config", "--method", "grpo", "-o", "OUT"], "dev.toml"),
    "summarize": (["summarize", str(EXAMPLES / "mixed.jsonl"), "-o", "OUT"], "dev.parquet"),
    "ada": (["ada", str(EXAMPLES / "mixed.jsonl"), "-o", "OUT"], "dev.jsonl"),
    "groupwise": (
        ["update", str(EXAMPLES / "graded.jsonl"), "--method", "groupwise", "-o", "OUT"],
        "dev.jsonl",
    ),
    "update": (
        ["update", str(EXAMPLES / "batch.jsonl"), "--method", "flash_reinforce", "-o", "OUT"],
        "dev.parquet",
    ),
}


@pytest.fixture
def own_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temporary folder the writers use, so what they leave there is seen."""
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@ROOT_ONLY
@pytest.mark.parametrize("device", ["null", "full"])
@pytest.mark.parametrize("force", [False, True])
@pytest.mark.parametrize("writer", list(DEVICE_WRITERS))
def test_a_device_is_written_through_never_replaced(
    writer: str, device: str, force: bool, tmp_path: Path, own_tmp: Path
) -> None:
    args, name = DEVICE_WRITERS[writer]
    target = tmp_path / name
    os.mknod(target, 0o666 | stat.S_IFCHR, os.makedev(1, 3 if device == "null" else 7))
    code, _, err = _run(
        [target.as_posix() if a == "OUT" else a for a in args] + ["--force"] * force
    )
    assert stat.S_ISCHR(os.lstat(target).st_mode), "the device was replaced by a file"
    if device == "null":
        assert code == 0, err
    else:
        assert code == 2 and "No space left on device" in err, err
    assert list(own_tmp.iterdir()) == [], "a temporary file was left"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([name, "tmpdir"])


def test_a_pipe_and_a_link_to_a_file(tmp_path: Path, own_tmp: Path) -> None:
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    # The read end is open before the command starts (a reader thread might not be yet);
    # the TOML fits the pipe's buffer, so the write does not wait on the read.
    read_end = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        code, _, err = _run(["config", "--method", "grpo", "-o", str(fifo)])
        got = os.read(read_end, 1 << 16)
    finally:
        os.close(read_end)
    assert code == 0, err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and b"max_steps" in got

    real = tmp_path / "real.toml"
    real.write_text("mine\n")
    os.symlink(real, tmp_path / "link.toml")
    code, _, err = _run(["config", "--method", "grpo", "-o", str(tmp_path / "link.toml")])
    assert code == 2 and "--force" in err and real.read_text() == "mine\n"
    code, _, err = _run(
        ["config", "--method", "grpo", "-o", str(tmp_path / "link.toml"), "--force"]
    )
    assert code == 0, err
    assert (tmp_path / "link.toml").is_symlink(), "the link was replaced, not its file"
    assert b"max_steps" in real.read_bytes()


@ROOT_ONLY
@pytest.mark.parametrize("kind", ["device", "pipe"])
def test_rae_state_that_is_a_device_is_refused(kind: str, tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    if kind == "device":
        os.mknod(state, 0o666 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero: endless
    else:
        os.mkfifo(state)

        def feed() -> None:  # a writer that would hand a reader '{}' (none comes)
            try:
                fd = os.open(state, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                return
            os.write(fd, b"{}")
            os.close(fd)

        threading.Thread(target=feed, daemon=True).start()
    batch = str(EXAMPLES / "grouped_batch.jsonl")
    code, _, err = _run(["update", batch, "--method", "rae", "--state", str(state)])
    assert code == 2 and "--state" in err, err
    mode = os.lstat(state).st_mode
    assert stat.S_ISCHR(mode) if kind == "device" else stat.S_ISFIFO(mode)


# --- --set: every key, every type -----------------------------------------------------------

#: A value of each TOML type, and the words a hostile user types.
SET_VALUES = ("1", "-1", "0", "1.5", "nan", "inf", "true", "x", '""', "[1]", "{a = 1}", "{}")


def _keys(method: str) -> list[str]:
    table = schema.SFT_KEYS if method == "sft" else schema.KEYS
    return sorted(k.replace("[]", "") for k in table)


@settings(max_examples=120)
@given(
    data=st.data(),
    method=st.sampled_from(["grpo", "sft", "rae"]),
    value=st.sampled_from(SET_VALUES),
)
def test_set_takes_any_value_of_any_key_or_refuses_it(
    data: st.DataObject, method: str, value: str
) -> None:
    key = data.draw(st.sampled_from(_keys(method)))
    args = ["config", "--method", method, "--set", f"{key}={value}"]
    if "source" in key:
        args += ["--env", "x"]
    _run(args)


@pytest.mark.parametrize("method", ["grpo", "sft"])
@pytest.mark.parametrize("value", ["1", "[1, 2]", "{}", "{a = 1}", "true"])
def test_a_model_name_of_another_type_is_named(method: str, value: str) -> None:
    code, _, err = _run(["config", "--method", method, "--set", f"model.name={value}"])
    assert code == 2 and "'model.name' takes str" in err, err


def test_an_empty_model_table(tmp_path: Path) -> None:
    for method in ("grpo", "sft"):
        code, out, err = _run(["config", "--method", method, "--set", "model={}"])
        assert code == 0, err


# --- watch: a run that goes away ------------------------------------------------------------


def _make_run(folder: Path, layout: str) -> Path:
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[2] / "examples" / "make_run.py"
    subprocess.run(
        [sys.executable, str(script), str(folder), "--layout", layout], check=True, timeout=120
    )
    return folder


@pytest.mark.parametrize("layout", ["prime-rl", "verl"])
@pytest.mark.parametrize("when", ["mid-read", "between-polls"])
def test_a_run_removed_while_watched_is_one_line(layout: str, when: str, tmp_path: Path) -> None:
    from whilecli.errors import WhileError
    from whilecli.watch import watch_run
    from whilecli.watch.options import WatchOptions

    run = _make_run(tmp_path / "run", layout)
    lines: list[str] = []
    ticks = iter(range(10_000))

    def write(line: str) -> None:
        lines.append(line)
        if when == "mid-read" and run.exists() and len(lines) > 3:
            shutil.rmtree(run)

    def sleep(_: float) -> None:
        if run.exists():
            shutil.rmtree(run)

    options = WatchOptions(follow=True, interval=0.01, idle_exit=50)
    with pytest.raises(WhileError) as caught:
        watch_run(
            run, options, write=write, say=lines.append, sleep=sleep, clock=lambda: next(ticks)
        )
    assert caught.value.exit_code == 2
    assert str(run) in str(caught.value) and "\n" not in str(caught.value)
    if when == "between-polls":
        assert "the run directory is gone" in str(caught.value)


# --- an option given twice ----------------------------------------------------------------


def _single_valued(command: str) -> list[tuple[str, bool]]:
    """The options of one value of ``command``: (flag, takes a value)."""
    import click

    from whilecli.cli import _build

    out = []
    for param in _build(command).params:
        if isinstance(param, click.Option) and not param.multiple and not param.count:
            if param.opts[0] in ("--help", "-h"):
                continue
            out.append((param.opts[-1], not param.is_flag))
    return out


COMMANDS = ("route", "update", "config", "ada", "check", "size", "diff", "summarize", "watch")


@settings(max_examples=60)
@given(data=st.data(), command=st.sampled_from(COMMANDS))
def test_an_option_given_twice_with_two_values_is_refused(
    data: st.DataObject, command: str
) -> None:
    opt, takes = data.draw(st.sampled_from(_single_valued(command)))
    if takes:
        a, b = data.draw(
            st.lists(st.sampled_from(["1", "2", "x", "-1"]), min_size=2, max_size=2, unique=True)
        )
        args = [command, opt, a, f"{opt}={b}"]
    else:
        args = [command, opt, opt]
    code, _, err = _run(args)
    if takes:
        assert code == 2 and "given twice" in err, err
    else:
        assert "given twice" not in err  # the same flag twice is no conflict


@pytest.mark.parametrize(
    "args",
    [
        ["config", "--method", "grpo", "--method", "sft"],
        ["config", "--method", "grpo", "--lora", "--full"],
        ["config", "--method", "grpo", "--set", "model.name=a", "--set", "model.name=b"],
        ["update", str(EXAMPLES / "batch.jsonl"), "--method=sao", "--method", "bpco"],
        ["ada", str(EXAMPLES / "mixed.jsonl"), "--keep", "4", "--keep", "5"],
    ],
)
def test_two_values_of_one_option_are_refused(args: list[str]) -> None:
    code, _, err = _run(args)
    assert code == 2 and ("given twice" in err or "both given" in err), err


def test_the_same_value_twice_is_no_conflict() -> None:
    code, _, err = _run(["config", "--method", "grpo", "--method", "grpo", "--lora", "--lora"])
    assert code == 0, err


# --- every number of every command ----------------------------------------------------------

#: What a hostile user types where a number goes.
NUMBERS = ("-1", "0", "nan", "-inf", "inf", "1e400", "1e-400", str(10**23), "", "x", "0x10", "1,5")


def _base(command: str, tmp: Path) -> list[str]:
    """A command line that runs as it is: the hostile option goes after it."""
    mixed, batch = str(EXAMPLES / "mixed.jsonl"), str(EXAMPLES / "batch.jsonl")
    pair = [str(EXAMPLES / "student.jsonl"), str(EXAMPLES / "teacher.jsonl")]
    run = str(Path(__file__).resolve().parents[2] / "examples" / "run")
    return {
        "route": [mixed],
        "update": [batch, "--method", "flash_reinforce"],
        "config": ["--method", "grpo"],
        "ada": [mixed],
        "check": [mixed],
        "size": [],
        "diff": pair,
        "summarize": [mixed, "-o", str(tmp / "s.parquet")],
        "watch": [run],
    }[command]


def _numeric(command: str) -> list[str]:
    import click

    from whilecli.cli import _build

    kinds = (click.types.IntParamType, click.types.FloatParamType)
    return sorted(
        p.opts[0]
        for p in _build(command).params
        if isinstance(p, click.Option) and isinstance(p.type, kinds)
    )


@settings(max_examples=80)
@given(data=st.data(), command=st.sampled_from(COMMANDS), value=st.sampled_from(NUMBERS))
def test_every_number_of_every_command(data: st.DataObject, command: str, value: str) -> None:
    opt = data.draw(st.sampled_from(_numeric(command)))
    with tempfile.TemporaryDirectory() as tmp:
        code, _, err = _run([command, *_base(command, Path(tmp)), opt, value])
        if code == 2 and err.count(opt) == 0:
            assert "no such file" not in err, err  # the value was not taken for a path
        assert sorted(os.listdir(tmp)) in ([], ["s.parquet"])  # nothing half-written


@pytest.mark.parametrize(
    "args",
    [
        ["config", "--from", ""],
        ["config", "--method", "sft", "--data", ""],
        ["ada", ""],
        ["diff", "", str(EXAMPLES / "student.jsonl")],
        ["update", "", "--method", "grpo"],
        ["summarize", "", "-o", "-"],
        ["watch", ""],
    ],
)
def test_an_empty_path_is_named_empty(args: list[str], tmp_path: Path) -> None:
    code, _, err = _run(args, cwd=tmp_path)  # never the current folder read instead
    assert code == 2 and "empty" in err, err
