"""What every command shares: turning errors into one line and an exit code, the checks
that run while the command line is parsed (before any heavy import), and the progress line
of a slow read."""

from __future__ import annotations

import functools
import glob
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click
import typer

from whilecli import PROG as PROG
from whilecli.errors import (
    OUT_OF_MEMORY,
    OUT_OF_MEMORY_EXIT,
    UsageError,
    WhileError,
    path_error,
    shown_path,
)
from whilecli.io.formats.registry import NAMES as FORMAT_NAMES
from whilecli.io.options import ReadOptions as _ReadOptions
from whilecli.route.options import MAX_DRAWS, MIN_DRAWS
from whilecli.route.options import RouteOptions as _RouteOptions

F = TypeVar("F", bound=Callable[..., Any])

#: Exit code for an error inside whilecli itself (a bug), as sysexits' EX_SOFTWARE.
INTERNAL_ERROR = 70
#: Exit code when the reader closed the output pipe (``| head``): 128 + SIGPIPE, as git.
CLOSED_PIPE = 141


def closed_pipe() -> None:
    """End quietly after the reader closed stdout: exit 141, no message, no traceback.

    Python's recipe (docs, "Note on SIGPIPE"): point stdout at devnull so the flush at exit
    cannot fail again.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout without a file descriptor
        pass
    raise typer.Exit(CLOSED_PIPE) from None


def _from_rich_pipe(exit_: SystemExit) -> bool:
    """Whether Rich raised this exit on a closed pipe (``Console.on_broken_pipe`` exits 1)."""
    tb = exit_.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_name == "on_broken_pipe"


def torch_missing() -> str:
    """What a command that computes in torch says when torch is not installed (it is an
    extra): the install line that works for this copy of whilecli (a clone, a path, a URL
    or an index)."""
    from whilecli.install import install_command

    return f"this command computes in torch, which is not installed: {install_command('torch')}"


def _is_torch(err: ImportError) -> bool:
    """Whether ``err`` is torch missing (not installed, or blocked as ``sys.modules['torch']
    = None``), as opposed to a bug."""
    name = err.name or ""
    return name == "torch" or name.startswith("torch.") or "'torch'" in str(err)


def user_errors(fn: F) -> F:
    """Print a :class:`WhileError` as ``whilecli: error: ...`` on stderr and exit with its code.

    A closed output pipe (``whilecli route ... | head -1``) ends quietly with exit 141. Anything
    else is a bug in whilecli: one line that says so and exit 70, or the full
    traceback when ``WHILE_DEBUG=1``.
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            try:
                return fn(*args, **kwargs)
            finally:
                sys.stdout.flush()  # a closed pipe shows here, not at exit
        except BrokenPipeError:
            closed_pipe()
        except WhileError as err:
            print(f"{PROG}: error: {err.on_command_line()}", file=sys.stderr)
            raise typer.Exit(err.exit_code) from None
        except KeyboardInterrupt:
            print(f"{PROG}: interrupted", file=sys.stderr)
            raise typer.Exit(130) from None
        except SystemExit as exit_:
            if _from_rich_pipe(exit_):
                closed_pipe()
            raise
        except (typer.Exit, typer.Abort):
            raise
        except MemoryError:
            if os.environ.get("WHILE_DEBUG") == "1":
                raise
            print(f"{PROG}: error: {OUT_OF_MEMORY}", file=sys.stderr)
            raise typer.Exit(OUT_OF_MEMORY_EXIT) from None
        except ImportError as err:
            if not _is_torch(err):
                raise
            print(f"{PROG}: error: {torch_missing()}", file=sys.stderr)
            raise typer.Exit(2) from None
        except BaseException as err:  # a bug (a polars panic too): one line unless asked
            if isinstance(err, OSError) and (line := path_error(err)) is not None:
                print(f"{PROG}: error: {line}", file=sys.stderr)
                raise typer.Exit(2) from None
            if os.environ.get("WHILE_DEBUG") == "1":
                raise
            text = " ".join(str(err).split()) or "no message"
            print(
                f"{PROG}: internal error: {type(err).__name__}: {text} "
                "(rerun with WHILE_DEBUG=1 for the traceback, and please report it)",
                file=sys.stderr,
            )
            raise typer.Exit(INTERNAL_ERROR) from None

    return wrapper  # type: ignore[return-value]


def check_seed(seed: int | None) -> None:
    """Refuse a negative ``--seed`` (numpy's generators take 0 and up, of any size)."""
    if seed is not None and seed < 0:
        raise UsageError(f"--seed must be 0 or more, got {seed}")


