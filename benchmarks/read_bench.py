"""Peak memory and wall time of ``while route`` on large inputs: Parquet shards and JSONL.

    python benchmarks/read_bench.py                              # 10M and 50M Parquet, 10M JSONL
    python benchmarks/read_bench.py --parquet 1000000 --jsonl 1000000
    python benchmarks/read_bench.py --data /tmp/bench --keep     # reuse the files next time

For each size: write ``--shards`` Parquet files (or one JSONL file) under a temporary
directory: ``K`` rows per task (or a fixed number of tasks with ``--tasks``), columns
``task_id``, ``reward`` (0/1), ``truncated``, ``model`` and a ``completion`` text column the
route never reads. Then run ``whilecli route PATH --format json`` as a real subprocess of
the console script and reap it with ``os.wait4``: wall time and the child's own peak RSS
(``ru_maxrss``). Prints one line per input. The files are deleted at the end unless
``--keep`` is given. Check ``df -h`` first: 50M Parquet rows take about 0.5 GB, 10M JSONL
rows about 1 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

K = 8
MODEL = "bench/model"


def _frame(start: int, rows: int, tasks: int | None, seed: int):  # type: ignore[no-untyped-def]
    """Rows ``start … start + rows`` of the pool: task ``i // K`` (or ``i mod tasks``)."""
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(seed)
    index = np.arange(start, start + rows, dtype=np.int64)
    task = index % tasks if tasks else index // K
    p = (task * 2654435761 % 1000) / 999.0  # a per-task pass rate spread over [0, 1]
    reward = (rng.random(rows) < p).astype(np.float64)
    truncated = rng.random(rows) < 0.03
    reward[truncated] = 0.0
    return pl.DataFrame({"task": task, "reward": reward, "truncated": truncated}).select(
        pl.format("task-{}", pl.col("task")).alias("task_id"),
        "reward",
        "truncated",
        pl.lit(MODEL).alias("model"),
        pl.format("completion text of row {}", pl.col("task")).alias("completion"),
    )


def write_parquet(folder: Path, rows: int, shards: int, tasks: int | None) -> Path:
    """``rows`` rows in ``shards`` Parquet files under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    per = -(-rows // shards)
    for i in range(shards):
        start = i * per
        count = max(0, min(per, rows - start))
        frame = _frame(start, count, tasks, seed=i)
        frame.write_parquet(folder / f"part-{i:03d}.parquet", row_group_size=1_000_000)
    return folder


def write_jsonl(path: Path, rows: int, tasks: int | None, chunk: int = 1_000_000) -> Path:
    """``rows`` rows in one JSONL file, written a chunk at a time."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        for i, start in enumerate(range(0, rows, chunk)):
            _frame(start, min(chunk, rows - start), tasks, seed=i).write_ndjson(fh)
    return path


def route(
    path: Path, extra: list[str], source: Path | None = None
) -> tuple[float, float, int, dict | None, str]:
    """``whilecli route PATH --format json``: (wall s, peak RSS MiB, exit code, report, stderr).

    With ``source``, ``python -m whilecli`` with that folder first on ``PYTHONPATH`` (another
    copy of the package, e.g. an earlier version to compare against).
    """
    env = dict(os.environ)
    if source is None:
        exe = shutil.which("whilecli") or shutil.which("while")
        if exe is None:
            raise SystemExit("the whilecli console script is not installed (pip install -e .)")
        head = [exe]
    else:
        head = [sys.executable, "-m", "whilecli"]
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(source), env.get("PYTHONPATH")]))
    argv = [*head, "route", str(path), "--format", "json", *extra]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, text=True, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text, errors = out.read(), err.read()
    report = json.loads(text) if code in (0, 1) and text.strip() else None
    return wall, usage.ru_maxrss / 1024, code, report, errors


def _pool_line(report: dict | None) -> str:
    """The route and the pool's size, as the report states them."""
    if report is None:
        return "no report"
    text = json.dumps(report, sort_keys=True)
    return f"route={report.get('method', report.get('route', '?'))} sha={hash(text) & 0xFFFF:04x}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parquet", type=int, nargs="*", default=[10_000_000, 50_000_000])
    parser.add_argument("--jsonl", type=int, nargs="*", default=[10_000_000])
    parser.add_argument("--shards", type=int, default=10)
    parser.add_argument("--tasks", type=int, default=None, help="fixed task count (else rows/K)")
    parser.add_argument("--data", type=Path, default=None, help="folder for the generated files")
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    parser.add_argument(
        "--compare", type=Path, default=None, help="also run the package found in this folder"
    )
    args = parser.parse_args(argv)

    root = args.data or Path(tempfile.mkdtemp(prefix="while-read-bench-"))
    tag = f"t{args.tasks}" if args.tasks else f"k{K}"
    inputs: list[tuple[str, Path]] = []
    try:
        for rows in args.parquet:
            folder = root / f"parquet-{rows}-{args.shards}-{tag}"
            if not folder.is_dir():
                write_parquet(folder, rows, args.shards, args.tasks)
            inputs.append((f"parquet {rows:,} rows / {args.shards} shards", folder))
        for rows in args.jsonl:
            path = root / f"jsonl-{rows}-{tag}" / "rows.jsonl"
            if not path.is_file():
                write_jsonl(path, rows, args.tasks)
            inputs.append((f"jsonl {rows:,} rows", path))
        print(f"{'input':<36} {'wall s':>8} {'peak RSS MiB':>13} {'exit':>5}")
        runs: list[tuple[str, Path | None]] = [("", None)]
        if args.compare is not None:
            runs.append((" [compare]", args.compare))
        for label, path in inputs:
            for suffix, source in runs:
                wall, rss, code, report, errors = route(path, [], source)
                name = label + suffix
                print(f"{name:<36} {wall:8.2f} {rss:13.0f} {code:>5}  {_pool_line(report)}")
                if report is None:
                    print(f"  stderr: {errors.strip()[:300]}", file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
