"""Pools drawn from a known truth, the truth's verdict, and how the route fares against it.

DESIGN section 2, "Calibrated": per-task pass rates come from a Beta mixture (point masses
at 0 and at 1 for tasks that never or always pass), each task gets k draws, and the route
runs in process on the per-task frame the reader would hand it. The truth's verdict is the
route's own rule applied to the population (what the route would say with unlimited tasks
and draws); a firm verdict is wrong when its method is not one the truth's plan admits.
Every nominal 95% interval the route prints for pass@1 (and the teacher's paired
difference) is checked against the population value it estimates.

``benchmarks/calibration.py`` runs the whole grid; the test suite runs a slice.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from whilecli.io.rows import Rows
from whilecli.route.model import Pool
from whilecli.route.options import RouteOptions

#: A component of the task-rate mixture: (weight, a, b) for Beta(a, b), or (weight, p, None)
#: for a point mass at p (0: tasks that never pass, 1: tasks that always pass).
Component = tuple[float, float, float | None]

#: The shapes of the band the grid draws from, by name.
MIXTURES: dict[str, tuple[Component, ...]] = {
    "floor": ((1.0, 0.0, None),),
    "near-floor": ((0.9, 0.0, None), (0.1, 1.0, 6.0)),
    "low": ((0.3, 0.0, None), (0.7, 0.6, 4.0)),
    "mid": ((1.0, 2.0, 2.0),),
    "u-shaped": ((1.0, 0.4, 0.4),),
    "apart": ((0.5, 0.0, None), (0.5, 1.0, None)),
    "high": ((0.3, 1.0, None), (0.7, 5.0, 0.8)),
    "saturated": ((1.0, 1.0, None),),
}


@dataclass(frozen=True)
class Truth:
    """What the pool is drawn from."""

    mixture: str
    k: int
    tasks: int
    cut_share: float = 0.0  # share of rows cut off at the token cap
    cut_passes: bool = False  # a cut-off reply can pass (the reward scores cut-off text)
    teacher_gap: float | None = None  # the teacher's pass@1 lead; None: no teacher
    stale_share: float = 0.0  # share of rows an older copy of the model wrote
    other_model: bool = False  # another model wrote the rows

    def mean(self) -> float:
        """The population pass@1."""
        return _mixture_mean(MIXTURES[self.mixture])


def _mixture_mean(mix: tuple[Component, ...]) -> float:
    total = sum(w for w, _, _ in mix)
    return sum(w * (a if b is None else a / (a + b)) for w, a, b in mix) / total


def _split_mass(mix: tuple[Component, ...]) -> float:
    """The share of tasks whose rate lies strictly inside (0, 1)."""
    total = sum(w for w, _, _ in mix)
    return sum(w for w, a, b in mix if b is not None or 0.0 < a < 1.0) / total


def draw_rates(mix: tuple[Component, ...], n: int, rng: np.random.Generator) -> np.ndarray:
    """n task pass rates from the mixture."""
    weights = np.array([w for w, _, _ in mix], dtype=np.float64)
    pick = rng.choice(len(mix), size=n, p=weights / weights.sum())
    rates = np.empty(n, dtype=np.float64)
    for i, (_, a, b) in enumerate(mix):
        chosen = pick == i
        rates[chosen] = a if b is None else rng.beta(a, b, int(chosen.sum()))
    return rates


def _shifted(mix: tuple[Component, ...], gap: float) -> tuple[Component, ...]:
    """A teacher: the student's mixture with every rate moved up by ``gap`` in mean (the
    Beta components keep their concentration; point masses at 0 move to ``gap``)."""
    out: list[Component] = []
    for w, a, b in mix:
        if b is None:
            out.append((w, min(1.0, a + gap), None) if a < 1.0 else (w, a, None))
        else:
            m, c = a / (a + b), a + b
            m2 = min(0.999, m + gap)
            out.append((w, m2 * c, (1 - m2) * c))
    return tuple(out)


def _counts(rates: np.ndarray, k: int, truth: Truth, rng: np.random.Generator) -> pl.DataFrame:
    passes = rng.binomial(k, rates)
    n = np.full(rates.size, k, dtype=np.int64)
    cut = rng.binomial(k, truth.cut_share, size=rates.size) if truth.cut_share > 0 else 0 * n
    if truth.cut_passes:
        # a cut-off reply passes as often as the task's others: the passes among its draws
        # fall on cut-off replies at random
        cut_pass = rng.hypergeometric(passes, k - passes, cut) if k > 0 else 0 * n
    else:
        cut_pass = np.zeros_like(n)
        # a cut-off reply that cannot pass: its draws are failures
        passes = np.minimum(passes, k - cut)
    return pl.DataFrame(
        {
            "task_id": [f"t{i:06d}" for i in range(rates.size)],
            "n": n,
            "passes": passes.astype(np.int64),
            "truncated": cut.astype(np.int64),
            "truncated_known": n,
            "truncated_passes": cut_pass.astype(np.int64),
        }
    )


def _pool(
    tasks: pl.DataFrame, models: dict[str | None, int], versions: dict[str | None, int]
) -> Pool:
    rows = int(tasks["n"].sum())
    source = Rows(pl.LazyFrame(), ["simulated"], "simulated", {}, 1.0, False)
    return Pool(tasks=tasks, rows=rows, models=models, versions=versions, source=source)


MODEL = "org/student-8B"


def draw_pool(truth: Truth, rng: np.random.Generator) -> tuple[Pool, Pool | None]:
    """The student's pool (and the teacher's, when the truth has one) for one draw."""
    mix = MIXTURES[truth.mixture]
    rates = draw_rates(mix, truth.tasks, rng)
    tasks = _counts(rates, truth.k, truth, rng)
    rows = int(tasks["n"].sum())
    writer = "org/other-70B" if truth.other_model else MODEL
    stale = int(round(rows * truth.stale_share))
    versions: dict[str | None, int] = {"7": rows - stale}
    if stale:
        versions["6"] = stale
    student = _pool(tasks, {writer: rows}, versions)
    teacher = None
    if truth.teacher_gap is not None:
        t_rates = draw_rates(_shifted(mix, truth.teacher_gap), truth.tasks, rng)
        t_truth = dataclasses.replace(truth, cut_share=0.0, cut_passes=False)
        t_tasks = _counts(t_rates, truth.k, t_truth, rng)
        teacher = _pool(t_tasks, {"org/teacher-70B": rows}, {None: rows})
    return student, teacher


def truth_plan(truth: Truth, options: RouteOptions) -> set[str | None]:
    """The methods the truth admits: the route's rule on the population."""
    mix = MIXTURES[truth.mixture]
    if truth.cut_share > 0 and truth.cut_passes:
        return {None}
    teacher = (
        truth.teacher_gap is not None
        and _mixture_mean(_shifted(mix, truth.teacher_gap)) - _mixture_mean(mix)
        >= options.effect - 1e-9
    )
    if truth.k == 1:
        single: set[str | None] = {"flash_reinforce", "rae"}
        return single | ({"opd"} if teacher else set())
    split = _split_mass(mix)
    total = sum(w for w, _, _ in mix)
    at0 = sum(w for w, a, b in mix if b is None and a == 0.0) / total
    at1 = sum(w for w, a, b in mix if b is None and a == 1.0) / total
    if at0 == 1.0:
        return {"opsd"}
    if at1 == 1.0:
        return {"groupwise"}
    if split == 0.0:
        return {"opsd", "groupwise", "reinforce_ada"}
    if teacher:
        return {"opd"}
    if truth.other_model:
        return {"sft", "opd"}
    plan: set[str | None] = {"grpo", "reinforce_ada"}
    if at0 >= 0.5 - 0.1 or truth.mixture in ("near-floor",):
        plan.add("opsd")
    if truth.mean() >= options.ceiling_pass - 0.1:
        plan.add("groupwise")
    return plan


