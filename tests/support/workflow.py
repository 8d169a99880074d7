"""The bundled CI example's workflow file, read as its steps run."""

from __future__ import annotations

import re


def workflow(text: str) -> tuple[dict[str, str], list[str]]:
    """The workflow's top-level ``env`` and every step's ``run:`` command (one line each)."""
    env: dict[str, str] = {}
    runs: list[str] = []
    in_env = False
    for line in text.splitlines():
        if line.startswith("env:"):
            in_env = True
            continue
        if in_env:
            m = re.match(r"^  ([A-Z_]+): (\S+)", line)
            if m:
                env[m.group(1)] = m.group(2)
                continue
            in_env = False
        m = re.match(r"^\s+(?:- )?run: (.+)$", line)
        if m:
            runs.append(m.group(1).strip())
    return env, runs
