"""SWE-bench per-instance reports as ``swebench/harness/run_evaluation.py`` (``run_instance``)
writes them: ``logs/run_evaluation/<run_id>/<model, / as __>/<instance_id>/report.json``
holding ``{instance_id: {..., "resolved": bool}}`` beside the instance's logs. Read: one row per
instance, resolved the pass, the model from its folder (were refused: a document of no rows)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.io.read import read_rows


def _write_logs(root: Path, model: str, resolved: list[bool]) -> Path:
    """One instance folder per verdict, as ``run_instance`` leaves it."""
    run = root / "logs" / "run_evaluation" / "my_run" / model.replace("/", "__")
    for i, ok in enumerate(resolved):
        instance = f"django__django-{11000 + i}"
        folder = run / instance
        folder.mkdir(parents=True)
        status = {k: {"success": [], "failure": []} for k in ("FAIL_TO_PASS", "PASS_TO_PASS")}
        report = {
            "patch_is_None": False,
            "patch_exists": True,
            "patch_successfully_applied": True,
            "resolved": ok,
            "tests_status": status,
        }
        (folder / "report.json").write_text(json.dumps({instance: report}, indent=4))
        (folder / "patch.diff").write_text("diff --git a/x b/x\n")
        (folder / "run_instance.log").write_text("log\n")
        (folder / "test_output.txt").write_text("ok\n")
    return run


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    resolved=st.lists(st.booleans(), min_size=1, max_size=12),
    model=st.sampled_from(["gpt-4o-2024-08-06", "Qwen/Qwen2.5-Coder-32B-Instruct"]),
)
def test_a_run_folder_is_one_row_per_instance(
    tmp_path_factory: Any, resolved: list[bool], model: str
) -> None:
    root = tmp_path_factory.mktemp("swe")
    _write_logs(root, model, resolved)
    rows = read_rows([str(root)])
    frame = rows.frame.collect()
    assert rows.format == "swe-bench"
    assert frame.height == len(resolved) and frame["task_id"].n_unique() == len(resolved)
    assert frame["reward"].sum() == sum(resolved)
    assert set(frame["model"].to_list()) == {model}


def test_one_report_is_its_instance(tmp_path: Path) -> None:
    run = _write_logs(tmp_path, "gpt-4o-2024-08-06", [False])
    frame = read_rows([str(run / "django__django-11000" / "report.json")]).frame.collect()
    assert frame["task_id"].to_list() == ["django__django-11000"]
    assert frame["reward"].to_list() == [0.0]
