"""DPO as per-token coefficients over pass/fail pairs of the same task.

Rafailov et al. 2023 (arXiv:2305.18290): for a chosen reply y_w and a rejected y_l of one
prompt, with β = 0.1,

    L = −log σ(β Δ),   Δ = Σ_t (log π_θ − log π_ref)(y_w) − Σ_t (log π_θ − log π_ref)(y_l),

summed over action tokens. Its gradient in log π_θ of each token is ±β σ(−β Δ), so, averaged
over the P pairs of the batch,

    c = +β σ(−β Δ)/P on y_w's action tokens,   c = −β σ(−β Δ)/P on y_l's,   0 elsewhere.

Pairs (within a task): each pass (reward ≥ ``pass_threshold``), in batch order, takes the
unused fail of the closest action length (ties: the earlier row); each row is in at most one
pair, and unpaired rows get 0.
"""

from __future__ import annotations

import math
from typing import ClassVar

import torch
import torch.nn.functional as F

from whilecli.knobs import DPO_BETA, PASS_TOLERANCE
from whilecli.methods.batch import Batch, Update, reuse
from whilecli.methods.fastmath import Compiled, compile_note, plain_path
from whilecli.methods.groups import count, gather_rows
from whilecli.methods.surrogate import knob_error, number_knob
from whilecli.methods.twostep import BatchStats, TwoStep, base_stats
from whilecli.methods.validate import Needs


def dpo_reference(
    logp: torch.Tensor,
    ref_logp: torch.Tensor,
    action_mask: torch.Tensor,
    chosen: torch.Tensor,
    rejected: torch.Tensor,
    beta: float = 0.1,
) -> torch.Tensor:
    """DPO's c ``[B, T]`` for the pairs ``(chosen[k], rejected[k])`` (row indices), plain torch.

    Δ = Σ_t (log π_θ − log π_ref)(y_w) − Σ_t (log π_θ − log π_ref)(y_l) over action tokens;
    c = +β σ(−βΔ)/P on y_w's tokens, −β σ(−βΔ)/P on y_l's, P = pairs; unpaired rows get 0.
    """
    logratio = dpo_logratio(logp, ref_logp, action_mask)
    delta = logratio[chosen] - logratio[rejected]  # Δ
    P = max(len(chosen), 1)
    coef = beta * torch.sigmoid(-beta * delta) / P
    row = torch.zeros_like(logratio)
    row = row.index_put((chosen,), coef).index_put((rejected,), -coef)
    return torch.where(action_mask, row[:, None], 0.0)


def dpo_logratio(
    logp: torch.Tensor, ref_logp: torch.Tensor, action_mask: torch.Tensor
) -> torch.Tensor:
    """Σ_t (log π_θ − log π_ref) over each row's action tokens ``[B]``: DPO's per-token part,
    plain torch (compiled with ``compile=True``)."""
    return torch.where(action_mask, logp - ref_logp, 0.0).sum(dim=1)


def pair_rows(task_ids: list[str], passed: list[bool], lengths: list[int]) -> list[tuple[int, int]]:
    """``(chosen, rejected)`` row pairs: each pass in order takes the closest-length unused fail.

    The loop runs over rows (and a task's fails), never over tokens.
    """
    fails: dict[str, list[int]] = {}
    for i, (t, p) in enumerate(zip(task_ids, passed, strict=True)):
        if not p:
            fails.setdefault(t, []).append(i)
    pairs: list[tuple[int, int]] = []
    for i, (t, p) in enumerate(zip(task_ids, passed, strict=True)):
        pool = fails.get(t)
        if not p or not pool:
            continue
        best = min(pool, key=lambda j: (abs(lengths[i] - lengths[j]), j))
        pool.remove(best)
        pairs.append((i, best))
    return pairs


