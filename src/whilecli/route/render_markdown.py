"""The Markdown report (a CI job summary) and GitHub workflow annotations of ``whilecli route``.

Annotations follow GitHub's workflow-command syntax, ``::error file=PATH,title=T::MESSAGE``:
the message escapes ``%``, ``\\r`` and ``\\n`` as ``%25``, ``%0D`` and ``%0A``; property
values additionally escape ``:`` and ``,`` as ``%3A`` and ``%2C``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whilecli import textstyle
from whilecli.route.drill import place_words, show_sections
from whilecli.route.model import Route, Status, requirements
from whilecli.route.report import (
    STATUS_WORDS,
    evidence_items,
    exit_line,
    format_value,
    histogram_bins,
    histogram_title,
    measured_lines,
    method_label,
    quality_lines,
    route_reason,
    summary_lines,
    verdict,
)


def md_cell(text: str) -> str:
    """Text safe inside one Markdown table cell: pipes escaped, newlines as ``<br>``."""
    return (
        str(text)
        .replace("\\", "\\\\")
        .replace("|", "\\|")
        .replace("\r\n", "<br>")
        .replace("\n", "<br>")
        .replace("\r", "<br>")
    )


def to_markdown(route: Route) -> str:
    """The report as GitHub-flavoured Markdown: verdict heading, checks, methods, needs, GPU."""
    word = "provisional: " if route.provisional else ""
    out: list[str] = [
        f"## whilecli route: {word}{method_label(route.method)}",
        "",
        f"**Route:** {route_reason(route)} (`{route.route}`), exit code {route.exit_code}",
        "",
    ]
    stop = exit_line(route)
    if stop:
        out += [f"**{stop}**", ""]
    if route.provisional_why:
        out += [f"**{route.provisional_why}**", ""]
    out += [route.why, ""]
    if route.plan:
        out += ["**Plan**", ""] + [f"{i}. {step}" for i, step in enumerate(route.plan, 1)] + [""]
    out += _list("Evidence", evidence_items(route))
    found = quality_lines(route)
    out += _list("Data quality", found or ["nothing found that moves the verdict"])
    out += ["### Checks", "", "| # | check | status | measured | why |", "|---|---|---|---|---|"]
    for i, check in enumerate(route.checks, 1):
        status = STATUS_WORDS[check.status]
        if not check.reached and check.status is not Status.NOT_REACHED:
            status += " (context)"
        if check.decides:
            status += f" → `{check.decides}`"
        measured = "\n".join(f"{k}: {v}" for k, v in measured_lines(check.measured, check.key))
        unlisted = [w for w in check.warnings if w not in route.warnings]  # else under Warnings
        why = "\n".join([check.why] + [textstyle.warning(w) for w in unlisted])
        cells = (str(i), check.title, status, measured, why)
        out.append("| " + " | ".join(md_cell(c) for c in cells) + " |")
    out += ["", "### Methods", "", "| method | fits | why |", "|---|---|---|"]
    for score in route.methods:
        name = f"**{score.name}**" if score.name == route.method else score.name
        out.append(f"| {md_cell(name)} | {'ok' if score.ok else 'no'} | {md_cell(score.why)} |")
    out.append("")
    out += _summary(route.summary)
    if route.needs:
        out += [
            "### Needs",
            "",
            *[f"- {md_cell(r)}" for r in requirements(route.needs, route.route)],
            "",
        ]
    out += _before_gpu(route.before_gpu)
    out += _list("Notes", route.notes)
    out += _list("Warnings", route.warnings)
    out += show_markdown(route.show)
    return "\n".join(out).rstrip("\n") + "\n"


def _summary(summary: Mapping[str, Any]) -> list[str]:
    lines = summary_lines(summary)
    rows = histogram_bins(summary.get("histogram"))
    if not lines and not rows:
        return []
    out = ["### Pass rates", ""] + [f"- {k}: {v}" for k, v in lines]
    if rows:
        title = md_cell(histogram_title(summary.get("histogram")))
        out += ["", f"| pass rate | {title} |", "|---|---|"]
        out += [f"| {md_cell(label)} | {count} |" for label, count in rows]
    return out + [""]


def _bullets(title: str, mapping: Mapping[str, Any]) -> list[str]:
    if not mapping:
        return []
    out = [f"### {title}", ""]
    for key, value in mapping.items():
        if isinstance(value, (list, tuple)):
            out.append(f"- {key}:")
            out += [f"  - {format_value(v)}" for v in value]
        else:
            out.append(f"- {key}: {format_value(value)}")
    return out + [""]


def _before_gpu(before: Mapping[str, Any]) -> list[str]:
    """The random-control advice, whose first sentence gives the held-out size (the numbers
    behind it are in the JSON report's ``before_gpu.holdout``)."""
    advice = before.get("random_control")
    if isinstance(advice, (list, tuple)) and advice:
        return _list("Before the GPU", [str(a) for a in advice])
    return _bullets("Before the GPU", before)


def show_markdown(show: Mapping[str, Any]) -> list[str]:
    """``--show``: each count asked for, then one bullet per task with its first row."""
    if not show:
        return []
    out = ["### Tasks behind the counts", ""]
    for head, items in show_sections(dict(show)):
        out += [f"**{md_cell(head)}**", ""]
        out += [f"- {md_cell(item)}" for item in items]
        out += [""] if items else []
    return out


def show_annotations(show: Mapping[str, Any]) -> list[str]:
    """``--show``: one notice per task listed, pointing at its first row (``line=`` for a
    JSON Lines file; a Parquet or converted row is named in the message)."""
    from whilecli.route.drill import KIND_WORDS

    lines: list[str] = []
    for kind, entry in show.items():
        title = f"whilecli route: {KIND_WORDS[kind][0]}"
        for item in entry["shown"]:
            message = f"{item['task_id']}: first row at {place_words(item)}"
            lines.append(
                annotation("notice", message, file=item["file"], line=item["line"], title=title)
            )
        if entry["left_out"]:
            message = f"{entry['left_out']} more not listed (--limit)"
            lines.append(annotation("notice", message, title=title))
    return lines


def _list(title: str, lines: list[str]) -> list[str]:
    if not lines:
        return []
    return [f"### {title}", ""] + [f"- {line}" for line in lines] + [""]


def escape_data(text: str) -> str:
    """Escape an annotation message (GitHub: ``%``, ``\\r``, ``\\n``)."""
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape an annotation property value (the message rules plus ``:`` and ``,``)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(
    level: str,
    message: str,
    *,
    file: str | None = None,
    title: str | None = None,
    line: int | None = None,
) -> str:
    """One workflow command line, e.g. ``::warning file=rows.jsonl,title=band::few split tasks``
    (``line=N`` after the file when given)."""
    props = []
    if file:
        props.append(f"file={escape_property(file)}")
        if line is not None:
            props.append(f"line={int(line)}")
    if title:
        props.append(f"title={escape_property(title)}")
    head = f"::{level} {','.join(props)}" if props else f"::{level}"
    return f"{head}::{escape_data(message)}"


def to_github(route: Route, *, file: str | None = None) -> str:
    """Workflow annotations: errors for failed checks and fix-reward, warnings, the verdict.

    ``file`` defaults to the first input path (``inputs["paths"][0]``).
    """
    if file is None:
        paths = route.inputs.get("paths") if isinstance(route.inputs, Mapping) else None
        file = str(paths[0]) if isinstance(paths, (list, tuple)) and paths else None
    lines: list[str] = []
    stop = exit_line(route)
    if stop and route.route != "fix-reward":
        lines.append(annotation("error", stop, file=file, title="whilecli route: exit 1"))
    if route.provisional_why:
        message = f"{verdict(route)}. {route.provisional_why}"
        lines.append(annotation("warning", message, file=file, title="whilecli route: provisional"))
    if route.route == "fix-reward":
        lines.append(
            annotation("error", route.why, file=file, title="whilecli route: fix the reward")
        )
    for check in route.checks:
        title = f"whilecli route: {check.title}"
        if check.status is Status.FAIL:
            level = "error" if check.reached else "warning"
            lines.append(annotation(level, check.why, file=file, title=title))
        elif check.status is Status.UNKNOWN:
            lines.append(annotation("warning", check.why, file=file, title=title))
        for warning in check.warnings:
            if warning not in route.warnings:
                lines.append(annotation("warning", warning, file=file, title=title))
    for warning in route.warnings:
        lines.append(annotation("warning", warning, file=file, title="whilecli route"))
    lines += show_annotations(route.show)
    message = f"{verdict(route)}. {route.why}"
    lines.append(annotation("notice", message, title="whilecli route"))
    return "\n".join(lines) + "\n"
