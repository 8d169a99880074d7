"""Writing generated rows as JSON Lines or Parquet, and routing them in process: what the
tests of how rows are read (error encodings, reply fields) share."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from whilecli.route import run_route
from whilecli.route.model import Route


def write_rows(folder: Path, rows: list[dict[str, Any]], kind: str) -> Path:
    """``rows`` as ``folder/rows.jsonl`` or ``rows.parquet`` (every key a column, absent as
    null)."""
    path = folder / f"rows.{kind}"
    if kind == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        keys = list(dict.fromkeys(k for r in rows for k in r))
        table = [{k: r.get(k) for k in keys} for r in rows]
        pl.DataFrame(table, infer_schema_length=None).write_parquet(path)
    return path


def drawn_rows(
    tasks: int, k: int, passes: Callable[[int, int], bool], **extra: Any
) -> list[dict[str, Any]]:
    """``k`` draws of each of ``tasks`` tasks: an id, a prompt, a reply of its own, the reward
    ``passes(task, draw)`` gives, a stop finish reason, and ``extra``'s fields on every row."""
    return [
        {
            "task_id": f"t{task}",
            "prompt": f"Solve {task}.",
            "completion": f"reply {task} {draw}",
            "reward": float(passes(task, draw)),
            "finish_reason": "stop",
            **extra,
        }
        for task in range(tasks)
        for draw in range(k)
    ]


def route_rows(path: Path, model: str) -> Route:
    """The route of one file for ``--model model``."""
    got = run_route(str(path), model=model)
    assert isinstance(got, Route)
    return got


def finding_kinds(route: Route) -> list[str]:
    """The data-quality findings' kinds, in the report's order."""
    return [f.kind for f in route.data_quality]
