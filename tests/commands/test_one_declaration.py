"""One declaration per option: every option of every command is generated from a library
declaration (a field of a library options dataclass, or a :class:`whilecli.knobs.Knob`), so
its default, range and help are written once, in the library. The only parameters a command
writes itself are its input and output paths.

``NOT_YET`` lists the options still written in a command module, to be moved; the list only
shrinks: a new hand-written option fails here, and so does a listed one once it is generated.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from typing import Any

import pytest
import typer

from whilecli.cli import COMMANDS
from whilecli.commands._common import DECLARATION
from whilecli.declare import declared
from whilecli.knobs import Knob

#: Parameters that name the files a command reads or writes, nothing more (no default to
#: share, no range): ``(command, parameter)``.
IO_PATHS = {
    ("route", "paths"),
    ("route", "teacher"),
    ("route", "judge_audit"),
    ("check", "paths"),
    ("check", "teacher"),
    ("check", "judge_audit"),
    ("update", "batch_path"),
    ("update", "output"),
    ("update", "state"),
    ("config", "output"),
    ("config", "data"),
    ("config", "from_"),
    ("ada", "rows"),
    ("ada", "next_round"),
    ("ada", "output"),
    ("size", "before"),
    ("size", "after"),
    ("diff", "before"),
    ("diff", "after"),
    ("summarize", "paths"),
    ("summarize", "output"),
    ("watch", "run_dir"),
}

#: Options still declared in a command module (to be moved into the library's options).
NOT_YET = {
    "route": {"output", "fail_on", "quiet", "verbose"},
    "check": {"fail_on", "output"},
    "update": {
        "method", "force", "fmt", "device", "dtype", "compile_", "ratio", "gae_alpha",
        "reward_range", "clip", "loss_type", "truncated", "beta", "max_len", "agent_key",
        "correction", "icepop_band", "mode", "hack_zero",
    },
    "config": {
        "method", "env", "gpus", "steps", "prompts", "group_size", "lora", "lr",
        "temperature", "max_tokens", "seq_len", "teacher", "privileged", "async_",
        "off_policy_steps", "correction", "set_", "force", "fmt",
    },
    "ada": {"keep", "round_size", "max_rounds", "exit", "threshold", "force", "fmt"},
    "size": {"effect", "base", "k", "power", "alpha", "output"},
    "diff": {"fail_on", "output"},
    "summarize": {"force", "merge"},
    "formats": {"as_json", "aliases"},
}  # fmt: skip


def _parameters(command: str) -> dict[str, Any]:
    module, function, _ = COMMANDS[command]
    callback = getattr(importlib.import_module(f"whilecli.commands.{module}"), function)
    return {name: p.default for name, p in inspect.signature(callback).parameters.items()}


def _from_library(info: Any) -> bool:
    source = getattr(info, DECLARATION, None)
    if isinstance(source, Knob):
        return True
    if not isinstance(source, tuple):
        return False
    cls, name = source
    return dataclasses.is_dataclass(cls) and name in declared(cls)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_option_comes_from_a_library_declaration(command: str) -> None:
    written_here = []
    for name, info in _parameters(command).items():
        if (command, name) in IO_PATHS:
            assert isinstance(info, (typer.models.ArgumentInfo, typer.models.OptionInfo))
            continue
        assert isinstance(info, typer.models.OptionInfo), f"{command} {name}: not an option"
        if not _from_library(info):
            written_here.append(name)
    assert sorted(written_here) == sorted(NOT_YET.get(command, ())), (
        f"{command}: options written in the command module instead of generated from the "
        "library's declaration (or a listed one that is now generated: take it off NOT_YET)"
    )


def test_the_declared_options_read_as_their_fields() -> None:
    """A generated option's default and help are its field's."""
    from whilecli.io.options import ReadOptions

    info = _parameters("route")["missing"]
    field = declared(ReadOptions)["missing"]
    assert info.default == field.default == "skip"
    assert info.help == field.metadata["help"]
