"""Which steps of a run directory are finished, found incrementally (nothing is written).

Two trainers' layouts:

- **prime-rl** (``{output_dir}/{run.name}``): ``metrics.jsonl``, where the trainer and the
  orchestrator append one row per step, and ``rollouts/step_N/{train,eval}/{all,effective}/
  traces.jsonl``. A train step is finished when the orchestrator's row for it appears (a row
  with ``off_policy/``, ``train/`` or ``progress/`` keys, or ``"producer": "orch"``); an eval
  step when an ``eval/`` row for it, or a later orchestrator row, appears. Without a
  ``metrics.jsonl``, a step is finished when a later step's directory exists.
- **verl** (``trainer.rollout_data_dir``): one ``N.jsonl`` per step (input, output, score,
  step). Step N is finished when a later step's file exists, or when its file ends with a
  newline and (under ``--follow``) has stopped growing.

A finished step's rollouts file is read once it ends with a newline and (under ``--follow``)
has stopped growing (the same size at two polls and for :data:`SETTLE_S` seconds): the
orchestrator's row can land while the step's traces are still being appended.

Steps are handed out once each, in step order, unless the run breaks that order, and then the
watch says so (:mod:`whilecli.watch.history`): a step whose row or file comes after a later
step's is handed out late, with a remark; another row for a step already seen, or a step
file written anew after it was read, is a restart from that step (the
steps from there on are the new run's, handed out again as they finish); a step file that
grew after it was read is read again; a ``metrics.jsonl`` replaced under the watch (rotated,
truncated, rewritten) is read from its start (:mod:`whilecli.watch.tail`). Without
``--follow``, the steps on disk that were not reported are named, with why
(``left_out``).

Each poll costs what changed: ``metrics.jsonl`` is read from the byte offset where the last
poll stopped, only up to its last complete line (a partial last line is left for the next
poll); a finished step whose rollouts are not on disk yet is looked for again by its own
path, never by rereading the others; a verl directory is listed again only when it changed;
and each step handed out costs one ``stat`` (was its file written again?).

Every number read from the run's files is checked where it is read (:func:`step_number`): a
step (a metrics row's ``step``, a ``step_N`` folder, a verl ``N.jsonl``) is a whole number in
[0, 2^63 - 1], the orchestrator's ``off_policy/mean`` and ``off_policy/max`` finite and at
least 0 (the max whole); anything else is refused in one line naming the file, the line and
the field.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whilecli import jsonout
from whilecli.errors import InputError, UsageError, shown_path
from whilecli.io.formats.prime_rl import step_traces
from whilecli.watch.history import History, Notice, Stamp, steps_text
from whilecli.watch.tail import LineTail

__all__ = ["FinishedStep", "LineTail", "PrimeRLRun", "VerlRun", "detect", "open_run"]

METRICS = "metrics.jsonl"
ROLLOUTS = "rollouts"
STEP_DIR = re.compile(r"^step_([0-9]+)$")
VERL_FILE = re.compile(r"^([0-9]+)\.jsonl$")
#: A name that reads as a verl step file's but is none: a step number in other digits than
#: 0-9 (``２.jsonl``), or a step file compressed (``4.jsonl.gz``). Said once, when skipped.
VERL_LIKE = re.compile(r"^(\d+)\.jsonl(\.[A-Za-z0-9]+)?$")
#: Polls a finished step waits for its rollouts while a later step already has its own.
LATE_POLLS = 3
#: Seconds a file must keep its size, over two polls or more, to count as no longer growing.
SETTLE_S = 1.0
#: A directory changed this recently is listed again even when its mtime looks unchanged.
FRESH_S = 2.0
#: Key prefixes of the orchestrator's per-step rows (the trainer's rows carry none).
ORCHESTRATOR_KEYS = ("off_policy/", "train/", "progress/")
#: The largest step number a run may write: what an int64 holds (the trainers' own step
#: counters, and every frame a step's number meets, stop there).
MAX_STEP = 2**63 - 1
#: The numbers of a metrics row the watch reads besides ``step``: the orchestrator's
#: off-policy lag (steps behind: at least 0), mean and max.
LAG_FIELDS = ("off_policy/mean", "off_policy/max")


def _shown(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        digits = int(abs(value).bit_length() * 0.30103) + 1  # str() of a huge int is refused
        return f"an integer of about {digits} digits"
    text = jsonout.dumps(value) if not isinstance(value, float) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def step_number(value: Any, *, file: str, line: int | None = None) -> int:
    """A step number a run wrote (a metrics row's ``step``, a ``step_N`` folder, a verl
    ``N.jsonl``): a whole number in [0, :data:`MAX_STEP`], or one line naming where."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_STEP:
        raise InputError(
            f"a step must be a whole number in [0, 2^63 - 1], got {_shown(value)}",
            file=file,
            line=line,
            field="step",
        )
    return value


