"""lm-eval tasks sampled several times per doc (``repeats: k``): a metric that sums up several
samples (``pass@k`` with k > 1, a ``maj@k`` vote) is never one rollout's grade, whatever its
values; a per-doc ``pass@1`` over k replies is read as k rollouts with round(pass@1 × k)
passes (lm_eval/tasks/humaneval: ``repeats: 20``, ``k: [1, 10]``, ``resps: [[k replies]]``)."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from whilecli.errors import InputError
from whilecli.io.read import read_rows

STAMP = "2025-03-01T10-00-00.000000"


def _pass_at(n: int, c: int, k: int) -> float:
    """HF code_eval's unbiased pass@k of c passes out of n."""
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def _write(
    folder: Path,
    passes: list[int],
    k: int,
    metrics: list[str],
    repeats_in_config: bool = True,
    metrics_key: bool = True,
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"samples_humaneval_{STAMP}.jsonl", "w") as fh:
        for doc, c in enumerate(passes):
            row: dict[str, Any] = {
                "doc_id": doc,
                "doc": {"task_id": f"HumanEval/{doc}"},
                "arguments": {"gen_args_0": {"arg_0": f"def f{doc}():\n", "arg_1": {}}},
                "resps": [[f"    return {doc}+{j}\n" for j in range(k)]],
                "filtered_resps": [[f"def f{doc}():\n    return {doc}+{j}\n" for j in range(k)]],
                "filter": "create_test",
            }
            if metrics_key:
                row["metrics"] = metrics
            for m in metrics:
                row[m] = _pass_at(k, c, int(m.split("@")[1]))
            fh.write(json.dumps(row) + "\n")
    config: dict[str, Any] = {"task": "humaneval", "output_type": "generate_until"}
    if repeats_in_config:
        config["repeats"] = k
    results = {
        "results": {
            "humaneval": {"alias": "humaneval", **{f"{m},create_test": 0.5 for m in metrics}}
        },
        "configs": {"humaneval": config},
        "model_name": "Qwen/Qwen2.5-Coder-7B",
    }
    (folder / f"results_{STAMP}.json").write_text(json.dumps(results))
    return folder


CASES = [
    (k, metrics, in_config, key)
    for k in (4, 20)
    for metrics in (["pass@1", "pass@10"], ["pass@10", "pass@1"], ["pass@1"])
    for in_config in (True, False)
    for key in (True, False)
    if k >= max(int(m.split("@")[1]) for m in metrics) or metrics == ["pass@1"]
]


@pytest.mark.parametrize(("k", "metrics", "in_config", "key"), CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_repeats_read_as_k_rollouts_per_doc(
    tmp_path: Path, k: int, metrics: list[str], in_config: bool, key: bool, seed: int
) -> None:
    rng = random.Random(seed)
    passes = [rng.randint(0, k) for _ in range(12)]
    folder = _write(tmp_path / "m", passes, k, metrics, in_config, key)
    rows = read_rows([str(folder)])
    frame = rows.frame.collect()
    per = (
        frame.group_by("task_id")
        .agg(n=pl.len(), c=pl.col("passed").cast(pl.Int64).sum())
        .sort(pl.col("task_id").cast(pl.Int64))
    )
    assert per["n"].to_list() == [k] * len(passes)
    assert per["c"].to_list() == passes
    assert rows.sources["reward"].startswith("pass@1")
    assert set(frame["model"].to_list()) == {"Qwen/Qwen2.5-Coder-7B"}


def test_pass_at_k_alone_is_refused(tmp_path: Path) -> None:
    folder = _write(tmp_path / "m", [0, 12, 20, 3], 20, ["pass@10"])
    with pytest.raises(InputError, match="pass@10.*aggregate.*add pass@1"):
        read_rows([str(folder)])


def test_a_vote_is_never_the_grade(tmp_path: Path) -> None:
    """maj@k filters grade a vote; a take-first filter's rows are one rollout each."""
    folder = tmp_path / "sc"
    folder.mkdir()
    rows = []
    for flt, first in (("maj@64", 1.0), ("score-first", 0.0)):
        for doc in range(5):
            rows.append(
                {
                    "doc_id": doc,
                    "resps": [["a", "b", "c"]],
                    "filtered_resps": ["a"],
                    "filter": flt,
                    "metrics": ["exact_match"],
                    "exact_match": first if doc % 2 else 1.0 - first,
                }
            )
    path = folder / f"samples_gsm8k_sc_{STAMP}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = read_rows([str(path)])
    frame = got.frame.collect()
    assert frame["reward"].to_list() == [1.0, 0.0, 1.0, 0.0, 1.0]
    only_votes = [r for r in rows if r["filter"] == "maj@64"]
    path.write_text("".join(json.dumps(r) + "\n" for r in only_votes))
    with pytest.raises(InputError, match="vote over several samples"):
        read_rows([str(path)])
