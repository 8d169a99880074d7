"""Which task of one pool is which task of another: ``diff A B``, ``size --before A --after B``
and ``route A --teacher B`` pair the same tasks, and the pairing is the truth's.

Two pools are drawn from one truth: tasks with a prompt and a pass rate, each pool holding a
drawn share of them at its own k. On a drawn share of the tasks the second pool (or the
first) writes a uuid per row instead of the task id, and on another the second pool writes
a task under the id of another task that only the first pool holds (one id, two prompts
between the pools). The truth pairs a task when both pools hold it under its id or under a
per-row uuid (keyed by its prompt); a task written under another task's id is not paired
(DESIGN section 1: "one id with two prompts ... not shared between pools") and is counted.
Tasks only the second pool holds are drawn too. The shared-task count and the paired
difference of every command are the truth's (:func:`whilecli.route.shared.share_tasks`), and
every task of each pool is counted once: paired + only on its side + left out (one id,
another prompt) = its tasks, in ``diff``'s line and JSON, ``size --before --after``'s and
``route --teacher``'s check 4.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.route.paired import paired_size

ENV = {"COLUMNS": "80", "NO_COLOR": "1"}
KINDS = ("kept", "uuid-after", "uuid-before", "reused")


@st.composite
def truths(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(8, 20))
    kinds = draw(
        st.lists(st.sampled_from(KINDS), min_size=n, max_size=n).filter(
            lambda ks: ks.count("kept") >= 4
        )
    )
    return {
        "n": n,
        "kinds": kinds,
        "k": (draw(st.integers(1, 4)), draw(st.integers(1, 4))),
        "only_before": draw(st.floats(0.0, 0.3)),
        "only_after": draw(st.integers(0, 4)),
        "seed": draw(st.integers(0, 2**16)),
    }


def _rows(task: int, tid: str | None, k: int, rate: float, rng: np.random.Generator) -> list:
    return [
        {
            "task_id": tid if tid is not None else str(uuid.UUID(int=int(rng.integers(2**62)))),
            "prompt": f"Question {task}: what is {task} plus {task * 7 % 11}?",
            "completion": f"Reply {j} of {task}: {rng.integers(10**9)}",
            "reward": float(rng.random() < rate),
        }
        for j in range(k)
    ]


def draw_pools(truth: dict[str, Any], folder: Path) -> tuple[Path, Path, dict[str, Any]]:
    """The two pools as JSON Lines, and the truth's pairing: the per-task counts of the
    shared tasks, and how many tasks the second pool writes under another task's id."""
    rng = np.random.default_rng(truth["seed"])
    n, kinds = truth["n"], truth["kinds"]
    k_before, k_after = truth["k"]
    rates = rng.beta(1.0, 1.0, n)
    absent = rng.random(n) < truth["only_before"]  # tasks the second pool lacks
    # a task written under another's id takes the id of a task the second pool lacks and the
    # first holds under its id (an id the first pool lacks is no conflict: the task is
    # paired by its prompt)
    free = [t for t in range(n) if absent[t] and kinds[t] not in ("reused", "uuid-before")]
    before: list[dict[str, Any]] = []
    after: list[dict[str, Any]] = []
    reused = 0
    for t in range(n):
        kind = kinds[t]
        before += _rows(t, None if kind == "uuid-before" else f"t{t}", k_before, rates[t], rng)
        if absent[t]:
            continue
        if kind == "reused":
            if not free:
                continue  # no id to take: the task is absent from the second pool
            before_only = free.pop()
            after += _rows(t, f"t{before_only}", k_after, rates[t], rng)
            reused += 1
            kinds[t] = "taken"
            continue
        after += _rows(t, None if kind == "uuid-after" else f"t{t}", k_after, rates[t], rng)
    for t in range(n, n + truth["only_after"]):  # tasks only the second pool holds
        after += _rows(t, f"t{t}", k_after, float(rng.random()), rng)
    pl.DataFrame(before).write_ndjson(folder / "before.jsonl")
    pl.DataFrame(after).write_ndjson(folder / "after.jsonl")
    counts = _counts(before), _counts(after)
    shared = [t for t in range(n) if not absent[t] and kinds[t] not in ("reused", "taken")]
    frames = [
        pl.DataFrame(
            {
                "task_id": [f"t{t}" for t in shared],
                "n": [side[t][0] for t in shared],
                "passes": [side[t][1] for t in shared],
            }
        )
        for side in counts
    ]
    tally = {
        "before": len(counts[0]),
        "after": len(counts[1]),
        "only_before": len(counts[0]) - len(shared) - reused,
        "only_after": len(counts[1]) - len(shared) - reused,
    }
    want = {"frames": frames, "reused": reused, "tally": tally}
    return folder / "before.jsonl", folder / "after.jsonl", want


