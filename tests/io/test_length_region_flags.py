"""A flag that marks a length *region* or a soft penalty is no truncation (DESIGN section 1,
the alias tables; ``io/aliases.py`` ``LENGTH_REGION_FLAGS``).

verl's DAPO reward manager logs ``overlong = overlong_reward < 0``: true for every reply
longer than ``max_resp_len - overlong_buffer.len``, finished or not. A seeded simulator of
such dumps (prompts x ``rollout.n``, lengths drawn around the soft buffer, a reply cut only
at the hard cap) knows which replies were cut; the flag alone must read as "not recorded",
and a true cut flag beside it is still read.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from read_helpers import frame_of
from rows_files import route_rows, write_rows
from whilecli.io import aliases
from whilecli.io.aliases import CUT_FLAGS, TRUNCATION_ALIASES

MODEL = "Qwen/Qwen2.5-32B"
MAX_LEN, BUFFER = 20480, 4096


def _dapo_rows(
    seed: int, region: str, cut_flag: str | None
) -> tuple[list[dict[str, Any]], list[bool]]:
    """Rows as verl's ``_dump_generations`` writes them with ``overlong_buffer.log`` on, and
    the truth of which replies were cut at the hard cap ``MAX_LEN``."""
    rng = random.Random(seed)
    rows, cut = [], []
    for p in range(rng.randint(6, 12)):
        skill = rng.random()
        for d in range(8):
            length = min(MAX_LEN, int(rng.uniform(0.5, 1.1) * MAX_LEN))
            at_cap = length >= MAX_LEN
            acc = (not at_cap) and rng.random() < skill
            penalty = min(-(length - (MAX_LEN - BUFFER)) / BUFFER, 0.0)
            row: dict[str, Any] = {
                "input": f"user\nSolve problem {p}\nassistant\n",
                "output": f"draw {d} of {p}",
                "gts": str(p),
                "score": (1.0 if acc else -1.0) + penalty,
                "step": 7,
                "acc": acc,
                region: penalty < 0 if region != "overlong_reward" else penalty,
            }
            if cut_flag is not None:
                row[cut_flag] = at_cap
            rows.append(row)
            cut.append(at_cap)
    return rows, cut


def _verl_dump(folder: Path, rows: list[dict[str, Any]]) -> Path:
    """``rows`` as verl's ``rollout_data_dir/7.jsonl``."""
    path = folder / "rollout_data" / "7.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_no_region_flag_is_a_truncation_alias() -> None:
    names = {path.rpartition(".")[2] for path, _ in TRUNCATION_ALIASES}
    assert not names & set(getattr(aliases, "LENGTH_REGION_FLAGS", ("overlong",)))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("region", ["overlong", "is_overlong", "overlong_reward"])
@pytest.mark.parametrize("layout", ["verl", "jsonl", "parquet"])
def test_a_region_flag_alone_leaves_truncation_unrecorded(
    tmp_path: Path, seed: int, region: str, layout: str
) -> None:
    rows, _ = _dapo_rows(seed, region, None)
    if layout == "verl":
        path = _verl_dump(tmp_path, rows)
    else:
        plain = [
            {"task_id": r["input"], "reward": float(r["acc"]), region: r[region]} for r in rows
        ]
        path = write_rows(tmp_path, plain, layout)
    frame, _ = frame_of(path)
    assert frame["truncated"].null_count() == frame.height
    route = route_rows(path, MODEL)
    check = next(c for c in route.checks if c.key == "truncated_passes")
    assert check.status.value != "fail", check.why
    assert route.route != "fix-reward"


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("cut_flag", ["hit_max_tokens", "was_truncated"])
def test_a_cut_flag_beside_the_region_flag_is_read(
    tmp_path: Path, seed: int, cut_flag: str
) -> None:
    assert cut_flag in CUT_FLAGS
    rows, cut = _dapo_rows(seed, "overlong", cut_flag)
    frame, _ = frame_of(_verl_dump(tmp_path, rows))
    assert frame["truncated"].to_list() == cut
