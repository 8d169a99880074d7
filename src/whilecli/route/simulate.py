"""Pools drawn from a known truth, the truth's verdict, and how the route fares against it.

DESIGN section 2, "Calibrated". A :class:`Truth` names the population: per-task pass rates
from a Beta mixture (point masses at 0 and 1 for tasks that never or always pass), k draws
per task, cut-off replies (that can or cannot pass), a teacher some gap ahead, rows that an
older copy or another model wrote, and what the reading layer must see through: error
replies in place of draws, greedy draws repeated k times, short answers (a letter of a few,
which sampled draws repeat by chance), partial credit, per-row ids.

- Pool-level truths are drawn as the per-task counts the reader hands the route and routed
  by :func:`whilecli.route.decide.decide`, the function ``whilecli route`` calls.
- Truths whose meaning lies in the rows (errors, greedy repeats, partial credit, per-row ids)
  are written as JSON Lines and routed by :func:`whilecli.route.run_route`, the library
  function behind the command: reading, row facts, pooling and decision, end to end.

The truth's verdict is the route's own table (:func:`whilecli.route.decide.population_route`'s
inputs built from the TRUE parameters, with the thresholds of :class:`RouteOptions`): what
the route would say with every task of the population and its exact rates. A firm verdict
is wrong when its method differs from the truth's, or when it leaves out what the truth's
plan requires (Async for rows an older copy wrote, OPD beside k = 1 for a teacher that
clears). Every nominal 95% interval the route prints is checked against the population
value it estimates, computed exactly from the mixture (beta-binomial sums), never drawn.

``benchmarks/calibration.py`` runs the whole grid; the test suite runs a slice.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from whilecli.errors import WhileError
from whilecli.io.rows import Rows
from whilecli.route.model import Pool, Rate, Route
from whilecli.route.options import RouteOptions

#: A component of the task-rate mixture: (weight, a, b) for Beta(a, b), or (weight, p, None)
#: for a point mass at p (0: tasks that never pass, 1: tasks that always pass).
Component = tuple[float, float, float | None]
Mixture = tuple[Component, ...]

#: The shapes of the band the grid draws from, by name.
MIXTURES: dict[str, Mixture] = {
    "floor": ((1.0, 0.0, None),),
    "near-floor": ((0.9, 0.0, None), (0.1, 1.0, 6.0)),
    "low": ((0.3, 0.0, None), (0.7, 0.6, 4.0)),
    "mid": ((1.0, 2.0, 2.0),),
    "u-shaped": ((1.0, 0.4, 0.4),),
    "apart": ((0.6, 0.0, None), (0.4, 1.0, None)),
    "high": ((0.3, 1.0, None), (0.7, 5.0, 0.8)),
    "near-saturated": ((0.95, 1.0, None), (0.05, 4.0, 1.0)),
    "saturated": ((1.0, 1.0, None),),
}
#: Shapes between the grid's bands (the off-grid probe): a few tasks barely off the floor or
#: the ceiling, floors near half the tasks, and tilted or skewed middles.
BETWEEN: dict[str, Mixture] = {
    "almost-floor": ((0.97, 0.0, None), (0.03, 1.0, 12.0)),
    "sparse-low": ((0.7, 0.0, None), (0.3, 0.5, 5.0)),
    "half-floor": ((0.5, 0.0, None), (0.5, 2.0, 2.0)),
    "low-mid": ((1.0, 1.0, 3.0),),
    "upper-mid": ((1.0, 3.0, 1.5),),
    "tilted-u": ((0.5, 0.3, 3.0), (0.5, 3.0, 0.3)),
    "almost-saturated": ((0.97, 1.0, None), (0.03, 12.0, 1.0)),
    "edge-floor": ((0.91, 0.0, None), (0.09, 1.0, 12.0)),
    "edge-saturated": ((0.91, 1.0, None), (0.09, 12.0, 1.0)),
}
#: Shapes further out (the wider probe): per-task rates skewed to one end, and pools made
#: mostly of tasks that never or always pass with a few in between.
WIDER: dict[str, Mixture] = {
    "skewed-low": ((1.0, 0.3, 2.5),),
    "skewed-high": ((1.0, 2.5, 0.3),),
    "ends-and-mid": ((0.45, 0.0, None), (0.45, 1.0, None), (0.1, 2.0, 2.0)),
    "floor-and-saturated": ((0.7, 0.0, None), (0.25, 1.0, None), (0.05, 1.0, 1.0)),
}


def mixture(name: str) -> Mixture:
    """The mixture a truth names: a band of the grid, a shape between them or further out."""
    for shapes in (MIXTURES, BETWEEN, NEAR_THRESHOLDS):
        if name in shapes:
            return shapes[name]
    return WIDER[name]


MODEL = "org/student-8B"
SMALL_MODEL = "org/student-0.6B"
TEACHER = "org/teacher-70B"
OTHER = "org/other-70B"
#: A harness error written where a reply should be (DESIGN section 1, ``reply``).
ERROR_TEXT = "Error code: 429 - rate limit exceeded, too many requests"


@dataclass(frozen=True)
class Truth:
    """What a pool is drawn from."""

    mixture: str
    k: int
    tasks: int
    cut_share: float = 0.0  # share of draws cut off at the token cap
    cut_passes: bool = False  # a cut-off reply passes as often as the others (else it fails)
    teacher_gap: float | None = None  # the teacher's lead in mean per-task rate; None: none
    stale_share: float = 0.0  # share of rows an older copy of the model wrote
    other_model: bool = False  # another model wrote the rows
    small: bool = False  # the model you train is under 7B (its name says 0.6B)
    error_share: float = 0.0  # share of draws the harness answered with an error (rows)
    greedy: bool = False  # each task's k draws are one completion repeated (rows)
    partial_share: float = 0.0  # share of failed draws graded with partial credit (rows)
    row_ids: bool = False  # one id per row while prompts repeat (rows)
    # --- off the grid ---
    k_mix: tuple[tuple[int, float], ...] = ()  # per-task k drawn from (k, weight); () all k
    cut_pass_scale: float = 0.0  # a cut-off draw passes at the task's rate times this
    teacher_coverage: float = 1.0  # share of the student's tasks the teacher was run on
    name: str = ""  # the model's name as written (default MODEL or SMALL_MODEL)
    size_b: float | None = None  # its true size in billions (with ``name``)
    row_id_share: float = 0.0  # share of tasks whose rows carry one id per row (rows)
    threshold: float | None = None  # continuous rewards, a pass at reward >= this (rows)
    rows: bool = False  # route from JSON Lines even when the truth lives in the counts
    teacher_k: int = 0  # the teacher's draws per task (0: the student's k)
    teacher_cut_share: float = 0.0  # share of the teacher's draws cut off at the cap
    teacher_cut_pass_scale: float = 0.0  # a teacher's cut-off draw passes at its rate times this
    near_threshold: bool = False  # continuous rewards within 1e-9 of ``threshold`` (rows)
    teacher_row_ids: bool = False  # the teacher's rows carry one id per row (rows)
    teacher_error_share: float = 0.0  # share of the teacher's draws answered with an error (rows)
    greedy_share: float = 0.0  # share of tasks whose k draws are one completion repeated (rows)
    other_share: float = 0.0  # share of rows another model wrote beside the model's own
    teacher_reward_scale: float = 1.0  # the teacher's rewards written on this scale (rows)
    answers: int = 0  # replies are one of this many letters: the task's where they pass (rows)
    #: error replies written as nothing recorded: no reply (null), reward 0, no error field
    absent_errors: bool = False
    #: error replies written as this placeholder text (``ERROR``), reward 0, no error field
    placeholder: str = ""

    @property
    def through_rows(self) -> bool:
        """Whether the truth lives in the rows: routed from JSON Lines by ``run_route``."""
        return bool(
            self.error_share
            or self.greedy
            or self.partial_share
            or self.row_ids
            or self.row_id_share
            or self.threshold is not None
            or self.rows
            or self.teacher_row_ids
            or self.teacher_error_share
            or self.greedy_share
            or self.teacher_reward_scale != 1.0
            or self.answers
        )

    @property
    def model(self) -> str:
        if self.name:
            return self.name
        return SMALL_MODEL if self.small else MODEL

    @property
    def true_size_b(self) -> float:
        """The size the truth's table reads: ``size_b`` where a name is given."""
        if self.name and self.size_b is not None:
            return self.size_b
        return 0.6 if self.small else 8.0

    @property
    def scale(self) -> float:
        """How often a cut-off draw passes, relative to the task's rate."""
        return 1.0 if self.cut_passes else self.cut_pass_scale

    @property
    def ks(self) -> tuple[tuple[int, float], ...]:
        """(k, share of tasks) over the pool's tasks."""
        if not self.k_mix:
            return ((self.k, 1.0),)
        total = sum(w for _, w in self.k_mix)
        return tuple((k, w / total) for k, w in self.k_mix)

    @property
    def grouped(self) -> bool:
        return any(k >= 2 for k, _ in self.ks)

    def label(self) -> str:
        parts = [self.mixture, f"k={self.k}", f"{self.tasks} tasks"]
        if self.k_mix:
            parts[1] = "k=" + "/".join(f"{k}:{w:g}" for k, w in self.k_mix)
        for name in ("cut_share", "teacher_gap", "stale_share", "error_share", "partial_share",
                     "cut_pass_scale", "row_id_share", "threshold", "teacher_k",
                     "teacher_cut_share", "teacher_error_share",
                     "teacher_cut_pass_scale", "greedy_share", "other_share",
                     "answers"):  # fmt: skip
            value = getattr(self, name)
            if value is not None and value != 0:
                parts.append(f"{name}={value:g}")
        if self.teacher_reward_scale != 1.0:
            parts.append(f"teacher_reward_scale={self.teacher_reward_scale:g}")
        if self.teacher_coverage != 1.0:
            parts.append(f"teacher_coverage={self.teacher_coverage:g}")
        if self.name:
            parts.append(self.name)
        if self.placeholder:
            parts.append(f"placeholder={self.placeholder!r}")
        parts += [n for n in ("cut_passes", "other_model", "small", "greedy", "row_ids",
                              "near_threshold", "teacher_row_ids", "absent_errors")
                  if getattr(self, n)]  # fmt: skip
        return " ".join(parts)


