"""Calibration of the route against a known truth (DESIGN section 2, "Calibrated").

Draws pools over the design's grid (band shapes from floor to saturated as Beta mixtures,
k from 1 to 32, 3 to 10^5 tasks with the large end drawn sparsely, cut-off replies that
can or cannot pass, teachers at several gaps, older copies of the model, another model's
rows, and rows that carry error replies, greedy repeats, partial credit and per-row ids,
written as JSON Lines and read back), routes each as ``whilecli route`` does, and prints
by region: how often the verdict is firm, how often a firm verdict disagrees with the
verdict the truth implies (target: at most 1%), and the coverage of every nominal 95%
interval the route prints against its population value (target: 93% to 97% from 10 tasks
up). Exit 1 when a region misses a target. Seeded: the same command prints the same table.

    python benchmarks/calibration.py              # the full grid, --draws 100: about 27
                                                  # minutes on a shared 2-core machine
    python benchmarks/calibration.py --draws 20 --region teacher   # one family, quickly
    python benchmarks/calibration.py --region band --save a.pkl    # in pieces, then
    python benchmarks/calibration.py --skip band --save b.pkl      # (the rest)
    python benchmarks/calibration.py --load a.pkl b.pkl            # one table of them
"""

from __future__ import annotations

import argparse
import math
import pickle
import sys
import time

from whilecli.route import stats
from whilecli.route.options import RouteOptions
from whilecli.route.simulate import (
    COVERAGE_FROM,
    GRID_TASKS,
    Tally,
    Truth,
    draws_for,
    grid,
    offgrid,
    population,
    run_region,
)

#: Columns of the coverage table: a name and the intervals it pools.
GROUPS = {
    "pass@1": ("pass@1", "band pass@1"),
    "floor share": ("floor share",),
    "other shares": ("split share", "in-band share", "truncated share"),
    "pass@k": ("pass@k",),
    "pass^k": ("pass^k",),
    "teacher, student": ("teacher pass@1", "student pass@1"),
    "paired diff": ("paired difference",),
}
LOW, HIGH, WRONG = 0.93, 0.97, 0.01


def _pooled(tally: Tally, names: tuple[str, ...]) -> tuple[int, int]:
    hits = sum(tally.covered.get(n, [0, 0])[0] for n in names)
    tries = sum(tally.covered.get(n, [0, 0])[1] for n in names)
    return hits, tries


def _ends(tally: Tally, interval: str, hits: int, tries: int) -> str:
    """How much of an interval's coverage the pools decided: the intervals whose estimate sat
    at 0 or 1 (every task's estimate at that end; any interval that holds the end covers a
    truth near it, whatever its rule), and the coverage of the rest."""
    end_hits, ends = tally.end_counts().get(interval, [0, 0])
    if not ends:
        return ""
    rest = tries - ends
    inside = f"{(hits - end_hits) / rest:.3f} of {rest}" if rest else "none"
    return (
        f"; {ends} ({ends / tries:.0%}) with the estimate at 0 or 1 cover"
        f" {end_hits / ends:.3f}, the rest {inside}"
    )


def table(regions: list[tuple[str, Tally]]) -> tuple[list[str], list[str]]:
    """The Markdown table by region, and the targets each region misses."""
    head = "| region | pools | firm | firm and wrong | " + " | ".join(GROUPS) + " |"
    lines = [head, "|---" * (4 + len(GROUPS)) + "|"]
    missed: list[str] = []
    for name, tally in regions:
        wrong = tally.firm_wrong / tally.firm if tally.firm else 0.0
        cells = []
        for names in GROUPS.values():
            hits, tries = _pooled(tally, names)
            cells.append(f"{hits / tries:.3f}" if tries else "-")
        for interval, (hits, tries) in sorted(tally.covered.items()):
            if tries and not LOW <= hits / tries <= HIGH:
                missed.append(f"{name}: {interval} covers {hits / tries:.3f} of {tries}"
                              + _ends(tally, interval, hits, tries))  # fmt: skip
        if wrong > WRONG:
            missed.append(f"{name}: firm and wrong {tally.firm_wrong} of {tally.firm}")
            missed.extend(f"  e.g. {w}" for w in tally.wrong[:3])
        lines.append(
            f"| {name} | {tally.draws} | {tally.firm / max(tally.draws, 1):.2f} | "
            f"{wrong:.4f} ({tally.firm_wrong}/{tally.firm}) | " + " | ".join(cells) + " |"
        )
    return lines, missed


