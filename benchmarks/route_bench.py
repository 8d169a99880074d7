"""Time ``while route`` against a plain polars process reading the same file, in one run.

    python benchmarks/route_bench.py                               # 10M Parquet, 1M JSONL rows
    python benchmarks/route_bench.py --repeat 5                    # the spread of 5 runs each
    python benchmarks/route_bench.py --parquet 1000000 --jsonl 100000 --plain
    python benchmarks/route_bench.py --startup                      # the small file alone

For each input: write a pool (8 rollouts per task; task_id, reward, truncated, model; the
JSONL rows also carry a completion) under a temporary directory, run ``while route FILE
--model M --format json`` in a process of its own (what the console script runs), then the
floor: a plain polars process of the same file (``pl.scan_parquet`` / ``pl.scan_ndjson``, a
group-by of rows, passes and truncated rows per task, collected), each ``--repeat`` times,
alternating. Each child reports its own peak RSS (``VmHWM`` of ``/proc/self/status`` as it
exits): ``ru_maxrss`` of a forked child also counts the pages of the parent it was forked
from, which here holds the generated pool. Prints the median, min and max of each, the ratio
of the medians (DESIGN section 5 asks ≤ 2×, and ≤ 2 GB for the 10M Parquet route) with each
run's own ratio, and the CPU seconds of each (user + system) with the ratio of their medians
and each run's (on a loaded machine the wall times follow the share of the cores each process
gets). ``--plain`` also runs a plain-Python implementation of
the same checks on the Parquet file (its own fit of the pool's Beta prior included) and prints
whether it finds the same numbers and route, and each number it does not. whilecli's modules
are compiled to bytecode first, as an install leaves them. Then the stages of the pipeline in
process (read, summarize, decide, render) for the Parquet file, and the startup time of the
installed ``whilecli route`` (the console script and ``python -m whilecli``) on a small file,
beside the floors it cannot go under, timed the same way in turn (``python -c pass`` and
``python -c "import polars"``), with what the route adds over polars, the load, and whether
numpy, torch, scipy, pyarrow or pandas were imported. The files are deleted at the end.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

K = 8
MODEL = "bench/model"
#: Modules a route of a small file does not need.
HEAVY = ("numpy", "torch", "scipy", "pyarrow", "pandas")
SMALL = Path(__file__).resolve().parent.parent / "examples" / "data" / "mixed.parquet"


def write_pool(path: Path, rows: int, *, seed: int = 0) -> None:
    """``rows`` graded rows, ``K`` per task, per-task pass rates spread over [0, 1].

    A tenth of the tasks sit at 0 and a tenth at 1; 3% of rows are truncated and those
    fail (so no truncated pass), every row names :data:`MODEL`.
    """
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(seed)
    tasks = math.ceil(rows / K)
    p = rng.uniform(0.0, 1.0, tasks)
    p[rng.random(tasks) < 0.1] = 0.0
    p[rng.random(tasks) < 0.1] = 1.0
    task = np.arange(rows, dtype=np.int64) // K
    reward = (rng.random(rows) < p[task]).astype(np.float64)
    truncated = rng.random(rows) < 0.03
    reward[truncated] = 0.0
    frame = pl.DataFrame({"task": task, "reward": reward, "truncated": truncated}).select(
        pl.format("task-{}", pl.col("task")).alias("task_id"),
        "reward",
        "truncated",
        pl.lit(MODEL).alias("model"),
    )
    frame.write_parquet(path, compression="zstd", row_group_size=1_000_000)


def write_jsonl(path: Path, rows: int, *, seed: int = 0) -> None:
    """The pool of :func:`write_pool` as JSON Lines, with a completion text per row."""
    import polars as pl

    parquet = path.with_name(path.name + ".tmp.parquet")
    write_pool(parquet, rows, seed=seed)
    frame = pl.read_parquet(parquet).with_columns(
        pl.format("an answer to {}", pl.col("task_id")).alias("completion")
    )
    parquet.unlink()
    frame.write_ndjson(path)


#: Run first in every child: its own peak RSS (kB) is written to the file named by its first
#: argument as it exits (``VmHWM``, the high-water mark of this process's own memory).
PEAK = """
import atexit, sys
_report = sys.argv.pop(1)
def _peak():
    with open("/proc/self/status") as status:
        kb = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    with open(_report, "w") as out:
        out.write(kb)