# --- the population ---------------------------------------------------------------------


def _mixture_mean(mix: Mixture) -> float:
    total = sum(w for w, _, _ in mix)
    return sum(w * (a if b is None else a / (a + b)) for w, a, b in mix) / total


def _shifted(mix: Mixture, gap: float) -> Mixture:
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


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _component_pmf(a: float, b: float | None, k: int) -> np.ndarray:
    """P(c passes in k draws) for rates from one component (beta-binomial, or binomial at a
    point mass)."""
    c = range(k + 1)
    if b is None:
        if a <= 0.0 or a >= 1.0:
            out = np.zeros(k + 1)
            out[0 if a <= 0.0 else k] = 1.0
            return out
        logs = [_log_comb(k, j) + j * math.log(a) + (k - j) * math.log1p(-a) for j in c]
    else:
        base = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
        logs = [
            _log_comb(k, j) + math.lgamma(j + a) + math.lgamma(k - j + b)
            - math.lgamma(k + a + b) - base
            for j in c
        ]  # fmt: skip
    return np.exp(np.array(logs, dtype=np.float64))


@functools.lru_cache(maxsize=4096)
def pass_pmf(mix: Mixture, k: int, keep: float = 1.0) -> np.ndarray:
    """P(a task shows c passes in k draws), c = 0..k, over the mixture; each pass survives
    with probability ``keep`` (a draw cut off at the cap fails: keep = 1 − cut share).
    Exact: the thinned beta-binomial Σ_m P(m) C(m, c) keep^c (1 − keep)^(m − c)."""
    total = sum(w for w, _, _ in mix)
    pmf = sum((w / total) * _component_pmf(a, b, k) for w, a, b in mix)
    pmf = np.asarray(pmf, dtype=np.float64)
    if keep >= 1.0:
        return pmf
    out = np.zeros(k + 1)
    for m in range(k + 1):
        out[: m + 1] += pmf[m] * _component_pmf(keep, None, m)
    return out


@dataclass(frozen=True)
class Population:
    """The exact values the route estimates, for one side (student or teacher) at k."""

    mean: float  # pass@1: the mean per-task pass rate
    pmf: np.ndarray  # P(c passes in k draws)
    k: int
    mix: Mixture
    keep: float

    def at_zero(self) -> float:
        return float(self.pmf[0])

    def at_k(self) -> float:
        return float(self.pmf[-1])

    def split(self) -> float:
        return max(0.0, 1.0 - self.at_zero() - self.at_k()) if self.k >= 2 else 0.0

    def in_band(self, low: float, high: float) -> float:
        c = np.arange(self.k + 1)
        rate = c / self.k
        inside = (rate >= low - 1e-9) & (rate <= high + 1e-9) & (c > 0) & (c < self.k)
        return float(self.pmf[inside].sum())

    def pass_at(self, j: int) -> float:
        """pass@j: the chance that one of j draws passes."""
        return 1.0 - float(pass_pmf(self.mix, j, self.keep)[0])

    def pass_hat(self, j: int) -> float:
        """pass^j: the chance that all j draws pass."""
        return float(pass_pmf(self.mix, j, self.keep)[-1])


def population(truth: Truth, teacher: bool = False) -> Population:
    """The student's population (or the teacher's: the shifted mixture at the teacher's k,
    its cut-off draws failing). A cut-off draw passes at the task's rate times
    :attr:`Truth.scale`: each pass survives with probability 1 − cut share × (1 − scale)."""
    mix = mixture(truth.mixture)
    keep = 1.0 - truth.cut_share * (1.0 - truth.scale)
    k = max(truth.k, 1)
    if teacher:
        mix = _shifted(mix, truth.teacher_gap or 0.0)
        keep = 1.0 - truth.teacher_cut_share * (1.0 - truth.teacher_cut_pass_scale)
        k = max(truth.teacher_k or truth.k, 1)
    return Population(_mixture_mean(mix) * keep, pass_pmf(mix, k, keep), k, mix, keep)


@dataclass(frozen=True)
class Shares:
    """Shares of the grouped tasks (k ≥ 2) at 0, at 1, split and in the band, over the
    truth's per-task k."""

    at_zero: float
    at_k: float
    split: float
    in_band: float


def grouped_shares(truth: Truth, band: tuple[float, float]) -> Shares:
    """:class:`Shares` of the truth's grouped tasks, each k weighted by its share of them."""
    ks = [(k, w) for k, w in truth.ks if k >= 2]
    total = sum(w for _, w in ks)
    if not total:
        return Shares(0.0, 0.0, 0.0, 0.0)
    got = np.zeros(4)
    for k, w in ks:
        pop = population(dataclasses.replace(truth, k=k, k_mix=()))
        got += (w / total) * np.array([pop.at_zero(), pop.at_k(), pop.split(), pop.in_band(*band)])
    return Shares(*(float(x) for x in got))


