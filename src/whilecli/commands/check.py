"""``whilecli check``: the CI gate on an eval dump. Route the rows, then enforce named policies.

Exit 1 when any named policy holds (one line per failed policy says why), 0 otherwise, 2 on
bad usage or unreadable input. The policies come from ``--fail-on``, else from the
repository's ``[tool.while] fail-on`` (``pyproject.toml`` or ``while.toml``), else
:data:`~whilecli.route.policies.DEFAULT_CHECK_POLICIES`. This module also renders policy
results for ``whilecli route --fail-on``: text lines, a Markdown table, GitHub annotations and
the ``policies`` object of the JSON report (``docs/json-schema.md``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import typer

from whilecli import jsonout
from whilecli.commands import route as route_cmd
from whilecli.commands._common import STEP, user_errors

if TYPE_CHECKING:
    from whilecli.route.model import Route
    from whilecli.route.policies import Evidence, PolicyResult


@dataclass
class Gate:
    """The policies enforced on one route, where they came from, and what they found."""

    names: tuple[str, ...]
    source: str  # "--fail-on", a config file's path, or "default"
    results: list[PolicyResult]
    evidence: Evidence

    @property
    def failed(self) -> list[PolicyResult]:
        return [r for r in self.results if r.failed]

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "fail_on": list(self.names),
            "from": self.source,
            "results": [r.to_dict() for r in self.results],
            "failed": [r.name for r in self.failed],
            "exit_code": self.exit_code,
        }
        if self.evidence.judge is not None:
            out["judge"] = self.evidence.judge.to_dict()
            out["audit"] = None if self.evidence.audit is None else self.evidence.audit.to_dict()
        return out


def enforce(
    route: Route,
    *,
    fail_on: Sequence[str] | None,
    judge_audit: str | None,
    default: tuple[str, ...] = (),
) -> Gate | None:
    """Evaluate the policies the command line or the repository names (None: none named and
    no ``default``; a ``none`` from the command line or the config file is a gate on nothing)."""
    from whilecli.io.judge import JudgeScan
    from whilecli.route.judges import load_audit
    from whilecli.route.policies import Evidence, evaluate, load_config, resolve_fail_on

    given = load_audit(judge_audit) if judge_audit else None  # read whatever is named
    config = load_config()
    names, source = resolve_fail_on(fail_on, config, default)
    if not names and source != "--fail-on" and not default:
        return None  # route with no policy named anywhere: no gate (check always has one)
    judge = audit = None
    if "judge-unaudited" in names:
        judge = route.judge or JudgeScan(rows=0, judged=0, by_kind={})  # the read's answer
        audit_path = None if given else (config.judge_audit if config else None)
        audit = given or (load_audit(audit_path) if audit_path else None)
    evidence = Evidence(judge=judge, audit=audit)
    return Gate(names, source, evaluate(route, names, evidence), evidence)


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
        report = route.to_dict()
        report["policies"] = gate.to_dict()
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
    from whilecli.route.policies import DEFAULT_CHECK_POLICIES

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
    gate = enforce(
        route,
        fail_on=fail_on,
        judge_audit=judge_audit,
        default=DEFAULT_CHECK_POLICIES,
    )
    assert gate is not None  # a default always applies
    fmt = output.value
    sys.stdout.write(render_check(gate, route, fmt))
    sys.stdout.flush()
    if fmt == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
        route_cmd.append_summary(os.environ["GITHUB_STEP_SUMMARY"], check_markdown(gate, route))
    raise typer.Exit(gate.exit_code)
