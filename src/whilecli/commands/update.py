"""`while update` (placeholder until the command lands)."""

from __future__ import annotations

from whilecli.commands._common import user_errors
from whilecli.errors import UsageError


@user_errors
def update_command() -> None:
    """Not built yet."""
    raise UsageError("while update is not built yet")
