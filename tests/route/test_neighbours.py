"""Pools just outside the examples of each class issue 25 names, generated with their truth.

Each generator draws the reported instance and its neighbours: rewards a rounding away from
a documented boundary, error replies in the shapes harnesses write, a field on some rows
only, model names that state their size in other units, several data-quality findings at
once (the report must still answer in 25 lines at 80 columns), and deciding intervals that
cross their threshold (a count of tasks that would make the verdict firm is never one the
pool already has).
"""

from __future__ import annotations

import json
import math
import random
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io.modelid import model_identity
from whilecli.route import run_route
from whilecli.route.decide import Evidence, _provisional
from whilecli.route.model import Rate, Route
from whilecli.route.options import RouteOptions
from whilecli.route.policies import evaluate

MODEL = "Qwen/Qwen3-8B"
SETTINGS = settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _pool(tasks: int = 40, k: int = 8, **extra: Any) -> list[dict[str, Any]]:
    """A grouped pool with every field recorded: task t passes on its first t % 7 + 1 draws."""
    return [
        {
            "task_id": f"t{t}",
            "prompt": f"q{t}",
            "completion": f"a{t}.{j}",
            "reward": float(j < t % 7 + 1),
            "truncated": False,
            "model": MODEL,
            **extra,
        }
        for t in range(tasks)
        for j in range(k)
    ]


def _write(folder: Path, name: str, rows: list[dict[str, Any]]) -> str:
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _f32(x: float) -> float:
    """``x`` rounded to float32, as torch's default dtype holds it."""
    return float(struct.unpack("f", struct.pack("f", x))[0])


def _route(path: str, **kw: Any) -> Route:
    got = run_route(path, **kw)
    assert isinstance(got, Route)
    return got


# ------------------------------------------------ float boundaries (float32's rounding, 2⁻²²)


@SETTINGS
@given(
    offset=st.floats(-2.3e-7, 2.3e-7, allow_nan=False),
    end=st.sampled_from(["pass", "fail"]),
)
@example(offset=-(2.0**-24), end="pass")  # float32's 0.9999999403953552
@example(offset=1.1920929e-07, end="pass")  # float32's 1.0000001
@example(offset=1e-8, end="fail")  # a rounding over 0 is no partial credit
def test_rewards_a_rounding_from_0_or_1_read_as_0_or_1(
    tmp_path_factory: pytest.TempPathFactory, offset: float, end: str
) -> None:
    """A rubric sum a float32 rounding from 1 (0.9999999999999999, 0.9999999403953552,
    1.0000001) is a pass, one a rounding from 0 a fail: the route is the exact pool's."""
    folder = tmp_path_factory.mktemp("edge")
    exact = _pool()
    if end == "pass":  # a rubric sum a rounding either side of 1
        moved = [dict(r, reward=1.0 + offset) if r["reward"] == 1.0 else r for r in exact]
    else:  # a rounding either side of 0
        moved = [dict(r, reward=offset) if r["reward"] == 0.0 else r for r in exact]
    a = _route(_write(folder, "exact.jsonl", exact), model=MODEL)
    b = _route(_write(folder, "moved.jsonl", moved), model=MODEL)
    assert (a.route, a.method, a.summary["pass_at_1"].value) == (
        b.route,
        b.method,
        b.summary["pass_at_1"].value,
    )
    assert b.summary.get("partial_rows") in (None, 0) or not b.summary["partial_rows"]


@SETTINGS
@given(seed=st.integers(0, 2**16), parts=st.integers(2, 6))
def test_rubric_sums_in_float32_are_the_sums(
    tmp_path_factory: pytest.TempPathFactory, seed: int, parts: int
) -> None:
    """Rewards summed in float32 (a rubric's weights added in the order its checks finish,
    torch's default dtype) route as the exact sums: a saturated pool stays saturated."""
    rnd = random.Random(seed)
    weights = [rnd.random() for _ in range(parts)]
    weights = [w / sum(weights) for w in weights]
    exact = _pool()
    moved = []
    for r in exact:
        order = rnd.sample(weights, len(weights))
        total = 0.0
        for w in order:
            total = _f32(total + _f32(w))
        moved.append(dict(r, reward=total * r["reward"]))
    folder = tmp_path_factory.mktemp("f32")
    a = _route(_write(folder, "exact.jsonl", exact), model=MODEL)
    b = _route(_write(folder, "moved.jsonl", moved), model=MODEL)
    assert (a.route, a.method, a.summary["pass_at_1"].value) == (
        b.route,
        b.method,
        b.summary["pass_at_1"].value,
    )


