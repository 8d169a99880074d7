"""A data value never makes a line, a workflow command or a table row of its own: every slice
value, file name and column name printed into text, Markdown or GitHub output goes through
one escaping (:func:`whilecli.route.slices.shown`, then the format's own: ``md_cell`` and the
annotation escapes, as task ids do).

Hypothesis draws hostile values (newlines, carriage returns, ``::``, ``|``, ``%``, ``,``, ANSI
escapes, bidirectional controls) as slice values and as the column; the report of those
slices must have the same lines, one for one, as the report of plain values (no line added or
split), every GitHub line must be one annotation whose properties hold no raw ``:`` or ``,``,
and no ESC reaches the output. One CLI run puts the reported instance through ``--by env``
and a hostile file name through ``--by source``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.route import run_route
from whilecli.route.model import Route
from whilecli.route.slices import Refused, Slices, render_slices

HOSTILE = ["\n", "\r", "::", "|", "%", ",", ":", "\x1b[31m", "\u202e", "\t", "error", "a", " "]
ANNOTATION = re.compile(r"^::(error|warning|notice)( [^:]*)?::[^\r\n]*$")
REPORTED = "a|b\n::error file=x::injected"


@pytest.fixture(scope="module")
def route(tmp_path_factory: pytest.TempPathFactory) -> Route:
    """One split pool's route (12 tasks at k = 4), reused for every slice."""
    path = tmp_path_factory.mktemp("pool") / "rows.jsonl"
    rows = [
        {"task_id": f"t{t}", "reward": float(i == t % 4), "finish_reason": "stop",
         "completion": f"r{t}-{i}"}
        for t in range(12)
        for i in range(4)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    routed = run_route([str(path)])
    assert isinstance(routed, Route)
    return routed


def slices_of(route: Route, by: str, names: list[str]) -> Slices:
    """Slices named ``names`` (the last one refused), each with ``route``."""
    parts: list[tuple[str, Route | Refused]] = [(n, route) for n in names[:-1]]
    parts.append((names[-1], Refused("no graded row")))
    return Slices(by=by, routes=parts)


def lines(text: str) -> list[str]:
    return text.split("\n")


values = st.lists(st.sampled_from(HOSTILE), min_size=1, max_size=6).map("".join)
SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SETTINGS
@given(names=st.lists(values, min_size=2, max_size=3, unique=True), by=values)
@pytest.mark.parametrize("fmt", ["text", "quiet", "markdown", "github"])
def test_hostile_values_keep_the_report_shape(
    route: Route, fmt: str, names: list[str], by: str
) -> None:
    """Hostile slice values and column: as many lines as plain ones, no ESC, and in GitHub
    format every line one well-formed annotation."""
    quiet = fmt == "quiet"
    form = "text" if quiet else fmt
    hostile = render_slices(slices_of(route, by, names), form, quiet=quiet)
    plain_names = [f"v{i}" for i in range(len(names))]
    plain = render_slices(slices_of(route, "col", plain_names), form, quiet=quiet)
    assert len(lines(hostile)) == len(lines(plain))
    assert "\x1b" not in hostile and "\r" not in hostile
    if fmt == "github":
        for line in lines(hostile)[:-1]:
            assert ANNOTATION.match(line), line
    if fmt == "markdown":  # the table keeps its five cells per row
        table = lines(hostile)[4 : 4 + len(names)]  # after the heading and the table's head
        assert len(table) == len(names)
        assert all(len(re.findall(r"(?<!\\)\|", row)) == 6 for row in table)
    refusals = slices_of(route, by, names).refusal_lines()
    assert all("\n" not in line and "\x1b" not in line for line in refusals)


def test_the_reported_instance_through_the_cli(tmp_path: Path) -> None:
    """The probe's rows (``env`` = ``a|b\\n::error file=x::injected``) and a file named the
    same way: no line of the GitHub output is an annotation the data wrote."""
    rows = [
        {"task_id": f"t{t}", "env": REPORTED if t % 2 else "c", "reward": float(i == t % 4),
         "finish_reason": "stop", "completion": f"r{t}-{i}"}
        for t in range(24)
        for i in range(4)
    ]  # fmt: skip
    body = "".join(json.dumps(r) + "\n" for r in rows)
    (tmp_path / "rows.jsonl").write_text(body)
    named = tmp_path / "a|b\n::error::x.jsonl"
    named.write_text(body)
    runs = [
        ["route", str(tmp_path / "rows.jsonl"), "--by", "env"],
        ["route", str(named), str(tmp_path / "rows.jsonl"), "--by", "source"],
    ]
    for args in runs:
        for fmt in ("github", "markdown", "text"):
            result = CliRunner().invoke(app, [*args, "--format", fmt])
            assert result.exit_code == 0, result.output
            out = result.stdout.splitlines()
            assert not any(line.startswith("::error") for line in out), fmt
            assert not any(line.startswith("::error::x") for line in out), fmt
            if fmt == "github":
                assert all(ANNOTATION.match(line) for line in out)


@pytest.mark.parametrize("columns", [60, 80, 100])
def test_a_refused_slice_is_wrapped_as_a_brief_is(
    route: Route, columns: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refused slice's one line (a long path and its row among the words) is wrapped to the
    terminal's width: only a path too long for a line of its own runs past it."""
    monkeypatch.setenv("COLUMNS", str(columns))
    path = "/tmp/" + "deep/" * 12 + "rows.jsonl"
    why = (
        f"{path}: most replies are errors: the harness failed, not the model (1 of 2 rows"
        f" (first: {path} line 11))"
    )
    slices = Slices(by="model", routes=[("a", route), ("b", Refused(why))])
    text = render_slices(slices, "text")
    block = text.split("── model: b ")[1].split("\n", 1)[1]
    said = block.strip("\n").split("\n")
    assert " ".join(" ".join(said).split()) == " ".join(f"Refused: {why}".split())
    assert all(len(line) <= columns or " " not in line.strip() for line in said), said