def check_draws(draws: int) -> None:
    """Refuse ``--draws`` outside [:data:`MIN_DRAWS`, :data:`MAX_DRAWS`] (the route's own
    rule, :class:`whilecli.route.options.RouteOptions`)."""
    if not MIN_DRAWS <= draws <= MAX_DRAWS:
        raise UsageError(f"--draws must lie in [{MIN_DRAWS}, {MAX_DRAWS}], got {draws}")


#: The names ``--input-format`` takes: the formats ``whilecli formats`` lists (one registry, a
#: module that imports no reader, so the choice is checked while parsing).
INPUT_FORMATS: tuple[str, ...] = FORMAT_NAMES


class Choice(click.Choice):
    """An enumerated option's type: the names listed in ``--help``, matched case-insensitively;
    a name outside them is refused with ``message`` (``{value!r}`` is the name given)."""

    def __init__(self, names: tuple[str, ...], message: str | None = None) -> None:
        super().__init__(names, case_sensitive=False)
        self.message = message

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            if self.message is None:
                raise
            raise OneLineUsageError(self.message.format(value=value), ctx=ctx) from None


def choice(*names: str, message: str | None = None) -> click.Choice:
    """An enumerated option's type (:class:`Choice`)."""
    return Choice(names, message)


def check_exists(path: str | None) -> None:
    """Refuse a named input that is not there, with the reader's message."""
    if path == "":
        raise UsageError("an input path is empty ('')")
    if isinstance(path, str) and _missing(path):
        raise UsageError(f"{shown_path(path)}: no such file or directory")


class OneLineUsageError(click.UsageError):
    """A usage error (an unknown option, a value of the wrong type, a missing file) as one line
    on stderr, with the program's error prefix, exit 2: as every other bad input."""

    def show(self, file: Any = None) -> None:
        click.echo(f"{PROG}: error: {self.format_message()}", file=file, err=True)


def _missing(path: str) -> bool:
    """Whether ``path`` names a file that is not there (stdin and globs are the reader's)."""
    return path != "-" and not glob.has_magic(path) and not os.path.lexists(path)


def existing_paths(value: Any) -> Any:
    """Parameter callback: refuse a named input that does not exist while the command line is
    parsed, with the reader's message (``PATH: no such file or directory``), so the error
    comes before polars, pyarrow or scipy load."""
    values = value if isinstance(value, (list, tuple)) else [value]
    for path in values:
        if path == "":
            raise OneLineUsageError("an input path is empty ('')")
        if isinstance(path, str) and _missing(path):
            raise OneLineUsageError(f"{shown_path(path)}: no such file or directory")
    return value


def early(check: Callable[[Any], None]) -> Callable[[Any], Any]:
    """A parameter callback that runs ``check(value)`` while the command line is parsed: its
    :class:`~whilecli.errors.UsageError` is reported as every usage error is (one line, exit
    2) before any heavy import. The command still checks the value for library callers."""

    def callback(value: Any) -> Any:
        try:
            check(value)
        except UsageError as err:
            raise OneLineUsageError(str(err)) from None
        return value

    return callback


#: Seconds a read runs before the progress line shows.
SLOW_READ_S = 2.0


def progress_wanted(args: list[str]) -> bool:
    """A progress line only for a person: stderr a terminal, not CI, not a JSON report."""
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false"):
        return False
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        if not sys.stderr.isatty():
            return False
    except (AttributeError, ValueError):
        return False
    flat = [a.lower() for a in args]
    json_asked = "--json" in flat or "--format=json" in flat
    json_asked = json_asked or any(
        a == "--format" and b == "json" for a, b in zip(flat, flat[1:], strict=False)
    )
    return not json_asked


@contextmanager
def slow_status(message: str, *, after: float = SLOW_READ_S) -> Iterator[None]:
    """Show ``message`` with a spinner on stderr once the block has run ``after`` seconds;
    gone (transient) when the block ends. Rich loads only when the line shows."""
    lock = threading.Lock()
    state: dict[str, Any] = {"done": False, "status": None}

    def start() -> None:
        with lock:
            if state["done"]:
                return
            from rich.console import Console

            status = Console(stderr=True).status(message)
            status.start()
            state["status"] = status

    timer = threading.Timer(after, start)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        with lock:
            state["done"] = True
            if state["status"] is not None:
                state["status"].stop()


def _use_step(ctx: typer.Context, value: int | None) -> int | None:
    """``--step``'s callback: the step a prime-rl run directory is read at, for every read of
    this command (:func:`whilecli.io.formats.prime_rl.selected_step`)."""
    from whilecli.io.formats import prime_rl

    try:
        _ReadOptions(step=value)
    except UsageError as err:
        raise OneLineUsageError(str(err)) from None
    token = prime_rl.STEP.set(value)
    ctx.call_on_close(lambda: prime_rl.STEP.reset(token))
    return value