def _lag_fields(row: dict[str, Any], name: str, lineno: int) -> None:
    """The orchestrator's off-policy lag, when a row has it: a finite number at least 0
    (the max a whole one), or one line naming the file, the line and the field."""
    import math

    for key in LAG_FIELDS:
        value = row.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            ok = False
        elif isinstance(value, int):  # of any size: no float() of it
            ok = 0 <= value <= MAX_STEP
        else:
            whole = value.is_integer() or key != "off_policy/max"
            ok = math.isfinite(value) and 0 <= value <= MAX_STEP and whole
        if not ok:
            what = "a whole number of steps" if key == "off_policy/max" else "a number of steps"
            raise InputError(
                f"the off-policy lag must be {what} in [0, 2^63 - 1], got {_shown(value)}",
                file=name,
                line=lineno,
                field=key,
            )


@dataclass(frozen=True)
class FinishedStep:
    """A finished step: the rollouts file to read (None: none on disk, ``note`` says why),
    the orchestrator's metrics row for it (prime-rl), when there is one, and what to say with
    it (``remark``: reported late, or read again)."""

    step: int
    path: Path | None
    metrics: dict[str, Any] | None = None
    note: str | None = None
    remark: str | None = None


def detect(root: Path) -> str | None:
    """The layout of a run directory: ``prime-rl``, ``verl``, or None (nothing yet)."""
    if (root / METRICS).is_file() or (root / ROLLOUTS).is_dir() or (root / "configs").is_dir():
        return "prime-rl"
    try:
        with os.scandir(root) as entries:
            if any(VERL_FILE.match(e.name) and e.is_file() for e in entries):
                return "verl"
    except FileNotFoundError:
        return None
    return None


def _ends_with_newline(path: Path, size: int) -> bool:
    if size == 0:
        return False
    with open(path, "rb") as fh:
        fh.seek(size - 1)
        return fh.read(1) == b"\n"


class _Settle:
    """Whether a file stopped growing: its size is the same as at the previous poll, and has
    been for at least ``seconds`` (a writer that stalls between two lines for one short poll
    interval is not taken for done)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.seen: dict[int, tuple[int, float]] = {}  # step -> (size, when first seen at it)

    def __call__(self, step: int, size: int) -> bool:
        now = time.monotonic()
        last = self.seen.get(step)
        if last is None or last[0] != size:
            self.seen[step] = (size, now)
            return False
        return now - last[1] >= self.seconds

    def forget(self, step: int) -> None:
        self.seen.pop(step, None)


class _Follower:
    """What both layouts share: the steps handed out (:class:`History`), the lines to say
    between steps (:attr:`notices`), and what to say with a step handed out again."""

    def __init__(self, settle: float) -> None:
        self.history = History()
        self.notices: list[Notice] = []
        self.remarks: dict[int, str] = {}  # step -> what to say with it when handed out
        self.settled = _Settle(settle)

    def take_notices(self) -> list[Notice]:
        """The lines to say before this poll's steps (each said once)."""
        out, self.notices = self.notices, []
        return out

    def _hand(self, step: int, path: Path | None, row: dict[str, Any] | None = None) -> str | None:
        """Record a step handed out; the remark it goes out with."""
        late = self.history.hand(step, path, row)
        self.settled.forget(step)
        return self.remarks.pop(step, None) or late

    def _read_again(self, step: int, what: str) -> None:
        """A handed-out step whose file grew since: handed out again, alone."""
        del self.history.done[step]
        self.remarks[step] = f"read again: {what} grew after it was reported"
        self.notices.append(
            Notice(f"step {step}: {what} grew after it was reported; read again", (step, step))
        )


