"""GroupwiseGrading: a grader reshapes the rewards or advantages of graded rollouts.

MiMo-V2.6 (2026), section 4.3. Binary rewards make every pass equal; when passes really
differ in quality (multi-turn agent work), a grader's scores tell them apart. The grader
runs elsewhere; its output arrives as columns of the rows, and this module applies it.

**mode "reward" (GRS).** Each passing rollout (``reward ≥ pass_threshold``) gets

    R' = R · max(floor, s_sol) · max(floor, s_beh),   s_sol, s_beh ∈ [0, 1];

failures are unchanged; a pass whose grader score is missing (null, or a non-empty
``grader_error``) keeps R and is counted.

**mode "advantage" (GAR).** Only mixed groups (a pass and a fail among the rows sharing
a task id, as graded) are re-weighted. Each pass carries a factor f ∈ (0, 1], from a
``factor`` column or from a ``rank`` column (1 = best; mean ranks r̄ over the group's
passes, ties sharing a rank, mapped linearly from 1 down to ``min_factor``:
f = 1 − (1 − min_factor)(r̄ − 1)/(n − 1)). With ``hack_zero``, a pass flagged ``hack``
becomes a failure (its reward is set to 0) first. Then, per group,

    A = R − mean(R),   λ = min(cap, Σ_pass A / Σ_pass f·A),
    A'' = λ·f·A on passes, A on failures,   A' = A'' − mean(A'').

The ``advantage`` column is A′: what a trainer multiplies ∇log π by, and what the
reference's worked example shows ([1, 1, 0, 0] with f = [1, 0.5] → [0.667, 0.333, −0.5,
−0.5]). The ``reward`` column is A′ + mean(R), which is what the reference SDK returns,
so a trainer that subtracts the group mean itself recovers A′; the group's reward sum
is unchanged. Unanimous groups, and mixed groups where a pass has no factor, are
returned unchanged (``reward`` = R, ``advantage`` = R − mean(R)); hack flags in
unanimous groups are ignored and counted (the reference grades mixed groups only).

Task id, reward and pass come from the one reading layer (:mod:`whilecli.io.table`, as
the route reads them: a pass is ``reward ≥ pass_threshold``, default 1.0, and rewards
outside [0, 1] need an explicit threshold). Extra columns (first alias present wins):
:data:`SOLUTION_ALIASES`,
:data:`BEHAVIOR_ALIASES` (GRS); :data:`FACTOR_ALIASES` or :data:`RANK_ALIASES` (GAR; a
factor column wins over a rank column); :data:`HACK_ALIASES`; :data:`ERROR_ALIASES`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from whilecli import knobs as declared
from whilecli.errors import UsageError
from whilecli.methods import rowio
from whilecli.methods.rowio import Table
from whilecli.route.model import against
from whilecli.textstyle import fraction

SOLUTION_ALIASES: tuple[str, ...] = ("solution_score", "s_solution", "score_solution", "solution")
BEHAVIOR_ALIASES: tuple[str, ...] = (
    "behavior_score",
    "behaviour_score",
    "s_behavior",
    "score_behavior",
    "behavior",
    "behaviour",
)
FACTOR_ALIASES: tuple[str, ...] = ("factor", "grader_factor", "quality")
RANK_ALIASES: tuple[str, ...] = ("rank", "ranking", "grader_rank")
HACK_ALIASES: tuple[str, ...] = ("hack", "hacked", "is_hack", "reward_hack")
ERROR_ALIASES: tuple[str, ...] = ("grader_error",)

#: A grader has no spread when the std of its scores is below SPREAD_MIN_STD, or when more
#: than SPREAD_CLUSTER_SHARE of them lie within SPREAD_BAND of the median.
SPREAD_MIN_STD = 0.05
SPREAD_BAND = 0.05
SPREAD_CLUSTER_SHARE = 0.9

MODES = ("reward", "advantage")


@dataclass(frozen=True)
class Spread:
    """Whether the grader's scores tell passes apart (population std, share near the median)."""

    n: int
    std: float | None
    cluster_share: float | None
    no_spread: bool
    why: str


