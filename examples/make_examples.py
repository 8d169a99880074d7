"""Write the example data under ``examples/data/``: the pools the docs' commands read.

- one pool per outcome of ``whilecli route`` (:data:`POOLS`);
- ``grouped_batch``: trajectories with per-token log-probs, several per task, for the
  grouped updates (``whilecli update --method grpo``, ``max_rl``, ``opd``, ...);
- ``graded``: graded rows with a grader's scores and a reward model's score, for the row
  methods (``whilecli update --method groupwise`` and ``--method rm``);
- ``shards/part-0.parquet``, ``shards/part-1.parquet``: the ``mixed`` pool's rows dealt
  into two shards (every task in both), for ``whilecli summarize`` and its merge.

Deterministic: every file draws from its own seeded ``random.Random``, JSONL is written with
fixed key order and ``\\n`` line ends, Parquet through pyarrow with a fixed schema, so a
rerun gives byte-identical files (for one pyarrow version). Run from anywhere::

    python examples/make_examples.py            # writes examples/data/
    python examples/make_examples.py --out DIR  # writes DIR/

Each file, the command that reads it and what it prints are listed in ``examples/README.md``.
(``batch.jsonl``, eight single-rollout trajectories, is written by hand and not here.)
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


def grouped_batch(rng: random.Random) -> list[Row]:
    """16 tasks × 4 trajectories, 6-20 tokens each, for the grouped token-level updates.

    Per token: the sampler's ``behavior_logprobs`` b ~ −Exp(1.5); the policy's ``logprobs``
    b + N(0, 0.05) (about one token in 40 is 1.0 lower, so ``--correction icepop`` drops a
    few); ``ref_logprobs`` and ``teacher_logprobs`` near the policy's. One trajectory in
    four has a span of environment tokens (``action_mask`` 0); about one in eight was cut at
    the token cap. Every log-prob ≤ 0, four decimals.
    """
    rows: list[Row] = []
    for i in range(16):
        p = rng.uniform(0.15, 0.85)
        for _ in range(4):
            length = rng.randint(6, 20)
            behavior = [-rng.expovariate(1.5) for _ in range(length)]
            policy = []
            for b in behavior:
                shift = -1.0 if rng.random() < 0.025 else rng.gauss(0.0, 0.05)
                policy.append(min(0.0, b + shift))
            ref = [min(0.0, x + rng.gauss(0.0, 0.1)) for x in policy]
            teacher = [min(0.0, x + rng.gauss(0.2, 0.2)) for x in policy]
            mask = [1] * length
            if rng.random() < 0.25:
                start = rng.randint(1, length - 3)
                for t in range(start, min(length - 1, start + rng.randint(1, 3))):
                    mask[t] = 0
            rows.append(
                {
                    "task_id": f"batch-{i:02d}",
                    "reward": 1.0 if rng.random() < p else 0.0,
                    "truncated": rng.random() < 0.125,
                    "logprobs": _rounded(policy),
                    "behavior_logprobs": _rounded(behavior),
                    "ref_logprobs": _rounded(ref),
                    "teacher_logprobs": _rounded(teacher),
                    "action_mask": mask,
                }
            )
    return rows


def _rounded(values: list[float]) -> list[float]:
    """Four decimals, never above 0 (a log-probability), never ``-0.0``."""
    return [min(0.0, round(v, 4)) + 0.0 for v in values]


def graded(rng: random.Random) -> list[Row]:
    """16 tasks × 4 graded rows with a grader's scores and a reward model's score.

    ``solution_score`` and ``behavior_score`` in [0, 1] (GroupwiseGrading's GRS),
    ``factor`` in [0.5, 1] on passes and null on failures (GAR), ``hack`` on about one
    pass in ten,
    and ``rm_score``, a reward model's score that ranks passes above failures most of the
    time (N(1.5·reward, 0.8)).
    """
    rows: list[Row] = []
    for i in range(16):
        p = rng.uniform(0.2, 0.8)
        for _ in range(4):
            passed = rng.random() < p
            solution = rng.uniform(0.4, 1.0) if passed else rng.uniform(0.0, 0.6)
            rows.append(
                {
                    **_row(f"graded-{i:02d}", passed, STUDENT),
                    "solution_score": round(solution, 3),
                    "behavior_score": round(rng.uniform(0.5, 1.0), 3),
                    "factor": round(rng.uniform(0.5, 1.0), 3) if passed else None,
                    "hack": passed and rng.random() < 0.1,
                    "rm_score": round(rng.gauss(1.5 if passed else 0.0, 0.8), 3),
                }
            )
    return rows


def shards() -> dict[str, list[Row]]:
    """The ``mixed`` pool's rows dealt alternately into two shards: every task in both."""
    rows = build("mixed")
    return {"part-0": rows[0::2], "part-1": rows[1::2]}


#: name -> (builder, seed, columns): files that are not route outcomes. Written as
#: ``NAME.jsonl`` and ``NAME.parquet``.
EXTRAS: dict[str, tuple[Callable[[random.Random], list[Row]], int, dict[str, pa.DataType]]] = {
    "grouped_batch": (
        grouped_batch,
        9,
        {
            "task_id": pa.string(),
            "reward": pa.float64(),
            "truncated": pa.bool_(),
            "logprobs": pa.list_(pa.float64()),
            "behavior_logprobs": pa.list_(pa.float64()),
            "ref_logprobs": pa.list_(pa.float64()),
            "teacher_logprobs": pa.list_(pa.float64()),
            "action_mask": pa.list_(pa.int8()),
        },
    ),
    "graded": (
        graded,
        10,
        {
            "task_id": pa.string(),
            "reward": pa.float64(),
            "truncated": pa.bool_(),
            "model": pa.string(),
            "solution_score": pa.float64(),
            "behavior_score": pa.float64(),
            "factor": pa.float64(),
            "hack": pa.bool_(),
            "rm_score": pa.float64(),
        },
    ),
}
#: The folder of shards under the output folder (Parquet only).
SHARDS = "shards"


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


def write_parquet(rows: list[Row], path: Path, schema: pa.Schema | None = None) -> None:
    """Parquet with a fixed schema, one row group, no dictionary pages, no statistics."""
    schema = schema or _schema(rows)
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


def build_extra(name: str) -> list[Row]:
    """The rows of one of :data:`EXTRAS`, drawn from its own seed."""
    builder, seed, _ = EXTRAS[name]
    return builder(random.Random(seed))


def write_all(out: Path) -> list[Path]:
    """Write every pool and extra under ``out`` as JSONL and Parquet, and the shards as
    Parquet under ``out/shards``; return the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name in POOLS:
        rows = build(name)
        for suffix, writer in ((".jsonl", write_jsonl), (".parquet", write_parquet)):
            path = out / f"{name}{suffix}"
            writer(rows, path)
            written.append(path)
    for name, (_, _, columns) in EXTRAS.items():
        rows = build_extra(name)
        write_jsonl(rows, out / f"{name}.jsonl")
        write_parquet(rows, out / f"{name}.parquet", pa.schema(list(columns.items())))
        written += [out / f"{name}.jsonl", out / f"{name}.parquet"]
    (out / SHARDS).mkdir(exist_ok=True)
    for part, rows in shards().items():
        path = out / SHARDS / f"{part}.parquet"
        write_parquet(rows, path)
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