class PrimeRLRun(_Follower):
    """The finished steps of a prime-rl run directory, poll by poll."""

    layout = "prime-rl"

    def __init__(self, root: Path, split: str = "train", settle: float = SETTLE_S) -> None:
        super().__init__(settle)
        self.root = root
        self.split = split
        self.tail = LineTail(root / METRICS)
        self.rows: dict[int, dict[str, Any]] = {}  # finished steps not yet handed out
        self.waited: dict[int, int] = {}  # polls a finished step waited for its rollouts
        self.saw_metrics = False
        #: Steps with a train row (the orchestrator's) since the last restart -> (the row's
        #: hash, the order it came in).
        self.seen: dict[int, tuple[int, int]] = {}
        self.arrived = 0  # train rows read
        self.restarted = False
        self.later_row = -1  # eval split: the latest orchestrator row's step
        self.eval_scanned = -1  # eval split: the later_row the step folders were last looked at

    @property
    def waiting(self) -> str:
        if not self.saw_metrics:
            return "no finished step yet (no orchestrator row in metrics.jsonl)"
        return "no finished step yet"

    def rollouts(self, step: int) -> Path | None:
        """The step's traces file of the split: ``all`` (every episode), else ``effective``
        (the reading layer's choice, :func:`whilecli.io.formats.prime_rl.step_traces`), in
        the step's directory as it is written (``step_02`` too)."""
        return self._traces(step, self._dir_names())

    def _traces(self, step: int, names: dict[int, str]) -> Path | None:
        """:meth:`rollouts` with the step folders' names read once by the caller
        (:meth:`_dir_names`): a loop over the steps scans ``rollouts/`` once, not once per
        step (DESIGN section 6: a one-shot report on a run is linear in its steps)."""
        name = names.get(step, f"step_{step}")
        return step_traces(self.root / ROLLOUTS / name, self.split)

    def _on_disk(self) -> dict[int, Path | None]:
        """Each step folder on disk, in order, with its traces file: one scan of
        ``rollouts/`` for them all."""
        names = self._dir_names()
        return {step: self._traces(step, names) for step in sorted(names)}

    def _dir_names(self) -> dict[int, str]:
        try:
            with os.scandir(self.root / ROLLOUTS) as entries:
                found = [m for e in entries if (m := STEP_DIR.match(e.name)) and e.is_dir()]
        except (FileNotFoundError, NotADirectoryError):
            return {}
        return _one_name_per_step(found, self.root / ROLLOUTS)

    def _metrics_rows(self) -> None:
        name = str(self.tail.path)
        lines = self.tail.read()
        if self.tail.replaced is not None:
            self.notices.append(Notice(f"{METRICS}: {self.tail.replaced}; read from its start"))
        if self.tail.gone:
            self.notices.append(
                Notice(
                    f"{METRICS} was deleted: no step is finished until it is written again"
                    " (then read from its start)"
                )
            )
        for lineno, raw in lines:
            self.saw_metrics = True
            if not raw.strip():
                continue
            row = _metrics_row(raw, name, lineno)
            if row.get("step") is None:
                continue  # a time-keyed row (inference metrics)
            step = step_number(row["step"], file=name, line=lineno)
            _lag_fields(row, name, lineno)
            if _train_row(row):
                self._in_order(step, lineno, raw)
            for finished in self._finishes(step, row):
                if self.history.fresh(finished) and finished not in self.rows:
                    self.rows[finished] = row if finished == step else {}

    def _in_order(self, step: int, lineno: int, raw: bytes) -> None:
        """Note a train row; another row for a step already seen is a restart from that step
        (a step below the others, seen first, is only late: the restart, if it is one, shows
        when its next step comes again)."""
        key = hash(raw.strip())
        if step in self.seen and self.seen[step][0] == key:
            return  # the same row read again (the file was replaced by a copy)
        if step in self.seen:
            latest = max(self.seen)
            where = f"{METRICS} line {lineno}: a row for step {step} after step {latest}'s"
            self._restart(self._new_run_start(step), step, where)
        self.arrived += 1
        self.seen[step] = (key, self.arrived)

    def _new_run_start(self, step: int) -> int:
        """The first step of a run restarted at ``step``'s repeated row: the steps right below
        it whose rows came after the earlier run's latest row are the new run's too."""
        latest = self.seen[max(self.seen)][1]
        start = step
        while start - 1 in self.seen and self.seen[start - 1][1] > latest:
            start -= 1
        return start

    def _restart(self, start: int, step: int, where: str) -> None:
        """The run writes again from ``start`` (``step`` on is written again): forget what the
        earlier run wrote from ``step`` on."""
        self.restarted = True
        dropped = sorted(s for s in self.rows if s >= step)
        for s in dropped:
            del self.rows[s]
            self.waited.pop(s, None)
        self.seen = {s: k for s, k in self.seen.items() if s < step}
        gone = self.history.truncate(step)
        text = (
            f"{where}: the run restarted or resumed from step {start}; the steps from {start}"
            " on are the new run's, reported as it finishes them"
        )
        if gone:
            text += f" ({steps_text(gone)} again; the alert window drops the earlier ones)"
        if dropped:
            text += f"; {steps_text(dropped)} of the earlier run not reported"
        self.notices.append(Notice(text, (step, None)))

    def _written_again(self) -> None:
        """Handed-out steps whose traces changed since they were read: lines appended (read
        again), or the file written anew (a restart from that step)."""
        for step, handed, now in self.history.changed():
            if handed.appended(now):
                self._read_again(step, "its traces")
                self.rows[step] = handed.row or {}
                continue
            where = f"{_relative(handed.path, self.root)} was written again after step {step}"
            self._restart(step, step, f"{where} was reported")
            return

    def _finishes(self, step: int, row: dict[str, Any]) -> list[int]:
        """The steps this metrics row says are finished."""
        if self.split == "eval":
            if _orchestrator(row):
                self.later_row = max(self.later_row, step)
            return [step] if any(key.startswith("eval/") for key in row) else []
        return [step] if _orchestrator(row) else []

    def _eval_steps_before_later_rows(self) -> None:
        """Eval split: a step with eval rollouts is finished by a later orchestrator row."""
        if self.split != "eval" or self.later_row <= self.eval_scanned:
            return
        self.eval_scanned = self.later_row
        for step, path in self._on_disk().items():
            waiting = self.history.fresh(step) and step not in self.rows
            if step < self.later_row and waiting and path is not None:
                self.rows[step] = {}

    def _step_dirs(self) -> list[int]:
        return sorted(self._dir_names())

    def poll(self, final: bool) -> list[FinishedStep]:
        """The steps finished since the last poll, in order. ``final``: no later poll comes
        (a finished step whose rollouts are missing is reported as such)."""
        self._metrics_rows()
        self._written_again()
        self._eval_steps_before_later_rows()
        if not self.saw_metrics:
            dirs = self._step_dirs()
            for earlier in dirs[:-1]:  # a later step's directory exists: this one is done
                if self.history.fresh(earlier):
                    self.rows.setdefault(earlier, {})
        pending = sorted(self.rows)
        names = self._dir_names()  # one scan of rollouts/ for every pending step
        paths = {step: self._traces(step, names) for step in pending}
        for step in pending:
            if paths[step] is None:  # every missing one waits at once, not one after another
                self.waited[step] = self.waited.get(step, 0) + 1
        # every pending file is looked at once, so they settle together, not one after another
        state = {s: self._complete(s, p, final) for s, p in paths.items() if p is not None}
        whole = {s: done for s, (done, _) in state.items()}
        out: list[FinishedStep] = []
        for i, step in enumerate(pending):
            path = paths[step]
            row = self.rows[step] or None
            if path is not None and not whole[step]:
                # a later step's rollouts are whole and this file stopped growing: the run
                # moved past it, so its cut last line is damage (a crash), not a write to wait on
                past = [s for s in pending[i + 1 :] if whole.get(s)]
                cut = bool(past) and state[step][1]
                if not final and not cut:
                    break  # still being written: read at a later poll
                note = (
                    _cut_note(path, self.root, past[0])
                    if cut
                    else "its rollouts are still being written"
                )
                out.append(FinishedStep(step, None, row, note, self._hand(step, None, row)))
            elif path is None:
                later = any(paths[s] is not None for s in pending[i + 1 :])
                if not final and not (later and self.waited[step] > LATE_POLLS):
                    break  # looked for again by its own path at the next poll
                note = f"no {self.split} rollouts on disk for this step"
                out.append(FinishedStep(step, None, row, note, self._hand(step, None, row)))
            else:
                out.append(FinishedStep(step, path, row, None, self._hand(step, path, row)))
            del self.rows[step]
            self.waited.pop(step, None)
        return out

    def _complete(self, step: int, path: Path, final: bool) -> tuple[bool, bool]:
        """Whether a finished step's rollouts file is whole: it ends with a newline, and,
        unless no later poll comes, it has not grown since the previous poll (for
        :data:`SETTLE_S` seconds): its row can land while its traces are still written.
        With it, whether the file stopped growing (always, where no later poll comes)."""
        size = path.stat().st_size
        whole = _ends_with_newline(path, size)
        if final:
            return whole, True
        settled = self.settled(step, size)
        return whole and settled, settled

    def left_out(self) -> list[str]:
        """Without ``--follow``, after the last poll: the steps on disk that were not
        reported, and why."""
        on_disk = [
            s
            for s, path in self._on_disk().items()
            if self.history.fresh(s) and s not in self.rows and path is not None
        ]
        if not on_disk:
            return []
        if not self.saw_metrics:
            why = (
                "with no metrics.jsonl a step counts as finished once a later step's directory"
                " exists"
            )
        elif self.split == "eval":
            why = "metrics.jsonl holds no eval row for them and no orchestrator row after them"
        else:
            why = "metrics.jsonl holds no orchestrator row for them"
            why += " since the run restarted" if self.restarted else " yet"
        return [f"{steps_text(on_disk)} on disk not reported: {why}"]