def check_spread(scores: np.ndarray) -> Spread:
    """No spread: std < 0.05, or more than 90% of scores within 0.05 of the median."""
    scores = np.asarray(scores, dtype=np.float64)
    n = int(scores.size)
    if n < 2:
        return Spread(n, None, None, False, f"not checked: {n} graded pass(es), need 2")
    std = float(np.std(scores))
    share = float(np.mean(np.abs(scores - np.median(scores)) <= SPREAD_BAND))
    if std < SPREAD_MIN_STD:
        std_shown, std_limit = against(std, SPREAD_MIN_STD)
        why = f"std of the scores {std_shown} < {std_limit}: the grader cannot tell passes apart"
        return Spread(n, std, share, True, why)
    if share > SPREAD_CLUSTER_SHARE:
        share_shown, share_limit = against(share, SPREAD_CLUSTER_SHARE)
        why = (
            f"a share {share_shown} (> {share_limit}) of the scores lie within {SPREAD_BAND} of "
            "the median: "
            "the grader cannot tell passes apart"
        )
        return Spread(n, std, share, True, why)
    return Spread(
        n, std, share, False, f"std {fraction(std)}, share {fraction(share)} near the median"
    )


@dataclass(frozen=True)
class GroupwiseResult:
    """Reshaped rows, their stats, the per-group λ (GAR), the spread check and notes.

    ``frame`` holds the input columns plus ``task_id`` (when found), ``reward`` (reshaped),
    ``reward_original``, and ``grs_factor`` (GRS) or ``advantage``, ``gar_factor``,
    ``gar_lambda`` (the group's λ, on every row of a re-weighted group), ``hacked`` (GAR).
    ``lambdas`` has one row per re-weighted group: task_id, rows, passes, lambda, capped.
    """

    mode: str
    frame: pl.DataFrame
    stats: dict[str, Any]
    lambdas: pl.DataFrame | None
    spread: Spread
    columns: dict[str, str]
    notes: list[str] = field(default_factory=list)


def _knob(ok: bool, name: str, rule: str, default: object, value: object) -> None:
    if not ok:
        raise UsageError(f"{name} must be {rule} (default {default}), got {value!r}", knob=name)


