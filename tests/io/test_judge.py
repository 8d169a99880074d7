"""The one judge detector (DESIGN section 1, "Who grades"): decided by the read, from names
and the reference rule, and the same answer for the route's headline, ``check`` and
summaries, from a file or from stdin."""

from __future__ import annotations

import io
import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.io.judge import GRADER_KEYS, is_judge_name, named
from whilecli.io.read import read_rows
from whilecli.io.shape import Shape

DATA = Path(__file__).resolve().parents[2] / "shared" / "data-real"
if not DATA.is_dir():
    DATA = Path("/work/shared/data-real")


@pytest.mark.parametrize(
    ("row", "names"),
    [
        ({"example_id": 1, "reward": 1, "judge_reward_func": 1.0}, ("judge_reward_func",)),
        ({"id": 1, "symbolic_correct": True, "judge_correct": True}, ("judge_correct",)),
        (  # inspect_ai's model-graded scorers
            {"id": 1, "scores": {"model_graded_fact": {"value": 1}}},
            ("scores.model_graded_fact",),
        ),
        (  # AlpacaEval annotations
            {"instruction": "q", "annotator": "weighted_alpaca_eval_gpt4_turbo", "preference": 1.7},
            ("annotator", "preference"),
        ),
        (  # arena-hard judgments
            {"question_id": "q", "games": [{"judgment": "A>B", "score": "A>B"}]},
            ("games.judgment",),
        ),
        ({"id": 1, "reward": 1, "llm-as-judge": 1}, ("llm-as-judge",)),
        # the reference rule's own columns never count by their names
        ({"id": 1, "reward": 1, "judge_meta": {"scorer_kind": "rule"}, "judge_name": ""}, ()),
        ({"id": 1, "reward": 1, "completion": "x", "prompt": "p"}, ()),
    ],
)
def test_names_that_say_a_judge_graded(row: dict, names: tuple[str, ...]) -> None:
    assert named(Shape.from_rows([row])) == names


def test_judge_words() -> None:
    for name in ("judge", "Judgment", "annotator_kwargs", "model-graded-qa", "LLM as judge"):
        assert is_judge_name(name), name
    for name in ("reward", "task_id", "adjusted", "grade"):
        assert not is_judge_name(name), name


def _judged_rows() -> list[dict]:
    return [
        {
            "example_id": t,
            "prompt": f"p{t}",
            "completion": "c",
            "reward": float(r),
            "judge_reward_func": float(r),
        }
        for t in range(6)
        for r in (0, 1, 1)
    ]


def test_one_answer_for_a_file_and_stdin(tmp_path: Path) -> None:
    rows = _judged_rows()
    text = "".join(json.dumps(r) + "\n" for r in rows)
    path = tmp_path / "rows.jsonl"
    path.write_text(text)
    for judge in (
        read_rows([str(path)]).judge,
        read_rows(["-"], stdin=io.BytesIO(text.encode())).judge,
    ):
        assert judge is not None
        assert (judge.rows, judge.judged, judge.names) == (18, 18, ("judge_reward_func",))
    runner = CliRunner()
    for args, stdin in (([str(path)], None), (["-"], text)):
        route = runner.invoke(app, ["route", *args, "--format", "json"], input=stdin)
        assert route.exit_code in (0, 1), route.output
        assert json.loads(route.output)["grader"] == "judge"
        check = runner.invoke(app, ["check", *args, "--fail-on", "judge-unaudited"], input=stdin)
        assert check.exit_code == 1 and "judge-unaudited" in check.output, check.output