# --- the truth's verdict ---------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """What the truth implies: the method, and what the plan must carry beside it."""

    method: str | None
    requires: frozenset[str] = frozenset()
    route: str = ""
    measured: bool = True  # False: the rows cannot tell (greedy repeats): no firm verdict
    #: Methods also right where the truth lies within the design's resolution of a boundary
    #: no finite pool sees past (the defaults of :class:`RouteOptions`, whatever options are
    #: under test): a split share under ``unseen_split`` (floor or saturated also right),
    #: cut-off replies passing under ``cut_pass_ratio`` as often as the others (the route
    #: without the block also right), a teacher's lead within ``effect_margin`` of ``effect``
    #: or its truncated share within ``truncated_margin`` of ``teacher_max_truncated`` (the
    #: answer on its other side also right).
    also: frozenset[str | None] = frozenset()


def truth_verdict(truth: Truth, options: RouteOptions) -> Verdict:
    """The route's own table applied to the TRUE parameters (every task of the population,
    its exact rates): :func:`whilecli.route.decide.population_route` with the thresholds of
    ``options``."""
    from whilecli.route.decide import population_route

    if truth.greedy and truth.grouped:
        return Verdict(None, measured=False)
    student = population(truth)
    shares = grouped_shares(truth, options.band)
    gap = None
    if truth.teacher_gap is not None:
        gap = population(truth, teacher=True).mean - student.mean
    another = truth.other_model or truth.other_share > 0
    policy = "other" if another else ("stale" if truth.stale_share > 0 else "on")

    # a teacher's cut-off reply can pass: check 4 fails it (its cut-off replies would teach)
    t_blocked = gap is not None and truth.teacher_cut_share > 0 and truth.teacher_cut_pass_scale > 0

    def table(
        blocked: bool,
        band: Shares,
        lead: float | None = gap,
        cut: float | None = None,
        t_cut_passes: bool = t_blocked,
    ) -> tuple[str, str | None, list[str]]:
        return population_route(
            options,
            blocked=blocked,
            grouped=truth.grouped,
            floor_share=band.at_zero,
            saturated_share=band.at_k,
            split_share=band.split,
            pass_at_1=student.mean,
            teacher_gap=lead,
            teacher_coverage=_teacher_tasks(truth) / truth.tasks,
            teacher_truncated=truth.teacher_cut_share if cut is None else cut,
            teacher_cut_passes=t_cut_passes,
            policy=policy,
            size_b=truth.true_size_b,
        )

    # a cut-off reply can pass: some are cut off, and some of those would pass
    blocked = truth.scale > 0 and truth.cut_share > 0 and _mixture_mean(mixture(truth.mixture)) > 0
    route, method, plan = table(blocked, shares)
    if truth.other_model and route in ("floor", "saturated", "no-split", "teacher"):
        # the band and the teacher's lead are another model's: they say nothing firm of the
        # model to train (pick-a-method: measure p on the model you will train)
        return Verdict(None, measured=False)
    requires = _requires(route, plan)
    also: set[str | None] = set()
    resolution = RouteOptions()
    if blocked and truth.scale < resolution.cut_pass_ratio - 1e-12:
        also.add(table(False, shares)[1])
    if gap is not None and abs(gap - resolution.effect) < resolution.effect_margin:
        # a lead too close to ``effect`` to call: the answer on its other side is right too,
        # and what only one side's plan carries (OPD beside k = 1) is not required
        zone = resolution.effect_margin
        other = resolution.effect + (zone if gap < resolution.effect else -zone)
        route_b, method_b, plan_b = table(blocked, shares, other)
        also.add(method_b)
        if method_b == method:
            requires &= _requires(route_b, plan_b)
    limit = resolution.teacher_max_truncated
    if gap is not None and abs(truth.teacher_cut_share - limit) < resolution.truncated_margin:
        # a teacher's truncated share too close to the limit to call: either side is right
        other_cut = limit + (resolution.truncated_margin if truth.teacher_cut_share <= limit
                             else -resolution.truncated_margin)  # fmt: skip
        route_c, method_c, plan_c = table(blocked, shares, gap, other_cut)
        also.add(method_c)
        if method_c == method:
            requires &= _requires(route_c, plan_c)
    if t_blocked and truth.teacher_cut_pass_scale < resolution.cut_pass_ratio - 1e-12:
        # a teacher's cut-off replies passing too seldom for a pool to see: as check 1
        route_t, method_t, plan_t = table(blocked, shares, t_cut_passes=False)
        also.add(method_t)
        if method_t == method:
            requires &= _requires(route_t, plan_t)
    if truth.grouped and 0 < shares.split < resolution.unseen_split:
        floor = shares.at_zero >= shares.at_k
        unseen = Shares(float(floor), float(not floor), 0.0, 0.0)
        also.add(table(blocked, unseen)[1])
    return Verdict(method, frozenset(requires), route, also=frozenset(also - {method}))


def _requires(route: str, plan: list[str]) -> set[str]:
    """What a verdict's plan must carry beside its method: Async for rows an older copy
    wrote, OPD beside the single-rollout family for a teacher that clears."""
    requires = set()
    if "async" in plan:
        requires.add("async")
    if route == "single-rollout" and "opd" in plan:
        requires.add("opd")
    return requires


# --- drawing pools -----------------------------------------------------------------------


def draw_rates(mix: Mixture, n: int, rng: np.random.Generator) -> np.ndarray:
    """n task pass rates from the mixture."""
    weights = np.array([w for w, _, _ in mix], dtype=np.float64)
    pick = rng.choice(len(mix), size=n, p=weights / weights.sum())
    rates = np.empty(n, dtype=np.float64)
    for i, (_, a, b) in enumerate(mix):
        chosen = pick == i
        rates[chosen] = a if b is None else rng.beta(a, b, int(chosen.sum()))
    return rates


def _teacher_tasks(truth: Truth) -> int:
    """The tasks the teacher was run on: the first ``teacher_coverage`` of the student's."""
    return int(round(truth.teacher_coverage * truth.tasks))


@functools.lru_cache(maxsize=16)
def _task_ids(n: int) -> pl.Series:
    return pl.Series("task_id", [f"t{i:06d}" for i in range(n)])


@dataclass(frozen=True)
class Draws:
    """One side's draws, per task: real draws (not error replies), passes, cut-off draws and
    cut-off passes."""

    n: np.ndarray
    passes: np.ndarray
    cut: np.ndarray
    cut_passes: np.ndarray
    errors: np.ndarray
    repeated: np.ndarray | None = None  # tasks whose draws are one completion repeated

    def frame(self) -> pl.DataFrame:
        """The per-task counts the reader hands the route (:attr:`Pool.tasks`), tasks with
        no real draw left out as reading leaves them."""
        frame = pl.DataFrame(
            {
                "task_id": _task_ids(self.n.size),
                "n": self.n,
                "passes": self.passes,
                "truncated": self.cut,
                "truncated_known": self.n,
                "truncated_passes": self.cut_passes,
            }
        )
        return frame.filter(pl.col("n") > 0) if (self.n == 0).any() else frame


