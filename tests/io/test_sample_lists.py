"""A row of k samples in list columns reads as the same k rows written one per draw
(DESIGN section 1: one row per rollout; :mod:`whilecli.io.samples`).

A seeded simulator draws a pool with a known truth (tasks with a pass rate each; samples cut
at the token cap, failed at the API, or one greedy draw repeated) and writes it twice: one row
per draw, and one row per prompt holding the k samples in lists, in the layouts tools write
(``n=8`` requests' ``choices`` / ``outputs``, ``responses`` beside ``rewards`` and
``finish_reasons``, sample objects ``completions[] = {text, score, finish_reason}``, a
``truncated`` list beside ``scores``, OpenR1-Math's ``generations`` /
``correctness_math_verify`` / ``is_reasoning_complete`` / ``finish_reasons``). Both writings
must read alike (rows, tasks, truncated rows, passes, errors, repeated draws) and route to
one verdict; the truth is checked on the rows' verdict. A list of another length than the
grades' is refused at its row, naming it.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from rows_files import finding_kinds, write_rows
from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io.read import read_rows
from whilecli.route import run_route
from whilecli.route.model import Route

MODEL = "Qwen/Qwen3-8B"
ERROR = "HTTP 429: rate limit exceeded"

#: scenario → (share cut, pass rate of a cut sample, share failed at the API, greedy, the
#: route the truth calls for)
SCENARIOS: dict[str, tuple[float, float, float, bool, str]] = {
    "cut-passes": (0.1, 0.5, 0.0, False, "fix-reward"),
    "cut-never-passes": (0.1, 0.0, 0.0, False, "grpo"),
    "clean": (0.0, 0.0, 0.0, False, "grpo"),
    "errors-saturated": (0.0, 0.0, 0.2, False, "saturated"),
    "greedy": (0.0, 0.0, 0.0, True, "repeated-draws"),
}


def simulate(seed: int, scenario: str, tasks: int = 150, k: int = 8) -> list[list[dict[str, Any]]]:
    """Per task, its k samples: ``text``, ``ok`` (graded pass), ``cut``, ``error``."""
    cut_rate, cut_pass, error_rate, greedy, _ = SCENARIOS[scenario]
    rnd = random.Random(seed)
    pool = []
    for t in range(tasks):
        p = 1.0 if error_rate else rnd.uniform(0.2, 0.8)
        one = f"reply {t} {rnd.random():.9f}"
        samples = []
        for j in range(k):
            cut = rnd.random() < cut_rate
            error = rnd.random() < error_rate
            ok = not error and rnd.random() < (cut_pass if cut else p)
            text = one if greedy else f"reply {t}-{j} {rnd.random():.9f}"
            samples.append({"text": "" if error else text, "ok": ok, "cut": cut, "error": error})
        pool.append(samples)
    return pool


def _prompt(t: int) -> str:
    return f"Problem {t}: compute {t} * {t + 1}."


def _reason(s: dict[str, Any]) -> str:
    return "length" if s["cut"] else "stop"


def one_row_per_draw(pool: list[list[dict[str, Any]]], greedy: bool) -> list[dict[str, Any]]:
    rows = []
    for t, samples in enumerate(pool):
        for s in samples:
            row = {"prompt": _prompt(t), "completion": s["text"], "reward": float(s["ok"])}
            row |= {"finish_reason": _reason(s), "error": ERROR if s["error"] else None}
            rows.append({**row, "model": MODEL, **({"temperature": 0.0} if greedy else {})})
    return rows


def _lists(t: int, samples: list[dict[str, Any]], layout: str) -> dict[str, Any]:
    """One prompt's row holding its samples in the lists of ``layout``."""
    grades = [float(s["ok"]) for s in samples]
    errors = [ERROR if s["error"] else None for s in samples]
    texts = [s["text"] for s in samples]
    reasons = [_reason(s) for s in samples]
    if layout == "choices":
        choices = [
            {"index": j, "message": {"role": "assistant", "content": s["text"]}}
            | {"finish_reason": _reason(s)}
            for j, s in enumerate(samples)
        ]
        return {"choices": choices, "rewards": grades, "errors": errors}
    if layout == "outputs":
        outs = [
            {"index": j, "text": s["text"], "finish_reason": _reason(s)}
            for j, s in enumerate(samples)
        ]
        return {"outputs": outs, "rewards": grades, "errors": errors}
    if layout == "plural":
        return {"responses": texts, "rewards": grades, "finish_reasons": reasons, "errors": errors}
    if layout == "objects":
        objects = [
            {"text": s["text"], "score": float(s["ok"]), "finish_reason": _reason(s)}
            | {"error": ERROR if s["error"] else None}
            for s in samples
        ]
        return {"completions": objects}
    if layout == "flags":
        flags = [s["cut"] for s in samples]
        return {"responses": texts, "scores": grades, "truncated": flags, "errors": errors}
    assert layout == "openr1"
    done = [not s["cut"] for s in samples]
    return {
        "generations": texts,
        "correctness_math_verify": [s["ok"] for s in samples],
        "is_reasoning_complete": done,
        "finish_reasons": reasons,
        "errors": errors,
    }