atexit.register(_peak)
"""

#: ``while route`` as the console script runs it, after :data:`PEAK`.
ROUTE = (
    PEAK
    + """
sys.argv[0] = "whilecli"
from whilecli.cli import run
run()
"""
)

#: The floor: a plain polars process that scans the file and groups its rows by task.
POLARS_FLOOR = (
    PEAK
    + """
import polars as pl
path, kind = sys.argv[1], sys.argv[2]
lf = pl.scan_parquet(path) if kind == "parquet" else pl.scan_ndjson(path)
out = lf.group_by("task_id").agg(
    n=pl.len(), passes=(pl.col("reward") >= 1.0).sum(), truncated=pl.col("truncated").sum()
).collect()
print(out.height, int(out["n"].sum()))
"""
)


def polars_floor(path: Path, kind: str) -> tuple[float, float]:
    """Wall time and peak RSS of :data:`POLARS_FLOOR` on ``path`` in a process of its own."""
    wall, rss, code, _, err = _popen_wait(POLARS_FLOOR, [str(path), kind])
    if code != 0:
        raise SystemExit(f"the polars floor failed ({code}): {err.strip()}")
    return wall, rss


#: CPU seconds (user + system) of the last child :func:`_popen_wait` ran.
LAST_CPU: list[float] = [0.0]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _popen_wait(code: str, args: list[str]) -> tuple[float, float, int, str, str]:
    """Run ``python -c code REPORT *args`` (``code`` starts with :data:`PEAK`): wall time,
    the child's own peak RSS in MB, exit code, stdout and stderr (its CPU seconds in
    :data:`LAST_CPU`)."""
    before = _children_cpu()
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "peak"
        out_path, err_path = Path(tmp) / "out", Path(tmp) / "err"
        with out_path.open("w") as out, err_path.open("w") as err:
            start = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-c", code, str(report), *args], stdout=out, stderr=err
            )
            wall = time.perf_counter() - start
        peak = int(report.read_text()) / 1024 if report.exists() else float("nan")
        LAST_CPU[0] = _children_cpu() - before
        return wall, peak, proc.returncode, out_path.read_text(), err_path.read_text()


def while_route(path: Path) -> tuple[float, float, dict]:
    """``while route PATH --model M --format json`` in a process of its own."""
    wall, rss, code, out, err = _popen_wait(
        ROUTE, ["route", str(path), "--model", MODEL, "--format", "json"]
    )
    if code not in (0, 1):
        raise SystemExit(f"while route failed ({code}): {err.strip()}")
    return wall, rss, json.loads(out)


# ------------------------------------------------------------------ plain Python baseline


def log_beta(a: float, b: float) -> float:
    """log B(a, b) by ``math.lgamma``."""
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _spaced(low: float, high: float, points: int) -> list[float]:
    return [low + (high - low) * i / (points - 1) for i in range(points)]


def fit_prior(cells: dict[tuple[int, int], int]) -> tuple[float, float]:
    """The pool's Beta(a, b) prior, the plain way: the largest Σ m·[log B(s + a, n − s + b) −
    log B(a, b)] over the distinct (passes s, rows n) cells with m tasks each, on a grid of 89
    logit-spaced means (±11) by 65 log-spaced concentrations (1e-3 to 1e5), then on a 21 × 21
    grid around the best point (±0.25 in logit, ±0.15 in log concentration)."""

    def likelihood(mean: float, conc: float) -> float:
        a, b = mean * conc, (1.0 - mean) * conc
        return sum(m * (log_beta(s + a, n - s + b) - log_beta(a, b)) for (s, n), m in cells.items())

    def best(logits: list[float], logs: list[float]) -> tuple[float, float]:
        found = (-math.inf, 0.0, 0.0)
        for logit in logits:
            mean = 1.0 / (1.0 + math.exp(-logit))
            for log_conc in logs:
                conc = math.exp(log_conc)
                value = likelihood(mean, conc)
                if value > found[0]:  # the first of equal maxima, as a grid search keeps
                    found = (value, mean, conc)
        return found[1], found[2]

    mean, conc = best(_spaced(-11.0, 11.0, 89), _spaced(math.log(1e-3), math.log(1e5), 65))
    logit, log_conc = math.log(mean / (1.0 - mean)), math.log(conc)
    fine = (_spaced(logit - 0.25, logit + 0.25, 21), _spaced(log_conc - 0.15, log_conc + 0.15, 21))
    mean, conc = best(*fine)
    return mean * conc, (1.0 - mean) * conc


def plain_route(path: str) -> dict:
    """The six checks' numbers the plain way: Python dicts over rows, Python math per task.

    Same statistics as ``while route``: truncated passes, grouped vs single tasks, the band
    (floor / saturated / mixed, split share, in-band share 0.2 ≤ p ≤ 0.8, expected split
    share at k = 4, 8, 16 under each task's posterior from the pool's fitted Beta prior,
    :func:`fit_prior`), pass@1 as the mean of per-task rates with a
    2000-draw bootstrap over tasks (multinomial over the distinct (passes, n) cells), pass@k
    and pass^k at k = 4, 8 (unbiased estimators), Wilson intervals for shares (z = Φ⁻¹(0.975), as scipy), on-policy.
    """
    import numpy as np
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=["task_id", "reward", "truncated", "model"])
    ids = table.column("task_id").to_pylist()
    rewards = table.column("reward").to_pylist()
    cuts = table.column("truncated").to_pylist()
    models = table.column("model").to_pylist()
    n: dict[str, int] = {}
    passes: dict[str, int] = {}
    model_rows: dict[str | None, int] = {}
    truncated_passes = truncated_rows = 0
    for task, reward, cut, model in zip(ids, rewards, cuts, models, strict=True):
        passed = reward >= 1.0
        n[task] = n.get(task, 0) + 1
        passes[task] = passes.get(task, 0) + passed
        if cut:
            truncated_rows += 1
            truncated_passes += passed
        model_rows[model] = model_rows.get(model, 0) + 1
    rows = len(ids)
    grouped = [t for t in n if n[t] >= 2]
    rates = [passes[t] / n[t] for t in grouped]
    split = sum(1 for r in rates if 0.0 < r < 1.0)
    in_band = sum(1 for r in rates if 0.2 <= r <= 0.8 and 0.0 < r < 1.0)
    floor = all(r == 0.0 for r in rates)
    saturated = all(r == 1.0 for r in rates)

    # the prior is the pool's own (empirical Bayes): the Beta(a, b) of the largest
    # beta-binomial likelihood over the route's grid of means and concentrations, refined once
    group_cells: dict[tuple[int, int], int] = {}
    for t in grouped:
        group_cells[(passes[t], n[t])] = group_cells.get((passes[t], n[t]), 0) + 1
    a, b = fit_prior(group_cells)

    def expected_split(s: int, f: int, k: int) -> float:
        base = log_beta(a + s, b + f)
        return (
            1.0
            - math.exp(log_beta(a + s + k, b + f) - base)
            - math.exp(log_beta(a + s, b + f + k) - base)
        )

    expected = {
        k: sum(m * expected_split(s, size - s, k) for (s, size), m in group_cells.items())
        / len(grouped)
        for k in (4, 8, 16)
    }
    pass_k = {}
    for k in (4, 8):
        eligible = [t for t in n if n[t] >= k]
        at = [1 - math.comb(n[t] - passes[t], k) / math.comb(n[t], k) for t in eligible]
        hat = [math.comb(passes[t], k) / math.comb(n[t], k) for t in eligible]
        pass_k[k] = (sum(at) / len(at), sum(hat) / len(hat))
    all_rates = [passes[t] / n[t] for t in n]
    pass1 = sum(all_rates) / len(all_rates)
    cells: dict[float, int] = {}
    for r in all_rates:
        cells[r] = cells.get(r, 0) + 1
    values = np.array(list(cells.keys()))
    counts = np.array(list(cells.values()))
    draws = np.random.default_rng(0).multinomial(len(all_rates), counts / counts.sum(), 2000)
    means = np.sort(draws @ values / len(all_rates))
    ci = (float(means[50]), float(means[1949]))

    def wilson(x: int, m: int) -> tuple[float, float]:
        if m == 0:
            return (0.0, 1.0)
        z, ph = 1.96, x / m  # DESIGN pins z = 1.96
        centre = (ph + z * z / (2 * m)) / (1 + z * z / m)
        half = z * math.sqrt(ph * (1 - ph) / m + z * z / (4 * m * m)) / (1 + z * z / m)
        return (centre - half, centre + half)

    on_policy = all(m in (None, MODEL) for m in model_rows)
    if truncated_passes:
        route = "fix-reward"
    elif not grouped:
        route = "single-rollout"
    elif floor:
        route = "floor"
    elif saturated:
        route = "saturated"
    elif not on_policy:
        route = "off-policy"
    else:
        route = "grpo"
    return {
        "rows": rows,
        "tasks": len(n),
        "route": route,
        "pass@1": pass1,
        "pass@1 ci": ci,
        "split_share": split / len(grouped),
        "split ci": wilson(split, len(grouped)),
        "in_band_share": in_band / len(grouped),
        "expected_split": expected,
        "pass@k": pass_k,
        "truncated_share": truncated_rows / rows,
        "truncated ci": wilson(truncated_rows, rows),
    }


def plain(path: Path) -> tuple[float, float, dict]:
    """The baseline in a child process of its own (so its peak RSS is its own)."""
    code = PEAK + (
        "import json; sys.path.insert(0, sys.argv[2]); import route_bench as b; "
        "print(json.dumps(b.plain_route(sys.argv[1])))"
    )
    here = str(Path(__file__).resolve().parent)
    wall, rss, rc, out, err = _popen_wait(code, [str(path), here])
    if rc != 0:
        raise SystemExit(f"plain-Python baseline failed: {err.strip()}")
    return wall, rss, json.loads(out)


def _find(route: dict, key: str) -> object:
    for check in route["checks"]:
        if key in check["measured"]:
            return check["measured"][key]
    return None


def disagreements(route: dict, base: dict) -> list[str]:
    """What the two implementations found differently (empty: the same route and numbers,
    each within 1e-9)."""
    band = next(c["measured"] for c in route["checks"] if c["key"] == "band")
    trunc = next(c["measured"] for c in route["checks"] if c["key"] == "truncated_passes")
    pairs = {
        "pass@1": (route["summary"]["pass_at_1"]["value"], base["pass@1"]),
        "split share": (band["split_share"]["value"], base["split_share"]),
        "in-band share": (band["in_band_share"]["value"], base["in_band_share"]),
        "truncated share": (trunc["truncated_share"]["value"], base["truncated_share"]),
        "split share low": (band["split_share"]["low"], base["split ci"][0]),
        "split share high": (band["split_share"]["high"], base["split ci"][1]),
    }
    for k in (4, 8, 16):
        ours = band[f"expected_split_share_k{k}"]
        pairs[f"expected split share k={k}"] = (ours, base["expected_split"][str(k)])
    for k in ("4", "8"):
        pairs[f"pass@{k}"] = (route["summary"]["pass_at_k"][k]["value"], base["pass@k"][k][0])
        pairs[f"pass^{k}"] = (route["summary"]["pass_hat_k"][k]["value"], base["pass@k"][k][1])
    out = [f"{name}: {a} vs {b}" for name, (a, b) in pairs.items() if not abs(a - b) <= 1e-9]
    if route["route"] != base["route"]:
        out.append(f"route: {route['route']} vs {base['route']}")
    return out


def stages(path: Path) -> dict[str, float]:
    """Seconds per stage in this process, as ``while route`` runs them: read (one pass that
    also gathers the route's per-task counts), summarize, decide, render."""
    from whilecli.io.read import read_rows
    from whilecli.route.decide import decide
    from whilecli.route.options import RouteOptions
    from whilecli.route.pool import Counts, summarize
    from whilecli.route.report import render

    out: dict[str, float] = {}
    t = time.perf_counter()
    rows = read_rows([str(path)], aggregate=Counts())
    out["read"] = time.perf_counter() - t
    t = time.perf_counter()
    pool = summarize(rows)
    out["summarize"] = time.perf_counter() - t
    t = time.perf_counter()
    route = decide(pool, RouteOptions(model=MODEL))
    out["decide"] = time.perf_counter() - t
    t = time.perf_counter()
    render(route, "json")
    render(route, "text")
    out["render"] = time.perf_counter() - t
    return out


#: What any Python process that routes pays before it runs a line of whilecli: the
#: interpreter, and the interpreter with polars imported.
FLOORS: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    'python -c "import polars"': [sys.executable, "-c", "import polars"],
}


