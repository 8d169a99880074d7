"""Ragas results (EvaluationResult.to_pandas() written as CSV, ragas 0.2 on: user_input,
retrieved_contexts, response, reference and one column per metric, each a score in [0, 1]): the
question in user_input keys the task; the metrics are no pass/fail, so the grade is one of them
named with --map and a --pass-threshold (was refused: no task id and no prompt)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from whilecli.errors import InputError
from whilecli.io.read import read_rows

COLUMNS = ["user_input", "retrieved_contexts", "response", "reference", "faithfulness"]
COLUMNS += ["answer_relevancy", "context_recall"]


def _write(path: Path) -> None:
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(COLUMNS)
        for q in range(3):
            for k in range(2):
                question = f"When was the Eiffel Tower finished? ({q})"
                writer.writerow(
                    [question, "['It opened in 1889.']", f"In 1889 (draw {k})", "1889"]
                    + [0.5 + 0.25 * k, 0.93, 1.0 if q else 0.0]
                )


def test_user_input_keys_the_task_and_a_metric_is_a_map_away(tmp_path: Path) -> None:
    path = tmp_path / "ragas_results.csv"
    _write(path)
    with pytest.raises(InputError, match="no reward column"):
        read_rows([str(path)])
    rows = read_rows([str(path)], mapping={"reward": "faithfulness"}, pass_threshold=0.7)
    frame = rows.frame.collect()
    assert frame["task_id"].n_unique() == 3
    assert frame.group_by("task_id").len()["len"].to_list() == [2, 2, 2]
    assert frame["passed"].sum() == 3
