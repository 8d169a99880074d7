"""Data quality first (DESIGN section 2): what reading finds is listed before the checks and
moves the verdict it touches.

The generator draws a clean grouped pool (distinct prompts and completions, truncation
recorded, the model named), routes it, injects one defect, routes again and asserts the
verdict moved the documented way (docs/json-schema.md, *Finding*). The report's answer fits
25 lines at 80 columns for every example pool and every generated defect.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.route import run_route
from whilecli.route.model import Route, Status

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "data"
MODEL = "Qwen/Qwen3-8B"
SETTINGS = settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@st.composite
def clean_pools(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A grouped pool a route can act on: 40-60 tasks at k = 8, most of them split. Each
    task's passes are k draws at a rate of its own (a fixed pattern, or a count drawn
    uniformly, is not draws: hypothesis shrinks it to every task passing 1 of 8, a pass
    planted in each group, which ``even_counts`` rightly flags)."""
    tasks = draw(st.integers(40, 60))
    k = 8
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    rows = []
    for t in range(tasks):
        rate = rng.uniform(0.25, 0.75)
        drawn = sum(rng.random() < rate for _ in range(k))
        passes = drawn if t % 10 else draw(st.sampled_from([0, k]))
        for j in range(k):
            rows.append(
                {
                    "task_id": f"t{t:03d}",
                    "prompt": f"question {t}",
                    "completion": f"answer {t}.{j}",
                    "reward": 1.0 if j < passes else 0.0,
                    "truncated": False,
                    "model": MODEL,
                }
            )
    return rows


def write(folder: Path, name: str, rows: list[dict[str, Any]]) -> str:
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def route(folder: Path, rows: list[dict[str, Any]], name: str = "rows.jsonl", **kw: Any) -> Route:
    got = run_route(write(folder, name, rows), model=MODEL, **kw)
    assert isinstance(got, Route)
    return got


def kinds(r: Route) -> list[str]:
    return [f.kind for f in r.data_quality]


def split_tasks(r: Route) -> int:
    band = next(c for c in r.checks if c.key == "band")
    return int(band.measured.get("split_tasks", 0))


@SETTINGS
@given(pool=clean_pools(), share=st.floats(0.05, 0.4))
def test_error_replies_are_left_out_not_failures(
    tmp_path_factory: pytest.TempPathFactory, pool: list[dict[str, Any]], share: float
) -> None:
    """Rate-limit errors scored 0 never make a task split: the route is the one the pool
    without them gives, and the finding comes first."""
    folder = tmp_path_factory.mktemp("errors")
    passing = [r for r in pool if r["reward"] == 1.0]
    hurt = passing[: max(1, int(share * len(passing)))]
    errors = [dict(r, completion="Error: HTTP 429 rate limit exceeded", reward=0.0) for r in hurt]
    injected = route(folder, pool + errors, "injected.jsonl")
    clean = route(folder, pool)
    assert kinds(injected)[0] == "errors" and kinds(clean) == []
    assert (injected.route, injected.method, split_tasks(injected)) == (
        clean.route,
        clean.method,
        split_tasks(clean),
    )
    assert injected.summary["pass_at_1"] == clean.summary["pass_at_1"]


@SETTINGS
@given(pool=clean_pools())
def test_ungraded_rows_are_left_out(
    tmp_path_factory: pytest.TempPathFactory, pool: list[dict[str, Any]]
) -> None:
    folder = tmp_path_factory.mktemp("ungraded")
    extra = [dict(r, reward=None, completion=r["completion"] + "?") for r in pool[::9]]
    injected = route(folder, pool + extra, "injected.jsonl")
    clean = route(folder, pool)
    assert "ungraded" in kinds(injected)
    assert injected.summary["pass_at_1"] == clean.summary["pass_at_1"]
    assert (injected.route, injected.method) == (clean.route, clean.method)


