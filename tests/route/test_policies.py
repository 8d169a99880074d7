"""The CI policies on constructed pools (each triggered and not), the judge scan and audit,
and the repository settings (``pyproject.toml`` ``[tool.while]`` and ``while.toml``)."""

from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.errors import UsageError
from whilecli.io.judge import JudgeScan
from whilecli.io.read import read_rows
from whilecli.route.decide import decide
from whilecli.route.judges import audit_verdict, load_audit
from whilecli.route.model import Route, Rows
from whilecli.route.options import RouteOptions
from whilecli.route.policies import (
    POLICIES,
    Evidence,
    evaluate,
    find_config,
    load_config,
    parse_policies,
    resolve_fail_on,
)
from whilecli.route.pool import summarize

Task = tuple  # (passes, n, truncated: bool | None per task, model | None)


def rows_of(tasks: list[Task]) -> Rows:
    """Canonical rows: task i has ``n`` rows, the first ``passes`` of them passing."""
    ids, rewards, truncs, models = [], [], [], []
    for i, (passes, n, truncated, model) in enumerate(tasks):
        for j in range(n):
            ids.append(f"t{i:03d}")
            rewards.append(1.0 if j < passes else 0.0)
            truncs.append(truncated)
            models.append(model)
    frame = pl.DataFrame(
        {
            "task_id": pl.Series(ids, dtype=pl.String),
            "reward": pl.Series(rewards, dtype=pl.Float64),
            "passed": pl.Series([r >= 1 for r in rewards], dtype=pl.Boolean),
            "truncated": pl.Series(truncs, dtype=pl.Boolean),
            "model": pl.Series(models, dtype=pl.String),
            "policy_version": pl.Series([None] * len(ids), dtype=pl.String),
        }
    )
    return Rows(frame.lazy(), ["rows.jsonl"], "jsonl", {}, 1.0, False)


def route_of(tasks: list[Task], model: str | None = "m") -> Route:
    return decide(summarize(rows_of(tasks)), RouteOptions(model=model, bootstrap_draws=50))


def holds(route: Route, name: str, evidence: Evidence | None = None) -> str | None:
    (result,) = evaluate(route, [name], evidence)
    assert result.name == name and result.failed == (result.reason is not None)
    return result.reason


MIXED = [(i % 7 + 1, 8, False, "m") for i in range(40)]  # 40 split tasks, all recorded


def test_truncated_passes() -> None:
    cut_pass = MIXED + [(1, 4, True, "m")]  # a truncated task whose first row passes
    assert "1 truncated row passed" in (holds(route_of(cut_pass), "truncated-passes") or "")
    cut_fail = MIXED + [(0, 4, True, "m")]
    assert holds(route_of(cut_fail), "truncated-passes") is None
    assert holds(route_of(MIXED), "truncated-passes") is None


def test_unknown_truncation() -> None:
    partly = MIXED + [(2, 4, None, "m")]
    assert holds(route_of(partly), "unknown-truncation") == (
        "4 of 324 rows record no truncation: record finish_reason "
        "(or truncated) so a cut-off pass can be seen"
    )
    none = [(p, n, None, m) for p, n, _, m in MIXED]
    assert (holds(route_of(none), "unknown-truncation") or "").startswith("320 of 320 rows")
    assert holds(route_of(MIXED), "unknown-truncation") is None


def test_floor_and_saturated() -> None:
    floor = [(0, 4, False, "m")] * 10
    full = [(4, 4, False, "m")] * 10
    assert "10 at 0" in (holds(route_of(floor), "floor") or "")
    assert holds(route_of(floor), "saturated") is None
    assert "10 at 1" in (holds(route_of(full), "saturated") or "")
    assert holds(route_of(full), "floor") is None
    # a partial floor (half the tasks at 0) is not a floor
    half = [(0, 4, False, "m")] * 10 + [(2, 4, False, "m")] * 10
    assert holds(route_of(half), "floor") is None


def test_off_policy() -> None:
    other = [(p, n, t, "gpt") for p, n, t, _ in MIXED]
    assert holds(route_of(other), "off-policy") is not None
    assert holds(route_of(MIXED), "off-policy") is None
    with pytest.raises(UsageError, match="--model"):
        evaluate(route_of(MIXED, model=None), ["off-policy"])