def _cut_note(path: Path, root: Path, later: int) -> str:
    """What to say of a step's traces file left cut (no newline at its end) once a later
    step's are whole: the file and the line cut, or that it is empty."""
    lines, size = 0, 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            lines += chunk.count(b"\n")
            size += len(chunk)
    moved = f"step {later}'s rollouts are whole: the run moved past this step"
    if size == 0:
        return f"{_relative(path, root)} is empty, and {moved} without writing them"
    return (
        f"{_relative(path, root)} line {lines + 1}: its last line is cut off, and {moved}"
        " (a crash or a copy cut the file); its rollouts are not read"
    )


def _metrics_row(raw: bytes, name: str, lineno: int) -> dict[str, Any]:
    """One line of metrics.jsonl as an object; a key written twice with two values is
    refused, as every reader of rows refuses it."""
    try:
        row = jsonout.parse(raw, pairs=jsonout.one_value_per_key)
    except jsonout.RepeatedKey as err:
        raise InputError(str(err), file=name, line=lineno, field=err.key) from None
    except ValueError as err:
        raise InputError(f"not a JSON object: {err}", file=name, line=lineno) from None
    if not isinstance(row, dict):
        raise InputError("not a JSON object", file=name, line=lineno)
    return row


def _orchestrator(row: dict[str, Any]) -> bool:
    """An orchestrator's row: ``"producer": "orch"``, or one of its key prefixes."""
    return row.get("producer") == "orch" or any(key.startswith(ORCHESTRATOR_KEYS) for key in row)


