"""``--fail-on``: one reading for ``route``, ``check``, ``diff`` and ``watch``: names in the
command's order, each once; ``all`` every one, ``none`` none; ``none`` beside a condition
refused (it said two opposite things and the conflict named was another's); unknown names
refused with the command's list."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from conftest import EXAMPLES
from whilecli.cli import app
from whilecli.commands.diff import DIFF_POLICIES, parse_diff_policies
from whilecli.errors import UsageError
from whilecli.route.policies import POLICIES, parse_policies
from whilecli.watch.options import ALERTS, parse_fail_on

PARSERS = [
    (parse_policies, POLICIES),
    (parse_diff_policies, DIFF_POLICIES),
    (parse_fail_on, ALERTS),
]


def _spelling(name: str) -> st.SearchStrategy[str]:
    return st.sampled_from([name, name.upper(), f" {name} ", name.replace("-", "_")])


@pytest.mark.parametrize(("parse", "known"), PARSERS)
@given(data=st.data())
def test_one_reading_of_fail_on(parse, known, data) -> None:
    names = data.draw(st.lists(st.sampled_from([*known, "all", "none"]), min_size=1, max_size=5))
    spelled = [data.draw(_spelling(n)) for n in names]
    items = data.draw(st.sampled_from(["one", "each"]))
    values = [",".join(spelled)] if items == "one" else spelled
    if "none" in names and len(set(names)) > 1:
        with pytest.raises(UsageError, match="none .*cannot go with"):
            parse(values)
        return
    want = set(known) if "all" in names else set(names) - {"none"}
    assert parse(values) == tuple(n for n in known if n in want)


@pytest.mark.parametrize(("parse", "known"), PARSERS)
def test_an_unknown_name_lists_the_commands_own(parse, known) -> None:
    with pytest.raises(UsageError) as err:
        parse(["florr"])
    assert "'florr'" in str(err.value) and ", ".join(known) in str(err.value)


@pytest.mark.parametrize(
    "args",
    [
        ["route", str(EXAMPLES / "mixed.jsonl"), "--fail-on", "all,none"],
        ["check", str(EXAMPLES / "mixed.jsonl"), "--fail-on", "none", "--fail-on", "floor"],
        [
            "diff",
            str(EXAMPLES / "student.jsonl"),
            str(EXAMPLES / "teacher.jsonl"),
            "--fail-on",
            "none,regression",
        ],
    ],  # fmt: skip
)
def test_none_beside_a_condition_is_one_line(args) -> None:
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output
    assert "none (fail on nothing) cannot go with" in res.output
    assert "needs --model" not in res.output


@pytest.mark.parametrize(("parse", "known"), PARSERS)
@given(blank=st.text(alphabet=", \t", max_size=6))
def test_a_value_that_names_nothing_is_refused_not_read_as_none(parse, known, blank) -> None:
    """``--fail-on ''`` or ``--fail-on ,,,`` (a shell variable left empty) was read as
    "fail on nothing", exit 0 on any verdict: refused, saying ``none`` is how to say it."""
    with pytest.raises(UsageError, match="names no .*none fails on nothing"):
        parse([blank])


@pytest.mark.parametrize("command", ["route", "check"])
def test_a_judge_audit_named_is_read_whatever_the_policies(tmp_path, command) -> None:
    """``route --judge-audit FILE`` read FILE only when a judge graded the rows and the
    judge-unaudited policy was named: a broken file passed unseen (exit 0)."""
    bad = tmp_path / "audit.json"
    bad.write_text("{not json", encoding="utf-8")
    res = CliRunner().invoke(
        app, [command, str(EXAMPLES / "mixed.jsonl"), "--judge-audit", str(bad)]
    )
    assert res.exit_code == 2 and "not valid JSON" in res.output, res.output
