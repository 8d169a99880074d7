"""VLMEvalKit result tables (``open-compass/VLMEvalKit``, ``vlmeval/dataset/image_mcq.py``:
``ImageMCQDataset.evaluate`` and ``vlmeval/dataset/utils/multiple_choice.py``:
``mcq_vanilla_eval`` / ``mcq_circular_eval``), written under
``outputs/<model>/<eval id>/`` as ``<model>_<dataset>_<judge>_result.<fmt>`` (``fmt`` is
``PRED_FORMAT``: ``xlsx`` by default, ``tsv`` or ``csv`` on request; ``vlmeval/smp/file.py``:
``get_pred_file_format``), one row per item: ``index``, ``question``, the options, ``answer``,
``category``, ``prediction`` (the model's reply), ``hit`` (1 when the extracted option is the
answer) and ``log`` (how it was extracted). Beside it ``<model>_<dataset>.<fmt>`` holds the
predictions alone (ungraded) and ``<model>_<dataset>_acc.csv`` (``report_acc``) the accuracy
per split and category, no row per item.

A task is an item (``index``, within the dataset its file names); the grade is ``hit``; the
model is the ``outputs/<model>/`` folder the file's name begins with. VLMEvalKit samples one
reply per item and records no finish reason. Excel files are not read: ``PRED_FORMAT=tsv``
writes the same table as text.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from whilecli.errors import InputError
from whilecli.io.formats import Converted

NAME = "vlmevalkit"
#: The columns ``report_acc`` writes first: one row per split, one column per category.
ACCURACY = ("split", "Overall")
TEXT_GRADES = {"true": 1.0, "false": 0.0}


def is_result(row: dict[str, Any]) -> bool:
    return all(k in row for k in ("index", "prediction", "hit"))


def is_accuracy(row: dict[str, Any]) -> bool:
    return list(row)[: len(ACCURACY)] == list(ACCURACY)


def refuse_accuracy(name: str) -> InputError:
    return InputError(
        "a VLMEvalKit accuracy table (report_acc: accuracy per split and category), no grade"
        " per item: pass the <model>_<dataset>_<judge>_result table beside it (PRED_FORMAT=tsv"
        " writes it as text)",
        file=name,
    )


def _model_and_dataset(name: str) -> tuple[str | None, str]:
    """The model (the folder the file's name begins with) and the rest of the name, less
    ``_result``: the dataset and the judge."""
    path = PurePath(name)
    stem = path.stem.removesuffix("_result")
    for folder in path.parents:
        if folder.name and stem.startswith(folder.name + "_"):
            return folder.name, stem[len(folder.name) + 1 :]
    return None, stem


def _grade(value: Any, name: str, line: Any) -> float | None:
    if value is None or isinstance(value, (int, float)):
        return None if value is None else float(value)
    grade = TEXT_GRADES.get(str(value).strip().lower())
    if grade is None:
        raise InputError(
            f"hit is {value!r}, not 0 or 1 (VLMEvalKit writes 1 for a hit)",
            file=name,
            line=line,
            field="hit",
        )
    return grade


def convert(table: Converted, name: str) -> Converted:
    model, dataset = _model_and_dataset(name)
    rows = []
    for position, row in zip(table.positions, table.rows, strict=True):
        rows.append(
            {
                "task_id": str(row.get("index")),
                "reward": _grade(row.get("hit"), name, position.get("line")),
                "prompt": row.get("question"),
                "completion": row.get("prediction"),
                "model": model,
                "category": row.get("category"),
            }
        )
    origins = {
        "task_id": "index (one reply per item)",
        "reward": "hit",
        "truncated": "not recorded",
        "model": "the outputs/<model>/ folder the file's name begins with"
        if model
        else "not recorded (pass --model)",
        "env": "the file's name: dataset and judge",
    }
    return Converted(
        NAME,
        rows,
        origins,
        env=dataset,
        positions=table.positions,
        spelled={"task_id": "index", "reward": "hit"},
        # the name VLMEvalKit's config gives the model (``llava_v1.5_7b``), no Hub id
        model_unsure=f"the outputs/<model>/ folder ({model})" if model else None,
    )