@dataclass
class Tally:
    """How the route fared in one region of the grid."""

    draws: int = 0
    firm: int = 0
    firm_wrong: int = 0
    covered: dict[str, list[int]] = field(default_factory=dict)  # name -> [hits, tries]

    def cover(self, name: str, hit: bool) -> None:
        hits = self.covered.setdefault(name, [0, 0])
        hits[0] += int(hit)
        hits[1] += 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "draws": self.draws,
            "firm": self.firm,
            "firm_wrong": self.firm_wrong,
            "coverage": {k: v[0] / v[1] for k, v in self.covered.items() if v[1]},
        }


def run_truth(truth: Truth, draws: int, seed: int = 0) -> Tally:
    """Draw ``draws`` pools from ``truth``, route each, and tally firm-and-wrong verdicts and
    the coverage of pass@1's interval (and the teacher's paired difference)."""
    from whilecli.route.decide import decide

    rng = np.random.default_rng(seed)
    tally = Tally()
    base = RouteOptions(model=f"{MODEL}@7")
    plan = truth_plan(truth, base)
    for _ in range(draws):
        student, teacher = draw_pool(truth, rng)
        options = dataclasses.replace(base, teacher=teacher, teacher_vocab=1, student_vocab=1)
        route = decide(student, options)
        tally.draws += 1
        if not route.provisional:
            tally.firm += 1
            tally.firm_wrong += int(route.method not in plan)
        rate = route.summary["pass_at_1"]
        if truth.tasks >= 10 and rate.low is not None:
            tally.cover("pass@1", rate.low <= truth.mean() <= rate.high)
        if teacher is not None and truth.tasks >= 10:
            paired = route.checks[3].measured.get("paired_difference")
            gap = _mixture_mean(_shifted(MIXTURES[truth.mixture], truth.teacher_gap or 0.0))
            gap -= truth.mean()
            if paired is not None and paired.low is not None:
                tally.cover("paired difference", paired.low <= gap <= paired.high)
    return tally


