"""lm-evaluation-harness ``samples_<task>_<stamp>.jsonl``: one row per (``doc_id``, ``filter``)
with ``doc``, ``target``, ``resps`` / ``filtered_resps`` and one key per metric; newer versions
add a ``metrics`` list and ``filter``, 0.4.x writes neither. The results file beside it
(``results_<stamp>.json``, or renamed) names the model (``model_name``), the task, its metrics
and its config (``configs.<task>.repeats``: how many replies each doc was sampled). The
pass/fail is the first 0/1 metric; a continuous one (``bleu_max``) never is.

A metric or filter that sums up several samples is never one rollout's grade, whatever its
values: ``pass@k`` with k > 1, ``maj@k`` (a majority vote, as gsm8k-cot-self-consistency's
filters), any ``NAME@k``. With ``repeats: k`` (humaneval: ``resps: [[k replies]]``, metrics
``pass@1`` and ``pass@10``, ``lm_eval/tasks/humaneval/humaneval.yaml``) the per-doc ``pass@1``
is the fraction c/k of the doc's k replies that pass (HF ``code_eval``'s estimator at k = 1):
each doc is read as k rollouts, round(pass@1 × k) of them passes. Rows whose only grades sum
up several samples are refused, saying what to add. Such files are converted here
(:func:`convert`); any other is streamed as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from whilecli.errors import InputError
from whilecli.io import draws
from whilecli.io.formats import Converted
from whilecli.io.shape import Shape

NAME = "lm-eval"
#: Where a sample keeps its prompt: the request's context (``arguments.gen_args_0.arg_0`` of
#: a generation request), else lm-eval's own hash of it (``prompt_hash``, written since 0.4.2
#: by ``evaluator.py``). Two tasks' files reuse ``doc_id`` from 0: the prompt tells them apart.
PROMPTS = ("arguments.gen_args_0.arg_0", "prompt_hash")

#: A metric or filter name that sums up k samples: ``pass@10``, ``maj@64``, ``cons@8``.
AT_K = re.compile(r"@(\d+)\b")
#: Keys of a sample row that are not metrics.
ROW_KEYS = frozenset(
    {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics"}
    | {"doc_hash", "prompt_hash", "target_hash", "input", "token_counts"}
)
#: The per-doc fraction of k samples that pass (``pass@1`` of HF ``code_eval``).
FRACTION = "pass@1"


def detect(shape: Shape) -> bool:
    has = shape.has
    return has("doc_id") and (has("filter") or has("resps") or has("filtered_resps"))


def is_sample(row: dict[str, Any]) -> bool:
    """Whether one object is an lm-eval sample row."""
    return "doc_id" in row and any(k in row for k in ("filter", "resps", "filtered_resps"))


def over(name: Any) -> int | None:
    """How many samples a metric or filter name sums up (``pass@10``: 10), where more than
    one; else None (``pass@1``, ``exact_match``, ``strict-match``)."""
    if not isinstance(name, str):
        return None
    found = AT_K.search(name)
    return int(found.group(1)) if found and int(found.group(1)) > 1 else None


def _results(path: Any) -> tuple[Path, dict[str, Any]] | None:
    """The results file beside the samples (the reader's own lookup) and what it holds."""
    if not isinstance(path, Path):
        return None
    from whilecli.io.sources import Source, lmeval_results

    found = lmeval_results(Source(name=str(path), kind="jsonl", path=path))
    if found is None or not isinstance(found[1], dict):
        return None
    return found[0], found[1]


def _task(path: Path, results: dict[str, Any] | None) -> str | None:
    """The task the samples file is named by (``samples_<task>_<stamp>``), else the results
    file's only task."""
    if results is None:
        return None
    tasks = [t for t in (results.get("results") or {}) if isinstance(t, str)]
    for task in sorted(tasks, key=len, reverse=True):
        if path.name.startswith(f"samples_{task}_"):
            return task
    return tasks[0] if len(tasks) == 1 else None


#: The most samples per doc a results file's ``configs.<task>.repeats`` may say (humaneval's
#: pass@k tasks use 20 to 200): past it the number is no sampling plan, and every doc's
#: pass@1 would be expanded into that many rollouts.
MAX_REPEATS = 10_000


def _repeats(
    found: tuple[Path, dict[str, Any]] | None, task: str | None, first: dict[str, Any]
) -> int | None:
    """``configs.<task>.repeats``, where more than one. Refused, naming the results file and
    the field: more than :data:`MAX_REPEATS`, or more replies than the first row's ``resps``
    holds (lm-eval keeps every sample of a doc there, ``resps: [[k replies]]``)."""
    configs = (found[1] if found else {}).get("configs")
    config = configs.get(task) if isinstance(configs, dict) and task is not None else None
    n = config.get("repeats") if isinstance(config, dict) else None
    if not isinstance(n, int) or isinstance(n, bool) or n <= 1:
        return None
    assert found is not None and task is not None
    held = first.get("resps")
    kept = len(held[0]) if isinstance(held, list) and held and isinstance(held[0], list) else None
    if n > MAX_REPEATS or kept is not None and n > kept:
        said = f"{n:.3g}" if n > 10**12 else f"{n:,}"
        why = (
            f"more than {MAX_REPEATS:,} samples per doc"
            if n > MAX_REPEATS
            else f"but the first row's resps holds {kept} replies"
        )
        raise InputError(
            f"repeats {said}: {why}",
            file=str(found[0]),
            field=f"configs.{task}.repeats",
        )
    return n


def _metric_names(
    first: dict[str, Any], results: dict[str, Any] | None, task: str | None
) -> list[str]:
    """The metrics, in the reader's order: the row's ``metrics`` list, the results file's
    (this task's, else every task's), then the row's own numeric keys."""
    names: list[str] = []
    listed = first.get("metrics")
    if isinstance(listed, list):
        names += [n for n in listed if isinstance(n, str)]
    blocks = (results or {}).get("results")
    if isinstance(blocks, dict):
        chosen = [blocks[task]] if task in blocks else list(blocks.values())
        for block in chosen:
            if isinstance(block, dict):
                for key in block:
                    name = str(key).split(",")[0]
                    if not name.endswith("_stderr") and name != "alias":
                        names.append(name)
    names += [k for k, v in first.items() if k not in ROW_KEYS and _number(v)]
    return list(dict.fromkeys(names))


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) or value is None


