"""The brief report says only what the verdict rests on.

Pools drawn for every route (a cut-off reply that passes, one rollout per prompt, floor,
saturation, no split, a teacher that clears at k = 4 and at k = 1, another model's rows, an
older copy's, thin and plentiful split tasks): the lines above ``-v`` name no need and no
warning of a check the verdict did not reach or does not rest on. A ``fix-reward`` verdict
printed "Needs: tasks" and the band's "few split tasks" warning, which speak of GRPO.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from whilecli.route.decide import decide
from whilecli.route.model import Route
from whilecli.route.options import RouteOptions
from whilecli.route.render_text import text_to_string
from whilecli.route.simulate import Truth, draw_pool

TRUTHS = [
    Truth("low", 4, 40, 0.2, True),
    Truth("mid", 4, 25, 0.1, True),
    Truth("mid", 1, 40),
    Truth("floor", 4, 40),
    Truth("saturated", 4, 40),
    Truth("apart", 4, 40),
    Truth("low", 4, 40, teacher_gap=0.3),
    Truth("low", 1, 40, teacher_gap=0.3),
    Truth("low", 2, 40, other_model=True),
    Truth("mid", 4, 40, stale_share=0.3),
    Truth("near-floor", 2, 40),
    Truth("mid", 8, 200),
]
#: Routes whose verdict split tasks decide: the band's need and warning are theirs.
SPLIT_ROUTES = ("grpo", "no-split")


def _routes() -> list[tuple[Truth, Route]]:
    rng = np.random.default_rng(7)
    out = []
    for truth in TRUTHS:
        options = dataclasses.replace(RouteOptions(), model=f"{truth.model}@7")
        student, teacher = draw_pool(truth, rng)
        out.append((truth, decide(student, dataclasses.replace(options, teacher=teacher))))
    return out


@pytest.fixture(scope="module")
def routes() -> list[tuple[Truth, Route]]:
    return _routes()


def test_every_route_is_drawn(routes: list[tuple[Truth, Route]]) -> None:
    seen = {route.route for _, route in routes}
    assert {"fix-reward", "single-rollout", "floor", "saturated", "no-split", "teacher",
            "off-policy", "grpo"} <= seen  # fmt: skip


def test_the_brief_names_only_the_verdicts_needs_and_warnings(
    routes: list[tuple[Truth, Route]],
) -> None:
    for truth, r in routes:
        band = r.checks[2]
        claimed = [c for c in r.checks if c.reached]
        if r.route == "single-rollout" and "opd" in r.plan:  # a teacher clears at k = 1
            claimed += [c for c in r.checks if c.key in ("teacher", "tokenizer")]
        reached = [w for c in claimed for w in c.warnings]
        brief = text_to_string(r, width=80)
        label = f"{truth.label()} -> {r.route}:\n{brief}"
        for warning in r.warnings:
            assert warning in reached, label
        if r.route not in SPLIT_ROUTES:
            assert not set(band.measured.get("need", {})) & set(r.needs), label
            assert not any(w in brief for w in band.warnings), label
            assert "few split tasks" not in brief, label
        if r.route == "fix-reward":
            assert "Needs:" not in brief, label
