"""A file named as no format the reader knows (``notes.md``, ``config.yaml``, ``rows.log``, no
suffix at all) is read as JSON Lines when its text opens with a JSON object or array, after
blank lines or a byte-order mark; any other text is refused in one line that says it is not
rows and where its text begins, not as a JSON error; ``--input-format`` still reads such a
name as the format it names."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app

SUFFIXES = st.sampled_from([".md", ".txt", ".yaml", ".log", ".cfg", ""])
ROWS = "".join(
    json.dumps({"task_id": f"t{i % 4}", "reward": float(i % 3 == 0)}) + "\n" for i in range(16)
)
TEXTS = st.sampled_from(
    ["# Provenance\n\nrows from a run\n", "a: 1\nb: 2\n", "hello", "task_id,reward\nt0,1\n"]
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    suffix=SUFFIXES,
    blank=st.integers(0, 3),
    bom=st.booleans(),
    rows=st.booleans(),
    text=TEXTS,
)
def test_a_file_of_no_known_name_routes_its_rows_or_says_it_holds_none(
    suffix: str, blank: int, bom: bool, rows: bool, text: str, tmp_path: Path
) -> None:
    path = tmp_path / f"input{suffix}"
    body = "\n" * blank + (ROWS if rows else text)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + body.encode("utf-8"))
    result = CliRunner().invoke(app, ["route", str(path)])
    if rows:
        assert result.exit_code in (0, 1), result.output
        return
    said = result.output.strip()
    assert result.exit_code == 2 and "\n" not in said, said
    assert f"{path}:{blank + 1}: not rows:" in said, said


def test_a_format_named_on_the_command_line_reads_any_name(tmp_path: Path) -> None:
    path = tmp_path / "table.txt"
    path.write_text("task_id,reward\n" + "".join(f"t{i % 4},{i % 2}\n" for i in range(16)))
    result = CliRunner().invoke(app, ["route", str(path), "--input-format", "csv"])
    assert result.exit_code in (0, 1), result.output