def _replies(row: dict[str, Any]) -> list[Any] | None:
    """A doc's sampled replies (``filtered_resps[0]``, else ``resps[0]``, a list of texts)."""
    for key in ("filtered_resps", "resps"):
        held = row.get(key)
        if (
            isinstance(held, list)
            and held
            and isinstance(held[0], list)
            and all(isinstance(r, str) for r in held[0])
        ):
            return held[0]
    return None


def _prompt(row: dict[str, Any]) -> str | None:
    """The text the model was given (``arguments.gen_args_0.arg_0``)."""
    args = row.get("arguments")
    first = next(iter(args.values()), None) if isinstance(args, dict) and args else None
    if isinstance(first, dict) and isinstance(first.get("arg_0"), str):
        return str(first["arg_0"])
    return None


def needs_conversion(first: dict[str, Any], path: Any) -> bool:
    """Whether the streaming reader would take a grade that sums up several samples (or
    refuse the per-doc fraction of a repeated task): a metric or filter ``NAME@k`` with
    k > 1 in play, or repeats with a per-doc ``pass@1``."""
    if not is_sample(first):
        return False
    found = _results(path)
    results = found[1] if found else None
    task = _task(path, results)
    names = _metric_names(first, results, task)
    replies = _replies(first)
    k = _repeats(found, task, first) or (len(replies) if replies and len(replies) > 1 else None)
    return (
        any(over(n) for n in names)
        or over(first.get("filter")) is not None
        or (k is not None and FRACTION in names)
        or (
            _scored(first) is not None
            and not any(first.get(n) is not None and _number(first.get(n)) for n in names)
        )
    )


def _scored(row: dict[str, Any]) -> str | None:
    """The metric whose value is an object holding a numeric ``score`` (lmms-eval's
    ``process_results``, e.g. MME's ``{"mme_percetion_score": {"question_id", "category",
    "score"}}``: the object goes to the task's aggregation function, its ``score`` is this
    sample's grade); None where the row holds none, or several."""
    found = [
        key
        for key, value in row.items()
        if key not in ROW_KEYS
        and isinstance(value, dict)
        and _number(value.get("score"))
        and value.get("score") is not None
    ]
    return found[0] if len(found) == 1 else None


def _from_scored(chosen: list[tuple[int, dict[str, Any]]], name: str) -> Converted | None:
    """Rows whose grade is the ``score`` inside a metric object (lmms-eval), one rollout per
    doc, the metric named per row (MME files each row under its category's metric); None
    where some row holds no such object."""
    out: list[dict[str, Any]] = []
    metrics: list[str] = []
    for _, row in chosen:
        metric = _scored(row)
        if metric is None:
            return None
        metrics.append(metric)
        kept = {k: v for k, v in row.items() if k != metric and k != "filter"}
        out.append({**kept, "reward": row[metric]["score"]})
    shown = ", ".join(dict.fromkeys(metrics))
    origins = {"reward": f"{shown}: its score (the metric object of each sample)"}
    return Converted(NAME, out, origins, positions=[{"line": n} for n, _ in chosen])


