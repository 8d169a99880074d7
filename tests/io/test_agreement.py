"""Every command reads a file the same way (DESIGN section 1, "One row model").

Generated files (JSON Lines plain, gzip, zstd, behind a byte order mark or in UTF-16, under
a name that says another compression or none, one JSON object on one line, Parquet, CSV
(commas, tabs or semicolons; UTF-8 or UTF-16; NA, nan or empty missing cells), one JSON
document; the task id under one alias or none but a prompt (text, or a chat with or without
a system turn); the grade under one alias; truncation from a flag (or its words as text), a
``finish_reason`` or ``stop_reason`` as the writers spell a length stop, or not recorded; a
model or none; replies that are text, empty or ``"{}"``, bare or as an assistant message; a
judge's column (:data:`JUDGES`) or not) are read through the library entry point of every
command: ``route`` and ``check`` (:func:`read_rows` + :func:`summarize`, and
:func:`run_route` for who grades), ``diff`` and ``size`` (:func:`read_tasks`), ``summarize``
(the summary written and routed back), ``ada`` and the row methods (:func:`read_table`) and
``update`` (:func:`read_batch`). Each must see the rows a slow reference loop sees: the same
tasks (their partition into tasks, and the keys where the file names them), rows, passes,
truncated rows (unknown when nothing records it), model, who grades, and the same refusal
("nothing was generated" when every reply is empty). A few CLI runs close the loop.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from read_helpers import every_reader
from whilecli.cli import app
from whilecli.commands.diff import read_tasks
from whilecli.errors import InputError
from whilecli.io.batch import read_batch
from whilecli.io.read import read_rows
from whilecli.io.table import read_table
from whilecli.route import run_route
from whilecli.route.pool import Counts, summarize
from whilecli.route.summary import pool_from_summary, write_summary

#: jsonl-bom: a UTF-8 byte order mark first; jsonl-doc: one JSON object on one line holding
#: the rows under ``samples``; -utf16: UTF-16 text behind its mark (Windows PowerShell's
#: ``>``); csv-tabs, csv-semicolons: a .csv file separated by tabs or semicolons.
ENCODINGS = (
    *("jsonl", "jsonl.gz", "jsonl.zst", "jsonl-bom", "jsonl-doc", "jsonl-utf16", "parquet"),
    *("csv", "csv-tabs", "csv-semicolons", "csv-utf16", "json"),
)
ID_KEYS = ("task_id", "example_id", "prompt_id", None)  # None: keyed by the prompt
#: Who grades, as a column: verifiers' judge reward function, inspect's scorer, the reference
#: SDK's judge_name, AlpacaEval's annotator, simple-evals' grader_model.
JUDGES = ("judge_reward_func", "model_graded_fact", "judge_name", "annotator", "grader_model")
#: The prompt: text, a chat of one user turn, or a chat with a system turn first.
PROMPTS = ("text", "messages", "system")
REWARD_KEYS = ("reward", "score", "correct")
TRUNCATION = (None, "truncated", "is_truncated", "finish_reason", "stop_reason", "flag-text")
#: A stop / finish reason of a cut-off reply, as the writers spell it (any case), and of one
#: that ended on its own.
CUT_WORDS = ("length", "max_tokens", "LENGTH", "MAX_TOKENS", "model_length", "max_output_tokens")
STOP_WORDS = ("stop", "end_turn", "STOP", "eos")
#: A truncation flag written as text.
FLAG_WORDS = {True: ("true", "True", "TRUE", "1"), False: ("false", "False", "0")}
REPLIES = ("text", "some-empty", "all-empty", "all-braces", "all-brace-messages", "messages")


@st.composite
def dumps(draw: st.DrawFn) -> dict[str, Any]:
    """A file's rows and how they were written (one choice per field, for every row)."""
    encoding = draw(st.sampled_from(ENCODINGS))
    replies = draw(st.sampled_from(REPLIES))
    if replies in ("all-brace-messages", "messages") and encoding.startswith("csv"):
        encoding = "jsonl"  # a CSV cell holds text, not a message list
    id_key = draw(st.sampled_from(ID_KEYS))
    prompts = draw(st.sampled_from(PROMPTS[:1] if encoding.startswith("csv") else PROMPTS))
    reward_key = draw(st.sampled_from(REWARD_KEYS))
    truncation = draw(st.sampled_from(TRUNCATION))
    model = draw(st.sampled_from([None, "org/model-a"]))
    judge = draw(st.sampled_from([None, *JUDGES]))
    tasks = draw(st.integers(1, 4))
    rows: list[dict[str, Any]] = []
    for t in range(tasks):
        for _ in range(draw(st.integers(1, 3))):
            passed = draw(st.booleans())
            cut = draw(st.booleans())
            row: dict[str, Any] = {}
            if id_key is not None:
                row[id_key] = f"q{t}"
            question = f"What is {t} + {t}?"
            if prompts == "messages":
                row["prompt"] = [{"role": "user", "content": question}]
            elif prompts == "system":
                row["prompt"] = [
                    {"role": "system", "content": "Answer briefly."},
                    {"role": "user", "content": question},
                ]
            else:
                row["prompt"] = question
            if replies == "text":
                row["completion"] = f"The answer is {2 * t}."
            elif replies == "messages":
                content = draw(st.sampled_from(["{}", "", f"It is {2 * t}."]))
                row["completion"] = [{"role": "assistant", "content": content}]
            elif replies == "all-brace-messages":
                content = draw(st.sampled_from(["{}", "", " "]))
                row["completion"] = [{"role": "assistant", "content": content}]
            elif replies == "some-empty":
                row["completion"] = draw(st.sampled_from(["", "{}", "an answer"]))
            else:
                row["completion"] = "" if replies == "all-empty" else "{}"
            row[reward_key] = passed if reward_key == "correct" else float(passed)
            if truncation in ("finish_reason", "stop_reason"):
                row[truncation] = draw(st.sampled_from(CUT_WORDS if cut else STOP_WORDS))
            elif truncation == "flag-text":
                row["truncated"] = draw(st.sampled_from(FLAG_WORDS[cut]))
            elif truncation is not None:
                row[truncation] = cut
            if model is not None:
                row["model"] = model
            if judge in ("judge_reward_func", "model_graded_fact"):
                row[judge] = float(passed)  # a judge's reward function or scorer
            elif judge is not None:
                row[judge] = "gpt-4o"  # the judge that graded the row
            rows.append(row)
    if replies == "some-empty" and all(r["completion"] in ("", "{}") for r in rows):
        rows[0]["completion"] = "an answer"
    if replies == "messages":
        rows[0]["completion"] = [{"role": "assistant", "content": "an answer"}]
    ungraded = draw(st.integers(0, 2))  # rows with a null grade among the graded
    for i in range(ungraded):
        rows.insert(draw(st.integers(0, len(rows))), {**rows[i], reward_key: None})
    # a line that writes a key twice (a writer that appends to its text): the same value
    # again, or another one, which JSON readers take differently
    repeat = None
    if encoding.startswith("jsonl") and encoding != "jsonl-doc":
        at = draw(st.integers(0, len(rows) - 1))
        keys = [k for k in (reward_key, id_key, truncation, "truncated") if k in rows[at]]
        repeat = (at, draw(st.sampled_from(keys)), draw(st.sampled_from(["same", "other"])))
    return {
        "rows": rows,
        "encoding": encoding,
        "id_key": id_key,
        "reward_key": reward_key,
        "truncation": truncation,
        "model": model,
        "judge": judge,
        "misnamed": draw(st.booleans()),
        "ungraded": ungraded,
        "null_cell": draw(st.sampled_from(["", "NA", "nan", "null"])),  # CSV's missing value
        "refused": replies in ("all-empty", "all-braces", "all-brace-messages"),
        "repeat": repeat,
    }