def test_a_program_grades_and_the_rule_counts_rows(tmp_path: Path) -> None:
    rows = [
        {"task_id": t, "reward": r, "judge_meta": {"scorer_kind": kind}}
        for t in ("a", "b")
        for r, kind in ((0, "rule"), (1, "judge"), (1, None))
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    judge = read_rows([str(path)]).judge
    assert judge is not None and (judge.rows, judge.judged) == (6, 2)
    plain = tmp_path / "plain.jsonl"
    plain.write_text(
        "".join(json.dumps({"task_id": r["task_id"], "reward": r["reward"]}) + "\n" for r in rows)
    )
    judge = read_rows([str(plain)]).judge
    assert judge is not None and judge.judged == 0
    check = CliRunner().invoke(app, ["check", str(plain), "--fail-on", "judge-unaudited"])
    assert check.exit_code == 0, check.output


@pytest.mark.skipif(not (DATA / "verifiers").is_dir(), reason="no real dumps")
def test_vf_eval_judge_reward_func_is_a_judge() -> None:
    wiki = next((DATA / "verifiers" / "wiki_search").glob("*/results.jsonl"))
    judge = read_rows([str(wiki)]).judge
    assert judge is not None and judge.judged == judge.rows > 0
    out = CliRunner().invoke(app, ["route", str(wiki)])
    assert "a judge grades" in out.output, out.output


#: Reward functions a writer scores each row with, by whether their names say a judge graded.
JUDGE_FUNCS = ("judge_reward", "judge_reward_func", "llm_judge_score", "JudgeCorrect")
PROGRAM_FUNCS = ("correct_answer_reward_func", "format_reward", "num_turns", "exact_match")
#: Where writers keep the per-function scores: Prime RFT's ``metrics`` (a JSON string),
#: verl's ``reward_extra_info``, an ``info`` or ``scores`` object.
CONTAINERS = ("metrics", "scores", "reward_extra_info", "info")


@settings(
    max_examples=24,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    funcs=st.lists(
        st.sampled_from(JUDGE_FUNCS + PROGRAM_FUNCS), min_size=1, max_size=3, unique=True
    ),
    container=st.sampled_from(CONTAINERS),
    as_text=st.booleans(),
    fmt=st.sampled_from(["jsonl", "parquet"]),
    spaced=st.booleans(),
)
def test_scores_kept_per_reward_function_name_their_judge(
    tmp_path_factory: pytest.TempPathFactory,
    funcs: list[str],
    container: str,
    as_text: bool,
    fmt: str,
    spaced: bool,
) -> None:
    """A writer that keeps each reward function's score in an object or in a JSON object
    written as text: a judge-named function makes every row judge-graded, for the route's
    headline, ``check`` and the read alike, whatever the encoding and the file."""
    judged = any(f in JUDGE_FUNCS for f in funcs)
    rows = []
    for t in range(5):
        for r in (0.0, 1.0, 1.0):
            scores = {f: r for f in funcs}
            text = json.dumps(scores, indent=1 if spaced else None)
            rows.append(
                {
                    "problem_id": t,
                    "prompt": f"question {t}",
                    "reward": r,
                    container: text if as_text else scores,
                }
            )
    path = tmp_path_factory.mktemp("judged") / f"rows.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        pl.DataFrame(rows).write_parquet(path)
    judge = read_rows([str(path)]).judge
    assert judge is not None
    assert (judge.judged == judge.rows) if judged else judge.judged == 0, (funcs, judge)
    runner = CliRunner()
    route = runner.invoke(app, ["route", str(path), "--format", "json"])
    assert route.exit_code in (0, 1), route.output
    assert json.loads(route.output)["grader"] == ("judge" if judged else "program")
    check = runner.invoke(app, ["check", str(path), "--fail-on", "judge-unaudited"])
    assert check.exit_code == (1 if judged else 0), check.output


@pytest.mark.skipif(not (DATA / "prime-rft").is_dir(), reason="no real dumps")
def test_prime_rft_judge_reward_in_its_metrics_text_is_a_judge() -> None:
    rows = next((DATA / "prime-rft").glob("*/*/results.jsonl"))
    judge = read_rows([str(rows)]).judge
    assert judge is not None and judge.judged == judge.rows == 25
    assert judge.names == ("metrics.judge_reward",)
    out = CliRunner().invoke(app, ["route", str(rows)])
    assert "a judge grades" in out.output, out.output


#: Who graded, written as a value: models and judges, and programs.
JUDGE_VALUES = (
    "gpt-4o-2024-08-06",
    "openai/gpt-4.1-mini",
    "claude-3-5-sonnet-20241022",
    "LLM",
    "llm_judge",
    "reward_model",
    "Qwen/Qwen2.5-72B-Instruct",
    "meta-llama/Llama-3.1-70B-Instruct",
    "model_graded_qa",
    "o3-mini",
    "Skywork-Reward-Llama-3.1-8B",
)
PROGRAM_VALUES = ("exact_match", "regex", "match", "unit_tests", "math_verify", "rule", "f1", "")


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    key=st.sampled_from(GRADER_KEYS),
    judged=st.booleans(),
    value=st.data(),
    rule=st.sampled_from([None, "rule", "judge"]),
    form=st.sampled_from(["jsonl", "parquet", "stdin"]),
)
def test_a_grader_named_by_value_is_a_judge(
    tmp_path: Path, key: str, judged: bool, value: st.DataObject, rule: str | None, form: str
) -> None:
    """``"grader": "gpt-4o"`` says a model graded; ``"grader": "exact_match"`` a program. The
    reference rule's ``judge_meta.scorer_kind`` decides where a row carries one."""
    said = value.draw(st.sampled_from(JUDGE_VALUES if judged else PROGRAM_VALUES))
    rows = []
    for t in range(8):
        for j in range(2):
            row: dict = {"task_id": f"t{t}", "reward": float(j), "completion": f"c{j}", key: said}
            if rule is not None:
                row["judge_meta"] = {"scorer_kind": rule}
            rows.append(row)
    frame = pl.DataFrame(rows)
    path = tmp_path / ("rows.parquet" if form == "parquet" else "rows.jsonl")
    if form == "parquet":
        frame.write_parquet(path)
    else:
        frame.write_ndjson(path)
    stdin = io.BytesIO(path.read_bytes()) if form == "stdin" else None
    scan = read_rows(["-" if stdin else str(path)], stdin=stdin).judge
    assert scan is not None
    want = rule == "judge" or (rule is None and judged)
    assert scan.judged == (len(rows) if want else 0), (said, rule, scan)
    result = CliRunner().invoke(app, ["check", str(path), "--fail-on", "judge-unaudited"])
    assert result.exit_code == (1 if want else 0), result.output


@pytest.mark.parametrize("judge_first", [True, False])
@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_the_judge_is_the_scorer_that_grades(tmp_path: Path, judge_first: bool, kind: str) -> None:
    """Two scorers side by side (a program's ``match`` and a judge's ``model_graded_fact``):
    the grader is the one read as the reward, never a sibling that does not grade."""
    from rows_files import write_rows
    from whilecli.route import run_route
    from whilecli.route.model import Route
    from whilecli.route.options import RouteOptions

    rows = []
    for t in range(40):
        for j in range(4):
            verdicts = {"match": {"value": float((t + j) % 3 == 0)}}
            judged = {"model_graded_fact": {"value": float((t + j) % 2 == 0)}}
            scores = {**judged, **verdicts} if judge_first else {**verdicts, **judged}
            rows.append({"task_id": f"t{t}", "scores": scores, "model": "m"})
    path = write_rows(tmp_path, rows, kind)
    for scorer, grader in (("match", "program"), ("model_graded_fact", "judge")):
        got = run_route(
            str(path), mapping={"reward": f"scores.{scorer}.value"}, options=RouteOptions(model="m")
        )
        assert isinstance(got, Route) and got.grader == grader, (scorer, got.grader)
