"""A reply's token count and its cap are numbers on every row. One value of another kind
(``"100"``, ``true``, ``[100]``, ``{"n": 100}``) on one of a file's first rows silently left
the whole file's truncation unread (a cut-off reply that passes routed as GRPO, exit 0),
while the same value past the first rows was refused: it is refused at its line, naming the
field, wherever it is. One count past its cap among many rows is that row's oddity (not
known there); it no longer unpairs every other row's count and cap."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError
from whilecli.route import run_route

CAP = 512
ODD = ["100", True, [100], {"n": 100}, "n/a?"]


def _rows(seed: int) -> list[dict[str, object]]:
    """40 tasks at k = 8 under a 512-token cap; a tenth of the replies reach the cap, and
    those pass at their task's rate (a cut-off reply that passes: fix the reward)."""
    rng = random.Random(seed)
    rows: list[dict[str, object]] = []
    for t in range(40):
        p = 0.2 + 0.6 * rng.random()
        for j in range(8):
            cut = rng.random() < 0.1 or (t == 0 and j == 0)
            rows.append(
                {
                    "task_id": f"t{t}",
                    "completion": f"c{t}.{j}",
                    "reward": float(rng.random() < p) if not (t == 0 and j == 0) else 1.0,
                    "completion_tokens": CAP if cut else rng.randint(10, CAP - 1),
                    "max_tokens": CAP,
                }
            )
    return rows


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 1000),
    field=st.sampled_from(["completion_tokens", "max_tokens"]),
    odd=st.sampled_from(ODD),
    at=st.sampled_from([1, 2, 30, 319]),
)
def test_a_count_or_cap_of_another_kind_is_refused_at_its_line(
    tmp_path_factory: pytest.TempPathFactory, seed: int, field: str, odd: object, at: int
) -> None:
    rows = _rows(seed)
    rows[at][field] = odd
    path = tmp_path_factory.mktemp("tok") / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match=rf":{at + 1}: field '{field}'"):
        run_route(str(path))


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 1000), at=st.sampled_from([1, 2, 100]), past=st.sampled_from([513, 2**70])
)
def test_one_count_past_its_cap_is_that_rows_oddity(
    tmp_path_factory: pytest.TempPathFactory, seed: int, at: int, past: int
) -> None:
    rows = _rows(seed)
    rows[at]["completion_tokens"] = past
    path = tmp_path_factory.mktemp("tok") / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = run_route(str(path))
    assert got.route == "fix-reward" and got.exit_code == 1
    rows[at + 1]["completion_tokens"] = past  # two: the cap limits something else
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert run_route(str(path)).route != "fix-reward"


def test_the_clean_pool_is_fix_reward(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _rows(0)))
    assert run_route(str(path)).route == "fix-reward"


@pytest.mark.parametrize(("field", "value"), [("completion_tokens", "412"), ("max_tokens", "inf")])
def test_a_field_of_no_number_on_any_row_is_no_count_or_cap(
    tmp_path: Path, field: str, value: str
) -> None:
    """Text on every row (``max_tokens: "inf"``, counts written as text throughout) is no
    count or cap: not paired, and the finish reason the rows carry decides, as before."""
    rows = _rows(0)
    for row in rows:
        row["finish_reason"] = "length" if row["completion_tokens"] == CAP else "stop"
        row[field] = value
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert run_route(str(path)).route == "fix-reward"
