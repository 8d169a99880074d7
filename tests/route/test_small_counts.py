"""Intervals of a rate that a few tasks carry: Wilson's dip at counts of 1 to 3.

A pass^4 over tasks of 4 draws is a count: a task passes all four or it does not. Where the
truth is about one such task in the pool (pass^4 of 0.005 over 20 to 35 tasks of a low
band), Wilson's lower bound at one task (about 0.17/N) sits over the truth, and the interval
covered 84% to 91% of pools. The exact coverage of the route's interval is summed here over
the count's binomial distribution, for every pool size from 10 to 60 tasks and true values
across the dip, on both ends (a few tasks at 1, a few short of 1). Brown, Cai and DasGupta
(2001) take the bound at such a count (1 to 4 here) from its Poisson limit; Wilson's alone
fails here.
"""

from __future__ import annotations

import importlib
import math

import polars as pl
import pytest

from whilecli.route import stats

K = 4
#: True values per task count N: λ/N for λ across the dips of counts 1 to 4 (Wilson's lower
#: bounds at one to four tasks lie near 0.17/N, 0.55/N, 1.02/N and 1.55/N).
LAMBDAS = [0.1, 0.17, 0.3, 0.55, 0.7, 1.0, 1.2, 1.55, 2.0]
SIZES = [10, 20, 35, 60]


def _pool(x: int, size: int, top: bool) -> pl.DataFrame:
    """``x`` tasks at the rare end, the rest at the other: pass^4's rare end is a task that
    passes all K draws; pass@4's (``top``) is a task that passes none."""
    rare, common = (0, K) if top else (K, 0)
    passes = [rare] * x + [common] * (size - x)
    return pl.DataFrame(
        {
            "task_id": [f"t{i}" for i in range(size)],
            "n": pl.Series([K] * size, dtype=pl.Int64),
            "passes": pl.Series(passes, dtype=pl.Int64),
        }
    )


def _bounds(size: int, top: bool) -> list[tuple[float, float]]:
    """pass^4's interval (pass@4's for ``top``) of the pools of 0 to 12 rare tasks."""
    out = []
    for x in range(min(size, 12) + 1):
        stats._LAST_CELLS.clear()
        at_k, hat_k = stats.pass_k_rates(_pool(x, size, top), K)
        rate = at_k if top else hat_k
        assert rate.low is not None and rate.high is not None
        out.append((rate.low, rate.high))
    return out


def _coverage(size: int, lam: float, bounds: list[tuple[float, float]], top: bool) -> float:
    """The chance that the interval holds the truth, x ~ Binomial(size, λ/size) rare tasks:
    the truth is λ/size (pass^4) or 1 − λ/size (pass@4)."""
    rare = lam / size
    truth = 1.0 - rare if top else rare
    total = 0.0
    for x, (low, high) in enumerate(bounds):
        weight = math.comb(size, x) * rare**x * (1.0 - rare) ** (size - x)
        total += weight * (low - 1e-12 <= truth <= high + 1e-12)
    return total


def _worst(top: bool) -> tuple[float, int, float]:
    cells = []
    for size in SIZES:
        bounds = _bounds(size, top)
        cells += [(_coverage(size, lam, bounds, top), size, lam) for lam in LAMBDAS]
    return min(cells)


@pytest.mark.parametrize("top", [False, True], ids=["pass^4, few at 1", "pass@4, few at 0"])
def test_a_rate_a_few_tasks_carry_holds_its_coverage(top: bool) -> None:
    worst, size, lam = _worst(top)
    assert worst >= 0.93, f"{size} tasks, truth {lam}/{size}: covers {worst:.3f}"


def test_wilson_alone_dips_there(monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module("whilecli.route.stats")
    monkeypatch.setattr(module, "modified_wilson", module._wilson_bounds)
    worst, _, _ = _worst(False)
    assert worst < 0.9


def test_the_poisson_bound_matches_scipy() -> None:
    special = pytest.importorskip("scipy.special")  # scipy.stats' gamma.ppf, lighter to load
    for a in (0.05, 0.4, 1.0, 1.5, 2.0, 2.7, 3.0, 12.0):
        for q in (1e-6, 0.01, 0.05, 0.5, 0.95):
            want = float(special.gammaincinv(a, q))
            assert stats.gamma_quantile(a, q) == pytest.approx(want, rel=1e-9)
            assert stats.gamma_p(a, want) == pytest.approx(q, rel=1e-9)
