"""The statistics of ``while route``: pass@1, pass@k, pass^k, shares and the held-out size.

One machinery serves ``route``, ``diff``, ``size`` and ``check`` (DESIGN section 2,
"Statistics"): a mean over TASKS, never rows (a task's rollouts are correlated), whose 95%
interval carries both sources of noise, the choice of tasks and the k draws within each
(:func:`task_interval`). The per-task values take few distinct values (a task with ``c``
passes in ``n`` rollouts has rate ``c/n``), so every sum runs over the distinct cells with
their task counts, at a cost that does not grow with the number of tasks.

References:
- Clustered standard errors for evals (Miller 2024, arXiv:2411.00640); small-n intervals
  that hold their coverage (Bowyer, Aitchison and Ivanova 2025, arXiv:2503.01747); Kish's
  design effect for the effective sample of a clustered proportion.
- pass@k = 1 − C(n−c, k)/C(n, k), the unbiased estimator of Chen et al. 2021
  (arXiv:2107.03374, eq. 1); pass^k = C(c, k)/C(n, k) (Yao et al. 2024, τ-bench,
  arXiv:2406.12045).
- Wilson score interval (Wilson 1927), z = 1.96.
- The chance that k fresh rollouts of a task disagree: E[1 − p^k − (1−p)^k] under each
  task's posterior with a Beta prior fitted to the pool (empirical Bayes; DAPO's "dynamic
  sampling" signal, Yu et al. 2025, arXiv:2503.14476).
- Held-out size for a two-arm comparison of pass rates: n = ⌈((z₁₋α/₂ + z_power)·sd/δ)²⌉.

The binomial ratios and beta moments are exact finite products (k ≤ 32 factors), and the
normal and t quantiles are written out: ``while route`` then starts without loading
``scipy.stats`` (about 0.9 s of imports). The tests check every one of them against scipy.
A route's statistics are sums over a pool's few distinct cells, computed in plain Python
(the prior's grid in one polars query): routing a file loads no numpy (0.1–0.2 s of imports).
numpy is loaded for the array functions the paired comparison and the simulator call, and for
pools whose cells make the work large (tasks of hundreds of rollouts each); where it is loaded
already (a simulation routing thousands of pools), the same sums run in it, faster.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import sys
import weakref
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

import polars as pl

from whilecli.route.model import Rate

if TYPE_CHECKING:
    from typing import TypeAlias

    import numpy as np

    #: Numbers per cell: a list, or a numpy array from an array function.
    Numbers: TypeAlias = Sequence[float] | np.ndarray

#: Distinct ``(passes, n)`` cells and the tasks in each (:func:`cell_arrays`).
Cells = tuple["np.ndarray", "np.ndarray", "np.ndarray"]
#: The same cells as tuples (:func:`cell_lists`): what a route sums over.
CellLists = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]

#: The tolerance of every documented boundary (a rubric sum of 0.9999999999999999 is 1, a gap
#: of exactly 0.05 is 0.05): a value within it of the boundary counts as on it.
TOL = 1e-9
#: Fewest tasks for which an interval is given.
MIN_CI_TASKS = 3
#: Bootstrap resamples by default.
BOOTSTRAP_DRAWS = 2000
#: z for a two-sided 95% interval, as the reference prints it.
Z95 = 1.96
#: Most multinomial cells drawn at once (draws × cells) to bound memory.
_CHUNK_CELLS = 4_000_000


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        for num in (
            m * (b - m) * x / ((a + m2 - 1) * (a + m2)),
            -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _betai(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta I_x(a, b) (Numerical Recipes 6.4)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """Student's t distribution function with ``df`` (> 0, not only whole) degrees of freedom."""
    tail = 0.5 * _betai(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def _t_pdf(t: float, df: float) -> float:
    """Student's t density."""
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log_c - (df + 1) / 2 * math.log1p(t * t / df))


@functools.lru_cache(maxsize=4096)
def t_quantile(q: float, df: float) -> float:
    """The ``q`` quantile of Student's t (``scipy.stats.t.ppf``; written out so routing never
    imports ``scipy.stats``: the tests hold it to scipy). Newton's method on :func:`t_cdf`
    from the Cornish-Fisher start, kept inside a bracket that bisection (or doubling, while
    the bracket has no top) takes over from whenever a Newton step would leave it: a few
    evaluations of the distribution function, not fifty."""
    if math.isinf(df) or df > 1e7:
        return NormalDist().inv_cdf(q)
    if q == 0.5:
        return 0.0
    sign = 1.0 if q > 0.5 else -1.0
    upper = q if q > 0.5 else 1.0 - q
    z = NormalDist().inv_cdf(upper)
    x = z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df * df)
    lo, hi = 0.0, math.inf
    for _ in range(400):
        err = t_cdf(x, df) - upper
        if err == 0.0:
            break
        if err < 0:
            lo = x
        else:
            hi = x
        nxt = x - err / max(_t_pdf(x, df), 1e-300)
        if not lo < nxt < hi:
            nxt = 2.0 * x if math.isinf(hi) else 0.5 * (lo + hi)
        done = abs(nxt - x) < 1e-13 * max(1.0, abs(x))
        x = nxt
        if done or hi - lo < 1e-13 * max(1.0, lo):
            break
    return sign * x


