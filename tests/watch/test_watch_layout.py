"""Which steps of a run directory are finished: once each, in order, partial lines left."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from whilecli.errors import InputError
from whilecli.watch.layout import LATE_POLLS, LineTail, PrimeRLRun, VerlRun, detect, open_run


def _append(path: Path, data: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(data)


def _orch(step: int) -> str:
    return json.dumps({"step": step, "off_policy/mean": 1.0, "producer": "orch"}) + "\n"


def _traces(root: Path, step: int, rows: int = 2, split: str = "train") -> Path:
    path = root / "rollouts" / f"step_{step}" / split / "all" / "traces.jsonl"
    _append(path, "".join(json.dumps({"i": i}) + "\n" for i in range(rows)))
    return path


def test_line_tail_leaves_a_partial_last_line_for_the_next_read(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    tail = LineTail(path)
    assert list(tail.read()) == []  # no file yet
    _append(path, '{"a": 1}\n{"b"')
    assert list(tail.read()) == [(1, b'{"a": 1}')]
    assert list(tail.read()) == []  # nothing new: the partial line is not consumed
    _append(path, ': 2}\n{"c": 3}\n')
    assert list(tail.read()) == [(2, b'{"b": 2}'), (3, b'{"c": 3}')]
    assert tail.offset == path.stat().st_size


@pytest.mark.parametrize("how", ["truncated", "rotated", "rewritten in place"])
def test_line_tail_reads_a_replaced_file_from_its_start(tmp_path: Path, how: str) -> None:
    """A file replaced under the tail (shorter, another inode, or rewritten in place to the
    same length or longer) is read from its start, and the tail says why."""
    path = tmp_path / "m.jsonl"
    first = '{"a": 1}\n{"b": 2}\n'
    _append(path, first)
    tail = LineTail(path)
    assert len(tail.read()) == 2 and tail.replaced is None
    new = {"truncated": '{"c": 3}\n', "rotated": '{"c": 3}\n{"d": 4}\n{"e": 5}\n'}.get(
        how, '{"x": 9}\n{"y": 8}\n{"z": 7}\n'
    )
    if how == "rotated":
        path.rename(tmp_path / "m.jsonl.1")
    path.write_text(new)
    got = tail.read()
    assert [raw.decode() + "\n" for _, raw in got] == new.splitlines(keepends=True)
    assert [n for n, _ in got] == list(range(1, len(got) + 1))  # line numbers of the new file
    assert tail.replaced is not None
    assert tail.read() == [] and tail.replaced is None  # said once


def test_prime_rl_step_is_finished_by_the_orchestrator_row(tmp_path: Path) -> None:
    run = PrimeRLRun(tmp_path, settle=0)
    _traces(tmp_path, 1)
    _append(tmp_path / "metrics.jsonl", json.dumps({"step": 1, "loss/mean": 0.1}) + "\n")
    assert run.poll(final=False) == []  # the trainer's row does not finish a step
    _append(tmp_path / "metrics.jsonl", _orch(1)[:10])
    assert run.poll(final=False) == []  # a partial orchestrator row does not either
    _append(tmp_path / "metrics.jsonl", _orch(1)[10:])
    assert run.poll(final=False) == []  # finished: its traces are read once they stop growing
    done = run.poll(final=False)
    assert [s.step for s in done] == [1]
    assert done[0].metrics is not None and done[0].metrics["off_policy/mean"] == 1.0
    assert run.poll(final=False) == []  # reported once


def test_prime_rl_late_step_directory_is_picked_up_in_order(tmp_path: Path) -> None:
    run = PrimeRLRun(tmp_path, settle=0)
    _append(tmp_path / "metrics.jsonl", _orch(1) + _orch(2))
    _traces(tmp_path, 2)
    assert run.poll(final=False) == []  # step 1's rollouts are late: step 2 waits behind it
    _traces(tmp_path, 1)
    assert run.poll(final=False) == []  # it appeared late: read once it stops growing
    assert [s.step for s in run.poll(final=False)] == [1, 2]


def test_prime_rl_step_without_rollouts_is_given_up_after_a_few_polls(tmp_path: Path) -> None:
    run = PrimeRLRun(tmp_path, settle=0)
    _append(tmp_path / "metrics.jsonl", _orch(1) + _orch(2))
    _traces(tmp_path, 2)
    polls = [run.poll(final=False) for _ in range(5)]
    done = [s for p in polls for s in p]
    assert [(s.step, s.path is None) for s in done] == [(1, True), (2, False)]
    assert done[0].note is not None and "no train rollouts" in done[0].note


def test_prime_rl_without_metrics_a_later_directory_finishes_a_step(tmp_path: Path) -> None:
    run = PrimeRLRun(tmp_path, settle=0)
    _traces(tmp_path, 1)
    assert run.poll(final=False) == []
    _traces(tmp_path, 2)
    assert run.poll(final=False) == []  # finished: read once its traces stop growing
    assert [s.step for s in run.poll(final=False)] == [1]


def test_prime_rl_eval_split_waits_for_an_eval_row(tmp_path: Path) -> None:
    run = PrimeRLRun(tmp_path, split="eval", settle=0)
    _traces(tmp_path, 1, split="eval")
    _append(tmp_path / "metrics.jsonl", _orch(1))
    assert run.poll(final=False) == []
    _append(tmp_path / "metrics.jsonl", json.dumps({"step": 1, "eval/math/pass@1": 0.5}) + "\n")
    assert run.poll(final=False) == []  # finished: read once its traces stop growing
    assert [s.step for s in run.poll(final=False)] == [1]


def test_prime_rl_bad_metrics_line_is_located(tmp_path: Path) -> None:
    _append(tmp_path / "metrics.jsonl", _orch(1) + "{not json\n")
    with pytest.raises(InputError, match=r"metrics.jsonl:2: "):
        PrimeRLRun(tmp_path, settle=0).poll(final=False)
    (tmp_path / "metrics.jsonl").write_text(json.dumps({"step": "one", "train/x": 1}) + "\n")
    with pytest.raises(InputError, match="field 'step'"):
        PrimeRLRun(tmp_path, settle=0).poll(final=False)


def test_verl_step_is_finished_by_the_next_file_or_a_settled_last_one(tmp_path: Path) -> None:
    run = VerlRun(tmp_path, follow=True, settle=0)
    _append(tmp_path / "1.jsonl", '{"score": 1}\n{"sco')
    assert run.poll(final=False) == []  # a partial last line: not finished
    _append(tmp_path / "1.jsonl", 're": 0}\n')
    assert run.poll(final=False) == []  # complete, but it may still grow: one more poll
    assert [s.step for s in run.poll(final=False)] == [1]
    _append(tmp_path / "2.jsonl", '{"score": 1}\n')
    _append(tmp_path / "3.jsonl", '{"sc')
    assert [s.step for s in run.poll(final=False)] == [2]  # 3 exists: 2 is complete
    assert run.poll(final=False) == []


def test_verl_without_follow_reports_every_complete_file(tmp_path: Path) -> None:
    for step in (1, 2, 10):
        _append(tmp_path / f"{step}.jsonl", '{"score": 1}\n')
    _append(tmp_path / "validation.jsonl", '{"score": 1}\n')
    assert [s.step for s in VerlRun(tmp_path, follow=False).poll(final=True)] == [1, 2, 10]


def test_detect(tmp_path: Path) -> None:
    assert detect(tmp_path) is None and open_run(tmp_path, "auto", "train", False) is None
    _append(tmp_path / "3.jsonl", "{}\n")
    assert detect(tmp_path) == "verl"
    (tmp_path / "metrics.jsonl").touch()
    assert detect(tmp_path) == "prime-rl"
    assert isinstance(open_run(tmp_path, "verl", "train", False), VerlRun)


def test_prime_rl_steps_without_rollouts_are_given_up_together(tmp_path: Path) -> None:
    """Rollouts saved every few steps: the steps between wait out one grace together."""
    run = PrimeRLRun(tmp_path, settle=0)
    _append(tmp_path / "metrics.jsonl", "".join(_orch(s) for s in range(1, 7)))
    _traces(tmp_path, 1)
    _traces(tmp_path, 6)
    assert run.poll(final=False) == []  # read once their traces stop growing
    assert [s.step for s in run.poll(final=False)] == [1]
    polls = [run.poll(final=False) for _ in range(LATE_POLLS - 1)]
    done = [s.step for p in polls for s in p]
    assert done == [2, 3, 4, 5, 6]
    assert [s.path is None for p in polls for s in p] == [True] * 4 + [False]


def test_verl_directory_is_listed_again_only_when_it_changed(tmp_path: Path, monkeypatch) -> None:
    import os

    from whilecli.watch import layout

    for step in (1, 2):
        _append(tmp_path / f"{step}.jsonl", '{"score": 1}\n')
    old = 1_000_000_000
    os.utime(tmp_path, (old, old))
    run = VerlRun(tmp_path, follow=False)
    assert [s.step for s in run.poll(final=True)] == [1, 2]

    def refuse(path: object) -> None:
        raise AssertionError("listed an unchanged directory")

    monkeypatch.setattr(layout.os, "scandir", refuse)
    assert run.poll(final=True) == []  # one stat, no listing
    monkeypatch.undo()
    _append(tmp_path / "3.jsonl", '{"score": 1}\n')  # the directory changed: listed again
    assert [s.step for s in run.poll(final=True)] == [3]


@pytest.mark.parametrize("names", [("1", "02", "10"), ("001", "2", "0010")])
def test_verl_step_files_are_read_as_written(tmp_path: Path, names: tuple[str, ...]) -> None:
    """A step's file is the one the directory holds (``02.jsonl``), never rebuilt from its
    number; two names of one step are refused, naming both."""
    for name in names:
        _append(tmp_path / f"{name}.jsonl", json.dumps({"score": 1, "at": name}) + "\n")
    done = VerlRun(tmp_path, follow=False).poll(final=True)
    assert [(s.step, s.path.name) for s in done] == [
        (int(n), f"{n}.jsonl") for n in sorted(names, key=int)
    ]
    _append(tmp_path / f"{int(names[0])}.jsonl" if names[0] != "1" else tmp_path / "01.jsonl", "")
    with pytest.raises(InputError, match="two files for step 1"):
        VerlRun(tmp_path, follow=False).poll(final=True)


def test_prime_rl_step_directory_is_read_as_written(tmp_path: Path) -> None:
    path = tmp_path / "rollouts" / "step_02" / "train" / "all" / "traces.jsonl"
    _append(path, json.dumps({"i": 0}) + "\n")
    _append(tmp_path / "metrics.jsonl", _orch(2))
    done = PrimeRLRun(tmp_path, settle=0).poll(final=True)
    assert [s.step for s in done] == [2] and done[0].path == path


@pytest.mark.parametrize(
    ("layout", "make"),
    [
        ("verl", lambda root: _append(root / "metrics.jsonl", _orch(1))),
        ("verl", lambda root: (root / "rollouts").mkdir()),
        ("prime-rl", lambda root: (root / "1.jsonl").write_text('{"score": 1}\n')),
    ],
)
def test_a_forced_layout_on_the_other_layouts_files_is_refused(
    tmp_path: Path, layout: str, make
) -> None:
    """--layout names a trainer: a folder with the other trainer's files and none of its own
    is refused, naming what it looked for; an empty folder is a run not started yet."""
    from whilecli.errors import UsageError

    make(tmp_path)
    with pytest.raises(UsageError, match=f"--layout {layout}: .* holds no ") as err:
        open_run(tmp_path, layout, "train", follow=False)
    assert "\n" not in str(err.value)
    assert ("N.jsonl" if layout == "verl" else "metrics.jsonl") in str(err.value).split(";")[0]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert open_run(empty, layout, "train", follow=True) is not None


def test_metrics_deleted_under_follow_is_said_once(tmp_path: Path) -> None:
    """A metrics.jsonl deleted under the watch is said once; written again, it is read from
    its start."""
    run = PrimeRLRun(tmp_path)
    _append(tmp_path / "metrics.jsonl", _orch(1))
    _traces(tmp_path, 1)
    run.poll(final=False)
    assert run.take_notices() == []
    (tmp_path / "metrics.jsonl").unlink()
    run.poll(final=False)
    said = [n.text for n in run.take_notices()]
    assert len(said) == 1 and "metrics.jsonl was deleted" in said[0]
    run.poll(final=False)
    assert run.take_notices() == []  # once
    _append(tmp_path / "metrics.jsonl", _orch(1) + _orch(2))
    _traces(tmp_path, 2)
    run.poll(final=False)
    assert run.take_notices() == [] and (2 in run.rows or 2 in run.history.done)


def _make_like(root: Path, how: str, step: int) -> str:
    """Something named like step ``step``'s verl file that is none; its name."""
    import gzip
    import os

    if how == "gz" or how == "bz2":
        name = f"{step}.jsonl.{how}"
        (root / name).write_bytes(gzip.compress(b'{"score": 1}\n'))
    elif how == "folder":
        name = f"{step}.jsonl"
        (root / name).mkdir()
    elif how == "fifo":
        name = f"{step}.jsonl"
        os.mkfifo(root / name)
    elif how == "broken link":
        name = f"{step}.jsonl"
        (root / name).symlink_to(root / "nowhere")
    else:  # the step number in another script's digits
        digits = {
            "fullwidth": "０１２３４５６７８９",
            "arabic": "٠١٢٣٤٥٦٧٨٩",
            "devanagari": "०१२३४५६७८९",
        }
        name = "".join(digits[how][int(d)] for d in str(step)) + ".jsonl"
        _append(root / name, '{"score": 1}\n')
    return name


