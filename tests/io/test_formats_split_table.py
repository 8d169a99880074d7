"""A table written column names apart from their values (``{"columns": [...], "data": [[...]]}``:
pandas ``to_json(orient="split")``, MLflow's ``eval_results_table.json`` from
``mlflow.evaluate``) is read as its rows, ``inputs`` the prompt and ``outputs`` the reply
(was refused as a document of no rows)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.io.read import read_rows


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    grades=st.lists(st.lists(st.booleans(), min_size=1, max_size=4), min_size=1, max_size=8),
    index=st.booleans(),
)
def test_each_list_of_data_is_a_row_named_by_columns(
    tmp_path_factory: Any, grades: list[list[bool]], index: bool
) -> None:
    columns = ["inputs", "ground_truth", "outputs", "token_count", "exact_match/score"]
    data = [
        [f"question {t}", "a", "a" if ok else "b", 3, int(ok)]
        for t, draws in enumerate(grades)
        for ok in draws
    ]
    doc: dict[str, Any] = {"columns": columns, "data": data}
    if index:
        doc["index"] = list(range(len(data)))
    path = tmp_path_factory.mktemp("mlflow") / "eval_results_table.json"
    path.write_text(json.dumps(doc))
    rows = read_rows([str(path)], mapping={"reward": "exact_match/score"})
    frame = rows.frame.collect()
    assert frame.height == len(data)
    assert frame["task_id"].n_unique() == len(grades)  # a hash of inputs
    assert frame["reward"].sum() == sum(sum(d) for d in grades)


def test_mlflow_s_one_pass_fail_metric_grades_and_a_judge_scale_does_not(tmp_path: Any) -> None:
    columns = ["inputs", "outputs", "token_count", "toxicity/v1/score", "exact_match/v1/score"]
    columns.append("answer_similarity/v1/score")  # a 1-to-5 judge's scale, here all at 1
    data = [
        [f"question {t}", "an answer", 3, 0.001, int(ok), 1]
        for t in range(3)
        for ok in (t > 0, t > 1, True)
    ]
    path = tmp_path / "eval_results_table.json"
    path.write_text(json.dumps({"columns": columns, "data": data}))
    rows = read_rows([str(path)])
    frame = rows.frame.collect()
    assert frame["task_id"].n_unique() == 3
    assert frame["reward"].to_list() == [0, 0, 1, 1, 0, 1, 1, 1, 1]
    assert any("exact_match/v1/score grades, the only one that is 0 or 1" in n for n in rows.notes)
    lenient = read_rows([str(path)], mapping={"reward": "toxicity/v1/score"}, pass_threshold=0.5)
    assert lenient.frame.collect()["passed"].sum() == 0


def test_trl_s_completions_table_as_wandb_saves_it_reads_as_trl(tmp_path: Any) -> None:
    columns = ["step", "prompt", "completion", "accuracy_reward", "format_reward", "advantage"]
    data = [
        ["40", f"Solve problem {t}.", f"draw {k}: {t + k}", float((t + k) % 2), 0.0, 0.1]
        for t in range(3)
        for k in range(4)
    ]
    doc = {"_type": "table", "columns": columns, "data": data, "ncols": 6, "nrows": len(data)}
    path = tmp_path / "completions_40_8d2f0c4a.table.json"
    path.write_text(json.dumps(doc))
    rows = read_rows([str(path)])
    frame = rows.frame.collect()
    assert rows.format == "trl"
    assert frame["task_id"].n_unique() == 3
    assert frame.group_by("task_id").len()["len"].to_list() == [4, 4, 4]
    assert frame["task_id"].to_list()[0].startswith("40:")
    assert frame["reward"].sum() == 6  # Σ reward functions at weight 1