def startup(runs: int = 5) -> tuple[dict[str, tuple[float, float]], list[str]]:
    """The installed ``whilecli route`` on the small example, best of ``runs``: the console
    script (beside this Python, else the one on PATH) and ``python -m whilecli``, each as
    (wall seconds, CPU seconds of the best run), then the floors of :data:`FLOORS` the same
    way, alternating with them; and the heavy modules a route imports (numpy among them)."""
    beside = Path(sys.executable).parent / "whilecli"
    exe = str(beside) if beside.exists() else shutil.which("whilecli") or "whilecli"
    tail = ["route", str(SMALL), "--format", "json"]
    entries = {
        "whilecli": [exe, *tail],
        "python -m whilecli": [sys.executable, "-m", "whilecli", *tail],
        **FLOORS,
    }

    def once(argv: list[str]) -> tuple[float, float]:
        before = _children_cpu()
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=False)
        return time.perf_counter() - start, _children_cpu() - before

    times: dict[str, list[tuple[float, float]]] = {name: [] for name in entries}
    for _ in range(runs):  # alternating, so a change of load touches every entry alike
        for name, argv in entries.items():
            times[name].append(once(argv))
    best = {name: min(found) for name, found in times.items()}
    heavy = ", ".join(repr(m) for m in HEAVY)
    probe = (
        "import sys; from typer.testing import CliRunner; from whilecli.cli import app; "
        f"CliRunner().invoke(app, ['route', {str(SMALL)!r}, '--format', 'json']); "
        f"print(' '.join(m for m in ({heavy},) if m in sys.modules))"
    )
    heavy = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    return best, heavy


