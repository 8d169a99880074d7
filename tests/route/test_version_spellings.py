"""One policy version, every spelling: the rows' ``policy_version`` (a number, a float, a
step's text, a checkpoint folder), a ``model@version`` and ``--model M@VERSION`` each read
through :func:`whilecli.io.versions.version_id`. The same step in two spellings is one
version (on-policy); an older step is an older copy (Async); a newer one is a newer copy,
never "an older copy". Other text versions compare as written. A version-named field
(``model_version``) holding a version names no model.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from whilecli.io.versions import is_version_text, version_id, version_step
from whilecli.route import run_route
from whilecli.route.model import CheckResult, Route

MODEL = "Qwen/Qwen2.5-7B-Instruct"
STEP = 100

#: How the rows write step ``n``: (field, value).
ROW_SPELLINGS: dict[str, Callable[[int], tuple[str, Any]]] = {
    "int": lambda n: ("policy_version", n),
    "float": lambda n: ("policy_version", float(n)),
    "text": lambda n: ("policy_version", str(n)),
    "step_": lambda n: ("policy_version", f"step_{n}"),
    "global_step_": lambda n: ("step", f"global_step_{n}"),
    "checkpoint-": lambda n: ("checkpoint", f"checkpoint-{n}"),
    "ckpt path": lambda n: ("checkpoint", f"ckpt/global_step_{n}"),
    "model@step_": lambda n: ("model", f"{MODEL}@step_{n}"),
    "model@int": lambda n: ("model", f"{MODEL}@{n}"),
}
#: How ``--model`` writes step ``n``.
FLAG_SPELLINGS: dict[str, Callable[[int], str]] = {
    "int": str,
    "float": lambda n: f"{n}.0",
    "step_": lambda n: f"step_{n}",
    "global_step_": lambda n: f"global_step_{n}",
    "checkpoint-": lambda n: f"checkpoint-{n}",
}
#: The rows' step against the one you train.
RELATIONS = {"same": 0, "older": -7, "newer": 7}


def _write(path: Path, field: Callable[[int], dict[str, Any]], tasks: int = 24) -> Path:
    """``tasks`` tasks of 4 rollouts, 2 passing (every task splits); ``field(row)`` adds the
    writer's fields to row ``row``."""
    lines = []
    for t in range(tasks):
        for j in range(4):
            row = {"task_id": f"t{t}", "reward": float(j % 2), "truncated": False}
            row.update(field(4 * t + j))
            lines.append(json.dumps(row))
    path.write_text("\n".join(lines) + "\n")
    return path


def _check(route: Route, key: str) -> CheckResult:
    return next(c for c in route.checks if c.key == key)


def _rows_at(spelling: str, step: int) -> Callable[[int], dict[str, Any]]:
    key, value = ROW_SPELLINGS[spelling](step)
    extra = {} if key == "model" else {"model": MODEL}
    return lambda i: {**extra, key: value}


@pytest.mark.parametrize(
    ("rows", "flag", "relation"),
    list(itertools.product(ROW_SPELLINGS, FLAG_SPELLINGS, RELATIONS)),
)
def test_one_step_in_any_spelling_is_one_version(
    tmp_path: Path, rows: str, flag: str, relation: str
) -> None:
    path = _write(tmp_path / "rows.jsonl", _rows_at(rows, STEP + RELATIONS[relation]))
    route = run_route([str(path)], model=f"{MODEL}@{FLAG_SPELLINGS[flag](STEP)}")
    check = _check(route, "on_policy")
    plan = route.to_dict()["plan"]
    if relation == "same":
        assert check.status.value == "pass", check.why
        assert "async" not in plan
        return
    assert check.status.value == "fail", check.why
    assert "async" in plan
    assert "another model" not in check.why
    if relation == "older":
        assert check.measured["stale_rows"] == 96 and "newer_rows" not in check.measured
        assert check.why.startswith("an older copy"), check.why
    else:
        assert check.measured["newer_rows"] == 96 and "stale_rows" not in check.measured
        assert check.why.startswith("a newer copy"), check.why
        assert "older" not in check.why
        assert f"--model {MODEL}@{STEP + 7}" in check.why


def test_one_step_in_two_spellings_across_rows_is_one_version(tmp_path: Path) -> None:
    """Rows that spell one step two ways are one version, with or without ``--model``'s."""
    spell = [f"step_{STEP}", STEP, f"{STEP}.0", f"global_step_{STEP}"]
    path = _write(
        tmp_path / "rows.jsonl", lambda i: {"model": MODEL, "policy_version": spell[i % 4]}
    )
    for flag in (MODEL, f"{MODEL}@{STEP}", f"{MODEL}@step_{STEP}"):
        check = _check(run_route([str(path)], model=flag), "on_policy")
        assert check.status.value == "pass", (flag, check.why)
        assert "stale_rows" not in check.measured, (flag, check.why)


def test_older_and_newer_steps_beside_the_one_you_train(tmp_path: Path) -> None:
    """Rows at 90, 100 and 110 against ``@step_100``: the 90s are an older copy (Async), the
    110s are counted as newer, not older."""
    steps = [STEP - 10, STEP, STEP + 10]
    path = _write(
        tmp_path / "rows.jsonl",
        lambda i: {"model": MODEL, "policy_version": f"step_{steps[i % 3]}"},
    )
    route = run_route([str(path)], model=f"{MODEL}@step_{STEP}")
    check = _check(route, "on_policy")
    assert check.status.value == "fail"
    assert check.measured["stale_rows"] == 32 and check.measured["newer_rows"] == 32
    assert "async" in route.to_dict()["plan"]


