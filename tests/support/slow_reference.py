"""Plain-Python loops over the seed's equations, one function per method, read next to the spec.

Each function takes rows as the seed writes them (``reward``, ``logprobs``, optional
``behavior_logprobs``, ``action_mask``, ``values``) and returns, per row, the coefficients,
the advantages, whether it was admitted, and the value targets (None without a critic). The
conventions are DESIGN section 3's. Nothing here is vectorised: it is the independent
statement the tensor code is checked against, and the baseline the benchmark times.
"""

from __future__ import annotations

import math
from typing import Any

Row = dict[str, Any]
Result = tuple[list[list[float]], list[list[float]], list[bool], list[list[float]] | None]


def _mask(row: Row) -> list[bool]:
    return [bool(m) for m in row.get("action_mask", [1] * len(row["logprobs"]))]


def _behaviour(row: Row) -> list[float]:
    return row.get("behavior_logprobs") or row["logprobs"]


def flash_reinforce(rows: list[Row], trust: float = 0.003) -> Result:
    """Hu et al. 2026, Eq. 5-10: c = m_i A_i ρ / (T_i B)."""
    b = len(rows)
    mean_r = sum(float(r["reward"]) for r in rows) / b  # Eq. 5
    coefs, advs, admitted = [], [], []
    for row in rows:
        mask = _mask(row)
        lp, bl = row["logprobs"], _behaviour(row)
        a = float(row["reward"]) - mean_r
        t_i = sum(mask)
        d_sum = 0.0
        for t in range(len(lp)):
            if not mask[t]:
                continue
            p = min(max(math.exp(bl[t]), 1e-6), 1 - 1e-6)
            q = min(max(math.exp(lp[t]), 1e-6), 1 - 1e-6)
            d_sum += p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))  # Eq. 6
        m = d_sum / t_i <= trust  # Eq. 7-8
        c = []
        for t in range(len(lp)):
            if mask[t] and m:
                rho = math.exp(min(max(lp[t] - bl[t], -30.0), 30.0))
                c.append(a * rho / (t_i * b))  # Eq. 10
            else:
                c.append(0.0)
        coefs.append(c)
        advs.append([a] * len(lp))
        admitted.append(m)
    return coefs, advs, admitted, None


def _gae(row: Row, alpha: float) -> list[float]:
    """Skip-observation GAE, γ = 1: δ_k = r_k + V(a_{k+1}) − V(a_k), A_k = δ_k + λ A_{k+1}."""
    mask = _mask(row)
    values = row["values"]
    actions = [t for t in range(len(mask)) if mask[t]]
    n = len(actions)
    lam = max(0.0, 1.0 - 1.0 / (alpha * n)) if n else 0.0
    adv = [0.0] * len(mask)
    running = 0.0
    for k in range(n - 1, -1, -1):
        t = actions[k]
        v_next = values[actions[k + 1]] if k + 1 < n else 0.0
        r = float(row["reward"]) if k == n - 1 else 0.0
        delta = r + v_next - values[t]
        running = delta + lam * running
        adv[t] = running
    return adv


def sao(
    rows: list[Row],
    ratio: tuple[float, float] = (0.7, 6.0),
    gae_alpha: float = 1.5,
    tis_cap: float | None = None,
) -> Result:
    """Hou et al. 2026, Eq. 1-5: c = f(ρ) A / N, f(ρ) = ρ inside the open band.

    ``tis_cap``: under ``--correction tis`` the band gives way, f(ρ) = min(ρ, cap) on every
    action token."""
    low, high = ratio
    n_total = sum(sum(_mask(r)) for r in rows)
    coefs, advs, admitted, targets = [], [], [], []
    for row in rows:
        mask = _mask(row)
        lp, bl = row["logprobs"], _behaviour(row)
        adv = _gae(row, gae_alpha)
        c, any_in = [], False
        for t in range(len(lp)):
            try:
                rho = math.exp(lp[t] - bl[t])
            except OverflowError:
                rho = math.inf
            if mask[t] and tis_cap is not None:
                c.append(min(rho, tis_cap) * adv[t] / n_total)
                any_in = any_in or c[-1] != 0
            elif mask[t] and low < rho < high:
                c.append(rho * adv[t] / n_total)
                any_in = True
            else:
                c.append(0.0)
        coefs.append(c)
        advs.append(adv)
        admitted.append(any_in)
        targets.append([float(row["reward"])] * len(lp))
    return coefs, advs, admitted, targets


def bpco(
    rows: list[Row],
    clip: float = 0.2,
    gae_alpha: float = 0.4,
    reward_range: tuple[float, float] = (0.0, 1.0),
    tis_cap: float | None = None,
) -> Result:
    """Qi et al. 2026, Eq. 2-4, 11, 14: c = ρA where min(ρA, clip(ρ, 1 ± ε/μ)A) is unclipped.

    ``tis_cap``: under ``--correction tis`` the clip gives way, c = min(ρ, cap) A on every
    action token (ρ unclamped)."""
    coefs, advs, admitted, targets = [], [], [], []
    for row in rows:
        assert all(reward_range[0] <= v <= reward_range[1] for v in row["values"])
        mask = _mask(row)
        lp, bl = row["logprobs"], _behaviour(row)
        adv = _gae(row, gae_alpha)
        c, any_kept = [], False
        for t in range(len(lp)):
            if not mask[t]:
                c.append(0.0)
                continue
            if tis_cap is not None:
                try:
                    weight = min(math.exp(lp[t] - bl[t]), tis_cap)
                except OverflowError:
                    weight = tis_cap
                c.append(weight * adv[t])
                any_kept = any_kept or c[-1] != 0
                continue
            rho = math.exp(min(max(lp[t] - bl[t], -20.0), 20.0))
            mu = math.exp(bl[t])
            half = clip / mu if mu > 0 else math.inf
            a = adv[t]
            unclipped = (a > 0 and rho <= 1 + half) or (a < 0 and rho >= 1 - half) or a == 0
            c.append(rho * a if unclipped else 0.0)
            any_kept = any_kept or unclipped
        coefs.append(c)
        advs.append(adv)
        admitted.append(any_kept)
        targets.append([float(row["reward"])] * len(lp))
    return coefs, advs, admitted, targets
