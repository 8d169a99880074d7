"""Paired comparison of two dumps of the same tasks, and the held-out size it implies.

Two evaluations of one set of tasks (before and after a change) are compared task by task:
the per-task difference ``d_t = c_t^after/n_t^after − c_t^before/n_t^before`` removes the
spread of task difficulty that an unpaired comparison carries, so its mean (the pass@1
difference) has a tighter interval than the two pass@1 intervals suggest.

- Paired difference: mean of ``d_t`` over the shared tasks with the signed interval of the
  one machinery (:func:`whilecli.route.stats.task_interval`): the spread of the ``d_t``,
  never less than the two runs' draws alone give them, so two identical runs get an
  interval around 0, not a point.
- Flips: tasks that went from all-fail to some-pass (gained) and from some-pass to all-fail
  (lost).
- Measured held-out size (DESIGN section 2, the ``holdout_size`` formula with a measured
  sd): n = max(2, ⌈((z₁₋α/₂ + z_power)·sd/effect)²⌉) with ``sd`` the sample standard
  deviation (n − 1) of the ``d_t``, never below the draws' noise of the two runs
  (p(1−p)/k per run and task under each run's fitted prior, one draw included,
  :func:`whilecli.route.stats.paired_floor`); its range is the 95% percentile interval of n over
  bootstrap resamples of the tasks (each resample's sample sd put through the formula).
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
import polars as pl

from whilecli.errors import InputError
from whilecli.route import stats
from whilecli.route.model import Rate
from whilecli.route.shared import Tally, tally

_CHUNK_CELLS = 4_000_000


def pair_tasks(before: pl.DataFrame, after: pl.DataFrame) -> pl.DataFrame:
    """Tasks in both per-task frames (``task_id``, ``n``, ``passes``), sorted by task id:
    columns ``task_id, n_before, passes_before, n_after, passes_after``."""
    b = before.select(
        "task_id", pl.col("n").alias("n_before"), pl.col("passes").alias("passes_before")
    )
    a = after.select(
        "task_id", pl.col("n").alias("n_after"), pl.col("passes").alias("passes_after")
    )
    return b.join(a, on="task_id", how="inner").sort("task_id")


def _cells(paired: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct per-task differences (one per ``(c_b, n_b, c_a, n_a)`` cell), their counts,
    and the variance the two runs' draws alone give each difference."""
    keys = ["passes_before", "n_before", "passes_after", "n_after"]
    grid = paired.group_by(keys).agg(pl.len().alias("tasks")).sort(keys)
    c_a, n_a = grid["passes_after"].to_numpy(), grid["n_after"].to_numpy()
    c_b, n_b = grid["passes_before"].to_numpy(), grid["n_before"].to_numpy()
    d = c_a / n_a - c_b / n_b
    tasks = grid["tasks"].to_numpy().astype(np.int64)
    floor = stats.paired_floor(c_a, n_a, tasks) + stats.paired_floor(c_b, n_b, tasks)
    return d.astype(np.float64), tasks, floor


def z_sum(power: float, alpha: float) -> float:
    """z₁₋α/₂ + z_power (standard normal quantiles)."""
    from scipy import stats as sps  # loaded here: routing a teacher never imports scipy.stats

    return float(sps.norm.ppf(1 - alpha / 2) + sps.norm.ppf(power))


def size_for_sd(sd: float, effect: float, power: float = 0.8, alpha: float = 0.05) -> int:
    """n = max(2, ⌈((z₁₋α/₂ + z_power)·sd/effect)²⌉): tasks to see ``effect`` at ``power``."""
    return max(2, math.ceil((z_sum(power, alpha) * sd / effect) ** 2))


def sample_sd(
    values: np.ndarray, counts: np.ndarray, floor: np.ndarray | None = None
) -> float | None:
    """Sample standard deviation (n − 1) of a multiset given as values with counts, never
    below √(mean ``floor``) (the draws' noise) when a floor is given."""
    n = int(counts.sum())
    if n < 2:
        return None
    mean = float(np.dot(values, counts) / n)
    var = float(np.dot(counts, (values - mean) ** 2)) / (n - 1)
    if floor is not None:
        var = max(var, float(np.dot(counts, floor)) / n)
    return math.sqrt(var)


