"""The reward model's loss on scored pairs: Bradley–Terry.

A reward model r_φ scores a reply with one number. Trained on pairs of a chosen reply
y_w and a rejected reply y_l of the same task (Bradley & Terry 1952; Ouyang et al.
2022, arXiv:2203.02155, eq. 1), its loss per pair is

    ℓ = −log σ(r_w − r_l) = softplus(−(r_w − r_l)),

computed as ``logaddexp(0, −Δ)`` so that it never overflows, with gradient

    ∂ℓ/∂r_w = −σ(−Δ),   ∂ℓ/∂r_l = +σ(−Δ),   Δ = r_w − r_l.

Pairs come from either

- **explicit pair columns**: one pair per row, scores in ``chosen_score`` and
  ``rejected_score`` (aliases in :data:`CHOSEN_ALIASES`, :data:`REJECTED_ALIASES`); or
- **graded rows**: one reply per row with the model's ``score`` (:data:`SCORE_ALIASES`)
  and the program's ``reward``; within a task a pass (reward ≥ ``pass_threshold``) is
  chosen over a fail. ``pairing="matched"`` (default) pairs the i-th pass with the i-th
  fail in file order, each row in at most one pair (as DPO pairs its rows);
  ``pairing="all"`` takes every pass × fail combination, so a row can sit in several
  pairs and its gradient weight is the sum over them.

Gradients are those of the summed loss Σ ℓ; divide by the number of pairs for the mean.
Pair accuracy is the share of pairs with r_w > r_l (ties count as wrong), with a Wilson
interval (95%, as the route prints shares).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
from scipy.special import expit
from scipy.stats import binomtest

from whilecli.errors import UsageError
from whilecli.methods import rowio
from whilecli.methods.rowio import Table

CHOSEN_ALIASES: tuple[str, ...] = ("chosen_score", "score_chosen", "chosen_reward", "r_chosen")
REJECTED_ALIASES: tuple[str, ...] = (
    "rejected_score",
    "score_rejected",
    "rejected_reward",
    "r_rejected",
)
SCORE_ALIASES: tuple[str, ...] = ("rm_score", "score", "reward_model_score", "rm_reward")
PAIRINGS = ("matched", "all")
#: How the reward model reads its rows: pair columns need no task id and no reward, and the
#: model's own score is never the program's reward.
READ_OPTIONS: dict[str, tuple[str, ...]] = {
    "optional": ("task_id", "reward"),
    "exclude_reward": SCORE_ALIASES,
}

#: Why the route rarely sends a pool to the reward model.
why_rarely = (
    "Where a program grades the task, the program is the reward: a reward model trained on "
    "its pass/fail pairs can only approximate that program, costs a model to serve, and "
    "gives the policy a learned judge to exploit."
)


def bt_loss(margin: np.ndarray) -> np.ndarray:
    """−log σ(Δ) per pair, stable for any finite Δ (``logaddexp(0, −Δ)``)."""
    return np.logaddexp(0.0, -np.asarray(margin, dtype=np.float64))


def bt_grad(margin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(∂ℓ/∂r_w, ∂ℓ/∂r_l) = (−σ(−Δ), +σ(−Δ)) per pair."""
    s = expit(-np.asarray(margin, dtype=np.float64))
    return -s, s