@SETTINGS
@given(pool=clean_pools())
def test_one_draw_repeated_is_not_k_draws(
    tmp_path_factory: pytest.TempPathFactory, pool: list[dict[str, Any]]
) -> None:
    """Greedy decoding: every task's k completions are one text. The band is unknown, GRPO
    is not ok, the rows route as one draw per prompt, provisional; no `need k` is asked."""
    folder = tmp_path_factory.mktemp("greedy")
    greedy = [dict(r, completion=f"answer {r['task_id']}") for r in pool]
    injected = route(folder, greedy, "greedy.jsonl")
    clean = route(folder, pool)
    assert clean.route == "grpo" and not clean.provisional
    assert injected.route == "repeated-draws" and injected.provisional
    assert kinds(injected)[0] == "repeated_draws"
    band = next(c for c in injected.checks if c.key == "band")
    assert band.status is Status.UNKNOWN and "need" not in band.measured
    assert not next(m for m in injected.methods if m.name == "grpo").ok
    assert injected.plan[0] == "flash_reinforce"
    assert injected.needs["k"] == 4 and "temperature" in injected.needs


@SETTINGS
@given(pool=clean_pools())
def test_per_row_ids_key_tasks_by_the_prompt(
    tmp_path_factory: pytest.TempPathFactory, pool: list[dict[str, Any]]
) -> None:
    folder = tmp_path_factory.mktemp("uuid")
    uuids = [dict(r, task_id=f"row-{i}") for i, r in enumerate(pool)]
    injected = route(folder, uuids, "uuid.jsonl")
    clean = route(folder, pool)
    assert "per_row_ids" in kinds(injected)
    assert injected.route == clean.route != "single-rollout"
    assert injected.summary["k"] == clean.summary["k"] == 8


@SETTINGS
@given(pool=clean_pools(), every=st.integers(12, 20))  # under a tenth of the rows
def test_partial_credit_on_cut_off_replies_leaves_the_verdict_provisional(
    tmp_path_factory: pytest.TempPathFactory, pool: list[dict[str, Any]], every: int
) -> None:
    folder = tmp_path_factory.mktemp("cut")
    cut = [
        dict(r, truncated=True, reward=0.5) if r["reward"] == 0.0 and i % every == 0 else r
        for i, r in enumerate(pool)
    ]
    injected = route(folder, cut, "cut.jsonl")
    clean = route(folder, pool)
    if "cut_partial" not in kinds(injected):  # no failing row fell on the stride
        return
    assert not clean.provisional and injected.provisional
    assert injected.provisional_why and "cut-off text" in injected.provisional_why
    assert injected.headline.startswith("provisional: ")


@pytest.mark.parametrize("with_values", [20, 100])
def test_critic_values_on_some_rows_do_not_make_sao_ok(tmp_path: Path, with_values: int) -> None:
    rows = [
        {
            "task_id": f"s{i}",
            "prompt": f"q{i}",
            "completion": f"a{i}",
            "reward": float(i % 2),
            "truncated": False,
            "model": MODEL,
            **({"values": [0.1, 0.2], "logprobs": [-0.1, -0.2]} if i < with_values else {}),
        }
        for i in range(100)
    ]
    got = route(tmp_path, rows)
    sao = next(m for m in got.methods if m.name == "sao")
    assert got.route == "single-rollout"
    if with_values == 100:
        assert sao.ok and got.method == "sao" and "coverage" not in kinds(got)
    else:
        assert not sao.ok and "20 of 100 rows" in sao.why
        assert got.method == "flash_reinforce" and "sao" not in got.plan
        assert "coverage" in kinds(got)


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@pytest.mark.parametrize("zeros", [20, 100])
def test_critic_values_of_zeros_only_are_no_critic(tmp_path: Path, kind: str, zeros: int) -> None:
    """A writer that ran no critic fills ``values`` with zeros, as one that kept no log-probs
    fills those: a row whose values are all exactly 0 carries none, so SAO is not chosen."""
    rows = [
        {
            "task_id": f"s{i}",
            "prompt": f"q{i}",
            "completion": f"a{i}",
            "reward": float(i % 2),
            "truncated": False,
            "model": MODEL,
            "logprobs": [-0.1, -0.2, -0.3],
            "values": [0.0, 0, -0.0] if i < zeros else [0.1, 0.0, 0.3],
        }
        for i in range(100)
    ]
    got = route(tmp_path, rows) if kind == "jsonl" else _parquet_route(tmp_path, rows)
    sao = next(m for m in got.methods if m.name == "sao")
    assert got.route == "single-rollout"
    assert not sao.ok and got.method == "flash_reinforce" and "sao" not in got.plan
    if zeros < 100:
        assert f"{100 - zeros} of 100 rows" in sao.why