def test_few_split() -> None:
    assert holds(route_of(MIXED), "few-split") is None
    thin = [(1, 8, False, "m")] * 10 + [(0, 8, False, "m")] * 30  # 10 split of 40
    reason = holds(route_of(thin), "few-split")
    assert reason is not None
    assert reason.startswith("10 split tasks of 40 grouped (split share 0.25 [")
    assert "n=40 tasks (320 rows); share 0.25; want >= 32 and >= 0.3): need" in reason
    singles = [(i % 2, 1, False, "m") for i in range(50)]
    assert "no grouped task" in (holds(route_of(singles), "few-split") or "")
    assert "(floor)" in (holds(route_of([(0, 4, False, "m")] * 40), "few-split") or "")


@settings(max_examples=30, deadline=None)
@given(total=st.integers(40, 400), offset=st.integers(-3, 3))
def test_few_split_prints_the_share_apart_from_its_minimum(total: int, offset: int) -> None:
    """A thin band's share within rounding of its 0.3 minimum prints at the digits that keep
    them apart beside the minimums it misses (0.299 under 0.3, never 0.30)."""
    split = max(1, round(0.3 * total) + offset)
    tasks = [(1, 2, False, "m")] * split + [(0, 2, False, "m")] * (total - split)
    reason = holds(route_of(tasks), "few-split")
    if split >= 32 and split / total >= 0.3 - 1e-9:
        assert reason is None
        return
    assert reason is not None
    share, minimum = re.search(r"; share ([0-9.]+); want >= 32 and >= ([0-9.]+)\)", reason).groups()
    assert (float(share) < float(minimum)) is (split / total < 0.3 - 1e-9)
    assert float(minimum) == 0.3


@settings(max_examples=20, deadline=None)
@given(total=st.integers(100, 400), offset=st.integers(-2, 0))
def test_no_floor_prints_the_floor_share_apart_from_its_minimum(total: int, offset: int) -> None:
    """OPSD's "no floor" names the floor share under its 0.5 minimum at the digits that keep
    them apart (0.498 under 0.5, never 0.50)."""
    floor = total // 2 + offset
    if floor / total >= 0.5:
        floor -= 1
    tasks = [(0, 4, False, "m")] * floor + [(2, 4, False, "m")] * (total - floor)
    (opsd,) = [m for m in route_of(tasks).methods if m.name == "opsd"]
    assert not opsd.ok
    shown, minimum = re.fullmatch(
        r"no floor: ([0-9.]+) of groups at 0 \(< ([0-9.]+)\)", opsd.why
    ).groups()
    assert float(shown) < float(minimum) == 0.5


def test_judge_unaudited() -> None:
    route = route_of(MIXED)
    judged = JudgeScan(320, 5, {"judge": 5, "reward_model": 0, "judge_name": 0})
    clean = JudgeScan(320, 0, {"judge": 0, "reward_model": 0, "judge_name": 0})
    reason = holds(route, "judge-unaudited", Evidence(judge=judged))
    assert reason == (
        "5 of 320 rows are graded by a judge (judge_meta.scorer_kind=judge: 5) and no audit "
        "is given: pass --judge-audit FILE"
    )
    good = audit_verdict({"agreement": 0.86, "kappa": 0.7, "n": 200})
    bad = audit_verdict({"agreement": 0.86, "kappa": 0.7, "n": 60})
    assert holds(route, "judge-unaudited", Evidence(judge=judged, audit=good)) is None
    assert "does not clear" in (holds(route, "judge-unaudited", Evidence(judged, bad)) or "")
    assert holds(route, "judge-unaudited", Evidence(judge=clean)) is None
    with pytest.raises(ValueError):
        evaluate(route, ["judge-unaudited"])


def _wilson_low(successes: int, n: int, z: float = 1.959963984540054) -> float:
    """Wilson (1927) lower bound, written out."""
    p = successes / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - spread) / (1 + z * z / n)


