"""OpenAI Evals API run output items: what ``GET /evals/{eval_id}/runs/{run_id}/output_items``
lists (``openai/openai-python``, ``src/openai/types/evals/runs/output_item_list_response.py``;
``openai-node``, ``src/resources/evals/runs/output-items.ts``), saved one item a line, or as
the listing's page (``{"object": "list", "data": [...], "has_more": ...}``).

An item: ``object`` (``eval.run.output_item``), ``id``, ``eval_id``, ``run_id``,
``datasource_item_id`` (the row of the data source: the task), ``datasource_item``,
``status`` (``pass`` or ``fail``: every grader passed or not), ``results[]`` (one per grader:
``name``, ``type`` such as ``string_check``, ``python``, ``score_model`` or ``label_model``,
``passed``, ``score``) and ``sample`` (``input`` and ``output`` messages, ``finish_reason``,
``model``, ``error`` with ``code`` and ``message`` where the call failed, ``usage``).

The task is ``datasource_item_id``; the items of one run are one rollout each, and the runs
of one eval (``eval_id``, the evaluation) pooled are its draws. The pass is ``status ==
'pass'``; an item with another status passes where every grader's ``passed`` is true, and is
ungraded where a grader gave none. A reply is cut off
when ``sample.finish_reason`` is a token limit's (``length``); a sample with an ``error`` is an
error reply. A row is graded by a judge where one of its graders is a model
(``score_model``, ``label_model``: its name is the row's ``judge_name``, the reference rule).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from whilecli.errors import InputError
from whilecli.io.aliases import cut_reason
from whilecli.io.formats import Converted, as_dict, as_list
from whilecli.io.shape import kind_words

NAME = "openai-eval-runs"
OBJECT = "eval.run.output_item"
#: Grader types that are a model grading (the others run a check or code).
MODEL_GRADERS = frozenset({"score_model", "label_model"})


def is_item(first: Any) -> bool:
    """An output item: its ``object``, else the item's own keys."""
    if not isinstance(first, dict):
        return False
    if first.get("object") == OBJECT:
        return True
    return {"datasource_item_id", "results", "sample", "status"} <= set(first)


def is_page(doc: Any) -> bool:
    """A listing's page (``object: list``, ``data`` of items) or an array of items."""
    if isinstance(doc, list):
        return bool(doc) and is_item(doc[0])
    return isinstance(doc, dict) and is_item(next(iter(as_list(doc.get("data"))), None))


def page_rows(doc: Any) -> tuple[list[Any], str | None]:
    """The items of a page and the key they sit under (None: a top-level array)."""
    if isinstance(doc, list):
        return doc, None
    return as_list(doc.get("data")), "data"


def _grade(item: dict[str, Any]) -> float | None:
    status = item.get("status")
    if status in ("pass", "fail"):
        return 1.0 if status == "pass" else 0.0
    passed = [r.get("passed") for r in map(as_dict, as_list(item.get("results")))]
    if passed and all(isinstance(p, bool) for p in passed):
        return float(all(passed))
    return None  # no verdict: ungraded


def _reply(sample: dict[str, Any]) -> Any:
    contents = [m.get("content") for m in map(as_dict, as_list(sample.get("output")))]
    texts = [t for t in contents if isinstance(t, str)]
    return "\n".join(texts) if texts else None


def convert(rows: Iterable[tuple[dict[str, Any], dict[str, Any]]], name: str) -> Converted:
    """Rows from output items, each with its place in the file (``{"line": N}``,
    ``{"at": "data[i]"}``)."""
    out: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    envs: list[str] = []
    cut_known = True
    for place, item in rows:
        task = item.get("datasource_item_id")
        if task is not None and (isinstance(task, bool) or not isinstance(task, (int, str))):
            raise InputError(
                f"datasource_item_id is {kind_words(task)}, not the data source row's id",
                file=name,
                field="datasource_item_id",
                **place,
            )
        eval_id = item.get("eval_id")
        if isinstance(eval_id, str) and eval_id not in envs:
            envs.append(eval_id)
            if len(envs) > 1:
                raise InputError(
                    f"items of two evals ({envs[0]}, {eval_id}) in one file: they are"
                    " different evaluations; route each run's items apart",
                    file=name,
                    field="eval_id",
                    **place,
                )
        sample = as_dict(item.get("sample"))
        error = as_dict(sample.get("error"))
        reason = sample.get("finish_reason")
        cut_known = cut_known and isinstance(reason, str)
        judges = [
            r.get("name") or r.get("type")
            for r in map(as_dict, as_list(item.get("results")))
            if str(r.get("type")) in MODEL_GRADERS
        ]
        row: dict[str, Any] = {
            "task_id": task,
            "reward": _grade(item),
            "prompt": sample.get("input"),
            "completion": _reply(sample),
            "truncated": cut_reason(reason) if isinstance(reason, str) else None,
            "model": sample.get("model"),
            "judge_name": judges[0] if judges else None,
        }
        if error.get("code") or error.get("message"):
            row["error"] = str(error.get("message") or error.get("code"))
            row["completion"] = None  # the sample's error stands in place of its reply
        out.append(row)
        positions.append(place)
    if not cut_known:
        for r in out:
            r.pop("truncated", None)
    origins = {
        "task_id": "datasource_item_id (each run's item is a rollout)",
        "reward": "status == 'pass' (every grader passed)",
        "truncated": "sample.finish_reason == 'length'" if cut_known else "not recorded",
        "model": "sample.model",
    }
    spelled = {"task_id": "datasource_item_id", "reward": "status"}
    env = envs[0] if envs else None
    return Converted(NAME, out, origins, env=env, positions=positions, spelled=spelled)
