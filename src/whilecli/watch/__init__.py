"""``whilecli watch RUN_DIR``: route a training run while it runs (DESIGN section 6).

The pieces, each small and pure where it can be:

- :mod:`whilecli.watch.layout`: which steps of a prime-rl or verl run directory are finished,
  found incrementally (file offsets, no rescan);
- :mod:`whilecli.watch.steps`: one step's numbers from the canonical frame of its rollouts;
- :mod:`whilecli.watch.alerts`: the route over the last steps and the alerts it raises;
- :mod:`whilecli.watch.render`: a few text lines or one JSON object per step;
- :mod:`whilecli.watch.run`: :func:`watch_run`, the loop.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["WatchOptions", "watch_run"]

#: Exported names and their modules, imported on first use (the command line's ``--help``
#: and option errors load the options alone, not polars).
_EXPORTS = {"WatchOptions": "whilecli.watch.options", "watch_run": "whilecli.watch.run"}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'whilecli.watch' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
