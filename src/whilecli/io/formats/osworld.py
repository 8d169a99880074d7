"""OSWorld result folders: ``<result_dir>/<action_space>/<observation_type>/<model>/<domain>/
<example_id>/`` per example (``xlang-ai/OSWorld``, ``run.py``: ``test`` and ``get_result``;
``lib_run_single.py``: ``run_single_example``), holding ``traj.jsonl`` (one line per action:
``step_num``, ``action_timestamp``, ``action``, ``response`` in later versions, ``reward``
(the environment's step reward, not the grade), ``done``, ``info``, ``screenshot_file``),
``result.txt`` (the evaluator's score of the final state, a number on one line, written after
the episode), ``recording.mp4`` and the step screenshots. The reply is the episode's
actions (its responses, where the lines hold them), one a line.

An example folder is one rollout of its example (the task: ``example_id``, a UUID); the same
example under k result folders is k rollouts. The grade is ``result.txt``. An episode runs
until an action ends it (``done``: the agent's ``DONE`` or ``FAIL``) or ``max_steps`` runs
out: a last line whose ``done`` is false is a cut-off episode. A run that raised appends
``{"Error": ...}`` to ``traj.jsonl`` and writes no ``result.txt``: that example is left out
of a folder's rows with a note (refused when named alone), as OSWorld's own ``get_result``
leaves it out. The model is the ``<model>`` folder, read where the
folder above it is an observation type OSWorld names.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from whilecli.errors import InputError
from whilecli.io.formats import Converted

NAME = "osworld"
TRAJ = "traj.jsonl"
RESULT = "result.txt"
#: The keys of a step line of ``traj.jsonl``.
STEP_KEYS = frozenset({"step_num", "action", "done"})
#: ``--observation_type``'s choices (``run.py``): the folder above the model's.
OBSERVATION_TYPES = frozenset({"screenshot", "a11y_tree", "screenshot_a11y_tree", "som"})


def is_traj(row: Any, path: Any) -> bool:
    """A line of an example's ``traj.jsonl``: a step, or the error a failed run appends."""
    if not isinstance(path, Path) or path.name != TRAJ or not isinstance(row, dict):
        return False
    return set(row) >= STEP_KEYS or set(row) == {"Error"}


#: What a ``traj.jsonl`` with no ``result.txt`` beside it is.
UNGRADED = (
    f"an OSWorld example's traj.jsonl with no {RESULT} beside it: the run raised or stopped"
    " before its evaluation (OSWorld's get_result leaves it out too)"
)


def graded(path: Path) -> bool:
    """Whether the example's evaluator wrote its score beside its ``traj.jsonl``."""
    return (path.parent / RESULT).is_file()


def _model(folder: Path) -> str | None:
    """The ``<model>`` folder two above the example's, where the one above it is an
    observation type."""
    parents = folder.parents
    if len(parents) >= 3 and parents[2].name in OBSERVATION_TYPES and parents[1].name:
        return parents[1].name
    return None


def _result(path: Path, name: str) -> float | None:
    """The example's ``result.txt`` as a number; None where the run wrote none."""
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read {RESULT}: {err}", file=str(path)) from None
    try:
        return float(text)
    except ValueError:
        raise InputError(
            f"{RESULT} holds {text[:40]!r}, not the evaluator's score (a number)",
            file=str(path),
            line=1,
        ) from None


def convert(lines: Iterable[tuple[int, Any]], path: Path, name: str) -> Converted:
    """One example folder's ``traj.jsonl`` (and the ``result.txt`` beside it) as one row."""
    folder = path.parent
    steps: list[dict[str, Any]] = []
    for n, line in lines:
        if not isinstance(line, dict):
            raise InputError("a traj.jsonl line must be a JSON object", file=name, line=n)
        if "Error" not in line:
            steps.append(line)
    score = _result(folder / RESULT, name)
    if score is None:
        raise InputError(UNGRADED, file=name)  # graded() is asked first: not reached
    last = steps[-1] if steps else {}
    done = last.get("done")
    said = [s.get("response", s.get("action")) for s in steps]
    reply = "\n".join(str(a) for a in said if a is not None) if said else None
    row: dict[str, Any] = {
        "task_id": folder.name,
        "domain": folder.parent.name or None,
        "reward": score,
        "truncated": (not done) if isinstance(done, bool) and score is not None else None,
        "steps": len(steps),
        "completion": reply,
        "model": _model(folder),
    }
    notes: list[str] = []
    origins = {
        "task_id": "the example folder (example_id; the same example in k result folders is k"
        " rollouts)",
        "reward": f"{RESULT} beside traj.jsonl (the evaluator's score)",
        "truncated": "the last step's done is false (max_steps ran out)",
        "model": "the <model> folder (<action_space>/<observation_type>/<model>/<domain>/)"
        if row["model"]
        else "not recorded",
    }
    return Converted(
        NAME,
        [row],
        origins,
        notes,
        positions=[{"at": "the example"}],
        model_unsure=f"the <model> folder ({row['model']})" if row["model"] else None,
    )
