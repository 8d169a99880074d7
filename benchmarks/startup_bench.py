"""Start-up time of the ``while`` command: what a person waits for on a small input.

    python benchmarks/startup_bench.py            # median of 7 runs each
    python benchmarks/startup_bench.py --runs 15

Each case is a real subprocess (``python -m whilecli ...``, this checkout's ``src`` first on
the path), timed from spawn to exit; the median and the fastest of ``--runs`` runs are
printed, with the heavy modules the case imports (one extra run under ``-X importtime``). The
cases: ``--help``, ``--version``, a bad command name, ``route`` on a missing file, ``update``
on a missing file, ``route --quiet`` on the bundled 8-task Parquet file, ``route --help``.
Everything before the read (parsing, a missing file, a bad option) should stay well under
0.5 s; the routed small file pays for polars, pyarrow and numpy (about 0.6 s on a 2-core
machine: the floor of any route).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMALL = str(ROOT / "examples" / "data" / "mixed.parquet")
HEAVY = ("polars", "pyarrow", "numpy", "scipy", "torch", "rich", "pydantic")

CASES: dict[str, list[str]] = {
    "--help": ["--help"],
    "--version": ["--version"],
    "bad command": ["rout"],
    "route, missing file": ["route", "/nonexistent/rows.jsonl"],
    "update, missing file": ["update", "--method", "grpo", "/nonexistent/batch.jsonl"],
    "route --help": ["route", "--help"],
    "route --quiet, 8 tasks": ["route", "--quiet", SMALL],
}


def _env() -> dict[str, str]:
    src = str(ROOT / "src")
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": src + (os.pathsep + path if path else "")}


def _once(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "whilecli", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_env(),
        check=False,
    )
    return time.perf_counter() - start


def heavy_imports(args: list[str]) -> list[str]:
    """The top-level packages of :data:`HEAVY` that ``while ARGS`` imports."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "whilecli", *args],
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
    opts = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {sys.version.split()[0]}, {opts.runs} runs per case, load {load:.2f}")
    _once(["--version"])  # warm the file cache and the bytecode
    width = max(len(c) for c in CASES)
    for name, args in CASES.items():
        times = [_once(args) for _ in range(opts.runs)]
        heavy = ", ".join(heavy_imports(args)) or "none"
        print(
            f"{name.ljust(width)}  median {statistics.median(times):.3f} s"
            f"  min {min(times):.3f} s  heavy imports: {heavy}"
        )


if __name__ == "__main__":
    main()
