"""A prompt is one task key whichever way a writer spelled it (DESIGN section 1, "Task ids
are checked against prompts").

Generated pools write each task's prompt in a drawn form: as it is, with CRLF or CR line
ends, with whitespace around it, as a chat list of one user message (its content a string or
one text part), in JSON Lines and in Parquet. Those forms are one prompt: within one pool an
id whose rows spell its prompt in several of them is one task (never refused as two prompts),
and between two pools (``route --teacher``, ``diff``) a task whose ids and prompts match is
shared, as is a task the second pool keys by the prompt alone. A prompt whose whitespace
inside the text differs is another prompt: under one id in one pool it is refused (exit 2,
naming the id), between pools the task is left out of the shared ones.

Rows whose id is missing, null or blank while their prompt is one id's rows' are that id's
task (counted in a note); an id with whitespace around it is that id; a prompt that two ids
carry keeps its id-less rows keyed by the prompt. Rows with a per-row uuid and their prompt
under any prompt alias form one task per prompt.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app

ENV = {"COLUMNS": "80", "NO_COLOR": "1"}
SETTINGS = settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
#: Ways a writer spells the same prompt text.
FORMS = ("as is", "crlf", "cr", "around", "trailing newline", "chat", "chat tab", "chat part")
#: Ways a row leaves its task id out.
NO_ID = ("absent", None, "", "  ")


def prompt_of(task: int) -> str:
    """A task's prompt: several lines, with whitespace inside that is part of the text."""
    return f"Question {task}:\n  compute {task} *  {task + 3}\n\nAnswer in one line."


def spelled(text: str, form: str) -> Any:
    """``text`` as a writer in ``form`` writes it."""
    if form == "crlf":
        return text.replace("\n", "\r\n")
    if form == "cr":
        return text.replace("\n", "\r")
    if form == "around":
        return "  " + text + " \t\n"
    if form == "trailing newline":
        return text + "\n"
    if form == "chat":
        return [{"role": "user", "content": text.replace("\n", "\r\n") + "\n"}]
    if form == "chat tab":  # a tab at the edge of a message's text (JSON Lines read it raw)
        return [{"role": "user", "content": "\t" + text + "\t"}]
    if form == "chat part":
        return [{"role": "user", "content": [{"type": "text", "text": " " + text}]}]
    return text


def other_inside(text: str) -> str:
    """The prompt with its whitespace inside changed: another prompt."""
    return text.replace("*  ", "* ")


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Rows as JSON Lines, or as Parquet (a prompt column holding chat lists and strings is
    written as each value's JSON text, as a table writer stores mixed values)."""
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return path
    columns = sorted({k for r in rows for k in r})
    table = {
        c: [
            json.dumps(r[c]) if isinstance(r.get(c), list) else r.get(c)
            for r in rows  # a missing key is a null in a table
        ]
        for c in columns
    }
    schema = {c: pl.Float64 if c == "reward" else pl.String for c in columns}
    pl.DataFrame(table, schema=schema).write_parquet(path)
    return path


def run(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, [*args, "--format", "json"], env=ENV)
    assert result.exit_code in (0, 1), (args, result.output, result.exception)
    return json.loads(result.stdout)


def measured(report: dict[str, Any], key: str) -> dict[str, Any]:
    return next(c for c in report["checks"] if c["key"] == key)["measured"]


@st.composite
def pairs(draw: st.DrawFn) -> dict[str, Any]:
    """Two pools of one truth: the second spells each task's prompt in a drawn form, keys a
    drawn share of its tasks by the prompt alone (no id column on those rows), and changes
    the whitespace inside the prompt of a drawn few (another prompt under the same id)."""
    n = draw(st.integers(6, 14))
    return {
        "n": n,
        "forms": draw(st.lists(st.sampled_from(FORMS), min_size=n, max_size=n)),
        "changed": draw(st.sets(st.integers(0, n - 1), max_size=3)),
        "k": draw(st.integers(1, 4)),
        "passes": draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)),
        "suffix": draw(st.sampled_from([".jsonl", ".parquet"])),
    }


