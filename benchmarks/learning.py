"""Learning curves on the toy echo task: FlashReinforce, SAO (a small critic), BPCO (a bounded
critic) and GRPO (4 completions per prompt), over a few seeds, each beside a permuted-reward
control.

Each method trains the tiny random Qwen2-style model of :mod:`whilecli.trainers.toy` with
whilecli's two steps in a plain loop (``batch_stats`` once per optimizer batch,
``coefficients`` per micro-batch, 4 micro-batches of a 32-completion batch), single-threaded.
Writes ``benchmarks/out/learning.png`` (mean success probability per step, one colour per
method, the controls dashed; drawn here with zlib, no plotting library) and prints the README
table. Needs the trainers' environment (``bash .ci/trainers`` builds it)::

    python3 benchmarks/learning.py --seeds 3 --steps 40
"""

from __future__ import annotations

import argparse
import struct
import time
import zlib
from pathlib import Path

import torch

from whilecli.trainers.toy import run_plain

METHODS = {  # method: completions per prompt
    "flash_reinforce": 1,
    "sao": 1,
    "bpco": 1,
    "grpo": 4,
}
COLOURS = {
    "flash_reinforce": (214, 39, 40),
    "sao": (31, 119, 180),
    "bpco": (44, 160, 44),
    "grpo": (148, 103, 189),
}
OUT = Path(__file__).resolve().parent / "out"


def _png(pixels: list[bytearray], path: Path) -> None:
    """An RGB PNG from rows of ``width * 3`` bytes."""
    height, width = len(pixels), len(pixels[0]) // 3
    raw = b"".join(b"\x00" + bytes(row) for row in pixels)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
    data += chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    path.write_bytes(data)


def plot(curves: dict[str, tuple[list[float], list[float]]], path: Path) -> None:
    """Mean success per step (solid) and its control (dashed) per method, y from 0 to 1, with
    gridlines at 0.25 steps; 640 × 400 pixels."""
    width, height, margin = 640, 400, 30
    pixels = [bytearray(b"\xff" * width * 3) for _ in range(height)]

    def put(x: int, y: int, rgb: tuple[int, int, int]) -> None:
        for dx in (0, 1):
            for dy in (0, 1):
                if 0 <= x + dx < width and 0 <= y + dy < height:
                    pixels[y + dy][3 * (x + dx) : 3 * (x + dx) + 3] = bytes(rgb)

    def to_xy(i: int, n: int, v: float) -> tuple[float, float]:
        x = margin + (width - 2 * margin) * i / max(n - 1, 1)
        return x, height - margin - (height - 2 * margin) * v

    for k in range(5):  # gridlines and axes
        y = round(to_xy(0, 2, k / 4)[1])
        for x in range(margin, width - margin):
            pixels[y][3 * x : 3 * x + 3] = b"\x33\x33\x33" if k == 0 else b"\xdd\xdd\xdd"
    for y in range(margin, height - margin + 1):
        pixels[y][3 * margin : 3 * margin + 3] = b"\x33\x33\x33"
    for name, (mean, control) in curves.items():
        for series, dashed in ((mean, False), (control, True)):
            n = len(series)
            for i in range(n - 1):
                (x0, y0), (x1, y1) = to_xy(i, n, series[i]), to_xy(i + 1, n, series[i + 1])
                for s in range(41):
                    if dashed and (s // 10) % 2:
                        continue
                    t = s / 40
                    put(round(x0 + (x1 - x0) * t), round(y0 + (y1 - y0) * t), COLOURS[name])
    _png(pixels, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args()
    torch.set_num_threads(1)
    OUT.mkdir(exist_ok=True)
    curves: dict[str, tuple[list[float], list[float]]] = {}
    rows = []
    for name, group in METHODS.items():
        runs, controls = [], []
        start = time.perf_counter()
        for seed in range(args.seeds):
            runs.append(run_plain(name, steps=args.steps, seed=seed, group=group))
            controls.append(run_plain(name, steps=args.steps, seed=seed, group=group, permute=True))
        seconds = (time.perf_counter() - start) / (2 * args.seeds)
        mean = [sum(c[i] for c in runs) / len(runs) for i in range(args.steps + 1)]
        ctrl = [sum(c[i] for c in controls) / len(controls) for i in range(args.steps + 1)]
        curves[name] = (mean, ctrl)
        finals = [c[-1] for c in runs]
        rows.append(
            f"| {name} | {group} | {mean[0]:.2f} | {mean[args.steps // 2]:.2f} | {mean[-1]:.2f} "
            f"({min(finals):.2f}–{max(finals):.2f}) | {ctrl[-1]:.2f} | {seconds:.1f} s |"
        )
    plot(curves, OUT / "learning.png")
    print(f"{args.seeds} seeds, {args.steps} steps of 32 completions, 4 micro-batches each")
    print(
        "| method | completions per prompt | success at 0 | at "
        f"{args.steps // 2} | at {args.steps} (seeds' range) | permuted control | one run |"
    )
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print(f"wrote {OUT / 'learning.png'}")


if __name__ == "__main__":
    main()
