"""A task id that reads as U+0000 is refused naming what the line writes there: the lone
UTF-16 surrogate escape itself (``\\ud800``), which every JSON reader here reads as U+0000, or
the NUL; never a NUL where the file holds a surrogate."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app

#: Pieces of a JSON string that are fine in an id: text, an escaped backslash before "ud800"
#: (the text \ud800, not an escape), a surrogate pair (one character), an escaped quote.
FINE = st.sampled_from(["abc", "\\\\ud800", "\\ud83d\\ude00", '\\"', "\\u00e9", "x y"])
BAD = st.one_of(
    st.integers(0xD800, 0xDBFF).map(lambda c: f"\\u{c:04x}"),  # a high one, alone
    st.integers(0xDC00, 0xDFFF).map(lambda c: f"\\u{c:04X}"),  # a low one, alone
    st.just("\\u0000"),
)


@settings(max_examples=40, deadline=None)
@given(before=st.lists(FINE, max_size=3), bad=BAD, after=st.lists(FINE, max_size=3))
def test_the_refusal_names_the_escape_the_line_writes(
    tmp_path_factory: pytest.TempPathFactory, before: list[str], bad: str, after: list[str]
) -> None:
    body = "".join(before) + bad + "".join(after)  # no piece starts or ends a pair with it
    good = [f'{{"task_id": "t{i}", "reward": {i % 2}}}' for i in range(4)]
    path = tmp_path_factory.mktemp("ids") / "rows.jsonl"
    path.write_text("\n".join([*good, f'{{"task_id": "{body}", "reward": 1}}']) + "\n")
    result = CliRunner().invoke(app, ["route", str(path)])
    assert result.exit_code == 2
    message = result.stderr
    assert message.count("\n") == 1 and f"{path.name}:5: field 'task_id'" in message
    if bad == "\\u0000":
        assert "holds U+0000 (a NUL)" in message
    else:
        assert f"holds the escape {bad}, a lone UTF-16 surrogate" in message


def test_a_nul_byte_and_an_escaped_nul_are_named_as_a_nul(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"task_id": "a", "reward": 1}\n{"task_id": "b\\u0000", "reward": 0}\n')
    result = CliRunner().invoke(app, ["route", str(path)])
    assert result.exit_code == 2 and "rows.jsonl:2: field 'task_id'" in result.stderr
    assert "holds U+0000 (a NUL)" in result.stderr
