"""The ``whilecli`` command (alias ``while``): one Typer app, one thin module per command under :mod:`whilecli.commands`.

A command's module is imported only when that command runs (or its ``--help`` is asked), so
``whilecli --help``, ``whilecli --version`` and a bad command name load typer and click and nothing
of polars, pyarrow, scipy or torch. The top-level command list comes from :data:`COMMANDS`,
not from the modules.
"""

from __future__ import annotations

import atexit
import difflib
import gc
import importlib
import importlib.util
import inspect
import re
import sys
from typing import Any, cast

import click
import typer
from typer.core import TyperCommand, TyperGroup

from whilecli import __version__
from whilecli.commands._common import (
    PROG,
    OneLineUsageError,
    existing_paths,
    progress_wanted,
    refuse_conflicting_repeats,
    slow_status,
    torch_missing,
)

#: Every command: its module and function under :mod:`whilecli.commands`, and its one line in
#: ``whilecli --help`` (in this order).
COMMANDS: dict[str, tuple[str, str, str]] = {
    "route": ("route", "route_command", "Route graded rows to a training method, with evidence."),
    "update": ("update", "update_command", "Per-token update coefficients for a batch (torch)."),
    "config": (
        "config",
        "config_command",
        "Write a prime-rl config (RL or SFT) and what it reads.",
    ),
    "ada": ("ada", "ada_command", "ReinforceAda: the next sampling round, a balanced selection."),
    "check": ("check", "check_command", "Gate an eval dump in CI: exit 1 when a policy holds."),
    "size": ("size", "size_command", "How many held-out tasks it takes to see a gain."),
    "diff": ("diff", "diff_command", "Compare two dumps of the same tasks, task by task."),
    "summarize": ("summarize", "summarize_command", "Write the per-task counts route reads."),
    "formats": ("formats", "formats_command", "List the input formats and where fields come from."),
    "watch": ("watch", "watch_command", "Route a training run while it runs, step by step."),
}

#: Commands that read rows: a progress line on a terminal when the read is slow.
READERS = frozenset({"route", "check", "diff", "summarize", "size", "ada"})

#: Positional inputs whose declaration has no existence check of its own (``update``'s
#: BATCH): a missing file is refused while parsing, before torch or polars load.
INPUT_ARGUMENTS = frozenset({"batch_path"})

#: Commands that compute in torch (the ``torch`` extra).
NEEDS_TORCH = frozenset({"update"})

#: ``-h`` is ``--help`` for the group and, through click's context inheritance, every command.
CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"]}


def _one_line(err: click.UsageError) -> click.UsageError:
    if isinstance(err, (OneLineUsageError, click.exceptions.NoArgsIsHelpError)):
        return err  # `while` alone still prints the help
    where = err.ctx.command_path if err.ctx is not None else PROG
    text = " ".join(err.format_message().split()).rstrip(".")
    return OneLineUsageError(f"{text} (see '{where} --help')", ctx=err.ctx)


#: click writes a default given as text in parentheses, "[default: (1.0)]"; shown as any other.
_DEFAULT_IN_PARENS = re.compile(r"default: \((.*?)\)(?=[;\]])")


class _Command(TyperCommand):
    """A command whose ``--help`` groups its options under their panels (``rich_help_panel``:
    Inputs, Checks, Output, ...) as plain text sections, as click prints "Options".

    With ``rich_markup_mode=None`` typer prints click's plain help and drops the panels (they
    show only in its Rich boxes); rendered here, the help is the same text on a terminal, in a
    pipe and under NO_COLOR, with no escape codes and without importing Rich's help renderer.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        refuse_conflicting_repeats(self, args)
        return super().parse_args(ctx, args)

    def format_arguments(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Nothing: :meth:`format_options` lists the positionals (click 8.5 would list them
        a second time, under its own heading)."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        args: list[tuple[str, str]] = []
        panels: dict[str | None, list[tuple[str, str]]] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            record = (record[0], _DEFAULT_IN_PARENS.sub(r"default: \1", record[1]))
            if param.param_type_name == "argument":
                args.append(record)
            else:
                panels.setdefault(getattr(param, "rich_help_panel", None), []).append(record)
        if args:
            with formatter.section("Arguments"):
                formatter.write_dl(args)
        named = [p for p in panels if p is not None]
        named.sort(key=lambda p: (p != "Inputs", p == "Output"))  # Inputs first, Output last
        for panel in named:
            with formatter.section(panel):
                formatter.write_dl(panels[panel])
        if None in panels:
            with formatter.section("Other options" if len(panels) > 1 else "Options"):
                formatter.write_dl(panels[None])


def _torch() -> bool:
    """Whether torch can be imported (looked up, not imported)."""
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def _build(name: str) -> click.Command:
    """The click command of ``name``, from its module (imported now)."""
    module, function, short_help = COMMANDS[name]
    callback = getattr(importlib.import_module(f"whilecli.commands.{module}"), function)
    info = typer.models.CommandInfo(name=name, cls=_Command, callback=callback)
    info.short_help = short_help
    command = typer.main.get_command_from_info(
        info, pretty_exceptions_short=False, rich_markup_mode=None
    )
    helps = _argument_helps(callback)
    for param in command.params:
        if not isinstance(param, click.Argument):
            continue
        if not getattr(param, "help", None) and param.name in helps:
            cast(Any, param).help = helps[param.name]  # click.Argument has help from 8.5
        if param.callback is None and param.name in INPUT_ARGUMENTS:
            param.callback = _check_exists
    return command


def _argument_helps(callback: Any) -> dict[str, str]:
    """Each positional's help as its declaration (``typer.Argument(help=...)``) gives it.

    typer's argument keeps that text as ``help`` set before click's ``__init__``; click 8.5
    gave ``Argument`` a ``help`` of its own, which that ``__init__`` sets to None: restored here
    so the help lists every positional with its line under any click from 8.1 on.
    """
    helps: dict[str, str] = {}
    for name, parameter in inspect.signature(callback).parameters.items():
        info = parameter.default
        if isinstance(info, typer.models.ArgumentInfo) and info.help:
            helps[name] = info.help
    return helps


def _check_exists(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    return existing_paths(value)


class _Group(TyperGroup):
    """The ``whilecli`` group: commands load on first use; click's usage errors (several lines)
    become one line; one "did you mean" for a mistyped command."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS) + [n for n in self.commands if n not in COMMANDS]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            self.commands[cmd_name] = _build(cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_) for name, (_, _, help_) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = click.utils.make_str(args[0])
        if name in COMMANDS or name in self.commands or name.startswith("-"):
            return click.Group.resolve_command(self, ctx, args)
        text = f"No such command {name!r}."
        close = difflib.get_close_matches(name, self.list_commands(ctx))
        if close:
            text += " Did you mean " + ", ".join(repr(c) for c in close) + "?"
        raise click.UsageError(text, ctx=ctx)

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except click.UsageError as err:
            raise _one_line(err) from None

    def invoke(self, ctx: click.Context) -> Any:
        protected = getattr(ctx, "_protected_args", None)  # click >= 8.2 (8.1: protected_args)
        if protected is None:
            protected = ctx.protected_args
        args = [*protected, *ctx.args]
        if args and args[0] in NEEDS_TORCH and not {"-h", "--help"} & set(args) and not _torch():
            raise OneLineUsageError(torch_missing())
        try:
            if args and args[0] in READERS and progress_wanted(args[1:]):
                with slow_status(f"{PROG} {args[0]}: reading…"):
                    return super().invoke(ctx)
            return super().invoke(ctx)
        except click.UsageError as err:
            raise _one_line(err) from None
        finally:
            _forget_step()