def _train_row(row: dict[str, Any]) -> bool:
    """The orchestrator's one row of a train step (an eval row, even its, is not one)."""
    return _orchestrator(row) and not any(key.startswith("eval/") for key in row)


def _relative(path: Path | None, root: Path) -> str:
    if path is None:
        return "?"
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


class VerlRun(_Follower):
    """The finished steps of a verl ``rollout_data_dir``, poll by poll."""

    layout = "verl"
    waiting = "no finished step yet (no complete N.jsonl)"

    def __init__(self, root: Path, follow: bool, settle: float = SETTLE_S) -> None:
        super().__init__(settle)
        self.root = root
        self.follow = follow
        self.listing: list[int] | None = None  # the step files at the last listing
        self.names: dict[int, str] = {}  # each step's file name as written (``01.jsonl``)
        self.listed_at = 0  # the directory's mtime then
        #: After a restart from step N: the files of later steps as the earlier run left them
        #: (a step's file is the new run's once it changes).
        self.stale: dict[int, Stamp | None] = {}
        self.skipped: set[str] = set()  # names said to be no step file (said once each)

    def _files(self) -> list[int]:
        """The step files in the directory (files only: a folder named ``2.jsonl`` is no
        step), listed again only when the directory changed (its mtime moved, or moved within
        the last :data:`FRESH_S` seconds, which a coarse file-system clock could hide): an
        idle poll costs one ``stat``."""
        try:
            mtime = os.stat(self.root).st_mtime_ns
        except FileNotFoundError:
            return []
        recent = time.time_ns() - mtime < FRESH_S * 1e9
        if self.listing is None or mtime != self.listed_at or recent:
            found: list[re.Match[str]] = []
            skipped: list[tuple[str, str]] = []
            with os.scandir(self.root) as entries:
                for e in entries:
                    if (m := VERL_FILE.match(e.name)) and e.is_file():
                        found.append(m)
                    elif (why := _no_step_file(e)) is not None and e.name not in self.skipped:
                        skipped.append((e.name, why))
            for name, why in sorted(skipped):
                self.skipped.add(name)
                self.notices.append(Notice(f"{_quoted(name)} skipped: {why}"))
            self.names = _one_name_per_step(found, self.root)
            self.listing = sorted(self.names)
            self.listed_at = mtime
        return self.listing

    def _written_again(self) -> None:
        """Handed-out step files that changed since they were read: lines appended (read
        again), or written anew (a restart from that step: it and the later ones again)."""
        for step, handed, now in self.history.changed():
            name = handed.path.name if handed.path is not None else f"{step}.jsonl"
            if handed.appended(now):
                self._read_again(step, name)
                continue
            gone = self.history.truncate(step)
            later = [s for s in self._files() if s > step]
            self.stale = {s: Stamp.of(self.root / self.names[s]) for s in later}
            self.notices.append(
                Notice(
                    f"{name} was written again after step {step} was reported: the run"
                    f" restarted or resumed from step {step}; {steps_text(gone)} reported"
                    " again as it writes them (the alert window drops the earlier ones)",
                    (step, None),
                )
            )
            return

    def _current(self, files: list[int]) -> list[int]:
        """The step files of the run now writing: after a restart, a later step's file left
        by the earlier run counts once it was written again."""
        for step, stamp in list(self.stale.items()):
            if Stamp.of(self.root / self.names.get(step, f"{step}.jsonl")) != stamp:
                del self.stale[step]
        return [s for s in files if s not in self.stale]

    def poll(self, final: bool) -> list[FinishedStep]:
        self._written_again()
        files = self._current(self._files())
        top = files[-1] if files else -1
        out: list[FinishedStep] = []
        for step in [s for s in files if self.history.fresh(s)]:
            path = self.root / self.names[step]
            if not (step < top or self._last_done(step, path)):
                break  # the last file, still being written
            out.append(FinishedStep(step, path, remark=self._hand(step, path)))
        return out

    def _last_done(self, step: int, path: Path) -> bool:
        """Whether the last step file is whole: it ends with a newline and (under
        ``--follow``) has stopped growing."""
        size = path.stat().st_size
        settled = not self.follow or self.settled(step, size)
        return settled and _ends_with_newline(path, size)

    def left_out(self) -> list[str]:
        """Without ``--follow``, after the last poll: the step file on disk that was not
        reported (the last one, its last line incomplete), and why."""
        files = self.listing or []
        left = [s for s in files if self.history.fresh(s)]
        if not left:
            return []
        names = ", ".join(self.names[s] for s in left)
        why = "empty, or its last line is incomplete (still being written)"
        return [f"{steps_text(left)} on disk not reported ({names}): {why}"]