def draw_counts(
    rates: np.ndarray, truth: Truth, rng: np.random.Generator, *, cut_share: float
) -> Draws:
    """Per task: k attempts, of which errors (``error_share``) are not draws; each draw is
    cut off with ``cut_share`` and passes with the task's rate, unless cut off and cut-off
    replies fail. Greedy: one draw repeated, so a task passes all or none of its draws."""
    size = rates.size
    k: Any = truth.k
    if truth.k_mix:
        sizes, weights = zip(*truth.ks, strict=True)
        k = rng.choice(np.array(sizes), size=size, p=np.array(weights))
    errors = rng.binomial(k, truth.error_share, size) if truth.error_share else np.zeros(size, int)
    n = (k - errors).astype(np.int64)
    cut = rng.binomial(n, cut_share) if cut_share else np.zeros(size, np.int64)
    if truth.greedy:
        one = rng.random(size) < rates
        passes = np.where(one, n, 0)
        if cut_share and not truth.cut_passes:
            passes = np.where(cut > 0, 0, passes)
        cut_pass = np.where(one, cut, 0) if truth.cut_passes else np.zeros(size, np.int64)
    else:
        scale = truth.scale if cut_share else 0.0
        cut_pass = rng.binomial(cut, rates * scale) if scale else np.zeros(size, np.int64)
        passes = rng.binomial(n - cut, rates) + cut_pass
    repeated = None
    if truth.greedy_share and not truth.greedy:  # those tasks' draws are one draw, k times
        repeated = rng.random(size) < truth.greedy_share
        one = rng.random(size) < rates
        passes = np.where(repeated, np.where(one, n, 0), passes)
        cut = np.where(repeated, 0, cut)
        cut_pass = np.where(repeated, 0, cut_pass)
    as_int = functools.partial(np.asarray, dtype=np.int64)
    return Draws(as_int(n), as_int(passes), as_int(cut), as_int(cut_pass), as_int(errors), repeated)


def _pool(
    tasks: pl.DataFrame, models: dict[str | None, int], versions: dict[str | None, int]
) -> Pool:
    rows = int(tasks["n"].sum())
    source = Rows(pl.LazyFrame(), ["simulated"], "simulated", {}, 1.0, False)
    return Pool(tasks=tasks, rows=rows, models=models, versions=versions, source=source)


def draw_sides(truth: Truth, rng: np.random.Generator) -> tuple[Draws, Draws | None]:
    """The student's draws (and the teacher's, when the truth has one)."""
    mix = mixture(truth.mixture)
    student = draw_counts(draw_rates(mix, truth.tasks, rng), truth, rng, cut_share=truth.cut_share)
    teacher = None
    if truth.teacher_gap is not None:
        t_rates = draw_rates(_shifted(mix, truth.teacher_gap), truth.tasks, rng)
        plain = dataclasses.replace(truth, greedy=False, greedy_share=0.0,
                                    error_share=truth.teacher_error_share,
                                    cut_passes=False,
                                    cut_pass_scale=truth.teacher_cut_pass_scale)  # fmt: skip
        if truth.teacher_k:
            plain = dataclasses.replace(plain, k=truth.teacher_k, k_mix=())
        teacher = draw_counts(t_rates, plain, rng, cut_share=truth.teacher_cut_share)
        if truth.teacher_coverage < 1.0:  # run on the first tasks only: no draw on the rest
            keep = np.arange(truth.tasks) < _teacher_tasks(truth)
            arrays = dataclasses.astuple(teacher)[:5]
            teacher = Draws(*(np.where(keep, a, 0) for a in arrays))
    return student, teacher


def _writers(truth: Truth, rows: int) -> tuple[dict[str | None, int], dict[str | None, int]]:
    writer = OTHER if truth.other_model else truth.model
    stale = int(round(rows * truth.stale_share))
    if truth.stale_share > 0:  # the truth says an older copy wrote rows: at least one of them
        stale = min(rows, max(1, stale))
    versions: dict[str | None, int] = {"7": rows - stale}
    if stale:
        versions["6"] = stale
    other = min(rows, max(1, int(round(rows * truth.other_share)))) if truth.other_share else 0
    if other and writer != OTHER:  # another model wrote some rows beside the model's own
        return {writer: rows - other, OTHER: other}, versions
    return {writer: rows}, versions


def draw_pool(truth: Truth, rng: np.random.Generator) -> tuple[Pool, Pool | None]:
    """The student's pool (and the teacher's) for one draw, as per-task counts."""
    student, teacher = draw_sides(truth, rng)
    tasks = student.frame()
    models, versions = _writers(truth, int(tasks["n"].sum()))
    t_pool = None
    if teacher is not None:
        t_tasks = teacher.frame()
        t_rows = int(t_tasks["n"].sum())
        t_pool = _pool(t_tasks, {TEACHER: t_rows}, {None: t_rows})
    return _pool(tasks, models, versions), t_pool


#: The short answers of :attr:`Truth.answers`.
LETTERS = "ABCDEFGHIJ"


def _rows_frame(draws: Draws, truth: Truth, writer: str, rng: np.random.Generator) -> pl.DataFrame:
    """The JSON Lines rows behind one side's draws: per task its real draws (passes first,
    cut-off passes among them) and its error replies; ids per task, or one per row with the
    prompt keying the task; partial credit on a share of the failed draws."""
    total = draws.n + draws.errors
    task = np.repeat(np.arange(total.size), total)
    start = np.repeat(np.cumsum(total) - total, total)
    j = np.arange(task.size) - start  # the draw's position within its task
    n, passes = draws.n[task], draws.passes[task]
    cut_pass = draws.cut_passes[task]
    cut_fail = (draws.cut - draws.cut_passes)[task]
    error = j >= n
    passed = (j < passes) & ~error
    truncated = (passed & (j < cut_pass)) | (~passed & ~error & (j - passes < cut_fail))
    reward = passed.astype(np.float64)
    if truth.threshold is not None:
        reward = _continuous(passed, truth.threshold, rng, truth.near_threshold)
    if truth.partial_share:  # exactly that share of the failed draws, so never past 10%
        failed = np.flatnonzero(~passed & ~error)
        count = int(truth.partial_share * failed.size)
        reward[rng.choice(failed, size=count, replace=False)] = 0.5
    ids = [f"t{t:06d}" for t in task]
    rows = len(ids)
    per_row = np.full(rows, truth.row_ids)
    if truth.row_id_share:  # the first tasks' rows carry one id per row, the rest the task's
        per_row = task < int(round(truth.row_id_share * total.size))
    stale = rng.random(rows) < truth.stale_share if truth.stale_share else np.zeros(rows, bool)
    if truth.stale_share and rows and not stale.any():  # at least one row, as the truth says
        stale[rng.integers(rows)] = True
    if truth.greedy:
        completion = [
            f"answer to {t} ({'right' if p else 'wrong'})" for t, p in zip(ids, passed, strict=True)
        ]
    else:
        completion = [f"answer {t}.{i}" for t, i in zip(ids, j, strict=True)]
    if draws.repeated is not None:  # those tasks' draws are one completion, written k times
        again = draws.repeated[task]
        completion = [
            f"answer to {t} ({'right' if p else 'wrong'})" if r else c
            for t, p, r, c in zip(ids, passed, again, completion, strict=True)
        ]
    if truth.answers:  # a short answer: the task's own where the draw passes, another where not
        gold = rng.integers(truth.answers, size=total.size)[task]
        wrong = (gold + 1 + rng.integers(truth.answers - 1, size=task.size)) % truth.answers
        chosen = np.where(passed, gold, wrong)
        completion = [f"The answer is ({LETTERS[c]})." for c in chosen]
    others = np.zeros(rows, bool)
    if truth.other_share:  # another model wrote that share of the rows (at least one)
        others = rng.random(rows) < truth.other_share
        if rows and not others.any():
            others[rng.integers(rows)] = True
    said = None if truth.absent_errors else truth.placeholder or ERROR_TEXT
    written: list[str | None] = [said if e else c for c, e in zip(completion, error, strict=True)]
    return pl.DataFrame(
        {
            "id": [
                f"row-{i:08d}" if r else t
                for i, (t, r) in enumerate(zip(ids, per_row, strict=True))
            ],
            "prompt": [f"question {t}" for t in ids],
            "completion": written,
            "reward": reward,
            "finish_reason": np.where(truncated, "length", "stop"),
            "model": [
                f"{OTHER if o else writer}@{6 if s else 7}"
                for s, o in zip(stale, others, strict=True)
            ],
        }
    )


