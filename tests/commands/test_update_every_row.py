"""`whilecli update -o`: one output row per input trajectory, in input order.

A row the read leaves out of the update (no grade, or a harness error instead of a reply)
keeps its place in the output, with zero coefficients over its tokens, ``admitted`` false
and ``left_out`` saying why, so a trainer that zips the batch with the output attaches each
row's coefficients to its own trajectory.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.methods.batch import Batch
from whilecli.methods.registry import make_method

KINDS = ("graded", "ungraded", "error")


@st.composite
def batches(draw: Any, kinds_drawn: tuple[str, ...] = KINDS) -> list[dict[str, Any]]:
    """Grouped trajectories, some ungraded (reward null) and some harness errors, fewer
    than half of them errors and at least two graded rows of one task."""
    n = draw(st.integers(4, 24))
    kinds = draw(st.lists(st.sampled_from(kinds_drawn), min_size=n, max_size=n))
    kinds[0] = kinds[1] = "graded"
    if 2 * kinds.count("error") >= n:
        kinds = [("ungraded" if k == "error" else k) for k in kinds]
    rows = []
    for i, kind in enumerate(kinds):
        tokens = draw(st.integers(1, 5))
        row: dict[str, Any] = {
            "task_id": "t0" if i < 2 else f"t{draw(st.integers(0, 3))}",
            "reward": None if kind == "ungraded" else float(draw(st.integers(0, 1))),
            "logprobs": [draw(st.floats(-3.0, -0.01, allow_nan=False)) for _ in range(tokens)],
        }
        if kind == "error":
            row["error"] = "RateLimitError: 429 Too Many Requests"
        rows.append(row)
    return rows


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    if path.suffix == ".parquet":
        pq.write_table(pa.Table.from_pylist(rows), path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _check(rows: list[dict[str, Any]], out: list[dict[str, Any]]) -> None:
    assert len(out) == len(rows)
    kept = [r for r in rows if r["reward"] is not None and "error" not in r]
    update = make_method("grpo", {}).update(Batch.from_rows(kept))
    b = 0
    for k, (row, back) in enumerate(zip(rows, out, strict=True)):
        assert back["row"] == k
        assert back["task_id"] == row["task_id"]
        n = len(row["logprobs"])
        assert len(back["coefficients"]) == len(back["advantages"]) == n
        if row["reward"] is None or "error" in row:
            assert back["left_out"] == ("error reply" if "error" in row else "ungraded")
            assert back["admitted"] is False
            assert back["coefficients"] == [0.0] * n and back["advantages"] == [0.0] * n
            assert back["value_targets"] is None
            continue
        assert back["left_out"] is None
        assert back["admitted"] == bool(update.admitted[b])
        want = update.coefficients[b, :n].tolist()
        pairs = zip(back["coefficients"], want, strict=True)
        assert all(math.isclose(x, y, abs_tol=1e-15) for x, y in pairs)
        b += 1
    assert b == len(kept)


#: A Parquet batch's ``error`` column is not read as harness errors (route reads it the
#: same way), so its rows are graded or ungraded here.
FILES = st.sampled_from([".jsonl", ".parquet"]).flatmap(
    lambda suffix: st.tuples(st.just(suffix), batches(KINDS if suffix == ".jsonl" else KINDS[:2]))
)


@settings(max_examples=25)
@given(drawn=FILES)
def test_output_rows_are_the_input_rows_in_order(
    tmp_path_factory: Any, drawn: tuple[str, list[dict[str, Any]]]
) -> None:
    suffix, rows = drawn
    where = tmp_path_factory.mktemp("batch")
    batch, output = where / f"in{suffix}", where / f"out{suffix}"
    _write(batch, rows)
    result = CliRunner().invoke(app, ["update", "--method", "grpo", str(batch), "-o", str(output)])
    assert result.exit_code == 0, result.output
    out = (
        pq.read_table(output).to_pylist()
        if suffix == ".parquet"
        else [json.loads(line) for line in output.read_text().splitlines()]
    )
    _check(rows, out)
    left = sum(r["reward"] is None or "error" in r for r in rows)
    if left:
        assert f"{left} of {len(rows)} rows left out of the update" in " ".join(
            result.output.split()
        )


def test_stdout_rows_keep_the_left_out_rows(tmp_path: Path) -> None:
    """The issue's case: 32 trajectories, row 4 ungraded; ``-o -`` writes all 32."""
    rows = [
        {"task_id": f"t{i // 4}", "reward": float(i % 2), "logprobs": [-0.5] * (1 + i % 3)}
        for i in range(32)
    ]
    rows[4]["reward"] = None
    batch = tmp_path / "in.jsonl"
    _write(batch, rows)
    result = CliRunner().invoke(app, ["update", "--method", "grpo", str(batch), "-o", "-"])
    assert result.exit_code == 0, result.output
    out = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    _check(rows, out)
    assert out[4]["left_out"] == "ungraded"
