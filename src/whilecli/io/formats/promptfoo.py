"""promptfoo eval outputs (``promptfoo eval -o out.json`` / ``-o out.jsonl``;
``promptfoo/promptfoo``, ``src/types/index.ts``: ``OutputFile``, ``EvaluateSummaryV3``,
``EvaluateResult``, ``GradingResult``).

The JSON output is one object: ``evalId``, ``results`` (the summary: ``version``,
``timestamp``, ``results[]``, ``prompts[]``, ``stats``), ``config``, ``shareableUrl``. The
JSON Lines output writes one ``EvaluateResult`` per line. A result is one (test, prompt,
provider) call: ``testIdx`` (the test case: the task; ``--repeat N`` writes N results of one
``testIdx``, its rollouts), ``promptIdx`` and ``prompt`` (``raw``, ``label``), ``provider``
(``id``: the model, e.g. ``openai:gpt-4o-mini``), ``response`` (``output``, and
``finishReason`` in newer versions), ``success`` (every assertion passed: the pass),
``score`` (the assertions' weighted mean, not a pass/fail: a passing test may score 0.8),
``gradingResult`` (``componentResults[].assertion.type``: ``llm-rubric``,
``model-graded-closedqa``, ``factuality``, ``g-eval``, ... are a judge's), ``error`` and
``failureReason`` (2: the call failed, an error, not the model's failure).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from whilecli.io.aliases import cut_reason
from whilecli.io.formats import Converted, as_dict, as_list

NAME = "promptfoo"
#: ``ResultFailureReason.ERROR``: the provider call or the grading failed.
FAILURE_ERROR = 2
#: Assertion types a model grades (promptfoo's model-graded metrics).
JUDGED = frozenset(
    {"llm-rubric", "model-graded-closedqa", "model-graded-factuality", "factuality", "g-eval"}
    | {"answer-relevance", "context-faithfulness", "context-recall", "context-relevance"}
    | {"select-best", "max-score", "search-rubric", "pi", "conversation-relevance"}
)


def is_result(row: Any) -> bool:
    return (
        isinstance(row, dict)
        and "testIdx" in row
        and "success" in row
        and ("promptIdx" in row or "gradingResult" in row)
    )


def is_output(doc: Any) -> bool:
    summary = as_dict(doc.get("results")) if isinstance(doc, dict) else {}
    results = summary.get("results")
    return isinstance(results, list) and bool(results) and is_result(results[0])


def _judged(grading: dict[str, Any]) -> str | None:
    """The grading model, or the model-graded assertion's type, where a model graded."""
    for part in [grading, *as_list(grading.get("componentResults"))]:
        assertion = as_dict(as_dict(part).get("assertion"))
        kind = assertion.get("type")
        if isinstance(kind, str) and kind in JUDGED:
            provider = assertion.get("provider")
            return provider if isinstance(provider, str) else kind
    return None


def _template(result: dict[str, Any]) -> str:
    """The prompt template a result used (its label, else its id): the same test under two
    templates is two questions."""
    prompt = as_dict(result.get("prompt"))
    return str(prompt.get("label") or result.get("promptId") or result.get("promptIdx"))


def _prompt(prompt: dict[str, Any], variables: Any) -> str:
    """The rendered prompt, with the test's variables (a template written unrendered still
    tells its tests apart)."""
    text = _text(prompt.get("raw")) or ""
    if isinstance(variables, dict) and variables:
        text += "\n" + json.dumps(variables, sort_keys=True, default=str)
    return text


def _text(value: Any) -> Any:
    return value if value is None or isinstance(value, str) else str(value)


def _rows(results: Iterable[tuple[dict[str, Any], dict[str, Any]]]) -> Converted:
    out: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    results = list(results)
    templates = {_template(r) for r, _ in results}
    for result, where in results:
        prompt = as_dict(result.get("prompt"))
        provider = result.get("provider")
        model = as_dict(provider).get("id") if isinstance(provider, dict) else provider
        response = as_dict(result.get("response"))
        errored = result.get("failureReason") == FAILURE_ERROR or bool(result.get("error"))
        task = result.get("testIdx")
        if len(templates) > 1:  # another prompt template is another question
            task = f"{_template(result)}#{task}"
        reason = response.get("finishReason")
        row: dict[str, Any] = {
            "task_id": task,
            "reward": None if errored else result.get("success"),
            "prompt": _prompt(prompt, result.get("vars")),
            # a call that failed recorded an error instead of its output
            "completion": None if errored else _text(response.get("output")),
            "model": model if isinstance(model, str) else None,
            "error": (_text(result.get("error")) or "the call failed") if errored else None,
            "grader_model": _judged(as_dict(result.get("gradingResult"))),
        }
        if isinstance(reason, str):
            row["finish_reason"] = reason
            row["truncated"] = cut_reason(reason)
        out.append(row)
        positions.append(where)
    known = all("truncated" in r for r in out)
    if not known:
        for r in out:
            r.pop("truncated", None)
    origins = {
        "task_id": "testIdx (--repeat writes rollouts of one test)"
        + (", within its prompt's label" if len(templates) > 1 else ""),
        "reward": "success (every assertion passed); score, a weighted mean, is not a pass",
        "truncated": "response.finishReason == 'length'" if known else "not recorded",
        "model": "provider.id",
    }
    spelled = {"task_id": "testIdx", "reward": "success", "model": "provider.id"}
    return Converted(NAME, out, origins, positions=positions, spelled=spelled)


def from_output(doc: dict[str, Any]) -> Converted:
    results = as_list(as_dict(doc.get("results")).get("results"))
    return _rows((as_dict(r), {"at": f"results.results[{i}]"}) for i, r in enumerate(results))


def from_lines(rows: Iterable[tuple[int, dict[str, Any]]]) -> Converted:
    return _rows((row, {"line": lineno}) for lineno, row in rows)
