"""Check 6's model-name rule (DESIGN section 2): case, organisation and vf-eval's org--name
are forgiven, nothing else; the report names the closest names it saw."""

from __future__ import annotations

from pathlib import Path

import pytest

from whilecli.route import run_route
from whilecli.route.identity import closest, model_key, same_model

MIXED = Path(__file__).resolve().parents[2] / "examples" / "data" / "mixed.parquet"


@pytest.mark.parametrize(
    "name", ["Qwen/Qwen3-0.6B", "qwen/qwen3-0.6b", "Qwen3-0.6B", "QWEN3-0.6B", "qwen--qwen3-0.6b"]
)
def test_same_model_as_people_write_it(name: str) -> None:
    assert same_model(name, "Qwen/Qwen3-0.6B")
    assert model_key(name) == model_key("Qwen3-0.6B")


@pytest.mark.parametrize(
    "name", ["Qwen/Qwen3-0.6B-Base", "Qwen3-0.6B-Instruct", "Qwen/Qwen3-1.7B", "Qwen3-0.6"]
)
def test_near_misses_are_other_models(name: str) -> None:
    assert not same_model(name, "Qwen/Qwen3-0.6B")


def test_closest_names() -> None:
    seen = ["Qwen/Qwen3-0.6B", "meta-llama/Llama-3-8B", "gpt-4o"]
    assert closest("Qwen3-0.6B-Base", seen)[0] == "Qwen/Qwen3-0.6B"


@pytest.mark.parametrize("model", ["qwen/qwen3-0.6b", "Qwen3-0.6B", "qwen--Qwen3-0.6B"])
def test_route_is_on_policy_whatever_the_spelling(model: str) -> None:
    route = run_route(str(MIXED), model=model)
    check = next(c for c in route.checks if c.key == "on_policy")
    assert check.status.value == "pass" and route.route != "off-policy"


def test_near_miss_routes_off_policy_and_names_the_closest() -> None:
    route = run_route(str(MIXED), model="Qwen3-0.6B-Base")
    check = next(c for c in route.checks if c.key == "on_policy")
    assert check.status.value == "fail" and route.route == "off-policy"
    assert check.measured["closest_models"] == ["Qwen/Qwen3-0.6B"]
    assert "closest to Qwen3-0.6B-Base: Qwen/Qwen3-0.6B" in check.why
