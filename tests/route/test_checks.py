"""The per-task summary and the six checks, each against numbers computed by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

from slow_stats import slow_fit_beta, slow_split
from whilecli.errors import UsageError
from whilecli.route import checks, stats
from whilecli.route.model import Pool, Rows, Status
from whilecli.route.options import RouteOptions
from whilecli.route.pool import summarize

Row = tuple  # (task_id, passed, truncated | None, model | None, policy_version | None)


def make_rows(rows: list[Row], *, has_logprobs: bool = False, has_values: bool = False) -> Rows:
    """Canonical rows from tuples ``(task_id, passed, truncated, model, version)``."""
    padded = [tuple(r) + (None,) * (5 - len(r)) for r in rows]
    frame = pl.DataFrame(
        {
            "task_id": pl.Series([r[0] for r in padded], dtype=pl.String),
            "reward": pl.Series([float(r[1]) for r in padded], dtype=pl.Float64),
            "passed": pl.Series([bool(r[1]) for r in padded], dtype=pl.Boolean),
            "truncated": pl.Series([r[2] for r in padded], dtype=pl.Boolean),
            "model": pl.Series([r[3] for r in padded], dtype=pl.String),
            "policy_version": pl.Series([r[4] for r in padded], dtype=pl.String),
        }
    )
    return Rows(
        frame.lazy(),
        ["rows.jsonl"],
        "jsonl",
        {"task_id": "task_id", "reward": "reward"},
        1.0,
        False,
        has_logprobs=has_logprobs,
        has_values=has_values,
    )


def group(tid: str, passes: int, n: int, truncated: bool | None = False, model: str = "m") -> list:
    return [(tid, i < passes, truncated, model) for i in range(n)]


def pool_of(*groups: list, **kw: bool) -> Pool:
    return summarize(make_rows([r for g in groups for r in g], **kw))


# --- summarize ---------------------------------------------------------------------------------


def test_summarize_counts_per_task() -> None:
    rows = [
        ("a", True, True, "m", "m@1"),
        ("a", True, None, "m", "m@1"),
        ("a", False, True, "m", "m@2"),
        ("b", False, None, None, None),
        ("c", True, False, "x", None),
        ("c", False, False, "x", None),
    ]
    pool = summarize(make_rows(rows))
    got = {r["task_id"]: r for r in pool.tasks.iter_rows(named=True)}
    assert list(got) == ["a", "b", "c"]
    assert got["a"] == {
        "task_id": "a", "n": 3, "passes": 2, "truncated": 2, "truncated_known": 2,
        "truncated_passes": 1,
    }  # fmt: skip
    assert got["b"]["truncated_known"] == 0 and got["b"]["truncated"] == 0
    assert got["c"]["truncated_known"] == 2 and got["c"]["truncated_passes"] == 0
    assert pool.rows == 6 and pool.n_tasks == 3
    assert pool.models == {"m": 3, "x": 2, None: 1}
    assert pool.versions == {"m@1": 2, "m@2": 1, None: 3}
    assert all(pool.tasks[c].dtype == pl.Int64 for c in ("n", "passes", "truncated"))


# --- 1. truncated passes --------------------------------------------------------------------


def test_truncated_passes_fail_counts() -> None:
    rows = [("a", True, True), ("a", False, True), ("b", True, False), ("b", True, True)]
    result = checks.truncated_passes(summarize(make_rows(rows)), RouteOptions())
    assert result.status is Status.FAIL and result.decides == "fix-reward"
    assert result.measured["truncated_passes"] == 2
    assert result.measured["truncated_rows"] == 3
    share = result.measured["truncated_share"]
    assert share.value == pytest.approx(3 / 4) and share.n_rows == 4 and share.n_tasks == 2
    assert "max_tokens" in result.why


def test_truncated_passes_pass_and_unknown() -> None:
    ok = checks.truncated_passes(pool_of(group("a", 1, 3), group("b", 0, 2, True)), RouteOptions())
    assert ok.status is Status.PASS and ok.measured["truncated_rows"] == 2
    unknown = checks.truncated_passes(pool_of(group("a", 1, 3, None)), RouteOptions())
    assert unknown.status is Status.UNKNOWN and unknown.warnings
    assert unknown.measured["truncated_share"].value is None
    partly = checks.truncated_passes(
        pool_of(group("a", 1, 3), group("b", 1, 2, None)), RouteOptions()
    )
    assert partly.status is Status.UNKNOWN
    assert partly.measured["rows_with_truncation_recorded"] == 3


# --- 2. rollouts per task -------------------------------------------------------------------


def test_rollouts_per_task_groups_and_singles() -> None:
    pool = pool_of(group("a", 1, 4), group("b", 2, 4), group("c", 0, 2), group("s", 1, 1))
    result = checks.rollouts_per_task(pool, RouteOptions())
    assert result.status is Status.PASS
    m = result.measured
    assert (m["grouped_tasks"], m["single_tasks"], m["k"]) == (3, 1, 4)
    assert (m["min_rows_per_group"], m["max_rows_per_group"]) == (2, 4)
    assert result.warnings  # the single is left out of the band


def test_rollouts_per_task_all_singles() -> None:
    pool = pool_of(group("a", 1, 1), group("b", 0, 1), has_logprobs=True)
    result = checks.rollouts_per_task(pool, RouteOptions())
    assert result.status is Status.FAIL and result.decides == "single-rollout"
    assert result.measured["k"] == 1 and result.measured["sampler_logprobs"] is True
    assert "k >= 4" in result.why and "present" in result.why


def test_common_k_tie_takes_smaller() -> None:
    pool = pool_of(group("a", 1, 4), group("b", 1, 8), group("c", 1, 8), group("d", 1, 4))
    assert checks.common_k(pool.tasks) == 4


# --- 3. band ----------------------------------------------------------------------------------


def test_band_mixed_by_hand() -> None:
    # rates over grouped tasks: 0, 1/4, 2/4, 1, 1/5 (in band: 1/4, 2/4, 1/5 → 3); single ignored.
    pool = pool_of(
        group("a", 0, 4), group("b", 1, 4), group("c", 2, 4), group("d", 4, 4),
        group("e", 1, 5), group("s", 1, 1),
    )  # fmt: skip
    result = checks.band(pool, RouteOptions(min_split_tasks=2, min_split_share=0.3))
    m = result.measured
    assert result.status is Status.PASS and m["band"] == "mixed" and not result.warnings
    assert (m["grouped_tasks"], m["tasks_at_0"], m["tasks_at_1"], m["split_tasks"]) == (5, 1, 1, 3)
    assert m["split_share"].value == pytest.approx(3 / 5)
    assert m["in_band_share"].value == pytest.approx(3 / 5)
    assert m["pass_at_1"].value == pytest.approx((0 + 0.25 + 0.5 + 1 + 0.2) / 5)
    assert m["pass_at_1"].n_rows == 21
    for k in (4, 8, 16):
        assert 0 < m[f"expected_split_share_k{k}"] < 1
    assert m["expected_split_share_k4"] < m["expected_split_share_k16"]


def test_band_in_band_edges_inclusive() -> None:
    pool = pool_of(group("a", 1, 5), group("b", 4, 5), group("c", 1, 10), group("d", 9, 10))
    m = checks.band(pool, RouteOptions()).measured
    assert m["in_band_share"].value == pytest.approx(2 / 4)  # 0.2 and 0.8 count; 0.1, 0.9 not


def test_band_floor_and_saturated() -> None:
    floor = checks.band(pool_of(group("a", 0, 4), group("b", 0, 2)), RouteOptions())
    assert floor.status is Status.FAIL and floor.decides == "floor"
    sat = checks.band(pool_of(group("a", 4, 4), group("b", 2, 2), group("s", 0, 1)), RouteOptions())
    assert sat.status is Status.FAIL and sat.decides == "saturated"
    none = checks.band(pool_of(group("s", 0, 1)), RouteOptions())
    assert none.status is Status.NOT_REACHED


def test_band_thin_needs_tasks_when_share_is_fine() -> None:
    # 10 tasks, 5 split (share 0.5 ≥ 0.3) but 5 < 32 split tasks → tasks = ceil(32 / 0.5) = 64.
    groups = [group(f"s{i}", 2, 4) for i in range(5)] + [group(f"z{i}", 0, 4) for i in range(5)]
    result = checks.band(pool_of(*groups), RouteOptions())
    assert result.status is Status.PASS and result.warnings
    assert result.measured["need"] == {"tasks": 64}
    assert "ReinforceAda" in result.warnings[0]


def expected_share_loop(pairs: list[tuple[int, int]], k: int) -> float:
    """Mean over tasks of E[1 − p^k − (1−p)^k] under each task's posterior, the prior
    fitted to the pool by scipy's optimiser (empirical Bayes)."""
    a, b = slow_fit_beta(pairs)
    return sum(slow_split(s, n - s, k, a, b) for s, n in pairs) / len(pairs)


