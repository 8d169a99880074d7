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
"""

from __future__ import annotations

import functools
import math
import weakref
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
import polars as pl

from whilecli.route.model import Rate

#: Distinct ``(passes, n)`` cells and the tasks in each (:func:`cell_arrays`).
Cells = tuple[np.ndarray, np.ndarray, np.ndarray]

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
    a, b = (1.0, 1.0) if prior is None else (prior.a, prior.b)
    c = np.asarray(passes, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    smooth = (c + a) / (n + a + b)
    return np.where(n >= 2, smooth * (1.0 - smooth) / np.maximum(n, 1.0), 0.0)


def _wilson_bounds(p: float, n: float, z: float) -> tuple[float, float]:
    d = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(max(p * (1 - p) / n + z * z / (4 * n * n), 0.0)) / d
    return max(0.0, centre - half), min(1.0, centre + half)


def task_interval(
    values: np.ndarray,
    counts: np.ndarray,
    floor: np.ndarray,
    n_rows: int,
    *,
    signed: bool = False,
) -> Rate:
    """A mean over tasks with the 95% interval of the one machinery every command shares.

    ``values[j]`` is the statistic of the ``counts[j]`` tasks of cell ``j`` (a pass rate, a
    pass@k estimate, or a paired difference) and ``floor[j]`` the variance their draws alone
    give it (:func:`draw_floor`). Over N tasks:

    - the variance of the mean is V = max(s², mean floor)/N, s² the sample variance of the
      task values: the task sample and the k draws together (clustered errors, Miller 2024,
      arXiv:2411.00640), never less than the draws alone allow;
    - a rate in [0, 1] gets a Wilson interval over the effective sample n_eff = m(1−m)/V
      (Kish's design effect), held inside [N tasks, rows]: one row per task at most, one
      task per row at least, and no width from nowhere when the tasks agree by chance;
      a signed difference gets m ± q·√V, clipped to [−1, 1];
    - q is Student's t at the Satterthwaite degrees of freedom of s², 2N/(kurtosis − 1),
      within [1, N − 1] (a few tasks that carry all the spread, as a mostly-floor pool's,
      leave few degrees of freedom: the small-n correction Bowyer, Aitchison and Ivanova
      2025, arXiv:2503.01747, ask for), and z where V is a bound rather than an estimate.

    No interval under :data:`MIN_CI_TASKS` tasks. Deterministic: the same rows always print
    the same interval.
    """
    values = np.asarray(values, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.int64)
    floor = np.asarray(floor, dtype=np.float64)
    order = np.lexsort((floor, counts, values))  # a canonical order: input order never matters
    values, counts, floor = values[order], counts[order], floor[order]
    n_tasks = int(counts.sum())
    if n_tasks == 0:
        return Rate(None, None, None, 0, n_rows, "none", "no tasks")
    mean = float(np.dot(values, counts) / n_tasks)
    if n_tasks < MIN_CI_TASKS:
        why = f"{n_tasks} task{'s' if n_tasks != 1 else ''}: an interval needs {MIN_CI_TASKS}"
        return Rate(mean, None, None, n_tasks, n_rows, "none", why)
    dev = values - mean
    ss = float(np.dot(counts, dev * dev))
    s2 = ss / (n_tasks - 1)
    f = float(np.dot(counts, floor) / n_tasks)
    var = max(s2, f) / n_tasks
    estimated = s2 >= f and ss > 0
    z = Z95
    if estimated:
        kurt = n_tasks * float(np.dot(counts, dev**4)) / (ss * ss)
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
    low, high = _wilson_bounds(mean, n_eff, z)
    return Rate(mean, min(low, mean), max(high, mean), n_tasks, n_rows, "clustered")


def rate_from_cells(
    values: np.ndarray,
    counts: np.ndarray,
    n_rows: int,
    *,
    draws: int = BOOTSTRAP_DRAWS,
    seed: int = 0,
    floor: np.ndarray | None = None,
    signed: bool = False,
) -> Rate:
    """A mean over tasks with its interval (:func:`task_interval`; none under
    :data:`MIN_CI_TASKS` tasks). ``draws`` and ``seed`` are kept for callers that pass them:
    the interval is computed, not resampled."""
    del draws, seed
    values = np.asarray(values, dtype=np.float64)
    floor = np.zeros_like(values) if floor is None else floor
    return task_interval(values, counts, floor, n_rows, signed=signed)


#: The last frame :func:`cell_arrays` grouped and its cells: a route asks for the cells of one
#: pool some ten times, and a million tasks take tens of milliseconds each.
_LAST_CELLS: list[tuple[weakref.ref[pl.DataFrame], int, Cells]] = []


def cell_arrays(tasks: pl.DataFrame) -> Cells:
    """Distinct ``(passes, n)`` cells of a per-task frame as arrays ``(passes, n, tasks)``,
    sorted by ``n`` then ``passes``: the one grouping every statistic sums over (in numpy, as
    a route on a pool is many small sums and a polars query each would dominate them). The
    arrays are read-only: the cells of the last frame asked for are kept and handed out
    again."""
    if _LAST_CELLS:
        ref, height, found = _LAST_CELLS[0]
        if ref() is tasks and height == tasks.height:
            return found
    out = _cell_arrays(tasks)
    for array in out:
        array.flags.writeable = False
    _LAST_CELLS[:] = [(weakref.ref(tasks), tasks.height, out)]
    return out


def _cell_arrays(tasks: pl.DataFrame) -> Cells:
    if tasks.height == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy(), empty.copy()
    c = tasks["passes"].to_numpy().astype(np.int64)
    n = tasks["n"].to_numpy().astype(np.int64)
    width = int(c.max()) + 1
    key = n * width + c
    top = int(key.max())
    if top <= 4 * key.size + 65_536:  # a dense key: count it in one pass, no sort
        tally = np.bincount(key, minlength=top + 1)
        uniq = np.flatnonzero(tally)
        counts = tally[uniq]
    else:
        uniq, counts = np.unique(key, return_counts=True)
    return uniq % width, uniq // width, counts.astype(np.int64)


def cells(tasks: pl.DataFrame) -> pl.DataFrame:
    """Distinct ``(passes, n)`` cells of a per-task frame with the number of tasks in each."""
    c, n, counts = cell_arrays(tasks)
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
    c, n, counts = cell_arrays(tasks)
    passes = c.astype(np.float64)
    size = n.astype(np.float64)
    n_rows = int(np.dot(n, counts))
    if prior is None and counts.size:
        prior = fit_beta(c, n, counts)
    floor = draw_floor(passes, size, prior)
    return task_interval(passes / np.maximum(size, 1.0), counts, floor, n_rows)


#: Up to this k, C(m, k)/C(n, k) is the product of its k factors; past it, log-gamma's
#: closed form (the cost no longer grows with k: a summary claiming 10^9 rollouts per task).
PRODUCT_K = 64


def _comb_ratio(m: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """C(m, k)/C(n, k) for 0 ≤ m ≤ n, n ≥ k: Π_{j<k} (m−j)/(n−j) for k ≤ :data:`PRODUCT_K`,
    else exp(lnΓ(m+1) − lnΓ(m−k+1) − lnΓ(n+1) + lnΓ(n−k+1)); 0 where m < k, 1 where m = n.
    """
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


def pass_at_k_estimate(c: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """Unbiased pass@k per task: 1 − C(n−c, k)/C(n, k) (Chen et al. 2021, eq. 1); needs n ≥ k."""
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
    x = lgamma(np.array([a + k, a, a + b + k, a + b], dtype=np.float64))
    return float(np.exp(min(x[0] - x[1] - x[2] + x[3], 0.0)))


def prior_spread(prior: BetaPrior, k: int) -> tuple[float, float]:
    """The variance over tasks of pass@k = 1 − (1−p)^k and of pass^k = p^k for p ~ the
    pool's fitted Beta: Var = E[x^{2k}] − E[x^k]² with x = 1 − p and x = p."""
    a, b = prior.a, prior.b
    at_k = _beta_moment(b, a, 2 * k) - _beta_moment(b, a, k) ** 2
    hat_k = _beta_moment(a, b, 2 * k) - _beta_moment(a, b, k) ** 2
    return max(at_k, 0.0), max(hat_k, 0.0)


def pass_k_floor(
    passes: np.ndarray, n: np.ndarray, k: int, prior: BetaPrior | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per task, the variance its n draws alone give its unbiased pass@k and pass^k: Var of
    the estimator over c ~ Binomial(n, p̃), p̃ the task's posterior mean (c + a)/(n + a + b)
    under the pool's Beta(a, b) prior (uniform when ``prior`` is None), summed over c exactly.
    At k = 1 it is pass@1's :func:`draw_floor`, p̃(1−p̃)/n. As there, a task seen at 0 in a
    pool whose tasks mostly never pass is put near 0, as the pool says it is, and a task of
    one row has no floor."""
    a, b = (1.0, 1.0) if prior is None else (prior.a, prior.b)
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
    mostly at one end has a heavier tail than the pool, and pass@k covered 98% to 99% there."""
    c, n, counts = cell_arrays(tasks)
    if prior is None and counts.size:
        prior = fit_beta(c, n, counts)
    keep = n >= k
    c, n, counts = c[keep], n[keep], counts[keep]
    n_rows = int(np.dot(n, counts)) if counts.size else 0
    at_floor, hat_floor = pass_k_floor(c, n, k, prior)
    at_k = rate_from_cells(pass_at_k_estimate(c, n, k), counts, n_rows, floor=at_floor)
    hat_k = rate_from_cells(pass_hat_k_estimate(c, n, k), counts, n_rows, floor=hat_floor)
    return at_k, hat_k


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


#: The prior's mean and concentration grids (logit and log spaced) for the fit.
_FIT_MEANS = 1.0 / (1.0 + np.exp(-np.linspace(-11.0, 11.0, 89)))
_FIT_CONC = np.exp(np.linspace(math.log(1e-3), math.log(1e5), 65))


#: Largest group size for which :func:`fit_beta` sums logs instead of calling lgamma.
_FINITE_SUMS = 256


def _finite_ll(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, n: np.ndarray, m: np.ndarray, top: int
) -> np.ndarray:
    """Σ_cells m · log[B(c + a, n − c + b)/B(a, b)] at every (a, b) of a grid, as the finite
    sums Σ_{j<c} log(a + j) + Σ_{j<n−c} log(b + j) − Σ_{j<n} log(a + b + j): exact, and
    cheaper than six lgamma calls per cell when groups are small (``top`` the largest n)."""
    steps = np.arange(top, dtype=np.float64)

    def cumulative(x: np.ndarray) -> np.ndarray:
        logs = np.log(x[..., None] + steps)
        out = np.zeros((*x.shape, top + 1), dtype=np.float64)
        np.cumsum(logs, axis=-1, out=out[..., 1:])
        return out

    ci, ni = c.astype(np.int64), n.astype(np.int64)
    ll = cumulative(a)[..., ci] + cumulative(b)[..., ni - ci] - cumulative(a + b)[..., ni]
    return ll @ m


def fit_beta(passes: np.ndarray, n: np.ndarray, counts: np.ndarray) -> BetaPrior:
    """The Beta prior that maximises the pool's beta-binomial likelihood (empirical Bayes).

    Σ_cells m · [log B(c + a, n − c + b) − log B(a, b)] over a grid of means (logit spaced,
    1.7e-5 to 1 − 1.7e-5) and concentrations a + b (1e-3 to 1e5, log spaced), then refined
    once on a finer grid around the best point. Tasks all at 0 put the mean at the grid's
    low end; tasks only at 0 and 1 put the concentration near 0 (the tasks never split).
    """
    c = np.asarray(passes, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    m = np.asarray(counts, dtype=np.float64)
    key = (c.tobytes(), n.tobytes(), m.tobytes())
    known = _FITTED.get(key)
    if known is None:
        known = _fit(c, n, m)
        if len(_FITTED) >= _FITTED_MAX:
            _FITTED.pop(next(iter(_FITTED)))
        _FITTED[key] = known
    return known


#: Priors fitted to recent pools, by their cells: one route fits the same tasks for pass@1,
#: the band, pass@k and the summary, and fits them once.
_FITTED: dict[tuple[bytes, bytes, bytes], BetaPrior] = {}
_FITTED_MAX = 64


def _fit(c: np.ndarray, n: np.ndarray, m: np.ndarray) -> BetaPrior:
    """:func:`fit_beta` on float arrays, uncached."""
    top = int(n.max()) if n.size else 0

    def best(means: np.ndarray, concs: np.ndarray) -> tuple[float, float]:
        mu = means[:, None, None]
        kappa = concs[None, :, None]
        a, b = mu * kappa, (1.0 - mu) * kappa
        if top <= _FINITE_SUMS:
            total = _finite_ll(a[..., 0], b[..., 0], c, n, m, top)
        else:
            ll = lgamma(c + a) + lgamma(n - c + b) - lgamma(n + kappa)
            ll = ll - lgamma(a) - lgamma(b) + lgamma(kappa)
            total = ll @ m
        i, j = np.unravel_index(int(np.argmax(total)), total.shape)
        return float(means[i]), float(concs[j])

    mu, kappa = best(_FIT_MEANS, _FIT_CONC)
    logit = math.log(mu / (1.0 - mu))
    fine_means = 1.0 / (1.0 + np.exp(-np.linspace(logit - 0.25, logit + 0.25, 21)))
    fine_conc = np.exp(np.linspace(math.log(kappa) - 0.15, math.log(kappa) + 0.15, 21))
    mu, kappa = best(fine_means, fine_conc)
    return BetaPrior(mu * kappa, (1.0 - mu) * kappa)


def expected_split(
    s: np.ndarray, f: np.ndarray, k: int, prior: BetaPrior | None = None
) -> np.ndarray:
    """E[1 − p^k − (1−p)^k] for p ~ Beta(a + s, b + f): the chance k fresh rollouts disagree.

    ``prior`` is Beta(a, b) (the pool's, from :func:`fit_beta`; None: the uniform Beta(1, 1)).
    Closed form: 1 − E[p^k] − E[(1−p)^k], where the k-th moment is Π_{j<k} (a+j)/(a+b+j),
    exact in k factors. Check value: s=0, f=2, k=8 under the uniform prior → 0.7212.
    """
    a0, b0 = (1.0, 1.0) if prior is None else (prior.a, prior.b)
    a = a0 + np.asarray(s, dtype=np.float64)
    b = b0 + np.asarray(f, dtype=np.float64)
    up = np.ones(np.broadcast(a, b).shape, dtype=np.float64)
    down = up.copy()
    for j in range(k):
        up = up * (a + j) / (a + b + j)
        down = down * (b + j) / (a + b + j)
    return np.clip(1.0 - up - down, 0.0, 1.0)


def pool_prior(tasks: pl.DataFrame) -> BetaPrior | None:
    """The Beta prior fitted to a per-task frame's counts (None with no task)."""
    if tasks.height == 0:
        return None
    return fit_beta(*cell_arrays(tasks))


def expected_split_share(
    tasks: pl.DataFrame, k: int, prior: BetaPrior | None = None
) -> float | None:
    """Mean over the given tasks of :func:`expected_split` at k, each task's posterior under
    the prior fitted to these tasks (``prior``, else :func:`pool_prior`); None with no task."""
    if tasks.height == 0:
        return None
    s, n, counts = cell_arrays(tasks)
    f = n - s
    if prior is None:
        prior = fit_beta(s, n, counts)
    return float(np.dot(expected_split(s, f, k, prior), counts) / counts.sum())


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
    c, n, tally = cell_arrays(tasks)  # binned per cell, each weighted by its tasks
    index = np.minimum((bins * c) // n, bins - 1)
    counts = np.zeros(bins, dtype=np.int64)
    np.add.at(counts, index, tally)
    return {
        "edges": edges,
        "counts": [int(x) for x in counts],
        "at_0": int(tally[c == 0].sum()),
        "at_1": int(tally[c == n].sum()),
        "tasks": int(tasks.height),
    }