def compile_package() -> Path:
    """Compile whilecli's modules to bytecode, as ``pip install`` does, and return the package
    folder: under ``PYTHONDONTWRITEBYTECODE`` a source checkout would otherwise compile every
    module in every child, a cost no installed copy pays."""
    import compileall

    import whilecli

    folder = Path(whilecli.__file__).resolve().parent
    compileall.compile_dir(folder, quiet=1)
    return folder


def _spread(values: list[float]) -> str:
    """``median (min–max)`` of some timings."""
    import statistics

    return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"


def compare(path: Path, kind: str, repeat: int) -> dict:
    """``while route`` and the polars floor on one file, ``repeat`` times each, alternating."""
    import statistics

    route_s: list[float] = []
    route_mb: list[float] = []
    route_cpu: list[float] = []
    floor_s: list[float] = []
    floor_mb: list[float] = []
    floor_cpu: list[float] = []
    route: dict = {}
    for _ in range(repeat):
        wall, rss, route = while_route(path)
        route_s.append(wall)
        route_mb.append(rss)
        route_cpu.append(LAST_CPU[0])
        wall, rss = polars_floor(path, kind)
        floor_s.append(wall)
        floor_mb.append(rss)
        floor_cpu.append(LAST_CPU[0])
    ratio = statistics.median(route_s) / statistics.median(floor_s)
    return {
        "kind": kind,
        "route_s": route_s,
        "floor_s": floor_s,
        "route_mb": max(route_mb),
        "floor_mb": max(floor_mb),
        "ratio": ratio,
        "ratios": [r / f for r, f in zip(route_s, floor_s, strict=True)],
        "cpu_ratio": statistics.median(route_cpu) / statistics.median(floor_cpu),
        "cpu_ratios": [r / f for r, f in zip(route_cpu, floor_cpu, strict=True)],
        "route_cpu": route_cpu,
        "floor_cpu": floor_cpu,
        "route": route,
    }