def test_band_thin_needs_smallest_k() -> None:
    # 40 tasks at k=2: 4 split, 36 at 0 → share 0.1; under the one Beta prior, the smallest k
    # whose expected share reaches 0.3, by a plain loop. Two draws cannot tell tasks that never
    # pass from tasks that rarely do: the band itself promises no k (the counts fit as well
    # with 36 tasks that never pass), and says why.
    pairs = [(1, 2)] * 4 + [(0, 2)] * 36
    groups = [group(f"t{i}", s, n) for i, (s, n) in enumerate(pairs)]
    pool = pool_of(*groups)
    result = checks.band(pool, RouteOptions())
    assert result.measured["need"]["k"] is None
    assert "counts fit as well" in result.measured["need"]["why"]
    tasks = checks.grouped(pool)
    one_beta = stats.SplitOutlook(stats.pool_prior(tasks))  # type: ignore[arg-type]
    need = checks.band_need(tasks, 4, RouteOptions(), one_beta)
    want_k = next(k for k in range(3, 33) if expected_share_loop(pairs, k) >= 0.3)
    assert need["k"] == want_k
    expected = expected_share_loop(pairs, want_k)
    if expected * 40 < 32:
        # the fitted prior is a grid search, the reference an optimiser: a task or two apart
        assert abs(need["tasks"] - math.ceil(32 / expected)) <= 2
    else:
        assert "tasks" not in need