def test_text_versions_compare_as_written(tmp_path: Path) -> None:
    """``run-a`` and ``run-b`` are two versions; neither is a step, so neither is older."""
    runs = ["run-a", "run-b"]
    path = _write(
        tmp_path / "rows.jsonl", lambda i: {"model": MODEL, "policy_version": runs[i % 2]}
    )
    check = _check(run_route([str(path)], model=f"{MODEL}@run-b"), "on_policy")
    assert check.status.value == "fail" and check.measured["stale_rows"] == 48
    assert "older" not in check.why.split("(")[0], check.why
    same = _write(tmp_path / "one.jsonl", lambda i: {"model": MODEL, "policy_version": "run-b"})
    check = _check(run_route([str(same)], model=f"{MODEL}@run-b"), "on_policy")
    assert check.status.value == "pass", check.why
    check = _check(run_route([str(same)], model=f"{MODEL}@run-a"), "on_policy")
    assert check.status.value == "fail", check.why


@pytest.mark.parametrize("version", ["v7", "7", "step_7", "v1.2", 7])
def test_a_version_in_model_version_names_no_model(tmp_path: Path, version: object) -> None:
    """``model_version: "v7"`` with no model column: the rows carry a version and name no
    model, so check 6 cannot say another model wrote them."""
    path = _write(tmp_path / "rows.jsonl", lambda i: {"model_version": version})
    route = run_route([str(path)], model=MODEL)
    check = _check(route, "on_policy")
    assert check.status.value == "unknown", check.why
    assert check.measured["models"] == {}
    assert route.to_dict()["method"] == "grpo"
    assert "async" not in route.to_dict()["plan"]


def test_a_model_in_model_version_stays_a_model(tmp_path: Path) -> None:
    """``model_version`` holding a model's name (or ``M@v``) names that model."""
    other = _write(tmp_path / "other.jsonl", lambda i: {"model_version": "Qwen/Qwen3-8B"})
    check = _check(run_route([str(other)], model=MODEL), "on_policy")
    assert check.status.value == "fail" and "another model" in check.why, check.why
    mine = _write(tmp_path / "mine.jsonl", lambda i: {"model_version": f"{MODEL}@v7"})
    check = _check(run_route([str(mine)], model=f"{MODEL}@7"), "on_policy")
    assert check.status.value == "pass", check.why


@pytest.mark.parametrize(
    ("text", "step"),
    [
        ("100", 100),
        ("100.0", 100),
        ("step_100", 100),
        ("global_step_100", 100),
        ("global_step100", 100),
        ("checkpoint-100", 100),
        ("iter_0000100", 100),
        ("v100", 100),
        ("ckpt/global_step_40", 40),
        ("/ckpt/run7/global_step_40/actor/huggingface", 40),
        ("run-a", None),
        ("v1.2", None),
        ("9.5", None),
        ("2026-11-01T10:20:00", None),
        ("ckpt/run7", None),
    ],
)
def test_version_step(text: str, step: int | None) -> None:
    assert version_step(text) == step
    assert version_id(f"M@{text}") == (text if step is None else str(step))


def test_version_like_text() -> None:
    for text in ("v7", "7", "step_7", "v1.2", "checkpoint-3"):
        assert is_version_text(text), text
    for text in ("Qwen3-8B", "Qwen/Qwen3-8B", "gpt-4o", "run-a", "llama3"):
        assert not is_version_text(text), text


def _quality(route: Route) -> list[str]:
    return [d["kind"] for d in route.to_dict()["data_quality"]]


def test_one_step_in_two_spellings_is_one_writer_of_a_task(tmp_path: Path) -> None:
    """Each task's passes written ``step_100`` and its fails ``100``: one copy of the policy
    drew the group, so the tasks split within one writer, not only across writers; a step
    apart (``step_99``) they split only across two copies."""

    def rows(passing: str) -> Callable[[int], dict[str, Any]]:
        return lambda i: {"model": MODEL, "policy_version": passing if i % 2 else STEP}

    one = _write(tmp_path / "one.jsonl", rows(f"step_{STEP}"))
    assert "split_across_writers" not in _quality(run_route([str(one)], model=MODEL))
    two = _write(tmp_path / "two.jsonl", rows(f"step_{STEP - 1}"))
    assert "split_across_writers" in _quality(run_route([str(two)], model=MODEL))


def test_the_watch_reads_a_step_in_any_spelling() -> None:
    """``watch``'s off-policy lag reads each row's version as :func:`version_step` does."""
    import polars as pl

    from whilecli.watch.steps import off_policy

    frame = pl.DataFrame({"policy_version": ["step_7", "8.0", "m@global_step_6", "run-a", None]})
    assert off_policy(9, frame, None) == {"mean": 2.0, "max": 3, "from": "rows"}


@pytest.mark.parametrize("spelling", [s for s in ROW_SPELLINGS if not s.startswith("model@")])
@pytest.mark.parametrize("versions", [[STEP], [0, 50, STEP], [STEP - 10, STEP]])
def test_versions_on_rows_that_name_no_model(
    tmp_path: Path, spelling: str, versions: list[int]
) -> None:
    """verl's validation dumps of several checkpoints (a ``step`` on each row, no model):
    the rows of the older steps are older copies' whatever the model (Async), as they are
    where the rows name it; one step in one or more spellings is one version, unknown."""
    path = _write(
        tmp_path / "rows.jsonl",
        lambda i: dict([ROW_SPELLINGS[spelling](versions[i // 4 % len(versions)])]),
    )
    check = _check(run_route([str(path)], model=MODEL), "on_policy")
    if len(versions) == 1:
        assert check.status.value == "unknown", check.why
        return
    assert check.status.value == "fail", check.why
    assert check.measured["stale_rows"] == 96 * (len(versions) - 1) // len(versions)
    assert "async" in run_route([str(path)], model=MODEL).to_dict()["plan"]