def by_tasks(cells: list[tuple[Truth, Tally]]) -> tuple[list[str], list[str]]:
    """Firm share, firm-and-wrong and coverage by task count over the whole grid: all
    intervals together, then each kind of interval (the table's columns) apart; and the
    targets a task count misses (coverage from :data:`COVERAGE_FROM` tasks)."""
    sizes: dict[int, Tally] = {}
    for truth, tally in cells:
        sizes.setdefault(truth.tasks, Tally()).add(tally)
    lines = [
        "| tasks | pools | firm | firm and wrong | all intervals | " + " | ".join(GROUPS) + " |",
        "|---" * (5 + len(GROUPS)) + "|",
    ]
    missed: list[str] = []
    for n in sorted(sizes):
        t = sizes[n]
        hits = sum(h for h, _ in t.covered.values())
        tries = sum(n for _, n in t.covered.values())
        cover = f"{hits / tries:.3f}" if tries else "-"
        kinds = []
        for kind, names in GROUPS.items():
            got, of = _pooled(t, names)
            kinds.append(f"{got / of:.3f}" if of else "-")
            if of and n >= COVERAGE_FROM and not LOW <= got / of <= HIGH:
                missed.append(f"{n} tasks: {kind} covers {got / of:.3f} of {of}")
        wrong = t.firm_wrong / t.firm if t.firm else 0.0
        lines.append(
            f"| {n} | {t.draws} | {t.firm / max(t.draws, 1):.2f} | {wrong:.4f} | {cover} | "
            + " | ".join(kinds)
            + " |"
        )
    return lines, missed


def _binomial_pmf(s: int, n: int, p: float) -> float:
    log = math.lgamma(n + 1) - math.lgamma(s + 1) - math.lgamma(n - s + 1)
    return math.exp(log + s * math.log(p) + (n - s) * math.log1p(-p))


def wilson_coverage(p: float, n: int) -> float:
    """The exact chance that the Wilson interval of a count s ~ Binomial(n, p) holds p: the
    sum of P(s) over the counts whose interval does (those within 12 sd and 40 of np; the
    rest carry no mass)."""
    reach = 12.0 * math.sqrt(n * p * (1.0 - p)) + 40.0
    first, last = max(0, int(n * p - reach)), min(n, int(n * p + reach) + 1)
    total = 0.0
    for s in range(first, last + 1):
        rate = stats.wilson(s, n)
        assert rate.low is not None and rate.high is not None
        if rate.low - 1e-12 <= p <= rate.high + 1e-12:
            total += _binomial_pmf(s, n, p)
    return total


def _at_end(truth: Truth, which: str, j: int) -> tuple[float, float]:
    """(population value, chance that the estimate of a pool of the truth sits at 0 or 1):
    every task's estimate at one end. pass@j's estimate is 0 at c = 0 and 1 at c > k − j;
    pass^j's is 0 at c < j and 1 at c = k; a share's count is 0 or N."""
    pop, n, k = population(truth), truth.tasks, truth.k
    pmf = pop.pmf
    if which == "pass@k":
        return pop.pass_at(j), float(pmf[0] ** n + pmf[k - j + 1 :].sum() ** n)
    if which == "pass^k":
        return pop.pass_hat(j), float(pmf[:j].sum() ** n + pmf[k] ** n)
    share = pop.at_zero()
    return share, (1.0 - share) ** n + share**n


def exact(draws: int, names: list[str]) -> list[str]:
    """Two tables of the band regions, summed over the pools' distribution, no draws.

    Each task of a band truth falls at 0, splits or lies in the band independently with the
    population's chance, so a share's count is Binomial(N, share) and its Wilson interval's
    coverage is a finite sum. And the chance that a pool's estimate sits at 0 or 1 (every
    task's at that end), where an interval that holds the end covers a truth near it
    whatever its rule: a cell's coverage is then at least that chance, and an interval that
    holds 95% in every cell covers at least max(that chance, 0.95) there, which bounds the
    region's coverage from below whatever the rule. Cells weighted by the draws the grid gives them (a 20th from 10^4 tasks), from
    10 tasks up, values inside (0, 1), as the drawn table counts them."""
    low, high = RouteOptions().band
    shares = ["| region | floor share | split share | in-band share |", "|---|---|---|---|"]
    least = ["| region | floor share | pass@k | pass^k |", "|---|---|---|---|"]
    for name, truths in grid():
        if not name.startswith("band ") or (names and not any(r in name for r in names)):
            continue
        cells = []
        for which in ("floor", "split", "in-band"):
            got = weight = 0.0
            for truth in truths:
                if truth.tasks < COVERAGE_FROM:
                    continue
                pop = population(truth)
                share = {"floor": pop.at_zero(), "split": pop.split()}.get(which)
                share = pop.in_band(low, high) if share is None else share
                if not 1e-12 < share < 1.0 - 1e-12:
                    continue
                w = draws_for(truth, draws)
                got += w * wilson_coverage(share, truth.tasks)
                weight += w
            cells.append(f"{got / weight:.4f}" if weight else "-")
        shares.append(f"| {name} | " + " | ".join(cells) + " |")
        cells = []
        for which in ("floor share", "pass@k", "pass^k"):
            ends = bound = weight = 0.0
            for truth in truths:
                if truth.tasks < COVERAGE_FROM or truth.k < 2:
                    continue
                js = [0] if which == "floor share" else _printed_ks(truth.k)
                for j in js:
                    value, at_end = _at_end(truth, which, j)
                    if not 1e-12 < value < 1.0 - 1e-12:
                        continue
                    w = draws_for(truth, draws)
                    ends += w * at_end
                    bound += w * max(at_end, 0.95)
                    weight += w
            if weight:
                cells.append(f"{ends / weight:.2f}, {bound / weight:.4f}")
            else:
                cells.append("-")
        least.append(f"| {name} | " + " | ".join(cells) + " |")
    why = (
        "Pools whose estimate sits at 0 or 1 (every task at that end), and the least coverage"
        " of an interval that covers 95% of the pools of every cell at least:"
    )
    return [*shares, "", why, *least]