def test_band_thin_no_k_reaches() -> None:
    # Already at k=40 > max_k: no larger k to ask for.
    pairs = [(0, 40)] * 99 + [(1, 40)]
    groups = [group(f"t{i}", s, n) for i, (s, n) in enumerate(pairs)]
    need = checks.band(pool_of(*groups), RouteOptions()).measured["need"]
    assert need["k"] is None and "no k up to 32" in need["why"]


# --- 4. teacher -------------------------------------------------------------------------------


def student_and_teacher(t_passes: int, *, t_truncated: bool | None = False, shared: int = 10):
    student = pool_of(*[group(f"t{i}", 1, 4) for i in range(10)])
    teacher = pool_of(
        *[group(f"t{i}", t_passes, 4, t_truncated, model="big") for i in range(shared)]
    )
    return student, teacher


def test_teacher_not_asked() -> None:
    result = checks.teacher(pool_of(group("a", 1, 2)), RouteOptions())
    assert result.status is Status.NOT_ASKED


def test_teacher_clears_by_hand() -> None:
    student, teacher = student_and_teacher(4)
    result = checks.teacher(student, RouteOptions(teacher=teacher))
    m = result.measured
    assert result.status is Status.PASS
    assert m["gap"] == pytest.approx(0.75) and m["coverage"].value == 1.0
    assert m["teacher_pass_at_1"].value == 1.0 and m["student_pass_at_1"].value == 0.25


def test_teacher_fails_each_criterion() -> None:
    student, weak = student_and_teacher(1)
    r = checks.teacher(student, RouteOptions(teacher=weak))
    assert r.status is Status.FAIL and "gap" in r.why and "overlap" in r.why
    student, partial = student_and_teacher(4, shared=4)
    r = checks.teacher(student, RouteOptions(teacher=partial))
    assert r.status is Status.FAIL and "covers 4 of the student's 10" in r.why
    assert r.measured["coverage"].value == pytest.approx(0.4)
    student, cut = student_and_teacher(4, t_truncated=True)
    r = checks.teacher(student, RouteOptions(teacher=cut))
    assert r.status is Status.FAIL and "cut off" in r.why
    student, tiny = student_and_teacher(4, shared=2)
    r = checks.teacher(student, RouteOptions(teacher=tiny, teacher_min_coverage=0.1))
    assert r.status is Status.FAIL and "no interval" in r.why


