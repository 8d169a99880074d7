"""Time each method's update: the Python loops, the plain functions, the library, the floor.

    python benchmarks/update_bench.py                    # 256x2048 and 1024x8192 on CPU
    python benchmarks/update_bench.py --no-python        # without the plain-Python loops
    python benchmarks/update_bench.py --no-compile       # without torch.compile
    python benchmarks/update_bench.py --device cuda --sizes 1024x8192

Per method, in one process on the same batch (ragged lengths, observation spans, stale
behaviour log-probs, critic values, reference and teacher log-probs, task ids in groups of
8), each the median of ``--repeat`` calls:

- ``python``: the plain-Python loops of ``tests/support/slow_reference*.py``, on at most
  ``--python-rows`` rows, scaled to the whole batch by token count (marked ``*``);
- ``plain``: ``method.update(batch, out=previous)`` through the module's eager plain-torch
  function (the path off the CPU), stats and notes included;
- ``fresh`` and ``out=``: the library's default path, with new outputs and with the previous
  call's passed back (a training loop's steady state);
- ``compiled``: ``compile=True``, ``out=``, after ``compile``, the first call, which builds the
  kernels;
- ``floor``: each input read once, each of the method's per-token transcendentals as one
  ``torch.exp`` over a ``[B, T]`` buffer of log-probs, each output written once; the last three columns
  are plain, out= and compiled over it.

A fast path (row blocks, workspaces, NumPy kernels) stays in a module only while ``out=``
beats ``plain`` here (``compiled`` is opt-in: it stands in for the default path only where it
is faster at every size, which no method's is). The first lines give the load average and what bounds
the vectorised side on this machine (bandwidth, ``exp`` throughput, the cost of a page fault
on a freshly allocated tensor).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))

import slow_reference  # noqa: E402
import slow_reference_grouped  # noqa: E402
from whilecli.methods.batch import Batch  # noqa: E402
from whilecli.methods.bpco import BPCO  # noqa: E402
from whilecli.methods.distill import OPD  # noqa: E402
from whilecli.methods.dpo import DPO  # noqa: E402
from whilecli.methods.fastmath import Compiled  # noqa: E402
from whilecli.methods.flash_reinforce import FlashReinforce  # noqa: E402
from whilecli.methods.grpo import GRPO  # noqa: E402
from whilecli.methods.sao import SAO  # noqa: E402
from whilecli.methods.sft import SFT  # noqa: E402

#: name → (the method, given ``compile=``; the plain-Python loops over rows, or None).
METHODS: dict[str, tuple[Callable[..., Any], Callable[[list[dict]], Any] | None]] = {
    "flash_reinforce": (
        lambda **k: FlashReinforce(trust=0.01, **k),
        lambda rows: slow_reference.flash_reinforce(rows, trust=0.01),
    ),
    "sao": (lambda **k: SAO(**k), slow_reference.sao),
    "bpco": (lambda **k: BPCO(**k), slow_reference.bpco),
    "grpo": (lambda **k: GRPO(**k), slow_reference_grouped.slow_grpo),
    "opd": (lambda **k: OPD(**k), slow_reference_grouped.slow_opd),
    "sft": (lambda **k: SFT(**k), slow_reference_grouped.slow_sft),
    "dpo": (lambda **k: DPO(**k), slow_reference_grouped.slow_dpo),
}

#: Methods with no CPU fast path: every device runs their plain function, so their ``plain``
#: and ``out=`` columns time the same code (the ratio is the machine's noise, not a path).
ONE_PATH = {"dpo": "one path: Δ per row, then each row's ±β σ(−βΔ)/P spread on its tokens"}

#: Group size of the benchmark batch's task ids (grpo, dpo).
GROUP = 8

#: name → (float [B, T] inputs read, per-token transcendentals, [B, T] outputs written).
#: flash_reinforce: exp ρ, exp π, exp μ and the two logs of Eq. 6; bpco: exp ρ and exp μ.
FLOOR_SHAPE: dict[str, tuple[tuple[str, ...], int, int]] = {
    "flash_reinforce": (("logprobs", "behavior_logprobs"), 5, 2),
    "sao": (("logprobs", "behavior_logprobs", "values"), 1, 3),
    "bpco": (("logprobs", "behavior_logprobs", "values"), 2, 3),
    "grpo": (("logprobs", "behavior_logprobs"), 1, 2),
    "opd": (("logprobs", "teacher_logprobs"), 0, 2),
    "sft": (("logprobs",), 0, 2),
    "dpo": (("logprobs", "ref_logprobs"), 0, 2),
}


def plain(method: Any) -> Any:
    """``method`` (built with ``compile=True``) made to run its plain function eagerly."""
    method._compiled = Compiled(method._compiled.fn, enabled=False)
    return method


def floor_fn(name: str, bt: Batch) -> Callable[[], None]:
    """The arithmetic's floor for ``name``: read each input (and the mask) once, each
    transcendental as one ``exp`` over a ``[B, T]`` buffer, write each output once."""
    names, n_trans, n_out = FLOOR_SHAPE[name]
    inputs = [getattr(bt, n) for n in names]
    mask = bt.action_mask.view(torch.uint8)
    # exp reads a buffer of log-probs (values in (−∞, 0]) and writes another: the memory
    # traffic of an in-place exp, on the values a method sees. An exp repeated in place
    # would overflow to ∞ within a few calls and time libm's slow path instead.
    src = bt.logprobs.clone()
    buf = torch.empty_like(src)
    outs = [torch.empty_like(bt.logprobs) for _ in range(n_out)]

    def run() -> None:
        for x in inputs:
            x.sum()
        # one byte per token: a max reads it without widening (a sum with dtype=int64 would
        # first copy the whole mask to int64, 16 ms at 1024x8192 where the read takes 0.2)
        mask.amax()
        for _ in range(n_trans):
            torch.exp(src, out=buf)
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
    batch = Batch.from_tensors(
        logprobs,
        rewards=rewards,
        mask=mask,
        behavior_logprobs=behaviour,
        action_mask=action,
        values=values,
    )
    batch.ref_logprobs = torch.where(mask, (logprobs - drift).clamp(max=0.0), 0.0)
    batch.teacher_logprobs = torch.where(mask, (logprobs + 0.5 * drift).clamp(max=0.0), 0.0)
    batch.task_ids = [f"t{i // GROUP}" for i in range(b)]
    return batch


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
                "ref_logprobs": batch.ref_logprobs[i, :n].tolist(),
                "teacher_logprobs": batch.teacher_logprobs[i, :n].tolist(),
                "task_id": batch.task_ids[i],
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


def verdict(name: str, plain_s: float, reused_s: float) -> str:
    """The fast-path column: ``faster``, ``NOT FASTER`` (it goes), or the method has none."""
    if name in ONE_PATH:
        return ONE_PATH[name]
    return "faster" if reused_s < plain_s else "NOT FASTER"


def median_of(fn: Callable[[], Any], repeat: int, sync: bool) -> float:
    """The median wall time of ``repeat`` calls of ``fn`` (the machine is noisy)."""
    times = []
    for _ in range(repeat):
        if sync:
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        if sync:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


best_of = median_of  # the machine figures use the same timer


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
        "--repeat", type=int, default=5, help="median of N vectorised runs (default: %(default)s)"
    )
    parser.add_argument(
        "--python-repeat", type=int, default=1, help="median of N loop runs (default: %(default)s)"
    )
    parser.add_argument("--no-python", action="store_true", help="skip the plain-Python loops")
    parser.add_argument(
        "--python-max-tokens",
        type=int,
        default=10**9,
        help="skip the loops on batches with more tokens (default: %(default)s)",
    )
    parser.add_argument("--no-compile", action="store_true", help="skip compile=True")
    parser.add_argument(
        "--methods",
        default=",".join(METHODS),
        help="comma-separated methods to time (default: %(default)s)",
    )
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
    chosen = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = [m for m in chosen if m not in METHODS]
    if unknown:
        parser.error(f"--methods: unknown {', '.join(unknown)}; known: {', '.join(METHODS)}")
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
        f"{'method':<16}{'batch':>10}{'tokens':>9}{'python':>9}{'plain':>8}{'fresh':>8}"
        f"{'out=':>8}{'compiled':>9}{'compile':>8}{'floor':>8}"
        f"{'plain/fl':>9}{'out=/fl':>8}{'comp/fl':>8}{'plain/out=':>11}  fast path"
    )
    print("seconds per update (median of --repeat); ratios to the floor")
    print(header)
    skipped_python = False
    for size in args.sizes.split(","):
        b, t = (int(x) for x in size.lower().split("x"))
        cpu_batch = make_batch(b, t)
        batch = cpu_batch.to(args.device, dtype)
        tokens = int(cpu_batch.mask.sum())
        rows_n = min(b, args.python_rows)
        python_here = not args.no_python and tokens <= args.python_max_tokens
        skipped_python |= not python_here and not args.no_python
        rows = to_rows(cpu_batch, rows_n) if python_here else []
        sub_tokens = sum(len(r["logprobs"]) for r in rows)
        for name in chosen:
            factory, slow = METHODS[name]
            method = factory()
            previous = method.update(batch)  # warm-up
            fast = median_of(lambda m=method, bt=batch: m.update(bt), args.repeat, sync)
            reused = median_of(
                lambda m=method, bt=batch, p=previous: m.update(bt, out=p), args.repeat, sync
            )
            eager = plain(factory(compile=True))
            prev_plain = eager.update(batch)
            plain_s = median_of(
                lambda m=eager, bt=batch, p=prev_plain: m.update(bt, out=p), args.repeat, sync
            )
            del prev_plain, eager
            compiled_s = first_s = math.nan
            if not args.no_compile:
                comp = factory(compile=True)
                start = time.perf_counter()
                prev_comp = comp.update(batch)  # compiles
                first_s = time.perf_counter() - start
                if comp._compiled.note:
                    print(f"  {name}: {comp._compiled.note}")
                compiled_s = median_of(
                    lambda m=comp, bt=batch, p=prev_comp: m.update(bt, out=p), args.repeat, sync
                )
                del prev_comp, comp
            floor_run = floor_fn(name, batch)
            floor_run()
            floor = median_of(floor_run, args.repeat, sync)
            py = "-"
            if rows and slow is not None:
                measured = median_of(lambda f=slow, r=rows: f(r), args.python_repeat, False)
                py = f"{measured * tokens / sub_tokens:.2f}" + ("*" if rows_n < b else "")
            print(
                f"{name:<16}{size:>10}{tokens:>9}{py:>9}{plain_s:>8.4f}{fast:>8.4f}"
                f"{reused:>8.4f}{compiled_s:>9.4f}{first_s:>8.2f}{floor:>8.4f}"
                f"{plain_s / floor:>8.2f}x{reused / floor:>7.2f}x{compiled_s / floor:>7.2f}x"
                f"{plain_s / reused:>10.2f}x  {verdict(name, plain_s, reused)}",
                flush=True,
            )
            del previous, method
    print(
        "python: the plain-Python loops (tests/support/slow_reference*.py); plain: the update through "
        "the eager plain function; fresh / out=: the library's default path with new outputs "
        "/ the previous ones; compiled: compile=True, out=; compile: its first call (the "
        "compilation); floor: each input read once, each transcendental as one exp over a "
        "[B, T] buffer, each output written once; plain/out=: how many times faster the "
        "module's CPU fast path is than its plain function in this run (a fast path that is not "
        "faster goes; a method with one path says so)."
    )
    if not args.no_python and any(
        int(s.lower().split("x")[0]) > args.python_rows for s in args.sizes.split(",")
    ):
        print(
            f"* plain-Python time extrapolated by token count from the first {args.python_rows} rows"
        )
    if skipped_python:
        print(f"python loops skipped above {args.python_max_tokens} tokens (--python-max-tokens)")
    print(f"after: load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