@pytest.mark.parametrize("reward", [1.0 + 3e-7, -3e-7, 1.5])
def test_rewards_past_the_tolerance_are_refused_naming_the_bound(
    tmp_path: Path, reward: float
) -> None:
    rows = _pool()
    rows[5] = dict(rows[5], reward=reward)
    with pytest.raises(InputError) as err:
        run_route(_write(tmp_path, "r.jsonl", rows))
    assert repr(reward) in str(err.value) or f"{reward:g}" in str(err.value)
    assert "from 0 to 1," not in str(err.value)  # never a bound rounded into [0, 1]


# --------------------------------------------------------------- rows counted before looked at

ERROR_REPLIES = [
    "Error: 429 Too Many Requests",
    "Error: HTTP 503 service unavailable",
    "Rate limit exceeded. Please retry after 20s.",
    "rate limit reached",
    '{"error": {"message": "Rate limit reached for requests", "code": "rate_limit_exceeded"}}',
    "502 Bad Gateway",
    "429 Too Many Requests",
    "Request timed out.",
    "APIConnectionError: Connection error.",
    "Error code: 400 - This model's maximum context length is 32768 tokens",
]


@pytest.mark.parametrize("reply", ERROR_REPLIES)
def test_error_replies_of_every_shape_are_left_out(tmp_path: Path, reply: str) -> None:
    """An error reply scored 0 on a passing task's draw would make it split: left out, the
    route and pass@1 are the clean pool's."""
    clean = _pool()
    hurt = [dict(r, completion=reply, reward=0.0) for r in clean if r["reward"] == 1.0][::3]
    a = _route(_write(tmp_path, "clean.jsonl", clean), model=MODEL)
    b = _route(_write(tmp_path, "hurt.jsonl", clean + hurt), model=MODEL)
    assert [f.kind for f in b.data_quality][:1] == ["errors"]
    assert (a.route, a.method, a.summary["pass_at_1"]) == (
        b.route,
        b.method,
        b.summary["pass_at_1"],
    )


@pytest.mark.parametrize("reply", ["The answer is 502.", '{"error": null, "result": 5}', "429"])
def test_replies_that_mention_a_code_are_replies(tmp_path: Path, reply: str) -> None:
    rows = [dict(r, completion=f"{reply} ({r['completion']})") for r in _pool()]
    got = _route(_write(tmp_path, "ok.jsonl", rows), model=MODEL)
    assert "errors" not in [f.kind for f in got.data_quality]


@pytest.mark.parametrize("with_logprobs", [0, 10, 99, 100])
def test_log_probs_on_some_rows_are_not_present(tmp_path: Path, with_logprobs: int) -> None:
    """Check 2 says where sampler log-probs are: present only on every row."""
    rows = [
        {
            "task_id": f"s{i}",
            "prompt": f"q{i}",
            "completion": f"a{i}",
            "reward": float(i % 2),
            "truncated": False,
            "model": MODEL,
            **({"logprobs": [-0.1, -0.2]} if i < with_logprobs else {}),
        }
        for i in range(100)
    ]
    got = _route(_write(tmp_path, "k1.jsonl", rows), model=MODEL)
    check = next(c for c in got.checks if c.key == "rollouts_per_task")
    assert got.route == "single-rollout"
    if with_logprobs == 100:
        assert "log-probs are present" in check.why
    elif with_logprobs:
        assert f"on {with_logprobs} of 100 rows" in check.why and "present" not in check.why
        assert check.measured["sampler_logprobs_rows"] == with_logprobs
    else:
        assert "absent" in check.why


def test_few_split_holds_when_the_draws_repeat_one_completion(tmp_path: Path) -> None:
    """Greedy draws: whatever the rewards say splits was never measured (check's few-split)."""
    rows = [dict(r, completion=f"same {r['task_id']}") for r in _pool()]
    got = _route(_write(tmp_path, "greedy.jsonl", rows), model=MODEL)
    held = evaluate(got, ["few-split"])[0]
    assert held.failed and held.reason and "repeat one draw" in held.reason
    clean = _route(_write(tmp_path, "clean.jsonl", _pool(tasks=80)), model=MODEL)
    assert not evaluate(clean, ["few-split"])[0].failed