def _counts(rows: list[dict[str, Any]]) -> dict[int, tuple[int, int]]:
    """(rows, passes) per true task, read from the prompt the truth wrote."""
    out: dict[int, tuple[int, int]] = {}
    for r in rows:
        t = int(r["prompt"].split(":")[0].removeprefix("Question "))
        n, c = out.get(t, (0, 0))
        out[t] = (n + 1, c + int(r["reward"]))
    return out


def run(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, [*args, "--format", "json"], env=ENV)
    assert result.exit_code in (0, 1), (args, result.output, result.exception)
    return json.loads(result.stdout)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much],
)
@given(truth=truths())
def test_every_command_pairs_the_truths_tasks(truth: dict[str, Any], tmp_path: Path) -> None:
    folder = tmp_path / str(truth["seed"])
    folder.mkdir(exist_ok=True)
    before, after, want = draw_pools(truth, folder)
    b, a = want["frames"]
    shared = b.height
    d = (a["passes"] / a["n"] - b["passes"] / b["n"]).mean()

    diff = run("diff", str(before), str(after))
    assert diff["shared_tasks"] == shared, (diff["shared_tasks"], shared)
    assert abs(diff["difference"]["value"] - d) < 1e-9
    said = " ".join(diff["warnings"])
    assert (f"{want['reused']} task id" in said) == bool(want["reused"]), said
    assert diff["facts"]["after"]["other_prompt_tasks"] == want["reused"]
    tally = want["tally"]
    got = {k: diff[k] for k in ("only_before", "only_after")}
    got.update(before=diff["before_tasks"], after=diff["after_tasks"])
    assert got == tally, (got, tally)
    assert diff["other_prompt_tasks"] == want["reused"]
    for side in ("before", "after"):  # each side's tasks, every one counted once
        assert shared + tally[f"only_{side}"] + want["reused"] == tally[side]
    text = CliRunner().invoke(app, ["diff", str(before), str(after)], env=ENV).stdout
    words = " ".join(text.split())
    assert f"{shared} paired" in words and f"of {tally['before']} before and" in words, text
    for side in ("before", "after"):
        assert (f"{tally[f'only_{side}']} only {side}" in words) == bool(tally[f"only_{side}"])
    assert (f"{want['reused']} left out" in words) == bool(want["reused"]), text

    base = (b["passes"] / b["n"]).mean() if shared else None
    if base is None or not 0 < base < 0.95:  # no room for a gain of 0.05: size refuses
        refused = CliRunner().invoke(
            app, ["size", "--before", str(before), "--after", str(after)], env=ENV
        )
        assert refused.exit_code == 2, refused.output
    else:
        _size_pairs_the_tasks(before, after, b, a, tally, want, shared)

    route = run("route", str(before), "--teacher", str(after))
    check = next(c for c in route["checks"] if c["key"] == "teacher")["measured"]
    assert check["shared_tasks"] == shared
    assert check.get("other_prompt_tasks", 0) == want["reused"]
    assert check.get("student_only_tasks", 0) == tally["only_before"]
    students = shared + want["reused"] + tally["only_before"]
    assert check["coverage"]["n_tasks"] == students == tally["before"]
    assert abs(check["paired_difference"]["value"] - d) < 1e-9
    assert check["paired_difference"] == diff["difference"]


def _size_pairs_the_tasks(
    before: Path,
    after: Path,
    b: pl.DataFrame,
    a: pl.DataFrame,
    tally: dict[str, int],
    want: dict[str, Any],
    shared: int,
) -> None:
    size = run("size", "--before", str(before), "--after", str(after))
    truth_size = paired_size(b, a, 0.05)
    assert size["measured"]["paired_tasks"] == shared
    assert size["measured"]["n"] == truth_size.n
    assert abs(size["measured"]["sd"] - truth_size.sd) < 1e-9
    pairing = size["pairing"]
    assert (pairing["before_tasks"], pairing["after_tasks"]) == (tally["before"], tally["after"])
    assert (pairing["only_before"], pairing["only_after"]) == (
        tally["only_before"],
        tally["only_after"],
    )
    assert pairing["other_prompt_tasks"] == want["reused"]