def _line(rows: int, found: dict) -> str:
    ratios, cpu = found["ratios"], found["cpu_ratios"]
    return (
        f"| {found['kind']} | {rows:,} | {_spread(found['route_s'])} | {_spread(found['floor_s'])}"
        f" | {found['ratio']:.2f}× ({min(ratios):.2f}–{max(ratios):.2f}) |"
        f" {_spread(found['route_cpu'])} | {_spread(found['floor_cpu'])} |"
        f" {found['cpu_ratio']:.2f}× ({min(cpu):.2f}–{max(cpu):.2f}) |"
        f" {found['route_mb']:.0f} | {found['floor_mb']:.0f} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Time while route against plain polars.")
    parser.add_argument("--parquet", type=int, default=10_000_000, help="Parquet rows")
    parser.add_argument("--jsonl", type=int, default=1_000_000, help="JSONL rows")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, alternating")
    parser.add_argument(
        "--plain", action="store_true", help="also check the route against plain Python"
    )
    parser.add_argument("--startup", action="store_true", help="only the small file's startup time")
    args = parser.parse_args(argv)
    compiled = compile_package()
    if args.startup:
        return _startup_lines()
    load = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}, load {load:.1f}")
    print(f"whilecli from {compiled} (bytecode compiled, as an install leaves it)")
    tmp = Path(tempfile.mkdtemp(prefix="while-bench-", dir="/tmp"))
    lines: list[str] = []
    try:
        parquet = tmp / "rows.parquet"
        write_pool(parquet, args.parquet)
        found = compare(parquet, "parquet", args.repeat)
        lines.append(_line(args.parquet, found))
        if args.plain:
            p_wall, p_rss, base = plain(parquet)
            differ = disagreements(found["route"], base)
            print(
                f"plain Python on the Parquet file: {p_wall:.2f} s, {p_rss:.0f} MB;"
                f" agrees with the route: {not differ}"
            )
            for line in differ:
                print(f"  differs: {line}")
        jsonl = tmp / "rows.jsonl"
        write_jsonl(jsonl, args.jsonl)
        lines.append(_line(args.jsonl, compare(jsonl, "jsonl", args.repeat)))
        print()
        print(
            "| input | rows | while route s, median (min–max) | polars s | ratio of medians"
            " (per run) | while route CPU s | polars CPU s | CPU s ratio (per run) |"
            " while peak RSS MB | polars peak RSS MB |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        print("\n".join(lines))
        print(f"load average after: {os.getloadavg()[0]:.1f}")
        print(
            "(a run's ratio pairs it with the floor run right after it; CPU s: user + system of"
            " each process)"
        )
        print()
        print(f"stages in process, {args.parquet:,} Parquet rows:")
        for stage, seconds in stages(parquet).items():
            print(f"  {stage:<10} {seconds:6.2f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print()
    return _startup_lines()


def _startup_lines() -> int:
    load = os.getloadavg()[0]
    best, heavy = startup()
    print(f"startup, route {SMALL.name} --format json, best of 5 at load {load:.1f}:")
    for name, (wall, cpu) in best.items():
        print(f"  {name:<26} {wall:.2f} s ({cpu:.2f} CPU s)")
    floor = best['python -c "import polars"']
    for name in ("whilecli", "python -m whilecli"):
        wall, cpu = best[name]
        print(
            f"  {name} over the polars floor: +{wall - floor[0]:.2f} s ({wall / floor[0]:.2f}×),"
            f" +{cpu - floor[1]:.2f} CPU s"
        )
    print(f"  heavy modules imported: {', '.join(heavy) or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
