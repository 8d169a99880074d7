"""Plain-Python loops over the equations of the grouped and other methods (DESIGN section 3).

One function per method, written to be read next to the spec, on ragged rows (dicts of
lists); no torch. ``to_batch`` pads such rows into the tensor :class:`Batch` the fast code
takes. A row: ``reward``, ``logprobs``, ``action_mask`` and optionally ``behavior_logprobs``,
``ref_logprobs``, ``teacher_logprobs``, ``task_id``, ``truncated``, ``agent``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

import torch

from whilecli.methods.batch import Batch

Row = dict[str, Any]


def to_batch(rows: Sequence[Row], dtype: torch.dtype = torch.float64) -> Batch:
    """Pad ragged rows to ``[B, T]`` tensors (0 / False on padding)."""
    width = max(len(r["logprobs"]) for r in rows)

    def pad(key: str) -> torch.Tensor | None:
        if key not in rows[0]:
            return None
        return torch.tensor(
            [list(r[key]) + [0.0] * (width - len(r[key])) for r in rows], dtype=dtype
        )

    mask = torch.tensor([[t < len(r["logprobs"]) for t in range(width)] for r in rows])
    action = torch.tensor(
        [
            list(map(bool, r["action_mask"])) + [False] * (width - len(r["action_mask"]))
            for r in rows
        ]
    )
    return Batch(
        logprobs=pad("logprobs"),  # type: ignore[arg-type]
        mask=mask,
        action_mask=action,
        rewards=torch.tensor([r["reward"] for r in rows], dtype=dtype),
        behavior_logprobs=pad("behavior_logprobs"),
        ref_logprobs=pad("ref_logprobs"),
        teacher_logprobs=pad("teacher_logprobs"),
        truncated=torch.tensor([bool(r.get("truncated", False)) for r in rows]),
        task_ids=[r["task_id"] for r in rows] if "task_id" in rows[0] else None,
        agents=[r["agent"] for r in rows] if "agent" in rows[0] else None,
    )


def _exp(x: float) -> float:
    """e^x, ∞ where it overflows a float (as torch.exp gives), not an OverflowError."""
    return math.inf if x > 709.782712893384 else math.exp(x)


def _ratio(row: Row, t: int) -> float:
    if "behavior_logprobs" not in row:
        return 1.0
    return _exp(row["logprobs"][t] - row["behavior_logprobs"][t])


def _surrogate(
    rows: Sequence[Row],
    adv: list[float],
    *,
    loss_type: str,
    clip: float,
    beta: float,
    max_len: int | None,
    truncated: str,
    part: str = "all",
    cap: float = 2.0,
) -> list[list[float]]:
    """c_{i,t} = w_i g_{i,t} − β w_i (1 − r_{i,t}) on action tokens of live rows.

    ``part``: ``"all"`` the whole c, ``"pg"`` the policy-gradient part w_i g, ``"kl"`` the
    KL-to-reference part −β w_i (1 − r), ``"tis"`` the policy-gradient part under
    ``--correction tis``: w_i A_i min(ρ, cap), no clip. bnpo's Σ_j T_j leaves out the rows that carry no
    loss (truncated ones under ``truncated="mask"``); B counts every row.
    """
    b = len(rows)
    lengths = [sum(1 for m in r["action_mask"] if m) for r in rows]
    total = sum(
        n
        for n, r in zip(lengths, rows, strict=True)
        if not (truncated == "mask" and r.get("truncated", False))
    )
    l_max = max_len if max_len is not None else max(lengths)
    out = []
    for i, r in enumerate(rows):
        if loss_type == "grpo":
            w = 1.0 / (lengths[i] * b) if lengths[i] else 0.0
        elif loss_type == "bnpo":
            w = 1.0 / total if lengths[i] and total else 0.0  # no row carries a loss
        else:
            w = 1.0 / (l_max * b) if lengths[i] else 0.0
        dead = truncated == "mask" and r.get("truncated", False)
        row_c = []
        for t in range(len(r["logprobs"])):
            if not r["action_mask"][t] or dead:
                row_c.append(0.0)
                continue
            rho, a = _ratio(r, t), adv[i]
            unclipped = rho * a
            clipped = min(max(rho, 1 - clip), 1 + clip) * a
            # d/dlog π of min(ρA, clip(ρ)A): ρA where the unclipped branch is the minimum
            # (A = 0: g = 0, an overflowed ρ included).
            g = unclipped if a != 0 and unclipped <= clipped else 0.0
            if part == "tis":
                g = a * min(rho, cap)
            c = w * g if part != "kl" else 0.0
            if beta > 0 and part not in ("pg", "tis"):
                ratio_ref = math.exp(r["ref_logprobs"][t] - r["logprobs"][t])
                c -= beta * w * (1 - ratio_ref)
            row_c.append(c)
        out.append(row_c)
    return out


def _rewards(rows: Sequence[Row], truncated: str) -> list[float]:
    return [
        0.0 if truncated == "zero" and r.get("truncated", False) else float(r["reward"])
        for r in rows
    ]


def slow_group_advantages(rows: Sequence[Row], kind: str, truncated: str = "mask") -> list[float]:
    """A_i for ``kind`` grpo (R − mean)/std, dr_grpo R − mean, max_rl (R − mean)/mean."""
    rewards = _rewards(rows, truncated)
    adv = []
    for i, r in enumerate(rows):
        members = [rewards[j] for j, s in enumerate(rows) if s["task_id"] == r["task_id"]]
        mean = sum(members) / len(members)
        if max(members) - min(members) <= 1e-9:  # unanimous: one reward within 1e-9
            adv.append(0.0)
        elif kind == "grpo":
            adv.append((rewards[i] - mean) / statistics.stdev(members))
        elif kind == "dr_grpo":
            adv.append(rewards[i] - mean)
        else:
            adv.append(0.0 if mean == 0 else (rewards[i] - mean) / mean)
    return adv


def slow_grpo(
    rows: Sequence[Row],
    *,
    loss_type: str = "grpo",
    clip: float = 0.2,
    beta: float = 0.0,
    max_len: int | None = None,
    truncated: str = "mask",
    part: str = "all",
) -> list[list[float]]:
    """GRPO / bnpo / dr_grpo coefficients (``part``: see :func:`_surrogate`)."""
    kind = "dr_grpo" if loss_type == "dr_grpo" else "grpo"
    adv = slow_group_advantages(rows, kind, truncated)
    return _surrogate(
        rows,
        adv,
        loss_type=loss_type,
        clip=clip,
        beta=beta,
        max_len=max_len,
        truncated=truncated,
        part=part,
    )


def slow_max_rl(rows: Sequence[Row], **knobs: Any) -> list[list[float]]:
    """max_rl coefficients: A = (R − mean)/mean, grpo's surrogate."""
    adv = slow_group_advantages(rows, "max_rl", knobs.get("truncated", "mask"))
    knobs.setdefault("loss_type", "grpo")
    knobs.setdefault("clip", 0.2)
    knobs.setdefault("beta", 0.0)
    knobs.setdefault("max_len", None)
    knobs.setdefault("truncated", "mask")
    return _surrogate(rows, adv, **knobs)


