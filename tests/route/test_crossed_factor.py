"""A condition each task's draws were made under in equal parts (a checkpoint, a sampler's
setting, a template), under a name no field lists.

A harness that loops over models or settings writes each task's rows in the same parts under
such a column, and where the values pass at different rates every task splits across them: a
pool of two checkpoints reads as "196 split tasks of 200", a firm GRPO whose split share
describes the mixture. The generator hides a condition under a column of a name drawn from
those harnesses use, of a known effect (two logits or more between values, 200 draws or
more under each: what the rows can show at the rule's chance), writes the rows in either order (each condition's
rows after the other's, or interleaved) as JSON Lines or Parquet, and checks that the verdict
is never firm and names the column; the same pools without an effect, and columns that
follow the grade (a parsed choice, an advantage's sign), a draw's index or a task's own
attribute, never move it. The statistic is held to a plain loop over its equations.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.rows_files import finding_kinds, route_rows, write_rows

from whilecli.route import factors, run_route
from whilecli.route.model import Route
from whilecli.route.slices import Slices

MODEL = "Qwen/Qwen3-8B"
#: Names harnesses give a condition they vary, none of them a field the reader knows.
NAMES = (
    "sampler",
    "checkpoint_name",
    "prompt_template",
    "system_prompt",
    "top_p",
    "variant",
    "arm",
    "config_name",
    "decoding",
    "persona",
    "backend",
)


def _logistic(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _pool(
    rng: random.Random,
    tasks: int,
    levels: list[object],
    per: int,
    shift: float,
    column: str,
    interleaved: bool,
    drop: float = 0.0,
) -> list[dict[str, object]]:
    """``per`` draws of each task under each of ``levels``, the ``j``-th passing at the
    task's logit plus ``j * shift``; the column written as ``column`` (a dotted one inside its
    object, beside another key); a ``drop`` share of the rows left out (a harness that
    dropped its failed requests)."""
    base = [rng.gauss(0.0, 1.5) for _ in range(tasks)]
    rows: list[tuple[int, int, dict[str, object]]] = []
    for t in range(tasks):
        for j, level in enumerate(levels):
            for d in range(per):
                ok = rng.random() < _logistic(base[t] + j * shift)
                row = {
                    "task_id": f"t{t}",
                    "prompt": f"Solve {t}.",
                    "completion": f"reply {t} {j} {d} {rng.random():.6f}",
                    "reward": float(ok),
                    "finish_reason": "stop",
                    "model": MODEL,
                }
                place, _, name = column.rpartition(".")
                holder = row.setdefault(place, {"attempt": 1}) if place else row
                assert isinstance(holder, dict)
                holder[name] = level
                if rng.random() >= drop:
                    rows.append((j, t, row))
    if not interleaved:  # each condition's rows after the other's: its first rows show one
        rows.sort(key=lambda r: (r[0], r[1]))
    return [row for _, _, row in rows]


LEVELS = {
    "text": ["ckpt-a", "ckpt-b", "ckpt-c", "ckpt-d"],
    "number": [0.2, 0.7, 1.0, 1.3],
    "flag": [False, True],
}


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    column=st.sampled_from(NAMES),
    place=st.sampled_from(["", "", "metadata.", "sampling_params.", "info."]),
    kind=st.sampled_from(sorted(LEVELS)),
    count=st.integers(2, 4),
    per=st.integers(1, 4),
    tasks=st.integers(30, 300),
    shift=st.floats(2.0, 3.0),
    effect=st.booleans(),
    interleaved=st.booleans(),
    drop=st.sampled_from([0.0, 0.0, 0.05, 0.15]),
    fmt=st.sampled_from(["jsonl", "parquet"]),
    seed=st.integers(0, 10**6),
)
def test_a_condition_moves_the_verdict_as_its_effect_says(
    tmp_path_factory: pytest.TempPathFactory,
    column: str,
    place: str,
    kind: str,
    count: int,
    per: int,
    tasks: int,
    shift: float,
    effect: bool,
    interleaved: bool,
    drop: float,
    fmt: str,
    seed: int,
) -> None:
    """With an effect, never firm and the column named (at the top level or inside a row's
    extras or a sampler's settings, with every row kept or a few dropped); with none,
    nothing said."""
    column = place + column
    if effect:  # what the rows can show: 200 draws under each value
        tasks = max(tasks, math.ceil(200 / (per * (1.0 - drop))))
    rng = random.Random(seed)
    levels = LEVELS[kind][:count]
    if per * len(levels) > 8:  # the layout shows through a few rows dropped, not many
        drop = min(drop, 0.05)
    rows = _pool(rng, tasks, levels, per, shift if effect else 0.0, column, interleaved, drop)
    route = route_rows(write_rows(tmp_path_factory.mktemp("crossed"), rows, fmt), MODEL)
    found = [f for f in route.data_quality if f.kind == "crossed_factor"]
    if not effect:
        assert not found, route.headline
        return
    assert route.provisional, route.headline
    assert found, (route.headline, finding_kinds(route))
    assert f"--by {column}" in found[0].moves


@pytest.mark.parametrize(
    ("column", "levels"),
    [("temperature", [0.6, 1.0]), ("temperature", [0.0, 1.0]), ("do_sample", [False, True])],
)
def test_draws_at_two_sampling_settings_are_two_conditions(
    tmp_path: Path, column: str, levels: list[object]
) -> None:
    """A sampling setting the reader reads only for greedy decoding is weighed all the same."""
    rows = _pool(random.Random(7), 200, levels, 4, 2.0, column, False)
    route = route_rows(write_rows(tmp_path, rows, "jsonl"), MODEL)
    assert route.provisional and "crossed_factor" in finding_kinds(route), route.headline


def test_a_teacher_of_two_conditions_is_a_doubt_of_check_4(tmp_path: Path) -> None:
    """The same column on the teacher's rows: its pass@1 is the conditions' mixture, not one
    teacher's, so check 4 measures it with a doubt and OPD is not firm."""
    rng = random.Random(9)
    rates = [rng.betavariate(2, 5) for _ in range(300)]
    student = [
        {
            "task_id": f"t{t}",
            "prompt": f"Solve {t}.",
            "completion": f"s {t} {d}",
            "reward": float(rng.random() < p),
            "finish_reason": "stop",
            "model": MODEL,
        }
        for t, p in enumerate(rates)
        for d in range(8)
    ]
    teacher = [
        {
            "task_id": f"t{t}",
            "prompt": f"Solve {t}.",
            "completion": f"T {t} {d}",
            "reward": float(rng.random() < (min(1.0, p + 0.6) if d % 2 else max(0.0, p - 0.2))),
            "finish_reason": "stop",
            "model": "Qwen/Qwen3-32B",
            "variant": "ab"[d % 2],
        }
        for t, p in enumerate(rates)
        for d in range(8)
    ]
    (tmp_path / "s").mkdir()
    (tmp_path / "t").mkdir()
    s_path = write_rows(tmp_path / "s", student, "jsonl")
    t_path = write_rows(tmp_path / "t", teacher, "jsonl")
    route = run_route(
        str(s_path), model=MODEL, teacher=str(t_path), teacher_vocab=151936, student_vocab=151936
    )
    assert isinstance(route, Route)
    assert route.method != "opd" or route.provisional, route.headline
    assert "teacher_doubts" in finding_kinds(route), route.headline
    teacher_check = [c for c in route.checks if c.key == "teacher"][0]
    assert any("variant" in d for d in teacher_check.measured["teacher_doubts"])


def _graded_rows(rng: random.Random, tasks: int, k: int) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for t in range(tasks):
        p = rng.betavariate(0.7, 0.7)
        for d in range(k):
            ok = rng.random() < p
            rows.append(
                {
                    "task_id": f"t{t}",
                    "prompt": f"Solve {t}.",
                    "completion": f"reply {t} {d}",
                    "reward": float(ok),
                    "finish_reason": "stop",
                    "model": MODEL,
                    # a parsed choice: the right letter where it passes
                    "choice": "B" if ok else rng.choice("ACD"),
                    # a trainer's sign of the advantage, under a name it does not say
                    "sign": "+" if ok else "-",
                    # the task's own attribute, and the draw's index
                    "family": f"f{t % 3}",
                    "slot": d,
                }
            )
    return rows


@pytest.mark.parametrize("drop", [0.0, 0.1])
@pytest.mark.parametrize("k", [2, 4, 8])
def test_columns_that_follow_the_grade_or_the_task_move_nothing(
    tmp_path: Path, k: int, drop: float
) -> None:
    rng = random.Random(k)
    rows = [row for row in _graded_rows(rng, 300, k) if rng.random() >= drop]
    route = route_rows(write_rows(tmp_path, rows, "jsonl"), MODEL)
    assert "crossed_factor" not in finding_kinds(route), route.headline


def test_routing_each_condition_apart_leaves_no_finding(tmp_path: Path) -> None:
    rows = _pool(random.Random(3), 200, ["a", "b"], 4, 2.5, "sampler", False)
    path = write_rows(tmp_path, rows, "jsonl")
    whole = route_rows(path, MODEL)
    assert "crossed_factor" in finding_kinds(whole)
    sliced = run_route(str(path), model=MODEL, by="sampler")
    assert isinstance(sliced, Slices) and len(sliced.routes) == 2
    for _, route in sliced.routes:
        assert isinstance(route, Route), route
        assert "crossed_factor" not in finding_kinds(route)


def _slow_z(cells: list[tuple[str, str, int, int]]) -> float:
    """The largest |z_v| of the module's equations, by a plain loop over (task, value, rows,
    passes)."""
    tasks: dict[str, list[tuple[str, int, int]]] = {}
    for task, value, rows, passes in cells:
        tasks.setdefault(task, []).append((value, rows, passes))
    sums: dict[str, list[float]] = {}
    for held in tasks.values():
        n = sum(r for _, r, _ in held)
        x = sum(p for _, _, p in held)
        if n < 2:
            continue
        for value, m, o in held:
            if m == 0:
                continue
            s = sums.setdefault(value, [0.0, 0.0, 0.0])
            s[0] += o
            s[1] += m * x / n
            s[2] += m * (n - m) * x * (n - x) / (n * n * (n - 1))
    return max((abs(o - e) / math.sqrt(v) for o, e, v in sums.values() if v > 0), default=0.0)


@settings(max_examples=60, deadline=None)
@given(
    tasks=st.integers(5, 60),
    levels=st.integers(2, 5),
    per=st.lists(st.integers(1, 4), min_size=5, max_size=5),
    seed=st.integers(0, 10**6),
)
def test_the_statistic_is_the_plain_loop_over_its_equations(
    tasks: int, levels: int, per: list[int], seed: int
) -> None:
    rng = random.Random(seed)
    cells = []
    for t in range(tasks):
        p = rng.random()
        for j in range(levels):
            rows = per[j]
            passes = sum(rng.random() < p for _ in range(rows))
            cells.append((f"t{t}", f"v{j}", rows, passes))
    frame = pl.DataFrame(
        {
            "task_id": [c[0] for c in cells],
            "value": [c[1] for c in cells],
            "all": [c[2] for c in cells],
            "rows": [c[2] for c in cells],
            "passes": [c[3] for c in cells],
        }
    )
    got = factors.crossed("c", frame, columns=2)
    assert got is not None
    assert got.z == pytest.approx(_slow_z(cells), rel=1e-9, abs=1e-12)
    chance = min(1.0, math.erfc(got.z / math.sqrt(2)) * levels * 2)
    assert got.chance == pytest.approx(chance, rel=1e-9, abs=1e-300)
    assert got.grouped == tasks and got.layout == tasks


def test_a_layout_that_follows_the_passes_is_no_condition() -> None:
    """Two rows a task, the column's value set by the grade (an advantage's sign): every task
    that splits holds one of each, every task whose rows agree two of one."""
    cells = []
    rng = random.Random(1)
    for t in range(200):
        a, b = rng.random() < 0.5, rng.random() < 0.5
        for ok in (a, b):
            cells.append({"task_id": f"t{t}", "value": "+" if ok else "-", "ok": int(ok)})
    frame = (
        pl.DataFrame(cells)
        .group_by("task_id", "value")
        .agg(pl.len().alias("all"), pl.len().alias("rows"), pl.col("ok").sum().alias("passes"))
        .with_columns(pl.col("all", "rows", "passes").cast(pl.Int64))
    )
    assert factors.crossed("sign", frame) is None


def test_diff_says_each_dump_mixes_conditions(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from whilecli.cli import app

    paths = []
    for name in ("before", "after"):
        (tmp_path / name).mkdir()
        rows = _pool(random.Random(len(name)), 200, ["x", "y"], 4, 2.0, "sampler", True)
        paths.append(str(write_rows(tmp_path / name, rows, "jsonl")))
    result = CliRunner().invoke(app, ["diff", *paths, "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    said = [w for w in json.loads(result.stdout)["warnings"] if "under sampler" in w]
    assert len(said) == 2 and "the before rows" in said[0], said
