"""One row per id, where the ids are prompts × samples (``t12_s3``, ``q7-sample-2``,
``item4#1``) and no prompt text keys them: the rows may be k draws per prompt read as one
rollout per prompt, so the verdict is provisional (``ids_per_sample``). The generator spells
the sample's index every way writers do, at k from 2 to 8 and from 0 or 1; the other side
holds ids that end in a number without being samples (a benchmark's own numbering, a
subject and its question number, uuids), which say nothing."""

from __future__ import annotations

import random
import uuid
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rows_files import finding_kinds, route_rows, write_rows

MODEL = "Qwen/Qwen3-8B"
SPELLINGS = ["{t}_s{j}", "{t}-sample-{j}", "{t}#{j}", "{t}:{j}", "{t}_rollout_{j}", "{t}/{j}"]


def _rows(ids: list[str], seed: int) -> list[dict]:
    rnd = random.Random(seed)
    return [{"task_id": i, "reward": float(rnd.random() < 0.5), "model": MODEL} for i in ids]


@settings(max_examples=10, deadline=None)
@given(
    spelling=st.sampled_from(SPELLINGS),
    k=st.integers(2, 8),
    base=st.sampled_from([0, 1]),
    stem=st.sampled_from(["t{n}", "q{n}", "gsm8k-{n}", "{n}"]),
    seed=st.integers(0, 2**16),
)
def test_ids_that_read_as_prompts_times_samples_leave_k1_provisional(
    tmp_path_factory: pytest.TempPathFactory, spelling: str, k: int, base: int, stem: str, seed: int
) -> None:
    ids = [spelling.format(t=stem.format(n=n), j=j + base) for n in range(300) for j in range(k)]
    got = route_rows(write_rows(tmp_path_factory.mktemp("ids"), _rows(ids, seed), "jsonl"), MODEL)
    assert got.route == "single-rollout"
    assert got.provisional and "ids_per_sample" in finding_kinds(got)


@pytest.mark.parametrize(
    "ids",
    [
        [f"gsm8k_{n}" for n in range(2000)],
        [f"{s}_{n}" for s in ("algebra", "geometry", "number_theory") for n in range(600)],
        [str(n) for n in range(2000)],
        [str(uuid.UUID(int=random.Random(n).getrandbits(128))) for n in range(2000)],
        [f"q{n}" for n in range(2000)],
        [f"HumanEval/{n}" for n in range(164)] * 1,
    ],
    ids=["benchmark", "subjects", "ints", "uuids", "plain", "humaneval"],
)
def test_ids_that_end_in_a_number_alone_say_nothing(tmp_path: Path, ids: list[str]) -> None:
    got = route_rows(write_rows(tmp_path, _rows(ids, 1), "jsonl"), MODEL)
    assert "ids_per_sample" not in finding_kinds(got)
