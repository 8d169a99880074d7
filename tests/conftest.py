"""Shared test fixtures."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# CI gates merges: the same examples every run (no flaky discovery), no timing deadline or
# slow-generation check on a loaded 2-core machine, no example database left behind.
settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    database=None,
    # data generation slows with the machine's load, not with the code under test
    suppress_health_check=[HealthCheck.too_slow],
)
# Locally (the README's test command runs without CI), hypothesis explores and keeps its
# database, with no timing deadline either: a deadline measures the machine's load.
settings.register_profile("local", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "local")

#: What a worker of pytest-xdist (``-n``) resets: its workers start with COLUMNS=80 and LINES=24
#: in their environment, where the run itself may have neither, and a report off a terminal is
#: as wide as COLUMNS says.
TERMINAL = ("COLUMNS", "LINES")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """The run's own terminal variables (or their absence), handed to each worker."""
    node.workerinput["terminal"] = {name: os.environ.get(name) for name in TERMINAL}


def pytest_configure(config: pytest.Config) -> None:
    given = getattr(config, "workerinput", {}).get("terminal")
    for name, value in (given or {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


# The tests' own helpers (slow references, strategies, schemas) import by name.
sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
EXAMPLES = ROOT / "examples" / "data"


@pytest.fixture
def data_dir() -> Path:
    return DATA
