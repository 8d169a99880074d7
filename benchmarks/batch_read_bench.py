"""Reading a batch file for ``while update``: the Arrow reader vs the per-row reader it
replaced, in one run.

    python benchmarks/batch_read_bench.py [--rows 256] [--tokens 2048] [--repeats 7]

Writes one seeded ragged JSONL batch (rows of T/2 … T tokens; ``reward``, ``task_id``,
``logprobs``, ``behavior_logprobs``, ``action_mask`` and ``values`` lists) under a temporary
directory, then times file → padded ``[B, T]`` tensors (``Batch.from_columns``) both ways:
``whilecli.io.batch.read_batch`` and :func:`old_read_batch` below (the former reader, kept
here verbatim in its JSONL part: ``json.loads`` per line, one ``np.asarray`` per list). The two
run in turn, ``--repeats`` rounds after a warm-up run each (best times, and the per-round
ratio's median and worst, since a shared machine's load moves them). Checks that both give
the same tensors.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from whilecli.errors import InputError
from whilecli.io.aliases import REWARD_PARTS

# ---------------------------------------------------------------- the former reader (JSONL)


def _old_read_jsonl(path: Path) -> tuple[list[dict[str, Any]], list[int]]:
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                row = json.loads(text)
            except json.JSONDecodeError as err:
                raise InputError(
                    f"not valid JSON ({err.msg})", file=str(path), line=number
                ) from None
            if not isinstance(row, dict):
                raise InputError("expected a JSON object", file=str(path), line=number)
            rows.append(row)
            lines.append(number)
    return rows, lines


def _dig(row: Mapping[str, Any], column: str) -> tuple[bool, Any]:
    if column in row:
        return True, row[column]
    node: Any = row
    for part in column.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def _keys(rows: Sequence[Mapping[str, Any]]) -> set[str]:
    names: set[str] = set()
    for row in rows:
        names.update(row.keys())
        for key, value in row.items():
            if isinstance(value, Mapping):
                names.update(f"{key}.{sub}" for sub in value)
    return names


def _number(v: Any) -> bool:
    return isinstance(v, (bool, int, float, np.integer, np.floating, np.bool_))


def _list_values(value: Any, name: str, err: dict[str, Any]) -> np.ndarray:
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise InputError(f"must be a list of numbers, got {type(value).__name__}", **err)
    arr = np.asarray(value)
    if arr.ndim != 1 and arr.size:
        raise InputError("must be a flat list of numbers", **err)
    kind = arr.dtype.kind
    if arr.size and kind not in "biuf":
        bad = next(v for v in value if isinstance(v, (str, bytes)) or v is None or not _number(v))
        raise InputError(f"holds {bad!r}; every entry must be a number", **err)
    if kind == "b" and name != "action_mask":
        raise InputError("holds booleans; expected numbers", **err)
    return arr.astype(np.float64, copy=False)


def old_read_batch(path: Path) -> Any:
    """The former ``methods.io.read_batch`` on a JSONL file (aliases as they were)."""
    from whilecli.io.columns import Columns, resolve

    rows, lines = _old_read_jsonl(path)
    n = len(rows)
    cols = Columns(size=n, file=str(path), lines=lines)
    src = resolve(_keys(rows), None)
    cols.sources = src
    for name in ("logprobs", "behavior_logprobs", "action_mask", "values"):
        if name not in src:
            continue
        parts: list[np.ndarray] = []
        lengths = np.full(n, -1, dtype=np.int64)
        for i, row in enumerate(rows):
            found, value = _dig(row, src[name])
            if not found or value is None:
                continue
            arr = _list_values(value, name, {**cols.where(i), "field": src[name]})
            parts.append(arr)
            lengths[i] = arr.size
        flat = np.concatenate(parts) if parts else np.zeros(0)
        cols.lists[name] = (flat.astype(np.float64, copy=False), lengths)
    if "reward" in src and src["reward"] != REWARD_PARTS:
        rewards = np.full(n, math.nan)
        present = np.zeros(n, dtype=bool)
        for i, row in enumerate(rows):
            found, value = _dig(row, src["reward"])
            if found and value is not None:
                rewards[i], present[i] = float(value), True
        cols.rewards, cols.reward_present = rewards, present
    if "task_id" in src:
        vals: list[str | None] = []
        for row in rows:
            found, value = _dig(row, src["task_id"])
            vals.append(None if not found or value is None else str(value))
        cols.task_ids = vals
    return cols


# ---------------------------------------------------------------- data and timing


def write_batch(path: Path, rows: int, tokens: int, seed: int = 0) -> None:
    """A ragged batch: row i has T/2 … T tokens, a 16-token observation span, 8 rows a task."""
    rng = np.random.default_rng(seed)
    with path.open("w", encoding="utf-8") as out:
        for i in range(rows):
            n = int(rng.integers(tokens // 2, tokens + 1))
            logprobs = -rng.exponential(0.5, n)
            behavior = logprobs + rng.normal(0.0, 0.05, n)
            behavior = np.minimum(behavior, 0.0)
            mask = np.ones(n, dtype=int)
            start = int(rng.integers(0, max(1, n - 16)))
            mask[start : start + 16] = 0
            row = {
                "task_id": f"task-{i // 8}",
                "reward": float(rng.random() < 0.5),
                "logprobs": logprobs.tolist(),
                "behavior_logprobs": behavior.tolist(),
                "action_mask": mask.tolist(),
                "values": rng.random(n).tolist(),
            }
            out.write(json.dumps(row) + "\n")


def interleaved(fns: list[Callable[[], Any]], repeats: int) -> tuple[list[list[float]], list[Any]]:
    """Each function once to warm up, then ``repeats`` rounds that run each once in turn (so
    a change in the machine's load falls on all of them alike); every run's seconds."""
    outs = [fn() for fn in fns]
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            start = time.perf_counter()
            outs[k] = fn()
            times[k].append(time.perf_counter() - start)
    return times, outs


def main(argv: list[str] | None = None) -> int:
    from whilecli.io.batch import read_batch
    from whilecli.methods.batch import Batch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=256)
    parser.add_argument("--tokens", type=int, default=2048)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; cpus {os.cpu_count()}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "batch.jsonl"
        write_batch(path, args.rows, args.tokens)
        size = path.stat().st_size / 2**20
        print(f"batch {args.rows} x {args.tokens} (ragged), {size:.1f} MiB of JSONL")
        (olds, news), (old, new) = interleaved(
            [
                lambda: Batch.from_columns(old_read_batch(path)),
                lambda: Batch.from_columns(read_batch(path)),
            ],
            args.repeats,
        )
    for name in ("logprobs", "behavior_logprobs", "action_mask", "values", "mask", "rewards"):
        if not torch.equal(getattr(old, name), getattr(new, name)):
            print(f"MISMATCH in {name}")
            return 1
    if old.task_ids != new.task_ids:
        print("MISMATCH in task_ids")
        return 1
    t_old, t_new = min(olds), min(news)
    ratios = sorted(o / n for o, n in zip(olds, news, strict=True))
    print(f"old reader (json.loads per row): best {t_old * 1e3:8.1f} ms")
    print(f"new reader (Arrow):              best {t_new * 1e3:8.1f} ms")
    print(
        f"ratio old/new: {t_old / t_new:.1f}x (best vs best); per round"
        f" median {ratios[len(ratios) // 2]:.1f}x, worst {ratios[0]:.1f}x"
    )
    print(f"after: load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