@dataclass(frozen=True)
class MeasuredSize:
    """The held-out size from measured per-task differences, with its bootstrap range."""

    n: int
    low: int | None
    high: int | None
    sd: float
    half_width: float
    effect: float
    power: float
    alpha: float
    paired_tasks: int
    why_no_range: str | None = None
    #: Where the draws' noise, not the per-task differences, gives the sd: what it says of
    #: the differences (none moved: two identical dumps, or one run read twice; or they vary
    #: less than k draws of each task can tell). None: the differences give it.
    from_draws: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def measured_size(
    values: np.ndarray,
    counts: np.ndarray,
    effect: float,
    *,
    floor: np.ndarray | None = None,
    power: float = 0.8,
    alpha: float = 0.05,
    draws: int = stats.BOOTSTRAP_DRAWS,
    seed: int = 0,
) -> MeasuredSize:
    """Held-out size from per-task differences (cells), with a seeded bootstrap range.

    Each draw resamples the ``N`` tasks with replacement (a multinomial draw over the cells,
    as in :func:`whilecli.route.stats.bootstrap_mean_ci`), takes the sample sd of the
    resample and its size :func:`size_for_sd`; the range is the 95% percentile interval of
    those sizes (sorted[⌊0.025·D⌋], sorted[⌊0.975·D⌋ − 1]); each draw's floor is scaled by
    :func:`floor_error`. No range under 3 tasks.
    """
    values = np.asarray(values, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.int64)
    floor = np.zeros_like(values) if floor is None else np.asarray(floor, dtype=np.float64)
    order = np.lexsort((floor, counts, values))
    values, counts, floor = values[order], counts[order], floor[order]
    total = int(counts.sum())
    sd = sample_sd(values, counts, floor)
    if sd is None:
        raise InputError(f"{total} paired task(s): a measured sd needs at least 2")
    n = size_for_sd(sd, effect, power, alpha)
    from_draws = _from_draws(values, counts, sd)
    from scipy import stats as sps

    half = float(sps.norm.ppf(1 - alpha / 2)) * sd / math.sqrt(n)
    if total < stats.MIN_CI_TASKS:
        why = f"{total} paired tasks: a range needs {stats.MIN_CI_TASKS}"
        return MeasuredSize(n, None, None, sd, half, effect, power, alpha, total, why, from_draws)
    rng = np.random.default_rng(seed)
    sizes = np.empty(draws, dtype=np.float64)
    per_chunk = max(1, _CHUNK_CELLS // max(1, values.size))
    probs = counts / total
    noise = floor_error(total, draws, seed)
    for start in range(0, draws, per_chunk):
        stop = min(draws, start + per_chunk)
        picks = rng.multinomial(total, probs, size=stop - start).astype(np.float64)
        mean = picks @ values / total
        var = np.maximum(picks @ (values**2) - total * mean**2, 0.0) / (total - 1)
        var = np.maximum(var, picks @ floor / total * noise[start:stop])
        scaled = (z_sum(power, alpha) * np.sqrt(var) / effect) ** 2
        sizes[start:stop] = np.maximum(2.0, np.ceil(scaled))
    ordered = np.sort(sizes)
    low, high = int(ordered[int(0.025 * draws)]), int(ordered[int(0.975 * draws) - 1])
    return MeasuredSize(n, low, high, sd, half, effect, power, alpha, total, None, from_draws)


def _from_draws(values: np.ndarray, counts: np.ndarray, sd: float) -> str | None:
    """What the per-task differences say where the draws' noise gives the sd (above their
    own sd, :func:`sample_sd` without the floor), or None where they give it."""
    observed = sample_sd(values, counts)
    if observed is None or observed >= sd * (1 - 1e-9):  # the larger, up to rounding
        return None
    if not np.any(values):
        return (
            "no paired task's pass rate moved (two identical dumps, or one run read twice):"
            " the sd is the draws' noise, what two independent runs of one model differ by"
        )
    return (
        f"the per-task differences vary less (sd {observed:.2g}) than the draws' noise"
        " says two runs of one model would: the sd is that noise"
    )


def floor_error(tasks: int, draws: int, seed: int) -> np.ndarray:
    """Each bootstrap draw's factor on the draws' noise: χ²(N − 1)/(N − 1), from a stream
    of its own (seed ``[seed, 1]``).

    The noise p(1−p)/k is itself measured, on N tasks of k draws each; as a variance
    measured on N tasks it is off by that factor (normal theory). Resampling tasks alone
    misses it: when every task's difference agrees (two identical runs) the resamples have
    no spread, and the size would print as a point."""
    return np.random.default_rng([seed, 1]).chisquare(tasks - 1, draws) / (tasks - 1)


@dataclass(frozen=True)
class PairedDiff:
    """Two dumps compared task by task on the tasks they share."""

    before: Rate  # pass@1 of the first dump on the shared tasks
    after: Rate  # pass@1 of the second dump on the shared tasks
    difference: Rate  # mean per-task difference (after − before), signed interval
    pairing: Tally  # where each dump's tasks fall (route/shared.py): paired, one side, left out
    gained: list[str]  # all-fail before, some-pass after
    lost: list[str]  # some-pass before, all-fail after

    @property
    def shared_tasks(self) -> int:
        return self.pairing.paired

    @property
    def only_before(self) -> int:
        return self.pairing.only_mine

    @property
    def only_after(self) -> int:
        return self.pairing.only_other

    @property
    def regression(self) -> bool:
        """The difference's upper bound is below 0 (no interval: not established)."""
        return self.difference.high is not None and self.difference.high < 0

    @property
    def improvement(self) -> bool:
        """The difference's lower bound is above 0."""
        return self.difference.low is not None and self.difference.low > 0

    def verdict(self) -> str:
        if self.regression:
            return "regression"
        if self.improvement:
            return "improvement"
        if self.difference.low is None:
            return "undecided"
        return "no clear change"

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict(),
            "before": self.before.to_dict(),
            "after": self.after.to_dict(),
            "difference": self.difference.to_dict(),
            "shared_tasks": self.shared_tasks,
            "only_before": self.only_before,
            "only_after": self.only_after,
            "other_prompt_tasks": self.pairing.other_prompt,
            "before_tasks": self.pairing.mine,
            "after_tasks": self.pairing.other,
            "gained": list(self.gained),
            "lost": list(self.lost),
        }


