"""The scale-out recipes of ``docs/scale.md``, run as written, route like the rows.

The doc's SQL query (the one DuckDB and Spark SQL both run) goes through DuckDB after the
doc's DuckDB setup block; the polars blocks are executed as they stand. Each summary they
write must (1) hold the counts ``whilecli summarize`` writes for the same rows, and (2) route
to the same verdict, checks, methods and numbers as routing the rows directly. A header-less
summary cannot know its input format, source columns or grader, so ``inputs``, ``notes``,
``grader`` and the headline (which names the grader) are the only parts of the report left
out of the comparison; the grader is checked to read ``unknown``.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from conftest import EXAMPLES, ROOT
from whilecli.io.read import read_rows
from whilecli.route import run_route
from whilecli.route.summary import SUMMARY_SCHEMA, summary_frame

duckdb = pytest.importorskip("duckdb")

DOC = ROOT / "docs" / "scale.md"
STUDENT = "Qwen/Qwen3-0.6B"
VOCAB = {"teacher_vocab": 151936, "student_vocab": 151936}
#: The rows the doc's recipes read as written, and where the setup and the polars code name them.
DOC_ROWS = "examples/data/shards/*.parquet"
SQL_ROWS = f"read_parquet('{DOC_ROWS}'"
POLARS_ROWS = f'ROWS = "{DOC_ROWS}"'
SQL_THRESHOLD = ">= 1.0 AS passed"
POLARS_THRESHOLD = "THRESHOLD = 1.0"
#: Left out of the comparison: what a header-less summary cannot know (see the docstring).
UNKNOWABLE = ("inputs", "notes", "grader", "headline")


def _blocks(lang: str) -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    return re.findall(rf"^```{lang}\n(.*?)^```", text, re.S | re.M)


def _one(lang: str, holding: str) -> str:
    found = [b for b in _blocks(lang) if holding in b]
    assert len(found) == 1, f"docs/scale.md: {len(found)} ```{lang} blocks hold {holding!r}"
    return found[0]


def _replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"docs/scale.md: expected {old!r} once in the recipe"
    return text.replace(old, new)


QUERY = _one("sql", "WITH graded AS")
SETUP = _one("sql", "CREATE VIEW rollouts")
POLARS = _one("python", "pl.scan_parquet")
SINK = _one("python", "sink_parquet")


def duckdb_summary(rows: str, out: Path, threshold: float | None = None) -> Path:
    """The doc's DuckDB setup and query over ``rows`` (a glob), written with ``COPY``."""
    setup = _replace_once(SETUP, SQL_ROWS, f"read_parquet('{rows}'")
    query = QUERY
    if threshold is not None:
        query = _replace_once(query, SQL_THRESHOLD, f">= {threshold!r} AS passed")
    con = duckdb.connect()
    con.execute(setup)
    con.execute(f"COPY ({query}) TO '{out}' (FORMAT parquet)")
    con.close()
    return out


def polars_summary(rows: str, out: Path, threshold: float | None = None) -> Path:
    code = _replace_once(POLARS, POLARS_ROWS, f"ROWS = {rows!r}")
    if threshold is not None:
        code = _replace_once(code, POLARS_THRESHOLD, f"THRESHOLD = {threshold!r}")
    scope: dict[str, Any] = {}
    exec(code, scope)
    scope["summary"].sink_parquet(out)
    return out


ENGINES = {"duckdb": duckdb_summary, "polars": polars_summary}


def comparable(paths: list[str], **opts: Any) -> dict[str, Any]:
    report = run_route(paths, **opts).to_dict()
    return {k: v for k, v in report.items() if k not in UNKNOWABLE}


#: What only a whilecli header records (``has_logprobs``, ``has_values``): whether the rows
#: carry sampler log-probs or critic values, measured by the rollouts-per-task check.
HEADER_ONLY = ("sampler_logprobs", "critic_values")


def _without_header_facts(report: dict[str, Any]) -> dict[str, Any]:
    """The report less :data:`HEADER_ONLY` and the reasons in words that quote them."""
    out = {k: v for k, v in report.items() if k != "why"}
    out["methods"] = [{"name": m["name"], "ok": m["ok"]} for m in report["methods"]]
    out["checks"] = [
        {
            **{k: v for k, v in c.items() if k != "why"},
            "measured": {k: v for k, v in c["measured"].items() if k not in HEADER_ONLY},
        }
        for c in report["checks"]
    ]
    return out