def convert(rows: Iterable[tuple[int, dict[str, Any]]], path: Any, name: str) -> Converted:
    """lm-eval sample rows whose metrics or filters sum up several samples, as rollouts:
    one rollout per reply where the rows give a per-doc ``pass@1`` over k replies, else one
    per doc with its first per-sample 0/1 metric; refused where no grade is one sample's."""
    lines = list(rows)
    first = lines[0][1]
    found = _results(path)
    results = found[1] if found else None
    task = _task(path, results)
    names = _metric_names(first, results, task)
    aggregates = [n for n in names if over(n)]
    notes: list[str] = []
    filters = list(dict.fromkeys(r.get("filter") for _, r in lines))
    single = [f for f in filters if over(f) is None]
    if not single:
        raise InputError(
            f"lm-eval: every filter ({', '.join(map(str, filters))}) grades a vote over several"
            " samples, never one rollout: add a take_first filter to the task (as"
            " gsm8k-cot-self-consistency's score-first) and rerun",
            file=name,
            field="filter",
        )
    keep = single[0]
    chosen = [(n, r) for n, r in lines if r.get("filter") == keep]
    if len(filters) > 1:
        skipped = [str(f) for f in filters if f != keep]
        notes.append(
            f"lm-eval writes one row per (doc, filter), not rollouts: the rows of filter"
            f" {keep!r} are read and the others' ({', '.join(skipped)}) skipped"
            + ("; a vote over several samples is no one rollout's grade" if aggregates else "")
        )
    replies = _replies(first)
    k = _repeats(found, task, first) or (len(replies) if replies and len(replies) > 1 else None)
    if aggregates:
        notes.append(
            f"lm-eval: {', '.join(aggregates)} sum{'s' if len(aggregates) == 1 else ''} up"
            " several samples of each doc: never one rollout's grade"
        )
    for metric in names:
        if over(metric) or metric not in first and not any(metric in r for _, r in chosen):
            continue
        values = [r.get(metric) for _, r in chosen]
        if any(not _number(v) for v in values):
            continue
        if metric == FRACTION and k is not None:
            return _expanded(chosen, metric, k, name, notes, task)
        if all(v in (0, 1) for v in values if v is not None):
            origins = {"reward": f"{metric} (the first per-sample 0/1 metric)"}
            out = []
            for _, row in chosen:
                kept = {
                    key: v for key, v in row.items() if key not in aggregates and key != "filter"
                }
                out.append({**kept, "metrics": [metric]})
            return Converted(NAME, out, origins, notes, positions=[{"line": n} for n, _ in chosen])
    scored = _from_scored(chosen, name)
    if scored is not None:
        scored.notes[:0] = notes
        return scored
    shown = ", ".join(aggregates) or "no 0/1 metric"
    raise InputError(
        f"lm-eval: the rows hold no one rollout's grade ({shown}: a metric over several samples"
        " is an aggregate, not a pass/fail): add pass@1 to the task's metrics (pass_at_k with"
        " k: [1, ...]) and rerun",
        file=name,
        field="reward",
    )


def _expanded(
    chosen: list[tuple[int, dict[str, Any]]],
    metric: str,
    k: int,
    name: str,
    notes: list[str],
    task: str | None,
) -> Converted:
    """Each doc as ``k`` rollouts, round(pass@1 × k) of them passes (the replies with text
    first: lm-eval does not say which reply passed): the rule of
    :func:`whilecli.io.draws.passes_of`, one for every writer of a mean over k samples."""
    out: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    for lineno, row in chosen:
        fraction = row.get(metric)
        replies = _replies(row) or []
        passes = None if fraction is None else draws.passes_of(fraction, k)
        if fraction is not None and passes is None:
            raise InputError(
                f"lm-eval: {metric} is {fraction}, not a count of passes out of the {k}"
                " samples the task's repeats say each doc has: the rows are not k"
                " rollouts per doc",
                file=name,
                line=lineno,
                field=metric,
            )
        order = sorted(range(k), key=lambda j: j >= len(replies) or not replies[j].strip())
        passed = set(order[: passes or 0])
        base = {"doc_id": row.get("doc_id"), "prompt": _prompt(row)}
        for j in range(k):
            grade = None if fraction is None else float(j in passed)
            reply = replies[j] if j < len(replies) else None
            out.append({**base, "completion": reply, metric: grade, "metrics": [metric]})
            positions.append({"line": lineno})
    notes.append(
        f"lm-eval: {task or 'the task'} sampled {k} replies per doc (repeats) and writes"
        f" {metric} = passes/{k} per doc, not which reply passed: each doc is read as {k}"
        f" rollouts, round({metric} × {k}) of them passes"
    )
    origins = {"reward": f"{metric} × {k} (repeats): passes per doc, one rollout per reply"}
    return Converted(NAME, out, origins, notes, positions=positions)