def _continuous(
    passed: np.ndarray, threshold: float, rng: np.random.Generator, near: bool = False
) -> np.ndarray:
    """Rewards in [0, 1] that pass at ``threshold``: a pass anywhere in [threshold, 1] (a
    fifth of them a rubric sum a rounding error under the threshold), a fail anywhere
    below it by more than that."""
    u = rng.random(passed.size)
    at = rng.random(passed.size) < 0.2
    good = np.where(at, threshold - 4e-16, threshold + u * (1.0 - threshold))
    bad = u * threshold * 0.999
    if near:  # a third of each at the edge: passes within the 1e-9 tolerance, fails past it
        edge = rng.random(passed.size) < 1 / 3
        good = np.where(edge, threshold - rng.choice([0.0, 5e-10], passed.size), good)
        bad = np.where(edge, threshold - rng.choice([3e-9, 1e-6], passed.size), bad)
    return np.clip(np.where(passed, good, bad), 0.0, 1.0)


def route_pools(truth: Truth, rng: np.random.Generator, options: RouteOptions) -> Route:
    """Draw one pool (and teacher) and route it as ``whilecli route`` would."""
    from whilecli.route.decide import decide

    if not truth.through_rows:
        student, teacher = draw_pool(truth, rng)
        return decide(student, dataclasses.replace(options, teacher=teacher))
    from whilecli.route import run_route

    s_draws, t_draws = draw_sides(truth, rng)
    writer = OTHER if truth.other_model else truth.model
    with tempfile.TemporaryDirectory(prefix="whilecli-sim-") as tmp:
        path = Path(tmp) / "rows.jsonl"
        _rows_frame(s_draws, truth, writer, rng).write_ndjson(path)
        teacher_path = None
        if t_draws is not None:
            teacher_path = str(Path(tmp) / "teacher.jsonl")
            plain = dataclasses.replace(
                truth, partial_share=0.0, stale_share=0.0, name="", row_id_share=0.0, other_share=0.0,
                row_ids=truth.row_ids or truth.teacher_row_ids,
            )  # fmt: skip
            t_frame = _rows_frame(t_draws, plain, TEACHER, rng)
            if truth.teacher_reward_scale != 1.0:  # graded on another scale than the student
                t_frame = t_frame.with_columns(pl.col("reward") * truth.teacher_reward_scale)
            t_frame.write_ndjson(teacher_path)
        result = run_route(
            str(path), teacher=teacher_path, options=options, pass_threshold=truth.threshold
        )
    assert isinstance(result, Route)
    return result


# --- the tally ---------------------------------------------------------------------------


@dataclass
class Tally:
    """How the route fared on some draws."""

    draws: int = 0
    firm: int = 0
    firm_wrong: int = 0
    refused: int = 0  # pools the route refused (exit 2)
    covered: dict[str, list[int]] = field(default_factory=dict)  # name -> [hits, tries]
    wrong: list[str] = field(default_factory=list)  # a few firm-and-wrong draws, described
    #: name -> [hits, tries] of the intervals whose estimate sits at 0 or 1: every task's
    #: estimate at that end, so the interval holds the end and covers a truth near it
    #: whatever its rule (the part of the coverage the pool, not the rule, decides)
    ends: dict[str, list[int]] = field(default_factory=dict)

    def cover(self, name: str, hit: bool, at_end: bool = False) -> None:
        for tally in (self.covered, self.ends) if at_end else (self.covered,):
            hits = tally.setdefault(name, [0, 0])
            hits[0] += int(hit)
            hits[1] += 1

    def add(self, other: Tally) -> None:
        self.draws += other.draws
        self.firm += other.firm
        self.firm_wrong += other.firm_wrong
        self.refused += other.refused
        for mine, theirs in ((self.covered, other.covered), (self.ends, other.end_counts())):
            for key, (hit, tries) in theirs.items():
                got = mine.setdefault(key, [0, 0])
                got[0] += hit
                got[1] += tries
        self.wrong.extend(other.wrong[: max(0, 5 - len(self.wrong))])

    def end_counts(self) -> dict[str, list[int]]:
        """:attr:`ends` (empty for tallies saved before it was kept)."""
        return getattr(self, "ends", {})

    def coverage(self) -> dict[str, float]:
        return {k: v[0] / v[1] for k, v in self.covered.items() if v[1]}

    def to_dict(self) -> dict[str, Any]:
        return {
            "draws": self.draws,
            "firm": self.firm,
            "firm_wrong": self.firm_wrong,
            "coverage": self.coverage(),
        }


#: Fewest tasks from which an interval's coverage is held to 93%-97%.
COVERAGE_FROM = 10


def _check(tally: Tally, name: str, rate: Any, truth_value: float) -> None:
    """Count whether the printed interval covers the population value. A value at 0 or 1
    (every task at the floor, a share of tasks that never split) is left out: any interval
    of a share holds its end, so it would count as covered whatever the interval's width."""
    if not 1e-12 < truth_value < 1.0 - 1e-12 and name != "paired difference":
        return
    if isinstance(rate, Rate) and rate.low is not None and rate.high is not None:
        value = rate.value if rate.value is not None else 0.5
        at_end = name != "paired difference" and not 1e-12 < value < 1.0 - 1e-12
        tally.cover(name, rate.low - 1e-12 <= truth_value <= rate.high + 1e-12, at_end)


def _intervals(route: Route, truth: Truth, options: RouteOptions) -> list[tuple[str, Any, float]]:
    """(name, printed interval, population value) for every 95% interval the route prints
    whose population value the truth fixes."""
    student = population(truth)
    out: list[tuple[str, Any, float]] = [("pass@1", route.summary["pass_at_1"], student.mean)]
    # every task has k draws: the shares' values are exact (a task whose draws are one
    # completion repeated sits at an end whatever its rate: the shares count it there)
    even = not truth.error_share and not truth.greedy_share
    band = route.checks[2].measured
    if truth.grouped and even and not truth.greedy:
        shares = grouped_shares(truth, options.band)
        out += [
            ("band pass@1", band.get("pass_at_1"), student.mean),
            ("floor share", band.get("floor_share"), shares.at_zero),
            ("split share", band.get("split_share"), shares.split),
            ("in-band share", band.get("in_band_share"), shares.in_band),
        ]
        for j, rate in route.summary["pass_at_k"].items():
            out.append(("pass@k", rate, student.pass_at(int(j))))
        for j, rate in route.summary["pass_hat_k"].items():
            out.append(("pass^k", rate, student.pass_hat(int(j))))
    cut = route.checks[0].measured.get("truncated_share")
    if truth.cut_share and not truth.greedy:
        out.append(("truncated share", cut, truth.cut_share))
    # a teacher graded on another scale under the student's threshold: its printed rates are
    # of another event than the truth's (the route says so and stays provisional)
    if truth.teacher_gap is not None and not truth.greedy and truth.teacher_reward_scale == 1.0:
        t = route.checks[3].measured
        teacher = population(truth, teacher=True)
        out += [
            ("teacher pass@1", t.get("teacher_pass_at_1"), teacher.mean),
            ("student pass@1", t.get("student_pass_at_1"), student.mean),
            ("paired difference", t.get("paired_difference"), teacher.mean - student.mean),
        ]
    return out