def test_audit_verdict_follows_the_reference() -> None:
    # 0.86 with n = 60: round(51.6) = 52 agreements, lower bound 0.758 < 0.8
    low60 = _wilson_low(52, 60)
    assert 0.75 < low60 < 0.8
    assert audit_verdict({"agreement": 0.86, "kappa": 0.9, "n": 60}).ok is False
    assert _wilson_low(172, 200) >= 0.8
    assert audit_verdict({"agreement": 0.86, "kappa": 0.9, "n": 200}).ok is True
    assert audit_verdict({"agreement": 0.86, "kappa": 0.5, "n": 200}).ok is False  # kappa
    assert audit_verdict({"agreement": 0.86, "kappa": 0.9}).ok is None  # no n
    assert audit_verdict({"ok": False, "agreement": 1.0, "kappa": 1.0, "n": 999}).ok is False
    # banker's rounding: 0.5 * 5 = 2.5 rounds to 2
    assert "0.5 over n=5" in audit_verdict({"agreement": 0.5, "kappa": 1, "n": 5}).why
    for bad in (
        {"agreement": "high", "kappa": 1},
        {"ok": "yes"},
        {"agreement": 2, "kappa": 1, "n": 3},
    ):
        with pytest.raises(UsageError):
            audit_verdict(bad)


@given(
    agreement=st.floats(0, 1),
    kappa=st.floats(-1, 1),
    n=st.integers(1, 5000),
)
@settings(max_examples=80, deadline=None)
def test_audit_verdict_matches_the_written_out_rule(agreement: float, kappa: float, n: int) -> None:
    expected = _wilson_low(round(agreement * n), n) >= 0.8 and kappa >= 0.6
    low = _wilson_low(round(agreement * n), n)
    if abs(low - 0.8) > 1e-9:  # away from the boundary, float noise cannot flip the verdict
        assert audit_verdict({"agreement": agreement, "kappa": kappa, "n": n}).ok is expected


