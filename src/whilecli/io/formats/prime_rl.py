"""prime-rl run directories and their rollout traces.

prime-rl writes, under ``{output_dir}/{run.name}`` (the run directory): ``configs/*.json`` (the
resolved sub-configs), ``metrics.jsonl``, and ``rollouts/step_N/{train,eval}/{all,effective}/
traces.jsonl``: one episode per line, with ``task.key`` (the task), ``group.id`` (the group of
rollouts the advantage is computed over), ``run.work.step`` (the policy step that sampled it),
``rewards`` (``{name: {score, weight}}``; the reward is Σ score × weight), ``stop_condition``
and ``calls[]`` (each model call's ``finish_reason``), and ``traces[].nodes[]`` (token-level
log-probs and advantages). ``all`` holds every episode of the step; ``effective`` leaves out
the zero-advantage ones (prime-rl's default filter), so ``all`` is read when it is there.

Routing a run directory reads its latest step (or ``--step N``): :func:`pick` turns a run
directory, its ``rollouts`` folder or one ``step_N`` folder into the one traces file to read.
:func:`convert` turns the episodes of a traces file into rows whose canonical keys are set;
:func:`read_step` reads one traces file, step directory or run directory into the canonical
frame every command reads (:class:`whilecli.io.rows.Rows`).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

from whilecli.errors import InputError
from whilecli.io.aliases import cut_reason, cut_stop
from whilecli.io.formats import Converted, as_dict, as_list

if TYPE_CHECKING:
    from whilecli.io.rows import Rows

NAME = "prime-rl"
STEP_DIR = re.compile(r"step_(\d+)")
SPLITS = ("train", "eval")
#: ``all`` first: ``effective`` leaves out zero-advantage episodes (a biased pass rate).
KEEPS = ("all", "effective")
TRACES = "traces.jsonl"


#: The step a run directory is read at (``--step``); None: its latest.
STEP: ContextVar[int | None] = ContextVar("whilecli_prime_rl_step", default=None)


def selected_step() -> int | None:
    """The step ``--step`` chose for this command, else None (the latest)."""
    return STEP.get()


def step_of(folder: Path) -> int | None:
    """N for a folder named ``step_N``, else None."""
    match = STEP_DIR.fullmatch(folder.name)
    return int(match.group(1)) if match else None


def _rollouts_of(path: Path) -> Path | None:
    """The ``rollouts`` folder of a run directory (or the folder itself), else None."""
    if path.name == "rollouts" and path.is_dir():
        return path
    inside = path / "rollouts"
    if inside.is_dir() and ((path / "configs").is_dir() or any(_step_dirs(inside))):
        return inside
    return None


def _step_dirs(rollouts: Path) -> Iterable[tuple[int, Path]]:
    try:
        children = list(rollouts.iterdir())
    except OSError:
        return []
    return sorted((n, c) for c in children if (n := step_of(c)) is not None and c.is_dir())


def steps(run_dir: str | Path) -> list[int]:
    """The steps whose rollouts a run directory holds (a traces file written), in order."""
    rollouts = _rollouts_of(Path(run_dir))
    if rollouts is None:
        return []
    return [n for n, folder in _step_dirs(rollouts) if step_traces(folder) is not None]


def step_traces(step_dir: Path, split: str | None = None) -> Path | None:
    """The traces file to read in one ``step_N`` folder: the train split's ``all`` file, else
    its ``effective`` file, else the eval split's (``split`` picks one); None when none is
    written yet."""
    for name in (split,) if split is not None else SPLITS:
        for keep in KEEPS:
            candidate = step_dir / name / keep / TRACES
            # one look at the path: a file a running trainer writes between two looks (not
            # there, then there) is read at the next, never refused as neither
            try:
                regular = stat.S_ISREG(candidate.stat().st_mode)
            except FileNotFoundError:
                if not os.path.islink(candidate):
                    continue  # not written yet
                regular = False  # a link that leads nowhere
            except OSError:  # a link that loops, a folder we may not enter
                regular = False
            if regular:
                return candidate
            raise InputError(  # there, yet no file: never read past it
                "not a readable file (a folder, or a link that leads nowhere or loops):"
                f" the step's {keep} traces are read from it",
                file=str(candidate),
            )
    return None


def selected(name: str, fmt: str | None) -> bool:
    """Whether a file read as prime-rl traces is a step's ``effective`` file, which leaves
    out every episode of zero advantage (each group whose rows all pass or all fail)."""
    return fmt == NAME and Path(name).parent.name == "effective"


def is_run(path: Path) -> bool:
    """Whether ``path`` is a prime-rl run directory, its ``rollouts`` folder or a step folder."""
    if not path.is_dir():
        return False
    if step_of(path) is not None and path.parent.name == "rollouts":
        return True
    return _rollouts_of(path) is not None


def pick(path: Path, step: int | None = None) -> tuple[Path, str] | None:
    """The traces file a run directory (its latest step, or ``step``), its ``rollouts``
    folder or one ``step_N`` folder names, and a note saying which; None when ``path`` is
    none of these. A run with no step written yet, or without step ``step``, is refused."""
    if not path.is_dir():
        return None
    if step_of(path) is not None and path.parent.name == "rollouts":
        if step is not None and step != step_of(path):
            raise InputError(
                f"--step {step} given with the folder of step {step_of(path)}", file=str(path)
            )
        found = step_traces(path)
        if found is None:
            raise InputError("prime-rl step folder holds no traces.jsonl yet", file=str(path))
        return found, f"read {_short(found, path)}"
    rollouts = _rollouts_of(path)
    if rollouts is None:
        return None
    written = [(n, f) for n, folder in _step_dirs(rollouts) if (f := step_traces(folder))]
    if not written:
        raise InputError(
            "prime-rl run directory holds no rollouts/step_N/.../traces.jsonl yet",
            file=str(path),
        )
    if step is None:
        n, found = written[-1]
        return found, f"read step {n}, the latest of {len(written)} ({_short(found, path)})"
    chosen = dict(written)
    if step not in chosen:
        raise InputError(
            f"--step {step}: the run has no traces for that step"
            f" (steps written: {_steps_shown([n for n, _ in written])})",
            file=str(path),
        )
    return chosen[step], f"read step {step} ({_short(chosen[step], path)})"


def _short(found: Path, root: Path) -> str:
    try:
        return str(found.relative_to(root))
    except ValueError:
        return str(found)


def run_of(traces: Path) -> Path | None:
    """The run directory of ``rollouts/step_N/SPLIT/KEEP/traces.jsonl``, else None."""
    parts = traces.parents
    if len(parts) >= 5 and step_of(parts[2]) is not None and parts[3].name == "rollouts":
        return parts[4]
    return None


def in_layout(path: Path | None) -> bool:
    """Whether a file sits where prime-rl writes its traces."""
    return path is not None and path.name == TRACES and run_of(path) is not None


def looks_like(row: dict[str, Any]) -> bool:
    """An episode of prime-rl's traces: a task with a key, a rewards dict and a group."""
    return (
        isinstance(row.get("task"), dict)
        and isinstance(row.get("rewards"), dict)
        and (isinstance(row.get("group"), dict) or isinstance(row.get("run"), dict))
    )