def _forget_step() -> None:
    """``--step`` holds for one command's reads. A command whose options fail to parse never
    closes its context (click skips the cleanup there), so the group clears the step after
    every command, and a later command in the same process reads the latest step again."""
    module = sys.modules.get("whilecli.io.formats.prime_rl")
    if module is not None:
        module.STEP.set(None)


class _App(typer.Typer):
    """The program: the command line runs on checked standard streams
    (:mod:`whilecli.stdio`), and whatever escapes the commands' own error handling (a usage
    message to a full stderr, a closed pipe under ``--help``) ends in an exit code, never a
    traceback."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs.get("standalone_mode", True):  # a caller that takes the exceptions
            return super().__call__(*args, **kwargs)
        from whilecli import stdio

        stdio.install()
        sys.exit(stdio.run(lambda: super(_App, self).__call__(*args, **kwargs)))


app = _App(
    cls=_Group,
    name=PROG,
    help="Route graded RL rollouts to a training method, with evidence.\n\n"
    f"Run '{PROG} COMMAND -h' for a command's options. The program is also installed as\n"
    "'while', a shell keyword in bash and zsh: type it as '\\while'.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings=CONTEXT_SETTINGS,
)


_FROZEN_AT_EXIT: list[bool] = []


def _skip_final_collection() -> None:
    """Have the interpreter's last garbage collection skip every object alive at exit.

    After polars and numpy are loaded, the collection Python runs at shutdown walks all their
    objects: about 0.15 s of a 0.6 s route of a small file. ``gc.freeze()`` from an exit
    handler (registered first, so it runs last) moves them out of its reach; exit handlers,
    flushes and finalisers of freed objects still run. Only the command line does this, not
    an import of the library.
    """
    if not _FROZEN_AT_EXIT:
        atexit.register(gc.freeze)
        _FROZEN_AT_EXIT.append(True)


def _version(value: bool) -> None:
    if value:
        print(f"{PROG} {__version__}")
        raise typer.Exit(0)


@app.callback()
def main(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """Route graded RL rollouts to a training method, with evidence."""
    _skip_final_collection()


def _terminated(signum: int, _frame: object) -> None:
    """SIGTERM (``timeout``, a CI job cancelled, a pod stopped) or SIGHUP (the terminal
    closed, an ssh session dropped) ends the command as an exception does, so every write's
    ``finally`` removes its temporary file; exit 128 + the signal (143, 129). SIGINT (Ctrl-C)
    is Python's KeyboardInterrupt, which does the same (exit 130)."""
    raise SystemExit(128 + signum)


def _end_cleanly_on_signals() -> None:
    """Install :func:`_terminated` for each signal that ends a process by default and that
    a user's session or a job runner sends; one left ignored (``nohup``) stays ignored."""
    import signal

    for name in TERMINATING_SIGNALS:
        signum = getattr(signal, name, None)  # SIGHUP: not on Windows
        if signum is not None and signal.getsignal(signum) is signal.SIG_DFL:
            signal.signal(signum, _terminated)


#: The signals that end a command as an exception does (their default ends the process
#: with no clean-up: a temporary file of a write would be left behind).
TERMINATING_SIGNALS = ("SIGTERM", "SIGHUP")


def run() -> None:
    """The console scripts ``whilecli`` and ``while``: help, usage lines and messages say
    ``whilecli`` under either name (``while`` is a shell keyword a user cannot type as is)."""
    _end_cleanly_on_signals()
    app(prog_name=PROG)
