"""Greedy decoding recorded in the rows (DESIGN section 1, identical draws): the k rows of a
task drawn at temperature 0 (or ``top_k`` 1, or ``do_sample`` false) that keep no reply are
one draw written k times, as identical replies are, so the band is not measured and the rows
route as one draw per prompt, provisional.

The generator draws tasks with a true pass rate each and writes one greedy draw per task k
times (every row of a task has its grade), with the sampling parameter at one of the places
samplers and harnesses keep it, as JSON Lines or Parquet. The truth is "repeated draws": the
route is ``repeated-draws``, never a firm floor, saturation or GRPO. The other side: the same
parameter at a temperature above 0 with k independent draws routes as without it, and rows
that keep their replies are judged on the replies (an agent at temperature 0 still draws
different replies).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rows_files import finding_kinds, route_rows, write_rows

MODEL = "Qwen/Qwen3-8B"
PLACES = [
    "",
    "sampling_params.",
    "sampling_args.",
    "generation_config.",
    "gen_kwargs.",
    "responses_create_params.",
]
#: (name, the greedy value, a sampling value)
PARAMS = [("temperature", 0.0, 0.7), ("temperature", 0, 1), ("top_k", 1, 50)]
PARAMS += [("do_sample", False, True)]


def _put(row: dict[str, Any], dotted: str, value: Any) -> None:
    head, _, last = dotted.rpartition(".")
    (row.setdefault(head, {}) if head else row)[last] = value


def pool(seed: int, param: str, value: Any, greedy: bool, replies: bool, k: int = 8) -> list[Any]:
    """200 tasks of k rows; greedy: one draw per task written k times (one grade), else k
    independent draws at the task's rate."""
    rnd = random.Random(seed)
    rows = []
    for t in range(200):
        p = rnd.choice([0.0, 0.0, 0.05, 0.3, 0.6, 1.0])
        once = rnd.random() < p
        for j in range(k):
            row: dict[str, Any] = {
                "task_id": f"t{t}",
                "reward": float(once if greedy else rnd.random() < p),
                "model": MODEL,
            }
            if replies:
                row["completion"] = f"attempt {j} at {t}: {rnd.random():.6f}"
            _put(row, param, value)
            rows.append(row)
    return rows


@settings(max_examples=24, deadline=None)
@given(
    place=st.sampled_from(PLACES),
    param=st.sampled_from(PARAMS),
    kind=st.sampled_from(["jsonl", "parquet"]),
    seed=st.integers(0, 2**16),
)
def test_greedy_rows_that_keep_no_reply_are_one_draw(
    tmp_path_factory: pytest.TempPathFactory,
    place: str,
    param: tuple[str, Any, Any],
    kind: str,
    seed: int,
) -> None:
    name, greedy_value, _ = param
    rows = pool(seed, place + name, greedy_value, greedy=True, replies=False)
    got = route_rows(write_rows(tmp_path_factory.mktemp("greedy"), rows, kind), MODEL)
    if not place and name == "top_k":  # a flat top_k is a retrieval's depth as often
        assert "repeated_draws" not in finding_kinds(got)
        return
    assert got.route == "repeated-draws", (place + name, got.route)
    assert got.provisional
    assert "repeated_draws" in finding_kinds(got)
    quality = next(f for f in got.data_quality if f.kind == "repeated_draws")
    assert "greedy decoding recorded" in quality.found


@settings(max_examples=12, deadline=None)
@given(
    place=st.sampled_from(PLACES),
    param=st.sampled_from(PARAMS),
    kind=st.sampled_from(["jsonl", "parquet"]),
    seed=st.integers(0, 2**16),
)
def test_sampled_rows_and_rows_that_keep_replies_are_draws(
    tmp_path_factory: pytest.TempPathFactory,
    place: str,
    param: tuple[str, Any, Any],
    kind: str,
    seed: int,
) -> None:
    """A temperature above 0 (top_k past 1, do_sample true) with independent draws routes as
    the rows without it; rows at temperature 0 that keep differing replies are draws too."""
    name, greedy_value, sampled = param
    folder = tmp_path_factory.mktemp("sampled")
    rows = pool(seed, place + name, sampled, greedy=False, replies=False)
    plain = pool(seed, "unrelated", sampled, greedy=False, replies=False)
    got = route_rows(write_rows(folder, rows, kind), MODEL)
    want = route_rows(write_rows(folder, plain, kind), MODEL)
    assert (got.route, got.method, got.provisional) == (want.route, want.method, want.provisional)
    assert got.route != "repeated-draws"
    kept = pool(seed, place + name, greedy_value, greedy=False, replies=True)
    got = route_rows(write_rows(folder, kept, kind), MODEL)
    assert got.route != "repeated-draws"
    assert "repeated_draws" not in finding_kinds(got)


def _split_pool(seed: int, put: dict[str, Any], k: int = 8) -> list[dict[str, Any]]:
    """1000 tasks of k independent draws at a mid rate (most tasks split pass and fail),
    no reply kept, each row carrying ``put``."""
    rnd = random.Random(seed)
    rows = []
    for t in range(1000):
        p = rnd.uniform(0.2, 0.8)
        for _ in range(k):
            row = {"task_id": f"t{t:05d}", "reward": float(rnd.random() < p), "model": MODEL}
            rows.append({**row, "truncated": False, **put})
    return rows


@pytest.mark.parametrize(
    "put",
    [
        # a judge's temperature filed with the row's metadata: not the sampler's
        {"metadata": {"judge_model": "gpt-4o", "temperature": 0}},
        # a flat temperature 0 (the judge's) beside the sampler's own temperature 1.0
        {"temperature": 0, "sampling_params": {"temperature": 1.0, "max_tokens": 4096}},
        # a retrieval's top_k 1 beside a sampling temperature
        {"params": {"top_k": 1, "chunk_size": 512}, "temperature": 0.8},
        # a flat top_k 1 (a retrieval's) beside the sampler's temperature
        {"top_k": 1, "sampling_params": {"temperature": 1.0}},
        # the sampler's temperature 0 whose draws differ (an API model): most tasks split
        {"temperature": 0},
        {"sampling_params": {"temperature": 0}},
    ],
    ids=["metadata", "flat-beside-sampler", "params-top_k", "flat-top_k", "split", "split-sp"],
)
@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_greedy_decoding_not_the_samplers_or_refuted_by_split_grades(
    tmp_path_factory: pytest.TempPathFactory, put: dict[str, Any], kind: str
) -> None:
    """A temperature or top_k that is not the sampler's (a judge's in ``metadata``, a flat one
    beside ``sampling_params``, a retrieval's ``top_k``), and greedy rows whose tasks hold both
    a pass and a fail (one draw cannot), are no draw repeated: the mid band routes GRPO, as
    the rows without those fields do."""
    folder = tmp_path_factory.mktemp("notgreedy")
    got = route_rows(write_rows(folder, _split_pool(3, put), kind), MODEL)
    plain = route_rows(write_rows(folder, _split_pool(3, {}), kind), MODEL)
    assert "repeated_draws" not in finding_kinds(got), finding_kinds(got)
    assert "some_repeated_draws" not in finding_kinds(got), finding_kinds(got)
    want = (plain.route, plain.method, plain.provisional)
    assert (got.route, got.method, got.provisional) == want
    assert got.route == "grpo"