def _parquet_route(folder: Path, rows: list[dict[str, Any]]) -> Route:
    import polars as pl

    path = folder / "rows.parquet"
    pl.DataFrame(rows).write_parquet(path)
    got = run_route(str(path), model=MODEL)
    assert isinstance(got, Route)
    return got


def _teacher(pool: list[dict[str, Any]], **change: Any) -> list[dict[str, Any]]:
    return [dict(r, reward=1.0, model="Qwen/Qwen3-32B", **change) for r in pool]


@SETTINGS
@given(pool=clean_pools())
def test_a_teacher_of_the_same_ids_but_other_prompts_does_not_cover(
    tmp_path_factory: pytest.TempPathFactory, pool: list[dict[str, Any]]
) -> None:
    folder = tmp_path_factory.mktemp("teacher")
    student = write(folder, "student.jsonl", pool)
    good = write(folder, "good.jsonl", _teacher(pool))
    other = write(
        folder, "other.jsonl", [dict(r, prompt="other " + r["prompt"]) for r in _teacher(pool)]
    )
    cleared = run_route(student, teacher=good, model=MODEL)
    moved = run_route(student, teacher=other, model=MODEL)
    assert isinstance(cleared, Route) and isinstance(moved, Route)
    assert cleared.route == "teacher"
    t = next(c for c in moved.checks if c.key == "teacher")
    assert t.status is Status.FAIL and t.measured["shared_tasks"] == 0
    # whether the two prompts are one question in two wrappings is not read from the rows:
    # where they decide the coverage, the teacher's failure is not firm
    assert moved.route != "teacher" and "teacher_prompts_decide" in kinds(moved)
    assert moved.provisional


@pytest.mark.parametrize(
    "name",
    [
        MODEL,
        "qwen3-8b",
        "/root/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/0123abcd",
        "/models/Qwen3-8B/",
    ],
)
@pytest.mark.parametrize("model_flag", [True, False])
def test_a_teacher_that_is_the_student_fails_check_4(
    tmp_path: Path, name: str, model_flag: bool
) -> None:
    rows = _fixed_pool()
    student = write(tmp_path, "student.jsonl", rows)
    teacher = write(tmp_path, "teacher.jsonl", [dict(r, reward=1.0, model=name) for r in rows])
    got = run_route(student, teacher=teacher, model=MODEL if model_flag else None)
    assert isinstance(got, Route)
    t = next(c for c in got.checks if c.key == "teacher")
    assert t.status is Status.FAIL and t.measured.get("teacher_is_student")
    assert got.route != "teacher" and "teacher_is_student" in kinds(got)


def _fixed_pool() -> list[dict[str, Any]]:
    return [
        {
            "task_id": f"t{t}",
            "prompt": f"q{t}",
            "completion": f"a{t}.{j}",
            "reward": float(j < t % 7 + 1),
            "truncated": False,
            "model": MODEL,
        }
        for t in range(40)
        for j in range(8)
    ]


@pytest.mark.parametrize(
    ("name", "method"), [("Qwen/Qwen3-0.6B", "sft"), ("Qwen/Qwen3-8B", "opsd")]
)
def test_the_size_the_rows_name_stands_in_for_size_b(
    tmp_path: Path, name: str, method: str
) -> None:
    rows = [dict(r, reward=0.0, model=name) for r in _fixed_pool()]
    got = run_route(write(tmp_path, "floor.jsonl", rows))
    assert isinstance(got, Route)
    assert (got.route, got.method) == ("floor", method)
    forced = run_route(str(tmp_path / "floor.jsonl"), size_b=8.0)
    assert isinstance(forced, Route) and forced.method == "opsd"


