"""What every command shares: turning errors into one line and an exit code."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from whilecli.errors import UsageError, WhileError

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


def user_errors(fn: F) -> F:
    """Print a :class:`WhileError` as ``while: error: ...`` on stderr and exit with its code.

    A closed output pipe (``while route ... | head -1``) ends quietly with exit 141. Anything
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
            print(f"while: error: {err}", file=sys.stderr)
            raise typer.Exit(err.exit_code) from None
        except KeyboardInterrupt:
            print("while: interrupted", file=sys.stderr)
            raise typer.Exit(130) from None
        except SystemExit as exit_:
            if _from_rich_pipe(exit_):
                closed_pipe()
            raise
        except (typer.Exit, typer.Abort):
            raise
        except Exception as err:  # a bug: keep it to one line unless asked
            if os.environ.get("WHILE_DEBUG") == "1":
                raise
            text = " ".join(str(err).split()) or "no message"
            print(
                f"while: internal error: {type(err).__name__}: {text} "
                "(rerun with WHILE_DEBUG=1 for the traceback, and please report it)",
                file=sys.stderr,
            )
            raise typer.Exit(INTERNAL_ERROR) from None

    return wrapper  # type: ignore[return-value]


#: Most bootstrap resamples a command takes: each is a draw over every task, held at once.
MAX_DRAWS = 1_000_000


def check_seed(seed: int | None) -> None:
    """Refuse a negative ``--seed`` (numpy's generators take 0 and up, of any size)."""
    if seed is not None and seed < 0:
        raise UsageError(f"--seed must be 0 or more, got {seed}")


def check_draws(draws: int) -> None:
    """Refuse ``--draws`` below 1 or above :data:`MAX_DRAWS`."""
    if not 1 <= draws <= MAX_DRAWS:
        raise UsageError(f"--draws must lie in [1, {MAX_DRAWS}], got {draws}")