def draw_floor(passes: np.ndarray, n: np.ndarray, prior: BetaPrior | None = None) -> np.ndarray:
    """Per task, the variance its k draws alone give its observed rate: p̃(1−p̃)/n with p̃
    the task's posterior mean (c + a)/(n + a + b) under a Beta(a, b) prior over the tasks'
    rates. ``prior`` None is the uniform Beta(1, 1): one pass and one fail added, as
    Agresti and Caffo do, so a task seen at 0 or at 1 still carries its draws' noise; the
    pool's fitted prior (:func:`fit_beta`) puts a task seen at 0 in a pool whose tasks
    mostly never pass near 0, as the pool says it is, not at 1/(n + 2). This floors the
    spread of the task rates: the tasks' rates may agree by chance, their draws still vary.
    A task of one row has no floor: its one draw is all the spread it has, and the tasks'
    spread holds it."""
    import numpy as np

    a, b = (1.0, 1.0) if prior is None else (prior.a, prior.b)
    c = np.asarray(passes, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    smooth = (c + a) / (n + a + b)
    return np.where(n >= 2, smooth * (1.0 - smooth) / np.maximum(n, 1.0), 0.0)


def paired_floor(passes: np.ndarray, n: np.ndarray, tasks: np.ndarray) -> np.ndarray:
    """Per cell of tasks (``tasks`` of them seen at ``passes`` of ``n``), the variance one
    run's draws give a task's observed rate in a paired comparison: E[p(1−p) | c of n]/n
    under the pool's fitted prior Beta(a, b) (:func:`fit_beta` of these cells), the
    posterior's expected Bernoulli variance, m(1−m)·(A + n)/(A + n + 1)/n with
    m = (c + a)/(n + A), A = a + b (Bayes' estimate of p(1−p), which c(n−c)/(n(n−1)) leaves
    undefined at one draw). A pool whose tasks mostly sit at 0 or 1 puts a task seen there
    near it, as the pool says it is.

    Unlike pass@1's :func:`draw_floor`, a task of one row is floored too: two runs that
    agree on every task still differ by their draws. Where every task has one row the
    prior's spread cannot be told from the rows (one draw a task shows the pool's mean
    alone), and the floor is the bound it cannot exceed, μ(1−μ) at the pool's mean μ: the
    design formula's draws' noise (DESIGN section 2, ``holdout_size``)."""
    import numpy as np

    c = np.asarray(passes, dtype=np.float64)
    k = np.asarray(n, dtype=np.float64)
    m_tasks = np.asarray(tasks, dtype=np.float64)
    if not c.size:
        return np.zeros(0, dtype=np.float64)
    if float(k.max()) < 2:
        mean = float(np.dot(c / np.maximum(k, 1.0), m_tasks) / max(float(m_tasks.sum()), 1.0))
        return np.full(c.shape, mean * (1.0 - mean) / np.maximum(k, 1.0))
    prior = fit_beta(c, k, m_tasks)
    whole = prior.a + prior.b
    m = (c + prior.a) / (k + whole)
    return m * (1.0 - m) * (whole + k) / (whole + k + 1.0) / np.maximum(k, 1.0)


def _draw_floor_one(c: float, n: float, a: float, b: float) -> float:
    """:func:`draw_floor` of one cell under Beta(a, b)."""
    if n < 2:
        return 0.0
    smooth = (c + a) / (n + a + b)
    return smooth * (1.0 - smooth) / max(n, 1.0)


def _wilson_bounds(p: float, n: float, z: float) -> tuple[float, float]:
    d = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(max(p * (1 - p) / n + z * z / (4 * n * n), 0.0)) / d
    return max(0.0, centre - half), min(1.0, centre + half)


def gamma_p(a: float, x: float) -> float:
    """The regularized lower incomplete gamma P(a, x) (Numerical Recipes 6.2: the series
    under a + 1, the continued fraction above; ``scipy.special.gammainc``)."""
    if x <= 0.0:
        return 0.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1.0:
        term = total = 1.0 / a
        ap = a
        for _ in range(1000):
            ap += 1.0
            term *= x / ap
            total += term
            if abs(term) < abs(total) * 1e-16:
                break
        return min(1.0, total * math.exp(log_front))
    tiny = 1e-300
    b = x + 1.0 - a
    c, d = 1.0 / tiny, 1.0 / b
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = b + an / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return max(0.0, 1.0 - math.exp(log_front) * h)


@functools.lru_cache(maxsize=4096)
def gamma_quantile(a: float, q: float) -> float:
    """The ``q`` quantile of Gamma(a, 1) (``scipy.stats.gamma.ppf``): bisection on
    :func:`gamma_p` in log x, to a relative 1e-12. Half the χ² quantile on 2a degrees of
    freedom: the exact Poisson limit of a count a (Garwood 1936)."""
    lo, hi = 0.0, max(1.0, 2.0 * a)
    while gamma_p(a, hi) < q:
        lo, hi = hi, 2.0 * hi
    if lo == 0.0:  # the quantile lies under hi: halve down to a bracket
        lo = hi / 2.0
        while lo > 1e-300 and gamma_p(a, lo) > q:
            hi, lo = lo, lo / 2.0
    for _ in range(200):
        mid = math.sqrt(lo * hi) if lo > 0.0 else hi / 2.0
        if gamma_p(a, mid) < q:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return 0.5 * (lo + hi)


#: The most successes (or failures) at which :func:`modified_wilson` takes the Poisson bound.
#: Wilson's lower bound at x successes, (x + z²/2 − z√(x + z²/4))/n for large n, leaves a
#: truth just under it covered with the chance of fewer than x: 0.838, 0.895, 0.916 and
#: 0.927 at x = 1 to 4, 0.934 and rising from 5 on. Brown, Cai and DasGupta (2001) take 2 or
#: 3 (up to 100 trials); the route's rates span many more tasks, whose dip is the limit.
FEW_COUNTS = 4.0


#: How many tasks' worth of spread the pool's fitted prior adds to s² where a statistic's
#: spread lies in a tail few tasks reach (:func:`task_interval`'s ``prior_var``): pass@4 to
#: pass@32 over 10 to 40 tasks of 128 draws covered 0.53 to 0.87 with none (the tail tasks
#: absent from the sample), 0.91 to 0.97 with one, and up to 0.99 with two.
PRIOR_TASKS = 1.0


def modified_wilson(p: float, n: float, z: float) -> tuple[float, float]:
    """Wilson's interval of a share p over n (possibly effective, not whole) trials, with the
    bound next to a count of 1 to 4 taken from the Poisson limit of that count: the modified
    Wilson interval of Brown, Cai and DasGupta (2001, Statistical Science 16(2), section
    4.1.1). Wilson's lower bound at one success lies near 0.17/n, so its coverage dips to
    about 84% for a true share just under it (a pass^4 of 0.005 over 35 tasks); the lower
    bound at x = np successes, x ≤ :data:`FEW_COUNTS`, is ½χ²_{2x}(α)/n, the Gamma(x)
    quantile at the interval's whole error α = 2Φ(−z) over n: the rate at which x or more
    successes have chance α, so a true share just under it is covered 1 − α of the time (the
    chance of fewer). The upper bound at as few failures likewise, each on the rarer side only
    (three failures of four tasks are no Poisson count). A bound is never moved inward."""
    low, high = _wilson_bounds(p, n, z)
    tail = 2.0 * NormalDist().cdf(-z)
    few = FEW_COUNTS
    x, y = p * n, (1.0 - p) * n
    if 0.0 < x <= few + TOL and x < y:  # the rarer end only: a few of many, not of four
        low = min(low, gamma_quantile(x, tail) / n)
    if 0.0 < y <= few + TOL and y < x:
        high = max(high, 1.0 - gamma_quantile(y, tail) / n)
    return low, high


def task_interval(
    values: Numbers,
    counts: Numbers,
    floor: Numbers,
    n_rows: int,
    *,
    signed: bool = False,
    prior_var: float = 0.0,
) -> Rate:
    """A mean over tasks with the 95% interval of the one machinery every command shares.

    ``values[j]`` is the statistic of the ``counts[j]`` tasks of cell ``j`` (a pass rate, a
    pass@k estimate, or a paired difference) and ``floor[j]`` the variance their draws alone
    give it (:func:`draw_floor`). Over N tasks:

    - the variance of the mean is V = max(s², mean floor)/N, s² the sample variance of the
      task values: the task sample and the k draws together (clustered errors, Miller 2024,
      arXiv:2411.00640), never less than the draws alone allow;
    - where a statistic's spread over tasks lies in a tail few tasks reach (pass@32 over 10
      tasks: a task that passes one draw in fifty is absent from most samples, and s² near
      0 says nothing of it), ``prior_var``, its variance under the pool's fitted prior,
      enters s² as :data:`PRIOR_TASKS` tasks more: s² = (Σ(v − m)² + ν₀·prior_var)/(N − 1
      + ν₀), the conjugate scaled-inverse-χ² prior on a variance (Gelman et al. 2013,
      Bayesian Data Analysis, section 3.3), which N tasks outweigh as they grow;
    - a rate in [0, 1] gets a Wilson interval over the effective sample n_eff = m(1−m)/V
      (Kish's design effect), held inside [N tasks, rows]: one row per task at most, one
      task per row at least, and no width from nowhere when the tasks agree by chance;
      the bound beside an effective count of 1 to 4 successes (or failures) is their
      Poisson bound (:func:`modified_wilson`, Brown, Cai and DasGupta 2001), where
      Wilson's dips; a signed difference gets m ± q·√V, clipped to [−1, 1];
    - q is Student's t at the Satterthwaite degrees of freedom of s², 2N/(kurtosis − 1),
      within [1, N − 1] (a few tasks that carry all the spread, as a mostly-floor pool's,
      leave few degrees of freedom: the small-n correction Bowyer, Aitchison and Ivanova
      2025, arXiv:2503.01747, ask for), and z where V is a bound rather than an estimate.

    No interval under :data:`MIN_CI_TASKS` tasks. Deterministic: the same rows always print
    the same interval.
    """
    # the sums are exactly rounded (fsum): no order of the cells changes them
    cells = [(float(v), int(m), float(f)) for v, m, f in zip(values, counts, floor, strict=True)]
    n_tasks = sum(m for _, m, _ in cells)
    if n_tasks == 0:
        return Rate(None, None, None, 0, n_rows, "none", "no tasks")
    mean = math.fsum(v * m for v, m, _ in cells) / n_tasks
    if n_tasks < MIN_CI_TASKS:
        why = f"{n_tasks} task{'s' if n_tasks != 1 else ''}: an interval needs {MIN_CI_TASKS}"
        return Rate(mean, None, None, n_tasks, n_rows, "none", why)
    devs = [(v - mean, m) for v, m, _ in cells]
    ss = math.fsum(m * (d * d) for d, m in devs)
    if prior_var > 0.0:
        s2 = (ss + PRIOR_TASKS * prior_var) / (n_tasks - 1 + PRIOR_TASKS)
    else:
        s2 = ss / (n_tasks - 1)
    f = math.fsum(m * fl for _, m, fl in cells) / n_tasks
    var = max(s2, f) / n_tasks
    estimated = s2 >= f and ss > 0
    z = Z95
    if estimated:
        kurt = n_tasks * math.fsum(m * d**4 for d, m in devs) / (ss * ss)
        df = (
            n_tasks - 1.0 if kurt <= 1.0 else min(n_tasks - 1.0, max(1.0, 2 * n_tasks / (kurt - 1)))
        )
        z = t_quantile(0.975, df)
    if signed:
        half = z * math.sqrt(var)
        low, high = max(-1.0, mean - half), min(1.0, mean + half)
        return Rate(mean, low, high, n_tasks, n_rows, "clustered")
    spread = mean * (1.0 - mean)
    if spread <= 0.0 or var <= 0.0:
        n_eff, z = float(n_tasks), Z95  # every task at one end: no spread to estimate
    else:
        raw = spread / var
        n_eff = min(max(raw, float(n_tasks)), float(max(n_rows, n_tasks)))
        if n_eff != raw:
            z = Z95  # held at a bound: the bound is known, not estimated
    low, high = modified_wilson(mean, n_eff, z)
    return Rate(mean, min(low, mean), max(high, mean), n_tasks, n_rows, "clustered")


def rate_from_cells(
    values: Numbers,
    counts: Numbers,
    n_rows: int,
    *,
    draws: int = BOOTSTRAP_DRAWS,
    seed: int = 0,
    floor: Numbers | None = None,
    signed: bool = False,
    prior_var: float = 0.0,
) -> Rate:
    """A mean over tasks with its interval (:func:`task_interval`; none under
    :data:`MIN_CI_TASKS` tasks). ``draws`` and ``seed`` are kept for callers that pass them:
    the interval is computed, not resampled."""
    del draws, seed
    floor = [0.0] * len(values) if floor is None else floor
    return task_interval(values, counts, floor, n_rows, signed=signed, prior_var=prior_var)


#: The last frame :func:`cell_lists` grouped and its cells: a route asks for the cells of one
#: pool some ten times, and a million tasks take milliseconds each.
_LAST_CELLS: list[tuple[weakref.ref[pl.DataFrame], int, CellLists]] = []


def cell_lists(tasks: pl.DataFrame) -> CellLists:
    """Distinct ``(passes, n)`` cells of a per-task frame as tuples ``(passes, n, tasks)``,
    sorted by ``n`` then ``passes``: the one grouping every statistic sums over (a route on a
    pool is many small sums over few cells, and a polars query each would dominate them).
    The cells of the last frame asked for are kept and handed out again."""
    if _LAST_CELLS:
        ref, height, found = _LAST_CELLS[0]
        if ref() is tasks and height == tasks.height:
            return found
    out = _cell_lists(tasks)
    _LAST_CELLS[:] = [(weakref.ref(tasks), tasks.height, out)]
    return out


def _cell_lists(tasks: pl.DataFrame) -> CellLists:
    if tasks.height == 0:
        return (), (), ()
    packed = _packed_cells(tasks)
    if packed is not None:
        return packed
    grid = (
        tasks.select(pl.col("passes").cast(pl.Int64), pl.col("n").cast(pl.Int64))
        .group_by("n", "passes")
        .agg(pl.len().cast(pl.Int64).alias("tasks"))
        .sort("n", "passes")
    )
    return (
        tuple(grid["passes"].to_list()),
        tuple(grid["n"].to_list()),
        tuple(grid["tasks"].to_list()),
    )


def _packed_cells(tasks: pl.DataFrame) -> CellLists | None:
    """:func:`_cell_lists` by one integer per task, ``n·(P + 1) + passes`` (P: the most
    passes of a task), counted: a one-column count costs a fifth of a two-column group-by,
    and the packed order is the order by ``n`` then ``passes``. None where the packing could
    not hold every pair apart: a null or negative count, or numbers too large for 63 bits."""
    n, passes = tasks.get_column("n"), tasks.get_column("passes")
    if n.null_count() or passes.null_count():
        return None
    low = min(int(n.min()), int(passes.min()))  # type: ignore[arg-type]
    top = int(passes.max()) + 1  # type: ignore[arg-type]
    if low < 0 or (int(n.max()) + 1) * top >= 1 << 63:  # type: ignore[arg-type]
        return None
    key = n.cast(pl.Int64) * top + passes.cast(pl.Int64)
    counted = key.value_counts(sort=False, name="tasks").sort(key.name)
    packed = counted.get_column(key.name)
    return (
        tuple((packed % top).to_list()),
        tuple((packed // top).to_list()),
        tuple(counted.get_column("tasks").cast(pl.Int64).to_list()),
    )


def cell_arrays(tasks: pl.DataFrame) -> Cells:
    """:func:`cell_lists` as read-only int64 arrays, for the array functions."""
    import numpy as np

    out = tuple(np.array(x, dtype=np.int64) for x in cell_lists(tasks))
    for array in out:
        array.flags.writeable = False
    return out[0], out[1], out[2]


def cells(tasks: pl.DataFrame) -> pl.DataFrame:
    """Distinct ``(passes, n)`` cells of a per-task frame with the number of tasks in each."""
    c, n, counts = cell_lists(tasks)
    return pl.DataFrame(
        {"passes": c, "n": n, "tasks": counts},
        schema={"passes": pl.Int64, "n": pl.Int64, "tasks": pl.Int64},
    )


def pass_at_1(
    tasks: pl.DataFrame,
    *,
    draws: int = BOOTSTRAP_DRAWS,
    seed: int = 0,
    prior: BetaPrior | None = None,
) -> Rate:
    """pass@1 = mean over tasks of the per-task pass rate c/n, with its interval over the tasks
    and their draws (:func:`task_interval`). The draws' floor takes each task's posterior
    under the pool's fitted prior (``prior``, else :func:`fit_beta` of these tasks): a
    uniform prior gives every task seen at 0 the noise of a task at 1/(n + 2), which in a
    pool whose tasks mostly never pass is several times the spread the pool has."""
    c, n, counts = cell_lists(tasks)
    n_rows = sum(ni * mi for ni, mi in zip(n, counts, strict=True))
    if prior is None and counts:
        prior = fit_beta(c, n, counts)
    a, b = (1.0, 1.0) if prior is None else (prior.a, prior.b)
    floor = [_draw_floor_one(ci, ni, a, b) for ci, ni in zip(c, n, strict=True)]
    values = [ci / max(ni, 1) for ci, ni in zip(c, n, strict=True)]
    return task_interval(values, counts, floor, n_rows)


#: Up to this k, C(m, k)/C(n, k) is the product of its k factors; past it, log-gamma's
#: closed form (the cost no longer grows with k: a summary claiming 10^9 rollouts per task).
PRODUCT_K = 64


def _comb_ratio(m: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """C(m, k)/C(n, k) for 0 ≤ m ≤ n, n ≥ k: Π_{j<k} (m−j)/(n−j) for k ≤ :data:`PRODUCT_K`,
    else exp(lnΓ(m+1) − lnΓ(m−k+1) − lnΓ(n+1) + lnΓ(n−k+1)); 0 where m < k, 1 where m = n.
    """
    import numpy as np

    m = np.asarray(m, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    shape = np.broadcast(m, n).shape
    if k <= PRODUCT_K:
        ratio = np.ones(shape, dtype=np.float64)
        for j in range(k):
            ratio = ratio * np.maximum(m - j, 0.0) / (n - j)
        return ratio
    m, n = np.broadcast_to(m, shape), np.broadcast_to(n, shape)
    some = m >= k
    mm, nn = np.where(some, m, float(k)), np.where(some, n, float(k))
    log = lgamma(mm + 1.0) - lgamma(mm - k + 1.0) - lgamma(nn + 1.0) + lgamma(nn - k + 1.0)
    ratio = np.where(some, np.exp(np.minimum(log, 0.0)), 0.0)
    return np.where(m == n, 1.0, ratio)


def _ratio_one(m: float, n: float, k: int) -> float:
    """:func:`_comb_ratio` of one cell: C(m, k)/C(n, k)."""
    if k <= PRODUCT_K:
        ratio = 1.0
        for j in range(k):
            ratio = ratio * max(m - j, 0.0) / (n - j)
        return ratio
    if m == n:
        return 1.0
    if m < k:
        return 0.0
    lg = math.lgamma
    return math.exp(min(lg(m + 1.0) - lg(m - k + 1.0) - lg(n + 1.0) + lg(n - k + 1.0), 0.0))


def pass_at_k_estimate(c: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """Unbiased pass@k per task: 1 − C(n−c, k)/C(n, k) (Chen et al. 2021, eq. 1); needs n ≥ k."""
    import numpy as np

    c = np.asarray(c, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    return 1.0 - _comb_ratio(n - c, n, k)


def pass_hat_k_estimate(c: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """Unbiased pass^k per task (all k of k pass): C(c, k)/C(n, k); needs n ≥ k."""
    return _comb_ratio(c, n, k)


def _beta_moment(a: float, b: float, k: int) -> float:
    """E[p^k] for p ~ Beta(a, b): Π_{j<k} (a + j)/(a + b + j) for k ≤ :data:`PRODUCT_K`, else
    exp(lnΓ(a+k) − lnΓ(a) − lnΓ(a+b+k) + lnΓ(a+b)) (the cost no longer grows with k)."""
    if k <= PRODUCT_K:
        out = 1.0
        for j in range(k):
            out *= (a + j) / (a + b + j)
        return out
    lg = math.lgamma
    return math.exp(min(lg(a + k) - lg(a) - lg(a + b + k) + lg(a + b), 0.0))


def prior_spread(prior: BetaPrior, k: int) -> tuple[float, float]:
    """The variance over tasks of pass@k = 1 − (1−p)^k and of pass^k = p^k for p ~ the
    pool's fitted Beta: Var = E[x^{2k}] − E[x^k]² with x = 1 − p and x = p."""
    a, b = prior.a, prior.b
    at_k = _beta_moment(b, a, 2 * k) - _beta_moment(b, a, k) ** 2
    hat_k = _beta_moment(a, b, 2 * k) - _beta_moment(a, b, k) ** 2
    return max(at_k, 0.0), max(hat_k, 0.0)


def pass_k_floor(
    passes: Numbers, n: Numbers, k: int, prior: BetaPrior | None = None
) -> tuple[Numbers, Numbers]:
    """Per task, the variance its n draws alone give its unbiased pass@k and pass^k: Var of
    the estimator over c ~ Binomial(n, p̃), p̃ the task's posterior mean (c + a)/(n + a + b)
    under the pool's Beta(a, b) prior (uniform when ``prior`` is None), summed over c exactly.
    At k = 1 it is pass@1's :func:`draw_floor`, p̃(1−p̃)/n. As there, a task seen at 0 in a
    pool whose tasks mostly never pass is put near 0, as the pool says it is, and a task of
    one row has no floor."""
    a, b = (1.0, 1.0) if prior is None else (prior.a, prior.b)
    if not _large(n, k):  # a few cells: one at a time
        sizes = [int(x) for x in n]
        ests = _estimates(sizes, k)
        pairs = [
            _pass_k_floor_one(int(ci), ni, k, a, b, *ests[ni])
            for ci, ni in zip(passes, sizes, strict=True)
        ]
        return [x[0] for x in pairs], [x[1] for x in pairs]
    import numpy as np

    c = np.asarray(passes, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    at_out, hat_out = np.zeros(c.size), np.zeros(c.size)
    smooth = (c + a) / (n + a + b)
    for size in np.unique(n):
        top = int(size)
        if top < max(k, 2):
            continue
        where = np.flatnonzero(n == size)
        where = where[np.argsort(smooth[where], kind="stable")]
        # c' beyond 12 standard deviations (and 30 draws) of a task's p̃ carries no mass: a
        # chunk of tasks sums over the c' within that reach of its p̃s, held to _CHUNK_CELLS
        reach = 12.0 * math.sqrt(size * 0.25) + 30.0
        width = int(min(top + 1, 2 * reach + 2))
        lo = 0
        while lo < where.size:
            rows = where[lo : lo + max(1, _CHUNK_CELLS // width)]
            while (
                rows.size > 1
                and rows.size * (size * (smooth[rows[-1]] - smooth[rows[0]]) + width) > _CHUNK_CELLS
            ):
                rows = rows[: rows.size // 2]
            lo += rows.size
            p = smooth[rows][:, None]
            first = max(0, int(size * float(p.min()) - reach))
            last = min(top, int(size * float(p.max()) + reach) + 1)
            j = np.arange(first, last + 1, dtype=np.float64)
            at_j = pass_at_k_estimate(j, np.full(j.size, size), k)
            hat_j = pass_hat_k_estimate(j, np.full(j.size, size), k)
            log_comb = lgamma(np.array([size + 1.0]))[0] - lgamma(j + 1.0) - lgamma(size - j + 1.0)
            log_pmf = log_comb + j * np.log(p) + (size - j) * np.log1p(-p)
            pmf = np.exp(log_pmf - log_pmf.max(axis=1, keepdims=True))
            pmf /= pmf.sum(axis=1, keepdims=True)
            for est, out in ((at_j, at_out), (hat_j, hat_out)):
                mean = pmf @ est
                out[rows] = np.maximum(pmf @ (est * est) - mean * mean, 0.0)
    return at_out, hat_out


def pass_k_rates(
    tasks: pl.DataFrame,
    k: int,
    *,
    draws: int = BOOTSTRAP_DRAWS,
    seed: int = 0,
    prior: BetaPrior | None = None,
) -> tuple[Rate, Rate]:
    """pass@k and pass^k over the tasks with at least k rollouts, with their intervals over
    the tasks (:func:`task_interval`; the draws' noise is in the tasks' spread).

    Each task's spread is floored at the noise its draws alone give its estimate, under its
    posterior in the pool's fitted Beta prior (``prior``, else :func:`fit_beta` of these
    tasks; :func:`pass_k_floor`), as pass@1's is. The prior's whole spread over tasks
    (:func:`prior_spread`) was once the floor: a single Beta fitted to a pool of tasks
    mostly at one end has a heavier tail than the pool, and pass@k covered 98% to 99% there.
    It now counts as one task's spread more (:data:`PRIOR_TASKS`): over few tasks of many
    draws, where a rare hard task the sample lacks carries pass@k's spread, its tail is
    still seen."""
    every = cell_lists(tasks)
    if prior is None and every[2]:
        prior = fit_beta(*every)
    kept = [(ci, ni, mi) for ci, ni, mi in zip(*every, strict=True) if ni >= k]
    c, n, counts = [x[0] for x in kept], [x[1] for x in kept], [x[2] for x in kept]
    n_rows = sum(ni * mi for ni, mi in zip(n, counts, strict=True))
    at_floor, hat_floor = pass_k_floor(c, n, k, prior)
    if _large(n, k):  # tasks of hundreds of rollouts: the estimates in numpy
        import numpy as np

        ca, na = np.array(c, dtype=np.int64), np.array(n, dtype=np.int64)
        at_est: Numbers = pass_at_k_estimate(ca, na, k)
        hat_est: Numbers = pass_hat_k_estimate(ca, na, k)
    else:
        ests = _estimates(n, k)
        at_est = [ests[ni][0][ci] for ci, ni in zip(c, n, strict=True)]
        hat_est = [ests[ni][1][ci] for ci, ni in zip(c, n, strict=True)]
    at_var, hat_var = prior_spread(prior, k) if prior is not None else (0.0, 0.0)
    at_k = rate_from_cells(at_est, counts, n_rows, floor=at_floor, prior_var=at_var)
    hat_k = rate_from_cells(hat_est, counts, n_rows, floor=hat_floor, prior_var=hat_var)
    return at_k, hat_k


def _estimates(n: Sequence[int], k: int) -> dict[int, tuple[list[float], list[float]]]:
    """Per group size of ``n``: pass@k's and pass^k's estimates of a task with j passes,
    j = 0..size (:func:`pass_at_k_estimate`, :func:`pass_hat_k_estimate`)."""
    return {
        size: (
            [1.0 - _ratio_one(size - j, size, k) for j in range(size + 1)],
            [_ratio_one(j, size, k) for j in range(size + 1)],
        )
        for size in {int(x) for x in n}
    }


def _numpy_loaded() -> bool:
    """Whether numpy is imported already: its array sums then cost nothing to start."""
    return "numpy" in sys.modules


def _large(n: Numbers, k: int) -> bool:
    """Whether pass@k's sums over cells of these sizes are work for numpy (past
    :data:`_PYTHON_WORK` terms: tasks of hundreds of rollouts; or numpy is loaded)."""
    if _numpy_loaded():
        return True
    sizes = {int(x) for x in n}
    work = sum((size + 1) * k for size in sizes) + sum(_window(int(x)) for x in n)
    return work > _PYTHON_WORK


#: Past this many terms over a pool's cells, :func:`pass_k_rates` sums in numpy.
_PYTHON_WORK = 100_000


def _reach(size: float) -> float:
    """Passes c' beyond this distance from a task's expected n·p̃ carry no mass (12 standard
    deviations, and 30 draws)."""
    return 12.0 * math.sqrt(size * 0.25) + 30.0


def _window(size: int) -> int:
    """The binomial terms :func:`_pass_k_floor_one` sums for a task of ``size`` rollouts."""
    return int(min(size + 1, 2 * _reach(size) + 2))


def _pass_k_floor_one(
    c: int, size: int, k: int, a: float, b: float, at_j: list[float], hat_j: list[float]
) -> tuple[float, float]:
    """:func:`pass_k_floor` of one cell: the variance of pass@k's and pass^k's estimates
    (``at_j[j]``, ``hat_j[j]`` for j passes) over j ~ Binomial(size, p̃), p̃ = (c + a)/(size +
    a + b), summed over the j within :func:`_reach` of size·p̃."""
    if size < max(k, 2):
        return 0.0, 0.0
    p = (c + a) / (size + a + b)
    reach = _reach(size)
    first = max(0, int(size * p - reach))
    last = min(size, int(size * p + reach) + 1)
    lg = math.lgamma
    head, log_p, log_q = lg(size + 1.0), math.log(p), math.log1p(-p)
    logs = [
        head - lg(j + 1.0) - lg(size - j + 1.0) + j * log_p + (size - j) * log_q
        for j in range(first, last + 1)
    ]
    top = max(logs)
    weights = [math.exp(x - top) for x in logs]
    total = math.fsum(weights)
    out = []
    for est in (at_j, hat_j):
        values = est[first : last + 1]
        mean = math.fsum(w * v for w, v in zip(weights, values, strict=True)) / total
        second = math.fsum(w * v * v for w, v in zip(weights, values, strict=True)) / total
        out.append(max(second - mean * mean, 0.0))
    return out[0], out[1]


def wilson(
    successes: int,
    n: int,
    *,
    n_tasks: int | None = None,
    n_rows: int | None = None,
    unit: str = "tasks",
    z: float = Z95,
) -> Rate:
    """A share with its 95% Wilson score interval (Wilson 1927), z = 1.96 (or ``z``).

    With p = s/n and d = 1 + z²/n: centre (p + z²/2n)/d, half-width z·√(p(1−p)/n + z²/4n²)/d,
    clipped to [0, 1]. Equal to scipy's ``binomtest(s, n).proportion_ci(method="wilson")``
    (the tests check it); written out so that routing never imports ``scipy.stats``.

    ``n`` is the number of units the share is over; ``n_tasks``/``n_rows`` say what the
    report prints as the sample, and ``unit`` what ``n`` counted: ``"tasks"`` prints
    ``n=N tasks (R rows)``, ``"rows"`` prints ``n=R rows``.
    """
    tasks = n if n_tasks is None else n_tasks
    rows = n if n_rows is None else n_rows
    if n <= 0:
        return Rate(None, None, None, tasks, rows, "none", "nothing to count", unit)
    p = successes / n
    d = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    return Rate(p, low, high, tasks, rows, "wilson", None, unit)


def lgamma(x: np.ndarray) -> np.ndarray:
    """log Γ(x) for x > 0, elementwise: the recurrence up past 8, then Stirling's series
    (``scipy.special.gammaln`` to 1e-12; the tests hold it to it)."""
    import numpy as np

    x = np.asarray(x, dtype=np.float64)
    shift = np.zeros_like(x)
    y = x.copy()
    for _ in range(8):
        small = y < 8.0
        shift = shift + np.where(small, np.log(np.where(small, y, 1.0)), 0.0)
        y = np.where(small, y + 1.0, y)
    inv = 1.0 / y
    inv2 = inv * inv
    series = inv * (1 / 12 - inv2 * (1 / 360 - inv2 * (1 / 1260 - inv2 * (1 / 1680 - inv2 / 1188))))
    return (y - 0.5) * np.log(y) - y + 0.5 * math.log(2 * math.pi) + series - shift


@dataclass(frozen=True)
class BetaPrior:
    """A Beta(a, b) prior over the tasks' pass rates, fitted to the pool's counts."""

    a: float
    b: float

    @property
    def mean(self) -> float:
        return self.a / (self.a + self.b)


def _linspace(low: float, high: float, num: int) -> list[float]:
    """``num`` evenly spaced values from ``low`` to ``high`` (both included)."""
    step = (high - low) / (num - 1)
    return [low + i * step for i in range(num - 1)] + [high]


def _means(low: float, high: float, num: int) -> list[float]:
    """Means logit spaced from ``low`` to ``high`` (in logit)."""
    return [1.0 / (1.0 + math.exp(-x)) for x in _linspace(low, high, num)]


def _concs(low: float, high: float, num: int) -> list[float]:
    """Concentrations log spaced from ``low`` to ``high`` (in log)."""
    return [math.exp(x) for x in _linspace(low, high, num)]


#: The prior's mean and concentration grids (logit and log spaced) for the fit.
_FIT_MEANS = _means(-11.0, 11.0, 89)
_FIT_CONC = _concs(math.log(1e-3), math.log(1e5), 65)


#: Largest group size for which :func:`fit_beta` sums logs instead of calling lgamma.
_FINITE_SUMS = 256


def _finite_ll(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, n: np.ndarray, m: np.ndarray, top: int
) -> np.ndarray:
    """Σ_cells m · log[B(c + a, n − c + b)/B(a, b)] at every (a, b) of a grid, as the finite
    sums Σ_{j<c} log(a + j) + Σ_{j<n−c} log(b + j) − Σ_{j<n} log(a + b + j): exact, and
    cheaper than six lgamma calls per cell when groups are small (``top`` the largest n)."""
    import numpy as np

    steps = np.arange(top, dtype=np.float64)

    def cumulative(x: np.ndarray) -> np.ndarray:
        logs = np.log(x[..., None] + steps)
        out = np.zeros((*x.shape, top + 1), dtype=np.float64)
        np.cumsum(logs, axis=-1, out=out[..., 1:])
        return out

    ci, ni = c.astype(np.int64), n.astype(np.int64)
    ll = cumulative(a)[..., ci] + cumulative(b)[..., ni - ci] - cumulative(a + b)[..., ni]
    return ll @ m


def _finite_best(
    c: list[int], n: list[int], m: list[float], means: list[float], concs: list[float]
) -> tuple[float, float]:
    """The (mean, concentration) of a grid with the largest Σ_cells m · log[B(c + a, n − c +
    b)/B(a, b)], as the finite sums of :func:`_finite_ll` regrouped by step: Σ_j A_j log(a +
    j) + B_j log(b + j) − N_j log(a + b + j), A_j the tasks with more than j passes, B_j with
    more than j fails, N_j with more than j rollouts. One polars query over the grid; the
    first of equal maxima, as numpy's argmax keeps."""
    top = max(n)
    more = [[0.0] * (top + 1) for _ in range(3)]  # tasks ending at j, then counted down
    for ci, ni, mi in zip(c, n, m, strict=True):
        more[0][ci] += mi
        more[1][ni - ci] += mi
        more[2][ni] += mi
    for row in more:
        for j in range(top - 1, -1, -1):
            row[j] += row[j + 1]
    mu = pl.Series([x for x in means for _ in concs], dtype=pl.Float64)
    kappa = pl.Series([y for _ in means for y in concs], dtype=pl.Float64)
    a = mu * kappa
    grid = pl.DataFrame({"a": a, "b": (1.0 - mu) * kappa}).with_columns(
        ab=pl.col("a") + pl.col("b")
    )
    terms: list[pl.Expr] = []
    for j in range(top):
        for weight, x in ((more[0][j + 1], "a"), (more[1][j + 1], "b"), (-more[2][j + 1], "ab")):
            if weight:
                terms.append((pl.col(x) + float(j)).log() * weight)
    best = 0
    if terms:
        total = grid.select(pl.sum_horizontal(terms)).to_series()
        top_value = float(total.max())  # type: ignore[arg-type]
        # equal up to rounding is equal (n = 1 leaves the concentration free): the first
        near = total >= top_value - _tie(top_value, sum(m))
        best = int(near.arg_max())  # type: ignore[arg-type]
    return means[best // len(concs)], concs[best % len(concs)]


#: Grid points whose log-likelihoods agree to this relative difference are equal: the fit
#: keeps the first of them, whatever the rounding of the sums.
_TIE = 1e-12


def _tie(best: float, tasks: float) -> float:
    """How far below the best log-likelihood a grid point still ties with it: :data:`_TIE` of
    the total, and of a unit per task, since each task's terms (logs of up to 1e5) round on
    their own scale even where they cancel to a total near 0 (tasks all at 0 with one draw
    each sum to Σ log(1 − μ), the same at every concentration)."""
    return _TIE * (abs(best) + tasks)


def fit_beta(passes: Numbers, n: Numbers, counts: Numbers) -> BetaPrior:
    """The Beta prior that maximises the pool's beta-binomial likelihood (empirical Bayes).

    Σ_cells m · [log B(c + a, n − c + b) − log B(a, b)] over a grid of means (logit spaced,
    1.7e-5 to 1 − 1.7e-5) and concentrations a + b (1e-3 to 1e5, log spaced), then refined
    once on a finer grid around the best point. Tasks all at 0 put the mean at the grid's
    low end; tasks only at 0 and 1 put the concentration near 0 (the tasks never split).
    """
    key = (
        tuple(float(x) for x in passes),
        tuple(float(x) for x in n),
        tuple(float(x) for x in counts),
    )
    known = _FITTED.get(key)
    if known is None:
        known = _fit(*key)
        if len(_FITTED) >= _FITTED_MAX:
            _FITTED.pop(next(iter(_FITTED)))
        _FITTED[key] = known
    return known


#: Priors fitted to recent pools, by their cells: one route fits the same tasks for pass@1,
#: the band, pass@k and the summary, and fits them once.
_FITTED: dict[tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]], BetaPrior] = {}
_FITTED_MAX = 64


def _fit(c: Sequence[float], n: Sequence[float], m: Sequence[float]) -> BetaPrior:
    """:func:`fit_beta` on the cells, uncached: the finite sums over the grid in polars where
    every task has at most :data:`_FINITE_SUMS` rollouts (whole counts), else log-gamma over
    the grid in numpy."""
    top = int(max(n)) if n else 0
    whole = all(float(x).is_integer() for x in (*c, *n))
    if top <= _FINITE_SUMS and whole and not _numpy_loaded():
        ci, ni = [int(x) for x in c], [int(x) for x in n]

        def fit(means: list[float], concs: list[float]) -> tuple[float, float]:
            return _finite_best(ci, ni, list(m), means, concs)

        return _refined(fit)
    return _fit_numpy(c, n, m, top)


def _refined(best: Callable[[list[float], list[float]], tuple[float, float]]) -> BetaPrior:
    """The best point of the coarse grid, then of a finer grid around it."""
    mu, kappa = best(_FIT_MEANS, _FIT_CONC)
    logit = math.log(mu / (1.0 - mu))
    fine_means = _means(logit - 0.25, logit + 0.25, 21)
    fine_conc = _concs(math.log(kappa) - 0.15, math.log(kappa) + 0.15, 21)
    mu, kappa = best(fine_means, fine_conc)
    return BetaPrior(mu * kappa, (1.0 - mu) * kappa)


def _fit_numpy(c: Sequence[float], n: Sequence[float], m: Sequence[float], top: int) -> BetaPrior:
    """:func:`_fit` in numpy: log-gamma (or, for whole counts, the finite sums) at every
    point of the grid; the same sums as :func:`_finite_best`'s, rounded otherwise, and the
    same first of the points equal to :data:`_TIE`."""
    import numpy as np

    c_, n_, m_ = (np.asarray(x, dtype=np.float64) for x in (c, n, m))

    def best(means_: list[float], concs_: list[float]) -> tuple[float, float]:
        means, concs = np.asarray(means_), np.asarray(concs_)
        c, n, m = c_, n_, m_
        mu = means[:, None, None]
        kappa = concs[None, :, None]
        a, b = mu * kappa, (1.0 - mu) * kappa
        if top <= _FINITE_SUMS:
            total = _finite_ll(a[..., 0], b[..., 0], c, n, m, top)
        else:
            ll = lgamma(c + a) + lgamma(n - c + b) - lgamma(n + kappa)
            ll = ll - lgamma(a) - lgamma(b) + lgamma(kappa)
            total = ll @ m
        best = total.max()
        near = total >= best - _tie(float(best), float(m.sum()))  # as :func:`_finite_best`
        i, j = np.unravel_index(int(np.argmax(near)), total.shape)
        return float(means[i]), float(concs[j])

    return _refined(best)


def expected_split(
    s: np.ndarray, f: np.ndarray, k: int, prior: BetaPrior | None = None
) -> np.ndarray:
    """E[1 − p^k − (1−p)^k] for p ~ Beta(a + s, b + f): the chance k fresh rollouts disagree.

    ``prior`` is Beta(a, b) (the pool's, from :func:`fit_beta`; None: the uniform Beta(1, 1)).
    Closed form: 1 − E[p^k] − E[(1−p)^k], where the k-th moment is Π_{j<k} (a+j)/(a+b+j),
    exact in k factors. Check value: s=0, f=2, k=8 under the uniform prior → 0.7212.
    """
    import numpy as np

    a0, b0 = (1.0, 1.0) if prior is None else (prior.a, prior.b)
    a = a0 + np.asarray(s, dtype=np.float64)
    b = b0 + np.asarray(f, dtype=np.float64)
    up = np.ones(np.broadcast(a, b).shape, dtype=np.float64)
    down = up.copy()
    for j in range(k):
        up = up * (a + j) / (a + b + j)
        down = down * (b + j) / (a + b + j)
    return np.clip(1.0 - up - down, 0.0, 1.0)


def _split_one(s: float, f: float, k: int, a0: float, b0: float) -> float:
    """:func:`expected_split` of one cell under Beta(a0, b0)."""
    a, b = a0 + s, b0 + f
    up = down = 1.0
    for j in range(k):
        up = up * (a + j) / (a + b + j)
        down = down * (b + j) / (a + b + j)
    return min(max(1.0 - up - down, 0.0), 1.0)


def pool_prior(tasks: pl.DataFrame) -> BetaPrior | None:
    """The Beta prior fitted to a per-task frame's counts (None with no task)."""
    if tasks.height == 0:
        return None
    return fit_beta(*cell_lists(tasks))


def expected_split_share(
    tasks: pl.DataFrame, k: int, prior: BetaPrior | None = None
) -> float | None:
    """Mean over the given tasks of :func:`expected_split` at k, each task's posterior under
    the prior fitted to these tasks (``prior``, else :func:`pool_prior`); None with no task."""
    if tasks.height == 0:
        return None
    s, n, counts = cell_lists(tasks)
    if prior is None:
        prior = fit_beta(s, n, counts)
    a, b = prior.a, prior.b
    total = math.fsum(
        _split_one(si, ni - si, k, a, b) * mi for si, ni, mi in zip(s, n, counts, strict=True)
    )
    return total / sum(counts)


#: 2·Δlog-likelihood past which the best fit to a pool's counts rules an edge model out
#: (tasks that never split beside a Beta: :func:`split_outlook`): χ²(2) at 0.99. Short of
#: it the counts fit both, and a k is promised only where both reach the share.
EDGE_LR = 9.21
#: The least share of tasks the edge model puts at 0 and 1 for good to be told apart from
#: the one Beta.
EDGE_MIN = 0.01


@dataclass(frozen=True)
class SplitOutlook:
    """What more draws per task would split, from the pool's counts (DESIGN section 2.3).

    ``prior``: the Beta fitted to every task (empirical Bayes). ``edge``: where the counts
    fit as well with tasks always or never solved (as real benchmarks' are: not ruled out
    by :data:`EDGE_LR`), the weights of tasks that never pass (``never``) and always pass
    (``always``) beside a Beta (``middle``) fitted to the split tasks alone; no draw ever
    splits the first two, and the outlook is the lower of the two models'. None: the one
    Beta."""

    prior: BetaPrior
    middle: BetaPrior | None = None
    never: float = 0.0
    always: float = 0.0

    @property
    def edge(self) -> bool:
        return self.middle is not None


def _log_bb(c: float, n: float, a: float, b: float) -> float:
    """log P(c of n | Beta(a, b)): the beta-binomial count probability."""
    lg = math.lgamma
    comb = lg(n + 1) - lg(c + 1) - lg(n - c + 1)
    return comb + lg(c + a) + lg(n - c + b) - lg(n + a + b) - lg(a) - lg(b) + lg(a + b)


#: The grid of the middle tasks' Beta in :func:`split_outlook`: a quarter of the prior's.
_EDGE_MEANS = _means(-11.0, 11.0, 23)
_EDGE_CONC = _concs(math.log(1e-3), math.log(1e5), 17)


def _edge_weights(
    cells: list[tuple[float, float, float]], middle: BetaPrior, steps: int = 60
) -> tuple[float, float, float]:
    """(never, always, log-likelihood): the weights of tasks at 0 and at 1 beside the
    ``middle`` Beta that fit the counts best (EM on the two weights, the Beta held)."""
    total = sum(m for _, _, m in cells)
    probs = [math.exp(_log_bb(c, n, middle.a, middle.b)) for c, n, _ in cells]
    never = sum(m for c, _, m in cells if c == 0) / (2 * total)
    always = sum(m for c, n, m in cells if c == n) / (2 * total)
    ll = -math.inf
    for _ in range(steps):
        rest = 1.0 - never - always
        zero = one = ll = 0.0
        for (c, n, m), p in zip(cells, probs, strict=True):
            lo, hi = (never if c == 0 else 0.0), (always if c == n else 0.0)
            like = lo + hi + rest * p
            if like <= 0.0:  # a count this middle cannot give (its chance underflows)
                return never, always, -math.inf
            zero += m * lo / like
            one += m * hi / like
            ll += m * math.log(like)
        never, always = zero / total, one / total
    return never, always, ll


def split_outlook(tasks: pl.DataFrame, k_max: int = 32) -> SplitOutlook | None:
    """The pool's :class:`SplitOutlook` (None with no task). Over a grid of middle Betas,
    the edge weights that fit the counts best (:func:`_edge_weights`); of those edge models
    the counts do not rule out (log-likelihood within :data:`EDGE_LR`/2 of the best, the one
    Beta's included) and that put :data:`EDGE_MIN` of the tasks at the edges or more, the
    one whose split share at ``k_max`` is least: the outlook promises no more than the counts
    allow. None of them: the one Beta alone."""
    prior = pool_prior(tasks)
    if prior is None:
        return None
    s, n, counts = cell_lists(tasks)
    cells = [(float(c), float(k), float(m)) for c, k, m in zip(s, n, counts, strict=True)]
    if not any(0 < c < k for c, k, _ in cells) or all(0 < c < k for c, k, _ in cells):
        return SplitOutlook(prior)
    beta_ll = math.fsum(m * _log_bb(c, k, prior.a, prior.b) for c, k, m in cells)
    fits = []
    for mu in _EDGE_MEANS:
        for kappa in _EDGE_CONC:
            middle = BetaPrior(mu * kappa, (1.0 - mu) * kappa)
            never, always, ll = _edge_weights(cells, middle)
            fits.append((ll, never, always, middle))
    top = max(beta_ll, *(f[0] for f in fits))
    plausible = [f for f in fits if 2.0 * (top - f[0]) <= EDGE_LR and f[1] + f[2] >= EDGE_MIN]
    if not plausible:
        return SplitOutlook(prior)

    def reach(fit: tuple[float, float, float, BetaPrior]) -> float:
        middle = fit[3]
        return (1.0 - fit[1] - fit[2]) * _split_one(0.0, 0.0, k_max, middle.a, middle.b)

    _, never, always, middle = min(plausible, key=reach)
    return SplitOutlook(prior, middle, never, always)


def outlook_split_share(tasks: pl.DataFrame, k: int, outlook: SplitOutlook | None) -> float | None:
    """The expected split share at k under ``outlook``: :func:`expected_split_share` under
    the one Beta; with the edge model, the lower of that and the edge model's: each task's
    chance to be a middle task (1 for a split one; for one at 0, w·P(0 of n)/(never + w·P(0
    of n)), w = 1 − never − always) times its split chance under the middle Beta's
    posterior."""
    one = expected_split_share(tasks, k, None if outlook is None else outlook.prior)
    if outlook is None or outlook.middle is None or one is None:
        return one
    s, n, counts = cell_lists(tasks)
    mid, rest = outlook.middle, 1.0 - outlook.never - outlook.always
    total = 0.0
    for c, k_n, m in zip(s, n, counts, strict=True):
        chance = 1.0
        if c == 0 or c == k_n:
            p = rest * math.exp(_log_bb(c, k_n, mid.a, mid.b))
            edge = (outlook.never if c == 0 else 0.0) + (outlook.always if c == k_n else 0.0)
            chance = p / (p + edge) if p + edge > 0 else 0.0
        total += m * chance * _split_one(c, k_n - c, k, mid.a, mid.b)
    return min(one, total / sum(counts))


def unanimous_expected(tasks: pl.DataFrame, prior: BetaPrior | None = None) -> tuple[float, float]:
    """(E, log P): the grouped tasks (``tasks``) expected unanimous, all their draws passing
    or all failing, under the prior fitted to them (``prior``, else :func:`pool_prior`), each
    task's n draws from a fresh p ~ Beta(a, b); and the log chance that none is. The prior
    predictive, not each task's posterior: what the pool's own spread of pass rates says
    its groups would show."""
    if tasks.height == 0:
        return 0.0, 0.0
    s, n, counts = cell_lists(tasks)
    if prior is None:
        prior = fit_beta(s, n, counts)
    expected, log_none = 0.0, 0.0
    for ni, mi in zip(n, counts, strict=True):
        one = 1.0 - _split_one(0.0, 0.0, int(ni), prior.a, prior.b)
        expected += one * mi
        log_none += mi * (math.log1p(-one) if one < 1.0 else -math.inf)
    return expected, log_none


@dataclass(frozen=True)
class Holdout:
    """The held-out test size for detecting ``effect`` at ``power`` (two-sided ``alpha``)."""

    n: int
    sd: float
    half_width: float
    effect: float
    base: float
    k: int
    power: float
    alpha: float

    @property
    def caveat(self) -> str | None:
        """Said beside a size under :data:`FEW_HELDOUT_TASKS`: the formula's sd is the draws'
        noise alone, which many draws shrink towards 0 (k = 256 at p = 0.5 asks for 7 tasks),
        while the tasks' own spread of gains, which no number of draws shrinks, is not in it."""
        if self.n >= FEW_HELDOUT_TASKS:
            return None
        return (
            f"under {FEW_HELDOUT_TASKS} tasks the size holds the draws' noise only, not how the"
            f" gain varies across tasks: hold out at least {FEW_HELDOUT_TASKS}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "caveat": self.caveat}


#: Fewest held-out tasks a size is given without its caveat (:attr:`Holdout.caveat`): the
#: task count below which a verdict is provisional too (``RouteOptions.firm_tasks``).
FEW_HELDOUT_TASKS = 30


def leaves_room(base: float, effect: float) -> bool:
    """Whether a base pass@1 leaves room to measure a gain of ``effect`` (DESIGN section 2:
    base and base + effect inside (0, 1)). At 1 no draw can improve, at 0 the draws' noise
    p(1−p)/k that sizes the test is 0: either way no held-out size means anything."""
    return base > 0 and base + effect < 1


def holdout_size(
    effect: float, base: float = 0.6, k: int = 4, power: float = 0.8, alpha: float = 0.05
) -> Holdout:
    """Tasks needed to see a gain of ``effect`` in pass@1 with k rollouts per task.

    n = max(2, ⌈((z₁₋α/₂ + z_power)·sd/effect)²⌉) with sd = √((p(1−p) + q(1−q))/k),
    p = base, q = min(1, base + effect); half-width = z₁₋α/₂·sd/√n.
    effect 0.05 → 367 tasks (sd 0.3419, half-width 0.035).
    """
    if not 0 < effect <= 1:
        raise ValueError(f"effect must lie in (0, 1], got {effect}")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    p = base
    q = min(1.0, base + effect)
    sd = math.sqrt((p * (1 - p) + q * (1 - q)) / k)
    z_alpha = NormalDist().inv_cdf(1 - alpha / 2)
    z_power = NormalDist().inv_cdf(power)
    n = max(2, math.ceil(((z_alpha + z_power) * sd / effect) ** 2))
    return Holdout(n, sd, z_alpha * sd / math.sqrt(n), effect, base, k, power, alpha)


def histogram(tasks: pl.DataFrame, bins: int = 10) -> dict[str, Any]:
    """Per-task pass rates c/n in ``bins`` equal bins over [0, 1] (the last one closed), plus
    the exact counts at 0 and at 1. Bins by integer arithmetic: bin = min(⌊bins·c/n⌋, bins−1).
    """
    edges = [i / bins for i in range(bins + 1)]
    if tasks.height == 0:
        return {"edges": edges, "counts": [0] * bins, "at_0": 0, "at_1": 0, "tasks": 0}
    c, n, tally = cell_lists(tasks)  # binned per cell, each weighted by its tasks
    counts = [0] * bins
    for ci, ni, mi in zip(c, n, tally, strict=True):
        counts[min((bins * ci) // ni, bins - 1)] += mi
    return {
        "edges": edges,
        "counts": counts,
        "at_0": sum(mi for ci, mi in zip(c, tally, strict=True) if ci == 0),
        "at_1": sum(mi for ci, ni, mi in zip(c, n, tally, strict=True) if ci == ni),
        "tasks": int(tasks.height),
    }


#: The draws per task up to which :func:`even_counts` looks (its windows of counts grow as
#: n²); and the widest window of counts it weighs (a grade ranked within its group, with ties).
EVEN_MAX_N = 64
EVEN_MAX_WIDTH = 3
#: Split tasks of one n below which :func:`even_counts` says nothing.
EVEN_MIN_SPLIT = 10
#: Grid of pass rates the most a window of counts can hold is read on (:func:`_most_in`).
_EVEN_GRID = 400
#: Added to that most: the grid's step leaves the maximum between two points.
_EVEN_SLACK = 0.005


@dataclass(frozen=True)
class EvenCounts:
    """Grouped tasks whose pass counts are more even than independent draws can make them
    (:func:`even_counts`)."""

    n: int  # draws per task
    low: int  # the window of pass counts
    high: int
    held: int  # tasks of n draws (split ones, or all: ``among_split``) in the window
    split: int  # the tasks of n draws the share is over: the split ones, or all
    most: float  # the largest share of those tasks the window can hold, whatever p
    log_chance: float  # log of a bound on the chance of ``held`` or more, tests counted
    #: The share is over split tasks (a window away from the ends); False: over every task
    #: of n draws, unanimous ones too (a window at an end: one pass in each group).
    among_split: bool = True
    #: ``most`` is the share the mixture of pass rates nearest the counts puts there
    #: (:func:`_unmixed`), not a bound over every rate.
    fitted: bool = False


@functools.lru_cache(maxsize=4096)
def _most_in(n: int, low: int, high: int, among_split: bool = True) -> float:
    """max over p of P(low ≤ c ≤ high | 0 < c < n) for c ~ Binomial(n, p): the largest share
    of split tasks of n independent draws a window of pass counts can hold, whatever each
    task's pass rate (a mixture of rates holds a mix of such shares, never more); with
    ``among_split`` False, of every task, P(low ≤ c ≤ high) (exactly one pass of n:
    (1 − 1/n)^(n−1), 0.39 at n = 8; a split task of 2 draws: 0.5). Read on a grid of p, plus
    :data:`_EVEN_SLACK`."""
    best = 0.0
    logs = [math.lgamma(n + 1) - math.lgamma(c + 1) - math.lgamma(n - c + 1) for c in range(n + 1)]
    for i in range(1, _EVEN_GRID):
        p = i / _EVEN_GRID
        lp, lq = math.log(p), math.log1p(-p)
        split = 1.0 - p**n - (1.0 - p) ** n if among_split else 1.0
        if split <= 0.0:
            continue
        held = sum(math.exp(logs[c] + c * lp + (n - c) * lq) for c in range(low, high + 1))
        best = max(best, held / split)
    return min(1.0, best + _EVEN_SLACK)


def _end_windows(n: int) -> list[tuple[int, int]]:
    """The windows of pass counts of n draws at an end, :data:`EVEN_MAX_WIDTH` wide at most:
    from one pass (``[1, 1]``, ``[1, 2]``, ...) and up to one fail (``[n − 1, n − 1]``, ...)."""
    top = min(EVEN_MAX_WIDTH, n - 1)
    ends = [(1, high) for high in range(1, top + 1)]
    ends += [(low, n - 1) for low in range(n - 1, n - 1 - top, -1)]
    return list(dict.fromkeys(ends))


#: The chance under which pass counts read as not drawn one by one (the ``even_counts``
#: finding).
EVEN_CHANCE = 1e-6
#: Pass rates the nearest mixture is fitted on (:func:`_unmixed`), the EM steps taken (in
#: rounds, after each of which a fit already too near the counts to matter stops), and the
#: finer grid its gap to every mixture is read on.
_MIX_GRID, _MIX_STEPS, _MIX_ROUND, _MIX_CHECK = 101, 300, 20, 1001


def _binomial_row(n: int, p: float, counts: Sequence[int]) -> list[float]:
    """P(c passes of n) at pass rate p, for each c of ``counts``."""
    out = []
    for c in counts:
        if p <= 0.0 or p >= 1.0:
            out.append(1.0 if c == (0 if p <= 0.0 else n) else 0.0)
            continue
        log = math.lgamma(n + 1) - math.lgamma(c + 1) - math.lgamma(n - c + 1)
        out.append(math.exp(log + c * math.log(p) + (n - c) * math.log1p(-p)))
    return out


def _unmixed(n: int, counts: dict[int, int]) -> EvenCounts | None:
    """Pass counts of N tasks of n draws that no mixture of pass rates makes: the smallest
    KL divergence D from their histogram to any mixture of Binomial(n, p) (the nearest
    mixture, fitted by EM on a grid of p, less the gap to every mixture its gradient bounds:
    log max_p Σ_c f_c·P_c(p)/m_c, Jensen's inequality), and a bound on the chance of a
    histogram that far from the truth, whatever it is: Sanov's (N + 1)^(n+1)·exp(−N·D), or
    past D = n/N Agrawal's exp(−N·D)·(e·N·D/n)^n (Agrawal 2020, "Finite-sample concentration
    of the multinomial in relative entropy", k = n + 1 counts), the smaller. Rows that
    are one episode's turns graded on the last (one pass of 3 in half the tasks, never two),
    or a pass planted in each group, sit far from every mixture where each window of counts
    alone stays within what some rate gives. The window reported is the count the mixture
    holds least of, against what it holds there. None where the counts fit a mixture.
    Plain Python over the counts seen only (the route imports no numpy)."""
    total = sum(counts.values())
    seen = sorted(c for c, m in counts.items() if m > 0)
    share = [counts[c] / total for c in seen]
    grid = [i / (_MIX_GRID - 1) for i in range(_MIX_GRID)]
    table = [_binomial_row(n, p, seen) for p in grid]
    weights = [1.0 / _MIX_GRID] * _MIX_GRID
    mixed = [1.0] * len(seen)
    for step in range(_MIX_STEPS):
        if step % _MIX_ROUND == 0 and step:  # the fit bounds the distance from above
            near = sum(f * math.log(f / m) for f, m in zip(share, mixed, strict=True))
            if _mix_chance(n, total, near) > math.log(EVEN_CHANCE):
                return None
        mixed = [
            sum(w * row[j] for w, row in zip(weights, table, strict=True)) for j in range(len(seen))
        ]
        ratio = [f / m for f, m in zip(share, mixed, strict=True)]
        weights = [
            w * sum(r * x for r, x in zip(ratio, row, strict=True))
            for w, row in zip(weights, table, strict=True)
        ]
    mixed = [
        sum(w * row[j] for w, row in zip(weights, table, strict=True)) for j in range(len(seen))
    ]
    ratio = [f / m for f, m in zip(share, mixed, strict=True)]
    distance = sum(f * math.log(f / m) for f, m in zip(share, mixed, strict=True))
    check = (i / (_MIX_CHECK - 1) for i in range(_MIX_CHECK))
    gap = math.log(
        max(
            sum(r * x for r, x in zip(ratio, _binomial_row(n, p, seen), strict=True)) for p in check
        )
    )
    least = distance - max(gap, 0.0)
    if least <= 0.0:
        return None
    log_chance = _mix_chance(n, total, least)
    j = max(range(len(seen)), key=lambda i: ratio[i])
    worst = seen[j]
    return EvenCounts(
        n, worst, worst, counts[worst], total, mixed[j], log_chance,
        among_split=False, fitted=True,
    )  # fmt: skip


def _mix_chance(n: int, total: int, distance: float) -> float:
    """Log of a bound on the chance that the histogram of ``total`` tasks' counts of n draws
    lies ``distance`` (KL) or more from the truth: Sanov's (N + 1)^(n+1)·exp(−N·D), or past
    D = n/N Agrawal's exp(−N·D)·(e·N·D/n)^n, the smaller."""
    sanov = (n + 1) * math.log(total + 1) - total * distance
    if total * distance <= n:
        return sanov
    return min(sanov, -total * distance + n * math.log(math.e * total * distance / n))


def _kl(x: float, q: float) -> float:
    """KL(Bernoulli(x) ‖ Bernoulli(q)), for the Chernoff bound of a binomial tail."""
    out = 0.0
    if x > 0.0:
        out += x * math.log(x / q)
    if x < 1.0:
        out += (1.0 - x) * math.log((1.0 - x) / (1.0 - q))
    return out


def even_counts(tasks: pl.DataFrame) -> EvenCounts | None:
    """The window of pass counts that most shows the grouped tasks' counts more even than
    independent draws give: each task's n draws are Binomial(n, p) at its own p, so of its
    split tasks a window of counts away from the ends (``low`` ≥ 2, ``high`` ≤ n − 2) holds at
    most a share :func:`_most_in` (4 of 8: 0.28, at p = 0.5), whatever the tasks' rates. A
    pool with far more there (every task passing 4 of 8: a grade ranked within its group,
    top half passing, or a balanced selection) was not graded draw by draw. A window at an
    end (one pass, or one fail: :func:`_end_windows`) is weighed over every task of n draws,
    unanimous ones too, where it holds at most (1 − 1/n)^(n−1) for one pass (0.39 at n = 8):
    a pass in each group beside tasks the draws never solve (a reference answer graded
    beside them, the best of each group marked a pass) crowds it. The chance is Chernoff's
    bound on the binomial tail, exp(−S·KL(held/S ‖ most)), times the windows weighed
    (Bonferroni): a bound for every mixture of pass rates, never an estimate. None where no
    window's held share exceeds its most."""
    by_n: dict[int, dict[int, int]] = {}  # tasks by n, then by passes (cells are distinct)
    for c, n, m in zip(*cell_lists(tasks), strict=True):
        if 2 <= n <= EVEN_MAX_N:
            by_n.setdefault(int(n), {})[int(c)] = int(m)
    found: list[EvenCounts] = []
    tests = 0
    for n, counts in by_n.items():
        split = sum(m for c, m in counts.items() if 0 < c < n)
        every = sum(counts.values())
        windows: list[tuple[int, int, int, bool]] = []
        if n >= 4 and split >= EVEN_MIN_SPLIT:
            windows += [
                (low, high, split, True)
                for low in range(2, n - 1)
                for high in range(low, min(low + EVEN_MAX_WIDTH, n - 1))
            ]
        if every >= EVEN_MIN_SPLIT:
            windows += [(low, high, every, False) for low, high in _end_windows(n)]
        for low, high, base, among_split in windows:
            tests += 1
            held = sum(counts.get(c, 0) for c in range(low, high + 1))
            most = _most_in(n, low, high, among_split)
            if held <= most * base or most >= 1.0:
                continue
            log_chance = -base * _kl(held / base, most)
            found.append(EvenCounts(n, low, high, held, base, most, log_chance, among_split))
        if every >= EVEN_MIN_SPLIT:
            tests += 1
            unmixed = _unmixed(n, counts)
            if unmixed is not None:
                found.append(unmixed)
    if not found:
        return None
    best = min(found, key=lambda e: e.log_chance)
    return dataclasses.replace(best, log_chance=best.log_chance + math.log(tests))