@dataclass(frozen=True)
class GroupwiseGrading:
    """Apply a grader's output to graded rows: GRS (``mode="reward"``) or GAR (``"advantage"``).

    Defaults follow the reference SDK except ``pass_threshold``, which is the route's
    (a pass is ``reward ≥ 1.0``; None: 1.0, and rewards must lie in [0, 1]).
    """

    mode: str = "advantage"
    floor: float = declared.GRS_FLOOR.default
    cap: float = declared.GAR_CAP.default
    min_factor: float = declared.GAR_MIN_FACTOR.default
    hack_zero: bool = True
    pass_threshold: float | None = None

    def __post_init__(self) -> None:
        _knob(self.mode in MODES, "mode", "reward or advantage", "advantage", self.mode)
        declared.GRS_FLOOR.check(self.floor, "floor")
        declared.GAR_CAP.check(self.cap, "cap")
        declared.GAR_MIN_FACTOR.check(self.min_factor, "min_factor")
        t = self.pass_threshold
        _knob(t is None or math.isfinite(t), "pass_threshold", "finite", 1.0, t)

    def read_options(self) -> dict[str, tuple[str, ...]]:
        """How this mode reads its rows: GRS needs no task id."""
        return {"optional": ("task_id",)} if self.mode == "reward" else {}

    def apply(self, rows: pl.DataFrame | Table) -> GroupwiseResult:
        """Reshape the rows' rewards (GRS) or advantages (GAR); see the module docstring.

        ``rows``: a :class:`~whilecli.io.table.Table` read with :meth:`read_options`, or a
        frame, read by the same rules with ``pass_threshold``.
        """
        table = rowio.table_of(rows, pass_threshold=self.pass_threshold, **self.read_options())
        if self.mode == "reward":
            return self._grs(table)
        return self._gar(table)

    def _errors(self, table: Table) -> tuple[pl.Series, str | None]:
        frame = table.frame
        name = rowio.find_column(frame, ERROR_ALIASES)
        if name is None:
            return pl.Series("err", [False] * frame.height), None
        raw = frame.select(rowio.column_expr(name)).to_series()
        if raw.dtype == pl.Boolean:
            return raw.fill_null(False).alias("err"), name
        text = raw.cast(pl.String, strict=False)
        return (text.is_not_null() & (text.str.strip_chars() != "")).alias("err"), name

    def _grs(self, table: Table) -> GroupwiseResult:
        frame = table.frame
        reward = table.canonical.get_column("reward")
        sol_name = rowio.find_column(frame, SOLUTION_ALIASES)
        beh_name = rowio.find_column(frame, BEHAVIOR_ALIASES)
        for name, aliases in ((sol_name, SOLUTION_ALIASES), (beh_name, BEHAVIOR_ALIASES)):
            if name is None:
                raise table.error(
                    "GRS needs it (looked for " + ", ".join(aliases) + ")", field=aliases[0]
                )
        assert sol_name is not None and beh_name is not None
        sol = rowio.float_column(table, sol_name, allow_null=True, low=0.0, high=1.0)
        beh = rowio.float_column(table, beh_name, allow_null=True, low=0.0, high=1.0)
        err, err_name = self._errors(table)
        columns = {
            "reward": table.columns["reward"],
            "passed": table.columns["passed"],
            "solution_score": sol_name,
            "behavior_score": beh_name,
        }
        has_ids = "task_id" not in table.absent
        ids = table.canonical.get_column("task_id")
        if has_ids:
            columns = {"task_id": table.columns["task_id"], **columns}
        if err_name:
            columns["grader_error"] = err_name
        work = pl.DataFrame(
            [
                ids,
                reward,
                table.canonical.get_column("passed"),
                sol.alias("s1"),
                beh.alias("s2"),
                err,
            ]
        )
        thr, floor = table.pass_threshold, self.floor
        p = pl.col("passed")
        missing = p & (pl.col("s1").is_null() | pl.col("s2").is_null() | pl.col("err"))
        mult = pl.max_horizontal(pl.col("s1"), pl.lit(floor)) * pl.max_horizontal(
            pl.col("s2"), pl.lit(floor)
        )
        work = work.with_columns(
            missing=missing,
            grs_factor=pl.when(p & ~missing).then(mult).otherwise(None),
        ).with_columns(
            shaped=pl.when(pl.col("grs_factor").is_not_null())
            .then(pl.col("reward") * pl.col("grs_factor"))
            .otherwise(pl.col("reward"))
        )
        out = frame.with_columns(
            reward_original=work.get_column("reward"),
            reward=work.get_column("shaped"),
            grs_factor=work.get_column("grs_factor"),
        )
        if has_ids:
            out = out.with_columns(work.get_column("task_id"))
        factors = work.get_column("grs_factor").drop_nulls()
        spread = check_spread(factors.to_numpy())
        passes = int(work.get_column("passed").sum())
        stats: dict[str, Any] = {
            "rows": frame.height,
            "passes": passes,
            "passes_reshaped": int(factors.len()),
            "grader_missing_rows": int(work.get_column("missing").sum()),
            "groups": int(ids.n_unique()) if has_ids else None,
            "groups_touched": (
                int(
                    work.filter(pl.col("grs_factor").is_not_null()).get_column("task_id").n_unique()
                )
                if has_ids
                else None
            ),
            "mean_factor": _stat(factors, "mean"),
            "mean_reward_before": float(reward.mean()),  # type: ignore[arg-type]
            "mean_reward_after": float(work.get_column("shaped").mean()),  # type: ignore[arg-type]
        }
        notes = []
        if stats["grader_missing_rows"]:
            notes.append(
                f"{stats['grader_missing_rows']} passing row(s) had no grader score or a grader "
                "error and keep their reward"
            )
        if passes == 0:
            notes.append(f"no row passes (reward >= {thr}): nothing to reshape")
        return GroupwiseResult("reward", out, stats, None, spread, columns, notes)

    def _gar_inputs(self, table: Table) -> tuple[pl.DataFrame, pl.Expr, dict[str, str], list[str]]:
        """The work frame (task_id, reward, p0, g, hk, err), the factor expression, columns."""
        frame = table.frame
        columns = {k: table.columns[k] for k in ("task_id", "reward", "passed")}
        notes: list[str] = []
        fname = rowio.find_column(frame, FACTOR_ALIASES)
        kname = rowio.find_column(frame, RANK_ALIASES)
        if fname is None and kname is None:
            looked = ", ".join(FACTOR_ALIASES + RANK_ALIASES)
            raise table.error(f"GAR needs factors or ranks (looked for {looked})", field="factor")
        if fname is not None:
            graded = rowio.float_column(
                table, fname, allow_null=True, low=0.0, high=1.0, low_open=True
            )
            columns["factor"] = fname
            if kname is not None:
                notes.append(f"both '{fname}' and '{kname}' present: factors used, ranks ignored")
            f: pl.Expr = pl.when(pl.col("p")).then(pl.col("g"))
        else:
            assert kname is not None
            graded = rowio.float_column(table, kname, allow_null=True)
            columns["rank"] = kname
            ranks = pl.when(pl.col("p")).then(pl.col("g"))
            mean_rank = ranks.rank("average").over("task_id")
            n = ranks.count().over("task_id")
            step = (mean_rank - 1.0) / (n - 1).cast(pl.Float64)
            f = pl.when(n <= 1).then(1.0).otherwise(1.0 - (1.0 - self.min_factor) * step)
            f = pl.when(pl.col("p") & pl.col("g").is_not_null()).then(f)
        hname = rowio.find_column(frame, HACK_ALIASES)
        hack = pl.Series([False] * frame.height)
        if hname:
            hack = rowio.bool_column(table, hname)
            columns["hack"] = hname
        err, err_name = self._errors(table)
        if err_name:
            columns["grader_error"] = err_name
        work = table.canonical.select("task_id", "reward", p0="passed").with_columns(
            graded.alias("g"), hack.alias("hk"), err
        )
        return work, f, columns, notes

    def _gar(self, table: Table) -> GroupwiseResult:
        frame = table.frame
        work, f, columns, notes = self._gar_inputs(table)
        over = "task_id"
        work = work.with_columns(
            mixed=pl.col("p0").any().over(over) & (~pl.col("p0")).any().over(over)
        )
        work = work.with_columns(
            hacked=pl.col("hk") & pl.col("p0") & pl.col("mixed") & self.hack_zero
        )
        work = work.with_columns(
            r1=pl.when(pl.col("hacked")).then(0.0).otherwise(pl.col("reward")),
            p=pl.col("p0") & ~pl.col("hacked"),
        )
        work = work.with_columns(f=pl.when(pl.col("err")).then(None).otherwise(f))
        work = work.with_columns(missing=pl.col("mixed") & pl.col("p") & pl.col("f").is_null())
        work = work.with_columns(touched=pl.col("mixed") & ~pl.col("missing").any().over(over))
        # A = R − mean, λ = min(cap, Σ_pass A / Σ_pass f·A), A'' = λ f A on passes, A' = A'' − mean.
        work = work.with_columns(a=pl.col("r1") - pl.col("r1").mean().over(over))
        on_pass = pl.when(pl.col("p"))
        work = work.with_columns(
            s=on_pass.then(pl.col("a")).otherwise(0.0).sum().over(over),
            d=on_pass.then(pl.col("f") * pl.col("a")).otherwise(0.0).sum().over(over),
            any_pass=pl.col("p").any().over(over),
        )
        raw_lam = pl.col("s") / pl.col("d")
        lam = pl.when(pl.col("d") > 0).then(pl.min_horizontal(raw_lam, self.cap)).otherwise(1.0)
        live = pl.col("touched") & pl.col("any_pass")
        work = work.with_columns(
            lam=pl.when(live).then(lam),
            capped=live & (pl.col("d") > 0) & (raw_lam > self.cap),
            flat_d=live & (pl.col("d") <= 0),
        )
        a2 = pl.when(pl.col("p") & live).then(pl.col("lam") * pl.col("f") * pl.col("a"))
        work = work.with_columns(a2=a2.otherwise(pl.col("a")))
        plain = pl.col("reward") - pl.col("reward").mean().over(over)
        a3 = pl.col("a2") - pl.col("a2").mean().over(over)
        work = work.with_columns(advantage=pl.when(pl.col("touched")).then(a3).otherwise(plain))
        shaped = pl.col("advantage") + pl.col("reward").mean().over(over)
        work = work.with_columns(
            shaped=pl.when(pl.col("touched")).then(shaped).otherwise(pl.col("reward")),
            gar_factor=pl.when(pl.col("touched") & pl.col("p")).then(pl.col("f")),
            out_hacked=pl.col("hacked") & pl.col("touched"),
        )
        out = frame.with_columns(
            work.get_column("task_id"),
            reward_original=work.get_column("reward"),
            reward=work.get_column("shaped"),
            advantage=work.get_column("advantage"),
            gar_factor=work.get_column("gar_factor"),
            gar_lambda=work.get_column("lam"),
            hacked=work.get_column("out_hacked"),
        )
        return self._gar_result(work, out, columns, notes)

    def _gar_result(
        self, work: pl.DataFrame, out: pl.DataFrame, columns: dict[str, str], notes: list[str]
    ) -> GroupwiseResult:
        groups = work.group_by("task_id", maintain_order=True).agg(
            rows=pl.len(),
            passes=pl.col("p0").sum(),
            mixed=pl.col("mixed").first(),
            touched=pl.col("touched").first(),
            lam=pl.col("lam").first(),
            capped=pl.col("capped").first(),
            flat_d=pl.col("flat_d").first(),
            hacks_ignored=(pl.col("hk") & pl.col("p0") & ~pl.col("mixed")).sum(),
        )
        touched = groups.filter(pl.col("touched"))
        lams = touched.get_column("lam").drop_nulls()
        used = work.get_column("gar_factor").drop_nulls()
        n_missing = int(work.get_column("missing").sum())
        stats: dict[str, Any] = {
            "rows": work.height,
            "groups": groups.height,
            "mixed_groups": int(groups.get_column("mixed").sum()),
            "groups_touched": touched.height,
            "passes_reweighted": used.len(),
            "mean_factor": _stat(used, "mean"),
            "lambda_mean": _stat(lams, "mean"),
            "lambda_min": _stat(lams, "min"),
            "lambda_max": _stat(lams, "max"),
            "groups_capped": int(groups.get_column("capped").sum()),
            "grader_missing_rows": n_missing,
            "grader_missing_groups": groups.filter(pl.col("mixed") & ~pl.col("touched")).height,
            "hacks_applied": int(work.get_column("out_hacked").sum()),
            "hacks_ignored": int(groups.get_column("hacks_ignored").sum()),
        }
        if n_missing:
            notes.append(
                f"{n_missing} passing row(s) in mixed groups had no factor/rank or a grader error: "
                f"their {stats['grader_missing_groups']} group(s) are left unchanged"
            )
        if stats["hacks_ignored"]:
            notes.append(
                f"{stats['hacks_ignored']} hack flag(s) in unanimous groups ignored "
                "(only mixed groups are re-weighted)"
            )
        if stats["groups_capped"]:
            notes.append(f"λ reached the cap {self.cap} in {stats['groups_capped']} group(s)")
        flat = int(groups.get_column("flat_d").sum())
        if flat:
            notes.append(f"{flat} group(s) had Σ f·A over passes <= 0: λ = 1 there")
        if stats["mixed_groups"] == 0:
            notes.append("no mixed group (a pass and a fail): GAR changes nothing; try mode reward")
        lambdas = touched.select(
            "task_id", "rows", "passes", pl.col("lam").alias("lambda"), "capped"
        )
        spread = check_spread(used.to_numpy())
        return GroupwiseResult("advantage", out, stats, lambdas, spread, columns, notes)


def _stat(values: pl.Series, how: str) -> float | None:
    """mean / min / max of a series as a float, None when it is empty."""
    if values.len() == 0:
        return None
    return float(getattr(values, how)())