#: The attribute a generated option carries: the library declaration it was made from
#: (``(dataclass, field name)``, or a :class:`~whilecli.knobs.Knob`).
DECLARATION = "whilecli_declaration"


def _validator(cls: type, name: str) -> Callable[[Any], None]:
    """The dataclass's own check of one field's value (its ``__post_init__``), run while the
    command line is parsed."""

    def check(value: Any) -> None:
        if value is None or value == []:
            return
        cls(**{name: tuple(value) if isinstance(value, list) else value})

    return check


def option(cls: type, name: str, **wiring: Any) -> Any:
    """The command-line option of field ``name`` of the library options dataclass ``cls``,
    generated from the field's declaration (:func:`whilecli.declare.flag`): its default,
    flag, help, panel, value name and names are the library's. The dataclass checks a value
    while the command line is parsed (one line, exit 2). ``wiring`` adds what the command
    line alone does with the value (a ``callback``) and where its help shows it (a
    ``panel``), never a default or a help text.
    """
    from whilecli.declare import declared, default_of

    spec = declared(cls)[name]
    meta = spec.metadata
    default = default_of(spec)
    if isinstance(default, tuple):  # a repeatable option: none given is None
        default = None
    typed: dict[str, Any] = {}
    if meta["choices"]:
        typed["click_type"] = choice(*meta["choices"], message=meta.get("refusal"))
    decls = [meta["flag"], *([meta["short"]] if meta["short"] else [])]
    info = typer.Option(
        default,
        *decls,
        help=meta["help"],
        metavar=meta["metavar"],
        show_default=meta["show_default"],
        rich_help_panel=wiring.pop("panel", meta["panel"]),
        callback=wiring.pop("callback", early(_validator(cls, name))),
        **typed,
    )
    if wiring:
        raise TypeError(f"option {name}: a declaration's text lives in {cls.__name__}: {wiring}")
    setattr(info, DECLARATION, (cls, name))
    return info


def knob_option(knob: Any, panel: str) -> Any:
    """The command-line option of a numeric knob (:class:`whilecli.knobs.Knob`): its flag,
    its doc as the help, its default shown; None when not given (the method's own default
    then holds), checked against the knob's range by the method that takes it."""
    info = typer.Option(
        None,
        knob.option,
        help=f"{knob.doc} Range: {knob.range_text()}.",
        show_default=f"{knob.default:g}",
        rich_help_panel=panel,
    )
    setattr(info, DECLARATION, knob)
    return info


#: ``--step N`` of every command that reads rows: :class:`whilecli.io.options.ReadOptions`'
#: declaration, wired to the reads of the command (:func:`_use_step`).
STEP = option(_ReadOptions, "step", callback=_use_step)


#: ``--seed`` and ``--draws`` of the commands that bootstrap (``diff``, ``size``): the
#: route's declarations (:class:`whilecli.route.options.RouteOptions`), checked while parsing.
SEED = option(_RouteOptions, "seed", callback=early(check_seed))
DRAWS = option(_RouteOptions, "bootstrap_draws", callback=early(check_draws))


def _takes_value(param: click.Option) -> bool:
    return not param.is_flag and not param.count


def refuse_conflicting_repeats(command: click.Command, args: list[str]) -> None:
    """Refuse an option of one value given twice with two values (``--method grpo --method
    sft``, ``--lora --full``): click keeps the last in silence, so the first, which the user
    also typed, would be dropped. The same value twice, and the repeatable options
    (``--map``, ``--set``), pass."""
    names: dict[str, tuple[click.Option, object]] = {}
    for param in command.params:
        if not isinstance(param, click.Option) or param.multiple or param.count:
            continue
        for opt in param.opts:
            names[opt] = (param, True)
        for opt in param.secondary_opts:
            names[opt] = (param, False)
    seen: dict[str, tuple[str, object]] = {}
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if token == "--":
            break
        if not token.startswith("-") or token == "-":
            continue
        if token.startswith("--"):
            opt, eq, attached = token.partition("=")
        else:
            opt, attached = token[:2], token[2:]
            eq = "=" if attached else ""
        if opt not in names:
            continue
        param, primary = names[opt]
        value: object = primary
        if _takes_value(param):
            if eq:
                value = attached
            elif i < len(args):
                value, i = args[i], i + 1
            else:
                continue  # click says the value is missing
        key = param.name or opt
        if key in seen and seen[key][1] != value:
            first, before = seen[key]
            if _takes_value(param):
                said = f"{first} {before} and {opt} {value}: the option is given twice"
            else:
                said = f"{first} and {opt} are both given"
            raise OneLineUsageError(f"{said}; give one")
        seen.setdefault(key, (opt, value))
