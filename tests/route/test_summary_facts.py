"""A summary keeps the row facts: its header records them, ``summarize`` says them, and the
route of the summary lists the same data-quality findings and writers as the route of the
rows it summarises.

Generated files carry ungraded rows, harness-error replies (under half), tasks that repeat
one draw, several policy versions and models, and one id per row while prompts repeat.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.io.read import read_rows
from whilecli.route import run_route
from whilecli.route.summary_header import HEADER_KEY

ERROR = "Error: HTTP 503 service unavailable"


@st.composite
def fact_rows(draw: st.DrawFn) -> list[dict[str, Any]]:
    per_row_ids = draw(st.booleans())
    rows: list[dict[str, Any]] = []
    for t in range(draw(st.integers(3, 7))):
        repeat = draw(st.booleans())
        for j in range(draw(st.integers(2, 4))):
            reward = draw(st.sampled_from([0.0, 1.0, 1.0, None]))
            text = "same" if repeat else f"answer {t}.{j}"
            row: dict[str, Any] = {
                "task_id": f"r{len(rows)}" if per_row_ids else f"t{t}",
                "prompt": f"question {t}",
                "completion": text,
                "reward": reward,
                "model": draw(st.sampled_from(["Qwen/Qwen3-8B", "Qwen3-8B", "Qwen/Qwen3-4B"])),
                "policy_version": draw(st.sampled_from([3, 3, 4])),
            }
            rows.append(row)
    for i in draw(st.lists(st.integers(0, len(rows) - 1), max_size=len(rows) // 3)):
        rows[i]["completion"] = ERROR
    graded = [r for r in rows if r["completion"] != ERROR and r["reward"] is not None]
    if not graded:
        rows[0].update(completion="an answer", reward=1.0)
    return rows


def _quality(route: Any) -> Any:
    report = route.to_dict()
    on_policy = next(c for c in report["checks"] if c["key"] == "on_policy")
    return report["data_quality"], on_policy["measured"], report["summary"]["pass_at_1"]


@settings(max_examples=8, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=fact_rows(), missing=st.sampled_from(["skip", "fail"]))
def test_a_summary_keeps_the_row_facts(
    tmp_path_factory: pytest.TempPathFactory, rows: list[dict[str, Any]], missing: str
) -> None:
    tmp = tmp_path_factory.mktemp("facts")
    path = tmp / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp / "tasks.parquet"
    done = CliRunner().invoke(
        app,
        ["summarize", str(path), "-o", str(out), "--missing", missing],
        env={"COLUMNS": "1000"},
    )
    assert done.exit_code == 0, done.output
    found = read_rows([str(path)], missing=missing).facts
    header = json.loads(pq.read_metadata(out).metadata[HEADER_KEY.encode()])
    want = found.to_dict()
    want.pop("repeated_share")
    assert header["facts"] == want
    assert header["warnings"] == found.warnings()
    said = [line.removeprefix("warning: ") for line in done.stderr.splitlines()[1:]]
    assert said == found.warnings()
    model = "Qwen/Qwen3-8B@4"
    from_rows = run_route([str(path)], missing=missing, model=model)
    from_summary = run_route([str(out)], model=model)
    assert _quality(from_summary) == _quality(from_rows)
