"""Rows that name no model in files whose path names another model than ``--model``'s
(``gpt-4o-airline.json``, ``runs/Llama-3.1-70B/step_3/rollouts.jsonl``): check 6 cannot
read the writer from the rows, and the path says another model wrote them, so the verdict
is provisional (``model_in_path``, :func:`whilecli.io.modelid.names_other_model`). A path
that names ``--model``'s model in any spelling, or names none, moves nothing; rows that name
their model are read by their own field."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.rows_files import finding_kinds, route_rows, write_rows

from whilecli.io.modelid import names_other_model, path_model

MODEL = "Qwen/Qwen3-8B"
#: Names of other models as tools write them into folder and file names.
OTHERS = (
    *("gpt-4o", "gpt-4.1-mini", "claude-3-5-sonnet-20241022", "gemini-1.5-pro", "o3-mini"),
    *("Llama-3.1-70B-Instruct", "meta-llama__Meta-Llama-3-8B-Instruct", "mistral-7b"),
    *("deepseek-r1", "Qwen2.5-72B-Instruct", "qwen3-32b", "gemma-2-9b-it"),
)
#: ``MODEL`` as folder and file names spell it.
SAME = ("Qwen3-8B", "qwen3_8b", "Qwen__Qwen3-8B", "Qwen--Qwen3-8B", "qwen3-8b-grpo", "QWEN3-8B")
NEUTRAL = ("rollouts", "step_100", "run7", "eval", "outputs", "math_python")


def _rows(seed: int, named: bool) -> list[dict[str, object]]:
    """200 tasks at k = 8, each task's pass rate uniform: most tasks split (firm GRPO)."""
    rng = random.Random(seed)
    rows: list[dict[str, object]] = []
    for task in range(200):
        p = rng.random()
        for _ in range(8):
            row: dict[str, object] = {
                "task_id": f"q{task}",
                "reward": float(rng.random() < p),
                "truncated": False,
            }
            if named:
                row["model"] = MODEL
            rows.append(row)
    return rows


def _place(root: Path, name: str, where: str, sep: str) -> Path:
    """A folder for the rows file under ``root`` whose path holds ``name`` ``where``: in the
    file's name (``{name}{sep}rollouts``), the folder holding it, or two folders up."""
    if where == "file":
        folder = root / "data"
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{name}{sep}rollouts"
    folder = root / name / "step_3" if where == "grandparent" else root / "runs" / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "rollouts"


def _write(target: Path, rows: list[dict[str, object]], kind: str) -> Path:
    written = write_rows(target.parent, rows, kind)
    return written.rename(target.with_name(f"{target.name}.{kind}"))


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(OTHERS),
    where=st.sampled_from(("file", "parent", "grandparent")),
    sep=st.sampled_from(("_", "-", ".")),
    kind=st.sampled_from(("jsonl", "parquet")),
    seed=st.integers(0, 10_000),
)
def test_a_path_naming_another_model_leaves_the_verdict_provisional(
    name: str, where: str, sep: str, kind: str, seed: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("paths")
    path = _write(_place(root, name, where, sep), _rows(seed, named=False), kind)
    route = route_rows(path, MODEL)
    assert route.method == "grpo"
    assert "model_in_path" in finding_kinds(route)
    assert route.provisional


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from((*SAME, *NEUTRAL)),
    where=st.sampled_from(("file", "parent", "grandparent")),
    kind=st.sampled_from(("jsonl", "parquet")),
    seed=st.integers(0, 10_000),
)
def test_a_path_naming_the_model_or_none_moves_nothing(
    name: str, where: str, kind: str, seed: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("paths")
    path = _write(_place(root, name, where, "_"), _rows(seed, named=False), kind)
    route = route_rows(path, MODEL)
    assert route.method == "grpo"
    assert "model_in_path" not in finding_kinds(route)
    assert not route.provisional


@pytest.mark.parametrize("name", OTHERS[:4])
def test_rows_that_name_their_model_are_read_by_it(name: str, tmp_path: Path) -> None:
    path = _write(_place(tmp_path, name, "parent", "_"), _rows(1, named=True), "jsonl")
    route = route_rows(path, MODEL)
    assert "model_in_path" not in finding_kinds(route)
    assert not route.provisional and route.method == "grpo"


def test_without_model_the_path_is_not_compared(tmp_path: Path) -> None:
    from whilecli.route import run_route

    path = _write(_place(tmp_path, "gpt-4o", "file", "_"), _rows(2, named=False), "jsonl")
    route = run_route(str(path))
    assert "model_in_path" not in [f.kind for f in route.data_quality]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("part", "model", "other"),
    [
        ("gpt-4o-airline.json", "Qwen/Qwen3-8B", True),
        ("gpt-4o-airline.json", "gpt-4o", False),
        ("gpt-4o-airline.json", "openai/gpt-4o-2024-08-06", False),
        ("claude-3-5-sonnet_rollouts", "my-org/policy-v2", True),  # an API's model: never trained
        ("llama-3.1-8b-rollouts", "Qwen/Qwen3-8B", True),  # another family
        ("qwen2.5-72b-instruct", "Qwen/Qwen3-8B", True),  # the family at another size
        ("qwen3-grpo", "Qwen/Qwen3-8B", False),  # the family, no size: says nothing
        ("qwen3-8b-rollouts", "my-org/policy-v2", False),  # a fine-tune's own name: unknown
        ("Qwen__Qwen3-8B", "Qwen/Qwen3-8B", False),
        ("qwen3_8b", "/models/Qwen3-8B/checkpoint-100", False),
        ("Qwen3-8B-AWQ", "Qwen/Qwen3-8B", False),
        ("command-r-plus", "Qwen/Qwen3-8B", True),
    ],
)
def test_names_other_model(part: str, model: str, other: bool) -> None:
    assert names_other_model(part, model) is other


@pytest.mark.parametrize(
    ("parts", "found"),
    [
        (("runs", "gpt-4o", "rollouts.jsonl"), "gpt-4o"),
        (("gpt-4o", "a", "b", "c", "rollouts.jsonl"), None),  # four folders up: not read
        (("philosophy", "graphics", "commands", "proto1.jsonl"), None),  # words, not models
        (("data", "Llama-3.1-8B.parquet"), "Llama-3.1-8B.parquet"),
        # a model in another role, or a dataset made with one: not the writer's
        (("runs", "qwen3-8b-grpo", "gpt-4o-judge", "rollouts.jsonl"), "qwen3-8b-grpo"),
        (("judged_by_gpt-4o", "rollouts.jsonl"), None),
        (("tulu-3-sft-mixture", "math_gpt4o_labels.jsonl"), None),
        (("r1-distill-qwen-7b", "gsm8k-llama-3-format", "rollouts.jsonl"), None),
        (("deepseek_math", "grok-math", "qwen-math-data", "rollouts.jsonl"), None),
    ],
)
def test_path_model_reads_the_file_name_then_three_folders(
    parts: tuple[str, ...], found: str | None, tmp_path: Path
) -> None:
    assert path_model(tmp_path.joinpath(*parts)) == found
