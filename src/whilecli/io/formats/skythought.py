"""SkyThought evaluation results (``NovaSky-AI/SkyThought``, ``skythought/evals``:
``skythought evaluate`` runs ``inference_and_check.generate_and_score``, whose
``save_results`` writes ``<result_dir>/<model with / as _>_<task>_<hash>/results.json`` and
``save_summary`` (``util/results.py``) the ``summary.json`` beside it; ``skythought generate``
writes the same files ungraded and ``skythought score`` grades them in place).

``results.json`` is one object keyed by each problem's ``_index`` (its row in the dataset, as
text: ``tasks/base.py``, ``add_idx_map``): the dataset's own row (``problem``, ``answer``,
...), ``_index``, ``prompt``, ``input_conversation``, ``responses`` (one
``SingleParsedResponse.to_dict()`` per sample, ``util/response.py``: ``content``,
``correctness``, ``reason`` and, in newer versions, ``reasoning_content``) and
``token_usages`` (one ``{completion_tokens, prompt_tokens}`` per sample). ``summary.json``:
``configuration`` (``cli.get_run_config``: ``task.name``, ``model.name``, ``backend.name``,
``sampling_params``), token counts, ``accuracy`` and ``pass_at_k``.

A problem is a task (within the task's benchmark); each of its ``responses`` is a rollout,
graded by ``correctness`` (null before ``skythought score``: ungraded). A reply stopped at the
token limit is cut off: ``token_usages[i].completion_tokens`` reaching ``sampling_params``'
``max_tokens``, where the vLLM or Ray backend counted each sample's tokens (the OpenAI backend
writes one count for all samples). The model is ``configuration.model.name``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from whilecli.errors import InputError
from whilecli.io.formats import Converted, as_dict

NAME = "skythought"
#: The file ``save_summary`` writes beside ``results.json``.
SUMMARY = "summary.json"
#: Backends whose ``token_usages`` count each sample's own tokens (``Response.from_vllm_response``,
#: ``from_ray_response``); the OpenAI backend writes the response's total on the first sample.
COUNTED = ("vllm", "ray")


def _problem(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("responses"), list)


def is_results(doc: Any) -> bool:
    """``save_results``' object: most values a problem with a list ``responses`` (a broken
    one among them is named by :func:`convert`), and the ``token_usages`` or
    ``input_conversation`` SkyThought writes beside it."""
    if not isinstance(doc, dict) or not doc:
        return False
    values = list(doc.values())
    return 2 * sum(map(_problem, values)) >= len(values) and any(
        _problem(v) and ("token_usages" in v or "input_conversation" in v) for v in values
    )


def is_summary(doc: Any) -> bool:
    """``save_summary``'s ``SummaryResults``: the run's ``configuration`` beside its counts."""
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("configuration"), dict)
        and "total_completion_tokens" in doc
        and "accuracy" in doc
    )


def _summary(path: Any) -> dict[str, Any]:
    if not isinstance(path, Path):
        return {}
    from whilecli.io.sources import read_json_file

    found = path.parent / SUMMARY
    if not found.is_file():
        return {}
    try:
        doc = read_json_file(found)
    except InputError:
        return {}
    return doc if is_summary(doc) else {}


def _max_tokens(configuration: dict[str, Any]) -> int | None:
    """``sampling_params.max_tokens`` where each sample's tokens were counted, else None."""
    backend = as_dict(configuration.get("backend")).get("name")
    if not isinstance(backend, str) or backend.lower() not in COUNTED:
        return None
    limit = as_dict(configuration.get("sampling_params")).get("max_tokens")
    if isinstance(limit, str) and limit.strip().isdigit():
        limit = int(limit)
    return limit if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 else None


def convert(doc: dict[str, Any], path: Any, name: str) -> Converted:
    configuration = as_dict(_summary(path).get("configuration"))
    model = as_dict(configuration.get("model")).get("name")
    model = model if isinstance(model, str) and model else None
    task = as_dict(configuration.get("task")).get("name")
    env = task if isinstance(task, str) and task else None
    limit = _max_tokens(configuration)
    rows: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    for key, problem in doc.items():
        at = f"results[{key!r}]"
        if not _problem(problem):
            raise InputError(
                "must be a problem holding its responses[], as the others are",
                file=name,
                at=at,
                field=None if not isinstance(problem, dict) else "responses",
            )
        usages = problem.get("token_usages")
        for i, response in enumerate(problem["responses"]):
            if not isinstance(response, dict):
                raise InputError(
                    f"a response must be a JSON object, found {type(response).__name__}",
                    file=name,
                    at=at,
                    field=f"responses[{i}]",
                )
            grade = response.get("correctness")
            if grade is not None and not isinstance(grade, bool):
                raise InputError(
                    f"must be true, false or null (not yet scored), found {grade!r}",
                    file=name,
                    at=at,
                    field=f"responses[{i}].correctness",
                )
            usage = as_dict(usages[i]) if isinstance(usages, list) and i < len(usages) else {}
            tokens = usage.get("completion_tokens")
            cut = (
                tokens >= limit
                if limit is not None and isinstance(tokens, int) and not isinstance(tokens, bool)
                else None
            )
            rows.append(
                {
                    "task_id": str(key),
                    "reward": None if grade is None else float(grade),
                    "truncated": cut,
                    "model": model,
                    "prompt": problem.get("prompt"),
                    "completion": response.get("content"),
                    "completion_tokens": tokens,
                }
            )
            positions.append({"at": f"{at}.responses[{i}]"})
    if not rows:
        raise InputError("no rows: no problem holds a response", file=name, field="responses")
    ungraded = sum(row["reward"] is None for row in rows)
    if ungraded == len(rows):
        raise InputError(
            "no response is graded yet (skythought generate writes none): grade them with"
            " skythought score",
            file=name,
            field="responses[].correctness",
        )
    notes = []
    if ungraded:
        notes.append(
            f"{ungraded} of {len(rows)} responses hold no correctness (skythought generate"
            " writes none until skythought score): ungraded"
        )
    if not configuration:
        notes.append(f"no {SUMMARY} beside the results: the model and the token limit unknown")
    origins = {
        "task_id": "the keys of results.json (each problem's _index; its responses are rollouts)",
        "reward": "responses[].correctness",
        "truncated": "token_usages[].completion_tokens >= sampling_params.max_tokens"
        if limit is not None
        else "not recorded",
        "model": f"{SUMMARY}: configuration.model.name" if model else "not recorded",
    }
    spelled = {"reward": "correctness"}
    return Converted(NAME, rows, origins, notes, env=env, positions=positions, spelled=spelled)
