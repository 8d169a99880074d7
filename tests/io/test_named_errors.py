"""A harness that writes its failures under a name of its own (``api_error``,
``exception_message``, ``crashed``, ``request_failed``) beside the rows it scored 0: read as
errors where the row keeps no reply, so rate limits scored 0 are no split tasks (DESIGN
section 1, "reply"; :func:`whilecli.io.aliases.error_named`).

The generator draws a pool of known truth (every task at one rate, or a floor or saturated
band), writes a share of its rows as a harness's failures under one such name (text, a flag,
an object; at the top level or in ``metadata``) beside an empty or absent reply, in JSON
Lines or Parquet. The truth: the route of the same pool without those rows, and exactly
those rows counted as errors. Beside a kept reply, a measure (``abs_error: 0.3``), a name
of the model's own failure (``parse_error``), or rows that keep no reply at all, the column
is read as nothing.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rows_files import route_rows, write_rows
from whilecli.io.aliases import error_named
from whilecli.io.read import read_rows

MODEL = "Qwen/Qwen3-8B"
#: Names a harness records its failure under, with a value of each kind it writes there.
NAMED: list[tuple[str, Any]] = [
    ("api_error", "RateLimitError: 429 Too Many Requests"),
    ("apiError", "Service Unavailable"),
    ("exception_message", "ConnectionResetError: [Errno 104]"),
    ("traceback", "Traceback (most recent call last):\n  File ..."),
    ("crashed", True),
    ("request_failed", True),
    ("llm_error", {"code": 503, "message": "overloaded"}),
    ("generation_timeout", "timed out after 600 s"),
    ("Exception", "openai.APITimeoutError"),
]


@pytest.mark.parametrize(
    ("name", "named"),
    [
        *((name, True) for name, _ in NAMED),
        ("stack-trace", True),
        ("Errors", True),
        ("format_error", False),
        ("parse_error", False),
        ("abs_error", False),
        ("tool_error", False),
        ("error_rate", False),
        ("failure_reason", False),
        ("terror", False),
        ("answer", False),
    ],
)
def test_which_names_record_an_error(name: str, named: bool) -> None:
    assert error_named(name) is named


def _pool(seed: int, tasks: int, k: int, band: str) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    rows = []
    for t in range(tasks):
        rate = {"saturated": 1.0, "floor": 0.0}.get(band, rnd.betavariate(0.7, 0.7))
        for j in range(k):
            rows.append(
                {
                    "task_id": f"t{t:04d}",
                    "prompt": f"Solve {t}.",
                    "completion": f"reply {j} to {t}: {rnd.random():.6f}",
                    "reward": float(rnd.random() < rate),
                    "model": MODEL,
                }
            )
    return rows


def _fail(
    rows: list[dict[str, Any]], seed: int, share: float, name: str, value: Any, where: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(``rows`` with a ``share`` written as the harness's failures, the rows without them):
    each failure scored 0, its reply ``where`` (empty or absent), ``name`` holding ``value``
    (nested in ``metadata`` for a name written there), every other row ``name`` empty."""
    rnd = random.Random(seed + 1)
    nested = name.startswith("metadata.")
    key = name.removeprefix("metadata.")
    written, kept = [], []
    for row in rows:
        failed = rnd.random() < share
        out = dict(row)
        holder = out.setdefault("metadata", {"attempt": 1}) if nested else out
        if failed:
            holder[key] = value
            out["reward"] = 0.0
            if where == "empty":
                out["completion"] = ""
            else:
                del out["completion"]
        else:
            holder[key] = False if isinstance(value, bool) else None
            kept.append(row)
        written.append(out)
    return written, kept


@settings(max_examples=10, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    named=st.sampled_from(NAMED),
    nested=st.booleans(),
    where=st.sampled_from(["empty", "absent"]),
    band=st.sampled_from(["saturated", "floor", "mixed"]),
    share=st.sampled_from([0.05, 0.2, 0.4]),
    kind=st.sampled_from(["jsonl", "parquet"]),
)
def test_named_errors_are_left_out_as_the_truth_leaves_them(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    named: tuple[str, Any],
    nested: bool,
    where: str,
    band: str,
    share: float,
    kind: str,
) -> None:
    name, value = named
    if kind == "parquet" and isinstance(value, dict):
        value = "overloaded (503)"  # a Parquet column holds one type
    rows = _pool(seed, 120, 8, band)
    written, kept = _fail(rows, seed, share, f"metadata.{name}" if nested else name, value, where)
    folder = tmp_path_factory.mktemp("named")
    path = write_rows(folder, written, kind)
    got = read_rows([str(path)])
    assert got.facts.errors == len(written) - len(kept)
    assert got.facts.empty == 0
    truth = route_rows(write_rows(tmp_path_factory.mktemp("truth"), kept, kind), MODEL)
    routed = route_rows(path, MODEL)
    assert (routed.route, routed.method) == (truth.route, truth.method)
    assert routed.provisional == truth.provisional, routed.provisional_why


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@pytest.mark.parametrize(
    ("name", "value", "reply"),
    [
        # beside a reply graded as it was (a retry's leftover): the reply is graded
        ("api_error", "RateLimitError: 429", "kept"),
        ("abs_error", 0.3, "empty"),  # a measure
        ("parse_error", "no boxed answer", "empty"),  # the model's own failure
        ("api_error", "RateLimitError: 429", "none kept"),  # rows that keep no reply
    ],
)
def test_error_names_read_as_nothing_elsewhere(
    tmp_path: Path, kind: str, name: str, value: Any, reply: str
) -> None:
    rows = _pool(5, 40, 4, "mixed")
    written, kept = _fail(rows, 5, 0.25, name, value, "empty")
    failed = len(written) - len(kept)
    for row, original in zip(written, rows, strict=True):
        if reply == "kept":
            row["completion"], row["reward"] = original["completion"], original["reward"]
        elif reply == "none kept":
            row.pop("completion", None)
    got = read_rows([str(write_rows(tmp_path, written, kind))])
    assert got.facts.errors == 0
    assert got.facts.empty == (failed if reply == "empty" else 0)
    assert got.frame.collect().height == len(written)
