"""The ``while`` command: one Typer app, one thin module per command under :mod:`whilecli.commands`."""

from __future__ import annotations

import typer

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

app = typer.Typer(
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
