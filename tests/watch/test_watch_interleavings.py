"""Generated runs in progress: a trainer's writes cut at arbitrary bytes, late step
directories, and polls between any two writes. Whatever the interleaving, every step is
handed out once, in order, and only once its rollouts file is whole."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.watch.layout import FinishedStep, PrimeRLRun, VerlRun


@dataclass
class Write:
    path: str
    data: bytes


def _lines(step: int, rows: int) -> bytes:
    return b"".join(json.dumps({"step": step, "i": i}).encode() + b"\n" for i in range(rows))


def _cut(data: bytes, cuts: list[int], keep: frozenset[int] = frozenset()) -> list[bytes]:
    """``data`` cut at the given offsets (modulo its length), never at one in ``keep``."""
    points = sorted({c % len(data) for c in cuts if c % len(data) > 0} - keep)
    bounds = [0, *points, len(data)]
    return [data[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


@st.composite
def prime_rl_runs(draw: st.DrawFn) -> list[Write | None]:
    """A prime-rl trainer's writes, step by step, with polls (None) between any two."""
    steps = draw(st.integers(1, 5))
    out: list[Write | None] = []
    for step in range(1, steps + 1):
        traces = Write(f"rollouts/step_{step}/train/all/traces.jsonl", _lines(step, 3))
        trainer = json.dumps({"step": step, "loss/mean": 0.1}).encode() + b"\n"
        orch = json.dumps({"step": step, "off_policy/mean": 1.0}).encode() + b"\n"
        cuts = draw(st.lists(st.integers(1, 400), max_size=4))
        pieces = [Write("metrics.jsonl", p) for p in _cut(trainer + orch, cuts)]
        if draw(st.booleans()):  # late: the row first, the directory after (written at once)
            writes = [*pieces, traces]
        else:  # traces appended in pieces while the step runs, then the rows
            tcuts = draw(st.lists(st.integers(1, 400), max_size=4))
            writes = [*[Write(traces.path, p) for p in _cut(traces.data, tcuts)], *pieces]
        for write in writes:
            out += [None] * draw(st.integers(0, 2))
            out.append(write)
    return out


def _apply(root: Path, write: Write) -> None:
    path = root / write.path
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as fh:
        fh.write(write.data)


def _final(writes: list[Write | None]) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for w in writes:
        if w is not None:
            files[w.path] = files.get(w.path, b"") + w.data
    return files


def _check(got: list[FinishedStep], root: Path, whole: dict[str, bytes], seen: list[int]) -> None:
    for one in got:
        assert one.path is not None, one
        name = str(one.path.relative_to(root))
        assert one.path.read_bytes() == whole[name], (one.step, "read before it was whole")
        seen.append(one.step)


@settings(max_examples=60, deadline=None)
@given(prime_rl_runs())
def test_prime_rl_steps_once_in_order_and_whole(writes: list[Write | None]) -> None:
    whole = _final(writes)
    steps = sorted({int(p.split("/")[1][5:]) for p in whole if p.startswith("rollouts")})
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        run = PrimeRLRun(root, settle=0)
        seen: list[int] = []
        for write in writes:
            if write is None:
                _check(run.poll(final=False), root, whole, seen)
            else:
                _apply(root, write)
        for _ in range(3):  # the trainer is done: a few more polls
            _check(run.poll(final=False), root, whole, seen)
        assert seen == steps


@st.composite
def verl_runs(draw: st.DrawFn) -> list[Write | None]:
    """A verl trainer's step files, written in pieces that end mid-line (buffered writes), with
    polls between any two."""
    steps = draw(st.integers(1, 5))
    out: list[Write | None] = []
    for step in range(1, steps + 1):
        data = _lines(step, 3)
        ends = frozenset(i + 1 for i, b in enumerate(data) if b == ord("\n"))
        cuts = draw(st.lists(st.integers(1, 200), max_size=4))
        for piece in _cut(data, cuts, ends):
            out += [None] * draw(st.integers(0, 2))
            out.append(Write(f"{step}.jsonl", piece))
    return out


@settings(max_examples=60, deadline=None)
@given(verl_runs())
def test_verl_steps_once_in_order_and_whole(writes: list[Write | None]) -> None:
    whole = _final(writes)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        run = VerlRun(root, follow=True, settle=0)
        seen: list[int] = []
        for write in writes:
            if write is None:
                _check(run.poll(final=False), root, whole, seen)
            else:
                _apply(root, write)
        for _ in range(3):
            _check(run.poll(final=False), root, whole, seen)
        assert seen == sorted(int(p.split(".")[0]) for p in whole)
