"""An id whose prompt varies from draw to draw (DESIGN section 1, "Task ids are checked
against prompts").

Generated pools write k draws of each task under its id, the prompt drawn anew for each draw
as harnesses do it: the options of a multiple-choice question shuffled per draw, few-shot
examples drawn per draw before the question, or (the control) two datasets' ids colliding,
each prompt drawn k times. An id that carries different prompts is refused (exit 2), and the
hint must not lead to a wrong verdict: where keying by the prompt would leave the rows in
tasks of fewer than two rows on average (a firm one-rollout verdict on a k = 8 pool), it
offers ``--map task_id=ID``, not the prompt. ``--map task_id=ID`` keys the draws by their id
as asked: one task per id, the verdict provisional (``mapped_prompts``: the rows cannot say
whether an id holds one task or several), and another pool pairs with them by id.

Rows with no id are keyed by their prompt; where the prompt differs on most rows only in the
order of its words (the options shuffled per draw, on one line or one a line, the letters
kept or moved with them; a text or a chat list), each draw would be a task of its own and a
k = 8 pool would read as one rollout per prompt. Such rows are keyed by the prompt's words in
sorted order, provisionally (``prompt_reordered``: the order may be the task's own), and
one-rollout pools of distinct questions stay one task a row.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.io import facts

ENV = {"COLUMNS": "200", "NO_COLOR": "1"}
SETTINGS = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
ID_FIELDS = ("id", "task_id", "question_id")
EXAMPLES = [f"Example {e}: {e} + {e} = {2 * e}." for e in range(40)]


def prompt(task: int, draw: int, how: dict[str, Any], rnd: random.Random) -> str:
    """Task ``task``'s prompt as its draw ``draw`` was given it."""
    question = f"Question {task}: which option names item {task}?"
    if how["kind"] == "shuffled":
        options = [f"({chr(65 + i)}) option {i} of item {task}" for i in range(how["options"])]
        rnd.shuffle(options)
        return question + "\n" + "\n".join(options)
    if how["kind"] == "few-shot":
        shots = rnd.sample(EXAMPLES[: how["examples"]], how["shots"])
        return "\n".join([*shots, question])
    dataset = draw % 2  # colliding: two datasets numbered alike, each prompt drawn k/2 times
    return f"[dataset {dataset}] {question}"


@st.composite
def pools(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["shuffled", "few-shot", "colliding"]))
    how: dict[str, Any] = {"kind": kind}
    if kind == "shuffled":
        how["options"] = draw(st.integers(3, 6))
    elif kind == "few-shot":
        how["examples"] = draw(st.integers(6, 40))
        how["shots"] = draw(st.integers(1, 3))
    k = draw(st.integers(2, 8)) * (2 if kind == "colliding" else 1)
    return {
        "how": how,
        "n": draw(st.integers(4, 40)),
        "k": k,
        "id": draw(st.sampled_from(ID_FIELDS)),
        "suffix": draw(st.sampled_from([".jsonl", ".parquet"])),
        "seed": draw(st.integers(0, 2**16)),
    }


def rows_of(pool: dict[str, Any]) -> list[dict[str, Any]]:
    rnd = random.Random(pool["seed"])
    return [
        {
            pool["id"]: f"q-{t}",
            "prompt": prompt(t, j, pool["how"], rnd),
            "completion": f"reply {rnd.random():.9f}",
            "reward": float(rnd.random() < 0.5),
        }
        for t in range(pool["n"])
        for j in range(pool["k"])
    ]


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        pl.DataFrame(rows).write_parquet(path)
    return path


def several_prompts(rows: list[dict[str, Any]], id_field: str) -> tuple[int, int]:
    """(rows, distinct prompts summed over ids) of the ids that carry two prompts or more,
    counted by a plain loop."""
    by_id: dict[str, list[str]] = {}
    for r in rows:
        by_id.setdefault(r[id_field], []).append(r["prompt"])
    mixed = [p for p in by_id.values() if len(set(p)) > 1]
    return sum(len(p) for p in mixed), sum(len(set(p)) for p in mixed)


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), env=ENV)


