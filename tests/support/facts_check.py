"""The reading of generated rows held to :mod:`facts_reference`: the check the row-fact
generators share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from facts_reference import expected
from whilecli.errors import InputError
from whilecli.io import facts
from whilecli.io.read import read_rows
from whilecli.route.pool import summarize


def write_rows(tmp: Path, rows: list[dict[str, Any]], kind: str) -> Path:
    """``rows`` as ``tmp/rows.jsonl`` or ``rows.parquet`` (the fields' types fixed, any other
    key's as polars reads it)."""
    path = tmp / f"rows.{kind}"
    if kind == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        schema = {
            "task_id": pl.String,
            "reward": pl.Float64,
            "prompt": pl.String,
            "completion": pl.String,
            "response": pl.String,
            "output": pl.String,
            "output_response": pl.String,
            "model": pl.String,
            "policy_version": pl.Int64,
        }
        cols = {c: t for c, t in schema.items() if any(c in r for r in rows)}
        # any other key (an error field, an object of extras): its type as polars reads it
        others = list(dict.fromkeys(k for r in rows for k in r if k not in schema))
        table = pl.DataFrame([{c: r.get(c) for c in cols} for r in rows], schema=cols)
        if others:
            extra = pl.DataFrame(
                [{c: r.get(c) for c in others} for r in rows], infer_schema_length=None
            )
            table = pl.concat([table, extra], how="horizontal")
        table.write_parquet(path)
    return path


#: The options of a plain read.
FOUND_CASE = {"threshold": None, "missing": "skip", "kind": "jsonl"}
REFUSALS = {
    "errors": "most replies are errors",
    "ungraded": "no graded row",
    "conflict": "carries different prompts",
    "nothing": "nothing was generated",
    "unbounded": "outside",
    "partial": "strictly between 0 and 1",
}


def matches_reference(tmp_path: Path, case: tuple[list, dict]) -> None:
    """Read ``case``'s rows (written as its options say) and hold every count, refusal and
    task to what :func:`facts_reference.expected` finds."""
    rows, options = case
    path = write_rows(tmp_path, rows, options["kind"])
    want = expected(rows, options["threshold"], options["missing"], options["kind"])
    if want.refused is not None:
        with pytest.raises(InputError, match=REFUSALS[want.refused]) as err:
            read_rows([str(path)], pass_threshold=options["threshold"], missing=options["missing"])
        if want.conflict is not None:
            assert repr(want.conflict) in str(err.value)
        return
    got = read_rows([str(path)], pass_threshold=options["threshold"], missing=options["missing"])
    found = got.facts
    assert (found.rows, found.errors, found.ungraded) == (want.rows, want.errors, want.ungraded)
    assert found.request_errors == want.request_errors
    assert (found.empty, found.partial) == (want.empty, want.partial)
    assert found.empty_passes == want.empty_passes
    assert (found.compared_tasks, found.repeated_tasks) == (want.compared, want.repeated)
    assert (found.per_row_ids is not None) == want.per_row_ids
    line = "row" if options["kind"] == "parquet" else "line"
    for first, at in (
        (found.first_error, want.first_error),
        (found.first_ungraded, want.first_ungraded),
    ):
        if at is None:
            assert first is None
        else:
            place = at - 1 if line == "row" else at
            assert first == f"{path} {line} {place}"
    pool = summarize(got)
    tasks = {r["task_id"]: (r["n"], r["passes"]) for r in pool.tasks.iter_rows(named=True)}
    if want.per_row_ids:
        assert sorted(tasks.values()) == sorted(want.tasks.values())
    else:
        assert tasks == want.tasks
    assert pool.models == {k: v for k, v in sorted(want.models.items(), key=_key)}
    assert pool.versions == {k: v for k, v in sorted(want.versions.items(), key=_key)}
    frame = got.frame.collect()
    assert frame.height == sum(n for n, _ in want.tasks.values())
    assert set(frame["reply"].unique()) <= {facts.OK, facts.EMPTY}
    if options["missing"] == "skip":
        assert frame["graded"].all()


def _key(item: tuple[str | None, int]) -> tuple[bool, str]:
    return (item[0] is None, item[0] or "")
