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

A finished step's rollouts file is read once it ends with a newline; one that appeared only
after the step's orchestrator row is read once it has also stopped growing (the same size at
two polls and for :data:`SETTLE_S` seconds).

Each poll costs what changed: ``metrics.jsonl`` is read from the byte offset where the last
poll stopped, only up to its last complete line (a partial last line is left for the next
poll); a finished step whose rollouts are not on disk yet is looked for again by its own
path, never by rereading the others; a verl directory is listed again only when it changed.
Steps are handed out once each, in step order.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whilecli import jsonout
from whilecli.errors import InputError
from whilecli.io.formats.prime_rl import step_traces

METRICS = "metrics.jsonl"
ROLLOUTS = "rollouts"
STEP_DIR = re.compile(r"^step_(\d+)$")
VERL_FILE = re.compile(r"^(\d+)\.jsonl$")
#: Polls a finished step waits for its rollouts while a later step already has its own.
LATE_POLLS = 3
#: Seconds a file must keep its size, over two polls or more, to count as no longer growing.
SETTLE_S = 1.0
#: A directory changed this recently is listed again even when its mtime looks unchanged.
FRESH_S = 2.0
#: Key prefixes of the orchestrator's per-step rows (the trainer's rows carry none).
ORCHESTRATOR_KEYS = ("off_policy/", "train/", "progress/")


@dataclass(frozen=True)
class FinishedStep:
    """A finished step: the rollouts file to read (None: none on disk, ``note`` says why)
    and the orchestrator's metrics row for it (prime-rl), when there is one."""

    step: int
    path: Path | None
    metrics: dict[str, Any] | None = None
    note: str | None = None