@pytest.mark.parametrize(
    "how", ["gz", "bz2", "folder", "fifo", "broken link", "fullwidth", "arabic", "devanagari"]
)
@pytest.mark.parametrize("step", [2, 4, 12])
@pytest.mark.parametrize("follow", [False, True])
def test_verl_names_that_are_no_step_file_are_skipped_and_said_once(
    tmp_path: Path, how: str, step: int, follow: bool
) -> None:
    for s in (1, 3, 5, 11, 13):
        _append(tmp_path / f"{s}.jsonl", '{"score": 1}\n')
    name = _make_like(tmp_path, how, step)
    run = VerlRun(tmp_path, follow=follow, settle=0)
    said = []
    for _ in range(3):
        done = run.poll(final=not follow)
        said += [n.text for n in run.take_notices()]
        assert step not in [s.step for s in done]
        _append(tmp_path / "13.jsonl", "")  # the folder listed again
    skipped = [t for t in said if "skipped" in t]
    assert len(skipped) == 1, said
    assert (name if name.isascii() else ascii(name)) in skipped[0], skipped


@pytest.mark.parametrize("digit", ["２", "٢", "२"])
def test_prime_rl_step_folder_in_other_digits_is_no_step(tmp_path: Path, digit: str) -> None:
    _append(tmp_path / "rollouts" / f"step_{digit}" / "train" / "all" / "traces.jsonl", "{}\n")
    _traces(tmp_path, 1)
    _append(tmp_path / "metrics.jsonl", _orch(1) + _orch(2))
    assert 2 not in PrimeRLRun(tmp_path, settle=0)._dir_names()