def wilson(k: int, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval for k successes out of n ≥ 1 (scipy's ``binomtest``)."""
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return float(ci.low), float(ci.high)


@dataclass(frozen=True)
class PairsResult:
    """Pairs with their loss and gradients, per-row gradient weights, stats and notes.

    ``pairs``: task_id, chosen_row, rejected_row (0-based input rows; null with explicit
    pair columns), r_chosen, r_rejected, margin, loss, grad_chosen, grad_rejected, correct.
    ``frame``: the input rows; from graded rows it gains ``rm_grad`` (Σ ∂ℓ/∂r over the
    row's pairs, 0 when unpaired) and ``rm_pairs``; from pair columns it gains ``margin``,
    ``loss``, ``grad_chosen``, ``grad_rejected``.
    """

    source: str
    pairs: pl.DataFrame
    frame: pl.DataFrame
    stats: dict[str, Any]
    columns: dict[str, str]
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RewardModel:
    """Bradley–Terry loss and gradients for a reward model's scores (module docstring)."""

    pass_threshold: float | None = None  # None: 1.0, and rewards must lie in [0, 1]
    pairing: str = "matched"

    def __post_init__(self) -> None:
        t = self.pass_threshold
        if t is not None and (
            isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t)
        ):
            raise UsageError(
                f"pass_threshold must be a finite number (default 1.0), got {t!r}",
                knob="pass_threshold",
            )
        if self.pairing not in PAIRINGS:
            raise UsageError(
                f"pairing must be matched or all (default matched), got {self.pairing!r}",
                knob="pairing",
            )

    def pairs(self, rows: pl.DataFrame | Table) -> PairsResult:
        """Build the pairs (explicit columns win over graded rows) and score them.

        ``rows``: a :class:`~whilecli.io.table.Table` read with :data:`READ_OPTIONS`, or a
        frame, read by the same rules.
        """
        table = rowio.table_of(rows, pass_threshold=self.pass_threshold, **READ_OPTIONS)
        frame = table.frame
        chosen = rowio.find_column(frame, CHOSEN_ALIASES)
        rejected = rowio.find_column(frame, REJECTED_ALIASES)
        if chosen is not None or rejected is not None:
            return self._explicit(table, chosen, rejected)
        return self._from_rows(table)

    def _explicit(self, table: Table, chosen: str | None, rejected: str | None) -> PairsResult:
        frame = table.frame
        if chosen is None or rejected is None:
            missing = CHOSEN_ALIASES[0] if chosen is None else REJECTED_ALIASES[0]
            raise table.error("a pair needs both a chosen and a rejected score", field=missing)
        rw = rowio.float_column(table, chosen).to_numpy()
        rl = rowio.float_column(table, rejected).to_numpy()
        ids = table.canonical.get_column("task_id")
        columns = {"chosen_score": chosen, "rejected_score": rejected}
        if "task_id" not in table.absent:
            columns["task_id"] = table.columns["task_id"]
        pairs = self._score(ids, None, None, rw, rl)
        out = frame.with_columns(
            [pairs.get_column(c) for c in ("margin", "loss", "grad_chosen", "grad_rejected")]
        )
        stats, notes = self._stats(pairs, frame.height, unpaired=0)
        return PairsResult("pair columns", pairs, out, stats, columns, notes)

    def _from_rows(self, table: Table) -> PairsResult:
        frame = table.frame
        score_name = rowio.find_column(frame, SCORE_ALIASES)
        if score_name is None:
            raise table.error(
                "no reward-model score (looked for "
                + ", ".join(SCORE_ALIASES)
                + ", or chosen_score/rejected_score pair columns)",
                field="score",
            )
        if table.absent:  # graded rows need both: read again to refuse what is missing
            table = table.reread(optional=())
        frame = table.frame
        score = rowio.float_column(table, score_name)
        columns = {
            "task_id": table.columns["task_id"],
            "reward": table.columns["reward"],
            "passed": table.columns["passed"],
            "score": score_name,
        }
        ids = table.canonical.get_column("task_id")
        work = table.canonical.select("task_id", "reward", "passed").with_columns(
            score.alias("score"), row=pl.int_range(pl.len())
        )
        wins = work.filter(pl.col("passed")).with_columns(k=pl.int_range(pl.len()).over("task_id"))
        loses = work.filter(~pl.col("passed")).with_columns(
            k=pl.int_range(pl.len()).over("task_id")
        )
        on = ["task_id", "k"] if self.pairing == "matched" else ["task_id"]
        joined = wins.join(loses, on=on, how="inner", suffix="_l", maintain_order="left")
        if self.pairing == "all":
            joined = joined.sort("row", "row_l")
        rw = joined.get_column("score").to_numpy()
        rl = joined.get_column("score_l").to_numpy()
        pairs = self._score(
            joined.get_column("task_id"),
            joined.get_column("row"),
            joined.get_column("row_l"),
            rw,
            rl,
        )
        contributions = pl.concat(
            [
                pairs.select(row=pl.col("chosen_row"), g=pl.col("grad_chosen")),
                pairs.select(row=pl.col("rejected_row"), g=pl.col("grad_rejected")),
            ]
        )
        per_row = contributions.group_by("row").agg(rm_grad=pl.col("g").sum(), rm_pairs=pl.len())
        filled = (
            work.select("row")
            .join(per_row, on="row", how="left", maintain_order="left")
            .with_columns(
                pl.col("rm_grad").fill_null(0.0), pl.col("rm_pairs").fill_null(0).cast(pl.Int64)
            )
        )
        out = frame.with_columns(filled.get_column("rm_grad"), filled.get_column("rm_pairs"))
        unpaired = int((filled.get_column("rm_pairs") == 0).sum())
        stats, notes = self._stats(pairs, frame.height, unpaired=unpaired)
        stats["tasks"] = int(ids.n_unique())
        stats["tasks_with_pairs"] = int(pairs.get_column("task_id").n_unique())
        return PairsResult("graded rows", pairs, out, stats, columns, notes)

    @staticmethod
    def _score(
        ids: pl.Series,
        chosen_row: pl.Series | None,
        rejected_row: pl.Series | None,
        rw: np.ndarray,
        rl: np.ndarray,
    ) -> pl.DataFrame:
        margin = rw - rl
        g_w, g_l = bt_grad(margin)
        n = len(margin)
        none = pl.Series([None] * n, dtype=pl.Int64)
        return pl.DataFrame(
            {
                "task_id": ids.cast(pl.String),
                "chosen_row": (chosen_row if chosen_row is not None else none).cast(pl.Int64),
                "rejected_row": (rejected_row if rejected_row is not None else none).cast(pl.Int64),
                "r_chosen": rw,
                "r_rejected": rl,
                "margin": margin,
                "loss": bt_loss(margin),
                "grad_chosen": g_w,
                "grad_rejected": g_l,
                "correct": margin > 0,
            },
            schema_overrides={"r_chosen": pl.Float64, "r_rejected": pl.Float64},
        )

    def _stats(
        self, pairs: pl.DataFrame, rows: int, *, unpaired: int
    ) -> tuple[dict[str, Any], list[str]]:
        n = pairs.height
        notes: list[str] = []
        stats: dict[str, Any] = {"rows": rows, "pairs": n, "rows_unpaired": unpaired}
        if n == 0:
            notes.append("no pair (a pass and a fail of one task): nothing to train on")
            stats.update(mean_loss=None, accuracy=None, accuracy_low=None, accuracy_high=None)
            stats.update(mean_margin=None, ties=0)
            return stats, notes
        k = int(pairs.get_column("correct").sum())
        low, high = wilson(k, n)
        ties = int((pairs.get_column("margin") == 0).sum())
        stats.update(
            mean_loss=float(pairs.get_column("loss").mean()),  # type: ignore[arg-type]
            accuracy=k / n,
            accuracy_low=low,
            accuracy_high=high,
            mean_margin=float(pairs.get_column("margin").mean()),  # type: ignore[arg-type]
            ties=ties,
        )
        if ties:
            notes.append(f"{ties} pair(s) score equal and count as wrong in the accuracy")
        return stats, notes