# ------------------------------------------------------------------------ identity: size


@pytest.mark.parametrize(
    ("name", "size"),
    [
        ("Qwen/Qwen3-0.6B", 0.6),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", 1.5),
        ("meta-llama/Llama-3.1-70b-instruct", 70.0),
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", 7.0),  # at least one expert: 46.7B in all
        ("Qwen/Qwen3-30B-A3B", 30.0),
        ("HuggingFaceTB/SmolLM2-135M", 0.135),
        ("EleutherAI/pythia-410m-deduped", 0.41),
        ("Qwen/Qwen2.5-7B-Instruct-1M", 7.0),
        ("ibm/granite-3.1-8b-a800m", 8.0),
        ("/ckpt/Qwen3-0.6B/step_100", 0.6),
        ("models--Qwen--Qwen3-0.6B/snapshots/0123abcd", 0.6),
        ("microsoft/Phi-3-mini-4k-instruct", None),
        ("Qwen/Qwen2.5-Instruct-1M", None),
    ],
)
def test_the_size_a_name_states(name: str, size: float | None) -> None:
    got = model_identity(name).size_b
    assert got == size or (got is not None and size is not None and math.isclose(got, size))


@pytest.mark.parametrize(
    ("name", "method"),
    [("HuggingFaceTB/SmolLM2-135M", "sft"), ("mistralai/Mixtral-8x7B-Instruct-v0.1", "opsd")],
)
def test_a_floor_routes_by_the_size_in_any_unit(tmp_path: Path, name: str, method: str) -> None:
    rows = [dict(r, reward=0.0, model=name) for r in _pool()]
    got = _route(_write(tmp_path, "floor.jsonl", rows), model=name)
    assert (got.route, got.method) == ("floor", method)
    opsd = next(m for m in got.methods if m.name == "opsd")
    assert "size not given" not in opsd.why


# ------------------------------------------------ firm_at: never a count the pool already has


@given(
    tasks=st.integers(3, 5000),
    value=st.floats(-0.3, 0.4, allow_nan=False),
    half=st.floats(0.001, 0.3, allow_nan=False),
    below=st.booleans(),
    margin=st.sampled_from([0.0, RouteOptions().effect_margin]),
)
@settings(max_examples=300, deadline=None)
def test_a_provisional_count_exceeds_the_tasks_measured(
    tasks: int, value: float, half: float, below: bool, margin: float
) -> None:
    """A teacher's paired difference whose interval crosses the effect (0.05), or the zone
    ``effect_margin`` past it: the tasks that would make the verdict firm are more than it
    rests on, and given only where the estimate lies on the side of the zone's edge the
    verdict claims (more tasks narrow the interval about the estimate, never across the
    edge); else no count is given and the sentence says why."""
    options = RouteOptions()
    rate = Rate(
        value, value - half, value + half, tasks, 2 * tasks, "clustered", unit="paired tasks"
    )
    ev = Evidence(
        4, "a teacher", tasks, rate, "paired difference", options.effect, below=below,
        margin=margin,
    )  # fmt: skip
    provisional, why, firm_at = _provisional([ev], options)
    if not provisional:
        return
    assert why is not None
    if firm_at is None:
        assert "No task count alone would make it firm" in why
    else:
        assert firm_at >= options.firm_tasks
        crosses = "crosses" in why or "is not below" in why
        assert not crosses or firm_at > tasks, why
        edge = options.effect - margin if below else options.effect + margin
        if crosses:
            assert (value < edge) if below else (value > edge), (value, edge, why)


def test_no_split_is_provisional_with_no_count_and_a_label(tmp_path: Path) -> None:
    rows = [dict(r, reward=float(int(r["task_id"][1:]) % 2)) for r in _pool(tasks=400, k=4)]
    got = _route(_write(tmp_path, "unanimous.jsonl", rows), model=MODEL)
    assert got.route == "no-split" and got.provisional and got.firm_at is None
    assert got.provisional_why and "fewer than 30 split tasks" in got.provisional_why
    assert all(ev["label"] for ev in got.evidence)


# -------------------------------------------------------------- the answer, defects at once

