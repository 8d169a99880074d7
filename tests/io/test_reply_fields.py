"""The reply text wherever the rows keep it (DESIGN section 1: ``reply``, "Identical draws"):
one resolution feeds empty replies, error texts and draw keys alike.

The generator writes one pool in each place a tool keeps its reply (``completion`` as text or
a chat list, ``text``, an OpenAI chat completion's ``choices[0].message.content``, a text
completion's ``choices[0].text``, a chat transcript's last turns under ``messages`` with or
without a system turn and a ``prompt`` beside it), as JSON Lines and Parquet: greedy draws
(each task's k replies one text) route as one draw repeated; distinct draws route as the
plain pool does; error texts there are errors.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from rows_files import finding_kinds, route_rows, write_rows
from whilecli.route.model import Route

MODEL = "Qwen/Qwen3-8B"
Row = dict[str, Any]


def _place(row: Row, where: str, text: str) -> Row:
    """``row`` with its reply ``text`` kept where ``where`` says."""
    question = row["prompt"]
    if where == "completion":
        return row | {"completion": text}
    if where == "completion-chat":
        return row | {"completion": [{"role": "assistant", "content": text}]}
    if where == "choices.message":
        choice = {"index": 0, "message": {"role": "assistant", "content": text}}
        return row | {"choices": [choice | {"finish_reason": "stop"}]}
    if where == "choices.text":
        return row | {"choices": [{"index": 0, "text": text, "finish_reason": "stop"}]}
    turns = [{"role": "user", "content": question}, {"role": "assistant", "content": text}]
    if where == "messages-system":
        turns.insert(0, {"role": "system", "content": "You are helpful."})
    out = {k: v for k, v in row.items() if k != "prompt" or where == "messages-prompt"}
    return out | {"messages": turns}


PLACES = [
    "completion",
    "completion-chat",
    "choices.message",
    "choices.text",
    "messages",
    "messages-system",
    "messages-prompt",
]


def pool(where: str, seed: int, greedy: bool, tasks: int = 40, k: int = 8) -> list[Row]:
    """Most tasks split; ``greedy``: each task's k replies are one text."""
    rnd = random.Random(seed)
    rows = []
    for t in range(tasks):
        p = rnd.choice([0.25, 0.5, 0.75])
        for j in range(k):
            text = f"The answer to {t} is {t * 7}."
            if not greedy:
                text += f" draw {j} {rnd.random():.6f}"
            base = {
                "task_id": f"t{t:03d}",
                "prompt": f"Question {t}",
                "reward": 1.0 if j < max(1, round(p * k)) else 0.0,
                "truncated": False,
                "model": MODEL,
            }
            rows.append(_place(base, where, text))
    return rows


def write(folder: Path, rows: list[Row], kind: str) -> Path:
    return write_rows(folder, rows, kind)


def route(path: Path) -> Route:
    return route_rows(path, MODEL)


kinds = finding_kinds


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@pytest.mark.parametrize("where", PLACES)
def test_greedy_draws_are_one_draw_wherever_the_reply_sits(
    tmp_path: Path, where: str, kind: str
) -> None:
    seed = PLACES.index(where)
    greedy = route(write(tmp_path, pool(where, seed, greedy=True), kind))
    assert greedy.route == "repeated-draws" and greedy.provisional, (where, greedy.route)
    assert kinds(greedy)[0] == "repeated_draws"
    assert greedy.method != "grpo"


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@pytest.mark.parametrize("where", PLACES)
def test_distinct_draws_route_as_a_plain_pool(tmp_path: Path, where: str, kind: str) -> None:
    seed = PLACES.index(where)
    got = route(write(tmp_path, pool(where, seed, greedy=False), kind))
    plain = route(write(tmp_path, pool("completion", seed, greedy=False), kind))
    assert kinds(got) == kinds(plain) == []
    assert (got.route, got.method, got.provisional) == (plain.route, plain.method, False)
    assert got.route == "grpo"


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@pytest.mark.parametrize("where", PLACES)
def test_error_texts_are_errors_wherever_the_reply_sits(
    tmp_path: Path, where: str, kind: str
) -> None:
    """Every real reply passes; a fifth of the rows are a rate-limit message scored 0: left
    out, so the pool is saturated, never split."""
    seed = PLACES.index(where)
    rnd = random.Random(seed)
    rows = []
    for row in pool("completion", seed, greedy=False):
        text = row.pop("completion")
        if rnd.random() < 0.2:
            rows.append(_place(row | {"reward": 0.0}, where, "Error code: 429 - Rate limit"))
        else:
            rows.append(_place(row | {"reward": 1.0}, where, text))
    got = route(write(tmp_path, rows, kind))
    assert kinds(got)[0] == "errors", (where, kinds(got))
    assert got.route == "saturated" and got.method != "grpo"


def test_a_transcript_beside_a_completion_gives_the_rows_without_one_their_reply(
    tmp_path: Path,
) -> None:
    """Rows that keep their reply in ``completion`` and rows (the failed ones) that keep it in
    ``messages``: each row's reply is the first place that holds one."""
    rnd = random.Random(11)
    rows = []
    for row in pool("completion", 11, greedy=False):
        if rnd.random() < 0.2:
            row = _place(row | {"reward": 0.0}, "messages-prompt", "Request timed out.")
            row.pop("completion")
            rows.append(row)
        else:
            rows.append(row | {"reward": 1.0})
    got = route(write(tmp_path, rows, "jsonl"))
    assert kinds(got)[0] == "errors" and got.route == "saturated"
