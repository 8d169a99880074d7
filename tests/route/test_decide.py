"""The decision: every row of the route table, every status, strict mode, the method scores."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_checks import make_rows

from whilecli.route.decide import METHODS, decide
from whilecli.route.model import Pool, Route, Status
from whilecli.route.options import RouteOptions
from whilecli.route.pool import summarize
from whilecli.route.stats import holdout_size


def rows_for(passes: list[int], n: int = 8, *, prefix: str = "t", truncated=False, model="m",
             version=None) -> list[tuple]:  # fmt: skip
    return [
        (f"{prefix}{i}", j < c, truncated, model, version)
        for i, c in enumerate(passes)
        for j in range(n)
    ]


def pool(rows: list[tuple], **kw: bool) -> Pool:
    return summarize(make_rows(rows, **kw))


ROUTES = {
    "fix-reward",
    "single-rollout",
    "floor",
    "saturated",
    "teacher",
    "off-policy",
    "grpo",
    "no-split",
}
MIXED = [1, 2, 3, 4, 5, 6, 7] * 6 + [0, 8] * 4  # 42 split tasks of 50


def status(route: Route, key: str) -> Status:
    return next(c for c in route.checks if c.key == key).status


def check(route: Route, key: str):
    return next(c for c in route.checks if c.key == key)


def scores(route: Route) -> dict[str, bool]:
    return {m.name: m.ok for m in route.methods}


def test_grpo_all_reached() -> None:
    route = decide(pool(rows_for(MIXED)), RouteOptions(model="m"))
    assert (route.route, route.method, route.exit_code) == ("grpo", "grpo", 0)
    assert route.plan == ["grpo"]
    assert [c.key for c in route.checks] == [
        "truncated_passes", "rollouts_per_task", "band", "teacher", "tokenizer", "on_policy",
    ]  # fmt: skip
    assert [c.status for c in route.checks] == [
        Status.PASS, Status.PASS, Status.PASS, Status.NOT_ASKED, Status.NOT_ASKED, Status.PASS,
    ]  # fmt: skip
    assert all(c.reached for c in route.checks if c.key != "tokenizer")
    ok = scores(route)
    assert ok["grpo"] and ok["dpo"] and ok["sft"] and not ok["rm"] and not ok["opd"]
    assert [m.name for m in route.methods] == list(METHODS)
    assert all(m.why for m in route.methods)
    assert route.needs == {}


def test_fix_reward_stops_everything() -> None:
    rows = rows_for(MIXED, model="other")
    rows[0] = ("t0", True, True, "other", None)  # a truncated pass
    route = decide(pool(rows), RouteOptions(model="m"))
    assert (route.route, route.method, route.exit_code) == ("fix-reward", None, 1)
    assert route.plan == []
    assert not any(scores(route).values())
    assert check(route, "truncated_passes").decides == "fix-reward"
    below = check(route, "on_policy")
    assert not below.reached and below.status is Status.FAIL and below.decides is None
    assert status(route, "band") is Status.PASS and not check(route, "band").reached


def test_single_rollout_family() -> None:
    rows = rows_for([1, 0, 1], n=1)
    route = decide(pool(rows, has_logprobs=True), RouteOptions(model="m"))
    assert (route.route, route.method) == ("single-rollout", "flash_reinforce")
    assert route.plan == ["flash_reinforce", "rae"] and route.needs["k"] == 4
    assert status(route, "band") is Status.NOT_REACHED
    assert scores(route)["flash_reinforce"] and scores(route)["rae"] and not scores(route)["sao"]
    critic = decide(pool(rows, has_values=True), RouteOptions())
    assert critic.method == "sao" and critic.plan[:3] == ["sao", "bpco", "flash_reinforce"]
    assert "absent" in check(critic, "rollouts_per_task").why


def test_floor_routes_opsd_or_sft_under_7b() -> None:
    floor = pool(rows_for([0] * 10, n=4))
    route = decide(floor, RouteOptions(model="m"))
    assert (route.route, route.method, route.plan) == ("floor", "opsd", ["opsd"])
    assert status(route, "band") is Status.FAIL and check(route, "band").decides == "floor"
    small = decide(floor, RouteOptions(model="m", size_b=1.5))
    assert (small.route, small.method) == ("floor", "sft")
    assert small.needs["stronger_model_completions"] == 10
    assert not scores(small)["opsd"] and scores(small)["sft"]


def test_saturated_routes_groupwise() -> None:
    route = decide(pool(rows_for([4] * 10, n=4)), RouteOptions(model="m"))
    assert (route.route, route.method) == ("saturated", "groupwise")
    assert scores(route)["groupwise"] and not scores(route)["grpo"]


def teacher_pool(passes: list[int], truncated=False) -> Pool:
    return pool(rows_for(passes, truncated=truncated, model="big"))


def test_teacher_routes_opd_with_one_tokenizer() -> None:
    student = pool(rows_for(MIXED))
    options = RouteOptions(
        model="m", teacher=teacher_pool([8] * 50), teacher_vocab=10, student_vocab=10
    )
    route = decide(student, options)
    assert (route.route, route.method, route.exit_code) == ("teacher", "opd", 0)
    assert check(route, "tokenizer").decides == "teacher"
    assert not check(route, "on_policy").reached
    # strict: the unreached unknown (none here) and every reached status pass.
    no_model = RouteOptions(
        teacher=teacher_pool([8] * 50), teacher_vocab=10, student_vocab=10, strict=True
    )
    strict = decide(student, no_model)
    assert strict.exit_code == 0 and status(strict, "on_policy") is Status.UNKNOWN


def test_teacher_tokenizer_unknown_and_strict() -> None:
    student = pool(rows_for(MIXED))
    route = decide(student, RouteOptions(model="m", teacher=teacher_pool([8] * 50)))
    assert (route.route, route.method, route.exit_code) == ("teacher", "opd", 0)
    assert status(route, "tokenizer") is Status.UNKNOWN and "tokenizer" in route.needs
    strict = decide(student, RouteOptions(model="m", teacher=teacher_pool([8] * 50), strict=True))
    assert status(strict, "tokenizer") is Status.UNKNOWN and strict.exit_code == 1


def test_tokenizer_mismatch_refuses_opd_and_continues() -> None:
    options = RouteOptions(
        model="m", teacher=teacher_pool([8] * 50), teacher_vocab=10, student_vocab=11
    )
    route = decide(pool(rows_for(MIXED)), options)
    assert (route.route, route.method) == ("grpo", "grpo")
    assert status(route, "tokenizer") is Status.FAIL and check(route, "tokenizer").reached
    assert not scores(route)["opd"]


def test_weak_teacher_is_reached_and_fails() -> None:
    route = decide(pool(rows_for(MIXED)), RouteOptions(model="m", teacher=teacher_pool(MIXED)))
    assert route.route == "grpo" and status(route, "teacher") is Status.FAIL
    assert status(route, "tokenizer") is Status.NOT_REACHED
    assert not check(route, "tokenizer").reached
    strict = decide(
        pool(rows_for(MIXED)), RouteOptions(model="m", teacher=teacher_pool(MIXED), strict=True)
    )
    assert strict.exit_code == 1


def test_off_policy_routes_sft() -> None:
    route = decide(pool(rows_for(MIXED, model="other")), RouteOptions(model="m"))
    assert (route.route, route.method) == ("off-policy", "sft")
    assert route.plan[:2] == ["sft", "opd"]
    assert "SFT on these rows, or OPD from their model" in route.why
    assert not scores(route)["grpo"]


def test_older_copy_suggests_async() -> None:
    rows = rows_for(MIXED, version="m@2")
    rows[:8] = [(r[0], r[1], r[2], "m", "m@1") for r in rows[:8]]
    route = decide(pool(rows), RouteOptions(model="m"))
    assert route.method == "grpo" and "async" in route.plan
    assert status(route, "on_policy") is Status.FAIL and scores(route)["async"]


def test_unknowns_warn_and_strict_fails() -> None:
    rows = rows_for(MIXED, truncated=None)
    route = decide(pool(rows), RouteOptions())
    assert route.method == "grpo" and route.exit_code == 0
    assert status(route, "truncated_passes") is Status.UNKNOWN
    assert status(route, "on_policy") is Status.UNKNOWN
    assert any("truncation" in w for w in route.warnings)
    assert any("--model" in w for w in route.warnings)
    assert decide(pool(rows), RouteOptions(strict=True)).exit_code == 1


def test_plan_adds_opsd_for_partial_floor_and_groupwise_near_ceiling() -> None:
    partial = decide(pool(rows_for([0] * 40 + [1, 2, 3, 4] * 9)), RouteOptions(model="m"))
    assert partial.method == "grpo" and "opsd" in partial.plan
    high = decide(pool(rows_for([8] * 60 + [7] * 40)), RouteOptions(model="m"))
    p1 = high.summary["pass_at_1"].value
    assert p1 == pytest.approx((60 + 40 * 7 / 8) / 100) and p1 >= 0.9
    assert high.method == "grpo" and "groupwise" in high.plan


def test_thin_band_adds_reinforce_ada_and_needs() -> None:
    route = decide(pool(rows_for([0] * 36 + [1] * 4, n=2)), RouteOptions(model="m"))
    assert route.method == "grpo" and "reinforce_ada" in route.plan
    # two draws per task cannot tell tasks that never pass from rare ones: no k promised
    assert route.needs.get("k") is None and scores(route)["reinforce_ada"]
    assert not scores(route)["dpo"]


def test_summary_and_before_gpu() -> None:
    rows = rows_for(MIXED) + [("s0", True, False, "m", None)]
    route = decide(pool(rows), RouteOptions(model="m"))
    s = route.summary
    assert (s["tasks"], s["rows"], s["grouped_tasks"], s["single_tasks"], s["k"]) == (
        51, 401, 50, 1, 8
    )  # fmt: skip
    want = (sum(c / 8 for c in MIXED) + 1) / 51
    assert s["pass_at_1"].value == pytest.approx(want)
    assert sorted(s["pass_at_k"]) == [4, 8] and sorted(s["pass_hat_k"]) == [4, 8]
    assert s["pass_at_k"][8].value == pytest.approx(sum(c > 0 for c in MIXED) / 50)
    assert s["pass_hat_k"][8].value == pytest.approx(sum(c == 8 for c in MIXED) / 50)
    hist = s["histogram"]
    assert sum(hist["counts"]) == 50 and hist["at_0"] == 4 and hist["at_1"] == 4
    held = route.before_gpu["holdout"]
    sized = holdout_size(0.05, base=s["pass_at_1"].value, k=8)  # this pool's pass@1 and k
    assert (held["n"], held["base"], held["k"]) == (sized.n, sized.base, 8)
    assert held["sized_from"] == "pool"
    assert held["sized"] == f"sized from this pool: pass@1 {sized.base:.2f}, k = 8"
    assert route.before_gpu["random_control"]
    assert route.inputs["paths"] == ["rows.jsonl"] and route.inputs["format"] == "jsonl"


def test_deterministic_and_order_free() -> None:
    rows = rows_for(MIXED)
    first = json.dumps(decide(pool(rows), RouteOptions(model="m")).to_dict())
    shuffled = list(rows)
    random.Random(4).shuffle(shuffled)
    assert json.dumps(decide(pool(shuffled), RouteOptions(model="m")).to_dict()) == first


def test_strict_with_one_vocab_given_is_not_a_mismatch() -> None:
    options = RouteOptions(model="m", teacher=teacher_pool([8] * 50), teacher_vocab=10, strict=True)
    route = decide(pool(rows_for(MIXED)), options)
    assert (route.route, route.method, route.exit_code) == ("teacher", "opd", 1)
    assert status(route, "tokenizer") is Status.UNKNOWN and scores(route)["opd"]


def test_empty_pool_does_not_crash() -> None:
    route = decide(pool([]), RouteOptions())
    assert route.route == "single-rollout" and route.summary["pass_at_1"].value is None
    json.dumps(route.to_dict())


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 6),  # task
            st.booleans(),  # passed
            st.sampled_from([None, False, True]),  # truncated
            st.sampled_from([None, "m", "x"]),  # model
        ),
        min_size=1,
        max_size=40,
    ),
    st.booleans(),
    st.randoms(use_true_random=False),
)
def test_any_pool_routes_consistently(rows: list[tuple], strict: bool, rnd: random.Random) -> None:
    named = [(f"t{t}", p, c, m) for t, p, c, m in rows]
    route = decide(pool(named), RouteOptions(model="m", strict=strict, bootstrap_draws=200))
    assert route.route in ROUTES and [m.name for m in route.methods] == list(METHODS)
    truncated_pass = any(p and c for _, p, c, _ in named)
    assert (route.route == "fix-reward") == truncated_pass
    assert (route.method is None) == truncated_pass
    reached_bad = any(c.reached and c.status in (Status.UNKNOWN, Status.FAIL) for c in route.checks)
    strict_bad = strict and (reached_bad or route.provisional)
    assert route.exit_code == int(truncated_pass or strict_bad)
    assert bool(route.exit_reasons) == bool(route.exit_code)
    assert route.headline.startswith("provisional: ") == route.provisional
    assert route.provisional == (route.provisional_why is not None)
    if route.firm_at is not None:  # a count only where one would make the verdict firm
        assert route.provisional
    elif route.provisional:
        assert route.provisional_why and "No task count alone would make it firm" in (
            route.provisional_why
        )
    if route.route != "fix-reward":
        assert route.provisional  # at most 7 tasks: never firm
    deciding = [c for c in route.checks if c.decides]
    assert len(deciding) == (0 if route.route == "grpo" else 1)
    assert all(c.reached for c in deciding)
    shuffled = list(named)
    rnd.shuffle(shuffled)
    again = decide(pool(shuffled), RouteOptions(model="m", strict=strict, bootstrap_draws=200))
    assert json.dumps(again.to_dict()) == json.dumps(route.to_dict())