def test_load_audit_json_and_toml(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('{"agreement": 0.9, "kappa": 0.7, "n": 300}')
    (tmp_path / "a.toml").write_text("ok = false\n")
    (tmp_path / "bad.json").write_text("[1, 2]")
    assert load_audit(tmp_path / "a.json").ok is True
    assert load_audit(tmp_path / "a.toml").ok is False
    for name in ("bad.json", "missing.json"):
        with pytest.raises(UsageError, match="--judge-audit"):
            load_audit(tmp_path / name)


JUDGE_ROWS = [
    {"task_id": "a", "reward": 1, "judge_meta": {"scorer_kind": "judge"}},
    {"task_id": "a", "reward": 0, "judge_meta": {"scorer_kind": "reward_model"}},
    {"task_id": "b", "reward": 1, "judge_meta": {"scorer_kind": "rule"}, "judge_name": "gpt"},
    {"task_id": "b", "reward": 0, "judge_name": "gpt-4o"},
    {"task_id": "c", "reward": 1, "judge_name": ""},
    {"task_id": "c", "reward": 1, "judge_name": None},
    {"task_id": "d", "reward": 0, "judge_meta": {"scorer_kind": None}, "judge_name": "x"},
    {"task_id": "d", "reward": 0},
]


def _reference_kind(row: dict) -> str | None:
    """The reference SDK's rule, written out: scorer kind first, else a truthy judge_name."""
    meta = row.get("judge_meta")
    kind = meta.get("scorer_kind") if isinstance(meta, dict) else None
    if kind is not None:
        return kind if kind in ("judge", "reward_model") else None
    name = row.get("judge_name")
    return "judge_name" if name not in (None, "", False, 0) else None


def _expected(rows: list[dict]) -> dict[str, int]:
    out = {"judge": 0, "reward_model": 0, "judge_name": 0}
    for row in rows:
        kind = _reference_kind(row)
        if kind:
            out[kind] += 1
    return out


def scan_judges(paths: list[str], stdin: io.BytesIO | None = None) -> JudgeScan:
    """Who grades, as the one read of the rows decides it."""
    judge = read_rows(paths, stdin=stdin).judge
    assert judge is not None
    return judge


def test_scan_judges_jsonl_parquet_and_stdin(tmp_path: Path) -> None:
    expected = _expected(JUDGE_ROWS)
    assert expected == {"judge": 1, "reward_model": 1, "judge_name": 2}
    text = "".join(json.dumps(r) + "\n" for r in JUDGE_ROWS)
    (tmp_path / "rows.jsonl").write_text(text)
    pl.DataFrame(JUDGE_ROWS).write_parquet(tmp_path / "rows.parquet")
    for name in ("rows.jsonl", "rows.parquet"):
        scan = scan_judges([str(tmp_path / name)])
        assert (scan.rows, scan.judged, scan.by_kind) == (8, 4, expected), name
    scan = scan_judges(["-"], io.BytesIO(text.encode()))
    assert scan.by_kind == expected
    # a row polars cannot read under the narrow schema: the line walk gives the same counts
    odd = text + json.dumps({"task_id": "e", "reward": 1, "judge_meta": "judge"}) + "\n"
    (tmp_path / "odd.jsonl").write_text(odd)
    assert scan_judges([str(tmp_path / "odd.jsonl")]).by_kind == expected
    plain = tmp_path / "plain.parquet"
    pl.DataFrame({"task_id": ["a"], "reward": [1.0]}).write_parquet(plain)
    assert scan_judges([str(plain)]).judged == 0


@given(
    st.lists(
        st.fixed_dictionaries(
            {"task_id": st.sampled_from("abc"), "reward": st.sampled_from([0, 1])},
            optional={
                "judge_meta": st.fixed_dictionaries(
                    {"scorer_kind": st.sampled_from(["judge", "reward_model", "rule", None])}
                ),
                "judge_name": st.sampled_from(["gpt", "", None, "o3"]),
            },
        ),
        min_size=1,
        max_size=20,
    )
)
@settings(max_examples=50, deadline=None)
def test_scan_judges_matches_the_rule(rows: list[dict]) -> None:
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    scan = scan_judges(["-"], io.BytesIO(data))
    assert scan.by_kind == _expected(rows)
    assert scan.rows == len(rows)


def test_parse_policies() -> None:
    assert parse_policies(["floor,saturated", "floor", " few_split "]) == (
        "floor",
        "saturated",
        "few-split",
    )
    assert parse_policies("all") == POLICIES
    assert parse_policies(["none"]) == ()
    with pytest.raises(UsageError, match="unknown policy 'flor'"):
        parse_policies(["flor"])


def test_config_from_pyproject_and_while_toml(tmp_path: Path, monkeypatch) -> None:
    repo = tmp_path / "repo"
    deep = repo / "evals" / "dumps"
    deep.mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.while]\nfail-on = ["floor", "few-split"]\n'
        'judge-audit = "audit.json"\n'
    )
    monkeypatch.chdir(deep)
    config = load_config()
    assert config is not None and config.path == repo / "pyproject.toml"
    assert config.fail_on == ("floor", "few-split")
    assert config.judge_audit == (repo / "audit.json").resolve()
    assert resolve_fail_on(None, config) == (("floor", "few-split"), str(repo / "pyproject.toml"))
    assert resolve_fail_on(["saturated"], config) == (("saturated",), "--fail-on")  # CLI wins
    assert resolve_fail_on(["none"], config) == ((), "--fail-on")
    # a while.toml nearer the current directory wins; in one folder, while.toml first
    (deep / "while.toml").write_text('fail-on = "saturated,floor"\n')
    assert load_config().fail_on == ("floor", "saturated")  # in the policies' order
    (deep / "while.toml").unlink()
    (repo / "while.toml").write_text('fail-on = ["off-policy"]\n')
    assert load_config().fail_on == ("off-policy",)


def test_config_search_skips_other_pyprojects_and_stops_at_the_repo(
    tmp_path: Path, monkeypatch
) -> None:
    (tmp_path / "while.toml").write_text('fail-on = ["floor"]\n')  # above the repository
    repo = tmp_path / "repo"
    sub = repo / "pkg"
    sub.mkdir(parents=True)
    (sub / "pyproject.toml").write_text('[project]\nname = "pkg"\n')  # no [tool.while]
    monkeypatch.chdir(sub)
    assert find_config() == tmp_path / "while.toml"  # no .git yet: the search goes on up
    (repo / ".git").mkdir()
    assert find_config() is None and load_config() is None
    assert resolve_fail_on(None, None, ("truncated-passes",)) == (("truncated-passes",), "default")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("fail-on = [\n", "not valid TOML"),
        ('fail-on = ["flor"]\n', "unknown policy"),
        ("fail-on = 3\n", "list of policy names"),
        ("judge-audit = 3\n", "judge-audit must be a path"),
    ],
)
def test_bad_config_is_a_usage_error(tmp_path: Path, monkeypatch, text: str, says: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "while.toml").write_text(text)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=says) as err:
        load_config()
    assert "while.toml" in str(err.value)


