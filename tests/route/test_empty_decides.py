"""Empty replies are counted as the model's (DESIGN section 1), yet a harness that timed out,
a provider's content filter and a reasoning model whose answer never came each write one,
scored 0. Beside passing draws each makes a split task: a pool with no split task read as
firm GRPO. Where the rows without their empty failing replies route firmly to another
method, the verdict rests on that reading and is provisional (``empty_decides``).

The generator draws pools with a known truth (tasks that always pass, always fail, or
split at a drawn rate), blanks a share of the draws the ways writers write an empty reply,
and routes them: a firm verdict is always the verdict of the rows without the blanks; where
blanks are few among genuine splits, nothing is said.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from facts_reference import holds_nothing
from rows_files import finding_kinds, route_rows, write_rows
from whilecli.cli import app

MODEL = "Qwen/Qwen3-8B"
SETTINGS = settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
#: How writers leave a reply empty: no text, blanks, an empty chat message; with a finish
#: reason of a stop, a provider's filter, or none.
BLANKS: list[dict[str, Any]] = [
    {"completion": ""},
    {"completion": "   \n"},
    {"completion": "", "finish_reason": "content_filter"},
    {"completion": "", "usage": {"completion_tokens": 0}},
    # what a template writes around a reply, alone: the same empty reply
    {"completion": "<|im_end|>"},
    {"completion": "</s>"},
    {"completion": "<think>\n\n</think>\n\n"},
    {"completion": "\u200b"},
    {"completion": "<|eot_id|>", "finish_reason": "stop"},
]


def _pool(
    seed: int,
    tasks: int,
    k: int,
    mix: str,
    share: float,
    blank: dict[str, Any],
    fmt: str,
    grade: float = 0.0,
) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    rows = []
    for t in range(tasks):
        if mix == "ends":
            p = float(t % 2)
        elif mix == "saturated":
            p = 1.0
        else:
            p = rnd.uniform(0.2, 0.8)
        for _ in range(k):
            row: dict[str, Any] = {
                "task_id": f"t{t}",
                "prompt": f"Solve {t}.",
                "completion": f"reply {rnd.random():.8f}",
                "reward": float(rnd.random() < p),
                "finish_reason": "stop",
                "model": MODEL,
            }
            if rnd.random() < share:
                row.update(blank)
                row["reward"] = grade
            rows.append(row)
    return rows


@SETTINGS
@given(
    mix=st.sampled_from(["ends", "saturated"]),
    share=st.floats(0.1, 0.4),
    blank=st.sampled_from(BLANKS),
    tasks=st.integers(60, 200),
    k=st.sampled_from([4, 8]),
    fmt=st.sampled_from(["jsonl", "parquet"]),
    seed=st.integers(0, 2**16),
)
def test_empty_failing_replies_that_make_the_splits_leave_the_verdict_provisional(
    tmp_path_factory: pytest.TempPathFactory,
    mix: str,
    share: float,
    blank: dict[str, Any],
    tasks: int,
    k: int,
    fmt: str,
    seed: int,
) -> None:
    folder = tmp_path_factory.mktemp("blank")
    rows = _pool(seed, tasks, k, mix, share, blank, fmt)
    got = route_rows(write_rows(folder, rows, fmt), MODEL)
    clean = [r for r in rows if not holds_nothing(r["completion"])]
    truth = route_rows(write_rows(tmp_path_factory.mktemp("clean"), clean, fmt), MODEL)
    assert truth.route != "grpo"
    if not got.provisional:
        assert got.method == truth.method
    if got.route == "grpo":
        assert "empty_decides" in finding_kinds(got)
    # its summary keeps the number of empty replies only: never firmer than the rows
    summary = folder / "summary.parquet"
    done = CliRunner().invoke(app, ["summarize", str(folder / f"rows.{fmt}"), "-o", str(summary)])
    assert done.exit_code == 0, done.output
    summed = route_rows(summary, MODEL)
    if not summed.provisional:
        assert summed.method == truth.method


@pytest.mark.parametrize("blank", BLANKS[:2])
def test_a_few_empty_replies_among_true_splits_say_nothing(
    tmp_path_factory: pytest.TempPathFactory, blank: dict[str, Any]
) -> None:
    rows = _pool(3, 200, 8, "split", 0.03, blank, "jsonl")
    got = route_rows(write_rows(tmp_path_factory.mktemp("few"), rows, "jsonl"), MODEL)
    assert got.route == "grpo" and not got.provisional
    assert "empty_decides" not in finding_kinds(got)


@SETTINGS
@given(
    mix=st.sampled_from(["ends", "saturated", "split"]),
    share=st.floats(0.01, 0.3),
    blank=st.sampled_from(BLANKS),
    tasks=st.integers(60, 200),
    fmt=st.sampled_from(["jsonl", "parquet"]),
    seed=st.integers(0, 2**16),
)
def test_empty_replies_that_pass_leave_the_verdict_provisional(
    tmp_path_factory: pytest.TempPathFactory,
    mix: str,
    share: float,
    blank: dict[str, Any],
    tasks: int,
    fmt: str,
    seed: int,
) -> None:
    """A grader that passes an empty reply is at fault, as one that passes a cut-off reply
    is: once a few do (3, and half a percent of the rows), no verdict is firm."""
    rows = _pool(seed, tasks, 8, mix, share, blank, fmt, grade=1.0)
    passing = sum(1 for r in rows if holds_nothing(r["completion"]))
    got = route_rows(write_rows(tmp_path_factory.mktemp("passing"), rows, fmt), MODEL)
    flagged = "empty_passes" in finding_kinds(got)
    assert flagged == (passing >= 3 and passing >= 0.005 * len(rows))
    if flagged:
        assert got.provisional