def _without_header_flags(report: dict[str, Any]) -> dict[str, Any]:
    """The report less :data:`HEADER_ONLY` (the reasons kept)."""
    checks = [
        {**c, "measured": {k: v for k, v in c["measured"].items() if k not in HEADER_ONLY}}
        for c in report["checks"]
    ]
    return {**report, "checks": checks}


def assert_routes_like_rows(
    summary: list[str],
    rows: list[str],
    teacher: tuple[list[str], list[str]] | None = None,
    *,
    header_facts: bool = True,
    **opts: Any,
) -> dict[str, Any]:
    """The summary's report equals the rows' on everything a summary can know (without
    :data:`HEADER_ONLY` and the reasons that quote them when ``header_facts`` is false)."""
    s_opts, r_opts = dict(opts), dict(opts)
    if teacher is not None:
        s_opts["teacher"], r_opts["teacher"] = teacher
    want = run_route(rows, **r_opts).to_dict()
    got = run_route(summary, **s_opts).to_dict()
    assert got["grader"] == "unknown"
    assert got["headline"].split(" (")[0] == want["headline"].split(" (")[0]
    want = {k: v for k, v in want.items() if k not in UNKNOWABLE}
    got = {k: v for k, v in got.items() if k not in UNKNOWABLE}
    full = want
    for check in got["checks"]:  # a header-less summary cannot say: unknown, never absent
        assert all(check["measured"].get(flag) is None for flag in HEADER_ONLY)
    if not header_facts:
        want, got = _without_header_facts(want), _without_header_facts(got)
    else:
        want, got = _without_header_flags(want), _without_header_flags(got)
    assert got == want
    return full


def assert_same_counts(path: Path, rows: list[str], threshold: float | None = None) -> None:
    """The engine's summary holds ``whilecli summarize``'s counts; sums to float rounding; the
    per-task model lists as sets (``array_agg`` has no order)."""
    want = summary_frame(read_rows(rows, pass_threshold=threshold))
    got = pl.read_parquet(path).select(list(SUMMARY_SCHEMA)).cast(SUMMARY_SCHEMA)  # type: ignore[arg-type]
    exact = [c for c in SUMMARY_SCHEMA if c not in ("reward_sum", "reward_sumsq", "models")]
    assert got.select(exact).equals(want.select(exact))
    for col in ("reward_sum", "reward_sumsq"):
        assert (got[col] - want[col]).abs().max() < 1e-9  # type: ignore[operator]

    def cells(frame: pl.DataFrame) -> list[list[str]]:
        return [sorted(json.dumps(m, sort_keys=True) for m in ms) for ms in frame["models"]]

    assert cells(got) == cells(want)


