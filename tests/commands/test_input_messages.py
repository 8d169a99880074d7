"""Bad input is refused in one line that names the file, the line and the field and says
what to do (exit 2), whichever command reads it: a path printed the same way whether its
file exists or not; CSV on stdin; JSON Lines whose rows are arrays; a task id that holds
objects; lines ending in CR alone; a grade's key spelled in another case on some rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError, path_error, shown_path

PREFIX = "whilecli: error: "


def _refused(args: list[str], stdin: str | None = None) -> str:
    """The one error line a command prints for ``args`` (exit 2)."""
    r = CliRunner().invoke(app, args, input=stdin)
    assert r.exit_code == 2, (r.exit_code, r.stdout, r.stderr, r.exception)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(PREFIX), r.stderr
    return lines[0]


def _rows(n: int = 8, **extra: object) -> list[dict[str, object]]:
    return [{"task_id": f"t{i // 4}", "reward": float(i % 2), **extra} for i in range(n)]


# --- paths: one escape for every path an error prints ----------------------------------

ODD_NAMES = ["new\nline.jsonl", "tab\there.jsonl", "cr\rname.jsonl", "rtl\u202ename.jsonl"]


@pytest.mark.parametrize("name", ODD_NAMES)
@pytest.mark.parametrize(
    "command", [["route"], ["check"], ["summarize"], ["update", "--method", "grpo"]]
)
def test_a_missing_path_prints_as_an_existing_one(
    name: str, command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    missing = _refused([*command, name])
    assert missing == f"{PREFIX}{shown_path(name)}: no such file or directory"
    (tmp_path / name).write_text("not json\n")
    existing = _refused(["route", name])
    assert existing.startswith(f"{PREFIX}{shown_path(name)}:1: ")


@pytest.mark.parametrize("name", ODD_NAMES)
def test_every_error_escapes_a_path_alike(name: str) -> None:
    shown = shown_path(name)
    assert shown.isprintable() and "\\" in shown
    assert str(InputError("bad", file=name)).startswith(f"{shown}: ")
    assert path_error(FileNotFoundError(2, "No such file", name)) == (
        f"{shown}: cannot read it: no such file"
    )
    assert shown_path(shown) == shown  # printed once, read back the same


# --- a table on stdin ------------------------------------------------------------------

TABLES = {
    "csv": "task_id,reward\nt1,1\nt1,0\n",
    "tsv": "task_id\treward\nt1\t1\nt1\t0\n",
    "quoted": '"task_id","reward"\nt1,1\nt1,0\n',
}


@pytest.mark.parametrize("command", ["route", "check", "diff"])
@pytest.mark.parametrize("table", sorted(TABLES))
def test_a_table_on_stdin_names_the_option_that_reads_it(
    command: str, table: str, tmp_path: Path
) -> None:
    args = [command, "-"] + ([str(tmp_path / "b.jsonl")] if command == "diff" else [])
    (tmp_path / "b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _rows()))
    line = _refused(args, stdin=TABLES[table])
    assert line.startswith(f"{PREFIX}<stdin>:1: ")
    assert "looks like " + ("TSV" if table == "tsv" else "CSV") in line
    assert line.endswith("pass --input-format csv")


def test_text_that_is_no_table_gets_no_table_hint() -> None:
    assert "--input-format" not in _refused(["route", "-"], stdin="hello world\n")


# --- JSON Lines whose rows are not objects ---------------------------------------------


def _lines(*values: object) -> str:
    return "".join(json.dumps(v) + "\n" for v in values)


ROWS = _rows()
NOT_OBJECTS = {
    # text, the first line that holds no object, what it holds
    "arrays": (_lines(*([r["task_id"], r["reward"]] for r in ROWS)), 1, "found list"),
    "two_lists": (_lines(ROWS[:4], ROWS[4:]), 1, "found list of 4 objects"),
    "scalars": (_lines(1, 2, 3), 1, "found int"),
    "blank_then_arrays": ("\n" + _lines([1, 2], [3, 4]), 2, "found list"),
    "object_then_array": (_lines(ROWS[0], [1, 2], ROWS[1]), 2, "found list"),
}


@pytest.mark.parametrize("command", ["route", "check", "diff"])
@pytest.mark.parametrize("case", sorted(NOT_OBJECTS))
def test_a_line_that_holds_no_object_is_named(command: str, case: str, tmp_path: Path) -> None:
    text, line, found = NOT_OBJECTS[case]
    path = tmp_path / "rows.jsonl"
    path.write_text(text)
    args = [command, str(path)] + ([str(path)] if command == "diff" else [])
    said = _refused(args)
    assert said.startswith(f"{PREFIX}{path}:{line}: a row must be a JSON object, {found}"), said
    assert "not valid JSON" not in said


# --- lines that end in CR alone --------------------------------------------------------


@pytest.mark.parametrize("last", ["\r", ""])
@pytest.mark.parametrize("stdin", [False, True])
@pytest.mark.parametrize("command", ["route", "check"])
def test_lines_that_end_in_cr_alone_are_named(
    last: str, stdin: bool, command: str, tmp_path: Path
) -> None:
    text = "\r".join(json.dumps(r) for r in ROWS) + last
    path = tmp_path / "mac.jsonl"
    path.write_bytes(text.encode())
    said = _refused([command, "-" if stdin else str(path)], stdin=text if stdin else None)
    name = "<stdin>" if stdin else str(path)
    assert said.startswith(f"{PREFIX}{name}:1: the file's lines end in CR alone"), said
    assert "tr '\\r' '\\n'" in said


# --- a task id column that holds objects -----------------------------------------------

HELD_IDS = {
    # the id as written, the --map the error names
    "object": (lambda i: {"name": f"t{i // 4}"}, "task_id=task_id.name"),
    "object_two_keys": (lambda i: {"n": i // 4, "split": "a"}, "task_id=task_id.n"),
    "list": (lambda i: [f"t{i // 4}", i], "task_id=task_id[N]"),
}


@pytest.mark.parametrize("alias", ["task_id", "problem_id"])
@pytest.mark.parametrize("case", sorted(HELD_IDS))
@pytest.mark.parametrize("command", ["route", "check"])
def test_a_task_id_that_holds_objects_names_a_key_to_read(
    alias: str, case: str, command: str, tmp_path: Path
) -> None:
    held, mapped = HELD_IDS[case]
    path = tmp_path / "rows.jsonl"
    path.write_text(_lines(*({alias: held(i), "reward": float(i % 2)} for i in range(8))))
    said = _refused([command, str(path)])
    assert said.startswith(f"{PREFIX}{path}: field '{alias}': the column holds JSON"), said
    assert "no task id column" not in said
    assert f"--map {mapped.replace('task_id=task_id', 'task_id=' + alias)} " in said
    if case != "list":  # the key it names reads as the id
        arg = mapped.replace("task_id=task_id", "task_id=" + alias)
        r = CliRunner().invoke(app, ["route", str(path), "-q", "--map", arg])
        assert r.exit_code == 0, r.stderr


# --- a grade's key spelled in another case on some rows --------------------------------

SPELLINGS = ["Reward", "REWARD", "rEward"]


@pytest.mark.parametrize("spelled", SPELLINGS)
@pytest.mark.parametrize("command", ["route", "check"])
def test_rows_that_spell_the_grade_in_another_case_are_named(
    spelled: str, command: str, tmp_path: Path
) -> None:
    rows = _rows(16)
    for row in rows[1::2]:
        row[spelled] = row.pop("reward")
    path = tmp_path / "rows.jsonl"
    path.write_text(_lines(*rows))
    r = CliRunner(env={"COLUMNS": "400"}).invoke(app, [command, str(path)])
    said = [line for line in (r.stdout + r.stderr).splitlines() if "no grade" in line]
    assert said and f"some rows carry {spelled!r}, the grade's key 'reward'" in said[0], said
    found = json.loads(CliRunner().invoke(app, ["route", str(path), "--format", "json"]).stdout)
    assert repr(spelled) in found["inputs"]["facts"]["ungraded_spelled"]


@pytest.mark.parametrize("spelled", SPELLINGS)
def test_no_graded_row_names_the_key_spelled_otherwise(spelled: str, tmp_path: Path) -> None:
    rows = [{"task_id": r["task_id"], "reward": None, spelled: r["reward"]} for r in _rows()]
    path = tmp_path / "rows.jsonl"
    path.write_text(_lines(*rows))
    said = _refused(["route", str(path)])
    assert said.endswith(
        f"some rows carry {spelled!r}, the grade's key 'reward' in another"
        f" case, which is not read: pass --map reward={spelled}"
    ), said


def test_ungraded_rows_without_another_spelling_say_nothing_of_it(tmp_path: Path) -> None:
    rows = _rows(16)
    for row in rows[1::4]:
        row["reward"] = None
    path = tmp_path / "rows.jsonl"
    path.write_text(_lines(*rows))
    r = CliRunner(env={"COLUMNS": "400"}).invoke(app, ["route", str(path)])
    assert "no grade" in r.stdout and "another case" not in r.stdout