#: Task counts of the grid, and rollouts per task.
GRID_TASKS = (3, 10, 30, 100, 1000, 10_000, 100_000)
GRID_K = (2, 4, 8, 16, 32)


def grid(max_tasks: int = max(GRID_TASKS)) -> list[tuple[str, list[Truth]]]:
    """The regions of the design's grid, each a list of truths."""
    sizes = [n for n in GRID_TASKS if n <= max_tasks]
    small = [n for n in sizes if n <= 1000]
    regions: list[tuple[str, list[Truth]]] = []
    for mix in MIXTURES:
        regions.append((f"band {mix}", [Truth(mix, k, n) for k in GRID_K for n in sizes]))
    regions.append(("k = 1", [Truth(m, 1, n) for m in ("low", "mid", "high") for n in sizes]))
    regions.append((
        "cut-off replies pass",
        [Truth(m, k, n, 0.1, True) for m in ("low", "mid") for k in (1, 4, 8) for n in small],
    ))  # fmt: skip
    regions.append((
        "cut-off replies fail",
        [Truth(m, k, n, 0.1, False) for m in ("low", "mid") for k in (1, 4, 8) for n in small],
    ))  # fmt: skip
    for gap in (0.0, 0.03, 0.1, 0.2):
        regions.append((
            f"teacher gap {gap:g}",
            [Truth(m, k, n, teacher_gap=gap) for m in ("low", "mid") for k in (1, 4, 8)
             for n in small],
        ))  # fmt: skip
    regions.append((
        "older copy wrote 30%",
        [Truth(m, k, n, stale_share=0.3) for m in ("low", "mid") for k in (4, 8) for n in small],
    ))  # fmt: skip
    regions.append((
        "another model's rows",
        [Truth(m, k, n, other_model=True) for m in ("low", "mid") for k in (4, 8) for n in small],
    ))  # fmt: skip
    return regions
