"""Independent slow references for the route's statistics: plain per-task loops and scipy.

Every formula of :mod:`whilecli.route.stats` is restated here from DESIGN section 2 with one
loop per task and scipy's distributions, so the fast cell-based code is held to it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable

import numpy as np
from scipy import integrate, optimize
from scipy import stats as sps
from scipy.special import betaln


def slow_floor(c: int, n: int, a: float = 1.0, b: float = 1.0) -> float:
    """The draws' variance of one task's rate: p̃(1−p̃)/n, p̃ = (c + a)/(n + a + b), the
    task's posterior mean under Beta(a, b) (the uniform prior by default)."""
    if n < 2:
        return 0.0
    p = (c + a) / (n + a + b)
    return p * (1 - p) / n


def slow_paired_floor(
    pairs: list[tuple[int, int]], prior: tuple[float, float] | None = None
) -> list[float]:
    """Each task's draws' variance in a paired comparison, one run's: E[p(1−p) | c of n]/n
    under the run's fitted Beta(a, b) (``prior``, else fitted here), task by task: the
    posterior Beta(c + a, n − c + b) has mean m and E[p²] = m(m·(A + n) + 1)/(A + n + 1),
    A = a + b, so E[p(1−p)] = m − E[p²]. Every task of one row: the pool mean's μ(1−μ),
    the spread unknown."""
    if all(n < 2 for _, n in pairs):
        mu = sum(c / max(n, 1) for c, n in pairs) / len(pairs)
        return [mu * (1 - mu) / max(n, 1) for _, n in pairs]
    a, b = prior if prior is not None else slow_fit_beta(pairs)
    out = []
    for c, n in pairs:
        alpha, beta = c + a, n - c + b
        m = alpha / (alpha + beta)
        second = alpha * (alpha + 1) / ((alpha + beta) * (alpha + beta + 1))
        out.append((m - second) / n)
    return out


def slow_interval(
    values: list[float],
    floors: list[float],
    rows: int,
    *,
    signed: bool = False,
    prior_var: float = 0.0,
) -> tuple[float, float]:
    """The clustered interval of a task mean, one task at a time (scipy's t quantile);
    ``prior_var``, where given, counts in the sample variance as one task's spread more."""
    n = len(values)
    mean = sum(values) / n
    ss = sum((v - mean) ** 2 for v in values)
    s2 = (ss + prior_var) / n if prior_var > 0 else ss / (n - 1)
    f = sum(floors) / n
    var = max(s2, f) / n
    z = 1.96
    if s2 >= f and ss > 0:
        kurt = n * sum((v - mean) ** 4 for v in values) / ss**2
        df = n - 1 if kurt <= 1 else min(n - 1, max(1.0, 2 * n / (kurt - 1)))
        z = float(sps.t.ppf(0.975, df))
    if signed:
        half = z * math.sqrt(var)
        return max(-1.0, mean - half), min(1.0, mean + half)
    spread = mean * (1 - mean)
    if spread <= 0 or var <= 0:
        n_eff, z = float(n), 1.96
    else:
        raw = spread / var
        n_eff = min(max(raw, n), max(rows, n))
        if n_eff != raw:
            z = 1.96
    d = 1 + z * z / n_eff
    centre = (mean + z * z / (2 * n_eff)) / d
    half = z * math.sqrt(mean * (1 - mean) / n_eff + z * z / (4 * n_eff * n_eff)) / d
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    # Brown, Cai and DasGupta's modified Wilson: a count of 1 to 3 takes its Poisson bound
    few = 4.0
    tail = 2 * float(sps.norm.cdf(-z))
    x, y = mean * n_eff, (1 - mean) * n_eff
    if 0 < x <= few + 1e-9 and x < y:
        low = min(low, float(sps.gamma.ppf(tail, x)) / n_eff)
    if 0 < y <= few + 1e-9 and y < x:
        high = max(high, 1 - float(sps.gamma.ppf(tail, y)) / n_eff)
    return min(low, mean), max(high, mean)


def slow_pass_at_1(
    pairs: list[tuple[int, int]], a: float | None = None, b: float | None = None
) -> tuple[float, float]:
    """pass@1's interval from ``[(passes, n), ...]``, each task's floor under Beta(a, b):
    by default the pool's fitted prior (the fit is held to scipy's optimiser on its own, by
    ``slow_fit_beta``)."""
    if a is None or b is None:
        from whilecli.route.stats import fit_beta

        cells = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        prior = fit_beta(cells[:, 0], cells[:, 1], np.ones(len(pairs), dtype=np.int64))
        a, b = prior.a, prior.b
    values = [c / n for c, n in pairs]
    floors = [slow_floor(c, n, a, b) for c, n in pairs]
    return slow_interval(values, floors, sum(n for _, n in pairs))