def run_model(run_dir: Path | None) -> tuple[str, str] | None:
    """(model, where) from the run's resolved configs (``configs/*.json``: ``model.name``,
    the orchestrator's first), else None."""
    if run_dir is None:
        return None
    folder = run_dir / "configs"
    try:
        files = sorted(folder.glob("*.json"), key=lambda p: (p.stem != "orchestrator", p.name))
    except OSError:
        return None
    from whilecli.io.sources import read_json_file, side_object, side_text

    for cfg in files:
        doc = side_object(read_json_file(cfg), cfg) or {}
        model = doc.get("model")
        if model is not None and not isinstance(model, (str, dict)):
            side_text(doc, "model", cfg)  # a number or a list: refused, naming the field
        if isinstance(model, str):
            return model, f"configs/{cfg.name}: model"
        name = as_dict(model).get("name")
        if isinstance(name, str):
            return name, f"configs/{cfg.name}: model.name"
    return None


def _score(rewards: Any) -> float | None:
    parts = as_dict(rewards)
    if not parts:
        return None
    total = 0.0
    for part in parts.values():
        part = part if isinstance(part, dict) else {"score": part}
        score, weight = part.get("score"), part.get("weight", 1.0)
        if score is None:
            return None
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise ValueError(f"score {json.dumps(score)[:40]} is not a number")
        if weight is None:
            weight = 1.0
        if isinstance(weight, bool) or not isinstance(weight, (int, float)):
            raise ValueError(f"weight {json.dumps(weight)[:40]} is not a number")
        total += float(score) * float(weight)
    return total


def _truncated(episode: dict[str, Any]) -> bool | None:
    if cut_stop(episode.get("stop_condition")):
        return True
    calls = [c for c in as_list(episode.get("calls")) if isinstance(c, dict)]
    answered = [c for c in calls if c.get("error") is None] or calls
    if answered and answered[-1].get("finish_reason") is not None:
        return cut_reason(answered[-1].get("finish_reason"))
    return False if "stop_condition" in episode else None


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None  # NaN or an infinity is no key: missing, refused at its line
    return str(value)


#: Where a trace node keeps the sampler's per-token log-probs, and its loss mask.
NODE_LOGPROBS = ("logprobs", "completion_logprobs", "token_logprobs")
NODE_MASKS = ("mask", "completion_mask", "loss_mask")


def _first(node: dict[str, Any], names: Sequence[str]) -> Any:
    return next((node[n] for n in names if node.get(n) is not None), None)


