"""OpenCompass work directories (``open-compass/opencompass``: ``outputs/<config>/<time>/``).

``opencompass/tasks/openicl_infer.py`` writes ``predictions/<model abbr>/<dataset abbr>.json``
(an object keyed by the sample's index: ``origin_prompt``, ``prediction``, ``gold``: the
replies, ungraded); ``opencompass/tasks/openicl_eval.py`` writes
``results/<model abbr>/<dataset abbr>.json`` (the metrics, and with ``dump_details`` a
``details`` object keyed the same way, each with the evaluator's verdict, e.g. ``correct``);
the summarizer writes ``summary/summary_<time>.{csv,txt,md}`` (one metric per dataset and
model), and ``configs/`` and ``logs/`` hold the run's config and logs.

So in a work directory the rows are the files under ``results/``: the predictions, summaries,
configs and logs beside them are left out (named in a note), and a predictions file named on
its own is refused (no grade). A results file names neither its model nor its dataset inside:
the model is its folder's name (the model's abbr in the config) and the evaluation is the
file's name (the dataset's abbr), so the results of two datasets are not pooled unasked. A
dataset repeated as ``NAME-run0`` .. ``NAME-runN`` (OpenCompass' own way to draw n samples)
is one evaluation, ``NAME``: its files pool as draws of the same problems.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from whilecli.io.formats import Converted, leave_out_beside

RESULTS = "results"
#: Folders an OpenCompass work directory holds beside ``results/``.
BESIDE = ("predictions", "summary", "configs", "logs")
PREDICTIONS = (
    "OpenCompass predictions (the model's replies, ungraded); the results/<model>/<dataset>.json"
    " of the same work directory holds their grades"
)


def _work_dir(path: Path, under: str = RESULTS) -> Path | None:
    """The work directory of a file at ``<work dir>/<under>/<model>/<dataset>.json``, where the
    work directory holds another of OpenCompass' folders beside it."""
    parents = path.parents
    if len(parents) < 3 or parents[1].name != under:
        return None
    work = parents[2]
    beside = (RESULTS, *BESIDE)
    return work if any((work / f).is_dir() for f in beside if f != under) else None


def rows_only(sources: list[Any], notes: list[str] | None = None) -> list[Any]:
    """A folder's files, less what an OpenCompass work directory holds beside its results."""
    works = {w for s in sources if isinstance(s.path, Path) and (w := _work_dir(s.path))}
    return leave_out_beside(
        sources,
        works,
        lambda work, path: (work / RESULTS) in path.parents,
        notes,
        lambda count, shown: (
            f"OpenCompass work directory: its rows are the files under results/; {count}"
            f" files beside them ({shown}) are predictions, summaries, configs and logs, left out"
        ),
    )


def is_predictions(doc: Any, path: Path | None) -> bool:
    """A predictions file in its place: ``predictions/<model>/<dataset>.json`` holding
    entries with a ``prediction`` and no grade."""
    if path is None or len(path.parents) < 2 or path.parents[1].name != "predictions":
        return False
    entries = list(doc.values()) if isinstance(doc, dict) else []
    return bool(entries) and all(isinstance(e, dict) and "prediction" in e for e in entries)


def named(converted: Converted, path: Path | None) -> Converted:
    """Keyed rows of a results file in its place, with the model (its folder's name) and the
    evaluation (its file's name) the path gives them; any other file's rows as they are."""
    if path is None or _work_dir(path) is None:
        return converted
    model = path.parent.name
    named_here = any(r.get("model") is None for r in converted.rows)
    rows = [r if r.get("model") is not None else {**r, "model": model} for r in converted.rows]
    origins = {**converted.origins, "model": "the results folder's name (the model's abbr)"}
    if named_here:  # the abbr a config gives the model, as often a run's name as a Hub id
        converted = replace(converted, model_unsure=f"the results folder's name ({model})")
    dataset, repeated = dataset_of(path.stem)
    notes = converted.notes
    if repeated:
        notes = [
            *notes,
            f"OpenCompass writes repeated runs of one dataset as {dataset}-run0, -run1, ...:"
            f" each {dataset}-run<i>.json is one draw of every {dataset} problem",
        ]
    return replace(converted, rows=rows, origins=origins, env=dataset, notes=notes)


#: OpenCompass' idiom for n samples of one dataset: its config repeats the dataset under
#: ``abbr=f"{name}-run{idx}"`` (``configs/datasets/aime2024/aime2024_llmjudge_gen_*.py``:
#: ``[dict(abbr=f'aime2024-run{idx}', ...) for idx in range(8)]``).
REPEAT = re.compile(r"^(?P<name>.+)-run\d+$")


def dataset_of(abbr: str) -> tuple[str, bool]:
    """The dataset a results file's abbr names, and whether the abbr is one run of a repeated
    dataset (:data:`REPEAT`): ``aime2024-run3`` is ``aime2024``'s, so files that differ only
    by that suffix are one evaluation, their rows draws of the same problems."""
    found = REPEAT.match(abbr)
    return (found.group("name"), True) if found else (abbr, False)