@SETTINGS
@given(truth=pairs())
def test_teacher_and_diff_share_a_prompt_however_spelled(
    truth: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("pairs")
    n, k, suffix = truth["n"], truth["k"], truth["suffix"]
    student: list[dict[str, Any]] = []
    teacher: list[dict[str, Any]] = []
    for t in range(n):
        text = prompt_of(t)
        for j in range(k):
            student.append({"task_id": f"t-{t}", "prompt": text, "reward": float(j < k // 2)})
            said = other_inside(text) if t in truth["changed"] else text
            teacher.append(
                {
                    "task_id": f"t-{t}",
                    "prompt": spelled(said, truth["forms"][t]),
                    "reward": float(j < min(truth["passes"][t], k)),
                }
            )
    before = write(folder / f"student{suffix}", student)
    after = write(folder / f"teacher{suffix}", teacher)
    shared = n - len(truth["changed"])

    route = run("route", str(before), "--teacher", str(after))
    check = measured(route, "teacher")
    assert check["shared_tasks"] == shared, (check, truth)
    assert check.get("other_prompt_tasks", 0) == len(truth["changed"])
    assert check["coverage"]["n_tasks"] == n
    diff = run("diff", str(before), str(after))
    assert diff["shared_tasks"] == shared
    assert diff["other_prompt_tasks"] == len(truth["changed"])

    # the second pool keyed by its prompts alone: its tasks are the first pool's
    unkeyed = [{k: v for k, v in r.items() if k != "task_id"} for r in teacher]
    alone = write(folder / f"by_prompt{suffix}", unkeyed)
    check = measured(run("route", str(before), "--teacher", str(alone)), "teacher")
    assert check["shared_tasks"] == shared, (check, truth)
    assert run("diff", str(before), str(alone))["shared_tasks"] == shared


@st.composite
def spellings(draw: st.DrawFn) -> dict[str, Any]:
    """One pool whose rows spell their task's prompt in drawn forms, row by row."""
    n = draw(st.integers(3, 10))
    k = draw(st.integers(2, 5))
    return {
        "forms": [draw(st.lists(st.sampled_from(FORMS), min_size=k, max_size=k)) for _ in range(n)],
        "suffix": draw(st.sampled_from([".jsonl", ".parquet"])),
        "changed": draw(st.one_of(st.none(), st.integers(0, n - 1))),
    }


@SETTINGS
@given(pool=spellings())
def test_one_id_spelling_its_prompt_many_ways_is_one_task(
    pool: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    rows = [
        {"task_id": f"t-{t}", "prompt": spelled(prompt_of(t), form), "reward": float(j % 2)}
        for t, forms in enumerate(pool["forms"])
        for j, form in enumerate(forms)
    ]
    path = write(tmp_path_factory.mktemp("spell") / f"rows{pool['suffix']}", rows)
    report = run("route", str(path))
    assert measured(report, "rollouts_per_task")["tasks"] == len(pool["forms"]), pool
    changed = pool["changed"]
    if changed is None:
        return
    k = len(pool["forms"][changed])
    at = next(i for i, r in enumerate(rows) if r["task_id"] == f"t-{changed}") + k - 1
    rows[at]["prompt"] = other_inside(prompt_of(changed))
    path = write(path, rows)
    result = CliRunner().invoke(app, ["route", str(path)], env=ENV)
    assert result.exit_code == 2, result.output
    assert f"task id 't-{changed}' carries different prompts" in result.output


@st.composite
def idless(draw: st.DrawFn) -> dict[str, Any]:
    """A pool whose rows lose their task id on a drawn subset (absent, null, blank), whose
    ids are padded with whitespace on others, and, drawn, a prompt two ids carry with rows
    of it that carry no id. The truth: (rows, passes) per task."""
    n = draw(st.integers(3, 12))
    tasks = []
    for _ in range(n):
        k = draw(st.integers(1, 6))
        tasks.append(
            {
                "passes": [draw(st.booleans()) for _ in range(k)],
                "lost": [draw(st.sampled_from(("kept", "padded", *NO_ID))) for _ in range(k)],
            }
        )
    return {
        "tasks": tasks,
        "twice": draw(st.integers(0, 3)),  # id-less rows of a prompt two ids carry
        "suffix": draw(st.sampled_from([".jsonl", ".parquet"])),
        "order": draw(st.randoms(use_true_random=False)),
    }


@SETTINGS
@given(pool=idless())
def test_rows_without_an_id_join_the_task_whose_id_carries_their_prompt(
    pool: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    rows: list[dict[str, Any]] = []
    truth: list[tuple[int, int]] = []
    adopted = 0
    for t, task in enumerate(pool["tasks"]):
        keeps = any(lost in ("kept", "padded") for lost in task["lost"])
        for passed, lost in zip(task["passes"], task["lost"], strict=True):
            row: dict[str, Any] = {"prompt": prompt_of(t), "reward": float(passed)}
            if lost in ("kept", "padded"):
                row["task_id"] = f"t-{t}" if lost == "kept" else f" t-{t}\t"
            elif lost != "absent":
                row["task_id"] = lost
            adopted += keeps and lost not in ("kept", "padded")
            rows.append(row)
        truth.append((len(task["passes"]), sum(task["passes"])))
    if pool["twice"]:  # the same prompt under two ids: the id-less rows stay apart
        for tid in ("dup-a", "dup-b"):
            rows += [{"task_id": tid, "prompt": "one prompt", "reward": float(j)} for j in (0, 1)]
            truth.append((2, 1))
        rows += [{"prompt": "one prompt", "reward": 1.0} for _ in range(pool["twice"])]
        truth.append((pool["twice"], pool["twice"]))
    rows[0].setdefault("task_id", None)  # the file has an id column
    pool["order"].shuffle(rows)
    path = write(tmp_path_factory.mktemp("idless") / f"rows{pool['suffix']}", rows)

    report = run("route", str(path))
    grouped = [(n, p) for n, p in truth if n >= 2]
    assert measured(report, "rollouts_per_task")["tasks"] == len(truth), (report, truth)
    if grouped:
        split = sum(0 < p < n for n, p in grouped)
        assert measured(report, "band").get("split_tasks", 0) == split, (report, truth)
    notes = " ".join(report.get("notes", []))
    assert (f"{adopted} row" in notes and "without a task_id" in notes) == bool(adopted), notes


#: Prompt fields other tools write, each keying the rows of a per-row uuid by the prompt.
ALIASES = ("problem", "query", "instruction", "prompt_text", "user_prompt")


@SETTINGS
@given(
    alias=st.sampled_from(ALIASES),
    n=st.integers(3, 12),
    k=st.integers(2, 5),
    suffix=st.sampled_from([".jsonl", ".parquet"]),
)
def test_a_per_row_uuid_is_keyed_by_the_prompt_under_any_prompt_field(
    alias: str, n: int, k: int, suffix: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    rows = [
        {"id": str(uuid.uuid4()), alias: prompt_of(t), "reward": float(j % 2)}
        for t in range(n)
        for j in range(k)
    ]
    path = write(tmp_path_factory.mktemp("alias") / f"rows{suffix}", rows)
    report = run("route", str(path))
    rollouts = measured(report, "rollouts_per_task")
    assert (rollouts["tasks"], rollouts["k"]) == (n, k), (alias, rollouts)
    assert any("id holds one id per row" in note for note in report.get("notes", []))


def test_a_passage_beside_the_question_is_no_prompt(tmp_path: Path) -> None:
    """``context`` holds a passage many questions share: never the task's key."""
    rows = [
        {"id": str(uuid.uuid4()), "context": "One passage.", "reward": float(j % 2)}
        for j in range(6)
    ]
    report = run("route", str(write(tmp_path / "rows.jsonl", rows)))
    assert measured(report, "rollouts_per_task")["tasks"] == 6