def _printed_ks(k: int) -> list[int]:
    """The j of the pass@j and pass^j a route prints for pools of k draws per task."""
    return sorted({j for j in (4, 8, 16, 32) if j <= k} | ({k} if k >= 4 else set()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--draws", type=int, default=100, help="pools per cell of the grid")
    parser.add_argument("--max-tasks", type=int, default=max(GRID_TASKS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--offgrid",
        action="store_true",
        help="the regions just outside the grid (k it skips, shapes between its bands,"
        " thresholds' neighbours, pools near 30 tasks) instead of the grid",
    )
    parser.add_argument("--region", action="append", help="only regions whose name has this")
    parser.add_argument(
        "--skip", action="append", help="leave out regions whose name has this (after --region)"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="print each cell")
    parser.add_argument("--save", help="also write the tallies to this file (pickle)")
    parser.add_argument("--load", nargs="+", help="print the table of saved tallies, run none")
    parser.add_argument(
        "--exact",
        action="store_true",
        help="print the band regions' share coverage and the least coverage their pools"
        " allow, summed exactly, run none",
    )
    args = parser.parse_args(argv)
    if args.exact:
        print("\n".join(exact(args.draws, args.region or [])))
        return 0
    if args.load:
        results, cells = [], []
        for path in args.load:
            with open(path, "rb") as handle:
                got = pickle.load(handle)
            results += got[0]
            cells += got[1]
        return report(results, cells, "saved tallies")
    start = time.perf_counter()
    results: list[tuple[str, Tally]] = []
    cells: list[tuple[Truth, Tally]] = []

    def progress(truth: Truth, tally: Tally) -> None:
        cells.append((truth, tally))
        if args.verbose:
            cover = ", ".join(f"{k} {v:.2f}" for k, v in sorted(tally.coverage().items()))
            print(
                f"  {truth.label()}: firm {tally.firm}/{tally.draws}, wrong {tally.firm_wrong}"
                f"; {cover}",
                file=sys.stderr,
                flush=True,
            )

    regions = offgrid() if args.offgrid else grid(max_tasks=args.max_tasks)
    for i, (name, truths) in enumerate(regions):
        if args.region and not any(r in name for r in args.region):
            continue
        if args.skip and any(r in name for r in args.skip):
            continue
        tally = run_region(truths, args.draws, seed=args.seed * 1000 + i, progress=progress)
        results.append((name, tally))
        print(f"{name}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
        print("  " + table([(name, tally)])[0][-1], file=sys.stderr, flush=True)
    if args.save:
        with open(args.save, "wb") as handle:
            pickle.dump((results, cells), handle)
    took = f"{time.perf_counter() - start:.0f} s (--draws {args.draws}, --seed {args.seed})"
    return report(results, cells, took)


def report(results: list[tuple[str, Tally]], cells: list[tuple[Truth, Tally]], took: str) -> int:
    """Print both tables and the targets missed; 1 when one is."""
    order = {name: i for i, (name, _) in enumerate(grid() + offgrid())}
    results = sorted(results, key=lambda got: order.get(got[0], len(order)))
    lines, missed = table(results)
    print("\n".join(lines))
    print()
    sized, missed_sizes = by_tasks(cells)
    print("\n".join(sized))
    pools = sum(t.draws for _, t in results)
    print(f"\n{pools} pools, {took}")
    for line in missed:
        print("MISSED", line)
    for line in missed_sizes:
        print("MISSED (by task count)", line)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