KEY = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=20
).filter(lambda k: k not in ("fail-on", "judge-audit"))


@settings(max_examples=60)
@given(key=KEY, pyproject=st.booleans(), value=st.sampled_from(['"floor"', "3", "[]", "{}"]))
def test_an_unknown_settings_key_is_refused_naming_it(
    tmp_path_factory, key: str, pyproject: bool, value: str
) -> None:
    """Any key besides fail-on and judge-audit, in while.toml or [tool.while], is refused
    naming the file and the key (a typo such as fail_on would drop the CI gate unsaid)."""
    import os

    root = tmp_path_factory.mktemp("repo")
    (root / ".git").mkdir()
    quoted = (
        '"'
        + "".join(  # a TOML basic string: controls, quote and backslash escaped
            f"\\u{ord(c):04x}" if c in '"\\' or ord(c) < 0x20 or ord(c) == 0x7F else c for c in key
        )
        + '"'
    )
    body = f"{quoted} = {value}\n"
    name = "pyproject.toml" if pyproject else "while.toml"
    (root / name).write_text(("[tool.while]\n" if pyproject else "") + body, encoding="utf-8")
    here = os.getcwd()
    os.chdir(root)
    try:
        with pytest.raises(UsageError, match="unknown key") as err:
            load_config()
    finally:
        os.chdir(here)
    said = str(err.value)
    assert name in said and "\n" not in said
    assert repr(key) in said or "\\" in said  # the key, as written (escaped if unprintable)


@pytest.mark.parametrize(
    ("text", "means"),
    [
        ('fail_on = "few-split"\n', "'fail-on'"),
        ('judge_audit = "a.json"\n', "'judge-audit'"),
        ('failon = ["floor"]\n', "'fail-on'"),
    ],
)
def test_a_misspelt_key_names_the_closest(tmp_path: Path, monkeypatch, text: str, means: str):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.while]\n" + text)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=f"did you mean {means}"):
        load_config()


def test_tool_while_that_is_not_a_table_is_refused(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool]\nwhile = 3\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match="tool.while must be a table"):
        load_config()


# ------------------------------------------------------------------ every policy, by property


def _direct(tasks: list[Task], name: str) -> bool:
    """Each condition computed straight from the tasks, without the route."""
    grouped = [t for t in tasks if t[1] >= 2]
    split = sum(1 for p, n, _, _ in grouped if 0 < p < n)
    if name == "truncated-passes":
        return any(tr is True and p > 0 for p, _, tr, _ in tasks)
    if name == "unknown-truncation":
        return not any(tr is True and p > 0 for p, _, tr, _ in tasks) and any(
            tr is None for _, _, tr, _ in tasks
        )
    if name == "floor":
        return bool(grouped) and all(p == 0 for p, *_ in grouped)
    if name == "saturated":
        return bool(grouped) and all(p == n for p, n, *_ in grouped)
    if name == "off-policy":
        return any(m not in (None, "m") for *_, m in tasks)
    if name == "few-split":
        return not grouped or split < 32 or split / len(grouped) < 0.3
    raise AssertionError(name)


TASKS = st.lists(
    st.tuples(st.integers(0, 4), st.integers(1, 4), st.sampled_from([False, True, None]),
              st.sampled_from(["m", "m", "other", None])).map(
        lambda t: (min(t[0], t[1]), t[1], t[2], t[3])
    ),
    min_size=1,
    max_size=60,
)  # fmt: skip


@given(TASKS)
@settings(max_examples=60, deadline=None)
def test_each_policy_agrees_with_its_direct_computation(tasks: list[Task]) -> None:
    route = route_of(tasks)
    names = [p for p in POLICIES if p != "judge-unaudited"]
    for result in evaluate(route, names):
        assert result.failed == _direct(tasks, result.name), (result, tasks)
