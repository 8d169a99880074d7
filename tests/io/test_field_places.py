"""A field is read in every place of its kind (DESIGN section 1, the alias tables): a row's
extras (``metadata``, verifiers' ``info``, verl's ``extra_info``, ``extras``, ``meta``;
:data:`whilecli.io.aliases.EXTRA_PLACES`), a sampler's objects for a token cap
(:data:`whilecli.io.aliases.SAMPLING_PLACES`, a request's and a config's), and an error's
holders (``result``, ``state``).

* Truncation: a flag or a finish reason in a row's extras, or a token count against a cap in
  a sampler's object, decides the row as at the top level.
* The writer: a model field in any place, a model object or a one-element list names the
  model; a served-model placeholder (``default``, ``policy``) names none, so the next field
  speaks; rows naming the model under different fields are each read (check 6 sees both).
  A judge's model beside a judge's fields, and a role's field holding a non-model word, name
  no writer.
* Errors: ``error`` in any holder, beside no reply, is a harness error.
"""

from __future__ import annotations

from itertools import product
from pathlib import Path
from typing import Any

import pytest

from read_helpers import frame_of
from rows_files import finding_kinds, route_rows, write_rows

MODEL = "Qwen/Qwen2.5-7B-Instruct"
OTHER = "gpt-4o-2024-08-06"
KINDS = ("jsonl", "parquet")

Row = dict[str, Any]


def _put(row: Row, dotted: str, value: object) -> Row:
    """``row`` with ``value`` at the dotted path (objects made as needed)."""
    *parents, last = dotted.split(".")
    node = row
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value
    return row


