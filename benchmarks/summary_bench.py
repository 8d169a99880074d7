"""Summarise sharded rows in parallel, merge the summaries, route from the merge.

    python benchmarks/summary_bench.py                            # 100M rows, 10 shards
    python benchmarks/summary_bench.py --rows 10000000 --jobs 2   # smaller
    python benchmarks/summary_bench.py --check                    # also route the rows
    python benchmarks/summary_bench.py --interleave               # every task in every shard

Writes ``--shards`` Parquet files of graded rows (``--k`` rollouts per task; 3% of rows
truncated and failed; every row names one model) under a temporary directory (``--dir``,
default the system's). Rows are task-major, so a shard boundary may split a task; with
``--interleave`` they are dealt to the shards in turn, so every task spans every shard and
the merge adds up every line. Then it times, each as a real subprocess of the console
script with its peak RSS from ``os.wait4``:

1. ``whilecli summarize SHARD -o SHARD.sum.parquet`` for every shard, ``--jobs`` at a time;
2. ``whilecli summarize --merge *.sum.parquet -o merged.parquet``;
3. ``whilecli route merged.parquet --model M --format json``.

``--check`` also routes all the rows directly and asserts the two JSON reports agree
(except the input paths). The data is deleted at the end; the free space is checked first.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODEL = "bench/model"
CLI = [sys.executable, "-m", "whilecli"]


def summarize_cli() -> list[str]:
    """``whilecli summarize``, or the command alone where the CLI does not register it yet."""
    from whilecli.cli import app

    if any(c.name == "summarize" for c in app.registered_commands):
        return [*CLI, "summarize"]
    run = (
        "import typer; from whilecli.commands.summarize import summarize_command as c; typer.run(c)"
    )
    return [sys.executable, "-c", run]


def write_shard(path: Path, first_row: int, rows: int, k: int, seed: int, step: int = 1) -> None:
    """Rows ``first_row, first_row + step, ...`` (``rows`` of them) of a pool of ``k``
    rollouts per task, with per-task pass rates spread over [0, 1] (a tenth of the tasks at
    0, a tenth at 1)."""
    import numpy as np
    import polars as pl

    row = first_row + step * np.arange(rows, dtype=np.int64)
    task = row // k
    rng = np.random.default_rng(seed)
    # the pass rate of a task is a hash of its index, so shards agree on it
    p = ((task * 2654435761) % 1000) / 999.0
    p[(task % 10) == 0] = 0.0
    p[(task % 10) == 1] = 1.0
    reward = (rng.random(rows) < p).astype(np.float64)
    truncated = rng.random(rows) < 0.03
    reward[truncated] = 0.0
    frame = pl.DataFrame({"task": task, "reward": reward, "truncated": truncated}).select(
        pl.format("task-{}", pl.col("task")).alias("task_id"),
        "reward",
        "truncated",
        pl.lit(MODEL).alias("model"),
    )
    frame.write_parquet(path, compression="zstd", row_group_size=1_000_000)


def run_parallel(commands: list[list[str]], jobs: int) -> tuple[float, list[float], list[float]]:
    """Run ``commands``, ``jobs`` at a time; (total wall, per-command wall, per-command GiB)."""
    start = time.perf_counter()
    pending = list(enumerate(commands))
    running: dict[int, tuple[int, float]] = {}
    walls = [0.0] * len(commands)
    peaks = [0.0] * len(commands)
    while pending or running:
        while pending and len(running) < jobs:
            i, cmd = pending.pop(0)
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            running[proc.pid] = (i, time.perf_counter())
        pid, status, usage = os.wait4(-1, 0)
        if pid not in running:
            continue
        i, began = running.pop(pid)
        walls[i] = time.perf_counter() - began
        peaks[i] = usage.ru_maxrss / 2**20  # KiB on Linux
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"failed: {' '.join(commands[i])}")
    return time.perf_counter() - start, walls, peaks


def run_one(cmd: list[str]) -> tuple[float, float, str]:
    """Run one command to the end; (wall seconds, peak RSS GiB, stdout)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        if code not in (0, 1):
            sys.exit(f"failed ({code}): {' '.join(cmd)}\n{err.read().decode()}")
        return wall, usage.ru_maxrss / 2**20, out.read().decode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000_000)
    parser.add_argument("--shards", type=int, default=10)
    parser.add_argument("--k", type=int, default=16, help="rollouts per task")
    parser.add_argument("--jobs", type=int, default=2, help="summaries run at once")
    parser.add_argument("--dir", type=Path, default=None, help="where to write the data")
    parser.add_argument("--check", action="store_true", help="also route the rows directly")
    parser.add_argument(
        "--interleave",
        action="store_true",
        help="deal rows to shards in turn (every task spans every shard) instead of in blocks",
    )
    args = parser.parse_args()

    base = args.dir or Path(tempfile.gettempdir())
    need = args.rows * 12  # bytes: ~10 B/row of zstd Parquet with room to spare
    free = shutil.disk_usage(base).free
    if free < need:
        sys.exit(f"{base}: {free / 2**30:.1f} GiB free, {need / 2**30:.1f} GiB needed: use --rows")
    work = Path(tempfile.mkdtemp(prefix="summary_bench_", dir=base))
    try:
        per = math.ceil(args.rows / args.shards)
        shards = []
        start = time.perf_counter()
        for i in range(args.shards):
            path = work / f"shard-{i:02d}.parquet"
            if args.interleave:
                write_shard(path, i, len(range(i, args.rows, args.shards)), args.k, i, args.shards)
            else:
                write_shard(path, i * per, min(per, args.rows - i * per), args.k, seed=i)
            shards.append(path)
        gen = time.perf_counter() - start
        size = sum(p.stat().st_size for p in shards) / 2**20
        print(f"{args.rows:,} rows, {args.rows // args.k:,} tasks (k={args.k}), "
              f"{args.shards} shards, {size:,.0f} MiB of Parquet, written in {gen:.1f} s")  # fmt: skip

        sums = [p.with_suffix(".sum.parquet") for p in shards]
        summarize = summarize_cli()
        cmds = [[*summarize, str(p), "-o", str(s)] for p, s in zip(shards, sums, strict=True)]
        total, walls, peaks = run_parallel(cmds, args.jobs)
        print(f"summarize: {total:.1f} s for {args.shards} shards, {args.jobs} at a time "
              f"(per shard {min(walls):.1f}-{max(walls):.1f} s, peak RSS "
              f"{max(peaks):.2f} GiB per process)")  # fmt: skip
        sum_size = sum(s.stat().st_size for s in sums) / 2**20

        merged = work / "merged.parquet"
        wall, rss, _ = run_one([*summarize, "--merge", *map(str, sums), "-o", str(merged)])
        print(f"merge:     {wall:.1f} s, peak RSS {rss:.2f} GiB ({args.shards} summaries, "
              f"{sum_size:.0f} MiB -> {merged.stat().st_size / 2**20:.0f} MiB)")  # fmt: skip

        route = [*CLI, "route", str(merged), "--model", MODEL, "--format", "json"]
        wall, rss, out = run_one(route)
        report = json.loads(out)
        print(f"route:     {wall:.1f} s, peak RSS {rss:.2f} GiB -> {report['route']} "
              f"(pass@1 {report['summary']['pass_at_1']['value']:.4f}, "
              f"{report['summary']['tasks']:,} tasks, {report['summary']['rows']:,} rows)")  # fmt: skip
        assert report["summary"]["rows"] == args.rows
        if args.check:
            direct = [*CLI, "route", *map(str, shards), "--model", MODEL, "--format", "json"]
            wall, rss, out = run_one(direct)
            rows_report = json.loads(out)
            print(f"rows:      {wall:.1f} s, peak RSS {rss:.2f} GiB (routing the rows directly)")
            for r in (report, rows_report):
                r["inputs"].pop("paths")
            assert report == rows_report, "the summary routed differently from the rows"
            print("the report from the summary equals the report from the rows")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