def _other(value: Any) -> Any:
    """A value of the same field that reads differently."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, float):
        return 1.0 - value
    if value is None:
        return 1.0
    return f"{value}-again"


def _line(row: dict[str, Any], repeat: tuple[int, str, str] | None, index: int) -> str:
    """One JSON line; the repeated row with its key written a second time at the end."""
    text = json.dumps(row)
    if repeat is None or repeat[0] != index:
        return text
    _, key, how = repeat
    again = row[key] if how == "same" else _other(row[key])
    return f"{text[:-1]}, {json.dumps(key)}: {json.dumps(again)}}}"


def write(folder: Path, dump: dict[str, Any]) -> Path:
    rows, encoding = dump["rows"], dump["encoding"]
    path = folder / f"rows.{encoding}"
    if encoding.startswith("jsonl"):
        path = folder / ("rows.jsonl" + encoding.removeprefix("jsonl").partition("-")[0])
        repeat = dump.get("repeat")
        text = "".join(_line(r, repeat, i) + "\n" for i, r in enumerate(rows)).encode()
        if encoding == "jsonl-doc":
            text = json.dumps({"samples": rows}).encode()
        elif encoding == "jsonl-bom":
            text = b"\xef\xbb\xbf" + text
        elif encoding == "jsonl-utf16":
            text = text.decode().encode("utf-16")
        elif encoding == "jsonl.gz":
            text = gzip.compress(text)
        elif encoding == "jsonl.zst":
            sink = pa.BufferOutputStream()
            with pa.CompressedOutputStream(sink, "zstd") as out:
                out.write(text)
            text = sink.getvalue().to_pybytes()
        if dump.get("misnamed"):  # compressed bytes under a plain name, or plain under .gz
            path = folder / ("rows.jsonl" if path.name != "rows.jsonl" else "rows.jsonl.gz")
        path.write_bytes(text)
    elif encoding == "json":
        path.write_text(json.dumps(rows, indent=1))
    elif encoding == "parquet":
        pl.DataFrame(rows).write_parquet(path)
    else:
        path = folder / "rows.csv"
        separator = {"csv-tabs": "\t", "csv-semicolons": ";"}.get(encoding, ",")
        table = pl.DataFrame(rows).write_csv(separator=separator, null_value=dump["null_cell"])
        path.write_bytes(table.encode("utf-16" if encoding == "csv-utf16" else "utf-8"))
    return path


def expected(dump: dict[str, Any]) -> dict[str, Any]:
    """The slow reference: what every command must read from the rows."""
    per_task: dict[str, list[int]] = {}
    for row in dump["rows"]:
        if row[dump["reward_key"]] is None:
            continue  # ungraded: left out of every count
        key = row[dump["id_key"]] if dump["id_key"] else json.dumps(row["prompt"])
        passed = bool(row[dump["reward_key"]])
        truncation = dump["truncation"]
        if truncation in ("finish_reason", "stop_reason"):
            cut = row[truncation] in CUT_WORDS
        elif truncation == "flag-text":
            cut = row["truncated"] in FLAG_WORDS[True]
        else:
            cut = None if truncation is None else row[truncation]
        n, passes, truncated = per_task.get(key, [0, 0, 0])
        per_task[key] = [n + 1, passes + passed, truncated + bool(cut)]
    return {
        "tasks": per_task,
        "shape": sorted(tuple(v) for v in per_task.values()),
        "rows": sum(r[dump["reward_key"]] is not None for r in dump["rows"]),  # graded
        "truncation_known": dump["truncation"] is not None,
        "judged": len(dump["rows"]) if dump["judge"] else 0,
    }


def _shape(triples: list[tuple[int, int, int]]) -> list[tuple[int, ...]]:
    return sorted(triples)


def _from_pool_tasks(tasks: pl.DataFrame) -> dict[str, tuple[int, int, int]]:
    return {
        str(r["task_id"]): (int(r["n"]), int(r["passes"]), int(r["truncated"]))
        for r in tasks.iter_rows(named=True)
    }


def _grouped(ids: list[Any], passes: list[bool], cuts: list[bool]) -> dict[str, tuple[int, ...]]:
    out: dict[str, list[int]] = {}
    for task, passed, cut in zip(ids, passes, cuts, strict=True):
        n, p, c = out.get(str(task), [0, 0, 0])
        out[str(task)] = [n + 1, p + bool(passed), c + bool(cut)]
    return {k: tuple(v) for k, v in out.items()}


def readings(path: Path, tmp: Path) -> dict[str, dict[str, tuple[int, ...]]]:
    """Per command, task → (rows, passes, truncated rows), as that command reads the file."""
    out: dict[str, dict[str, tuple[int, ...]]] = {}
    rows = read_rows([str(path)], aggregate=Counts())
    out["route/check"] = _from_pool_tasks(summarize(rows).tasks)
    tasks = read_tasks(str(path), mapping=None, pass_threshold=None, input_format=None)
    out["diff/size"] = _from_pool_tasks(tasks)
    summary = tmp / "summary.parquet"
    write_summary(read_rows([str(path)], aggregate=Counts()), summary, force=True)
    out["summarize"] = _from_pool_tasks(pool_from_summary([summary]).tasks)
    table = read_table([str(path)]).canonical
    out["ada/row methods"] = _grouped(
        table["task_id"].to_list(),
        table["passed"].to_list(),
        table["truncated"].fill_null(False).to_list(),
    )
    cols = read_batch(path)
    assert cols.task_ids is not None and cols.rewards is not None
    cuts = cols.truncated if cols.truncated is not None else [False] * cols.size
    out["update"] = _grouped(cols.task_ids, [r >= 1.0 for r in cols.rewards], list(cuts))
    return out


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(dump=dumps())
def test_every_command_reads_the_same_rows(tmp_path_factory: Any, dump: dict[str, Any]) -> None:
    tmp = tmp_path_factory.mktemp("agree")
    path = write(tmp, dump)
    want = expected(dump)
    repeat = dump["repeat"]
    if repeat is not None and repeat[2] == "other":  # refused at its line, naming the key
        at, key, _ = repeat
        for read in every_reader(path):
            with pytest.raises(InputError) as err:
                read()
            assert f":{at + 1}: field '{key}': written twice" in str(err.value), str(err.value)
        return
    if dump["refused"]:
        refusals = []
        for read in every_reader(path):
            with pytest.raises(InputError) as err:
                read()
            refusals.append(str(err.value))
        assert all("nothing was generated" in str(r) for r in refusals), refusals
        return
    got = readings(path, tmp)
    for command, tasks in got.items():
        assert _shape(list(tasks.values())) == want["shape"], command  # type: ignore[arg-type]
        if dump["id_key"] is not None:
            assert tasks == {k: tuple(v) for k, v in want["tasks"].items()}, command
    keys = {command: sorted(tasks) for command, tasks in got.items()}
    assert len({tuple(k) for k in keys.values()}) == 1, keys  # one task key per task, everywhere
    rows = read_rows([str(path)], aggregate=Counts())
    pool = summarize(rows)
    known = int(pool.tasks["truncated_known"].sum())
    assert known == (want["rows"] if want["truncation_known"] else 0)
    table = read_table([str(path)]).canonical
    assert table["truncated"].null_count() == (0 if want["truncation_known"] else want["rows"])
    assert set(pool.models) == {dump["model"]}
    assert set(table["model"].to_list()) == {dump["model"]}
    assert rows.judge is not None and rows.judge.judged == want["judged"]
    route = run_route([str(path)])
    assert route.grader == ("judge" if want["judged"] else "program")  # type: ignore[union-attr]


AGREED = {  # one file per case, read through the command line
    "truncated by finish_reason": {"finish_reason": "length"},
    "judged": {"judge_reward_func": 1.0},
}


@pytest.mark.parametrize("case", sorted(AGREED))
def test_the_command_line_agrees(tmp_path: Path, case: str) -> None:
    rows = [
        {"prompt": f"q{t}", "completion": "x", "reward": float(r), "finish_reason": "stop"}
        | (AGREED[case] if r == 1 else {})
        for t in range(4)
        for r in (0, 1, 1)
    ]
    path = tmp_path / "rows.jsonl"
    text = "".join(json.dumps(r) + "\n" for r in rows)
    path.write_text(text)
    runner = CliRunner()
    reports = [
        json.loads(runner.invoke(app, ["route", *args, "--format", "json"], input=stdin).output)
        for args, stdin in (([str(path)], None), (["-"], text))
    ]
    assert reports[0]["summary"] == reports[1]["summary"]
    assert reports[0]["grader"] == reports[1]["grader"]
    check = runner.invoke(app, ["check", "-", "--fail-on", "judge-unaudited"], input=text)
    judged = case == "judged"
    assert reports[0]["grader"] == ("judge" if judged else "program")
    assert check.exit_code == (1 if judged else 0), check.output
    cols = read_batch(path)
    assert cols.truncated is not None and int(cols.truncated.sum()) == (0 if judged else 8)
    assert cols.task_ids is not None and len(set(cols.task_ids)) == 4  # keyed by the prompt


def test_nothing_generated_is_refused_by_every_command(tmp_path: Path) -> None:
    rows = [{"task_id": f"t{i % 3}", "completion": "{}", "reward": float(i % 2)} for i in range(9)]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    runner = CliRunner()
    for args in (["route", str(path)], ["check", str(path)], ["ada", str(path)]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2 and "nothing was generated" in result.output, (args, result)


def test_update_masks_what_the_route_counts_truncated(tmp_path: Path) -> None:
    """No task id but a prompt, and finish_reason "length" on 3 rows: ``update --method grpo
    --truncated mask`` keys the tasks as the route does and masks exactly those 3 rows."""
    rows = [
        {
            "prompt": f"q{i // 4}",
            "completion": "x",
            "reward": float(i % 2),
            "logprobs": [-0.1, -0.2],
            "finish_reason": "length" if i < 3 else "stop",
        }
        for i in range(8)
    ]
    path = tmp_path / "b.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    args = ["update", str(path), "--method", "grpo", "--truncated", "mask", "-o", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert [w["admitted"] for w in written] == [False] * 3 + [True] * 5
    pool = summarize(read_rows([str(path)], aggregate=Counts()))
    assert sorted({w["task_id"] for w in written}) == pool.tasks["task_id"].to_list()
    assert int(pool.tasks["truncated"].sum()) == 3


def test_update_sees_keys_and_values_past_the_rows_that_type_the_batch(tmp_path: Path) -> None:
    """A batch typed from its first rows still reads a truncation flag only later rows carry,
    and a column null on the first rows, as the route does."""
    rows: list[dict[str, Any]] = [
        {"task_id": f"t{i % 5}", "reward": float(i % 2), "logprobs": [-0.1], "agent": None}
        for i in range(40)
    ]
    rows[30]["truncated"] = True
    rows[35]["agent"] = "a1"
    path = tmp_path / "b.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cols = read_batch(path)
    assert cols.truncated is not None and cols.truncated.nonzero()[0].tolist() == [30]
    assert cols.agents is not None and cols.agents[35] == "a1"
    pool = summarize(read_rows([str(path)], aggregate=Counts()))
    assert int(pool.tasks["truncated"].sum()) == 1
