"""Start-up time of the ``while`` command: what a person waits for on a small input.

    python benchmarks/startup_bench.py            # median of 7 runs each
    python benchmarks/startup_bench.py --runs 15
    python -m venv /tmp/v && /tmp/v/bin/pip install . && \
        python benchmarks/startup_bench.py --python /tmp/v/bin/python   # as installed

Each case is a real subprocess (``python -m whilecli ...``, this checkout's ``src`` first on
the path), timed from spawn to exit; the median and the fastest of ``--runs`` runs are
printed, with the heavy modules the case imports (one extra run under ``-X importtime``).
The children keep their bytecode (under a temporary ``PYTHONPYCACHEPREFIX``, warmed by one
untimed run each), as an installed package has it: with ``PYTHONDONTWRITEBYTECODE`` set, every
run would recompile whilecli's own modules (about 0.1 s).

The cases: ``--help``, ``--version``, a bad command name, ``route`` on a missing file,
``update`` on a missing file, ``route --help``, and ``route`` on the bundled 8-task Parquet
file (``--quiet``, the report, ``--format json``). Two floors are timed the same way: ``python -c pass`` (the interpreter) and
``python -c "import polars"`` with the footer read (what any route of a Parquet file loads
before it can read a byte), with the command's exit handler (``gc.freeze``: the final
collection skips what is alive at exit). Every case should stay under 0.5 s; a routed small
file is also printed with what it costs over the read floor: numpy, parsing, whilecli's
modules, the checks and the report.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMALL = str(ROOT / "examples" / "data" / "mixed.parquet")
HEAVY = ("polars", "pyarrow", "numpy", "scipy", "torch", "rich", "pydantic")
#: The floors: the interpreter, and reading the small file's footer with polars.
FLOORS: dict[str, str] = {
    "python -c pass": "pass",
    "import polars, read footer": (
        "import atexit, gc; atexit.register(gc.freeze); import polars; "
        f"polars.read_parquet_schema({SMALL!r})"
    ),
}
#: What must stay under this many seconds (median).
LIMIT_S = 0.5
_PYCACHE = tempfile.mkdtemp(prefix="while-startup-pyc-")
#: The interpreter the cases run under (``--python``); with another one, its installed
#: whilecli runs instead of this checkout's ``src``.
PYTHON = [sys.executable]

CASES: dict[str, list[str]] = {
    "--help": ["--help"],
    "--version": ["--version"],
    "bad command": ["rout"],
    "route, missing file": ["route", "/nonexistent/rows.jsonl"],
    "update, missing file": ["update", "--method", "grpo", "/nonexistent/batch.jsonl"],
    "route --help": ["route", "--help"],
    "route --quiet, 8 tasks": ["route", "--quiet", SMALL],
    "route, 8 tasks (report)": ["route", SMALL],
    "route --format json": ["route", "--format", "json", SMALL],
}


def _env() -> dict[str, str]:
    src = str(ROOT / "src")
    path = os.environ.get("PYTHONPATH")
    env = {**os.environ, "PYTHONPATH": src + (os.pathsep + path if path else "")}
    if PYTHON[0] != sys.executable:  # the other interpreter's own install
        env.pop("PYTHONPATH")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = _PYCACHE
    return env


def _once(args: list[str], code: str | None = None) -> float:
    command = [PYTHON[0], "-c", code] if code is not None else None
    start = time.perf_counter()
    subprocess.run(
        command or [PYTHON[0], "-m", "whilecli", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_env(),
        check=False,
    )
    return time.perf_counter() - start


def heavy_imports(args: list[str]) -> list[str]:
    """The top-level packages of :data:`HEAVY` that ``while ARGS`` imports."""
    done = subprocess.run(
        [PYTHON[0], "-X", "importtime", "-m", "whilecli", *args],
        capture_output=True,
        text=True,
        env=_env(),
        check=False,
    )
    names = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    return [h for h in HEAVY if h in names]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="Runs per case (median shown).")
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="An interpreter with whilecli installed (a fresh venv after `pip install .`): "
        "time its install instead of this checkout's src (default: this interpreter).",
    )
    opts = parser.parse_args()
    PYTHON[0] = opts.python
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    where = "this checkout's src" if opts.python == sys.executable else f"{opts.python}'s install"
    print(f"{opts.python}: {where}, {opts.runs} runs per case, load {load:.2f}")
    width = max(len(c) for c in [*CASES, *FLOORS])
    floors: dict[str, float] = {}
    for name, code in FLOORS.items():
        _once([], code)  # warm the file cache and the bytecode
        times = [_once([], code) for _ in range(opts.runs)]
        floors[name] = statistics.median(times)
        print(f"{name.ljust(width)}  median {floors[name]:.3f} s  min {min(times):.3f} s  (floor)")
    read_floor = floors["import polars, read footer"]
    for name, args in CASES.items():
        _once(args)  # warm: this case's modules get their bytecode
        times = [_once(args) for _ in range(opts.runs)]
        median = statistics.median(times)
        heavy = ", ".join(heavy_imports(args)) or "none"
        routed = "polars" in heavy
        verdict = ("under" if median < LIMIT_S else "OVER") + f" {LIMIT_S} s"
        if routed:
            verdict += f", {median - read_floor:+.3f} s over the read floor"
        print(
            f"{name.ljust(width)}  median {median:.3f} s  min {min(times):.3f} s  "
            f"{verdict}; heavy imports: {heavy}"
        )


if __name__ == "__main__":
    main()