def test_teacher_truncation_unknown() -> None:
    student, teacher = student_and_teacher(4, t_truncated=None)
    r = checks.teacher(student, RouteOptions(teacher=teacher))
    assert r.status is Status.UNKNOWN and r.warnings


# --- 5. tokenizer -------------------------------------------------------------------------------


def test_tokenizer_statuses(tmp_path: Path) -> None:
    student, teacher = student_and_teacher(4)
    ask = RouteOptions(teacher=teacher, teacher_vocab=100, student_vocab=100)
    assert checks.tokenizer(student, ask, teacher_cleared=True).status is Status.PASS
    differ = RouteOptions(teacher=teacher, teacher_vocab=100, student_vocab=101)
    r = checks.tokenizer(student, differ, teacher_cleared=True)
    assert r.status is Status.FAIL and "OPD refused" in r.why
    unknown = checks.tokenizer(student, RouteOptions(teacher=teacher), teacher_cleared=True)
    assert unknown.status is Status.UNKNOWN and "--teacher-vocab" in unknown.why
    strict = RouteOptions(teacher=teacher, strict=True)
    # --strict changes the exit code only, never a check's status
    assert checks.tokenizer(student, strict, teacher_cleared=True).status is Status.UNKNOWN
    assert (
        checks.tokenizer(student, RouteOptions(teacher=teacher), teacher_cleared=False).status
        is Status.NOT_REACHED
    )
    assert (
        checks.tokenizer(student, RouteOptions(), teacher_cleared=False).status is Status.NOT_ASKED
    )
    tok = tmp_path / "tokenizer.json"
    tok.write_text(json.dumps({"model": {"vocab": {"a": 0, "b": 1}}, "added_tokens": []}))
    paths = RouteOptions(teacher=teacher, teacher_tokenizer=tok, student_vocab=2)
    r = checks.tokenizer(student, paths, teacher_cleared=True)
    assert r.status is Status.PASS and r.measured["teacher_vocab_from"] == str(tok)


# --- 6. on-policy --------------------------------------------------------------------------------


def test_on_policy_statuses() -> None:
    pool = pool_of(group("a", 1, 2, model="m"), group("b", 1, 2, model="m"))
    assert checks.on_policy(pool, RouteOptions(model="m")).status is Status.PASS
    unknown = checks.on_policy(pool, RouteOptions())
    assert unknown.status is Status.UNKNOWN and unknown.warnings
    mixed = pool_of(group("a", 1, 3, model="m"), group("b", 1, 2, model="other"))
    r = checks.on_policy(mixed, RouteOptions(model="m"))
    assert r.status is Status.FAIL and r.decides == "off-policy" and "other" in r.why
    assert r.measured["on_policy_share"].value == pytest.approx(3 / 5)
    nameless = summarize(make_rows([("a", True, False, None), ("a", False, False, None)]))
    assert checks.on_policy(nameless, RouteOptions(model="m")).status is Status.UNKNOWN


def test_on_policy_ignores_rows_naming_none_with_warning() -> None:
    rows = [("a", True, False, "m"), ("a", False, False, None)]
    r = checks.on_policy(summarize(make_rows(rows)), RouteOptions(model="m"))
    assert r.status is Status.PASS and r.measured["rows_naming_none"] == 1 and r.warnings


def test_on_policy_older_copy() -> None:
    rows = [("a", True, False, "m", "m@3"), ("a", False, False, "m", "m@2")]
    pool = summarize(make_rows(rows))
    r = checks.on_policy(pool, RouteOptions(model="m"))
    assert r.status is Status.FAIL and r.decides is None and "Async" in r.why
    current = checks.on_policy(pool, RouteOptions(model="m@3"))
    assert current.status is Status.FAIL and "m@2" in current.why
    one = summarize(make_rows([("a", True, False, "m", "m@3")] * 2))
    assert checks.on_policy(one, RouteOptions(model="m@3")).status is Status.PASS
    assert checks.on_policy(one, RouteOptions(model="m")).status is Status.PASS


def test_options_validate() -> None:
    with pytest.raises(UsageError):
        RouteOptions(band=(0.8, 0.2))
    with pytest.raises(UsageError):
        RouteOptions(effect=0)
