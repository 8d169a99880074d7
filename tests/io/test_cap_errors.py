"""An error that names the agent's step budget (OpenHands' ``error: "RuntimeError: Agent
reached maximum iteration in headless mode"``, a ``max_steps`` or turn limit) beside the
grade of the episode: the episode ran to its cap, a cut-off reply that was graded, never a
harness error left out of the rates (which raised pass@1 and hid the cut).

The generator writes agent episodes graded pass or fail, some ended by such an error, under
each error field, as JSON Lines and Parquet; other errors stay errors.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from read_helpers import frame_of
from rows_files import write_rows

CAPS = [
    "RuntimeError: Agent reached maximum iteration in headless mode. Current iteration: 100",
    "max_steps reached",
    "Maximum number of turns exceeded",
    "turn limit reached (30)",
]
#: Errors near the words that name no step budget the agent ran into: harness errors.
NEAR = [
    "ValueError: max_steps must be a positive integer, got -1",
    "ConfigError: invalid max_turns=None in agent config",
    "sandbox failed (step limit not reached)",
    "exceeded max rounds of tool-call retries against the sandbox",
    "Max retries exceeded with url: /v1/chat/completions",
]


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@pytest.mark.parametrize("field", ["error", "exception"])
@pytest.mark.parametrize("seed", range(3))
def test_a_step_budget_error_is_a_cut_off_reply(
    tmp_path: Path, kind: str, field: str, seed: int
) -> None:
    rnd = random.Random(seed)
    rows, cut, errors = [], [], 0
    for i in range(60):
        row = {
            "instance_id": f"i{i // 3}",
            "resolved": rnd.random() < 0.4,
            "completion": f"run {i}",
        }
        roll = rnd.random()
        if roll < 0.2:
            row[field] = rnd.choice(CAPS)
            row["resolved"] = False
        elif roll < 0.25 and field == "error":  # a harness failure: no episode at all
            row[field], row["completion"] = rnd.choice(["ConnectionError: 503", *CAPS, *NEAR]), None
            errors += 1
            cut.append(None)
            rows.append(row)
            continue
        else:
            row[field] = None
        cut.append(True if roll < 0.2 else None)
        rows.append(row)
    frame, read = frame_of(write_rows(tmp_path, rows, kind), missing="skip")
    kept = [
        c
        for c, r in zip(cut, rows, strict=True)
        if not (field == "error" and r["completion"] is None)
    ]
    assert frame["truncated"].to_list() == kept
    assert read.facts.errors == errors


@pytest.mark.parametrize("text", NEAR)
def test_an_error_near_the_words_is_a_harness_error(tmp_path: Path, text: str) -> None:
    rows = [
        {
            "instance_id": f"i{i // 2}",
            "resolved": i % 3 == 0,
            "completion": f"run {i}",
            "error": None,
        }
        for i in range(40)
    ]
    rows[5]["error"], rows[5]["completion"] = text, None
    frame, read = frame_of(write_rows(tmp_path, rows, "jsonl"))
    assert read.facts.errors == 1 and frame.height == 39
    assert frame["truncated"].null_count() == 39