@pytest.mark.parametrize(
    "name",
    [
        "my-org/Qwen3-0.6B-distill-from-70B",
        "my-org/qwen3-0.6b-sft-on-qwen2.5-72b-traces",
        "my-org/70B-distilled-into-Qwen3-0.6B",
    ],
)
def test_a_name_stating_two_sizes_leaves_the_floor_provisional(tmp_path: Path, name: str) -> None:
    """A name that states a student's and a teacher's size says neither is the model: the
    floor's OPSD-or-SFT choice waits for ``--size-b`` (it was firm OPSD on the larger)."""

    def floor(model: str) -> list[dict[str, Any]]:  # enough grouped tasks to be firm
        return [
            {"task_id": f"t{t}", "completion": f"a{t}.{j}", "reward": 0.0, "model": model}
            | {"truncated": False}
            for t in range(800)
            for j in range(4)
        ]

    control = run_route(write(tmp_path, "eight.jsonl", floor("Qwen/Qwen3-8B")))
    assert isinstance(control, Route) and (control.method, control.provisional) == ("opsd", False)
    got = run_route(write(tmp_path, "floor.jsonl", floor(name)), model=name)
    assert isinstance(got, Route)
    assert got.route == "floor" and got.provisional, (got.method, got.provisional_why)
    small = run_route(str(tmp_path / "floor.jsonl"), model=name, size_b=0.6)
    assert isinstance(small, Route) and small.method == "sft"


# ----------------------------------------------------------------- the answer in 25 × 80


def _defect_pools(folder: Path) -> list[list[str]]:
    """Argument lists: every generated defect above, as files."""
    pool = _fixed_pool()
    out = []
    variants = {
        "errors": pool
        + [dict(r, completion="Error: HTTP 503 service unavailable") for r in pool[::7]],
        "ungraded": pool
        + [dict(r, reward=None, completion="x" + r["completion"]) for r in pool[::5]],
        "greedy": [dict(r, completion=f"same {r['task_id']}") for r in pool],
        "uuid": [dict(r, task_id=f"row-{i}") for i, r in enumerate(pool)],
        "cut": [
            dict(r, truncated=True, reward=0.5) if r["reward"] == 0 and i % 12 == 0 else r
            for i, r in enumerate(pool)
        ],  # fmt: skip
        "values": [
            dict(r, task_id=f"s{i}", values=[0.1]) if i < 20 else dict(r, task_id=f"s{i}")
            for i, r in enumerate(pool[:100])
        ],  # fmt: skip
        "floor": [dict(r, reward=0.0) for r in pool],
    }
    for name, rows in variants.items():
        out.append([write(folder, f"{name}.jsonl", rows), "--model", MODEL])
    teacher = write(folder, "teacher.jsonl", [dict(r, reward=1.0, model=MODEL) for r in pool])
    out.append([str(folder / "errors.jsonl"), "--teacher", teacher, "--strict"])
    return out


def _example_args() -> list[list[str]]:
    out = []
    for path in sorted(EXAMPLES.glob("*.jsonl")) + sorted(EXAMPLES.glob("*.parquet")):
        if path.name.startswith(("batch", "grouped_batch", "graded")):
            continue
        args = [str(path), "--model", "Qwen/Qwen3-0.6B"]
        if path.name.startswith("student"):
            args += ["--teacher", str(path.with_name("teacher" + path.suffix))]
        out.append(args)
    return out