def judge(route: Route, verdict: Verdict) -> bool:
    """Whether a firm verdict is wrong: the truth cannot be read from the rows, or the method
    differs, or the plan leaves out what the truth requires."""
    if not verdict.measured:
        return route.route not in ("fix-reward", "single-rollout")
    if route.method in verdict.also:
        return False
    if route.method != verdict.method:
        return True
    return not verdict.requires <= set(route.plan)


def run_truth(
    truth: Truth, draws: int, seed: int = 0, options: RouteOptions | None = None
) -> Tally:
    """Draw ``draws`` pools from ``truth``, route each, and tally firm verdicts, firm-and-wrong
    ones, and the coverage of every nominal 95% interval (from :data:`COVERAGE_FROM` tasks)."""
    rng = np.random.default_rng(seed)
    tally = Tally()
    base = options or RouteOptions()
    base = dataclasses.replace(base, model=f"{truth.model}@7", teacher_vocab=1, student_vocab=1)
    verdict = truth_verdict(truth, base)
    for _ in range(draws):
        tally.draws += 1
        try:
            route = route_pools(truth, rng, base)
        except WhileError:  # refused (exit 2): no verdict, neither firm nor wrong
            tally.refused += 1
            continue
        if not route.provisional:
            tally.firm += 1
            if judge(route, verdict):
                tally.firm_wrong += 1
                if len(tally.wrong) < 5:
                    tally.wrong.append(
                        f"{truth.label()}: firm {route.method} ({route.route}), truth "
                        f"{verdict.method}; {route.why}"
                    )
        if truth.tasks >= COVERAGE_FROM:
            for name, rate, value in _intervals(route, truth, base):
                _check(tally, name, rate, value)
    return tally


# --- the grid ----------------------------------------------------------------------------

#: Task counts of the grid, and rollouts per task.
GRID_TASKS = (3, 10, 30, 100, 300, 1000, 10_000, 100_000)
GRID_K = (2, 4, 8, 16, 32)
#: Task counts from which a cell is drawn sparsely (a 20th of the draws).
SPARSE_FROM = 10_000
#: Task counts of the rows-level regions (each pool written and read back).
ROW_TASKS = (10, 30, 100, 300)


def grid(max_tasks: int = max(GRID_TASKS)) -> list[tuple[str, list[Truth]]]:
    """The regions of the design's grid, each a list of truths."""
    sizes = [n for n in GRID_TASKS if n <= max_tasks]
    small = [n for n in sizes if n <= 1000]
    rows = [n for n in ROW_TASKS if n <= max_tasks]
    two = ("low", "mid")
    regions: list[tuple[str, list[Truth]]] = []
    for mix in MIXTURES:
        regions.append((f"band {mix}", [Truth(mix, k, n) for k in GRID_K for n in sizes]))
    regions.append(("floor, under 7B", [Truth("floor", k, n, small=True) for k in (4, 8)
                                        for n in small]))  # fmt: skip
    regions.append(("k = 1", [Truth(m, 1, n) for m in ("low", "mid", "high") for n in sizes]))
    regions.append(("cut-off replies pass", [Truth(m, k, n, 0.1, True) for m in two
                                             for k in (1, 4, 8) for n in small]))  # fmt: skip
    regions.append(("cut-off replies fail", [Truth(m, k, n, 0.1, False) for m in two
                                             for k in (1, 4, 8) for n in small]))  # fmt: skip
    for gap in (0.0, 0.03, 0.1, 0.2):
        regions.append((
            f"teacher gap {gap:g}",
            [Truth(m, k, n, teacher_gap=gap) for m in two for k in (1, 4, 8) for n in small],
        ))  # fmt: skip
    regions.append(("older copy wrote 30%", [Truth(m, k, n, stale_share=0.3) for m in two
                                             for k in (4, 8) for n in small]))  # fmt: skip
    regions.append(("another model's rows", [Truth(m, k, n, other_model=True) for m in two
                                             for k in (4, 8) for n in small]))  # fmt: skip
    regions.append(("rows: error replies 20%", [Truth(m, k, n, error_share=0.2) for m in two
                                                for k in (4, 8) for n in rows]))  # fmt: skip
    regions.append(("rows: nothing recorded 20%", [
        Truth(m, k, n, error_share=0.2, absent_errors=True)
        for m in ("low", "mid", "near-saturated", "saturated") for k in (4, 8) for n in rows
    ]))  # fmt: skip
    regions.append(("rows: greedy repeats", [Truth(m, 8, n, greedy=True) for m in two
                                             for n in rows]))  # fmt: skip
    regions.append(("rows: short answers", [Truth(m, k, n, answers=a) for m in two
                                            for k, a in ((4, 4), (8, 2)) for n in rows]))  # fmt: skip
    regions.append(("rows: partial credit", [Truth(m, 8, n, partial_share=0.05) for m in two
                                             for n in rows]))  # fmt: skip
    regions.append(("rows: per-row ids", [Truth(m, k, n, row_ids=True) for m in two
                                          for k in (4, 8) for n in rows]))  # fmt: skip
    regions.append(("rows: ids, errors, versions, teacher", [
        Truth(m, 4, n, error_share=0.1, row_ids=True, stale_share=0.2, teacher_gap=0.2)
        for m in two for n in rows
    ]))  # fmt: skip
    regions.append(("another model's floor or ceiling", [
        Truth(m, k, n, other_model=True) for m in ("floor", "saturated") for k in (4, 8)
        for n in small
    ]))  # fmt: skip
    regions.append(("rows: placeholder errors 20%", [
        Truth(m, k, n, error_share=0.2, placeholder="ERROR")
        for m in ("low", "mid", "near-saturated", "saturated") for k in (4, 8) for n in rows
    ]))  # fmt: skip
    return regions


