"""Draws recorded at temperature 0 whose replies differ (finding ``greedy_band``).

k draws of greedy decoding differ only by a server's nondeterminism (batching, kernels), so
the band they show is greedy decoding's: a task that fails every greedy draw may pass at the
temperature a trainer samples with, and a floor read from such rows was a firm OPSD. The
generator draws where the rows record it (a flat ``temperature``, vLLM's
``sampling_params``, Hugging Face's ``generation_kwargs``, ``do_sample: false``, ``top_k:
1``, or only the settings file beside them), the band (floor or mixed), JSON Lines or
Parquet; the truth: the band is not the sampler's, so the verdict is provisional. Rows that
sampled (temperature 0.7 on most rows), one draw per task, or another model's rows (SFT,
which does not rest on the band) are left as they were."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import write_rows
from whilecli.route import run_route

GREEDY: dict[str, dict[str, Any]] = {
    "flat": {"temperature": 0.0},
    "vllm": {"sampling_params": {"temperature": 0, "max_tokens": 512}},
    "hf": {"generation_kwargs": {"do_sample": False, "max_new_tokens": 512}},
    "top_k": {"sampling_params": {"top_k": 1, "temperature": 1e-6}},
}


def _rows(rng: random.Random, tasks: int, k: int, floor: bool, extra: Any) -> list[dict[str, Any]]:
    rows = []
    for t in range(tasks):
        rate = 0.0 if floor else rng.random()
        for j in range(k):
            row = {
                "task_id": f"t{t}",
                "prompt": f"question {t}",
                "completion": f"answer {t}.{j}.{rng.random():.6f}",  # each draw its own text
                "reward": float(rng.random() < rate),
            }
            rows.append(row | extra(j))
    return rows


def _kinds(route: Any) -> list[str]:
    return [f.kind for f in route.data_quality]


@settings(
    max_examples=16, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    where=st.sampled_from([*GREEDY, "sidecar"]),
    floor=st.booleans(),
    kind=st.sampled_from(["jsonl", "parquet"]),
    seed=st.integers(0, 10_000),
)
def test_greedy_draws_leave_the_band_provisional(
    tmp_path_factory: pytest.TempPathFactory, where: str, floor: bool, kind: str, seed: int
) -> None:
    rng = random.Random(seed)
    extra = (lambda j: {}) if where == "sidecar" else (lambda j: GREEDY[where])
    if where == "sidecar":
        kind = "jsonl"
    folder = tmp_path_factory.mktemp("greedy")
    path = write_rows(folder, _rows(rng, 120, 8, floor, extra), kind)
    if where == "sidecar":  # vf-eval's metadata.json beside its results
        (folder / "metadata.json").write_text(json.dumps({"sampling_args": {"temperature": 0}}))
    route = run_route([str(path)], model="Qwen/Qwen3-8B")
    assert "greedy_band" in _kinds(route), (_kinds(route), route.headline)
    assert route.provisional, route.headline


@pytest.mark.parametrize(
    "case", ["sampled", "mostly_sampled", "one_draw", "another_model", "greedy_without_replies"]
)
def test_what_does_not_rest_on_a_greedy_band(tmp_path: Path, case: str) -> None:
    rng = random.Random(3)
    k = 1 if case == "one_draw" else 8

    def extra(j: int) -> dict[str, Any]:
        if case == "sampled":
            return {"temperature": 0.7}
        if case == "mostly_sampled":
            return {"temperature": 0.0 if j == 0 else 1.0}
        if case == "another_model":
            return {"temperature": 0.0, "model": "gpt-4o"}
        return {"temperature": 0.0}

    rows = _rows(rng, 200, k, False, extra)
    if case == "greedy_without_replies":  # one draw repeated: the band is not measured
        for row in rows:
            del row["completion"]
    path = write_rows(tmp_path, rows, "jsonl")
    route = run_route([str(path)], model="Qwen/Qwen3-8B")
    assert "greedy_band" not in _kinds(route), (_kinds(route), route.headline)
    if case in ("sampled", "mostly_sampled"):
        assert not route.provisional, route.headline
    if case == "another_model":
        assert route.method == "sft" and not route.provisional, route.headline


#: Every place a row records its decoding in, and every way a setting that says greedy is
#: written there (numbers and flags as text too, a strategy's name); a setting that says it
#: sampled, for the judge's object beside it.
PLACES = [
    "",
    "sampling_params.",
    "generation_config.",
    "gen_kwargs.",
    "metadata.",
    "info.",
    "extra_info.",
    "meta.",
    "params.",
    "metadata.sampling_params.",
]
SPELLINGS: list[tuple[str, Any]] = [
    ("temperature", 0),
    ("temperature", 0.0),
    ("temperature", "0"),
    ("temperature", " 0.0 "),
    ("temperature", 1e-6),
    ("do_sample", False),
    ("do_sample", "False"),
    ("do_sample", "false"),
    ("greedy", True),
    ("greedy", "true"),
    ("decoding", "greedy"),
    ("decoding_strategy", "Greedy"),
    ("decoding", "beam_search"),
]


MODEL = "Qwen/Qwen3-8B"


def _nested(place: str, key: str, value: Any) -> dict[str, Any]:
    node: dict[str, Any] = {key: value}
    for part in reversed(place.rstrip(".").split(".") if place else []):
        node = {part: node}
    return node


@settings(
    max_examples=24, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    place=st.sampled_from(PLACES),
    spelling=st.sampled_from(SPELLINGS),
    floor=st.booleans(),
    kind=st.sampled_from(["jsonl", "parquet"]),
    seed=st.integers(0, 10_000),
)
def test_greedy_decoding_is_read_however_it_is_written(
    tmp_path_factory: pytest.TempPathFactory,
    place: str,
    spelling: tuple[str, Any],
    floor: bool,
    kind: str,
    seed: int,
) -> None:
    """Greedy decoding recorded in any place a row keeps its settings, in any spelling:
    the draws differ by a server's nondeterminism, so the band is not the sampler's."""
    rng = random.Random(seed)
    said = _nested(place, *spelling)
    folder = tmp_path_factory.mktemp("spelled")
    path = write_rows(folder, _rows(rng, 120, 8, floor, lambda j: said), kind)
    route = run_route([str(path)], model="Qwen/Qwen3-8B")
    assert "greedy_band" in _kinds(route), (said, _kinds(route), route.headline)
    assert route.provisional, route.headline


@pytest.mark.parametrize("place", ["metadata.", "info.", "extra_info.", "meta.", "params."])
def test_a_judges_settings_are_not_the_samplers(tmp_path: Path, place: str) -> None:
    """A temperature of 0 in a row's extras beside a judge's name is the judge's: the sampled
    draws keep their band, as the same rows without it do."""
    said = _nested(place, "temperature", 0)
    said[place.rstrip(".")]["judge_model"] = "gpt-4o"
    plain = {place.rstrip("."): {"judge_model": "gpt-4o"}}
    routes = []
    for name, put in (("said", said), ("plain", plain)):
        (tmp_path / name).mkdir()
        rows = _rows(random.Random(5), 200, 8, False, lambda j, put=put: put)
        routes.append(run_route([str(write_rows(tmp_path / name, rows, "jsonl"))], model=MODEL))
    got, want = routes
    assert "greedy_band" not in _kinds(got), (said, _kinds(got), got.headline)
    assert (got.route, got.provisional) == (want.route, want.provisional)