def paired_diff(
    before: pl.DataFrame,
    after: pl.DataFrame,
    *,
    draws: int = stats.BOOTSTRAP_DRAWS,
    seed: int = 0,
    pairing: Tally | None = None,
) -> PairedDiff:
    """Compare two per-task frames (``Pool.tasks``) on their shared tasks (``pairing``: the
    tally :func:`whilecli.route.shared.share_tasks` made of them, with the ids it left out
    of ``after``; by default ids alone pair them)."""
    paired = pair_tasks(before, after)
    pairing = pairing or tally(before, after)
    assert pairing.paired == paired.height, (pairing, paired.height)
    if paired.height == 0:
        raise InputError("the two dumps share no task id: a paired comparison needs the same tasks")
    side_b = paired.select("task_id", n="n_before", passes="passes_before")
    side_a = paired.select("task_id", n="n_after", passes="passes_after")
    rate_b = stats.pass_at_1(side_b, draws=draws, seed=seed)
    rate_a = stats.pass_at_1(side_a, draws=draws, seed=seed)
    d, counts, floor = _cells(paired)
    rows = rate_b.n_rows + rate_a.n_rows
    diff = replace(stats.task_interval(d, counts, floor, rows, signed=True), unit="paired tasks")
    gained = paired.filter((pl.col("passes_before") == 0) & (pl.col("passes_after") > 0))
    lost = paired.filter((pl.col("passes_before") > 0) & (pl.col("passes_after") == 0))
    return PairedDiff(
        before=rate_b,
        after=rate_a,
        difference=diff,
        pairing=pairing,
        gained=natural_order(gained["task_id"].to_list()),
        lost=natural_order(lost["task_id"].to_list()),
    )


def _check_room(paired: pl.DataFrame, effect: float) -> None:
    """Refuse a size where the before dump's pass@1 on the shared tasks leaves no room for
    the gain (:func:`whilecli.route.stats.leaves_room`, as ``--base`` is refused outside
    (0, 1)): a dump at 1 cannot improve, and the draws' noise of a dump at 0 or 1 is 0, so
    any count sized from it would be noise."""
    rates = (paired["passes_before"] / paired["n_before"]).to_list()
    base = sum(rates) / len(rates)
    if not stats.leaves_room(base, effect):
        raise InputError(
            f"--before: pass@1 {base:.2f} on the {paired.height} paired tasks leaves no room"
            f" to measure a gain of {effect:g} (pass@1 and pass@1 + --effect must lie in"
            " (0, 1)): no held-out size can be given"
        )


def natural_order(ids: list[str]) -> list[str]:
    """Task ids in the order a person reads them: ``task-2`` before ``task-10``."""

    def key(text: str) -> list[tuple[int, int, str]]:
        return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", text)]

    return sorted(ids, key=key)


def paired_size(
    before: pl.DataFrame,
    after: pl.DataFrame,
    effect: float,
    *,
    power: float = 0.8,
    alpha: float = 0.05,
    draws: int = stats.BOOTSTRAP_DRAWS,
    seed: int = 0,
) -> MeasuredSize:
    """:func:`measured_size` from the per-task differences of two dumps' shared tasks."""
    paired = pair_tasks(before, after)
    if paired.height == 0:
        raise InputError("the two dumps share no task id: a paired size needs the same tasks")
    _check_room(paired, effect)
    d, counts, floor = _cells(paired)
    return measured_size(
        d, counts, effect, floor=floor, power=power, alpha=alpha, draws=draws, seed=seed
    )
