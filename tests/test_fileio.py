"""Writing files the user owns: refused targets, checked before the work, atomic moves that
never replace a file that appeared after the check (two racing writers: one wins), and an
``OSError`` at the write as one line.

The tests run as root, to whom ``os.access`` says yes everywhere: "no permission" is a
monkeypatched ``os.access`` or a path under ``/proc``, where no file can be created.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLES
from whilecli import fileio
from whilecli.cli import app
from whilecli.errors import UsageError
from whilecli.fileio import atomic_write, atomic_write_text, check_writable

MIXED = str(EXAMPLES / "mixed.jsonl")


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# --- the check ------------------------------------------------------------------------------


def test_check_refuses_each_unwritable_target(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "afile").write_text("x")
    (tmp_path / "old").write_text("x")
    (tmp_path / "adir").mkdir()
    os.symlink(tmp_path / "nowhere", tmp_path / "dangling")
    cases = {
        "": "empty",
        str(tmp_path / "adir"): "is a directory",
        str(tmp_path / "old"): "--force",
        str(tmp_path / "dangling"): "--force",
        str(tmp_path / "afile" / "x.toml"): "afile is not a directory",
        str(tmp_path / "afile" / "deeper" / "x.toml"): "afile is not a directory",
        "/proc/x.toml": "cannot write /proc/x.toml",
    }
    for path, says in cases.items():
        with pytest.raises(UsageError, match=says):
            check_writable(path, force=False)
    check_writable(tmp_path / "old", force=True)
    check_writable(tmp_path / "new" / "sub" / "x.toml", force=False)  # folders get made
    assert not (tmp_path / "new").exists()  # ... by the write, not the check
    assert _leftovers(tmp_path) == []  # the probe is gone

    monkeypatch.setattr(fileio.os, "access", lambda path, mode: False)
    with pytest.raises(UsageError, match="no permission to create files in"):
        check_writable(tmp_path / "x.toml", force=False)


# --- the move -------------------------------------------------------------------------------


def _appearing(dest: Path):
    """A write that, like a second writer, creates ``dest`` after the check."""

    def write(tmp: Path) -> None:
        tmp.write_text("mine\n")
        dest.write_text("theirs\n")

    return write


@pytest.mark.parametrize("way", ["renameat2", "link", "exclusive"])
def test_a_file_that_appears_after_the_check_is_kept(tmp_path: Path, monkeypatch, way) -> None:
    if way != "renameat2":
        monkeypatch.setattr(fileio, "_renameat2", None)
    elif fileio._load_renameat2() is None:
        pytest.skip("no renameat2 here")
    if way == "exclusive":

        def no_links(src, dst):
            raise OSError(errno.EPERM, "Operation not permitted")

        monkeypatch.setattr(fileio.os, "link", no_links)
    dest = tmp_path / "out.txt"
    with pytest.raises(UsageError, match="appeared while it was being written"):
        atomic_write(dest, _appearing(dest))
    assert dest.read_text() == "theirs\n"
    assert _leftovers(tmp_path) == []
    # without a race, each way writes the file and leaves nothing behind
    fresh = tmp_path / "fresh.txt"
    atomic_write_text(fresh, "mine\n")
    assert fresh.read_text() == "mine\n" and _leftovers(tmp_path) == []
    assert fresh.stat().st_nlink == 1


def test_force_replaces_a_file_that_appeared(tmp_path: Path) -> None:
    dest = tmp_path / "out.txt"
    atomic_write(dest, _appearing(dest), force=True)
    assert dest.read_text() == "mine\n"


def test_racing_writers_one_wins(tmp_path: Path) -> None:
    dest = tmp_path / "out.txt"
    start = threading.Barrier(8)
    won, lost = [], []

    def writer(i: int) -> None:
        def write(tmp: Path) -> None:
            tmp.write_text(f"writer {i}\n")
            start.wait()  # every writer has passed the check before any moves

        try:
            atomic_write(dest, write)
            won.append(i)
        except UsageError:
            lost.append(i)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1 and len(lost) == 7
    assert dest.read_text() == f"writer {won[0]}\n"
    assert _leftovers(tmp_path) == []


def test_an_oserror_at_the_write_is_one_line(tmp_path: Path) -> None:
    def full(tmp: Path) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    dest = tmp_path / "out.txt"
    with pytest.raises(UsageError, match=r"cannot write .*out.txt: No space left on device"):
        atomic_write(dest, full)
    assert not dest.exists() and _leftovers(tmp_path) == []


# --- through the commands -------------------------------------------------------------------


def test_config_race_through_the_cli(tmp_path: Path, monkeypatch) -> None:
    """The file appears between the command's check and its write: kept, exit 2."""
    dest = tmp_path / "rl.toml"
    real = fileio._commit

    def late(tmp: Path, to: Path, *, force: bool) -> None:
        to.write_text("theirs\n")
        real(tmp, to, force=force)

    monkeypatch.setattr(fileio, "_commit", late)
    r = CliRunner().invoke(app, ["config", "--method", "grpo", "-o", str(dest)])
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and "appeared while it was being written" in r.stderr
    assert dest.read_text() == "theirs\n"


