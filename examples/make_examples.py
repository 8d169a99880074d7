"""Write the example pools under ``examples/data/``: one per outcome of ``while route``.

Deterministic: every pool draws from its own seeded ``random.Random``, JSONL is written with
fixed key order and ``\\n`` line ends, Parquet through pyarrow with a fixed schema, so a
rerun gives byte-identical files (for one pyarrow version). Run from anywhere::

    python examples/make_examples.py            # writes examples/data/
    python examples/make_examples.py --out DIR  # writes DIR/

Each pool, the command that routes it and the verdict are listed in ``examples/README.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

STUDENT = "Qwen/Qwen3-0.6B"
TEACHER = "Qwen/Qwen3-8B"
OTHER = "gpt-4.1-mini"

Row = dict[str, Any]


def _row(task: str, passed: bool, model: str, truncated: bool = False) -> Row:
    return {
        "task_id": task,
        "reward": 1.0 if passed else 0.0,
        "truncated": truncated,
        "model": model,
    }


def _grouped(
    rng: random.Random,
    prefix: str,
    tasks: int,
    k: int,
    rate: Callable[[random.Random], float],
    model: str,
) -> list[Row]:
    """``tasks`` × ``k`` rows; task i passes each rollout with a probability drawn by ``rate``."""
    rows: list[Row] = []
    for i in range(tasks):
        p = rate(rng)
        for _ in range(k):
            rows.append(_row(f"{prefix}-{i:03d}", rng.random() < p, model))
    return rows


def mixed(rng: random.Random) -> list[Row]:
    """64 tasks × 8 rollouts with pass rates spread over (0.1, 0.9): routes to GRPO."""
    return _grouped(rng, "mixed", 64, 8, lambda r: r.uniform(0.1, 0.9), STUDENT)


def floor(rng: random.Random) -> list[Row]:
    """32 tasks × 4 rollouts, every rollout fails: the floor, OPSD (SFT under 7B)."""
    return _grouped(rng, "floor", 32, 4, lambda r: 0.0, STUDENT)


def saturated(rng: random.Random) -> list[Row]:
    """32 tasks × 4 rollouts, every rollout passes: GroupwiseGrading or a harder eval."""
    return _grouped(rng, "saturated", 32, 4, lambda r: 1.0, STUDENT)


def single(rng: random.Random) -> list[Row]:
    """100 prompts × 1 rollout with the sampler's per-token log-probs: FlashReinforce family."""
    rows: list[Row] = []
    for i in range(100):
        row = _row(f"single-{i:03d}", rng.random() < 0.5, STUDENT)
        length = rng.randint(3, 8)
        row["token_logprobs"] = [round(-rng.expovariate(2.0), 4) for _ in range(length)]
        rows.append(row)
    return rows


def truncated_passes(rng: random.Random) -> list[Row]:
    """32 tasks × 4 rollouts where some replies cut at the token cap still pass: fix the reward."""
    rows = _grouped(rng, "cut", 32, 4, lambda r: r.uniform(0.2, 0.8), STUDENT)
    for row in rows:
        if rng.random() < 0.15:
            row["truncated"] = True
    # a reply cut at the cap lands the keyword: at least three truncated passes, in fixed places
    for index in (5, 41, 90):
        rows[index]["truncated"] = True
        rows[index]["reward"] = 1.0
    return rows


def other_model(rng: random.Random) -> list[Row]:
    """A mixed pool written by another model than the one to train: SFT, or OPD from it."""
    return _grouped(rng, "other", 48, 4, lambda r: r.uniform(0.2, 0.9), OTHER)


def student(rng: random.Random) -> list[Row]:
    """The student: 64 tasks × 4 rollouts at pass rates around 0.35."""
    return _grouped(rng, "pair", 64, 4, lambda r: min(1.0, max(0.0, r.gauss(0.35, 0.15))), STUDENT)


def teacher(rng: random.Random) -> list[Row]:
    """The teacher on the same 64 tasks, around 0.85, never truncated: it clears the student."""
    return _grouped(rng, "pair", 64, 4, lambda r: min(1.0, max(0.0, r.gauss(0.85, 0.1))), TEACHER)


#: name -> (builder, seed). Every pool is written as ``NAME.jsonl`` and ``NAME.parquet``.
POOLS: dict[str, tuple[Callable[[random.Random], list[Row]], int]] = {
    "mixed": (mixed, 1),
    "floor": (floor, 2),
    "saturated": (saturated, 3),
    "single": (single, 4),
    "truncated_passes": (truncated_passes, 5),
    "other_model": (other_model, 6),
    "student": (student, 7),
    "teacher": (teacher, 8),
}


def _schema(rows: list[Row]) -> pa.Schema:
    fields = [
        pa.field("task_id", pa.string()),
        pa.field("reward", pa.float64()),
        pa.field("truncated", pa.bool_()),
        pa.field("model", pa.string()),
    ]
    if any("token_logprobs" in row for row in rows):
        fields.append(pa.field("token_logprobs", pa.list_(pa.float64())))
    return pa.schema(fields)


def write_jsonl(rows: list[Row], path: Path) -> None:
    """One JSON object a line, keys in a fixed order, ``\\n`` line ends."""
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_parquet(rows: list[Row], path: Path) -> None:
    """Parquet with a fixed schema, one row group, no dictionary pages, no statistics."""
    schema = _schema(rows)
    table = pa.Table.from_pylist(rows, schema=schema)
    pq.write_table(
        table,
        path,
        compression="zstd",
        use_dictionary=False,
        write_statistics=False,
        store_schema=False,
    )


def build(name: str) -> list[Row]:
    """The rows of one pool, drawn from its own seed."""
    builder, seed = POOLS[name]
    rows = builder(random.Random(seed))
    if not all(math.isfinite(row["reward"]) for row in rows):
        raise ValueError(f"{name}: a reward is not finite")
    return rows


def write_all(out: Path) -> list[Path]:
    """Write every pool under ``out`` as JSONL and Parquet; return the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name in POOLS:
        rows = build(name)
        for suffix, writer in ((".jsonl", write_jsonl), (".parquet", write_parquet)):
            path = out / f"{name}{suffix}"
            writer(rows, path)
            written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "data")
    args = parser.parse_args(argv)
    for path in write_all(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
