"""Per-token lists that do not line up (DESIGN sections 1 and 3): a row whose critic values,
log-probs or mask are of different lengths carries no token the update can use, so the route
counts it as carrying none, as ``whilecli update`` refuses it at that row. One rule for both:
the route's coverage of a per-token field is the number of rows the update would accept.

The generator writes k = 1 pools (where critic values decide SAO) whose rows hold per-token
lists of one length, or, on some rows, one list shorter or longer, as JSON Lines and Parquet.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rows_files import route_rows, write_rows
from whilecli.errors import InputError
from whilecli.methods.batch import Batch

MODEL = "Qwen/Qwen3-8B"
LISTS = ("logprobs", "values", "action_mask", "behavior_logprobs")


@st.composite
def pools(draw: st.DrawFn) -> tuple[list[dict[str, Any]], int]:
    """(rows, how many rows' lists line up)."""
    tasks = draw(st.integers(40, 80))
    extra = draw(st.sampled_from(LISTS[2:] + ("",)))
    off = set(draw(st.lists(st.integers(0, tasks - 1), max_size=4, unique=True)))
    rows = []
    for t in range(tasks):
        n = draw(st.integers(1, 5))
        row: dict[str, Any] = {
            "task_id": f"t{t}",
            "reward": float(t % 3 == 0),
            "model": MODEL,
            "logprobs": [-0.25] * n,
            "values": [0.5] * n,
        }
        if extra == "action_mask":
            row["action_mask"] = [1] * n
        elif extra == "behavior_logprobs":
            row["behavior_logprobs"] = [-0.5] * n
        if t in off:
            which = draw(st.sampled_from([k for k in row if k in LISTS]))
            row[which] = (
                row[which] + row[which][:1] if draw(st.booleans()) or n == 1 else row[which][1:]
            )
        rows.append(row)
    return rows, tasks - len(off)


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=pools())
def test_route_counts_the_rows_the_update_accepts(tmp_path: Path, kind: str, case: Any) -> None:
    rows, lined_up = case
    got = route_rows(write_rows(tmp_path, rows, kind), MODEL)
    accepted = 0
    for row in rows:
        try:
            Batch.from_rows([row])
            accepted += 1
        except InputError:
            pass
    assert accepted == lined_up
    values = [f for f in got.data_quality if f.kind == "coverage" and "critic" in f.found]
    assert [f.count for f in values] == ([len(rows) - lined_up] if lined_up < len(rows) else [])
    assert got.method == ("sao" if lined_up == len(rows) else "flash_reinforce")
