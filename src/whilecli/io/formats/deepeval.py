"""DeepEval test runs (``.deepeval/.latest_test_run.json``, or ``test_run_<time>.json`` under
``DEEPEVAL_RESULTS_FOLDER``; ``confident-ai/deepeval``, ``deepeval/test_run/test_run.py``:
``TestRun`` and ``deepeval/test_run/api.py``: ``LLMApiTestCase``, ``ConversationalApiTestCase``,
written by alias).

One object: ``testFile``, ``testCases[]`` and ``conversationalTestCases[]``,
``metricsScores``, ``hyperparameters`` (what the user logged: ``model`` where they did),
``testPassed``, ``testFailed``. A test case has ``name`` (``test_case_<i>``: a per-row name,
so rows of one ``input`` are one task), ``input`` (or ``turns[]``), ``actualOutput``,
``success`` (every non-flaky metric passed: the pass) and ``metricsData[]`` (``name``,
``threshold``, ``score`` (a metric's score, not a pass), ``success``, ``evaluationModel``
(the judge), ``error``). A test case whose metrics all errored has no verdict: an error."""

from __future__ import annotations

from typing import Any

from whilecli.io.formats import Converted, as_dict, as_list

NAME = "deepeval"


def is_run(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("testCases"), list)
        and ("testFile" in doc or "testPassed" in doc or "conversationalTestCases" in doc)
    )


def _prompt(case: dict[str, Any]) -> Any:
    if "input" in case:
        return case["input"]
    for turn in as_list(case.get("turns")):
        if as_dict(turn).get("role") == "user":
            return as_dict(turn).get("content")
    return case.get("scenario")


def convert(doc: dict[str, Any]) -> Converted:
    model = as_dict(doc.get("hyperparameters")).get("model")
    model = model if isinstance(model, str) else None
    out: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    for key in ("testCases", "conversationalTestCases"):
        for i, case in enumerate(as_list(doc.get(key))):
            case = as_dict(case)
            metrics = [as_dict(m) for m in as_list(case.get("metricsData"))]
            judges = sorted(
                {str(m["evaluationModel"]) for m in metrics if m.get("evaluationModel")}
            )
            errors = [str(m["error"]) for m in metrics if m.get("error")]
            failed = bool(metrics) and len(errors) == len(metrics)
            out.append(
                {
                    "task_id": case.get("name"),
                    "reward": None if failed else case.get("success"),
                    "prompt": _prompt(case),
                    # every metric errored: an error in place of the case's output
                    "completion": None if failed else case.get("actualOutput"),
                    "model": model,
                    "grader_model": ", ".join(judges) or None,
                    "error": errors[0] if failed else None,
                }
            )
            positions.append({"at": f"{key}[{i}]"})
    origins = {
        "task_id": "name (one test case; test cases of one input are one task)",
        "reward": "success (every metric passed); metricsData[].score is not a pass",
        "truncated": "not recorded",
        "model": "hyperparameters.model" if model else "not recorded (pass --model)",
    }
    spelled = {"task_id": "name", "reward": "success"}
    return Converted(NAME, out, origins, positions=positions, spelled=spelled)