@pytest.mark.parametrize(
    "args",
    [
        ["summarize", MIXED, "-o", "/proc/s.parquet"],
        ["config", "--from", MIXED, "-o", "/proc/rl.toml"],
        ["ada", MIXED, "-o", "/proc/sel.parquet"],
        ["update", MIXED, "--method", "groupwise", "-o", "/proc/g.jsonl"],
    ],
)
def test_an_unwritable_target_is_refused_before_reading(args, monkeypatch) -> None:
    """The check comes before the work: no row is read for a target that cannot be written."""
    import whilecli.io.read as read_mod
    import whilecli.io.table as table_mod
    import whilecli.methods.rowio as rowio
    import whilecli.route as route_pkg

    def no(*a, **k):
        raise AssertionError("read before the output was checked")

    monkeypatch.setattr(read_mod, "read_rows", no)
    monkeypatch.setattr(rowio, "read_table", no)
    monkeypatch.setattr(table_mod, "read_table", no)
    monkeypatch.setattr(route_pkg, "run_route", no)
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 2, r.stderr
    assert r.stderr.startswith("whilecli: error: cannot write /proc/")


def test_update_checks_its_targets_before_reading(tmp_path: Path, monkeypatch) -> None:
    import whilecli.methods.io as methods_io

    def no(*a, **k):
        raise AssertionError("read before the output was checked")

    monkeypatch.setattr(methods_io, "read_batch", no)
    batch = str(EXAMPLES / "batch.jsonl")
    for extra in (["-o", "/proc/u.parquet"], ["--state", "/proc/s.json"]):
        method = "rae" if "--state" in extra else "sao"
        r = CliRunner().invoke(app, ["update", batch, "--method", method, *extra])
        assert r.exit_code == 2, r.stderr
        assert r.stderr.startswith("whilecli: error: cannot write /proc/")


@pytest.mark.parametrize(("outputs", "failing"), [(n, i) for n in (1, 2, 3) for i in range(n)])
@pytest.mark.parametrize("stage", ["write", "move"])
def test_several_outputs_are_written_as_one(
    tmp_path: Path, monkeypatch, outputs, failing, stage
) -> None:
    """A command's outputs (ada's task list and selection) are written together: whichever
    one fails, at its write or at its move, no target is left behind, created or replaced."""
    targets = [tmp_path / f"out{i}.txt" for i in range(outputs)]
    old = tmp_path / "out0.txt"
    old.write_text("old")  # an existing target, replaced only with force

    def write(i: int):
        def go(tmp: Path) -> None:
            if stage == "write" and i == failing:
                raise OSError(errno.ENOSPC, "No space left on device")
            tmp.write_text(f"new {i}")

        return go

    commit = fileio._commit

    def flaky_commit(tmp: Path, dest: Path, *, force: bool) -> None:
        if stage == "move" and dest == targets[failing]:
            raise FileExistsError(dest)
        commit(tmp, dest, force=force)

    monkeypatch.setattr(fileio, "_commit", flaky_commit)
    with pytest.raises(UsageError) as err:
        fileio.atomic_write_all([(t, write(i)) for i, t in enumerate(targets)], force=True)
    assert str(targets[failing]) in str(err.value)
    created = [t for t in targets[1:] if t.exists()]
    assert created == [], f"left behind after a failing output {failing}: {created}"
    assert _leftovers(tmp_path) == []
    if stage == "write" or failing == 0:
        assert old.read_text() == "old"  # nothing moved before every write succeeded


def test_ada_leaves_no_task_list_beside_a_failed_selection(tmp_path: Path, monkeypatch) -> None:
    """``ada --next-round A -o B``: a selection that cannot be written takes the task list
    with it (a rerun found the task list and refused to overwrite it)."""
    from whilecli.methods import rowio

    real = rowio._row_writer

    def failing(frame, path):
        if path.endswith("sel.jsonl"):
            return lambda tmp: (_ for _ in ()).throw(OSError(errno.EDQUOT, "Disk quota exceeded"))
        return real(frame, path)

    monkeypatch.setattr(rowio, "_row_writer", failing)
    nxt, sel = tmp_path / "next.jsonl", tmp_path / "sel.jsonl"
    res = CliRunner().invoke(app, ["ada", MIXED, "--next-round", str(nxt), "-o", str(sel)])
    assert res.exit_code == 2, res.output
    assert "Disk quota exceeded" in res.output and str(sel) in res.output
    assert not nxt.exists() and not sel.exists()
    monkeypatch.setattr(rowio, "_row_writer", real)
    res = CliRunner().invoke(app, ["ada", MIXED, "--next-round", str(nxt), "-o", str(sel)])
    assert res.exit_code == 0, res.output
    assert nxt.exists() and sel.exists()


