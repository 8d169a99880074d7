"""Render a :class:`~whilecli.route.model.Route`: text, JSON, Markdown or GitHub annotations.

Every format is a pure function of the route, so the same rows always print the same
report. The text form (Rich) lives in :mod:`whilecli.route.render_text`, the Markdown and
GitHub forms in :mod:`whilecli.route.render_markdown`; this module holds the dispatcher, the
JSON form (``Route.to_dict()``, schema in ``docs/json-schema.md``) and the wording and value
formatting the formats share.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from whilecli import jsonout
from whilecli.errors import UsageError
from whilecli.names import METHOD_LABELS
from whilecli.route.checks import sampler_copy
from whilecli.route.model import CheckResult, Rate, Route, Status
from whilecli.textstyle import fraction as number

FORMATS: tuple[str, ...] = ("text", "json", "markdown", "github")

#: The route-table row each ``Route.route`` stands for (pick-a-method, section 6).
ROUTE_LABELS: dict[str, str] = {
    "fix-reward": "fix the reward: a cut-off reply passes",
    "single-rollout": "one rollout per prompt (k = 1)",
    "floor": "floor: every task fails",
    "saturated": "saturated: every task passes",
    "no-split": "no group splits: tasks only at 0 and at 1",
    "repeated-draws": "one draw repeated per task: the band is not measured",
    "teacher": "a stronger teacher with the same tokenizer",
    "off-policy": "another model wrote these rows",
    "grpo": "split tasks, on-policy, a program grades",
}


#: The status words every format prints.
STATUS_WORDS: dict[Status, str] = {
    Status.PASS: "pass",
    Status.FAIL: "fail",
    Status.UNKNOWN: "unknown",
    Status.NOT_REACHED: "not reached",
    Status.NOT_ASKED: "not asked",
}


def method_label(name: str | None) -> str:
    """The prose name of a method; ``None`` means nothing can train yet."""
    if name is None:
        return "nothing can train yet"
    return METHOD_LABELS.get(name, name)


def route_label(name: str) -> str:
    """The route-table row a route key stands for."""
    return ROUTE_LABELS.get(name, name)


#: The route-table row each route stands for in the headline, before what was checked.
_HEAD_BASES: dict[str, str] = {
    "fix-reward": "fix the reward: a cut-off reply passes",
    "single-rollout": "one rollout per prompt (k = 1)",
    "floor": "floor: every task fails",
    "saturated": "saturated: every task passes",
    "no-split": "no group splits",
    "repeated-draws": "one draw repeated per task (identical completions)",
    "teacher": "a stronger teacher",
    "off-policy": "another model wrote these rows",
    "grpo": "split tasks",
}

#: The grader as the headline names it.
GRADER_WORDS: dict[str, str] = {
    "program": "a program grades",
    "judge": "a judge grades",
    "unknown": "grader unknown (rows not scanned)",
}


def _unknown_phrase(check: CheckResult) -> str:
    """A check that could not tell, named as unknown with its reason in a few words."""
    m = check.measured
    if check.key == "truncated_passes":
        known = m.get("rows_with_truncation_recorded") or 0
        why = "not recorded" if not known else f"recorded on {known} of {m.get('rows')} rows"
        if not known and m.get("truncation_unread"):
            why = f"{m['truncation_unread']} not read"
        return f"truncation unknown ({why})"
    if check.key == "teacher" and m.get("cannot_compare"):
        return "teacher unknown (no shared task)"
    if check.key == "teacher":
        return "teacher's truncation unknown (not recorded)"
    if check.key == "tokenizer" and m.get("padded_apart"):
        return "tokenizer unknown (sizes apart by padding only)"
    if check.key == "tokenizer":
        return "tokenizer unknown (no vocab given)"
    if check.key == "band" and "repeated_tasks" in m:
        return "band unknown (not measured)"
    if check.key == "on_policy":
        if "no --model" in check.why:
            why = "no --model"
        elif "unnamed_paths" in m:
            why = "rows name a path, not a model"
        elif "unnamed_labels" in m:
            why = "rows name a label, not a model"
        elif "unsure_builds" in m:
            said = str(m.get("unsure_why", ""))
            why = (
                "rows name a thinking label"
                if said.startswith("a thinking label")
                else "rows name a chat label"
                if said.startswith("a chat label")
                else "rows name a LoRA adapter"
                if said.startswith("a LoRA")
                else "rows name a dated build"
                if said.startswith("a date")
                else "rows name a training checkpoint"
                if said.startswith("a training checkpoint")
                else "rows name a provider's build"
            )
        elif "unversioned_rows" in m:
            why = "rows carry no version"
        else:
            why = "rows name no model"
        return f"on-policy unknown ({why})"
    return f"{check.key.replace('_', ' ')} unknown"


def route_reason(route: Route) -> str:
    """The headline's reason: the route's row, and only what was checked.

    "on-policy" only when check 6 passed, "the same tokenizer" only when check 5 passed,
    "a program grades" only when no judge was detected; a check that could not tell is
    named as unknown.
    """
    if route.route == "fix-reward":
        return _HEAD_BASES["fix-reward"]
    by_key = {c.key: c for c in route.checks}
    parts = [_HEAD_BASES.get(route.route, route_label(route.route))]
    claimed = [c for c in route.checks if c.reached]
    teacher_at_1 = route.route == "single-rollout" and "opd" in route.plan
    if teacher_at_1:
        parts.append("a teacher clears (OPD)")
        claimed += [by_key[k] for k in ("teacher", "tokenizer") if k in by_key]
    tok = by_key.get("tokenizer")
    same = tok is not None and tok.status is Status.PASS
    if (route.route == "teacher" or teacher_at_1) and same:
        parts[-1] += " with the same tokenizer"
    policy = by_key.get("on_policy")
    if policy is not None and policy.reached:
        if policy.status is Status.PASS:
            parts.append("on-policy")
        elif policy.status is Status.FAIL and not policy.decides:
            parts.append(f"{sampler_copy(policy)} wrote rows (Async)")
    for check in claimed:
        unknown = check.status is Status.UNKNOWN
        if check.key == "tokenizer" and check.status is Status.FAIL:
            unknown = check.measured.get("teacher_vocab") is None or (
                check.measured.get("student_vocab") is None
            )
        if unknown:
            phrase = _unknown_phrase(check)
            if phrase not in parts:
                parts.append(phrase)
    parts.append(GRADER_WORDS.get(route.grader, GRADER_WORDS["unknown"]))
    return ", ".join(parts)


def headline(route: Route) -> str:
    """The one-line verdict, ``provisional:`` first when the evidence is thin."""
    word = "provisional: " if route.provisional else ""
    return f"{word}{method_label(route.method)} (route: {route_reason(route)})"


def verdict(route: Route) -> str:
    """The one-line verdict every format opens with."""
    return route.headline or headline(route)


def evidence_items(route: Route, keep: Callable[[str], str] = str) -> list[str]:
    """The deciding evidence, one item each: what it rests on (check N) with its interval
    and n, then pass@1; ``keep`` marks a rate's text (the text form keeps it on one line).
    Every format prints these items."""
    out: list[str] = []
    for ev in route.evidence:
        rate = ev.get("interval")
        what = f"{ev['what']} (check {ev['check']})"
        if isinstance(rate, Rate):
            what = f"{ev['label']} {keep(rate.format())}: {what}"
        out.append(what)
    p1 = route.summary.get("pass_at_1")
    if isinstance(p1, Rate):
        out.append(f"pass@1 {keep(p1.format())}")
    return out


def quality_lines(route: Route) -> list[str]:
    """What reading found that moves the verdict, one item each (every format's)."""
    return [f"{f.found}: {f.moves}" for f in route.data_quality]


def exit_line(route: Route) -> str | None:
    """What made the exit code 1, on one line (None when it is 0)."""
    if not route.exit_reasons:
        return None
    return f"exit {route.exit_code}: " + "; ".join(route.exit_reasons)


def format_value(value: Any, digits: int = 2) -> str:
    """One measured value on one line: a Rate with its interval and n, numbers, lists, maps."""
    if isinstance(value, Rate):
        return value.format(digits)
    if isinstance(value, Status):
        return STATUS_WORDS[value]
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return "n/a"
        if abs(value) < 1e15 and value == int(value):
            return str(int(value))
        return number(value, digits)
    if isinstance(value, Mapping):
        if not value:
            return "none"
        return ", ".join(f"{k}: {format_value(v, digits)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(format_value(v, digits) for v in value)
    return str(value)


#: How measured keys print where the key's words alone would read badly.
MEASURED_LABELS: dict[str, str] = {
    "pass_at_1": "pass@1",
    "teacher_pass_at_1": "teacher pass@1",
    "student_pass_at_1": "student pass@1",
    "min_rows_per_group": "fewest rows in a group",
    "max_rows_per_group": "most rows in a group",
    "in_band_share": "in-band share",
    "on_policy_share": "on-policy share",
    "sampler_logprobs": "sampler log-probs",
}


def measured_label(key: str) -> str:
    """A measured key in words: ``expected_split_share_k4`` → ``expected split share at
    k=4``, ``pass_at_1`` → ``pass@1``, else the key with spaces for underscores."""
    if key in MEASURED_LABELS:
        return MEASURED_LABELS[key]
    if key.startswith("expected_split_share_k") and key[22:].isdigit():
        return f"expected split share at k={key[22:]}"
    return key.replace("_", " ")


def measured_value(value: Any, digits: int = 2) -> str:
    """One measured value in the report's one format: a Rate as ``0.62 [0.50, 0.73] n=64
    tasks (512 rows)``, a fraction with ``digits`` decimals, a count as an integer, a map of
    counts (rows per model) as ``name (N rows)``, an empty map or list as ``none``."""
    if isinstance(value, Rate):
        return value.format(digits)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return number(value, digits)
    if isinstance(value, Mapping):
        if not value:
            return "none"
        if all(isinstance(v, int) and not isinstance(v, bool) for v in value.values()):
            return ", ".join(
                f"{'(none named)' if k is None else k} ({rows_words(v)})" for k, v in value.items()
            )
        return ", ".join(f"{k}: {measured_value(v, digits)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(measured_value(v, digits) for v in value) if value else "none"
    return format_value(value, digits)


def rows_words(n: int) -> str:
    """``1 row``, ``512 rows``."""
    return f"{n} row" if n == 1 else f"{n} rows"


#: Labels of one check's measurements where the key's own label names another quantity:
#: the band's pass@1 counts its grouped tasks, the report's pass@1 every task.
CHECK_LABELS: dict[tuple[str, str], str] = {("band", "pass_at_1"): "grouped pass@1"}


def measured_lines(measured: Mapping[str, Any], check: str = "") -> list[tuple[str, str]]:
    """``(label, value)`` lines of a check's measurements: one per value, a nested map (the
    band's ``need``) spread over one line per entry; rows per model stay on one line.
    ``check`` (its key) labels a measurement that the same key names elsewhere as another
    quantity (:data:`CHECK_LABELS`)."""
    out: list[tuple[str, str]] = []
    for key, value in measured.items():
        label = CHECK_LABELS.get((check, key)) or measured_label(key)
        if isinstance(value, Mapping) and value and key not in ("models", "versions"):
            out += [
                (f"{label} {measured_label(str(k))}", measured_value(v)) for k, v in value.items()
            ]
        else:
            out.append((label, measured_value(value)))
    return out


def flatten(mapping: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """``(label, formatted value)`` pairs of a nested map, one pair per leaf or Rate.

    A nested map whose values are all plain (no Rate, no map) stays on one line; one
    holding Rates or maps is spread over one line per entry (``pass@k 4``, ``pass@k 8``).
    """
    out: list[tuple[str, str]] = []
    for key, value in mapping.items():
        label = f"{prefix}{key}"
        if isinstance(value, Mapping) and any(
            isinstance(v, (Rate, Mapping)) for v in value.values()
        ):
            out.extend(flatten(value, prefix=f"{label} "))
        else:
            out.append((label, format_value(value)))
    return out


def histogram_bins(histogram: Any) -> list[tuple[str, int]]:
    """``(label, count)`` rows of the per-task pass-rate histogram in ``summary``.

    Reads ``counts`` (one per bin) with ``edges`` (bins + 1 boundaries, default ten equal
    bins over [0, 1], the last one closed) and, when present, the exact counts at 0 and at 1
    (``at_0``/``at_1``), which the end bins include. Those are split out as rows of their
    own (``0`` first, ``1`` last, the end bins opened to match), so the rows partition the
    tasks: their counts sum to ``sum(counts)``. Anything else gives no rows.
    """
    if not isinstance(histogram, Mapping):
        return []
    counts = histogram.get("counts")
    if not isinstance(counts, (list, tuple)) or not counts:
        return []
    counts = [int(c) for c in counts]
    edges = histogram.get("edges")
    if not isinstance(edges, (list, tuple)) or len(edges) != len(counts) + 1:
        edges = [i / len(counts) for i in range(len(counts) + 1)]
    at_0 = histogram.get("at_0")
    at_1 = histogram.get("at_1")
    zero = int(at_0) if isinstance(at_0, int) and 0 <= at_0 <= counts[0] else None
    one = int(at_1) if isinstance(at_1, int) and 0 <= at_1 <= counts[-1] else None
    if len(counts) == 1 and zero is not None and one is not None and zero + one > counts[0]:
        one = None
    rows: list[tuple[str, int]] = []
    if zero is not None:
        rows.append(("0", zero))
        counts[0] -= zero
    if one is not None:
        counts[-1] -= one
    last = len(counts) - 1
    for i, count in enumerate(counts):
        open_ = "(" if i == 0 and zero is not None else "["
        close = "]" if i == last and one is None else ")"
        rows.append((f"{open_}{float(edges[i]):g}, {float(edges[i + 1]):g}{close}", count))
    if one is not None:
        rows.append(("1", one))
    return rows


#: How summary keys print.
SUMMARY_LABELS: dict[str, str] = {
    "pass_at_1": "pass@1",
    "pass_at_k": "pass@",
    "pass_hat_k": "pass^",
    "grouped_tasks": "grouped tasks",
    "single_tasks": "single tasks",
    "partial_rows": "partial rows",
}


def summary_lines(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(label, value)`` lines of the headline rates and counts (the histogram apart).

    ``pass_at_k``/``pass_hat_k`` maps ``{k: Rate}`` print as ``pass@k``/``pass^k`` lines.
    """
    out: list[tuple[str, str]] = []
    for key, value in summary.items():
        if key == "histogram":
            continue
        label = SUMMARY_LABELS.get(key, key)
        if key in ("pass_at_k", "pass_hat_k") and isinstance(value, Mapping):
            out.extend((f"{label}{k}", format_value(v)) for k, v in value.items())
        elif isinstance(value, Mapping):
            out.extend(flatten(value, prefix=f"{label} "))
        else:
            out.append((label, format_value(value)))
    return out


def histogram_title(histogram: Any) -> str:
    """The histogram's heading: which tasks it counts."""
    population = histogram.get("population") if isinstance(histogram, Mapping) else None
    return f"{population or 'tasks'} by pass rate"


def bar(count: int, biggest: int, width: int = 40) -> str:
    """A bar of ``count`` scaled so ``biggest`` fills ``width`` cells (a non-zero count shows)."""
    if biggest <= 0 or count <= 0:
        return ""
    return "█" * max(1, round(width * count / biggest))


def to_json(route: Route) -> str:
    """The JSON report: ``Route.to_dict()``, keys in the documented order, two-space indent."""
    return jsonout.dumps(route.to_dict(), indent=2, sort_keys=False) + "\n"


def render(route: Route, fmt: str = "text", *, width: int = 100, file: str | None = None) -> str:
    """The report as a string in one of :data:`FORMATS` (text without colour).

    ``file`` is the path GitHub annotations point at (the first input path by default).
    """
    if fmt == "json":
        return to_json(route)
    if fmt == "markdown":
        from whilecli.route.render_markdown import to_markdown

        return to_markdown(route)
    if fmt == "github":
        from whilecli.route.render_markdown import to_github

        return to_github(route, file=file)
    if fmt == "text":
        from whilecli.route.render_text import text_to_string

        return text_to_string(route, width=width)
    raise UsageError(f"unknown --format {fmt!r}: use one of {', '.join(FORMATS)}")
