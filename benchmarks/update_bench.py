"""Time each method's update: the plain reference, the library, the floor, the Python loops.

    python benchmarks/update_bench.py                    # 256x2048 and 1024x8192 on CPU
    python benchmarks/update_bench.py --no-python        # without the plain-Python loops
    python benchmarks/update_bench.py --device cuda --sizes 1024x8192

Per method, in one process on the same batch: ``plain``, the plain-torch reference function
each method module opens with (eager torch, one line per equation, fresh tensors); the
library's ``method.update`` with fresh outputs (``fresh``) and with the previous call's
outputs passed back (``out=``); and ``floor``, the arithmetic's floor: each input read once,
the method's per-token transcendentals as in-place ``torch.exp`` over one ``[B, T]``
buffer, each output written once. ``plain/out=`` above 1 says the fast path is faster than
the plain reference by that much; ``out=/floor`` says how far the fast path is from the
floor.

Both sides compute the same formulas on the same random batch (ragged lengths, observation
spans, stale behaviour log-probs, critic values): the vectorised side is
``method.update(batch)`` on padded tensors, timed with fresh outputs and with the previous
call's outputs passed back as ``out=`` (a training loop's steady state); the loop side is
``tests/slow_reference.py``. Both sides report their best of several runs. The
loop side runs on at most ``--python-rows`` rows and its time is scaled to the whole batch by
token count (the loops are linear in tokens); the output says when it was extrapolated.
The first lines give the load average and what bounds the vectorised side on this machine
(bandwidth, ``exp`` throughput, the cost of a page fault on a freshly allocated tensor).
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import slow_reference  # noqa: E402
from whilecli.methods.batch import Batch  # noqa: E402
from whilecli.methods.bpco import BPCO, bpco_reference  # noqa: E402
from whilecli.methods.flash_reinforce import FlashReinforce, flash_reinforce_reference  # noqa: E402
from whilecli.methods.grpo import GRPO, group_advantages_reference  # noqa: E402
from whilecli.methods.sao import SAO, sao_reference  # noqa: E402
from whilecli.methods.surrogate import clipped_surrogate_reference  # noqa: E402

METHODS: dict[str, tuple[Callable[[], Any], Callable[[list[dict]], Any] | None]] = {
    "flash_reinforce": (
        lambda: FlashReinforce(trust=0.01),
        lambda rows: slow_reference.flash_reinforce(rows, trust=0.01),
    ),
    "sao": (SAO, slow_reference.sao),
    "bpco": (BPCO, slow_reference.bpco),
    "grpo": (GRPO, None),
}

#: Group size of the benchmark batch's task ids (grpo).
GROUP = 8


def _grpo_plain(bt: Batch) -> torch.Tensor:
    group = torch.arange(bt.size, device=bt.rewards.device) // GROUP
    a = group_advantages_reference(bt.rewards, group, "grpo")
    t = bt.action_mask.sum(dim=1).to(bt.rewards.dtype)
    w = 1 / (t * bt.size)
    return clipped_surrogate_reference(
        bt.logprobs, bt.behavior_logprobs, None, bt.action_mask, a, w
    )


#: name → the plain reference on a batch.
PLAIN: dict[str, Callable[[Batch], Any]] = {
    "flash_reinforce": lambda bt: flash_reinforce_reference(
        bt.rewards, bt.logprobs, bt.behavior_logprobs, bt.action_mask, 0.01
    ),
    "sao": lambda bt: sao_reference(
        bt.rewards, bt.logprobs, bt.behavior_logprobs, bt.values, bt.action_mask
    ),
    "bpco": lambda bt: bpco_reference(
        bt.rewards, bt.logprobs, bt.behavior_logprobs, bt.values, bt.action_mask
    ),
    "grpo": _grpo_plain,
}

#: name → (float [B, T] inputs read, per-token transcendentals, [B, T] outputs written).
#: flash_reinforce: exp ρ, exp π, exp μ and the two logs of Eq. 6; bpco: exp ρ and exp μ.
FLOOR_SHAPE: dict[str, tuple[tuple[str, ...], int, int]] = {
    "flash_reinforce": (("logprobs", "behavior_logprobs"), 5, 2),
    "sao": (("logprobs", "behavior_logprobs", "values"), 1, 3),
    "bpco": (("logprobs", "behavior_logprobs", "values"), 2, 3),
    "grpo": (("logprobs", "behavior_logprobs"), 1, 2),
}


def floor_fn(name: str, bt: Batch) -> Callable[[], None]:
    """The arithmetic's floor for ``name``: read each input (and the mask) once, the
    transcendentals as in-place ``exp`` over one ``[B, T]`` buffer, write each output once."""
    names, n_trans, n_out = FLOOR_SHAPE[name]
    inputs = [getattr(bt, n) for n in names]
    mask = bt.action_mask.view(torch.uint8)
    buf = bt.logprobs.clone()  # values in (−∞, 0]: repeated exp_ stays finite
    outs = [torch.empty_like(bt.logprobs) for _ in range(n_out)]

    def run() -> None:
        for x in inputs:
            x.sum()
        mask.sum(dtype=torch.int64)
        for _ in range(n_trans):
            buf.exp_()
        for o in outs:
            o.fill_(0.0)

    return run


def make_batch(b: int, t: int, seed: int = 0) -> Batch:
    """A random float64 CPU batch: lengths in [t/2, t], ~15% observation tokens."""
    gen = torch.Generator().manual_seed(seed)
    lengths = torch.randint(t // 2, t + 1, (b,), generator=gen)
    mask = torch.arange(t)[None, :] < lengths[:, None]
    logprobs = torch.where(
        mask, -torch.rand(b, t, generator=gen, dtype=torch.float64) * 4 - 1e-3, 0.0
    )
    drift = 0.05 * torch.randn(b, t, generator=gen, dtype=torch.float64)
    behaviour = torch.where(mask, (logprobs + drift).clamp(max=0.0), 0.0)
    action = mask & (torch.rand(b, t, generator=gen) > 0.15)
    action[:, 0] = True
    values = torch.rand(b, t, generator=gen, dtype=torch.float64)
    rewards = (torch.rand(b, generator=gen) > 0.5).double()
    return Batch.from_tensors(
        logprobs,
        rewards=rewards,
        mask=mask,
        behavior_logprobs=behaviour,
        action_mask=action,
        values=values,
    )


def to_rows(batch: Batch, rows: int) -> list[dict]:
    """The first ``rows`` trajectories as the slow loops read them (plain lists)."""
    out = []
    lengths = batch.mask.sum(dim=1).tolist()
    for i in range(rows):
        n = int(lengths[i])
        out.append(
            {
                "reward": float(batch.rewards[i]),
                "logprobs": batch.logprobs[i, :n].tolist(),
                "behavior_logprobs": batch.behavior_logprobs[i, :n].tolist(),
                "action_mask": batch.action_mask[i, :n].tolist(),
                "values": batch.values[i, :n].tolist(),
            }
        )
    return out


def keep_heap() -> None:
    """Raise glibc's mmap and trim thresholds to 1 GiB (M_MMAP_THRESHOLD, M_TRIM_THRESHOLD)."""
    import ctypes

    libc = ctypes.CDLL("libc.so.6")
    libc.mallopt(-3, 1 << 30)  # M_MMAP_THRESHOLD
    libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD


def machine_figures(heap_kept: bool) -> str:
    """What bounds the vectorised side here: L3-resident bandwidth, exp, first-touch faults.

    ``torch.add(a, b, out=c)`` over 4 MB float64 tensors (12 MB moved per call: two reads and
    a write), ``torch.exp`` over the same, and a fresh 64 MB tensor filled once against the
    same fill into memory already touched (the difference is the page-fault cost).
    """
    a = torch.rand(1 << 19, dtype=torch.float64)
    b, c = torch.rand_like(a), torch.empty_like(a)
    add_s = best_of(lambda: torch.add(a, b, out=c), 20, False)
    exp_s = best_of(lambda: torch.exp(a, out=c), 20, False)
    big = torch.empty(1 << 23, dtype=torch.float64)
    fill_s = best_of(lambda: big.fill_(1.0), 5, False)
    fresh_s = best_of(lambda: torch.empty(1 << 23, dtype=torch.float64).fill_(1.0), 5, False)
    pages = (8 << 23) // 4096
    return (
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
        f"torch.add 4 MB: {3 * a.numel() * 8 / add_s / 1e9:.0f} GB/s; "
        f"torch.exp: {exp_s / a.numel() * 1e9:.2f} ns/element; "
        + (
            "first touch: not measured (heap kept)"
            if heap_kept
            else f"first touch: {(fresh_s - fill_s) / pages * 1e6:.2f} µs per 4 KiB page"
        )
    )