def _no_step_file(entry: os.DirEntry[str]) -> str | None:
    """Why an entry named like a verl step file is none (None: it is one, or looks like none)."""
    if VERL_FILE.match(entry.name):
        if entry.is_dir():
            return "a folder, not a step file"
        return "not a regular file (a FIFO, a socket, a device or a broken link), not a step file"
    like = VERL_LIKE.match(entry.name)
    if like is None:
        return None
    if not like.group(1).isascii():
        return "its step number is not written in the digits 0-9: verl writes N.jsonl"
    return f"verl writes each step as N.jsonl: a {like.group(2)} file is not read as step" + (
        f" {int(like.group(1))}" if len(like.group(1)) <= 19 else ""
    )


def _quoted(name: str) -> str:
    """A file name as a line says it: as written where it is printable ASCII, else quoted."""
    return name if name.isascii() and name.isprintable() else ascii(name)


def _one_name_per_step(found: list[re.Match[str]], folder: Path) -> dict[int, str]:
    """Each step number with the one name that writes it; two names of one step (``1.jsonl``
    and ``01.jsonl``) are refused, naming both: which holds the step is not known."""
    names: dict[int, str] = {}
    for m in sorted(found, key=lambda m: m.string):
        digits = m.group(1).lstrip("0") or "0"
        if len(digits) > 19 or int(digits) > MAX_STEP:  # int() of 4300 digits is refused
            raise InputError(
                f"step {_shown(digits)[1:-1]} is past the largest step, 2^63 - 1",
                file=str(folder / m.string),
                field="step",
            )
        step = int(digits)
        if step in names:
            raise InputError(
                f"two files for step {step}: {names[step]} and {m.string}; keep one",
                file=str(folder),
            )
        names[step] = m.string
    return names


