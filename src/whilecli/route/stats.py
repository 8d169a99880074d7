"""The statistics of ``while route``: pass@1, pass@k, pass^k, shares and the held-out size.

Every interval is computed over TASKS, never rows (a task's rollouts are correlated).
Per-task statistics take few distinct values (a task with ``c`` passes in ``n`` rollouts
has rate ``c/n``), so the bootstrap works on the distinct ``(c, n)`` cells: resampling
``N`` tasks with replacement is a multinomial draw of ``N`` over the cells with
probabilities ``count_j / N``, and the resampled mean is ``Σ m_j v_j / N``. This is the
same distribution as the plain resample-the-task-indices bootstrap (Efron 1979) at a cost
that does not grow with the number of tasks.

References:
- pass@k = 1 − C(n−c, k)/C(n, k), the unbiased estimator of Chen et al. 2021
  (arXiv:2107.03374, eq. 1); pass^k = C(c, k)/C(n, k) (Yao et al. 2024, τ-bench,
  arXiv:2406.12045).
- Wilson score interval (Wilson 1927), z = 1.96.
- The chance that k fresh rollouts of a task disagree: E[1 − p^k − (1−p)^k] under the
  posterior Beta(1+s, 1+f) of a task with s passes and f fails (DAPO's "dynamic sampling"
  signal; Yu et al. 2025, arXiv:2503.14476).
- Held-out size for a two-arm comparison of pass rates: n = ⌈((z₁₋α/₂ + z_power)·sd/δ)²⌉.

The binomial ratios and beta moments are exact finite products (k ≤ 32 factors), and the
normal quantiles come from the standard library: ``while route`` then starts without loading
``scipy.stats`` (about 0.9 s of imports). The tests check every one of them against scipy.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
import polars as pl

from whilecli.route.model import Rate

#: Fewest tasks for which an interval is given.
MIN_CI_TASKS = 3
#: Bootstrap resamples by default.
BOOTSTRAP_DRAWS = 2000
#: z for a two-sided 95% interval, as the reference prints it.
_Z95 = 1.96
#: Most multinomial cells drawn at once (draws × cells) to bound memory.
_CHUNK_CELLS = 4_000_000


def _percentile_bounds(means: np.ndarray) -> tuple[float, float]:
    """The 95% percentile interval of bootstrap means: sorted[⌊0.025·D⌋], sorted[⌊0.975·D⌋−1]."""
    ordered = np.sort(means)
    draws = ordered.size
    return float(ordered[int(0.025 * draws)]), float(ordered[int(0.975 * draws) - 1])


def bootstrap_mean_ci(
    values: np.ndarray, counts: np.ndarray, *, draws: int = BOOTSTRAP_DRAWS, seed: int = 0
) -> tuple[float, float]:
    """95% percentile bootstrap interval of a mean over ``N = Σ counts`` tasks.

    ``values[j]`` is the statistic of every task in cell ``j`` and ``counts[j]`` how many
    tasks share it. Each draw resamples ``N`` tasks with replacement as one multinomial draw
    over the cells, so the cost is O(draws × cells), independent of ``N``. Seeded: the same
    cells always give the same interval.
    """
    values = np.asarray(values, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.int64)
    order = np.lexsort((counts, values))  # a canonical cell order: input order never matters
    values, counts = values[order], counts[order]
    total = int(counts.sum())
    probs = counts / total
    rng = np.random.default_rng(seed)
    per_chunk = max(1, _CHUNK_CELLS // max(1, values.size))
    means = np.empty(draws, dtype=np.float64)
    for start in range(0, draws, per_chunk):
        stop = min(draws, start + per_chunk)
        picks = rng.multinomial(total, probs, size=stop - start)
        means[start:stop] = picks @ values / total
    return _percentile_bounds(means)


def rate_from_cells(
    values: np.ndarray,
    counts: np.ndarray,
    n_rows: int,
    *,
    draws: int = BOOTSTRAP_DRAWS,
    seed: int = 0,
) -> Rate:
    """A mean over tasks with its bootstrap interval (none under :data:`MIN_CI_TASKS` tasks).

    When every task sits at 0 or every task at 1 the bootstrap has nothing to resample, and
    the Wilson interval over the task count is given instead (``interval = "wilson"``).
    """
    values = np.asarray(values, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.int64)
    n_tasks = int(counts.sum())
    if n_tasks == 0:
        return Rate(None, None, None, 0, n_rows, "none", "no tasks")
    order = np.lexsort((counts, values))
    value = float(np.dot(values[order], counts[order]) / n_tasks)
    if n_tasks < MIN_CI_TASKS:
        why = f"{n_tasks} task{'s' if n_tasks != 1 else ''}: an interval needs {MIN_CI_TASKS}"
        return Rate(value, None, None, n_tasks, n_rows, "none", why)
    if np.all(values == 0.0) or np.all(values == 1.0):
        # Every task at the same boundary rate: each resample repeats it, so the percentile
        # bootstrap collapses to a point (5 tasks all passing would claim [1, 1]). The
        # Wilson interval over tasks keeps the uncertainty of having seen only n_tasks.
        wide = wilson(int(round(value * n_tasks)), n_tasks, n_rows=n_rows)
        return Rate(value, wide.low, wide.high, n_tasks, n_rows, "wilson")
    low, high = bootstrap_mean_ci(values, counts, draws=draws, seed=seed)
    return Rate(value, low, high, n_tasks, n_rows, "bootstrap")


def cells(tasks: pl.DataFrame) -> pl.DataFrame:
    """Distinct ``(passes, n)`` cells of a per-task frame with the number of tasks in each."""
    return (
        tasks.group_by(["passes", "n"])
        .agg(tasks=pl.len())
        .sort(["n", "passes"])
        .with_columns(pl.col("tasks").cast(pl.Int64))
    )


def pass_at_1(tasks: pl.DataFrame, *, draws: int = BOOTSTRAP_DRAWS, seed: int = 0) -> Rate:
    """pass@1 = mean over tasks of the per-task pass rate c/n, with a bootstrap over tasks."""
    grid = cells(tasks)
    passes = grid["passes"].to_numpy().astype(np.float64)
    n = grid["n"].to_numpy().astype(np.float64)
    n_rows = int(tasks["n"].sum()) if tasks.height else 0
    return rate_from_cells(passes / n, grid["tasks"].to_numpy(), n_rows, draws=draws, seed=seed)


def _comb_ratio(m: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """C(m, k)/C(n, k) for 0 ≤ m ≤ n, n ≥ k, as Π_{j<k} (m−j)/(n−j).

    The product reaches an exact 0 at j = m when m < k, so it is 0 there as it must be.
    """
    m = np.asarray(m, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    ratio = np.ones(np.broadcast(m, n).shape, dtype=np.float64)
    for j in range(k):
        ratio = ratio * np.maximum(m - j, 0.0) / (n - j)
    return ratio


def pass_at_k_estimate(c: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """Unbiased pass@k per task: 1 − C(n−c, k)/C(n, k) (Chen et al. 2021, eq. 1); needs n ≥ k."""
    c = np.asarray(c, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    return 1.0 - _comb_ratio(n - c, n, k)


def pass_hat_k_estimate(c: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """Unbiased pass^k per task (all k of k pass): C(c, k)/C(n, k); needs n ≥ k."""
    return _comb_ratio(c, n, k)


def pass_k_rates(
    tasks: pl.DataFrame, k: int, *, draws: int = BOOTSTRAP_DRAWS, seed: int = 0
) -> tuple[Rate, Rate]:
    """pass@k and pass^k over the tasks with at least k rollouts, bootstrapped over tasks."""
    grid = cells(tasks.filter(pl.col("n") >= k))
    c = grid["passes"].to_numpy()
    n = grid["n"].to_numpy()
    counts = grid["tasks"].to_numpy()
    n_rows = int(np.dot(n, counts)) if counts.size else 0
    at_k = rate_from_cells(pass_at_k_estimate(c, n, k), counts, n_rows, draws=draws, seed=seed)
    hat_k = rate_from_cells(pass_hat_k_estimate(c, n, k), counts, n_rows, draws=draws, seed=seed)
    return at_k, hat_k


def wilson(
    successes: int, n: int, *, n_tasks: int | None = None, n_rows: int | None = None
) -> Rate:
    """A share with its 95% Wilson score interval (Wilson 1927), z = 1.96.

    With p = s/n and d = 1 + z²/n: centre (p + z²/2n)/d, half-width z·√(p(1−p)/n + z²/4n²)/d,
    clipped to [0, 1]. Equal to scipy's ``binomtest(s, n).proportion_ci(method="wilson")``
    (the tests check it); written out so that routing never imports ``scipy.stats``.

    ``n`` is the number of units the share is over; ``n_tasks``/``n_rows`` say what the
    report prints as the sample (a share of tasks prints its tasks, a share of rows its rows).
    """
    tasks = n if n_tasks is None else n_tasks
    rows = n if n_rows is None else n_rows
    if n <= 0:
        return Rate(None, None, None, tasks, rows, "none", "nothing to count")
    z = _Z95
    p = successes / n
    d = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return Rate(p, max(0.0, centre - half), min(1.0, centre + half), tasks, rows, "wilson")


def expected_split(s: np.ndarray, f: np.ndarray, k: int) -> np.ndarray:
    """E[1 − p^k − (1−p)^k] for p ~ Beta(1+s, 1+f): the chance k fresh rollouts disagree.

    Closed form: 1 − B(a+k, b)/B(a, b) − B(a, b+k)/B(a, b) with a = 1+s, b = 1+f, where the
    beta-function ratio is the k-th moment E[p^k] = Π_{j<k} (a+j)/(a+b+j), exact in k
    factors. Check value: s=0, f=2, k=8 → 0.7212.
    """
    a = 1.0 + np.asarray(s, dtype=np.float64)
    b = 1.0 + np.asarray(f, dtype=np.float64)
    up = np.ones(np.broadcast(a, b).shape, dtype=np.float64)
    down = up.copy()
    for j in range(k):
        up = up * (a + j) / (a + b + j)
        down = down * (b + j) / (a + b + j)
    return 1.0 - up - down


def expected_split_share(tasks: pl.DataFrame, k: int) -> float | None:
    """Mean over the given tasks of :func:`expected_split` at k (None with no task)."""
    if tasks.height == 0:
        return None
    grid = cells(tasks)
    s = grid["passes"].to_numpy()
    f = grid["n"].to_numpy() - s
    counts = grid["tasks"].to_numpy()
    return float(np.dot(expected_split(s, f, k), counts) / counts.sum())


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
    c = tasks["passes"].to_numpy().astype(np.int64)
    n = tasks["n"].to_numpy().astype(np.int64)
    index = np.minimum((bins * c) // n, bins - 1)
    counts = np.bincount(index, minlength=bins)
    return {
        "edges": edges,
        "counts": [int(x) for x in counts],
        "at_0": int((c == 0).sum()),
        "at_1": int((c == n).sum()),
        "tasks": int(tasks.height),
    }