def best_of(fn: Callable[[], Any], repeat: int, sync: bool) -> float:
    best = float("inf")
    for _ in range(repeat):
        if sync:
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        if sync:
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes", default="256x2048,1024x8192", help="BxT,... (default: %(default)s)"
    )
    parser.add_argument("--device", default="cpu", help="cpu or cuda (default: %(default)s)")
    parser.add_argument("--dtype", default=None, help="float64 or float32 (default: the device's)")
    parser.add_argument(
        "--python-rows", type=int, default=256, help="rows the loops run on (default: %(default)s)"
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="best of N vectorised runs (default: %(default)s)"
    )
    parser.add_argument(
        "--python-repeat", type=int, default=3, help="best of N loop runs (default: %(default)s)"
    )
    parser.add_argument("--no-python", action="store_true", help="skip the plain-Python loops")
    parser.add_argument(
        "--threads", type=int, default=None, help="torch CPU threads (default: torch's)"
    )
    parser.add_argument(
        "--keep-heap",
        action="store_true",
        help="glibc only: keep freed memory in the heap (mallopt), so large temporaries are "
        "not page-faulted in again on every operation",
    )
    args = parser.parse_args(argv)
    if args.keep_heap:
        keep_heap()
    if args.threads:
        torch.set_num_threads(args.threads)
    dtype = {"float64": torch.float64, "float32": torch.float32, None: None}[args.dtype]
    sync = args.device.startswith("cuda")
    print(
        f"device {args.device}, torch {torch.__version__}, threads {torch.get_num_threads()}, "
        f"heap kept: {args.keep_heap}"
    )
    print(machine_figures(args.keep_heap))
    header = (
        f"{'method':<16}{'batch':>11}{'tokens':>10}{'plain s':>10}{'fresh s':>10}{'out= s':>10}"
        f"{'floor s':>10}{'plain/out=':>11}{'out=/floor':>11}{'python s':>10}{'py/out=':>9}"
    )
    print(header)
    for size in args.sizes.split(","):
        b, t = (int(x) for x in size.lower().split("x"))
        cpu_batch = make_batch(b, t)
        cpu_batch.task_ids = [f"t{i // GROUP}" for i in range(b)]
        batch = cpu_batch.to(args.device, dtype)
        tokens = int(cpu_batch.mask.sum())
        rows_n = min(b, args.python_rows)
        rows = [] if args.no_python else to_rows(cpu_batch, rows_n)
        sub_tokens = sum(len(r["logprobs"]) for r in rows)
        for name, (factory, slow) in METHODS.items():
            method = factory()
            previous = method.update(batch)  # warm-up
            fast = best_of(lambda m=method, bt=batch: m.update(bt), args.repeat, sync)
            reused = best_of(
                lambda m=method, bt=batch, p=previous: m.update(bt, out=p), args.repeat, sync
            )
            plain_fn = PLAIN[name]
            plain_fn(batch)  # warm-up
            plain = best_of(lambda f=plain_fn, bt=batch: f(bt), args.repeat, sync)
            floor_run = floor_fn(name, batch)
            floor_run()
            floor = best_of(floor_run, args.repeat, sync)
            line = (
                f"{name:<16}{size:>11}{tokens:>10}{plain:>10.4f}{fast:>10.4f}{reused:>10.4f}"
                f"{floor:>10.4f}{plain / reused:>10.2f}x{reused / floor:>10.2f}x"
            )
            if rows and slow is not None:
                measured = best_of(lambda f=slow, r=rows: f(r), args.python_repeat, False)
                slow_s = measured * tokens / sub_tokens
                mark = "*" if rows_n < b else ""
                line += f"{slow_s:>9.2f}{mark:1}{slow_s / reused:>8.0f}x"
            print(line, flush=True)
    if not args.no_python and any(
        int(s.lower().split("x")[0]) > args.python_rows for s in args.sizes.split(",")
    ):
        print(
            f"* plain-Python time extrapolated by token count from the first {args.python_rows} rows"
        )
    print(f"after: load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