DEFECTS = ("errors", "ungraded", "truncation", "model", "values", "logprobs", "cut", "teacher")


def _inject(rows: list[dict[str, Any]], defects: set[str]) -> list[dict[str, Any]]:
    out = []
    for i, r in enumerate(rows):
        r = dict(r)
        if "truncation" in defects and i % 4 == 0:
            r.pop("truncated")
        if "model" in defects and i % 5 == 0:
            r.pop("model")
        if "values" in defects and i % 2:
            r["values"] = [0.1]
        if "logprobs" in defects and i % 3:
            r["logprobs"] = [-0.1]
        if "cut" in defects and r.get("truncated") is False and r["reward"] == 0 and i % 9 == 0:
            r.update(truncated=True, reward=0.4)
        out.append(r)
    if "errors" in defects:
        out += [dict(r, completion="Error: 429 Too Many Requests", reward=0.0) for r in rows[::11]]
    if "ungraded" in defects:
        out += [dict(r, reward=None, completion=r["completion"] + "?") for r in rows[::13]]
    return out


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    defects=st.sets(st.sampled_from(DEFECTS), min_size=3),
    tasks=st.integers(12, 40),
    strict=st.booleans(),
    model=st.booleans(),
)
def test_the_answer_keeps_every_finding_in_25_lines_at_80_columns(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    defects: set[str],
    tasks: int,
    strict: bool,
    model: bool,
) -> None:
    """However many findings a pool carries, the answer (verdict, plan, evidence, findings)
    comes first and whole within 25 lines of 80 columns; the findings are never the part
    left to -v."""
    folder = tmp_path_factory.mktemp("many")
    monkeypatch.chdir(folder)
    rows = _pool(tasks=tasks)
    _write(folder, "rows.jsonl", _inject(rows, defects))
    args = ["route", "rows.jsonl"] + (["--model", MODEL] if model else [])
    args += ["--strict"] if strict else []
    if "teacher" in defects:  # the student itself, under other prompts on some ids
        teacher = [
            dict(r, reward=1.0, prompt="other" if i < 16 else r["prompt"])
            for i, r in enumerate(rows)
        ]
        _write(folder, "teacher.jsonl", teacher)
        args += ["--teacher", "teacher.jsonl"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
    assert result.exit_code in (0, 1), result.output
    lines = result.stdout.splitlines()
    assert len(lines) <= 25 and max(map(len, lines)) <= 80, result.stdout
    text = " ".join(result.stdout.split())
    report = json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)
    assert report["data_quality"], report["data_quality"]
    for finding in report["data_quality"]:
        assert finding["found"].split(" (first")[0] in text, (finding, result.stdout)
    assert lines[0].startswith("whilecli route: ") and any(x.startswith("Evidence:") for x in lines)


# --------------------------------------------------------------------------- one style


def test_a_paired_difference_prints_signed_everywhere(tmp_path: Path) -> None:
    student = _write(tmp_path, "s.jsonl", _pool())
    teacher = _write(
        tmp_path, "t.jsonl", [dict(r, reward=1.0, model="Qwen/Qwen3-32B") for r in _pool()]
    )
    got = _route(student, teacher=teacher, model=MODEL)
    paired = next(c for c in got.checks if c.key == "teacher").measured["paired_difference"]
    assert paired.format().startswith("+") and "paired tasks" in paired.format()
    result = CliRunner().invoke(app, ["diff", student, teacher], env={"COLUMNS": "120"})
    line = next(x for x in result.stdout.splitlines() if x.strip().startswith("difference"))
    assert line.split("difference", 1)[1].strip() == paired.format()


def test_slices_keep_the_provisional_qualifier(tmp_path: Path) -> None:
    a = _write(tmp_path, "a.jsonl", _pool())
    b = _write(tmp_path, "b.jsonl", [dict(r, reward=0.0) for r in _pool(tasks=10)])
    got = run_route([a, b], by="source", model=MODEL)
    assert not isinstance(got, Route)
    table = {Path(t["slice"]).name: t for t in got.table()}
    assert table["b.jsonl"]["provisional"] and not table["a.jsonl"]["provisional"]
    result = CliRunner().invoke(app, ["route", a, b, "--by", "source", "-q", "--model", MODEL])
    assert any("provisional: floor" in x for x in result.stdout.splitlines()[:3]), result.stdout