def test_every_report_answers_in_25_lines_at_80_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without -v, every routed example and generated pool fits 25 lines of 80 columns, and
    opens with the verdict, the plan, the evidence and the data-quality findings (files by
    name: the report's width, not the checkout's path)."""
    examples = [[Path(a).name if a.startswith("/") else a for a in x] for x in _example_args()]
    monkeypatch.chdir(EXAMPLES)
    _answers_fit(examples)
    defects = _defect_pools(tmp_path)
    monkeypatch.chdir(tmp_path)
    _answers_fit([[Path(a).name if a.startswith("/") else a for a in x] for x in defects])


def _answers_fit(cases: list[list[str]]) -> None:
    for args in cases:
        result = CliRunner().invoke(app, ["route", *args], env={"COLUMNS": "80"})
        assert result.exit_code in (0, 1), (args, result.output)
        lines = result.stdout.splitlines()
        assert len(lines) <= 25, (args, result.stdout)
        assert max(len(line) for line in lines) <= 80, (args, result.stdout)
        assert lines[0].startswith("whilecli route: ")
        for head in ("Evidence:", "Data quality"):
            assert any(line.startswith(head) for line in lines), (args, head, result.stdout)
        quality = next(i for i, line in enumerate(lines) if line.startswith("Data quality"))
        checks = next(i for i, line in enumerate(lines) if line.startswith("Checks:"))
        assert quality < checks
        report = json.loads(CliRunner().invoke(app, ["route", *args, "--format", "json"]).stdout)
        for finding in report["data_quality"]:  # every finding is in the answer
            assert finding["found"].split(" (first")[0][:40] in " ".join(result.stdout.split())
        verbose = CliRunner().invoke(app, ["route", *args, "-v"], env={"COLUMNS": "80"})
        assert "Methods" in verbose.stdout.splitlines() and "Methods" not in lines


def test_quiet_with_by_keeps_show(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """(Files by name: a long temporary path must not decide where the lists wrap.)"""
    monkeypatch.chdir(tmp_path)
    a = Path(write(tmp_path, "a.jsonl", _fixed_pool())).name
    b = Path(write(tmp_path, "b.jsonl", [dict(r, reward=0.0) for r in _fixed_pool()])).name
    result = CliRunner().invoke(
        app, ["route", a, b, "--by", "source", "-q", "--show", "split", "--limit", "1"]
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    heads = [line for line in lines if line.startswith("whilecli route (source ")]
    assert len(heads) == 2 and "Checks:" not in result.stdout
    assert any("split task" in line for line in lines) and "- t0: " in result.stdout


@pytest.mark.parametrize(
    ("name", "size_b", "said"),
    [
        ("Qwen/Qwen3-0.6B", 8.0, True),
        ("meta-llama/Llama-3.3-70B-Instruct", 0.6, True),
        ("Qwen/Qwen3-8B", 8.0, False),
        ("Qwen/Qwen3-8B", 7.0, False),
        ("microsoft/phi-2", 2.7, False),
    ],
)
def test_a_size_b_the_name_contradicts_is_said(
    tmp_path: Path, name: str, size_b: float, said: bool
) -> None:
    """``--size-b`` decides the 7B rule; where the name states another size (more than a
    quarter apart) the warnings say both, so a slip of a unit is seen."""
    rows = [dict(r, reward=0.0, model=name) for r in _fixed_pool()]
    got = run_route(write(tmp_path, "floor.jsonl", rows), model=name, size_b=size_b)
    assert isinstance(got, Route)
    flagged = [w for w in got.warnings if "--size-b" in w]
    assert bool(flagged) == said, got.warnings


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    repeated=st.integers(1, 45),
    apart=st.integers(0, 45),
    k=st.sampled_from([4, 8]),
    rest=st.sampled_from([0.0, 1.0, None]),
    parquet=st.booleans(),
)
def test_one_reply_graded_two_ways_leaves_the_verdict_provisional(
    tmp_path_factory: pytest.TempPathFactory,
    repeated: int,
    apart: int,
    k: int,
    rest: float | None,
    parquet: bool,
) -> None:
    """Of 100 tasks, ``repeated`` repeat one reply k times (greedy decoding, a cache), and
    ``apart`` of those are graded both pass and fail (a judge at temperature > 0); the others'
    k replies differ and all fail, all pass, or split. Those split tasks are the grader's, not
    the draws': any of them and the verdict is provisional with the finding; with none, the
    minority finding alone, as before."""
    apart = min(apart, repeated)
    rows = []
    for t in range(100):
        one = t < repeated
        for j in range(k):
            if one:
                reward = float(j % 2) if t < apart else float(t % 2)
            else:
                reward = float(j < k // 2) if rest is None else rest
            completion = f"reply {t}" if one else f"reply {t}.{j}"
            rows.append(
                {"task_id": f"t{t}", "prompt": f"q{t}", "completion": completion}
                | {"reward": reward, "truncated": False, "model": MODEL}
            )
    folder = tmp_path_factory.mktemp("apart")
    if parquet:
        import polars as pl

        path = str(folder / "rows.parquet")
        pl.DataFrame(rows).write_parquet(path)
    else:
        path = write(folder, "rows.jsonl", rows)
    got = run_route(path, model=MODEL)
    assert isinstance(got, Route)
    kinds = {f.kind for f in got.data_quality}
    assert ("graded_apart" in kinds) == (apart > 0), kinds
    if apart:
        assert got.provisional, got.headline
        finding = next(f for f in got.data_quality if f.kind == "graded_apart")
        assert finding.count == apart


def _drawn(task: int, draw: int) -> float:
    """A draw's grade, drawn at its task's own rate (seeded by the two): independent draws,
    as a sampler's are (a fixed pattern's counts are too even to be draws: ``even_counts``)."""
    rate = random.Random(task).random()
    return float(random.Random(f"{task}.{draw}").random() < rate)


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(others=st.integers(1, 1600), tasks=st.sampled_from([60, 200]))
def test_another_models_rows_are_a_firm_sft_only_where_it_wrote_most(
    tmp_path_factory: pytest.TempPathFactory, others: int, tasks: int
) -> None:
    """Check 6 routes rows another model wrote to SFT. Where that model wrote a minority (one
    stray row of 1600), the rest are the model's own: the verdict is provisional and says to
    route each model apart; where it wrote most (its share's interval above a half), firm."""
    from whilecli.route import stats

    rows = [  # every tenth task fails every draw: groups are unanimous as drawn groups are
        {"task_id": f"t{t}", "completion": f"a{t}.{j}", "reward": _drawn(t, j)}
        | {"truncated": False, "model": MODEL}
        | ({"reward": 0.0} if t % 10 == 0 else {})
        for t in range(tasks)
        for j in range(8)
    ]
    others = min(others, len(rows))
    for row in rows[:others]:
        row["model"] = "meta-llama/Llama-3.1-8B"
    got = run_route(write(tmp_path_factory.mktemp("stray"), "rows.jsonl", rows), model=MODEL)
    assert isinstance(got, Route) and got.method == "sft"
    share = stats.wilson(others, len(rows))
    assert got.provisional == (share.low is None or share.low <= 0.5), (others, got.headline)
    if got.provisional:
        assert "--by model" in (got.provisional_why or "")


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(others=st.integers(1, 1600), unnamed=st.integers(0, 1600), order=st.booleans())
def test_rows_that_name_no_model_may_be_the_models_own(
    tmp_path_factory: pytest.TempPathFactory, others: int, unnamed: int, order: bool
) -> None:
    """Rows that name no model beside rows another model wrote (two files pooled, or a field
    a writer added half way): another model wrote most of the rows only where its share of
    every row, those that name none counted in, is above a half; else SFT is provisional.
    800 rows of gpt-4o beside 2400 that name no model were a firm SFT."""
    from whilecli.route import stats

    rows = [
        {"task_id": f"t{t}", "completion": f"a{t}.{j}", "reward": _drawn(t, j)}
        | {"truncated": False}
        | ({"reward": 0.0} if t % 10 == 0 else {})
        for t in range(200)
        for j in range(8)
    ]
    others = min(others, len(rows))
    unnamed = min(unnamed, len(rows) - others)
    for i, row in enumerate(rows if order else rows[::-1]):
        if i < others:
            row["model"] = "gpt-4o"
        elif i >= others + unnamed:
            row["model"] = MODEL
    got = run_route(write(tmp_path_factory.mktemp("unnamed"), "rows.jsonl", rows), model=MODEL)
    assert isinstance(got, Route) and got.method == "sft"
    share = stats.wilson(others, len(rows))
    assert got.provisional == (share.low is None or share.low <= 0.5), (others, unnamed)
    if got.provisional:
        assert "--by model" in (got.provisional_why or "")
        assert ("name no model" in (got.provisional_why or "")) == (unnamed > 0)


@pytest.mark.parametrize("second", ["meta-llama/Llama-3.1-8B", "qwen/qwen3-8b", None])
@pytest.mark.parametrize("model_given", [False, True])
def test_rows_of_two_models_without_model_leave_the_band_provisional(
    tmp_path: Path, second: str | None, model_given: bool
) -> None:
    """Two evaluations of one benchmark pooled, one row per task each: every "split" task is
    one model passing where the other fails, no group of one policy's draws. Without --model
    the verdict is provisional with the finding; the same model spelled another way, or
    --model, is not that."""
    rows = []
    for t in range(200):
        rows.append({"task_id": f"t{t}", "completion": f"a{t}", "reward": 1.0, "model": MODEL})
        other = second if second is not None else MODEL
        rows.append(
            {"task_id": f"t{t}", "completion": f"b{t}", "reward": float(t % 2), "model": other}
        )
    got = run_route(write(tmp_path, "two.jsonl", rows), model=MODEL if model_given else None)
    assert isinstance(got, Route)
    several = "several_models" in kinds(got)
    assert several == (not model_given and second == "meta-llama/Llama-3.1-8B"), kinds(got)
    if several:
        assert got.provisional and "--by model" in (got.provisional_why or "") + str(
            [f.moves for f in got.data_quality]
        )


@pytest.mark.parametrize("reward", [0.0, 1.0, None])
@pytest.mark.parametrize("tasks", [40, 1000])
def test_one_rollout_per_task_with_one_reward_everywhere_is_provisional(
    tmp_path: Path, reward: float | None, tasks: int
) -> None:
    """At k = 1 the single-rollout family's advantage is the reward less a batch baseline:
    every reply failing (or passing) leaves it 0 everywhere, whatever the task count, so the
    verdict is provisional and says to measure the band; rewards that differ are firm from 30
    tasks, as before."""
    rows = [
        {"task_id": f"t{t}", "completion": f"a{t}", "truncated": False, "model": MODEL}
        | {"reward": float(t % 3 == 0) if reward is None else reward}
        for t in range(tasks)
    ]
    got = run_route(write(tmp_path, "single.jsonl", rows), model=MODEL)
    assert isinstance(got, Route) and got.route == "single-rollout"
    assert got.provisional == (reward is not None), got.provisional_why
    if reward is not None:
        assert "advantage 0" in (got.provisional_why or "")


@SETTINGS
@given(pool=clean_pools(), share=st.sampled_from([0.0, 0.01, 0.1, 0.3, 0.49, 0.51, 0.8, 1.0]))
def test_the_students_rows_among_a_teachers_are_weighed_by_their_share(
    tmp_path_factory: pytest.TempPathFactory, pool: list[dict[str, Any]], share: float
) -> None:
    """A teacher's pool that holds some of the student's rows (one stray row, a folder that
    holds both models' files): the teacher is the student only where the student wrote most
    of its rows; a minority leaves the verdict provisional, never a firm failure of check 4
    (one stray row of 2400 failed it firmly: "that is the student")."""
    folder = tmp_path_factory.mktemp("mixed-teacher")
    student = write(folder, "student.jsonl", pool)
    teacher_rows = _teacher(pool)
    own = max(1, round(share * len(teacher_rows))) if share else 0
    for row in teacher_rows[:own]:
        row["model"] = MODEL
    got = run_route(student, teacher=write(folder, "teacher.jsonl", teacher_rows), model=MODEL)
    assert isinstance(got, Route)
    t = next(c for c in got.checks if c.key == "teacher")
    if 2 * own > len(teacher_rows):
        assert t.status is Status.FAIL and t.measured.get("teacher_is_student")
        assert "teacher_is_student" in kinds(got)
    elif own:
        assert not t.measured.get("teacher_is_student")
        assert "teacher_mixes_student" in kinds(got) and got.provisional
    else:
        assert got.route == "teacher" and not got.provisional


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tasks=st.integers(560, 640),
    credit=st.sampled_from([0.0, 0.5, 0.95, 0.9999]),
    share=st.floats(0.02, 0.08),
    seed=st.integers(0, 2**16),
)
def test_partial_credit_in_a_floor_leaves_it_provisional(
    tmp_path_factory: pytest.TempPathFactory, tasks: int, credit: float, share: float, seed: int
) -> None:
    """Correct replies scored below 1 (a length penalty, half credit) on a few percent of the
    rows of a pool where nothing reaches the threshold: every grouped task reads at 0, yet
    their rewards split. A firm floor (OPSD) where the pool splits at 0.9 was wrong; the
    floor rests on the threshold and is provisional. Correct replies scored 0 (no credit) keep
    the floor firm."""
    import random

    rng = random.Random(seed)
    rows = []
    for t in range(tasks):
        for j in range(4):
            correct = rng.random() < share
            rows.append(
                {
                    "task_id": f"t{t:04d}",
                    "prompt": f"question {t}",
                    "completion": f"answer {t}.{j}",
                    "reward": credit if correct else 0.0,
                    "truncated": False,
                    "model": MODEL,
                }
            )
    got = route(tmp_path_factory.mktemp("credit"), rows)
    band = next(c for c in got.checks if c.key == "band")
    assert band.measured["band"] == "floor"
    partial = sum(0 < r["reward"] < 1 for r in rows)
    if partial:
        assert "credit_beside_the_band" in kinds(got) and got.provisional
    else:
        assert "credit_beside_the_band" not in kinds(got) and not got.provisional


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tasks=st.integers(560, 640),
    rate=st.sampled_from([1.0, 0.995]),
    credit=st.sampled_from([0.9, 0.97, 0.99, 0.999, 0.0]),
    share=st.floats(0.01, 0.09),
    seed=st.integers(0, 2**16),
)
def test_credit_under_the_threshold_in_a_saturated_pool_leaves_it_provisional(
    tmp_path_factory: pytest.TempPathFactory,
    tasks: int,
    rate: float,
    credit: float,
    share: float,
    seed: int,
) -> None:
    """The mirror at the top: correct replies scored just under 1 (a judge's probability, a
    penalty on a correct reply) on a few percent of the rows of a pool whose draws pass (or
    nearly all do). At 1.0 they fail, and each task that holds one splits: a firm GRPO on
    splits the threshold made. Counted as passes the rows route to GroupwiseGrading (or to
    GRPO on too few splits to call), so the verdict rests on the threshold and is
    provisional: a firm verdict is the one the credit read as passes gives, firm. Failures
    scored 0 (no credit) are failures: no finding."""
    import random

    rng = random.Random(seed)
    rows = []
    for t in range(tasks):
        for j in range(8):
            passed = rng.random() < rate
            graded = rng.random() < share
            reward = credit if graded or not passed else 1.0
            rows.append(
                {
                    "task_id": f"t{t:04d}",
                    "prompt": f"question {t}",
                    "completion": f"answer {t}.{j}.{rng.random():.6f}",
                    "reward": reward if passed or graded else 0.0,
                    "truncated": False,
                    "model": MODEL,
                }
            )
    got = route(tmp_path_factory.mktemp("credit_top"), rows)
    passing = [dict(r, reward=1.0) if 0 < r["reward"] < 1 else r for r in rows]
    credited = route(tmp_path_factory.mktemp("credit_passes"), passing)
    if passing == rows:
        assert "credit_beside_the_band" not in kinds(got)
    elif not got.provisional:  # firm: the credit read as passes routes the same, firm
        assert (credited.method, credited.provisional) == (got.method, False), got.headline
    if got.method != credited.method:
        assert "credit_beside_the_band" in kinds(got) and got.provisional, got.headline


@SETTINGS
@given(pool=clean_pools(), share=st.sampled_from([0.0, 0.02, 0.06, 0.3]))
def test_empty_replies_are_listed_with_the_data_quality(
    tmp_path_factory: pytest.TempPathFactory, pool: list[dict[str, Any]], share: float
) -> None:
    """Replies with no text, graded 0, from a twentieth of the rows: counted as the model's
    (DESIGN section 1) and listed before the checks (30% of the rows were empty while the
    report said "Data quality: nothing found"); fewer stay in the sources."""
    empty = int(share * len(pool))
    rows = [dict(r, completion="", reward=0.0) if i < empty else r for i, r in enumerate(pool)]
    got = route(tmp_path_factory.mktemp("empty"), rows)
    listed = [f for f in got.data_quality if f.kind == "empty"]
    if empty >= 0.05 * len(rows):
        assert listed and listed[0].count == empty
    else:
        assert not listed
