"""Rows with no task id, keyed by their chat prompt, whose prompt holds a part that varies
per draw (a system turn with the time of the request, a per-sample seed, an earlier turn
stamped per draw): the task is the part that repeats. And prompts that truly differ (a
persona of its own per row, one shared instruction under questions held in the system turn)
are never merged. The generator knows each row's task; the pool must count exactly its
tasks, by a plain loop over the rows.
"""

from __future__ import annotations

import datetime
import random
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import route_rows, write_rows
from whilecli.io.read import read_rows

SETTINGS = settings(
    max_examples=14, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
MODEL = "Qwen/Qwen3-8B"
WORDS = [
    "amber",
    "basil",
    "cedar",
    "delta",
    "ember",
    "fjord",
    "garnet",
    "harbor",
    "indigo",
    "juniper",
    "kestrel",
    "lotus",
]
#: How a row's prompt is written: its part that varies per draw, or that keys the task.
VARIANTS = ("timestamp", "coarse_time", "seed", "stamped_turn", "constant", "persona")
VARIANTS += ("few_personas", "system_task")


def _messages(variant: str, task: int, draw: int, row: int, rnd: random.Random) -> list[Any]:
    question = {"role": "user", "content": f"Problem {task}: what is {task * 7919} mod 97?"}
    when = datetime.datetime(2026, 1, 5) + datetime.timedelta(seconds=row)
    if variant == "coarse_time":  # draws sent two to a second, a task's after the last's
        when = datetime.datetime(2026, 1, 5) + datetime.timedelta(seconds=task * 3 + draw // 2)
        variant = "timestamp"
    if variant == "timestamp":
        return [{"role": "system", "content": f"Current date and time: {when.isoformat()}."},
                question]  # fmt: skip
    if variant == "seed":
        return [{"role": "system", "content": f"You solve. (seed {rnd.randrange(10**9)})"},
                question]  # fmt: skip
    if variant == "stamped_turn":
        return [{"role": "user", "content": f"Session opened {when.isoformat()}"}, question]
    if variant == "constant":
        return [{"role": "system", "content": "You are a careful solver."}, question]
    if variant == "few_personas":  # three personas, each asked every question: 3 tasks each
        return [{"role": "system", "content": f"You are {WORDS[draw % 3]}."}, question]
    if variant == "persona":  # a persona of its own per row, over a few shared questions
        who = " ".join(rnd.sample(WORDS, 4)) + f" {row}"
        return [{"role": "system", "content": f"You are {who}."},
                {"role": "user", "content": f"Introduce yourself, style {task % 3}."}]  # fmt: skip
    # the question sits in the system turn, under one instruction: every row its own task
    return [{"role": "system", "content": f"Compute {row} * {row + 3}."},
            {"role": "user", "content": "Give the number only."}]  # fmt: skip


def _rows(variant: str, tasks: int, k: int, seed: int) -> tuple[list[dict[str, Any]], int]:
    """The rows (shuffled) and the number of tasks they truly hold."""
    rnd = random.Random(seed)
    rows, truth = [], set()
    for task in range(tasks):
        rate = rnd.choice([0.0, 1.0, 0.3, 0.7])
        for draw in range(k):
            row = len(rows)
            messages = _messages(variant, task, draw, row, rnd)
            own = variant in ("persona", "system_task")
            truth.add(row if own else (task, draw % 3) if variant == "few_personas" else task)
            rows.append({"prompt": messages, "reward": float(rnd.random() < rate),
                         "completion": f"answer {rnd.random()}", "model": MODEL})  # fmt: skip
    rnd.shuffle(rows)
    return rows, len(truth)


@SETTINGS
@given(
    seed=st.integers(0, 10**6),
    variant=st.sampled_from(VARIANTS),
    tasks=st.integers(12, 90),
    k=st.integers(1, 8),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_a_part_that_varies_per_draw_does_not_key_the_task(
    tmp_path: Path, seed: int, variant: str, tasks: int, k: int, kind: str
) -> None:
    rows, truth = _rows(variant, tasks, k, seed)
    path = write_rows(Path(tempfile.mkdtemp(dir=tmp_path)), rows, kind)
    route = route_rows(path, MODEL)
    rollouts = next(c for c in route.checks if c.key == "rollouts_per_task")
    assert rollouts.measured["tasks"] == truth
    notes = read_rows([str(path)]).notes
    parted = any("tasks are keyed by the" in n for n in notes)
    if variant != "coarse_time":  # a coarse time may key draws alike already
        assert parted == (variant in ("timestamp", "seed", "stamped_turn") and k > 1)