def _pool(n: int = 96) -> list[Row]:
    """``n`` rows of ``n // 8`` tasks, k=8, each task split, a distinct reply per row."""
    return [
        {"task_id": f"t{i // 8}", "reward": float(i % 8 < 1 + (i // 8) % 6), "completion": f"r{i}"}
        for i in range(n)
    ]


def _check(route: object, key: str) -> Any:
    return next(c for c in route.checks if c.key == key)  # type: ignore[attr-defined]


#: Where harnesses keep a row's extras (as :data:`whilecli.io.aliases.EXTRA_PLACES`).
CONTAINERS = ["metadata.", "info.", "extra_info.", "extras.", "meta."]
#: A sampler's objects (as :data:`whilecli.io.aliases.SAMPLING_PLACES`).
SAMPLING_PLACES = ["", "sampling_params.", "sampling_args.", "generation_config."]
SAMPLING_PLACES += ["generation_kwargs.", "gen_kwargs.", "responses_create_params."]
FLAGS = {"truncated": (True, False), "is_truncated": (1, 0), "finish_reason": ("length", "stop")}


@pytest.mark.parametrize(("kind", "place", "name"), list(product(KINDS, CONTAINERS, sorted(FLAGS))))
def test_a_cut_recorded_in_a_rows_extras_is_read(
    tmp_path: Path, kind: str, place: str, name: str
) -> None:
    yes, no = FLAGS[name]
    rows = [
        _put(dict(r, model=MODEL), place + name, yes if i % 10 == 3 else no)
        for i, r in enumerate(_pool())
    ]
    path = write_rows(tmp_path, rows, kind)
    frame, read = frame_of(path)
    assert frame["truncated"].to_list() == [i % 10 == 3 for i in range(len(rows))]
    assert place + name in read.sources["truncated"]
    assert _check(route_rows(path, MODEL), "truncated_passes").status.value == "fail"


#: Where a token cap is kept: each sampler's object, a request's, a config's, the extras.
CAP_PLACES = [*SAMPLING_PLACES, "request.", "config.", "metadata.", "info."]
CAP_NAMES = ["max_tokens", "max_new_tokens", "max_completion_tokens", "max_gen_toks"]
#: A reply's token count and, for the names read only against their own, its cap.
COUNT_PAIRS = [
    ("completion_tokens", None),
    ("usage.completion_tokens", None),
    ("meta_info.completion_tokens", None),
    ("num_tokens", None),
    ("info.response_length", None),
    ("output_length", "max_length"),
    ("response_len", "max_response_len"),
]


@pytest.mark.parametrize(("kind", "place", "cap_name"), list(product(KINDS, CAP_PLACES, CAP_NAMES)))
def test_a_token_cap_in_any_samplers_place_is_read(
    tmp_path: Path, kind: str, place: str, cap_name: str
) -> None:
    cap = 1024
    rows = [
        _put(
            dict(r, model=MODEL, completion_tokens=cap if i % 10 == 3 else 200 + i),
            place + cap_name,
            cap,
        )
        for i, r in enumerate(_pool())
    ]
    path = write_rows(tmp_path, rows, kind)
    frame, read = frame_of(path)
    assert frame["truncated"].to_list() == [i % 10 == 3 for i in range(len(rows))]
    assert (place + cap_name) in read.sources["truncated"]


@pytest.mark.parametrize(("kind", "pair"), list(product(KINDS, COUNT_PAIRS)))
def test_a_token_count_under_another_name_is_read(
    tmp_path: Path, kind: str, pair: tuple[str, str | None]
) -> None:
    count_name, cap_name = pair
    cap = 4096
    rows = []
    for i, r in enumerate(_pool()):
        row = _put(dict(r, model=MODEL), count_name, cap if i % 10 == 3 else 100 + i)
        rows.append(_put(row, cap_name or "sampling_params.max_new_tokens", cap))
    frame, _ = frame_of(write_rows(tmp_path, rows, kind))
    assert frame["truncated"].to_list() == [i % 10 == 3 for i in range(len(rows))]


#: Where the writer's name is kept, and how it is written there.
MODEL_FIELDS = [
    *(p + n for p in ("", *CONTAINERS) for n in ("model", "model_name", "model_path")),
    *("generator", "policy", "agent", "llm", "engine", "served_model_name", "policy_model"),
    *("actor_model", "generation_model", "sampler.model", "request.model", "config.model"),
    *("agent.config.model", "sampling.model", "response.model", "model_name_or_path"),
]
SPELLED = {
    "text": lambda m: m,
    "name object": lambda m: {"name": m, "provider": "openai"},
    "id object": lambda m: {"id": m},
    "list": lambda m: [m],
}


@pytest.mark.parametrize(("kind", "field"), list(product(KINDS, MODEL_FIELDS)))
def test_a_model_in_any_place_names_the_writer(tmp_path: Path, kind: str, field: str) -> None:
    rows = [_put(r, field, OTHER) for r in _pool()]
    path = write_rows(tmp_path, rows, kind)
    frame, read = frame_of(path)
    assert set(frame["model"].to_list()) == {OTHER}, read.sources["model"]
    route = route_rows(path, MODEL)
    assert _check(route, "on_policy").status.value == "fail"
    assert route.method != "grpo"


@pytest.mark.parametrize(
    ("kind", "field", "spelled"), list(product(KINDS, ["model", "metadata.model"], sorted(SPELLED)))
)
def test_a_model_object_or_list_names_the_writer(
    tmp_path: Path, kind: str, field: str, spelled: str
) -> None:
    rows = [_put(r, field, SPELLED[spelled](OTHER)) for r in _pool()]
    frame, read = frame_of(write_rows(tmp_path, rows, kind))
    assert set(frame["model"].to_list()) == {OTHER}, read.sources["model"]


PLACEHOLDERS = ["default", "policy", "Default", "actor", "main"]


@pytest.mark.parametrize(
    ("kind", "placeholder", "beside"),
    list(
        product(KINDS, PLACEHOLDERS, ["model_name_or_path", "model_path", "metadata.model", None])
    ),
)
def test_a_placeholder_model_names_none(
    tmp_path: Path, kind: str, placeholder: str, beside: str | None
) -> None:
    rows = [dict(r, model=placeholder) for r in _pool()]
    if beside is not None:
        rows = [_put(r, beside, MODEL) for r in rows]
    path = write_rows(tmp_path, rows, kind)
    frame, _ = frame_of(path)
    assert set(frame["model"].to_list()) == ({MODEL} if beside else {None})
    route = route_rows(path, MODEL)
    assert route.method == "grpo", route.route
    on = _check(route, "on_policy")
    assert on.status.value == ("pass" if beside else "unknown"), on.why


@pytest.mark.parametrize(
    ("kind", "field"), list(product(KINDS, ["generator", "metadata.model", "info.model"]))
)
def test_rows_naming_the_writer_under_two_fields_are_each_read(
    tmp_path: Path, kind: str, field: str
) -> None:
    rows = [dict(r, model=MODEL) if i % 2 else _put(r, field, OTHER) for i, r in enumerate(_pool())]
    path = write_rows(tmp_path, rows, kind)
    frame, _ = frame_of(path)
    assert frame["model"].to_list() == [MODEL if i % 2 else OTHER for i in range(len(rows))]
    route = route_rows(path, MODEL)
    on = _check(route, "on_policy")
    assert on.status.value != "pass", on.why
    assert "name no model" not in (route.headline or "")


JUDGE_SIDES = [
    {"judge_prompt": "Is the answer right?"},
    {"grader": "llm"},
    {"verdict": "correct"},
]


@pytest.mark.parametrize(
    ("kind", "place", "side"),
    list(product(KINDS, ["metadata", "info", "config"], range(len(JUDGE_SIDES)))),
)
def test_a_judges_model_names_no_writer(tmp_path: Path, kind: str, place: str, side: int) -> None:
    rows = [dict(r, **{place: {"model": OTHER, **JUDGE_SIDES[side]}}) for r in _pool()]
    path = write_rows(tmp_path, rows, kind)
    frame, read = frame_of(path)
    assert set(frame["model"].to_list()) == {None}, read.sources["model"]
    assert route_rows(path, MODEL).method == "grpo"


@pytest.mark.parametrize(
    ("kind", "field", "word"),
    list(
        product(
            KINDS, ["policy", "agent", "engine", "generator", "llm"], ["greedy", "terminus", "v2"]
        )
    ),
)
def test_a_roles_word_that_is_no_model_names_no_writer(
    tmp_path: Path, kind: str, field: str, word: str
) -> None:
    rows = [dict(r, **{field: word}) for r in _pool()]
    path = write_rows(tmp_path, rows, kind)
    frame, _ = frame_of(path)
    assert set(frame["model"].to_list()) == {None}
    assert route_rows(path, MODEL).method == "grpo"


ERROR_HOLDERS = ["metadata", "info", "extra_info", "result", "state"]


@pytest.mark.parametrize(("kind", "holder"), list(product(KINDS, ERROR_HOLDERS)))
def test_an_error_in_any_holder_is_a_harness_error(tmp_path: Path, kind: str, holder: str) -> None:
    rows = []
    for i in range(96):
        row: Row = {"task_id": f"t{i // 8}", "reward": 1.0, "completion": f"r{i}", "model": MODEL}
        if i % 12 == 5:
            row |= {"reward": 0.0, "completion": "", holder: {"error": "APIConnectionError"}}
        rows.append(row)
    path = write_rows(tmp_path, rows, kind)
    _, read = frame_of(path)
    assert read.facts.errors == 8
    route = route_rows(path, MODEL)
    assert finding_kinds(route)[0] == "errors"
    assert route.method != "grpo"
