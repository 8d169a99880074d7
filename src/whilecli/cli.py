"""The ``while`` command: one Typer app, one thin module per command under :mod:`whilecli.commands`."""

from __future__ import annotations

from typing import Any

import click
import typer
from typer.core import TyperGroup

from whilecli import __version__
from whilecli.commands.ada import ada_command
from whilecli.commands.check import check_command
from whilecli.commands.config import config_command
from whilecli.commands.diff import diff_command
from whilecli.commands.formats import formats_command
from whilecli.commands.route import route_command
from whilecli.commands.size import size_command
from whilecli.commands.summarize import summarize_command
from whilecli.commands.update import update_command


class _OneLineUsageError(click.UsageError):
    """A usage error (an unknown option, a value of the wrong type) as one line on stderr,
    with the program's error prefix, exit 2: as every other bad input."""

    def show(self, file: Any = None) -> None:
        click.echo(f"while: error: {self.format_message()}", file=file, err=True)


def _one_line(err: click.UsageError) -> click.UsageError:
    if isinstance(err, (_OneLineUsageError, click.exceptions.NoArgsIsHelpError)):
        return err  # `while` alone still prints the help
    where = err.ctx.command_path if err.ctx is not None else "while"
    text = " ".join(err.format_message().split()).rstrip(".")
    return _OneLineUsageError(f"{text} (see '{where} --help')", ctx=err.ctx)


class _Group(TyperGroup):
    """The ``while`` group: click's usage errors (several lines) become one line."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except click.UsageError as err:
            raise _one_line(err) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as err:
            raise _one_line(err) from None


app = typer.Typer(
    cls=_Group,
    name="while",
    help="Route graded RL rollouts to a training method, with evidence.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        print(f"while {__version__}")
        raise typer.Exit(0)


@app.callback()
def main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """Route graded RL rollouts to a training method, with evidence."""


app.command("route")(route_command)
app.command("update")(update_command)
app.command("config")(config_command)
app.command("ada")(ada_command)
app.command("check")(check_command)
app.command("size")(size_command)
app.command("diff")(diff_command)
app.command("summarize")(summarize_command)
app.command("formats")(formats_command)
