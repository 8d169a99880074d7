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