def draws_for(truth: Truth, draws: int) -> int:
    """Draws of one cell: all of them, a 20th at the sparse large end, a quarter for rows."""
    if truth.tasks >= SPARSE_FROM:
        return max(2, draws // 20)
    if truth.through_rows:
        return max(2, draws // 4)
    return draws


def run_region(
    truths: list[Truth],
    draws: int,
    seed: int = 0,
    progress: Callable[[Truth, Tally], None] | None = None,
) -> Tally:
    """All the cells of one region, each with its own seed derived from ``seed``."""
    total = Tally()
    for i, truth in enumerate(truths):
        tally = run_truth(truth, draws_for(truth, draws), seed=seed * 100_003 + i)
        total.add(tally)
        if progress is not None:
            progress(truth, tally)
    return total


# --- off the grid ------------------------------------------------------------------------

#: Task counts just under and just over the firm limit of 30, and a few larger.
NEAR_FIRM = (15, 20, 25, 30, 35, 40)
#: Model names around the 7B edge of OPSD, with their true sizes in billions.
NEAR_7B = (
    ("org/student-6.7B", 6.7),
    ("deepseek-ai/deepseek-coder-6.7b-base", 6.7),
    ("org/student-7B", 7.0),
    ("org/student-7b-instruct", 7.0),
    ("meta-llama/Llama-3.1-8B", 8.0),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", 46.7),
    ("Qwen/Qwen2.5-Coder-1.5B", 1.5),
)

#: More spellings of model names a practitioner passes, with their nominal sizes: the 7B
#: class written many ways, sizes in M, mixtures of experts, quantized and long-context
#: variants, and names that state no size (the truth reads the size, the route the name).
NAMES_MORE = (
    ("Qwen/Qwen2.5-7B-Instruct", 7.0),
    ("meta-llama/Llama-2-7b-hf", 7.0),
    ("EleutherAI/pythia-6.9b", 6.9),
    ("01-ai/Yi-1.5-6B", 6.0),
    ("google/gemma-2-9b-it", 9.0),
    ("HuggingFaceTB/SmolLM2-360M-Instruct", 0.36),
    ("Qwen/Qwen3-30B-A3B", 30.0),
    ("unsloth/Qwen2.5-7B-bnb-4bit", 7.0),
    ("stabilityai/stablelm-2-1_6b", 1.6),
    ("microsoft/Phi-3-mini-4k-instruct", 3.8),
    ("microsoft/phi-4", 14.7),
)
#: Pools that mix tasks that never pass (or always pass) with split tasks, at shares near
#: the table's thresholds: half the tasks at 0 (OPSD joins the plan), a split share near 0.3
#: at k = 4 (a thin band), pass@1 near 0.9 (GroupwiseGrading joins the plan).
NEAR_THRESHOLDS: dict[str, Mixture] = {
    "floor-45": ((0.45, 0.0, None), (0.55, 2.0, 2.0)),
    "floor-55": ((0.55, 0.0, None), (0.45, 2.0, 2.0)),
    "floor-58": ((0.58, 0.0, None), (0.42, 2.0, 2.0)),
    "floor-95": ((0.95, 0.0, None), (0.05, 2.0, 2.0)),
    "top-80": ((0.8, 1.0, None), (0.2, 2.0, 2.0)),
    "floor-top": ((0.45, 0.0, None), (0.45, 1.0, None), (0.1, 2.0, 2.0)),
}


def offgrid() -> list[tuple[str, list[Truth]]]:
    """Regions just outside the grid: the k it skips and unequal k per task, shapes between
    its bands, teacher gaps and coverage near their thresholds, rare cut-off passes, version
    mixes, model sizes near 7B, mixed ids, many error replies, continuous rewards with a
    threshold, and pools just under and over the firm limit of 30 tasks; and further out, 5 to
    30 tasks at k from 1 to 32 with skewed rates or mostly floor and saturated tasks, cut-off
    replies on half to four fifths of the draws, and teachers run on 30% to 90% of the tasks."""
    mids = ("low", "mid", "high", "u-shaped")
    sizes = (*NEAR_FIRM, 100)
    regions: list[tuple[str, list[Truth]]] = []
    regions.append(("off: k 2, 3, 5, 12, 64", [Truth(m, k, n) for m in mids
                                               for k in (2, 3, 5, 12, 64) for n in (15, 25, 35, 100)]))  # fmt: skip
    unequal = (((1, 0.3), (16, 0.7)), ((1, 0.5), (2, 0.25), (4, 0.25)), ((2, 0.5), (16, 0.5)),
               ((1, 0.8), (8, 0.2)), ((3, 0.5), (5, 0.5)))  # fmt: skip
    regions.append(("off: unequal k", [Truth(m, 0, n, k_mix=km) for m in ("low", "mid", "high")
                                       for km in unequal for n in (20, 35, 100)]))  # fmt: skip
    regions.append(("off: between bands", [Truth(m, k, n) for m in BETWEEN for k in (3, 5, 12)
                                           for n in (20, 35, 100, 400)]))  # fmt: skip
    regions.append(("off: near floor and ceiling, many tasks",
                    [Truth(m, k, n) for m in ("almost-floor", "almost-saturated", "edge-floor",
                                                "edge-saturated")
                     for k in (2, 3) for n in (400, 600, 1000, 3000)]))  # fmt: skip
    regions.append(("off: teacher gap 0.04-0.07", [
        Truth(m, k, n, teacher_gap=g) for g in (0.04, 0.05, 0.06, 0.07) for m in ("low", "mid")
        for k in (1, 3, 5) for n in (25, 35, 100, 400)]))  # fmt: skip
    regions.append(("off: teacher coverage near half", [
        Truth(m, k, n, teacher_gap=0.2, teacher_coverage=c) for c in (0.45, 0.5, 0.55)
        for m in ("low", "mid") for k in (1, 4) for n in (20, 31, 35, 100)]))  # fmt: skip
    regions.append(("off: rare cut-off passes", [
        Truth(m, k, n, c, cut_pass_scale=s) for c in (0.05, 0.2, 0.4) for s in (0.02, 0.1, 0.3)
        for m in ("mid", "high") for k in (1, 4) for n in (20, 35, 100, 400)]))  # fmt: skip
    regions.append(("off: cut-off 5-40%, none pass", [
        Truth(m, k, n, c) for c in (0.05, 0.2, 0.4) for m in ("mid", "high")
        for k in (3, 5) for n in sizes]))  # fmt: skip
    regions.append(("off: older copy 10%, 60%", [
        Truth(m, k, n, stale_share=s) for s in (0.1, 0.6) for m in ("low", "mid")
        for k in (3, 5) for n in sizes]))  # fmt: skip
    regions.append(("off: model size near 7B", [
        Truth(m, k, n, name=name, size_b=b) for name, b in NEAR_7B
        for m in ("floor", "half-floor", "sparse-low") for k in (3, 5) for n in (35, 400)]))  # fmt: skip
    regions.append(("off: another model, near 30 tasks", [
        Truth(m, k, n, other_model=True) for m in ("low", "mid") for k in (3, 5)
        for n in NEAR_FIRM]))  # fmt: skip
    regions.append(("rows off: mixed ids", [
        Truth(m, k, n, row_id_share=s) for s in (0.3, 0.7) for m in ("low", "mid")
        for k in (3, 5) for n in (20, 35, 100)]))  # fmt: skip
    regions.append(("rows off: error replies 10-50%", [
        Truth(m, k, n, error_share=e) for e in (0.1, 0.3, 0.45, 0.5) for m in ("low", "mid")
        for k in (3, 5) for n in (20, 35, 100)]))  # fmt: skip
    regions.append(("rows off: continuous rewards", [
        Truth(m, k, n, threshold=t) for t in (0.3, 0.5, 0.7, 0.9) for m in ("low", "mid")
        for k in (3, 5) for n in (20, 35, 100)]))  # fmt: skip
    regions.append(("rows off: k 2, 3, 5, 12, unequal", [
        Truth(m, k, n, rows=True) for m in ("mid", "half-floor") for k in (2, 3, 5, 12)
        for n in (20, 35, 100)] + [Truth("mid", 0, n, k_mix=km, rows=True)
                                   for km in unequal for n in (20, 35, 100)]))  # fmt: skip
    wide = ("low", "mid", "high", "skewed-low", "skewed-high", "ends-and-mid",
            "floor-and-saturated")  # fmt: skip
    regions.append(("off: few tasks, k 1-32", [Truth(m, k, n) for m in wide
                                               for k in (1, 2, 3, 5, 16, 32)
                                               for n in (5, 10, 20, 30)]))  # fmt: skip
    regions.append(("off: cut-off 50-80%", [
        Truth(m, k, n, c, cut_pass_scale=s) for c in (0.5, 0.8) for s in (0.0, 0.1, 1.0)
        for m in ("mid", "skewed-high") for k in (1, 4) for n in (10, 30, 100)]))  # fmt: skip
    regions.append(("off: teacher on part of the tasks", [
        Truth(m, k, n, teacher_gap=g, teacher_coverage=c) for c in (0.3, 0.7, 0.9)
        for g in (0.0, 0.1, 0.2) for m in ("low", "skewed-low") for k in (1, 4)
        for n in (10, 30, 100)]))  # fmt: skip
    regions.append(("off: teacher cut off near 5%", [
        Truth(m, k, n, teacher_gap=0.2, teacher_cut_share=c)
        for c in (0.02, 0.035, 0.045, 0.05, 0.055, 0.065, 0.1) for m in ("low", "mid") for k in (1, 4) for n in (35, 100, 400, 1000)]))  # fmt: skip
    regions.append(("off: teacher at another k", [
        Truth(m, k, n, teacher_gap=g, teacher_k=tk) for k, tk in ((1, 8), (4, 1), (8, 2), (2, 16))
        for g in (0.0, 0.1, 0.2) for m in ("low", "mid") for n in (35, 100, 400)]))  # fmt: skip
    regions.append(("off: teacher on 20-80% of the tasks", [
        Truth(m, k, n, teacher_gap=g, teacher_coverage=c) for c in (0.2, 0.4, 0.6, 0.8)
        for g in (0.1, 0.2) for m in ("low", "mid") for k in (1, 4)
        for n in (35, 100, 400)]))  # fmt: skip
    regions.append(("off: floor and split tasks mixed", [
        Truth(m, k, n) for m in NEAR_THRESHOLDS for k in (2, 4, 8)
        for n in (35, 100, 400)]))  # fmt: skip
    regions.append(("off: older copy under 2%", [
        Truth(m, k, n, stale_share=s) for s in (0.002, 0.01, 0.02) for m in ("low", "mid")
        for k in (3, 5) for n in (30, 35, 100, 400)]))  # fmt: skip
    regions.append(("off: k = 1 near 30 tasks and many", [
        Truth(m, 1, n) for m in ("low", "mid", "high", "skewed-low", "floor-and-saturated")
        for n in (25, 29, 30, 31, 35, 40, 1000, 3000)]))  # fmt: skip
    regions.append(("off: more model names, floor pools", [
        Truth(m, k, n, name=name, size_b=b) for name, b in NAMES_MORE
        for m in ("floor", "floor-95") for k in (4, 8) for n in (35, 400, 1000)]))  # fmt: skip
    regions.append(("rows off: teacher ids per row, teacher errors", [
        Truth(m, k, n, teacher_gap=g, teacher_row_ids=r, teacher_error_share=e)
        for r, e in ((True, 0.0), (False, 0.3), (True, 0.3)) for g in (0.0, 0.2)
        for m in ("low", "mid") for k in (1, 4) for n in (35, 100)]))  # fmt: skip
    regions.append(("rows off: rewards within 1e-9 of the threshold", [
        Truth(m, k, n, threshold=t, near_threshold=True) for t in (0.5, 0.9)
        for m in ("low", "mid") for k in (1, 4) for n in (35, 100)]))  # fmt: skip
    regions.append(("off: teacher cut-off replies that pass", [
        Truth(m, k, n, teacher_gap=0.2, teacher_cut_share=c, teacher_cut_pass_scale=s)
        for c in (0.01, 0.02, 0.03) for s in (0.1, 0.3, 1.0) for m in ("low", "mid")
        for k in (1, 4) for n in (100, 400, 1000)]))  # fmt: skip
    regions.append(("rows off: errors near half", [
        Truth(m, k, n, error_share=e) for e in (0.48, 0.49, 0.5, 0.51) for m in ("low", "mid")
        for k in (2, 3, 4) for n in (35, 100)]))  # fmt: skip
    regions.append(("off: k 128 and 256, few tasks", [
        Truth(m, k, n) for m in ("low", "mid", "high", "skewed-high", "floor-and-saturated")
        for k in (128, 256) for n in (10, 20, 30, 40)]))  # fmt: skip
    one_to_64 = (((1, 0.2), (2, 0.2), (8, 0.3), (64, 0.3)), ((1, 0.5), (64, 0.5)),
                 ((2, 0.7), (32, 0.3)))  # fmt: skip
    regions.append(("off: k 1 to 64 with cut-off replies", [
        Truth(m, 0, n, c, k_mix=km, cut_pass_scale=s) for m in ("mid", "high") for km in one_to_64
        for c in (0.1, 0.3) for s in (0.0, 0.1, 1.0) for n in (20, 40, 100)]))  # fmt: skip
    regions.append(("off: teacher at another k on part of the tasks", [
        Truth(m, k, n, teacher_gap=g, teacher_k=tk, teacher_coverage=c) for m in ("low", "mid")
        for k, tk in ((1, 8), (4, 1), (8, 2), (2, 16), (16, 4)) for g in (0.0, 0.1, 0.2)
        for c in (0.5, 0.7) for n in (35, 100)]))  # fmt: skip
    limits = (Truth("low", 1, 0), Truth("mid", 1, 0, teacher_gap=0.2), Truth("floor", 4, 0),
              Truth("saturated", 4, 0), Truth("mid", 4, 0, teacher_gap=0.2), Truth("mid", 2, 0),
              Truth("mid", 4, 0, other_model=True), Truth("mid", 4, 0, stale_share=0.1),
              Truth("floor-55", 4, 0), Truth("top-80", 4, 0))  # fmt: skip
    regions.append(("off: 30-60 tasks at every check's firm limit", [
        dataclasses.replace(t, tasks=n) for t in limits
        for n in (30, 35, 40, 45, 50, 55, 60)]))  # fmt: skip
    regions.append(("rows off: some tasks repeat one draw", [
        Truth(m, k, n, greedy_share=g) for m in ("edge-floor", "edge-saturated", "almost-floor")
        for k in (2, 4) for g in (0.2, 0.45) for n in (600, 1500)] + [
        Truth(m, k, n, greedy_share=g) for m in ("mid", "half-floor", "low") for k in (4, 8)
        for g in (0.2, 0.45) for n in (35, 100)]))  # fmt: skip
    regions.append(("rows off: another model on a few rows", [
        Truth(m, k, n, teacher_gap=g, stale_share=s, other_share=o) for m in ("low", "mid")
        for k in (1, 4) for o in (0.01, 0.05) for n in (35, 100)
        for g, s in ((None, 0.0), (0.2, 0.0), (None, 0.1))]))  # fmt: skip
    regions.append(("rows off: partial credit beside errors and cut-off replies", [
        Truth(m, k, n, c, partial_share=p, error_share=e) for m in ("low", "mid") for k in (4, 8)
        for c in (0.0, 0.1) for p in (0.05, 0.09) for e in (0.1, 0.3)
        for n in (35, 100)]))  # fmt: skip
    regions.append(("rows off: teacher on another reward scale", [
        Truth(m, k, n, threshold=t, teacher_gap=g, teacher_reward_scale=sc)
        for sc in (10.0, 100.0, 0.1, 0.6, 0.8, 1.0) for t in (0.5, 0.7) for g in (0.0, 0.2) for m in ("low", "mid")
        for k in (1, 4) for n in (35, 100)]))  # fmt: skip
    return regions
