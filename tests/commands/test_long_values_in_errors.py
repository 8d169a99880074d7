"""An error echoes what the input holds (an id, a grade, a key) but never a megabyte of it: a
value past :data:`whilecli.errors.LONGEST_WORD` characters is cut in the middle, saying how
much was left out, so the refusal stays one readable line that starts with the file and keeps
both ends of the value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import LONGEST_DETAIL, InputError, clipped

#: Each way a row echoes a value in its refusal: one id with two prompts, a grade that is no
#: number, a reward under a key of that name.
PLACES = ("id", "grade", "key")


def rows_with(place: str, value: str) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = [
        {"task_id": f"t{i // 4}", "prompt": f"q{i // 4}", "reward": float(i % 2)} for i in range(16)
    ]
    if place == "id":
        rows += [{"task_id": value, "prompt": "a", "reward": 1.0}]
        rows += [{"task_id": value, "prompt": "b", "reward": 0.0}]
    elif place == "grade":
        rows[5]["reward"] = value
    else:
        rows = [{"task_id": r["task_id"], value: r["reward"]} for r in rows]
    return rows


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    place=st.sampled_from(PLACES),
    length=st.integers(LONGEST_DETAIL // 4, 200_000),
    letter=st.sampled_from(["T", "é", "7", "x-"]),
    command=st.sampled_from(["route", "check", "ada"]),
)
def test_a_long_value_is_cut_in_the_middle_of_the_one_line(
    tmp_path: Path, place: str, length: int, letter: str, command: str
) -> None:
    value = "A" + letter * (length // len(letter)) + "Z"
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows_with(place, value)))
    result = CliRunner().invoke(app, [command, str(path)])
    out = result.output
    assert result.exit_code == 2, out
    assert out.count("\n") == 1 and out.startswith(f"whilecli: error: {path}"), out[:300]
    assert len(out) < 2 * LONGEST_DETAIL, len(out)
    if value[:40] in out:  # echoed: both ends kept, the cut said
        assert value[-20:] in out and "more]…" in out, out


@pytest.mark.parametrize("length", [0, 1, 159, 160, 161, 5000])
def test_clipped_keeps_short_words_and_says_what_it_cut(length: int) -> None:
    word = "w" * length
    out = clipped(f"id '{word}' twice")
    if length + 2 <= 160:
        assert out == f"id '{word}' twice"
    else:
        cut = int(out.split("…[")[1].split(" more")[0].replace(",", ""))
        assert len(out) < 200 and cut == length + 2 - 130
    err = InputError(f"id '{word}'", file="/a/" + "d" * 300 + "/rows.jsonl", line=3)
    assert str(err).startswith("/a/" + "d" * 300 + "/rows.jsonl:3: ")  # the place is whole
