"""A model read only from a field that names a grader's, a dataset's or a tool's model as
often as the writer's (a judge's ``config.model``, verl's ``extra_info.model``, a dataset's
``generation_model``, a role word such as ``generator``) decides check 6 only provisionally:
read as another model's, the verdict SFT rests on what the field means (``model_unsure``).
A sure field (``model``, ``model_name``, ``response.model``) decides firmly, and an unsure
one naming the trained model itself leaves the rows on-policy."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from rows_files import finding_kinds, route_rows, write_rows

TRAINED = "Qwen/Qwen3-8B"
OTHER = "deepseek-ai/DeepSeek-R1"
UNSURE = ["config.model", "metadata.model", "info.model", "extra_info.model", "generation_model"]
UNSURE += ["generator", "llm", "agent"]
SURE = ["model", "model_name", "response.model", "model_path"]


def _put(row: dict[str, Any], dotted: str, value: Any) -> None:
    head, _, last = dotted.rpartition(".")
    (row.setdefault(head, {}) if head else row)[last] = value


def _pool(field: str, name: str) -> list[dict[str, Any]]:
    rnd = random.Random(3)
    rows = []
    for t in range(300):
        p = rnd.uniform(0.2, 0.8)
        for j in range(8):
            row: dict[str, Any] = {"task_id": f"t{t}", "reward": float(rnd.random() < p),
                                   "truncated": False, "completion": f"{t}.{j}.{rnd.random()}"}  # fmt: skip
            _put(row, field, name)
            rows.append(row)
    return rows


@pytest.mark.parametrize("field", UNSURE)
def test_another_model_under_an_unsure_field_is_provisional(tmp_path: Path, field: str) -> None:
    got = route_rows(write_rows(tmp_path, _pool(field, OTHER), "jsonl"), TRAINED)
    assert got.method == "sft" and got.provisional
    assert "model_unsure" in finding_kinds(got)
    mine = route_rows(write_rows(tmp_path, _pool(field, TRAINED), "jsonl"), TRAINED)
    assert (mine.route, mine.provisional) == ("grpo", False)


@pytest.mark.parametrize("field", SURE)
def test_another_model_under_a_sure_field_is_firm(tmp_path: Path, field: str) -> None:
    got = route_rows(write_rows(tmp_path, _pool(field, OTHER), "jsonl"), TRAINED)
    assert (got.method, got.provisional) == ("sft", False)
    assert "model_unsure" not in finding_kinds(got)