@pytest.fixture
def in_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder holding the bundled ``examples/data``, as a fresh clone has it."""
    shutil.copytree(EXAMPLES, tmp_path / "examples" / "data")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_sql_runs_as_written_on_the_bundled_rows(in_copy: Path) -> None:
    """The setup block as written, then the ``COPY`` the doc names; routes as the shards."""
    con = duckdb.connect()
    con.execute(SETUP)
    con.execute(f"COPY ({QUERY}) TO 'tasks_duckdb.parquet' (FORMAT parquet)")
    con.close()
    shards = sorted(str(p.relative_to(in_copy)) for p in in_copy.glob(DOC_ROWS))
    assert len(shards) == 2
    want = assert_routes_like_rows(["tasks_duckdb.parquet"], shards, model=STUDENT)
    assert want["method"] == "grpo"
    assert comparable(["examples/data/mixed.parquet"], model=STUDENT) == want
    assert_same_counts(in_copy / "tasks_duckdb.parquet", shards)


def test_the_polars_blocks_run_as_written_on_the_bundled_rows(in_copy: Path) -> None:
    scope: dict[str, Any] = {}
    exec(POLARS, scope)
    exec(SINK, scope)
    shards = sorted(str(p.relative_to(in_copy)) for p in in_copy.glob(DOC_ROWS))
    want = assert_routes_like_rows(["tasks_polars.parquet"], shards, model=STUDENT)
    assert want["method"] == "grpo"
    assert_same_counts(in_copy / "tasks_polars.parquet", shards)


POOLS = [
    ("truncated_passes", {}, "fix-reward"),
    ("floor", {}, "floor"),
    ("saturated", {}, "saturated"),
    # whether the rows carry sampler log-probs only a whilecli header records
    ("single", {"header_facts": False}, "single-rollout"),
    ("other_model", {"model": STUDENT}, "off-policy"),
]


@pytest.mark.parametrize("engine", sorted(ENGINES))
@pytest.mark.parametrize(("name", "opts", "route"), POOLS)
def test_each_pool_routes_the_same_from_the_recipe(
    tmp_path: Path, engine: str, name: str, opts: dict[str, Any], route: str
) -> None:
    rows = str(EXAMPLES / f"{name}.parquet")
    summary = ENGINES[engine](rows, tmp_path / "tasks.parquet")
    want = assert_routes_like_rows([str(summary)], [rows], **opts)
    assert want["route"] == route
    assert_same_counts(summary, [rows])


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_a_teacher_summarised_by_the_recipe_routes_the_same(tmp_path: Path, engine: str) -> None:
    student, teacher = (str(EXAMPLES / f"{n}.parquet") for n in ("student", "teacher"))
    s_sum = str(ENGINES[engine](student, tmp_path / "student_tasks.parquet"))
    t_sum = str(ENGINES[engine](teacher, tmp_path / "teacher_tasks.parquet"))
    want = assert_routes_like_rows([s_sum], [student], ([t_sum], [teacher]), model=STUDENT, **VOCAB)
    assert want["method"] == "opd"


def _versioned_rows(folder: Path) -> str:
    """Rows the bundled pools lack: ``model@version`` writers, a policy-version column that
    is null on some rows, unknown truncation, partial rewards; two files with different
    columns (the second has no ``policy_version`` and no ``truncated``, and integer rewards)."""
    folder.mkdir()
    first = []
    for i in range(120):
        task = f"t{i % 30:02d}"
        writer = [STUDENT, f"{STUDENT}@step-40", f"{STUDENT}@step-38"][i % 3]
        cut = [None, False, True, False][i % 4]
        reward = [0.0, 1.0, 0.5, 1.0, 0.25][i % 5]
        # no partial credit on a cut-off reply: a summary made by another engine records no
        # row facts, and that one leaves the rows' verdict provisional
        first.append(
            {
                "task_id": task,
                "reward": 0.0 if cut and 0 < reward < 1 else reward,
                "truncated": cut,
                "model": writer,
                "policy_version": "v7" if i % 7 == 0 else None,
            }
        )
    pl.DataFrame(first).write_parquet(folder / "a.parquet")
    second = [{"task_id": f"t{i % 30:02d}", "reward": i % 2, "model": STUDENT} for i in range(60)]
    pl.DataFrame(second).write_parquet(folder / "b.parquet")
    return str(folder / "*.parquet")


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_versions_unknown_truncation_and_a_threshold_route_the_same(
    tmp_path: Path, engine: str
) -> None:
    rows = _versioned_rows(tmp_path / "rows")
    files = sorted(str(p) for p in (tmp_path / "rows").glob("*.parquet"))
    summary = ENGINES[engine](rows, tmp_path / "tasks.parquet", threshold=0.5)
    assert_same_counts(summary, files, threshold=0.5)
    for opts in ({"model": STUDENT}, {"model": f"{STUDENT}@step-40"}, {}):
        assert_routes_like_rows([str(summary)], files, pass_threshold=0.5, **opts)


def test_the_shared_query_keeps_to_sql_spark_also_runs() -> None:
    """No DuckDB-only syntax in the query both engines run (the setup block holds it)."""
    code = re.sub(r"--[^\n]*", "", QUERY)
    for duckdb_only in ("::", "{", "FILTER", "read_parquet", "list(", "contains(", '"', "USING"):
        assert duckdb_only not in code, duckdb_only
    assert "FROM rollouts" in code
