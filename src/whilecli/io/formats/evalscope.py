"""EvalScope review rows (``reviews/<model>/<dataset>_<subset>.jsonl``), in both layouts.

- 2026: one row per sample with ``index`` (the draw: ``sample_score.sample_id``),
  ``sample_score.group_id`` (the task: with ``repeats=k`` EvalScope writes k draws of one
  group_id, each with its own ``index``, their options shuffled per draw where the
  benchmark shuffles them; older reviews write no group_id, and ``index`` is the task),
  ``messages`` (the prompt **and** the model's reply), ``sample_score.score.value`` (a dict of metrics: ``acc``, or its
  ``main_score_name``, or its only entry). The model and dataset are in the report
  (``reports/<model>/<dataset>.json`` or a ``report_*.json`` beside the rows: ``model_name``,
  ``dataset_name``), else the folder is named after the model.
- January 2025: an OpenAI ``chat.completion`` object per row with the grade in
  ``choices[0].review.result`` (a boolean), ``model``, the question in ``raw_input.question``
  and no task id: the task is a hash of the question, never of the reply.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from whilecli.errors import InputError
from whilecli.io.aliases import cut_reason
from whilecli.io.formats import Converted, as_dict, as_list, first_assistant_cut


def layout(first: dict[str, Any]) -> str | None:
    """``"2026"``, ``"2025"`` or None (not an EvalScope review row)."""
    score = first.get("sample_score")
    if isinstance(score, dict) and "score" in score and "index" in first:
        return "2026"
    choices = first.get("choices")
    if (
        first.get("object") == "chat.completion"
        and isinstance(choices, list)
        and choices
        and isinstance(choices[0], dict)
        and "review" in choices[0]
    ):
        return "2025"
    return None


def _report(path: Path | None) -> dict[str, Any] | None:
    """The report of the reviews' own dataset: ``report_*.json`` beside the rows, or
    ``reports/<model>/*.json``, whose ``dataset_name`` is the reviews file's dataset exactly
    (the file is ``<dataset>_<subset>.jsonl`` for a subset the report names, or
    ``<dataset>.jsonl``), never one whose name is a prefix of it."""
    if path is None:
        return None
    from whilecli.io.sources import read_json_file

    folder = path.parent
    candidates = sorted(folder.glob("report_*.json"))
    reports = folder.parent.parent / "reports" / folder.name
    if reports.is_dir():
        candidates += sorted(reports.glob("*.json"))
    named = set(folder.glob("report_*.json"))
    for cand in candidates:
        doc = read_json_file(cand, lenient=cand not in named)  # reports/*.json: any JSON file
        if (
            isinstance(doc, dict)
            and isinstance(doc.get("model_name"), str)
            and _same_dataset(doc, path.stem)
        ):
            return {**doc, "__file": cand.name}
    return None


def _same_dataset(report: dict[str, Any], stem: str) -> bool:
    """Whether ``report`` is of the reviews file named ``stem``: its ``dataset_name`` and one
    of its subsets name the file exactly."""
    dataset = report.get("dataset_name")
    if not isinstance(dataset, str) or not dataset:
        return False
    if stem == dataset:
        return True
    return any(stem == f"{dataset}_{subset}" for subset in _subsets(report))


def _subsets(report: dict[str, Any]) -> list[str]:
    """The subset names a report lists (``metrics[].categories[].subsets[].name``)."""
    names: list[str] = []
    for metric in as_list(report.get("metrics")):
        for category in as_list(as_dict(metric).get("categories")):
            for subset in as_list(as_dict(category).get("subsets")):
                name = as_dict(subset).get("name")
                if isinstance(name, str):
                    names.append(name)
    return names


def _grade(value: Any, main: Any) -> Any:
    if isinstance(value, dict):
        if isinstance(main, str) and main in value:
            return value[main]
        if "acc" in value:
            return value["acc"]
        if len(value) == 1:
            return next(iter(value.values()))
        return None
    return value


def convert(rows: Iterable[tuple[int, dict[str, Any]]], path: Path | None, name: str) -> Converted:
    out: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    kind: str | None = None
    for lineno, row in rows:
        this = layout(row)
        if this is None or (kind is not None and this != kind):
            raise InputError("not an EvalScope review row like the first", file=name, line=lineno)
        kind = this
        out.append(_row_2026(row) if this == "2026" else _row_2025(row))
        positions.append({"line": lineno})
    report = _report(path) if kind == "2026" else None
    notes: list[str] = []
    flags = [r.pop("grouped", False) for r in out]  # every row's, so none is left a column
    grouped = kind == "2026" and any(flags)
    if grouped:
        notes.append(
            "tasks are sample_score.group_id (EvalScope's repeats: each group's draws are"
            " one task's rollouts)"
        )
    model_origin = "model"
    unsure = None  # a model read from the folder's name: a path, not the run's record
    env = None
    if kind == "2026":
        model = report.get("model_name") if report else None
        if model is not None:
            model_origin = f"{report['__file']}: model_name"  # type: ignore[index]
            env = report.get("dataset_name") if report else None
        elif path is not None:
            model = path.parent.name
            model_origin = "the folder's name (EvalScope writes reviews/<model>/)"
            unsure = f"the reviews/<model>/ folder ({model})"
            notes.append(f"the model is read from the folder name: {model!r}")
        for row in out:
            row["model"] = model
        if env is None and path is not None:
            env = path.stem
    origins = {
        "task_id": (
            ("sample_score.group_id (repeats are rollouts)" if grouped else "index")
            if kind == "2026"
            else "hash of raw_input.question"
        ),
        "reward": (
            "sample_score.score.value (acc, or its only metric)"
            if kind == "2026"
            else "choices[0].review.result"
        ),
        "truncated": "not recorded" if kind == "2026" else "choices[0].finish_reason == 'length'",
        "model": model_origin,
    }
    task_field = "sample_score.group_id" if grouped else "index"
    spelled = {"task_id": task_field} if kind == "2026" else {}
    return Converted(
        "evalscope",
        out,
        origins,
        notes,
        env=env,
        positions=positions,
        spelled=spelled,
        model_unsure=unsure,
        grouped="sample_score.group_id" if grouped else None,
    )


def _task(row: dict[str, Any]) -> Any:
    """A review row's task: ``sample_score.group_id`` where EvalScope wrote one (1.x:
    ``MemoryDataset.reindex(group_size=repeats)`` numbers each draw ``index = sample_id = i``
    and its task ``group_id = i // repeats``, so ``repeats=4`` writes four rows of one
    group_id), else ``index`` (older reviews, one draw a sample)."""
    group = as_dict(row.get("sample_score")).get("group_id")
    return row.get("index") if group is None else group


def _row_2026(row: dict[str, Any]) -> dict[str, Any]:
    score = as_dict(as_dict(row["sample_score"]).get("score"))
    grade = _grade(score.get("value"), score.get("main_score_name"))
    messages = row.get("messages")
    reply = None
    if isinstance(messages, list):
        replies = [m for m in messages if isinstance(m, dict) and m.get("role") == "assistant"]
        reply = replies[-1].get("content") if replies else ""
    return {
        "task_id": _task(row),  # as written: the reader types it, and refuses a list
        "grouped": as_dict(row["sample_score"]).get("group_id") is not None,
        "reward": grade,
        "truncated": None,
        "prompt": first_assistant_cut(messages),
        "completion": reply,
        "target": row.get("target"),
        "sample_score": row.get("sample_score"),
    }


def _row_2025(row: dict[str, Any]) -> dict[str, Any]:
    choice = row["choices"][0]
    review = as_dict(choice.get("review"))
    raw = as_dict(row.get("raw_input"))
    message = as_dict(choice.get("message"))
    finish = choice.get("finish_reason")
    return {
        "prompt": raw.get("question", raw) if raw else None,
        "reward": review.get("result"),
        "truncated": None if finish is None else cut_reason(finish),
        "model": row.get("model"),
        "completion": message.get("content"),
        "choices": row.get("choices"),
        "subset_name": row.get("subset_name"),
    }
