"""BFCL score files as ``bfcl_eval/eval_checker/eval_runner.py`` writes them: a summary line
(``accuracy``, ``correct_count``, ``total_count``) and one line per *failed* entry; the passes
are only counted. Read: one row per test, the failures at 0, ``correct_count`` passes (ids from
the ``result/`` file the scorer read, where it lies beside), the model from ``model_name``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.io.read import read_rows

MODEL = "openai_gpt-oss-120b"


def _failed(category: str, i: int, error_type: str = "value_error:string") -> dict[str, Any]:
    """A failed entry as ``ast_file_runner`` writes it (its checker's verdict in ``error``)."""
    return {
        "id": f"{category}_{i}",
        "model_name": MODEL,
        "test_category": category,
        "valid": False,
        "error": ["Invalid value for parameter 'x'."],
        "error_type": error_type,
        "prompt": {"id": f"{category}_{i}", "question": [[{"role": "user", "content": f"q{i}"}]]},
        "model_result_raw": "[f(x=1)]",
        "model_result_decoded": [{"f": {"x": 1}}],
        "possible_answer": [{"f": {"x": [2]}}],
    }


def _write_run(
    root: Path, category: str, total: int, failed: list[int], *, with_result: bool
) -> Path:
    """``score/<model>/non_live/BFCL_v4_<category>_score.json`` (and its result file)."""
    score = root / "score" / MODEL / "non_live" / f"BFCL_v4_{category}_score.json"
    score.parent.mkdir(parents=True, exist_ok=True)
    correct = total - len(failed)
    lines = [{"accuracy": correct / total, "correct_count": correct, "total_count": total}]
    lines += [_failed(category, i) for i in failed]
    score.write_text("".join(json.dumps(line) + "\n" for line in lines))
    if with_result:
        result = root / "result" / MODEL / "non_live" / f"BFCL_v4_{category}_result.json"
        result.parent.mkdir(parents=True, exist_ok=True)
        entries = [{"id": f"{category}_{i}", "result": "[f(x=2)]"} for i in range(total)]
        result.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return score


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    total=st.integers(1, 30),
    data=st.data(),
    with_result=st.booleans(),
)
def test_a_score_file_is_every_test_failures_and_counted_passes(
    tmp_path_factory: Any, total: int, data: st.DataObject, with_result: bool
) -> None:
    root = tmp_path_factory.mktemp("bfcl")
    failed = sorted(data.draw(st.sets(st.integers(0, total - 1))))
    score = _write_run(root, "simple_java", total, failed, with_result=with_result)
    rows = read_rows([str(score)])
    frame = rows.frame.collect()
    assert rows.format == "bfcl"
    assert frame.height == total and frame["task_id"].n_unique() == total
    assert frame["reward"].sum() == total - len(failed)
    assert set(frame["model"].to_list()) == {MODEL}
    wrong = set(frame.filter(frame["reward"] == 0)["task_id"].to_list())
    assert wrong == {f"simple_java_{i}" for i in failed}
    if with_result:
        assert set(frame["task_id"].to_list()) == {f"simple_java_{i}" for i in range(total)}


def test_a_folder_reads_the_score_files_not_the_generations(tmp_path: Path) -> None:
    _write_run(tmp_path, "simple_java", 10, [1, 3, 4, 7], with_result=True)
    (tmp_path / "score" / "data_overall.csv").write_text("Rank,Overall Acc,Model\n1,0.6,m\n")
    rows = read_rows([str(tmp_path)])
    frame = rows.frame.collect()
    assert rows.format == "bfcl" and frame.height == 10
    assert frame["reward"].mean() == 0.6


def test_a_category_with_no_failure_is_its_summary_line_alone(tmp_path: Path) -> None:
    score = _write_run(tmp_path, "live_simple", 3, [], with_result=False)
    frame = read_rows([str(score)]).frame.collect()
    assert frame.height == 3 and frame["reward"].to_list() == [1.0, 1.0, 1.0]
    assert set(frame["model"].to_list()) == {MODEL}  # from the folder


def test_an_inference_error_is_the_harness_s_not_a_failure(tmp_path: Path) -> None:
    score = _write_run(tmp_path, "multi_turn_base", 4, [0], with_result=False)
    lines = score.read_text().splitlines()
    lines.append(json.dumps(_failed("multi_turn_base", 1, "multi_turn:inference_error")))
    summary = {"accuracy": 0.5, "correct_count": 2, "total_count": 4}
    score.write_text("\n".join([json.dumps(summary), *lines[1:]]) + "\n")
    rows = read_rows([str(score)])
    frame = rows.frame.collect()
    assert rows.facts.rows == 4 and rows.facts.errors == 1  # left out of every rate
    assert frame.height == 3 and frame["reward"].sum() == 2
