"""Fields under the names other tools give them (DESIGN section 1, the alias tables).

* The policy version: ``training_step``, ``checkpoint`` (``ckpt-350``), ``model_version``
  (``v3``), ``model_revision`` (``step100``) and the like are the weights' version: rows of
  several versions are older copies' (check 6), never "on-policy". ``iteration`` and
  ``turn`` count an agent's turns: never a version.
* Truncation: a flag under another name (``was_truncated``, ``hit_max_tokens``,
  ``max_tokens_reached``, ``exceed_length``) is read as ``truncated`` is; where a
  row records no flag or reason, its reply's token count reaching the cap it was sampled
  under is a cut-off reply, one under it is not, one past it says nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from read_helpers import frame_of
from rows_files import route_rows, write_rows

MODEL = "Qwen/Qwen3-8B"

VERSION_NAMES = ["training_step", "checkpoint", "model_version", "model_revision", "train_step"]
#: How a version is written under each name: a step, a checkpoint, a version, a revision.
SPELLED = {
    "int": lambda v: v * 10,
    "ckpt": lambda v: f"ckpt-{v * 50}",
    "v": lambda v: f"v{v}",
    "step": lambda v: f"step{v * 10}",
}


def _check(route: object, key: str) -> object:
    return next(c for c in route.checks if c.key == key)  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(VERSION_NAMES),
    spelled=st.sampled_from(sorted(SPELLED)),
    versions=st.integers(2, 5),
)
def test_a_version_under_another_name_is_read_and_moves_check_6(
    tmp_path: Path, kind: str, name: str, spelled: str, versions: int
) -> None:
    rows = [
        {
            "task_id": f"t{i // 8}",
            "reward": float((i * 7) % 3 == 0),
            "truncated": False,
            "model": MODEL,
            name: SPELLED[spelled](i * versions // 160),
        }
        for i in range(160)
    ]
    path = write_rows(tmp_path, rows, kind)
    frame, _ = frame_of(path)
    assert frame["policy_version"].to_list() == [str(r[name]) for r in rows]
    on = _check(route_rows(path, MODEL), "on_policy")
    assert on.status.value != "pass", on.why  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["iteration", "turn"])
def test_a_turn_count_is_no_version(tmp_path: Path, name: str) -> None:
    rows = [
        {"task_id": f"t{i // 8}", "reward": float(i % 2), "model": MODEL, name: (i * 3) % 5 + 2}
        for i in range(80)
    ]
    frame, _ = frame_of(write_rows(tmp_path, rows, "jsonl"))
    assert frame["policy_version"].null_count() == frame.height


CUT_FLAGS = ["was_truncated", "hit_max_tokens", "max_tokens_reached", "exceed_length"]
FLAG_SPELLINGS = {"bool": (True, False), "int": (1, 0), "text": ("true", "false")}


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(CUT_FLAGS),
    spelling=st.sampled_from(sorted(FLAG_SPELLINGS)),
    cut=st.lists(st.booleans(), min_size=16, max_size=40),
)
def test_a_cut_flag_under_another_name_is_read(
    tmp_path: Path, kind: str, name: str, spelling: str, cut: list[bool]
) -> None:
    yes, no = FLAG_SPELLINGS[spelling]
    rows = [
        {"task_id": f"t{i // 4}", "reward": 1.0, "model": MODEL, name: yes if c else no}
        for i, c in enumerate(cut)
    ]
    path = write_rows(tmp_path, rows, kind)
    frame, _ = frame_of(path)
    assert frame["truncated"].to_list() == cut
    check = _check(route_rows(path, MODEL), "truncated_passes")
    assert check.status.value == ("fail" if any(cut) else "pass")  # type: ignore[attr-defined]


COUNTS = ["completion_tokens", "response_length", "num_completion_tokens", "output_tokens"]
CAPS = ["max_tokens", "max_new_tokens", "max_response_length", "max_completion_tokens"]


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    count_name=st.sampled_from(COUNTS),
    cap_name=st.sampled_from(CAPS),
    cap=st.sampled_from([512, 1024, 4096]),
    lengths=st.lists(st.sampled_from(["at", "under", "past", "none"]), min_size=8, max_size=30),
    reason=st.booleans(),
)
def test_a_reply_whose_tokens_reach_the_cap_is_cut(
    tmp_path: Path,
    kind: str,
    count_name: str,
    cap_name: str,
    cap: int,
    lengths: list[str],
    reason: bool,
) -> None:
    counts = {"at": cap, "under": cap // 3, "past": cap * 4, "none": None}
    truth = {"at": True, "under": False, "past": None, "none": None}
    if lengths.count("past") >= 2:  # counts past their cap: the cap limits something else,
        truth = dict.fromkeys(truth)  # no pair (one such row is its own oddity: not known)
    rows = []
    expected = []
    for i, length in enumerate(lengths):
        row = {"task_id": f"t{i // 4}", "reward": 1.0, "model": MODEL}
        row |= {count_name: counts[length], cap_name: cap}
        said = truth[length]
        if reason and i % 3 == 0:  # a finish reason on the row decides it
            row["finish_reason"] = "stop"
            said = False
        rows.append(row)
        expected.append(said)
    frame, _ = frame_of(write_rows(tmp_path, rows, kind))
    assert frame["truncated"].to_list() == expected


ID_ALIASES = ["scenario_id", "task_id", "example_id", "prompt_id", "problem_id", "doc_id"]
ID_ALIASES += ["question_id", "instance_id", "id"]


@st.composite
def id_pairs(draw: st.DrawFn) -> tuple[str, str]:
    """Two id aliases, the first ahead of the second in the alias table."""
    first = draw(st.sampled_from(ID_ALIASES[:-1]))
    later = draw(st.sampled_from(ID_ALIASES[ID_ALIASES.index(first) + 1 :]))
    return first, later


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    pair=id_pairs(),
    tasks=st.integers(3, 40),
    k=st.integers(2, 8),
    per_row=st.sampled_from(["index", "uuid"]),
    shuffled=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_a_per_row_id_gives_way_to_the_id_that_groups(
    tmp_path: Path,
    kind: str,
    pair: tuple[str, str],
    tasks: int,
    k: int,
    per_row: str,
    shuffled: bool,
    seed: int,
) -> None:
    import random

    first, later = pair
    order = [(t, j) for t in range(tasks) for j in range(k)]
    if shuffled:
        random.Random(seed).shuffle(order)
    rows = [
        {
            first: i if per_row == "index" else f"{seed:x}-{i:06d}-row",
            later: f"q{t}",
            "reward": float((t + j) % 3 == 0),
            "model": MODEL,
        }
        for i, (t, j) in enumerate(order)
    ]
    frame, read = frame_of(write_rows(tmp_path, rows, kind))
    assert frame["task_id"].n_unique() == tasks
    assert frame["task_id"].to_list() == [r[later] for r in rows]
    assert any(first in n and later in n for n in read.notes), read.notes


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pair=id_pairs(), both_per_row=st.booleans())
def test_the_first_id_stays_where_it_groups_or_nothing_does(
    tmp_path: Path, kind: str, pair: tuple[str, str], both_per_row: bool
) -> None:
    first, later = pair
    rows = [
        {
            first: f"r{i}" if both_per_row else f"t{i // 4}",
            later: f"x{i}" if both_per_row else f"q{i // 8}",
            "reward": float(i % 2),
        }
        for i in range(48)
    ]
    frame, _ = frame_of(write_rows(tmp_path, rows, kind))
    assert frame["task_id"].to_list() == [r[first] for r in rows]


#: A row's log-prob list: real log-probs (at most 0, a few exactly 0), a placeholder of
#: zeros, probabilities (above 0), or log-probs with one probability among them.
LOGPROB_LISTS = {
    "real": lambda n, r: [-r.random() * 3 if i % 4 else 0.0 for i in range(n)],
    "zeros": lambda n, r: [0.0] * n,
    "zeros_int": lambda n, r: [0] * n,
    "probs": lambda n, r: [r.random() * 0.9 + 0.05 for _ in range(n)],
    "one_prob": lambda n, r: [-r.random() for _ in range(n - 1)] + [0.5],
}


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lists=st.lists(st.sampled_from(sorted(LOGPROB_LISTS)), min_size=6, max_size=30),
    name=st.sampled_from(["logprobs", "behavior_logprobs", "rollout_logprobs"]),
    seed=st.integers(0, 2**16),
)
def test_log_probs_are_present_only_where_they_are_log_probs(
    tmp_path: Path, kind: str, lists: list[str], name: str, seed: int
) -> None:
    import random

    rng = random.Random(seed)
    rows = [
        {
            "task_id": f"t{i}",
            "reward": float(i % 2),
            "truncated": False,
            "model": MODEL,
            name: LOGPROB_LISTS[shape](8, rng),
        }
        for i, shape in enumerate(lists)
    ]
    if kind == "parquet":  # one list type in the column
        for row in rows:
            row[name] = [float(x) for x in row[name]]
    path = write_rows(tmp_path, rows, kind)
    real = sum(1 for shape in lists if shape == "real")
    _, read = frame_of(path)
    assert read.facts.coverage["logprobs"] == real
    assert read.has_logprobs == (real > 0)
    if real < len(lists):
        assert any("not log-probs" in n for n in read.notes), read.notes
    check = _check(route_rows(path, MODEL), "rollouts_per_task")
    said = "present" in check.why  # type: ignore[attr-defined]
    assert said == (real == len(lists)), check.why  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    turns=st.integers(2, 5),
    finals=st.lists(st.sampled_from([0.0, 1.0]), min_size=8, max_size=24),
    name=st.sampled_from(["reward", "score"]),
)
def test_a_reward_per_turn_is_refused_naming_both_readings_and_its_last_is_read(
    tmp_path: Path, kind: str, turns: int, finals: list[float], name: str
) -> None:
    from whilecli.errors import InputError
    from whilecli.io.read import read_rows

    rows = [
        {"task_id": f"t{i // 4}", name: [0.0] * (turns - 1) + [r], "model": MODEL}
        for i, r in enumerate(finals)
    ]
    path = write_rows(tmp_path, rows, kind)
    with pytest.raises(InputError) as refused:
        read_rows([str(path)]).frame.collect()
    said = str(refused.value)
    assert f"--map reward={name}[] " in said and f"--map reward={name}[-1] " in said, said
    frame, _ = frame_of(path, mapping={"reward": f"{name}[-1]"})
    assert frame["reward"].to_list() == finals
    each, _ = frame_of(path, mapping={"reward": f"{name}[]"})
    assert each.height == len(finals) * turns


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    pair=id_pairs(),
    tasks=st.integers(1, 30),
    k=st.integers(2, 8),
    label=st.text("ab-", min_size=1, max_size=6),
)
def test_a_first_id_of_one_value_on_every_row_gives_way_to_the_id_that_groups(
    tmp_path: Path, kind: str, pair: tuple[str, str], tasks: int, k: int, label: str
) -> None:
    """The first id alias holding one value on every row (a benchmark's name) is a label
    where a later alias groups the rows into several tasks; with one task (the later alias
    one value too, or one per row) the rows are one task's draws and nothing changes."""
    first, later = pair
    rows = [{first: f"x{label}", later: f"q{t}", "reward": float((t + j) % 2), "model": MODEL}
            for t in range(tasks) for j in range(k)]  # fmt: skip
    frame, read = frame_of(write_rows(tmp_path, rows, kind))
    regrouped = tasks > 1 and len(rows) >= 8
    assert frame["task_id"].n_unique() == (tasks if regrouped else 1)
    assert any(first in n and later in n for n in read.notes) == regrouped
