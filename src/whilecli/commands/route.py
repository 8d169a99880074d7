"""`while route` (placeholder until the command lands)."""

from __future__ import annotations

from whilecli.commands._common import user_errors
from whilecli.errors import UsageError


@user_errors
def route_command() -> None:
    """Not built yet."""
    raise UsageError("while route is not built yet")