class LineTail:
    """The complete lines appended to a file since the last read, from a kept byte offset.

    A last line without its newline is not consumed: the next read starts at it again."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.lines = 0  # complete lines consumed (the next line's number is lines + 1)

    def read(self) -> Iterator[tuple[int, bytes]]:
        """(line number, line) of every complete line appended since the last read."""
        try:
            size = os.stat(self.path).st_size
        except FileNotFoundError:
            return
        if size < self.offset:
            raise InputError(
                f"the file shrank from {self.offset} to {size} bytes while being watched"
                " (rewritten or truncated): watch it again from the start",
                file=str(self.path),
            )
        if size == self.offset:
            return
        with open(self.path, "rb") as fh:
            fh.seek(self.offset)
            data = fh.read(size - self.offset)
        end = data.rfind(b"\n")
        if end < 0:
            return
        self.offset += end + 1
        for raw in data[: end + 1].split(b"\n")[:-1]:
            self.lines += 1
            yield self.lines, raw


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


@dataclass
class _Order:
    """Steps handed out once each, in order: everything at or below ``last`` is done."""

    last: int = -1
    waited: dict[int, int] = field(default_factory=dict)

    def fresh(self, step: int) -> bool:
        return step > self.last


class PrimeRLRun:
    """The finished steps of a prime-rl run directory, poll by poll."""

    layout = "prime-rl"

    def __init__(self, root: Path, split: str = "train", settle: float = SETTLE_S) -> None:
        self.root = root
        self.split = split
        self.tail = LineTail(root / METRICS)
        self.rows: dict[int, dict[str, Any]] = {}  # finished steps not yet handed out
        self.order = _Order()
        self.saw_metrics = False
        self.settled = _Settle(settle)  # a late rollouts file: has it stopped growing?

    @property
    def waiting(self) -> str:
        if not self.saw_metrics:
            return "no finished step yet (no orchestrator row in metrics.jsonl)"
        return "no finished step yet"

    def rollouts(self, step: int) -> Path | None:
        """The step's traces file of the split: ``all`` (every episode), else ``effective``
        (the reading layer's choice, :func:`whilecli.io.formats.prime_rl.step_traces`), in
        the step's directory as it is written (``step_02`` too)."""
        name = self._dir_names().get(step, f"step_{step}")
        return step_traces(self.root / ROLLOUTS / name, self.split)

    def _dir_names(self) -> dict[int, str]:
        try:
            with os.scandir(self.root / ROLLOUTS) as entries:
                found = [m for e in entries if (m := STEP_DIR.match(e.name))]
        except (FileNotFoundError, NotADirectoryError):
            return {}
        return _one_name_per_step(found, self.root / ROLLOUTS)

    def _metrics_rows(self) -> None:
        name = str(self.tail.path)
        for lineno, raw in self.tail.read():
            self.saw_metrics = True
            if not raw.strip():
                continue
            try:
                row = jsonout.parse(raw)
            except ValueError as err:
                raise InputError(f"not a JSON object: {err}", file=name, line=lineno) from None
            if not isinstance(row, dict):
                raise InputError("not a JSON object", file=name, line=lineno)
            step = row.get("step")
            if step is None:
                continue  # a time-keyed row (inference metrics)
            if isinstance(step, bool) or not isinstance(step, int):
                raise InputError(
                    f"a step must be an integer, got {step!r}", file=name, line=lineno, field="step"
                )
            for finished in self._finishes(step, row):
                if self.order.fresh(finished) and finished not in self.rows:
                    self.rows[finished] = row if finished == step else {}

    def _finishes(self, step: int, row: dict[str, Any]) -> list[int]:
        """The steps this metrics row says are finished."""
        if self.split == "eval":
            return [step] if any(key.startswith("eval/") for key in row) else []
        orchestrator = row.get("producer") == "orch" or any(
            key.startswith(ORCHESTRATOR_KEYS) for key in row
        )
        return [step] if orchestrator else []

    def _step_dirs(self) -> list[int]:
        return sorted(self._dir_names())

    def poll(self, final: bool) -> list[FinishedStep]:
        """The steps finished since the last poll, in order. ``final``: no later poll comes
        (a finished step whose rollouts are missing is reported as such)."""
        self._metrics_rows()
        if not self.saw_metrics:
            dirs = [s for s in self._step_dirs() if self.order.fresh(s)]
            for earlier in dirs[:-1]:  # a later step's directory exists: this one is done
                self.rows.setdefault(earlier, {})
        pending = sorted(self.rows)
        paths = {step: self.rollouts(step) for step in pending}  # one lookup per pending step
        for step in pending:
            if paths[step] is None:  # every missing one waits at once, not one after another
                self.order.waited[step] = self.order.waited.get(step, 0) + 1
        out: list[FinishedStep] = []
        for i, step in enumerate(pending):
            path = paths[step]
            row = self.rows[step] or None
            if path is not None and not self._complete(step, path, final):
                if not final:
                    break  # still being written: read at a later poll
                out.append(FinishedStep(step, None, row, "its rollouts are still being written"))
            elif path is None:
                later = any(paths[s] is not None for s in pending[i + 1 :])
                if not final and not (later and self.order.waited[step] > LATE_POLLS):
                    break  # looked for again by its own path at the next poll
                note = f"no {self.split} rollouts on disk for this step"
                out.append(FinishedStep(step, None, row, note))
            else:
                out.append(FinishedStep(step, path, row))
            del self.rows[step]
            self.order.last = step
            self.order.waited.pop(step, None)
            self.settled.forget(step)
        return out

    def _complete(self, step: int, path: Path, final: bool) -> bool:
        """Whether a finished step's rollouts file is whole: it ends with a newline, and, when
        it appeared after the step's orchestrator row (still being written, maybe), it has not
        grown since the previous poll."""
        size = path.stat().st_size
        whole = _ends_with_newline(path, size)
        if final or step not in self.order.waited:
            return whole
        settled = self.settled(step, size)
        return whole and settled


class VerlRun:
    """The finished steps of a verl ``rollout_data_dir``, poll by poll."""

    layout = "verl"
    waiting = "no finished step yet (no complete N.jsonl)"

    def __init__(self, root: Path, follow: bool, settle: float = SETTLE_S) -> None:
        self.root = root
        self.follow = follow
        self.settled = _Settle(settle)  # the last file: has it stopped growing?
        self.order = _Order()
        self.listing: list[int] | None = None  # the step files at the last listing
        self.names: dict[int, str] = {}  # each step's file name as written (``01.jsonl``)
        self.listed_at = 0  # the directory's mtime then

    def _files(self) -> list[int]:
        """The step files in the directory, listed again only when the directory changed
        (its mtime moved, or moved within the last :data:`FRESH_S` seconds, which a coarse
        file-system clock could hide): an idle poll costs one ``stat``."""
        try:
            mtime = os.stat(self.root).st_mtime_ns
        except FileNotFoundError:
            return []
        recent = time.time_ns() - mtime < FRESH_S * 1e9
        if self.listing is None or mtime != self.listed_at or recent:
            with os.scandir(self.root) as entries:
                found = [m for e in entries if (m := VERL_FILE.match(e.name))]
            self.names = _one_name_per_step(found, self.root)
            self.listing = sorted(self.names)
            self.listed_at = mtime
        return self.listing

    def poll(self, final: bool) -> list[FinishedStep]:
        steps = [s for s in self._files() if self.order.fresh(s)]
        out: list[FinishedStep] = []
        for i, step in enumerate(steps):
            path = self.root / self.names[step]
            if i + 1 < len(steps):  # a later step's file exists: this one is complete
                done = True
            else:
                size = path.stat().st_size
                settled = not self.follow or self.settled(step, size)
                done = settled and _ends_with_newline(path, size)
            if not done:
                break
            out.append(FinishedStep(step, path))
            self.order.last = step
            self.settled.forget(step)
        return out


def _one_name_per_step(found: list[re.Match[str]], folder: Path) -> dict[int, str]:
    """Each step number with the one name that writes it; two names of one step (``1.jsonl``
    and ``01.jsonl``) are refused, naming both: which holds the step is not known."""
    names: dict[int, str] = {}
    for m in sorted(found, key=lambda m: m.string):
        step = int(m.group(1))
        if step in names:
            raise InputError(
                f"two files for step {step}: {names[step]} and {m.string}; keep one",
                file=str(folder),
            )
        names[step] = m.string
    return names


def open_run(
    root: Path, layout: str, split: str, follow: bool, settle: float = SETTLE_S
) -> PrimeRLRun | VerlRun | None:
    """The follower of a run directory (None while ``auto`` finds no layout yet)."""
    found = detect(root) if layout == "auto" else layout
    if found == "prime-rl":
        return PrimeRLRun(root, split, settle)
    if found == "verl":
        return VerlRun(root, follow, settle)
    return None
