"""Grouped and other methods: the vectorised coefficients vs the plain-Python loops, one run.

    python benchmarks/methods_bench.py [--rows 256] [--tokens 2048] [--repeats 5] [--threads 1]

Builds one seeded ragged batch (rows of T/2 … T tokens, an observation span in each, 8 rows
per task, stale behaviour log-probs, reference and teacher log-probs), then for each method
times ``update`` (best of ``--repeats`` runs after a warm-up run) and the plain-Python loop of
the same equations from ``tests/support/slow_reference_grouped.py`` (one run after a warm-up run),
checks that they
agree, and prints tokens/s and the ratio. Conversion of the batch to tensors or lists is not
timed. Corrections are timed on their own, on top of GRPO's coefficients. torch runs on one
thread by default, as the plain-Python loop does: one core against one core.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))

from slow_reference_grouped import (  # noqa: E402
    slow_correction,
    slow_dpo,
    slow_grpo,
    slow_max_rl,
    slow_opd,
    slow_rae,
    slow_sft,
    to_batch,
)
from whilecli.methods.distill import OPD, OPSD  # noqa: E402
from whilecli.methods.dpo import DPO  # noqa: E402
from whilecli.methods.grpo import GRPO, RAE, MaxRL  # noqa: E402
from whilecli.methods.sft import SFT  # noqa: E402
from whilecli.methods.twostep import apply_correction  # noqa: E402


def make_rows(b: int, t: int, seed: int = 0) -> list[dict[str, Any]]:
    """A ragged batch as plain rows (the slow loops' input)."""
    g = torch.Generator().manual_seed(seed)
    rows = []
    for i in range(b):
        n = int(torch.randint(t // 2, t + 1, (1,), generator=g))
        lp = -torch.rand(n, generator=g, dtype=torch.float64) * 3
        blp = (lp + 0.4 * torch.randn(n, generator=g, dtype=torch.float64)).clamp(max=0)
        obs_at = int(torch.randint(0, n, (1,), generator=g))
        mask = [not (obs_at <= k < obs_at + n // 10) for k in range(n)]
        mask[0] = True
        rows.append(
            {
                "task_id": f"task{i // 8}",
                "agent": f"agent{i % 2}",
                "reward": float(torch.randint(0, 3, (1,), generator=g)) / 2,
                "truncated": bool(torch.rand(1, generator=g) < 0.05),
                "logprobs": lp.tolist(),
                "behavior_logprobs": blp.tolist(),
                "ref_logprobs": (-torch.rand(n, generator=g, dtype=torch.float64) * 3).tolist(),
                "teacher_logprobs": (-torch.rand(n, generator=g, dtype=torch.float64) * 3).tolist(),
                "action_mask": mask,
            }
        )
    return rows


def _time(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    out = fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def _max_diff(fast: torch.Tensor, slow: list[list[float]]) -> float:
    worst = 0.0
    for i, r in enumerate(slow):
        ref = torch.tensor(r, dtype=fast.dtype)
        scale = ref.abs().max().clamp(min=1e-300)
        worst = max(worst, float((fast[i, : len(r)] - ref).abs().max() / scale))
    return worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=256)
    ap.add_argument("--tokens", type=int, default=2048)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    args = ap.parse_args()
    torch.set_num_threads(max(1, args.threads))
    rows = make_rows(args.rows, args.tokens)
    batch = to_batch(rows)
    n_tok = int(batch.mask.sum())
    grpo_c = GRPO().update(batch)
    grpo_lists = [grpo_c.coefficients[i, : len(r["logprobs"])].tolist() for i, r in enumerate(rows)]
    cases: list[tuple[str, Callable[[], torch.Tensor], Callable[[], list[list[float]]]]] = [
        ("grpo", lambda: GRPO().update(batch).coefficients, lambda: slow_grpo(rows)),
        (
            "bnpo",
            lambda: GRPO(loss_type="bnpo").update(batch).coefficients,
            lambda: slow_grpo(rows, loss_type="bnpo"),
        ),
        (
            "dr_grpo",
            lambda: GRPO(loss_type="dr_grpo").update(batch).coefficients,
            lambda: slow_grpo(rows, loss_type="dr_grpo"),
        ),
        (
            "grpo β=0.04",
            lambda: GRPO(beta=0.04).update(batch).coefficients,
            lambda: slow_grpo(rows, beta=0.04),
        ),
        ("max_rl", lambda: MaxRL().update(batch).coefficients, lambda: slow_max_rl(rows)),
        ("rae", lambda: RAE().update(batch).coefficients, lambda: slow_rae(rows)[0]),
        ("opd", lambda: OPD().update(batch).coefficients, lambda: slow_opd(rows)),
        ("opsd", lambda: OPSD().update(batch).coefficients, lambda: slow_opd(rows)),
        (
            "dpo",
            lambda: DPO(pass_threshold=1.0).update(batch).coefficients,
            lambda: slow_dpo(rows),
        ),
        ("sft", lambda: SFT().update(batch).coefficients, lambda: slow_sft(rows)),
    ]
    for name in ("ipo", "icepop", "tis"):
        cases.append(
            (
                f"+{name}",
                lambda n=name: apply_correction(grpo_c, batch, n).coefficients,
                lambda n=name: slow_correction(rows, grpo_lists, n),
            )
        )
    print(
        f"batch {args.rows} x {args.tokens} ({n_tok} tokens), {batch.logprobs.dtype}, "
        f"{torch.get_num_threads()} threads; fast = best of {args.repeats}, slow = 1 run, each after a warm-up"
    )
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'method':<12} {'fast tok/s':>12} {'slow tok/s':>12} {'ratio':>8} {'max rel diff':>13}")
    for name, fast, slow in cases:
        t_fast, c = _time(fast, args.repeats)
        t_slow, ref = _time(slow, 1)
        print(
            f"{name:<12} {n_tok / t_fast:>12.3g} {n_tok / t_slow:>12.3g} "
            f"{t_slow / t_fast:>7.0f}x {_max_diff(c, ref):>13.1e}"
        )
    print(f"after: load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
