"""The decisions the update and ada commands used to make themselves, now the library's
(:mod:`whilecli.methods.run`): which knobs apply to a method, which files of rows may be
written, and ReinforceAda's report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.errors import UsageError
from whilecli.methods.registry import ROW_METHODS, SPECS
from whilecli.methods.run import ROW_KNOBS, check_rows_output, knobs_for, run_ada

TOKEN_KNOBS = ("trust", "ratio", "gae_alpha", "clip", "loss_type", "beta", "decay", "agent_key")


@settings(max_examples=60)
@given(
    st.sampled_from(sorted(SPECS)),
    st.dictionaries(
        st.sampled_from([*TOKEN_KNOBS, *ROW_KNOBS, "pass_threshold"]),
        st.sampled_from([None, 1.0, "x"]),
    ),
)
def test_a_knob_of_the_other_kind_is_refused_and_the_others_kept(method, knobs) -> None:
    rowwise = method in ROW_METHODS
    mine = ROW_KNOBS if rowwise else TOKEN_KNOBS
    stray = [k for k, v in knobs.items() if v is not None and k not in (*mine, "pass_threshold")]
    if stray:
        with pytest.raises(UsageError, match=f"--{stray[0].replace('_', '-')} does not apply"):
            knobs_for(method, knobs)
        return
    want = {k: v for k, v in knobs.items() if k in (*mine, "pass_threshold")}
    assert knobs_for(method, knobs) == want


def test_files_of_rows(tmp_path: Path) -> None:
    check_rows_output(None, force=False)
    check_rows_output("-", force=False)
    check_rows_output(str(tmp_path / "out.parquet"), force=False)
    with pytest.raises(UsageError, match="unknown output extension '.txt'"):
        check_rows_output(str(tmp_path / "out.txt"), force=False)
    there = tmp_path / "there.jsonl"
    there.write_text("")
    with pytest.raises(UsageError):
        check_rows_output(str(there), force=False)
    check_rows_output(str(there), force=True)


def test_ada_returns_its_report_and_writes_what_was_asked(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    draws = [("a", r) for r in (1.0, 0.0, 0.0, 1.0)] + [("b", 0.0)] * 4
    rows.write_text("".join(json.dumps({"task_id": t, "reward": r}) + "\n" for t, r in draws))
    again = tmp_path / "again.jsonl"
    report = run_ada(str(rows), keep=2, round_size=4, next_round=str(again))
    assert report["next_round"] == ["b"]
    assert report["written"] == {"next round": str(again)}
    assert [json.loads(line)["task_id"] for line in again.read_text().splitlines()] == ["b"]
    assert report["knobs"]["keep"] == 2 and report["stats"]["rows"] == 8
    with pytest.raises(UsageError, match="name the same file"):
        run_ada(str(rows), next_round=str(again), output=str(again), force=True)
