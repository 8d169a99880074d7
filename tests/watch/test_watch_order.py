"""A trainer that breaks step order: a restart or resume from an earlier step, a rotated or
rewritten ``metrics.jsonl``, rows landing out of order, a step file that grows after it was
read. Whatever it does, every step it wrote last is reported with what it wrote last, and the
watch says what happened (a notice or a remark), never skipping a step in silence."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.watch.history import steps_text
from whilecli.watch.layout import FinishedStep, PrimeRLRun, VerlRun


def _orch(step: int, run: int = 0) -> str:
    return json.dumps({"step": step, "off_policy/mean": 1.0, "producer": "orch", "run": run})


def _body(step: int, run: int, rows: int = 3) -> bytes:
    return b"".join(
        json.dumps({"step": step, "run": run, "i": i}).encode() + b"\n" for i in range(rows)
    )


class Trainer:
    """A prime-rl trainer writing into ``root``: each step its traces, then its rows."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.metrics = root / "metrics.jsonl"

    def traces(self, step: int) -> Path:
        return self.root / "rollouts" / f"step_{step}" / "train" / "all" / "traces.jsonl"

    def step(self, step: int, run: int) -> None:
        path = self.traces(step)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_body(step, run))
        self.row(_orch(step, run))

    def row(self, line: str) -> None:
        with open(self.metrics, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")


def _drain(run: PrimeRLRun | VerlRun, polls: int = 3) -> list[FinishedStep]:
    out: list[FinishedStep] = []
    for _ in range(polls):
        out += run.poll(final=False)
    return out


def _run_of(step: FinishedStep) -> int:
    assert step.path is not None
    return int(json.loads(step.path.read_bytes().splitlines()[0])["run"])


@pytest.mark.parametrize("restart_at", [0, 1, 3, 5])
def test_a_prime_rl_restart_is_said_and_the_new_run_reported(
    tmp_path: Path, restart_at: int
) -> None:
    """Steps 1-5, then the run starts again at ``restart_at`` and writes up to 7: the steps
    from there are reported again, read from the new run's files, after a notice."""
    trainer, run = Trainer(tmp_path), PrimeRLRun(tmp_path, settle=0)
    seen: list[tuple[int, int]] = []
    for step in range(1, 6):
        trainer.step(step, run=0)
        seen += [(s.step, _run_of(s)) for s in _drain(run)]
    assert seen == [(s, 0) for s in range(1, 6)] and run.take_notices() == []
    for step in range(restart_at, 8):
        trainer.step(step, run=1)
        seen += [(s.step, _run_of(s)) for s in _drain(run)]
    assert seen[5:] == [(s, 1) for s in range(restart_at, 8)]
    notices = run.take_notices()
    # a step below the earlier run's first is only late until the next step comes again
    assert len(notices) == 1 and notices[0].forget == (max(restart_at, 1), None)
    assert f"restarted or resumed from step {restart_at};" in notices[0].text


@pytest.mark.parametrize("restart_at", [0, 1, 3])
def test_a_prime_rl_restart_on_disk_reports_the_latest_run_only(
    tmp_path: Path, restart_at: int
) -> None:
    """Without --follow, metrics.jsonl holding two runs: the latest run's steps, a notice
    naming the restart, and the earlier run's steps left on disk named as not reported."""
    trainer = Trainer(tmp_path)
    for step in range(1, 6):
        trainer.step(step, run=0)
    for step in range(restart_at, 4):
        trainer.step(step, run=1)
    run = PrimeRLRun(tmp_path, settle=0)
    done = run.poll(final=True)
    assert [(s.step, _run_of(s)) for s in done] == [
        *[(s, 0) for s in range(1, restart_at)],
        *[(s, 1) for s in range(restart_at, 4)],
    ]
    assert ["restarted or resumed from step" in n.text for n in run.take_notices()] == [True]
    assert run.left_out() == [
        "steps 4-5 on disk not reported: metrics.jsonl holds no orchestrator row for them"
        " since the run restarted"
    ]


@pytest.mark.parametrize("restart_at", [1, 2, 4])
@pytest.mark.parametrize("same_size", [True, False])
def test_a_verl_restart_is_said_and_the_new_run_reported(
    tmp_path: Path, restart_at: int, same_size: bool
) -> None:
    """verl files 1-4, then the run writes its files again from ``restart_at`` (in place, the
    same size or not): each step of the new run once it is written, never the earlier run's
    file left on disk."""
    run = VerlRun(tmp_path, follow=True, settle=0)
    seen: list[tuple[int, int]] = []
    for step in range(1, 5):
        (tmp_path / f"{step}.jsonl").write_bytes(_body(step, 0))
        seen += [(s.step, _run_of(s)) for s in _drain(run)]
    assert seen == [(s, 0) for s in range(1, 5)]
    for step in range(restart_at, 7):
        rows = 3 if same_size else 4
        with open(tmp_path / f"{step}.jsonl", "r+b" if step < 5 else "wb") as fh:
            fh.truncate(0)
            fh.write(_body(step, 1, rows))
        seen += [(s.step, _run_of(s)) for s in _drain(run)]
    assert seen == [(s, 0) for s in range(1, 5)] + [(s, 1) for s in range(restart_at, 7)]
    notices = run.take_notices()
    assert [n.forget for n in notices] == [(restart_at, None)]


@settings(max_examples=40, deadline=None)
@given(st.permutations(list(range(1, 7))), st.lists(st.booleans(), min_size=6, max_size=6))
def test_prime_rl_rows_out_of_order_are_each_reported(order: list[int], polls: list[bool]) -> None:
    """Orchestrator rows landing in any order, with polls between any two: every step is
    reported once; a step reported after a later one says so."""
    with tempfile.TemporaryDirectory() as tmp:
        trainer, run = Trainer(Path(tmp)), PrimeRLRun(Path(tmp), settle=0)
        got: list[FinishedStep] = []
        for step, poll in zip(order, polls, strict=True):
            trainer.step(step, run=0)
            if poll:
                got += _drain(run)
        got += _drain(run)
        assert sorted(s.step for s in got) == list(range(1, 7))
        for i, one in enumerate(got):
            late = any(g.step > one.step for g in got[:i])
            assert (one.remark is not None and "reported late" in one.remark) == late
        assert run.take_notices() == []  # late rows are no restart


@pytest.mark.parametrize("rotate_after", [1, 2, 3])
@pytest.mark.parametrize("pad", ["shorter", "same offset", "longer"])
def test_a_rotated_metrics_file_is_read_from_its_start(
    tmp_path: Path, rotate_after: int, pad: str
) -> None:
    """metrics.jsonl renamed and a new one written (its first line shorter than, ending at, or
    past the old offset): the steps of the new file are all reported, after a notice."""
    trainer, run = Trainer(tmp_path), PrimeRLRun(tmp_path, settle=0)
    got: list[int] = []
    for step in range(1, rotate_after + 1):
        trainer.step(step, run=0)
        got += [s.step for s in _drain(run)]
    offset = trainer.metrics.stat().st_size
    os.rename(trainer.metrics, tmp_path / "metrics.jsonl.1")
    for step in range(rotate_after + 1, 6):
        trainer.traces(step).parent.mkdir(parents=True, exist_ok=True)
        trainer.traces(step).write_bytes(_body(step, 0))
    rows = "".join(_orch(s) + "\n" for s in range(rotate_after + 1, 6))
    width = {"shorter": 0, "same offset": offset - len('{"time": 0, "pad": ""}\n'), "longer": 999}
    head = json.dumps({"time": 0, "pad": "p" * max(0, width[pad])}) + "\n"
    trainer.metrics.write_text(head + rows)
    got += [s.step for s in _drain(run)]
    assert got == list(range(1, 6))
    assert [n.text for n in run.take_notices()] == [
        "metrics.jsonl: another file is at its path now (rotated or replaced); read from its start"
    ]


def test_metrics_truncated_and_rewritten_by_a_restart_is_said(tmp_path: Path) -> None:
    """A restarted run truncating metrics.jsonl and writing from step 1 again: the file is read
    from its start and the restart reported."""
    trainer, run = Trainer(tmp_path), PrimeRLRun(tmp_path, settle=0)
    for step in range(1, 4):
        trainer.step(step, run=0)
    assert [s.step for s in _drain(run)] == [1, 2, 3]
    trainer.metrics.write_text("")
    for step in range(1, 3):
        trainer.step(step, run=1)
    assert [(s.step, _run_of(s)) for s in _drain(run)] == [(1, 1), (2, 1)]
    texts = [n.text for n in run.take_notices()]
    assert len(texts) == 2 and "shrank" in texts[0] and "restarted" in texts[1]


@pytest.mark.parametrize("layout", ["prime-rl", "verl"])
def test_a_step_whose_file_grows_after_it_was_read_is_read_again(
    tmp_path: Path, layout: str
) -> None:
    """The traces of a step appended after it was reported (a writer that stalled past the
    settle time): the step is read again, whole, saying why, and nothing else is."""
    run: PrimeRLRun | VerlRun
    if layout == "prime-rl":
        trainer = Trainer(tmp_path)
        trainer.step(1, run=0)
        path = trainer.traces(2)
        path.parent.mkdir(parents=True)
        path.write_bytes(_body(2, 0, rows=1))
        trainer.row(_orch(2))
        run = PrimeRLRun(tmp_path, settle=0)
    else:
        (tmp_path / "1.jsonl").write_bytes(_body(1, 0))
        path = tmp_path / "2.jsonl"
        path.write_bytes(_body(2, 0, rows=1))
        run = VerlRun(tmp_path, follow=True, settle=0)
    assert [s.step for s in _drain(run)] == [1, 2]
    with open(path, "ab") as fh:
        fh.write(_body(2, 0)[len(_body(2, 0, rows=1)) :])
    again = _drain(run)
    assert [s.step for s in again] == [2] and again[0].remark is not None
    assert "grew after it was reported" in again[0].remark
    assert again[0].path is not None and again[0].path.read_bytes() == _body(2, 0)
    assert [n.forget for n in run.take_notices()] == [(2, 2)]
    assert _drain(run) == []


def test_prime_rl_traces_still_growing_when_the_row_lands_wait(tmp_path: Path) -> None:
    """A step's row landing while its traces are appended: not read until they stop growing,
    even though the traces were there before the row."""
    trainer = Trainer(tmp_path)
    path = trainer.traces(1)
    path.parent.mkdir(parents=True)
    path.write_bytes(_body(1, 0, rows=1))
    trainer.row(_orch(1))
    run = PrimeRLRun(tmp_path, settle=0)
    assert run.poll(final=False) == []
    with open(path, "ab") as fh:
        fh.write(_body(1, 0)[len(_body(1, 0, rows=1)) :])
    assert run.poll(final=False) == []  # it grew since the last poll
    done = run.poll(final=False)
    assert [s.step for s in done] == [1] and path.read_bytes() == _body(1, 0)


def test_steps_text_names_the_steps_held() -> None:
    assert steps_text([3]) == "step 3"
    assert steps_text([5, 6, 7]) == "steps 5-7"
    assert steps_text([1, 2, 5]) == "steps 1-2, 5"
    assert steps_text([9, 1, 4, 3]) == "steps 1, 3-4, 9"
