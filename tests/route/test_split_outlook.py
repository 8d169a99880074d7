""" "Need k=N" is said only where N draws per task can reach the wanted split share (DESIGN
section 2.3), also in pools whose tasks sit at 0 and 1 for good, as real benchmarks' do
(always solved, never solved), which one Beta prior spreads into the middle.

A seeded simulator with a known truth: a share of tasks that never pass, a share that always
pass, and middle tasks at rates from a Beta, measured at k = 4 or 8. The truth's split share at
any k is the middle share times E[1 − p^k − (1 − p)^k]. Where no k up to max_k reaches the
wanted share, the band must not name a k; where it names one, the truth at that k must come
near the wanted share. Neighbours: pools with no edge mass (a Beta alone), where a k is named
as before.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from rows_files import route_rows
from whilecli.route.options import RouteOptions

OPTIONS = RouteOptions()


def _truth_share(
    never: float, always: float, a: float, b: float, k: int, draws: int = 4000
) -> float:
    """The truth's split share at k, by a seeded Monte Carlo over the middle Beta."""
    rnd = random.Random(k)
    mid = sum(1 - p**k - (1 - p) ** k for p in (rnd.betavariate(a, b) for _ in range(draws)))
    return (1 - never - always) * mid / draws


def _pool(
    path: Path, seed: int, never: float, always: float, a: float, b: float, k: int, n: int = 600
) -> Path:
    """``n`` tasks × k draws from the truth, as JSON Lines."""
    rnd = random.Random(seed)
    rows = []
    for t in range(n):
        roll = rnd.random()
        p = 0.0 if roll < never else 1.0 if roll < never + always else rnd.betavariate(a, b)
        rows += [
            {"task_id": f"t{t}", "reward": float(rnd.random() < p), "completion": f"{t} {j}"}
            for j in range(k)
        ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


CASES = [
    # (never, always, a, b): the probe's two-point truth and its neighbours
    (0.4, 0.4, 40.0, 40.0),
    (0.45, 0.35, 8.0, 8.0),
    (0.5, 0.3, 3.0, 5.0),
    (0.3, 0.5, 5.0, 3.0),
    # no edge mass: a Beta alone, thin at k = 4, split at larger k
    (0.0, 0.0, 0.15, 0.15),
    (0.0, 0.0, 0.1, 0.3),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("k", [4, 8])
@pytest.mark.parametrize("seed", range(2))
def test_need_k_only_where_a_k_reaches_the_share(
    tmp_path: Path, case: tuple[float, float, float, float], k: int, seed: int
) -> None:
    never, always, a, b = case
    route = route_rows(
        _pool(tmp_path / "rows.jsonl", seed, never, always, a, b, k), "Qwen/Qwen3-8B"
    )
    band = next(c for c in route.checks if c.key == "band")
    need = band.measured.get("need")
    if not isinstance(need, dict) or "k" not in need:
        return  # not thin, or thin in tasks only: no k asked
    want = OPTIONS.min_split_share
    best = max(_truth_share(never, always, a, b, kk) for kk in (OPTIONS.max_k,))
    if best < want - 0.03:  # no k reaches it: no k may be named
        assert need["k"] is None, (case, k, need)
        assert "no k up to" in str(need.get("why"))
    if need["k"] is not None:  # a k named is one the truth reaches, near enough
        reached = _truth_share(never, always, a, b, int(need["k"]))
        assert reached >= want - 0.06, (case, k, need, reached)


def test_the_probes_two_point_pool(tmp_path: Path) -> None:
    """The probe's instance: 400 tasks never solved, 400 always, 200 at p = 0.5, k = 4. The
    truth's split share is 0.2 at every k: no k, and an expected share at k = 16 under 0.3."""
    path = _pool(tmp_path / "rows.jsonl", 7, 0.4, 0.4, 5e3, 5e3, 4, n=1000)
    band = next(c for c in route_rows(path, "Qwen/Qwen3-8B").checks if c.key == "band")
    assert band.measured["need"]["k"] is None
    assert band.measured["expected_split_share_k16"] < 0.25