#: Run the command line with every staged write interrupted by a signal mid-write (after
#: the temporary file is written, before it is moved into place).
SIGNALLED = """
import os, signal, sys, time
import whilecli.fileio as f
signum = getattr(signal, sys.argv[1])
# a runner under nohup (or a shell's background job) hands the signal down ignored, which the
# command keeps; this test is of a terminal that can send it
if signal.getsignal(signum) is signal.SIG_IGN:
    signal.signal(signum, signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL)
staged = f._stage
def stage(given, write):
    def interrupted(tmp):
        write(tmp)
        os.kill(os.getpid(), signum)
        time.sleep(30)
    return staged(given, interrupted)
f._stage = stage
sys.argv = ["whilecli", *sys.argv[2:]]
from whilecli.cli import run
run()
"""


def _signalled(script: str, name: str, out: Path) -> subprocess.CompletedProcess[bytes]:
    """``config -o OUT`` run by ``script`` (:data:`SIGNALLED` or a variant), signal ``name``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    args = [sys.executable, "-c", script, name, "config", "--method", "grpo", "-o", str(out)]
    return subprocess.run(args, env=env, capture_output=True, timeout=120)


@pytest.mark.parametrize(("name", "code"), [("SIGTERM", 143), ("SIGHUP", 129), ("SIGINT", 130)])
def test_a_signal_mid_write_leaves_no_temporary_file(tmp_path: Path, name: str, code: int) -> None:
    """The signals a session or a job runner ends a command with (a timeout, a closed
    terminal, a dropped ssh session, Ctrl-C) remove the write's temporary file."""
    out = tmp_path / "out" / "grpo.toml"
    done = _signalled(SIGNALLED, name, out)
    assert done.returncode == code, done.stderr
    assert _leftovers(out.parent) == [] and not out.exists()


IGNORED = "signal.signal(signum, signal.SIG_IGN)\nstaged = f._stage\n"


def test_a_hangup_ignored_by_nohup_stays_ignored(tmp_path: Path) -> None:
    """Under nohup (SIGHUP ignored when the command starts) a hang-up mid-write does not stop
    the command: it finishes the write, as nohup asks, and leaves no temporary file."""
    script = SIGNALLED.replace("staged = f._stage\n", IGNORED)
    script = script.replace("time.sleep(30)", "pass")
    assert script.count("SIG_IGN)\n") == 1 and "sleep" not in script
    out = tmp_path / "out" / "grpo.toml"
    done = _signalled(script, "SIGHUP", out)
    assert done.returncode == 0, done.stderr
    assert out.exists() and _leftovers(out.parent) == []


WRITERS = {
    "update": ["update", "--method", "grpo", str(EXAMPLES / "grouped_batch.jsonl")],
    "update rowwise": ["update", "--method", "groupwise", str(EXAMPLES / "graded.jsonl")],
    "summarize": ["summarize", str(EXAMPLES / "graded.jsonl")],
    "ada": ["ada", str(EXAMPLES / "graded.jsonl")],
    "ada next round": ["ada", str(EXAMPLES / "graded.jsonl"), "-o", "-", "--next-round"],
    "config": ["config", "--method", "grpo", "--model", "Qwen/Qwen3-4B"],
}


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_every_writer_writes_through_a_device_and_names_a_bad_suffix(
    command: str, tmp_path: Path
) -> None:
    """One rule for output paths across commands: a character device (``/dev/null``) has no
    name to take a format from and is written through in the command's stream format; a file
    whose suffix names no format the command writes is refused in one line naming it (config
    writes TOML under any name: its suffix chooses nothing)."""
    args = WRITERS[command]
    flag = [] if args[-1] == "--next-round" else ["-o"]
    through = CliRunner().invoke(app, [*args, *flag, os.devnull])
    assert through.exit_code == 0, through.stderr
    if command == "config":
        return
    bad = tmp_path / "out.txt"
    refused = CliRunner().invoke(app, [*args, *flag, str(bad)])
    assert refused.exit_code == 2
    assert refused.stderr.count("\n") == 1 and "out.txt" in refused.stderr
    assert "'.txt'" in refused.stderr and not bad.exists()
