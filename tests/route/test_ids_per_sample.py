"""One row per id, where the ids are prompts × samples (``t12_s3``, ``s3_t12``,
``gsm8k/12/sample_3/x``, ``t12-<uuid>``) and no prompt text keys them: the rows may be k draws
per prompt read as one rollout per prompt, so the verdict is provisional (``ids_per_sample``).
The generators spell the sample's index every way writers do, in any part of the id, at k
from 2 to 8 and from 0 or 1, or give each draw a part of its own (a uuid, a hash, a request
id, a timestamp); the other side holds ids that end in a number without being samples (a
benchmark's own numbering, a subject and its question number, uuids, hashes after a subject),
which say nothing."""

from __future__ import annotations

import random
import uuid
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rows_files import finding_kinds, route_rows, write_rows
from whilecli.route import run_route
from whilecli.route.model import Route

MODEL = "Qwen/Qwen3-8B"
SPELLINGS = ["{t}_s{j}", "{t}-sample-{j}", "{t}#{j}", "{t}:{j}", "{t}_rollout_{j}", "{t}/{j}"]
SPELLINGS += ["{t}|seed={j}", "{t}_seed{j}"]
#: Where a stem's numbers start: 0 or 1, or a seed every prompt's draws count up from.
BASES = [0, 1, 7, 42, 1000, 123456]


def _rows(ids: list[str], seed: int) -> list[dict]:
    rnd = random.Random(seed)
    return [{"task_id": i, "reward": float(rnd.random() < 0.5), "model": MODEL} for i in ids]


@settings(max_examples=10, deadline=None)
@given(
    spelling=st.sampled_from(SPELLINGS),
    k=st.integers(2, 8),
    base=st.sampled_from(BASES),
    stem=st.sampled_from(["t{n}", "q{n}", "gsm8k-{n}", "{n}"]),
    seed=st.integers(0, 2**16),
)
def test_ids_that_read_as_prompts_times_samples_leave_k1_provisional(
    tmp_path_factory: pytest.TempPathFactory, spelling: str, k: int, base: int, stem: str, seed: int
) -> None:
    ids = [spelling.format(t=stem.format(n=n), j=j + base) for n in range(300) for j in range(k)]
    got = route_rows(write_rows(tmp_path_factory.mktemp("ids"), _rows(ids, seed), "jsonl"), MODEL)
    assert got.route == "single-rollout"
    assert got.provisional and "ids_per_sample" in finding_kinds(got)


#: Where a draw's number sits in an id: before the prompt's part, between two of its parts,
#: after it, or after it with a part after.
PLACES = ["{j}_{t}", "s{j}-{t}", "{t}/sample_{j}/out", "run{j}.{t}", "{t}:{j}:final", "{t}_r{j}"]


@settings(max_examples=12, deadline=None)
@given(
    place=st.sampled_from(PLACES),
    k=st.integers(2, 8),
    base=st.sampled_from(BASES),
    stem=st.sampled_from(["t{n}", "q{n}", "gsm8k-{n}", "{n}", "math/algebra/{n}"]),
    seed=st.integers(0, 2**16),
)
def test_a_draws_number_in_any_part_of_the_id_leaves_k1_provisional(
    tmp_path_factory: pytest.TempPathFactory, place: str, k: int, base: int, stem: str, seed: int
) -> None:
    ids = [place.format(t=stem.format(n=n), j=j + base) for n in range(200) for j in range(k)]
    random.Random(seed).shuffle(ids)
    got = route_rows(write_rows(tmp_path_factory.mktemp("ids"), _rows(ids, seed), "jsonl"), MODEL)
    assert got.route == "single-rollout"
    assert got.provisional and "ids_per_sample" in finding_kinds(got)


def _own_part(kind: str, rnd: random.Random) -> str:
    """A part one draw holds alone: a uuid, a hex hash, a request id, a timestamp."""
    if kind == "uuid":
        return str(uuid.UUID(int=rnd.getrandbits(128)))
    if kind == "hash":
        return f"{rnd.getrandbits(64):016x}"[: rnd.choice([8, 12, 16])]
    if kind == "request":
        return "".join(rnd.choice("ABCDEFGHJKabcdefghjk0123456789") for _ in range(20))
    return f"2026-11-{rnd.randint(1, 28):02d}T{rnd.randint(0, 23):02d}:{rnd.randint(0, 59):02d}:00Z"