@SETTINGS
@given(pool=pools())
def test_the_hint_for_an_id_of_several_prompts_keeps_the_draws_together(
    pool: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    rows = rows_of(pool)
    n_rows, prompts = several_prompts(rows, pool["id"])
    if not prompts:  # every draw drew the same prompt: one task per id, nothing to refuse
        return
    path = write(tmp_path_factory.mktemp("draws") / f"rows{pool['suffix']}", rows)
    refused = invoke("route", str(path))
    assert refused.exit_code == 2, refused.output
    said = " ".join(refused.output.split())
    assert "carries different prompts" in said, said
    assert f"({prompts} prompts in {n_rows} rows)" in said, (said, prompts, n_rows)
    if prompts > n_rows / 2:  # keyed by the prompt, tasks of under two rows on average
        assert f"--map task_id={pool['id']}" in said, said
        assert "--map task_id=prompt" not in said, said
    else:
        assert "--map task_id=prompt" in said, said

    report = invoke("route", str(path), "--map", f"task_id={pool['id']}", "--format", "json")
    assert report.exit_code == 0, report.output
    got = json.loads(report.stdout)
    rollouts = next(c for c in got["checks"] if c["key"] == "rollouts_per_task")["measured"]
    assert rollouts["tasks"] == pool["n"], rollouts
    assert "mapped_prompts" in [f["kind"] for f in got["data_quality"]], got["data_quality"]
    assert got["provisional"] is True


def test_ids_with_prompts_counts_as_a_plain_loop_does() -> None:
    rnd = random.Random(3)
    for _ in range(30):
        rows = [
            {"task_id": f"t{rnd.randrange(6)}", "p": rnd.randrange(4)}
            for _ in range(rnd.randrange(1, 40))
        ]
        frame = pl.DataFrame(rows).with_columns(pl.col("p").cast(pl.UInt64).alias(facts.PROMPT))
        table = frame.group_by("task_id").agg(
            pl.len().cast(pl.Int64).alias("n_all"),
            pl.col(facts.PROMPT).min().alias("p_lo"),
            pl.col(facts.PROMPT).max().alias("p_hi"),
            pl.col(facts.PROMPT).n_unique().cast(pl.Int64).alias("p_n"),
        )
        found = facts.ids_with_prompts(table)
        by_id: dict[str, set[int]] = {}
        counts: dict[str, int] = {}
        for r in rows:
            by_id.setdefault(r["task_id"], set()).add(r["p"])
            counts[r["task_id"]] = counts.get(r["task_id"], 0) + 1
        mixed = sorted(t for t, p in by_id.items() if len(p) > 1)
        if not mixed:
            assert found is None
            continue
        assert found is not None
        assert found.ids == len(mixed)
        assert found.rows == sum(counts[t] for t in mixed)
        assert found.prompts == sum(len(by_id[t]) for t in mixed)
        assert (found.first, found.first_rows) == (mixed[0], counts[mixed[0]])
        assert found.per_draw == (found.prompts > found.rows / 2)


def test_a_dump_of_ids_kept_by_map_pairs_with_another_by_id(tmp_path: Path) -> None:
    pool = {"how": {"kind": "shuffled", "options": 4}, "n": 30, "k": 6, "id": "id"}
    before = write(tmp_path / "before.jsonl", rows_of({**pool, "suffix": ".jsonl", "seed": 1}))
    after = write(tmp_path / "after.jsonl", rows_of({**pool, "suffix": ".jsonl", "seed": 2}))
    result = invoke("diff", str(before), str(after), "--map", "task_id=id", "--format", "json")
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    assert (got["shared_tasks"], got["other_prompt_tasks"]) == (30, 0), got


def shuffled(task: int, how: dict[str, Any], rnd: random.Random) -> str:
    """Task ``task``'s question with its options in a drawn order: the letters kept in place
    (the contents move) or moved with their contents; one line, or one option a line."""
    contents = [f"colour{task}x{i}" for i in range(how["options"])]
    rnd.shuffle(contents)
    letters = [chr(65 + i) for i in range(how["options"])]
    if how["letters"] == "moved":
        order = list(range(how["options"]))
        rnd.shuffle(order)
        letters = [letters[i] for i in order]
    options = [f"({a}) {c}" for a, c in zip(letters, contents, strict=True)]
    joined = (" " if how["one_line"] else "\n").join(options)
    return f"Question {task}: which colour is item {task}?\n{joined}"


@st.composite
def idless_pools(draw: st.DrawFn) -> dict[str, Any]:
    k = draw(st.integers(1, 8))
    return {
        "how": {
            "options": draw(st.integers(3, 6)),
            "letters": draw(st.sampled_from(["kept", "moved"])),
            "one_line": draw(st.booleans()),
        },
        "n": draw(st.integers(max(4, -(-16 // k)), 60)),
        "k": k,
        "chat": draw(st.booleans()),
        "suffix": draw(st.sampled_from([".jsonl", ".parquet"])),
        "seed": draw(st.integers(0, 2**16)),
    }


@SETTINGS
@given(pool=idless_pools())
def test_a_prompt_whose_options_are_shuffled_per_draw_keys_one_task(
    pool: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    rnd = random.Random(pool["seed"])
    rows = []
    for t in range(pool["n"]):
        for _ in range(pool["k"]):
            text = shuffled(t, pool["how"], rnd)
            rows.append(
                {
                    "prompt": [{"role": "user", "content": text}] if pool["chat"] else text,
                    "completion": f"reply {rnd.random():.9f}",
                    "reward": float(rnd.random() < 0.5),
                }
            )
    texts = [json.dumps(r["prompt"]) for r in rows]
    own = sum(1 for t in texts if texts.count(t) == 1)
    path = tmp_path_factory.mktemp("idless") / f"rows{pool['suffix']}"
    if pool["suffix"] == ".parquet" and pool["chat"]:
        pl.DataFrame(rows).write_parquet(path)
    else:
        write(path, rows)
    report = invoke("route", str(path), "--format", "json")
    assert report.exit_code in (0, 1), report.output
    got = json.loads(report.stdout)
    rollouts = next(c for c in got["checks"] if c["key"] == "rollouts_per_task")["measured"]
    kinds = [f["kind"] for f in got["data_quality"]]
    if pool["k"] >= 2 and own * 2 >= len(rows):  # keyed by the prompt, most draws alone
        assert rollouts["tasks"] == pool["n"], (rollouts, pool)
        assert "prompt_reordered" in kinds, kinds
        assert got["provisional"] is True
    else:  # the draws' prompts repeat as written, or every prompt is its own task
        assert "prompt_reordered" not in kinds, (kinds, pool)
        assert rollouts["tasks"] == len(set(texts)), (rollouts, pool)
