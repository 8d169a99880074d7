"""A path the system will not let a command list or enter (a folder of mode 000 met while
expanding an input, a run directory's step folder): one line naming the path and the
system's reason, exit 2, for every reading command; it was ``internal error:
PermissionError``, exit 70 (``Path.is_dir`` raises on a folder it cannot enter).

The tests run as root, whom mode bits do not stop: the system's refusal is stood in for by
``Path.is_dir`` / ``Path.is_file`` / ``os.scandir`` raising it under the locked folder."""

from __future__ import annotations

import errno
import os
import pathlib
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLES
from whilecli.cli import app
from whilecli.errors import path_error

COMMANDS = [
    ["route", "LOCKED"],
    ["check", "LOCKED"],
    ["ada", "LOCKED"],
    ["summarize", "LOCKED", "-o", "OUT"],
    ["diff", "LOCKED", str(EXAMPLES / "mixed.jsonl")],
    ["size", "--before", "LOCKED", "--after", str(EXAMPLES / "mixed.jsonl")],
    ["route", str(EXAMPLES / "student.jsonl"), "--teacher", "LOCKED"],
    ["route", "LOCKED/*.jsonl"],
    ["watch", "LOCKED"],
]


def _lock(monkeypatch: pytest.MonkeyPatch, locked: Path) -> None:
    def refused(path: object) -> bool:
        text = os.fspath(path)  # type: ignore[arg-type]
        return os.path.abspath(text).startswith(str(locked) + os.sep) or os.path.abspath(
            text
        ) == str(locked)

    def guard(real):
        def checked(self, *args, **kwargs):
            if refused(self) and os.path.abspath(os.fspath(self)) != str(locked):
                raise PermissionError(errno.EACCES, "Permission denied", os.fspath(self))
            return real(self, *args, **kwargs)

        return checked

    real_scandir = os.scandir

    def scandir(path="."):
        if refused(path):
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(pathlib.Path, "is_dir", guard(pathlib.Path.is_dir))
    monkeypatch.setattr(pathlib.Path, "is_file", guard(pathlib.Path.is_file))
    monkeypatch.setattr(os, "scandir", scandir)


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: "-".join(a[:1] + a[2:3])[:30])
@pytest.mark.parametrize("inside", ["rows", "run"])
def test_a_folder_that_cannot_be_read_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], inside: str
) -> None:
    locked = tmp_path / "locked"
    if inside == "run":  # a prime-rl run directory: its rollouts under the locked folder
        step = locked / "rollouts" / "step_1" / "train" / "all"
        step.mkdir(parents=True)
        (locked / "metrics.jsonl").write_text('{"step": 1}\n')
        shutil.copy(EXAMPLES / "mixed.jsonl", step / "traces.jsonl")
    else:
        locked.mkdir()
        shutil.copy(EXAMPLES / "mixed.jsonl", locked / "a.jsonl")
    _lock(monkeypatch, locked)
    out = str(tmp_path / "summary.parquet")
    given = [a.replace("LOCKED", str(locked)).replace("OUT", out) for a in args]
    res = CliRunner().invoke(app, given)
    assert res.exit_code == 2, res.output
    assert "internal error" not in res.output and "Traceback" not in res.output
    assert "permission denied" in res.output.lower() and str(locked) in res.output


@pytest.mark.parametrize(
    ("err", "line"),
    [
        (PermissionError(errno.EACCES, "Permission denied", "/x/y"), "/x/y: cannot read it"),
        (OSError(errno.ELOOP, "Too many levels of symbolic links", "/l"), "/l: cannot read it"),
        (OSError(errno.EIO, "Input/output error"), None),  # no path: a bug's, not the input's
        (BrokenPipeError(errno.EPIPE, "Broken pipe", "/p"), None),
    ],
)
def test_path_error_names_the_path_or_nothing(err: OSError, line: str | None) -> None:
    got = path_error(err)
    assert (got is None) if line is None else (got is not None and got.startswith(line))