@pytest.mark.parametrize("keep", [0, 1, 7, 20, 33])
@pytest.mark.parametrize("follow", [False, True])
@pytest.mark.parametrize("cut_step", [1, 2])
def test_prime_rl_older_step_cut_off_is_named_by_file_and_line_once_the_run_moved_on(
    tmp_path: Path, keep: int, follow: bool, cut_step: int
) -> None:
    for step in (1, 2, 3):
        path = _traces(tmp_path, step, rows=3)
        _append(tmp_path / "metrics.jsonl", _orch(step))
    cut = tmp_path / "rollouts" / f"step_{cut_step}" / "train" / "all" / "traces.jsonl"
    whole = cut.read_bytes()
    text = whole[: len(whole) - 1 - keep] if keep else whole[:-1]  # no newline at its end
    if keep == 33:
        text = b""
    cut.write_bytes(text)
    run = PrimeRLRun(tmp_path, settle=0)
    done = []
    for _ in range(4):
        done += run.poll(final=not follow)
    assert [s.step for s in done] == [1, 2, 3]
    (hit,) = [s for s in done if s.step == cut_step]
    assert hit.path is None and hit.note is not None
    assert f"rollouts/step_{cut_step}/train/all/traces.jsonl" in hit.note
    if text:
        line = text.count(b"\n") + 1
        assert f"line {line}: its last line is cut off" in hit.note
    else:
        assert "is empty" in hit.note
    assert "still being written" not in hit.note
    assert all(s.note is None for s in done if s.step != cut_step)
    assert path.exists()


def test_prime_rl_last_step_cut_off_is_still_being_written(tmp_path: Path) -> None:
    for step in (1, 2):
        _traces(tmp_path, step, rows=3)
        _append(tmp_path / "metrics.jsonl", _orch(step))
    last = tmp_path / "rollouts" / "step_2" / "train" / "all" / "traces.jsonl"
    last.write_bytes(last.read_bytes()[:-5])
    done = PrimeRLRun(tmp_path, settle=0).poll(final=True)
    assert done[-1].step == 2 and done[-1].note == "its rollouts are still being written"
