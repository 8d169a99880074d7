"""A graded file supersedes the ungraded files its tool writes beside it.

Several tools write a folder that holds both the model's generations (no grade) and, once
graded, the same rollouts with their grades. Read as a folder, the graded file is the rows;
what the tool wrote beside it for it is left out, named in a note. One rule, each tool's
layout as its code writes it:

- OpenHands (``evaluation/benchmarks/swe_bench/``): ``output.swebench_eval.jsonl`` beside
  ``output.jsonl``, ``output.swebench.jsonl``, ``report.json``, ``metadata.json`` and the log
  folders: every other file in its folder or under it (:mod:`whilecli.io.formats.openhands`).
- LiveCodeBench (``lcb_runner/runner/main.py``, ``runner/scenario_router.py``):
  ``output/<model_repr>/<scenario>_<n>_<temperature>[_cot].json`` (the generations),
  ``eval_file = output_path.replace(".json", "_eval.json")`` (the summary: pass@k, per-problem
  grades without replies, metadata) and ``eval_all_file = output_path.replace(".json",
  "_eval_all.json")`` (one object per problem with ``code_list`` and ``graded_list``: the
  rows).
- EvalPlus (``evalplus/evaluate.py``, ``codegen.py``): ``<name>.jsonl`` samples (``task_id``,
  ``solution``) and ``<name>.raw.jsonl``; ``evaluate`` writes
  ``samples.replace(".jsonl", "_eval_results.json")`` (``.eval_results.json`` before 0.3):
  the rows.
- tau2-bench (``src/tau2/data_model/simulation.py``, ``Results.save(format="dir")``):
  ``results.json`` (the run's info, tasks and ``simulation_index``) beside ``simulations/<id>.json``:
  the results file reads its simulations (:mod:`whilecli.io.formats.tau2`), so the files under
  ``simulations/`` are not read again.
- AlpacaEval (``alpaca_eval/main.py``): ``model_outputs.json`` (``instruction``, ``output``,
  ``generator``) and ``<annotator>/annotations.json`` beside ``leaderboard.csv``: the
  annotations (the judge's preference per instruction) are the rows.
- BFCL (``bfcl_eval/eval_checker/eval_runner.py``): ``score/<model>/[<group>/]BFCL_v<N>_<category>
  _score.json`` graded from ``result/<model>/[<group>/]BFCL_v<N>_<category>_result.json`` (the
  generations, read through the score file for the passes' ids,
  :mod:`whilecli.io.formats.bfcl`), with the leaderboard tables ``score/data_*.csv``
  (``eval_runner_helper.py``: ``generate_leaderboard_csv``) beside.

Each layout says which files are a tool's graded rows (:attr:`Layout.graded`) and which files
beside one it supersedes (:attr:`Layout.supersedes`); files that no graded file supersedes are
kept as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Layout:
    """How one tool lays its graded file beside what it was graded from."""

    tool: str
    #: Whether a file is the tool's graded rows.
    graded: Callable[[Path], bool]
    #: Whether the graded file (first) supersedes another file (second) beside it.
    supersedes: Callable[[Path, Path], bool]
    #: What the superseded files are, for the note.
    what: str


def _stem(path: Path, *suffixes: str) -> str | None:
    """``path``'s name less the first of ``suffixes`` it ends with, else None."""
    return next((path.name[: -len(s)] for s in suffixes if path.name.endswith(s)), None)


OPENHANDS_GRADED = "output.swebench_eval.jsonl"
LCB_GRADED = "_eval_all.json"
EVALPLUS_GRADED = ("_eval_results.json", ".eval_results.json")
ALPACA_GRADED = "annotations.json"


def _lcb(graded: Path, other: Path) -> bool:
    stem = _stem(graded, LCB_GRADED)
    return other.parent == graded.parent and other.name in (f"{stem}.json", f"{stem}_eval.json")


def _evalplus(graded: Path, other: Path) -> bool:
    stem = _stem(graded, *EVALPLUS_GRADED)
    return other.parent == graded.parent and other.name in (f"{stem}.jsonl", f"{stem}.raw.jsonl")


def _bfcl(graded: Path, other: Path) -> bool:
    from whilecli.io.formats import bfcl

    if other == bfcl.result_file(graded):
        return True
    root = bfcl.score_root(graded)
    leaderboard = other.name.startswith("data_") and other.suffix == ".csv"
    return root is not None and other.parent == root and leaderboard


def _bfcl_graded(path: Path) -> bool:
    from whilecli.io.formats import bfcl

    return path.name.startswith("BFCL_") and bfcl.result_file(path) is not None


def _alpaca(graded: Path, other: Path) -> bool:
    beside = (graded.parent / "leaderboard.csv", graded.parent / "model_outputs.json")
    return other in beside or other == graded.parent.parent / "model_outputs.json"


LAYOUTS: tuple[Layout, ...] = (
    Layout(
        "OpenHands evaluation folder",
        lambda p: p.name == OPENHANDS_GRADED,
        lambda g, p: g.parent in p.parents,
        "the ungraded inference output, reports and logs",
    ),
    Layout(
        "LiveCodeBench",
        lambda p: _stem(p, LCB_GRADED) not in (None, ""),
        _lcb,
        "the ungraded generations and the summary of their grades",
    ),
    Layout(
        "EvalPlus",
        lambda p: _stem(p, *EVALPLUS_GRADED) not in (None, ""),
        _evalplus,
        "the ungraded samples",
    ),
    Layout(
        "tau2-bench dir format",
        lambda p: p.name == "results.json" and (p.parent / "simulations").is_dir(),
        lambda g, p: g.parent / "simulations" in p.parents,
        "its simulations, read through it",
    ),
    Layout(
        "BFCL",
        lambda p: _bfcl_graded(p),
        _bfcl,
        "the ungraded generations and the leaderboard tables",
    ),
    Layout(
        "AlpacaEval",
        lambda p: p.name == ALPACA_GRADED,
        _alpaca,
        "the ungraded model outputs and the leaderboard",
    ),
)


def graded_only(sources: list[Any], notes: list[str] | None = None) -> list[Any]:
    """A folder's files, less those a tool's graded file beside them supersedes (each
    :data:`LAYOUTS`' rule), with a note per tool naming what was left out; the rest as they
    are."""
    paths = [s.path for s in sources if isinstance(s.path, Path)]
    left: dict[Path, tuple[Layout, Path]] = {}  # a left-out file: whose rule, which graded file
    for layout in LAYOUTS:
        for graded in (p for p in paths if layout.graded(p)):
            for path in paths:
                if path != graded and path not in left and layout.supersedes(graded, path):
                    left[path] = (layout, graded)
    if not left:
        return sources
    kept = [s for s in sources if not (isinstance(s.path, Path) and s.path in left)]
    if notes is not None:
        for layout in LAYOUTS:
            mine = sorted((p, g) for p, (by, g) in left.items() if by is layout)
            if not mine:
                continue
            names = sorted({_shown(p, g.parent) for p, g in mine})
            shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
            rows = sorted({g.name for _, g in mine})
            notes.append(
                f"{layout.tool}: its graded rows are {', '.join(rows[:3])}; {len(mine)} other"
                f" files beside them ({shown}) are {layout.what}, left out"
            )
    return kept


def _shown(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` where it lies under it, else its name."""
    return str(path.relative_to(root)) if root in path.parents else path.name
