"""``whilecli check``: the CI gate on an eval dump. Route the rows, then enforce named policies.

Exit 1 when any named policy holds (one line per failed policy says why), 0 otherwise, 2 on
bad usage or unreadable input. The policies come from ``--fail-on``, else from the
repository's ``[tool.while] fail-on`` (``pyproject.toml`` or ``while.toml``), else
:data:`~whilecli.route.policies.DEFAULT_CHECK_POLICIES`. This module also renders policy
results for ``whilecli route --fail-on``: text lines, a Markdown table, GitHub annotations and
the ``policies`` object of the JSON report (``docs/json-schema.md``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import typer

from whilecli import jsonout
from whilecli.commands import route as route_cmd
from whilecli.commands._common import STEP, user_errors

if TYPE_CHECKING:
    from whilecli.route.model import Route
    from whilecli.route.policies import Gate


def enforce(
    route: Route,
    *,
    fail_on: Sequence[str] | None,
    judge_audit: str | None,
    default: tuple[str, ...] = (),
) -> Gate | None:
    """The gate of :func:`~whilecli.route.policies.named_policies` on one route (None where
    none is named)."""
    from whilecli.route.policies import named_policies

    policies = named_policies(fail_on=fail_on, judge_audit=judge_audit, default=default)
    return None if policies is None else policies.on(route)


def _file(route: Route) -> str | None:
    paths = route.inputs.get("paths") if isinstance(route.inputs, dict) else None
    return str(paths[0]) if isinstance(paths, list) and paths else None


def summary_line(gate: Gate, who: str) -> str:
    """One line: how many of the named policies failed, and which."""
    if not gate.names:
        return f"{who}: no policy named"
    if gate.failed:
        names = ", ".join(r.name for r in gate.failed)
        return f"{who}: {len(gate.failed)} of {len(gate.names)} policies failed ({names})"
    return f"{who}: ok, no named policy holds ({', '.join(gate.names)})"


def policy_lines(gate: Gate, who: str) -> list[str]:
    """Text: one ``failed NAME: reason`` line per failed policy, then the summary line."""
    return [f"failed {r.name}: {r.reason}" for r in gate.failed] + [summary_line(gate, who)]


def policies_markdown(gate: Gate, heading: str) -> str:
    """A Markdown table of every named policy: ``fail`` with its reason, or ``ok``."""
    from whilecli.route.render_markdown import md_cell

    out = [heading, "", summary_line(gate, "policies"), ""]
    out += ["| policy | result | reason |", "|---|---|---|"]
    for r in gate.results:
        result = "**fail**" if r.failed else "ok"
        out.append(f"| `{r.name}` | {result} | {md_cell(r.reason or '')} |")
    return "\n".join(out) + "\n"


def github_policy_lines(gate: Gate, route: Route, who: str) -> list[str]:
    """One ``::error file=PATH,title=WHO: NAME::reason`` annotation per failed policy."""
    from whilecli.route.render_markdown import annotation

    file = _file(route)
    return [
        annotation("error", r.reason or r.name, file=file, title=f"{who}: {r.name}")
        for r in gate.failed
    ]


def render_check(gate: Gate, route: Route, fmt: str) -> str:
    """The report of ``whilecli check`` in one of text, json, markdown, github."""
    if fmt == "json":
        from whilecli.route.policies import gated_report

        report = gated_report(route, gate, route_counts=False)
        return jsonout.dumps(report, indent=2) + "\n"
    if fmt == "markdown":
        return check_markdown(gate, route)
    if fmt == "github":
        from whilecli.route.render_markdown import annotation, show_annotations

        lines = github_policy_lines(gate, route, "whilecli check") + show_annotations(route.show)
        lines.append(annotation("notice", summary_line(gate, "whilecli check"), file=_file(route)))
        return "\n".join(lines) + "\n"
    from whilecli import textstyle

    columns = textstyle.width(sys.stdout)
    wrapped = [
        w for line in policy_lines(gate, "whilecli check") for w in textstyle.wrap(line, columns)
    ]
    found = [f"{f.found}: {f.moves}" for f in route.data_quality]  # what reading found
    wrapped += textstyle.said("warning", found, columns)
    text = "\n".join(wrapped) + "\n"
    if route.show:
        from whilecli.route.render_text import show_text, text_console

        buffer, console = text_console()
        show_text(route.show, console)
        text += buffer.getvalue()
    return text


def check_markdown(gate: Gate, route: Route) -> str:
    """The policy table, then the route's Markdown report (a CI job summary)."""
    from whilecli.route.report import render

    verdict = "fail" if gate.failed else "ok"
    head = f"## whilecli check: {verdict}"
    return policies_markdown(gate, head) + "\n" + render(route, "markdown")


@user_errors
def check_command(
    paths: list[str] = route_cmd.PATHS,
    fail_on: list[str] | None = route_cmd.FAIL_ON,
    judge_audit: str | None = route_cmd.JUDGE_AUDIT,
    teacher: list[str] | None = route_cmd.TEACHER,
    model: str | None = route_cmd.MODEL,
    size_b: float | None = route_cmd.SIZE_B,
    pass_threshold: float | None = route_cmd.PASS_THRESHOLD,
    missing: str = route_cmd.MISSING,
    mapping: list[str] | None = route_cmd.MAPPING,
    teacher_mapping: list[str] | None = route_cmd.TEACHER_MAPPING,
    step: int | None = STEP,
    input_format: str | None = route_cmd.INPUT_FORMAT,
    teacher_vocab: int | None = route_cmd.TEACHER_VOCAB,
    student_vocab: int | None = route_cmd.STUDENT_VOCAB,
    teacher_tokenizer: str | None = route_cmd.TEACHER_TOKENIZER,
    student_tokenizer: str | None = route_cmd.STUDENT_TOKENIZER,
    output: route_cmd.OutputFormat = route_cmd.FORMAT,
    seed: int | None = route_cmd.SEED,
    pool: bool = route_cmd.POOL,
    show: list[str] | None = route_cmd.SHOW,
    limit: int = route_cmd.LIMIT,
) -> None:
    """Gate an eval dump in CI: exit 1 when a named policy holds, with one line per policy."""
    from whilecli.route.policies import DEFAULT_CHECK_POLICIES, gated_exit_code, named_policies

    overrides = route_cmd._overrides(
        model,
        size_b,
        teacher_vocab,
        student_vocab,
        teacher_tokenizer,
        student_tokenizer,
        False,
        seed,
    )
    overrides.update(route_cmd.show_overrides(show, limit))
    policies = named_policies(
        fail_on=fail_on, judge_audit=judge_audit, default=DEFAULT_CHECK_POLICIES
    )
    assert policies is not None  # a default always applies
    fmt = output.value
    inputs = [*paths, *(teacher or []), judge_audit, teacher_tokenizer, student_tokenizer]
    summary_to = route_cmd.step_summary(fmt, inputs)
    stdin_data = route_cmd.read_stdin(paths, teacher)
    route = route_cmd.route_rows(
        paths,
        stdin_data,
        teacher=teacher,
        mapping=mapping,
        teacher_mapping=teacher_mapping,
        pass_threshold=pass_threshold,
        missing=missing,
        input_format=input_format,
        overrides=overrides,
        pool=pool,
    )
    gate = policies.on(route)
    sys.stdout.write(render_check(gate, route, fmt))
    sys.stdout.flush()
    if summary_to is not None:
        route_cmd.append_summary(summary_to, check_markdown(gate, route), inputs=inputs)
    raise typer.Exit(gated_exit_code(route, gate, route_counts=False))