def token_lists(episode: dict[str, Any]) -> tuple[list[Any] | None, list[Any] | None]:
    """The episode's per-token log-probs and loss mask: every ``traces[].nodes[]`` list, in
    order, joined (a node that generated nothing, with no log-probs, adds nothing). None where
    no node carries log-probs; the mask is None unless every node with log-probs carries one
    of the same length. A value that is not a list is kept as it is, for the reader to name."""
    logprobs: list[Any] = []
    mask: list[Any] | None = []
    found = False
    for trace in as_list(episode.get("traces")):
        for node in as_list(as_dict(trace).get("nodes")):
            node = as_dict(node)
            values = _first(node, NODE_LOGPROBS)
            if values is None:
                continue
            if not isinstance(values, list):
                return values, None
            found = True
            logprobs.extend(values)
            own = _first(node, NODE_MASKS)
            if mask is not None and isinstance(own, list) and len(own) == len(values):
                mask.extend(own)
            else:
                mask = None
    if not found:
        return None, None
    return logprobs, mask


def convert(
    episodes: Iterable[tuple[int, dict[str, Any]]], path: Path | None, name: str
) -> Converted:
    """Rows from the episodes of one traces file: task = ``task.key``, group = ``group.id``,
    reward = Σ ``rewards[name].score × weight``, truncation from ``stop_condition`` or the last
    call's ``finish_reason``, version from ``run.work.step`` (else ``policy.start``, else none:
    the step folder says when a rollout was trained on, not which policy sampled it), model from
    the run's configs (else the episode's ``agent.config.model``), per-token log-probs (and a
    loss mask) from ``traces[].nodes[]`` (:func:`token_lists`)."""
    run_dir = run_of(path) if path is not None else None
    from_run = run_model(run_dir)
    rows: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    lists = False
    for lineno, episode in episodes:
        task = as_dict(episode.get("task"))
        try:
            reward = _score(episode.get("rewards"))
        except ValueError as err:
            raise InputError(str(err), file=name, line=lineno, field="rewards") from None
        work = as_dict(as_dict(episode.get("run")).get("work"))
        version = work.get("step")
        if version is None:  # no version recorded: none (the folder's step is no version)
            version = as_dict(episode.get("policy")).get("start")
        model = (
            from_run[0]
            if from_run
            else as_dict(as_dict(episode.get("agent")).get("config")).get("model")
        )
        row: dict[str, Any] = {
            "task_id": _text(task.get("key")),
            "group_id": _text(as_dict(episode.get("group")).get("id")),
            "reward": reward,
            "truncated": _truncated(episode),
            "model": model if isinstance(model, str) else None,
            "policy_version": _text(version),
            "step": version if isinstance(version, int) else None,
            "stop_condition": _text(episode.get("stop_condition")),
        }
        if row["model"] is None:
            # the reader takes an unnamed writer's name from policy_version: keep the step only
            del row["policy_version"]
        if episode.get("error") is not None:
            row["error"] = episode["error"]
        logprobs, mask = token_lists(episode)
        if logprobs is not None:
            row["logprobs"] = logprobs
            lists = True
        if mask is not None:
            row["action_mask"] = mask
        rows.append(row)
        positions.append({"line": lineno})
    origins = {
        "task_id": "task.key (group.id kept as group_id)",
        "reward": "Σ rewards[].score × weight",
        "truncated": "stop_condition, else the last call's finish_reason == 'length'",
        "model": from_run[1] if from_run else "agent.config.model",
        "policy_version": "run.work.step",
    }
    if lists:
        origins["logprobs"] = "traces[].nodes[].logprobs, joined (the sampler's)"
    notes = []
    if path is not None and path.parent.name == "effective":
        notes.append(
            f"{name}: prime-rl's effective traces leave out zero-advantage episodes;"
            " the step's all/traces.jsonl holds every episode"
        )
    spelled = {"task_id": "task.key"}
    return Converted(NAME, rows, origins, notes, positions=positions, spelled=spelled)


def read_step(
    path: str | Path,
    *,
    step: int | None = None,
    pass_threshold: float | None = None,
    mapping: dict[str, str] | None = None,
    missing: str = "skip",
) -> Rows:
    """One traces file, one ``step_N`` folder, or a run directory's latest step (or ``step``)
    read into the canonical frame every command reads (:func:`whilecli.io.read.read_rows`)."""
    from whilecli.io.read import read_rows

    target = Path(path)
    picked = pick(target, step)
    if picked is not None:
        target = picked[0]
    return read_rows([str(target)], pass_threshold=pass_threshold, mapping=mapping, missing=missing)


def step_files(run_dir: str | Path, only: Sequence[int] | None = None) -> list[tuple[int, Path]]:
    """(step, traces file) for every step of a run with a traces file written, in order
    (``only``: those steps)."""
    rollouts = _rollouts_of(Path(run_dir))
    if rollouts is None:
        return []
    wanted = None if only is None else set(only)
    return [
        (n, f)
        for n, folder in _step_dirs(rollouts)
        if (wanted is None or n in wanted) and (f := step_traces(folder)) is not None
    ]


def _steps_shown(steps: list[int], most: int = 8) -> str:
    """The written steps for a message: all of them where few, else the first and the last
    few with the count, so a run's early steps are not hidden behind its last eight."""
    if len(steps) <= most:
        return ", ".join(map(str, steps))
    head, tail = steps[:2], steps[-(most - 2) :]
    return f"{', '.join(map(str, head))}, …, {', '.join(map(str, tail))}; {len(steps)} in all"