class DPO(TwoStep):
    """Direct preference optimisation (Rafailov et al. 2023) on natural pass/fail pairs.

    Needs ``task_ids`` and ``ref_logprobs``. ``beta`` = 0.1, ``pass_threshold`` = 1.0.
    """

    name: ClassVar[str] = "dpo"
    needs = Needs(fields=("task_ids", "ref_logprobs"), logprobs=("logprobs", "ref_logprobs"))

    def __init__(
        self, beta: float = DPO_BETA.default, pass_threshold: float = 1.0, compile: bool = False
    ) -> None:
        self._compiled = Compiled(dpo_logratio) if compile else None
        beta = DPO_BETA.check(beta, f"{self.name}: beta")
        thr = number_knob(self.name, "pass_threshold", 1.0, pass_threshold)
        if not math.isfinite(thr):
            raise knob_error(self.name, "pass_threshold", 1.0, pass_threshold, "finite")
        self.beta, self.pass_threshold = beta, thr

    def reduce(self, batch: Batch, group: object | None = None) -> BatchStats:
        """The pairs of the optimizer batch and each row's ±β σ(−βΔ)/P (rows of every rank
        gathered under ``group``). Δ is read from the batch's log-probs as given."""
        m = self.name
        tasks = [str(t) for t in batch.task_ids or ()]
        ref = batch.ref_logprobs
        assert ref is not None  # the runner checked the batch for its needs
        act = batch.action_mask
        logratio = plain_path(
            self._compiled, dpo_logratio, batch.logprobs.detach(), ref.detach(), act
        )
        rows, labels, offset = gather_rows(
            group,
            {"reward": batch.rewards, "count": batch.action_counts, "logratio": logratio},
            {"task": tasks},
        )
        passed = (rows["reward"] >= self.pass_threshold - PASS_TOLERANCE).tolist()
        pairs = pair_rows(labels["task"], passed, [int(x) for x in rows["count"].tolist()])
        n_all = int(rows["reward"].shape[0])
        row_coef = torch.zeros(n_all, dtype=ref.dtype, device=ref.device)
        stats: dict[str, float | None] = {"pairs": float(len(pairs))}
        n_pass = sum(passed)
        if pairs:
            w = torch.tensor([p[0] for p in pairs], device=ref.device)
            lo = torch.tensor([p[1] for p in pairs], device=ref.device)
            delta = rows["logratio"][w] - rows["logratio"][lo]
            coef = self.beta * torch.sigmoid(-self.beta * delta) / len(pairs)
            row_coef[w] = coef
            row_coef[lo] = -coef
            stats["delta_mean"] = float(delta.mean())
            stats["preference_accuracy"] = float((delta > 0).to(ref.dtype).mean())
            stats["loss_mean"] = float(F.softplus(-self.beta * delta).mean())
        stats["unpaired_passes"] = float(n_pass - len(pairs))
        stats["unpaired_fails"] = float(n_all - n_pass - len(pairs))
        notes = self._notes(len(pairs), n_pass, n_all, len(set(labels["task"])))
        return base_stats(
            m,
            batch,
            group,
            values={"row_coef": row_coef, "pairs": len(pairs)},
            stats=stats,
            notes=notes,
            offset=offset,
        )

    def per_token(self, micro_batch: Batch, stats: BatchStats, *, out: Update | None) -> Update:
        """Per-token DPO coefficients of ``micro_batch``: its rows' ±β σ(−βΔ)/P from
        ``stats`` on their action tokens; ``out``, a previous :class:`Update`, has its
        tensors overwritten when shapes match."""
        batch = micro_batch
        act = batch.action_mask
        lp = batch.logprobs
        shape, dtype, device = lp.shape, lp.dtype, lp.device
        row_coef: torch.Tensor = stats.values["row_coef"]
        local = row_coef[stats.positions(batch).to(row_coef.device)].to(device=device, dtype=dtype)
        spread = torch.where(act, local[:, None], 0.0) + 0.0  # + 0 turns −0 into +0
        c = reuse(out, "coefficients", shape, dtype, device).copy_(spread)
        admitted = (local != 0) & (batch.action_counts > 0)  # (c != 0).any(dim=1)
        own: dict[str, float | None] = {"rows": float(batch.size)}
        notes = compile_note(self._compiled)
        advantages = reuse(out, "advantages", shape, dtype, device)
        return Update(
            coefficients=c,
            advantages=torch.mul(c, max(int(stats.values["pairs"]), 1), out=advantages),
            admitted=admitted,
            stats=own,
            notes=notes,
        )

    def _notes(self, n_pairs: int, n_pass: int, n_all: int, n_tasks: int) -> list[str]:
        if not n_pairs:
            return [
                f"no task of the {n_tasks} has both a pass (reward ≥ {self.pass_threshold}) "
                "and a fail, so there is no DPO pair and every coefficient is 0."
            ]
        notes = [
            f"{n_pairs} pairs within {n_tasks} tasks: each pass (reward ≥ "
            f"{self.pass_threshold}), in batch order, took the unused fail of its task with "
            f"the closest action length (ties: the earlier row); β = {self.beta}, c = "
            "±β σ(−βΔ)/P."
        ]
        left = n_all - 2 * n_pairs
        if left:
            notes.append(
                f"c = 0 for {count(left, 'unpaired row')} ({n_pass - n_pairs} passes, "
                f"{n_all - n_pass - n_pairs} fails)."
            )
        return notes
