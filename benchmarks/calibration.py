"""Calibration of the route against a known truth (DESIGN section 2, "Calibrated").

Draws pools over the design's grid (band shapes from floor to saturated as Beta mixtures,
k from 1 to 32, 3 to 10^5 tasks, cut-off replies that can or cannot pass, teachers at
several gaps, older copies of the model, another model's rows), routes each in process,
and prints by region: how often the verdict is firm, how often a firm verdict's method is
not one the truth admits (at most 1%), and the coverage of pass@1's and the teacher's
paired difference's nominal 95% intervals (93% to 97% from 10 tasks up).

    python benchmarks/calibration.py            # the full grid (minutes)
    python benchmarks/calibration.py --draws 50 # a quicker look
"""

from __future__ import annotations

import argparse
import sys
import time

from whilecli.route.simulate import GRID_TASKS, grid, run_truth


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=200, help="pools per cell of the grid")
    parser.add_argument("--max-tasks", type=int, default=max(GRID_TASKS))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    missed = []
    print("| region | pools | firm | firm and wrong | pass@1 coverage | paired coverage |")
    print("|---|---|---|---|---|---|")
    for name, truths in grid(max_tasks=args.max_tasks):
        total = {"draws": 0, "firm": 0, "wrong": 0}
        cover: dict[str, list[int]] = {}
        for i, truth in enumerate(truths):
            draws = args.draws if truth.tasks <= 10_000 else max(5, args.draws // 20)
            tally = run_truth(truth, draws, seed=args.seed + i)
            total["draws"] += tally.draws
            total["firm"] += tally.firm
            total["wrong"] += tally.firm_wrong
            for key, (hit, tries) in tally.covered.items():
                got = cover.setdefault(key, [0, 0])
                got[0] += hit
                got[1] += tries
        firm = total["firm"]
        wrong = total["wrong"] / firm if firm else 0.0
        cells = []
        for key in ("pass@1", "paired difference"):
            hit, tries = cover.get(key, [0, 0])
            cells.append(f"{hit / tries:.3f} ({tries})" if tries else "-")
            if tries and not 0.93 <= hit / tries <= 0.97:
                missed.append(f"{name}: {key} coverage {hit / tries:.3f}")
        if firm and wrong > 0.01:
            missed.append(f"{name}: firm and wrong {wrong:.3f}")
        print(
            f"| {name} | {total['draws']} | {firm / total['draws']:.2f} | "
            f"{wrong:.4f} ({total['wrong']}/{firm}) | {cells[0]} | {cells[1]} |",
            flush=True,
        )
    print(f"\n{time.perf_counter() - start:.0f} s")
    for line in missed:
        print("MISSED", line)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