def slow_rae_advantages(
    rows: Sequence[Row], decay: float, baselines: dict[str, float], truncated: str = "mask"
) -> tuple[list[float], dict[str, float]]:
    """A_i = R_i − b_agent, then b ← d b + (1 − d) R_i, rows in order."""
    b = dict(baselines)
    adv = []
    for r, reward in zip(rows, _rewards(rows, truncated), strict=True):
        agent = r.get("agent") or "default"
        before = b.get(agent, 0.0)
        adv.append(reward - before)
        b[agent] = decay * before + (1 - decay) * reward
    return adv, b


def slow_rae(
    rows: Sequence[Row],
    *,
    decay: float = 0.95,
    baselines: dict[str, float] | None = None,
    **knobs: Any,
) -> tuple[list[list[float]], dict[str, float]]:
    """rae coefficients and the baselines after the batch."""
    adv, b = slow_rae_advantages(rows, decay, baselines or {}, knobs.get("truncated", "mask"))
    knobs.setdefault("loss_type", "grpo")
    knobs.setdefault("clip", 0.2)
    knobs.setdefault("beta", 0.0)
    knobs.setdefault("max_len", None)
    knobs.setdefault("truncated", "mask")
    return _surrogate(rows, adv, **knobs), b


def slow_opd(rows: Sequence[Row]) -> list[list[float]]:
    """c = log π_T − log π_θ on action tokens."""
    return [
        [
            r["teacher_logprobs"][t] - r["logprobs"][t] if r["action_mask"][t] else 0.0
            for t in range(len(r["logprobs"]))
        ]
        for r in rows
    ]


def slow_sft(rows: Sequence[Row], pass_threshold: float = 1.0) -> list[list[float]]:
    """c = 1 on action tokens of passing rows."""
    return [
        [
            1.0 if r["action_mask"][t] and r["reward"] >= pass_threshold else 0.0
            for t in range(len(r["logprobs"]))
        ]
        for r in rows
    ]


def slow_dpo_pairs(rows: Sequence[Row], pass_threshold: float = 1.0) -> list[tuple[int, int]]:
    """Each pass in order takes the unused fail of its task with the closest action length."""
    used: set[int] = set()
    pairs = []
    for i, r in enumerate(rows):
        if r["reward"] < pass_threshold:
            continue
        best = None
        for j, s in enumerate(rows):
            if j in used or s["task_id"] != r["task_id"] or s["reward"] >= pass_threshold:
                continue
            gap = abs(sum(map(bool, r["action_mask"])) - sum(map(bool, s["action_mask"])))
            if best is None or gap < best[0]:
                best = (gap, j)
        if best is not None:
            used.add(best[1])
            pairs.append((i, best[1]))
    return pairs


