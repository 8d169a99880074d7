"""What every command shares: turning library errors into one line and an exit code."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from whilecli.errors import WhileError

F = TypeVar("F", bound=Callable[..., Any])


def user_errors(fn: F) -> F:
    """Print a :class:`WhileError` as ``while: error: ...`` on stderr and exit with its code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except WhileError as err:
            print(f"while: error: {err}", file=sys.stderr)
            raise typer.Exit(err.exit_code) from None
        except KeyboardInterrupt:
            print("while: interrupted", file=sys.stderr)
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]