#: What each layout's files are, as a refusal names them.
LAYOUT_FILES = {
    "prime-rl": f"{METRICS}, {ROLLOUTS}/step_N/ or configs/",
    "verl": "N.jsonl step files (trainer.rollout_data_dir)",
}


def _forced(root: Path, layout: str) -> None:
    """A ``--layout`` named on a folder that holds another layout's files and none of its
    own is refused, naming what it looked for (an empty folder is a run not started yet)."""
    has_prime = (
        (root / METRICS).is_file() or (root / ROLLOUTS).is_dir() or (root / "configs").is_dir()
    )
    try:
        with os.scandir(root) as entries:
            has_verl = any(VERL_FILE.match(e.name) and e.is_file() for e in entries)
    except FileNotFoundError:
        return
    own, other = (has_prime, has_verl) if layout == "prime-rl" else (has_verl, has_prime)
    if own or not other:
        return
    found = "verl" if layout == "prime-rl" else "prime-rl"
    raise UsageError(
        f"--layout {layout}: {shown_path(root)} holds no {LAYOUT_FILES[layout]}; it holds"
        f" {LAYOUT_FILES[found]} ({found}): pass --layout {found}, or auto"
    )


def open_run(
    root: Path, layout: str, split: str, follow: bool, settle: float = SETTLE_S
) -> PrimeRLRun | VerlRun | None:
    """The follower of a run directory (None while ``auto`` finds no layout yet). A forced
    layout whose files are absent where the other layout's are is refused (:func:`_forced`)."""
    if layout != "auto":
        _forced(root, layout)
    found = detect(root) if layout == "auto" else layout
    if found == "prime-rl":
        return PrimeRLRun(root, split, settle)
    if found == "verl":
        return VerlRun(root, follow, settle)
    return None