def slow_dpo(
    rows: Sequence[Row], beta: float = 0.1, pass_threshold: float = 1.0
) -> list[list[float]]:
    """c = ±β σ(−βΔ)/P on the chosen / rejected reply's action tokens."""
    pairs = slow_dpo_pairs(rows, pass_threshold)
    row_c = [0.0] * len(rows)

    def logratio(r: Row) -> float:
        return sum(
            r["logprobs"][t] - r["ref_logprobs"][t]
            for t in range(len(r["logprobs"]))
            if r["action_mask"][t]
        )

    for w, lo in pairs:
        delta = logratio(rows[w]) - logratio(rows[lo])
        c = beta / (1 + math.exp(beta * delta)) / len(pairs)
        row_c[w], row_c[lo] = c, -c
    return [
        [row_c[i] if r["action_mask"][t] else 0.0 for t in range(len(r["logprobs"]))]
        for i, r in enumerate(rows)
    ]


def slow_correction(
    rows: Sequence[Row],
    coefs: list[list[float]],
    name: str,
    *,
    eps: float = 0.3,
    band: tuple[float, float] = (0.5, 5.0),
    cap: float = 2.0,
    carries_ratio: bool = False,
    ratio_clamp: float = math.inf,
    reference: list[list[float]] | None = None,
    tis_pg: list[list[float]] | None = None,
) -> list[list[float]]:
    """ipo c·1[|π − μ| ≤ ε], icepop c·1[low ≤ ρ ≤ high], tis ρ → min(ρ, cap).

    ``tis_pg``: for a method whose clip or band tis replaces (the grpo family), the
    policy-gradient part under tis (``slow_grpo(..., part="tis")``); tis gives it plus the KL
    part.

    ``coefs`` is the policy-gradient part of c; ``reference`` (the β KL part) is added back
    untouched. tis: ``c·min(ρ, cap)/ρ`` when ``carries_ratio`` (c carries the method's
    ρ = exp(clamp(log π − log μ, ±ratio_clamp))), else ``c·min(ρ, cap)``.
    """
    out = []
    for i, (r, row_c) in enumerate(zip(rows, coefs, strict=True)):
        new = []
        for t, c in enumerate(row_c):
            kl = reference[i][t] if reference is not None else 0.0
            if not r["action_mask"][t]:
                new.append(0.0)
                continue
            pi, mu = math.exp(r["logprobs"][t]), math.exp(r["behavior_logprobs"][t])
            rho = _exp(r["logprobs"][t] - r["behavior_logprobs"][t])
            if name == "ipo":
                new.append((c if abs(pi - mu) <= eps else 0.0) + kl)
            elif name == "icepop":
                new.append((c if band[0] <= rho <= band[1] else 0.0) + kl)
            elif tis_pg is not None:
                new.append(tis_pg[i][t] + kl)
            elif carries_ratio:
                log_ratio = r["logprobs"][t] - r["behavior_logprobs"][t]
                own = math.exp(max(-ratio_clamp, min(ratio_clamp, log_ratio)))
                new.append((c * cap / own if rho > cap else c) + kl)
            else:
                new.append(c * min(rho, cap) + kl)
        out.append(new)
    return out


def _grid(k: int) -> float:
    """Log-probs on a grid of 1/8: no ratio lands within rounding of a clip or band edge."""
    return -k / 8


def random_rows(
    draw: Any,
    *,
    max_tasks: int = 4,
    max_group: int = 4,
    max_len: int = 6,
    rewards: Sequence[float] = (0.0, 0.25, 0.5, 1.0),
    stale: bool = True,
) -> list[Row]:
    """A hypothesis-drawn ragged batch: interleaved groups, observation spans, truncation.

    Call as ``random_rows(draw)`` inside an ``@st.composite`` strategy.
    """
    from hypothesis import strategies as st

    n_tasks = draw(st.integers(1, max_tasks))
    rows: list[Row] = []
    for task in range(n_tasks):
        for _ in range(draw(st.integers(1, max_group))):
            n = draw(st.integers(1, max_len))
            lp = [_grid(draw(st.integers(0, 24))) for _ in range(n)]
            row: Row = {
                "task_id": f"t{task}",
                "agent": draw(st.sampled_from(["a", "b", ""])),
                "reward": draw(st.sampled_from(list(rewards))),
                "truncated": draw(st.booleans()),
                "logprobs": lp,
                "action_mask": [draw(st.booleans()) or t == 0 for t in range(n)],
                "ref_logprobs": [_grid(draw(st.integers(0, 24))) for _ in range(n)],
                "teacher_logprobs": [_grid(draw(st.integers(0, 24))) for _ in range(n)],
            }
            if stale:
                row["behavior_logprobs"] = [
                    min(0.0, x + _grid(draw(st.integers(-12, 12)))) for x in lp
                ]
            rows.append(row)
    order = draw(st.permutations(range(len(rows))))
    return [rows[i] for i in order]