@settings(max_examples=12, deadline=None)
@given(
    kind=st.sampled_from(["uuid", "hash", "request", "time"]),
    spelling=st.sampled_from(["{t}-{own}", "{own}_{t}", "{t}/{own}", "run {own} {t}"]),
    k=st.integers(2, 8),
    seed=st.integers(0, 2**16),
)
def test_a_part_each_draw_holds_alone_leaves_k1_provisional(
    tmp_path_factory: pytest.TempPathFactory, kind: str, spelling: str, k: int, seed: int
) -> None:
    rnd = random.Random(seed)
    ids: list[str] = []
    for n in range(150):
        own: set[str] = set()
        while len(own) < k:  # one id per draw: two draws never share a timestamp
            own.add(_own_part(kind, rnd))
        ids += [spelling.format(t=f"q{n}", own=o) for o in sorted(own)]
    got = route_rows(write_rows(tmp_path_factory.mktemp("ids"), _rows(ids, seed), "jsonl"), MODEL)
    assert got.route == "single-rollout"
    assert got.provisional and "ids_per_sample" in finding_kinds(got)


def _subject_hashes(sizes: list[int]) -> list[str]:
    rnd = random.Random(3)
    return [f"subject{s}_{rnd.getrandbits(64):016x}" for s, n in enumerate(sizes) for _ in range(n)]


@pytest.mark.parametrize(
    "ids",
    [
        [f"gsm8k_{n}" for n in range(2000)],
        [f"{s}_{n}" for s in ("algebra", "geometry", "number_theory") for n in range(600)],
        [str(n) for n in range(2000)],
        [str(uuid.UUID(int=random.Random(n).getrandbits(128))) for n in range(2000)],
        [f"q{n}" for n in range(2000)],
        [f"HumanEval/{n}" for n in range(164)] * 1,
        [f"{random.Random(n).getrandbits(64):016x}" for n in range(2000)],
        _subject_hashes([random.Random(s).randint(20, 300) for s in range(57)]),
        [f"{s}_{n}" for s in ("algebra", "geometry") for n in range(1, 1001)],
        [
            f"s{s}_{n}"
            for s in range(57)
            for n in range(1000, 1000 + random.Random(s).randint(20, 90))
        ],
    ],
    ids=[
        *("benchmark", "subjects", "ints", "uuids", "plain", "humaneval", "hashes"),
        *("subject-hashes", "two-subjects-from-1", "subjects-from-1000"),
    ],
)
def test_ids_that_end_in_a_number_alone_say_nothing(tmp_path: Path, ids: list[str]) -> None:
    got = route_rows(write_rows(tmp_path, _rows(ids, 1), "jsonl"), MODEL)
    assert "ids_per_sample" not in finding_kinds(got)


#: One id spelled the ways two writers (or two files) spell it: case, a number's leading zeros.
SPELLED_APART = [
    ("TASK{n:04d}", "task{n:04d}"),
    ("{n:04d}", "{n}"),
    ("Q{n}", "q{n}"),
    ("gsm8k-{n:05d}", "GSM8K-{n}"),
]


@settings(max_examples=8, deadline=None)
@given(
    pair=st.sampled_from(SPELLED_APART),
    k=st.integers(2, 4),
    files=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_one_id_spelled_apart_leaves_k1_provisional(
    tmp_path_factory: pytest.TempPathFactory,
    pair: tuple[str, str],
    k: int,
    files: bool,
    seed: int,
) -> None:
    """k draws per prompt, each writer spelling the id its own way (in one file, or one
    file per writer): read as k one-row tasks per prompt, a firm FlashReinforce. The ids
    differ by case or leading zeros only: provisional."""
    folder = tmp_path_factory.mktemp("spelled")
    draws = [[pair[j % 2].format(n=n) for n in range(200)] for j in range(k)]
    if files:
        paths = []
        for j, ids in enumerate(draws):
            (folder / f"w{j}").mkdir()
            paths.append(write_rows(folder / f"w{j}", _rows(ids, seed + j), "jsonl"))
        routed = run_route([str(p) for p in paths], model=MODEL)
        assert isinstance(routed, Route)
        got = routed
    else:
        got = route_rows(
            write_rows(folder, _rows([i for d in draws for i in d], seed), "jsonl"), MODEL
        )
    if got.route == "single-rollout":
        assert got.provisional and "ids_per_sample" in finding_kinds(got), got.headline


@pytest.mark.parametrize("ids", [[f"T{n}" for n in range(300)], [f"{n:04d}" for n in range(300)]])
def test_ids_spelled_one_way_say_nothing(tmp_path: Path, ids: list[str]) -> None:
    got = route_rows(write_rows(tmp_path, _rows(ids, 1), "jsonl"), MODEL)
    assert "ids_per_sample" not in finding_kinds(got)