def slow_fit_beta(pairs: list[tuple[int, int]]) -> tuple[float, float]:
    """The beta-binomial maximum-likelihood Beta(a, b), by scipy's optimiser from many
    starts over the same box as the fast fit (mean in logit ±11, concentration 1e-3..1e5)."""

    # each distinct (c, n) once, weighted by how many tasks show it: the same likelihood
    counted = Counter(pairs)
    cs = np.array([c for c, _ in counted])
    ns = np.array([n for _, n in counted])
    ws = np.array(list(counted.values()), dtype=float)

    def nll(theta: np.ndarray) -> float:
        mu = 1 / (1 + math.exp(-theta[0]))
        kappa = math.exp(theta[1])
        return -float(np.sum(ws * sps.betabinom.logpmf(cs, ns, mu * kappa, (1 - mu) * kappa)))

    best = None
    for x0 in (-6.0, -2.0, 0.0, 2.0, 6.0):
        for y0 in (-4.0, 0.0, 3.0, 8.0):
            res = optimize.minimize(
                nll, np.array([x0, y0]), method="L-BFGS-B",
                bounds=[(-11.0, 11.0), (math.log(1e-3), math.log(1e5))],
            )  # fmt: skip
            if best is None or res.fun < best.fun:
                best = res
    assert best is not None
    mu = 1 / (1 + math.exp(-best.x[0]))
    kappa = math.exp(best.x[1])
    return mu * kappa, (1 - mu) * kappa


def slow_split(s: int, f: int, k: int, a: float, b: float) -> float:
    """E[1 − p^k − (1−p)^k] under Beta(a + s, b + f): by quadrature where the posterior is
    spread out, by scipy's log-beta moments where it is too narrow for quadrature."""
    a, b = a + s, b + f
    if a + b > 1e3:
        up = math.exp(betaln(a + k, b) - betaln(a, b))
        down = math.exp(betaln(a, b + k) - betaln(a, b))
        return 1 - up - down
    dist = sps.beta(a, b)
    value, _ = integrate.quad(lambda p: (1 - p**k - (1 - p) ** k) * dist.pdf(p), 0, 1, limit=200)
    return value


def slow_pass_k(
    pairs: list[tuple[int, int]], k: int, a: float, b: float
) -> tuple[tuple[float, float], tuple[float, float]]:
    """pass@k's and pass^k's intervals from ``[(passes, n), ...]`` (tasks with n ≥ k), one
    task at a time: scipy's comb for the unbiased estimators, and each task's spread floored
    at its estimator's variance over c' ~ Binomial(n, p̃), p̃ = (c + a)/(n + a + b) its
    posterior mean under Beta(a, b) (scipy's binomial pmf, a loop over c'), and the tasks'
    variance under Beta(a, b) itself counted as one task more (moments by scipy's betaln)."""
    from scipy.special import comb

    kept = [(c, n) for c, n in pairs if n >= k]

    def at_est(c: int, n: int) -> float:
        return 1 - comb(n - c, k, exact=True) / comb(n, k, exact=True)

    def hat_est(c: int, n: int) -> float:
        return comb(c, k, exact=True) / comb(n, k, exact=True)

    def floor(c: int, n: int, est: Callable[[int, int], float]) -> float:
        if n < 2:
            return 0.0
        smooth = (c + a) / (n + a + b)
        pmf = [float(sps.binom.pmf(j, n, smooth)) for j in range(n + 1)]
        first = sum(w * est(j, n) for j, w in enumerate(pmf))
        second = sum(w * est(j, n) ** 2 for j, w in enumerate(pmf))
        return max(second - first * first, 0.0)

    def moment(x: float, y: float, j: int) -> float:  # E[q^j], q ~ Beta(x, y)
        return math.exp(betaln(x + j, y) - betaln(x, y))

    at_var = max(moment(b, a, 2 * k) - moment(b, a, k) ** 2, 0.0)  # of 1 − (1 − p)^k
    hat_var = max(moment(a, b, 2 * k) - moment(a, b, k) ** 2, 0.0)  # of p^k
    rows = sum(n for _, n in kept)
    return (
        slow_interval(
            [at_est(c, n) for c, n in kept],
            [floor(c, n, at_est) for c, n in kept],
            rows,
            prior_var=at_var,
        ),
        slow_interval(
            [hat_est(c, n) for c, n in kept],
            [floor(c, n, hat_est) for c, n in kept],
            rows,
            prior_var=hat_var,
        ),
    )