def one_row_per_prompt(
    pool: list[list[dict[str, Any]]], layout: str, greedy: bool
) -> list[dict[str, Any]]:
    rows = []
    for t, samples in enumerate(pool):
        row = {"prompt": _prompt(t), **_lists(t, samples, layout), "model": MODEL}
        rows.append(row | ({"temperature": 0.0} if greedy else {}))
    return rows


#: What ``--map`` a layout needs: OpenR1's grades are named for their grader.
MAPS = {"openr1": {"reward": "correctness_math_verify[]"}}
LAYOUTS = ["choices", "outputs", "plural", "objects", "flags", "openr1"]


def _read(path: Path, mapping: dict[str, str]) -> dict[str, int]:
    """What a reading counts: rows (a harness error is left out of them), tasks, truncated
    rows, passes, empty replies, distinct replies."""
    frame = read_rows([str(path)], mapping=mapping).frame.collect()
    return frame.select(
        rows=pl.len(),
        tasks=pl.col("task_id").n_unique(),
        truncated=pl.col("truncated").fill_null(False).sum(),
        passes=(pl.col("reward") >= 1).sum(),
        replies=pl.col("reply").value_counts(sort=True).struct.json_encode().str.join(" "),
    ).row(0, named=True)


def _route(path: Path, mapping: dict[str, str]) -> Route:
    got = run_route(str(path), model=MODEL, mapping=mapping)
    assert isinstance(got, Route)
    return got


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_lists_read_as_the_rows_they_hold(
    tmp_path_factory: pytest.TempPathFactory, layout: str, scenario: str
) -> None:
    """The list layout reads and routes as the same pool one row per draw; the truth holds."""
    greedy = SCENARIOS[scenario][3]
    pool = simulate(sum(map(ord, layout + scenario)), scenario)
    kinds = ["jsonl", "parquet"] if scenario in ("cut-passes", "clean") else ["jsonl"]
    rows = write_rows(tmp_path_factory.mktemp("rows"), one_row_per_draw(pool, greedy), "jsonl")
    want, want_route = _read(rows, {}), _route(rows, {})
    assert want_route.route == SCENARIOS[scenario][4]
    for kind in kinds:
        folder = tmp_path_factory.mktemp(f"{layout}-{kind}")
        listed = write_rows(folder, one_row_per_prompt(pool, layout, greedy), kind)
        mapping = MAPS.get(layout, {})
        assert _read(listed, mapping) == want, (layout, kind)
        got = _route(listed, mapping)
        verdict = (got.route, got.method, got.provisional)
        assert verdict == (want_route.route, want_route.method, want_route.provisional)
        assert sorted(finding_kinds(got)) == sorted(finding_kinds(want_route))


@pytest.mark.parametrize("layout", ["choices", "plural", "flags", "openr1"])
@pytest.mark.parametrize("short", [-1, 1])
def test_a_list_of_another_length_is_refused_at_its_row(
    tmp_path: Path, layout: str, short: int
) -> None:
    """A per-sample list one value short of (or past) the grades is refused: file, line and
    field named, exit 2."""
    pool = simulate(7, "cut-passes", tasks=20)
    rows = one_row_per_prompt(pool, layout, greedy=False)
    field = {"choices": "choices", "plural": "finish_reasons", "flags": "truncated"}
    name = field.get(layout, "is_reasoning_complete")
    values = rows[12][name]
    rows[12][name] = values[:-1] if short < 0 else [*values, values[0]]
    path = write_rows(tmp_path, rows, "jsonl")
    mapping = MAPS.get(layout, {})
    with pytest.raises(InputError, match=rf"rows\.jsonl:13: field '{name}'"):
        read_rows([str(path)], mapping=mapping)
    args = ["route", str(path), "--model", MODEL]
    args += [a for k, v in mapping.items() for a in ("--map", f"{k}={v}")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "line 13" in result.output or "rows.jsonl:13" in result.output


def test_the_hint_names_every_list_it_splits(tmp_path: Path) -> None:
    """Refused for want of a grade it can name, a row of samples is told which lists the
    grades' map splits with them."""
    pool = simulate(3, "cut-passes", tasks=20)
    rows = one_row_per_prompt(pool, "openr1", greedy=False)
    result = CliRunner().invoke(app, ["route", str(write_rows(tmp_path, rows, "jsonl"))])
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert "reward=correctness_math_verify[]" in said
    for name in ("generations[]", "is_reasoning_complete[]", "finish_reasons[]", "errors[]"):
        assert name in said, said
