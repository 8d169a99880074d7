"""What a watch handed out so far, and what it says when the run breaks its order.

A run is written in step order, but not always: the orchestrator's row for a step can land
after a later step's (reported late), a trainer can restart or resume from an earlier step
and write steps it already wrote (the steps from there on are the new run's, reported again),
and a step's file can change after it was read (read again). :class:`History` keeps the
steps handed out since the last such break, with each one's file as it was read
(:class:`Stamp`), and :class:`Notice` is the line a watch prints when the order breaks.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Stamp:
    """A file as it was at one look: which file (device, inode), its size, its mtime."""

    dev: int
    ino: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: Path) -> Stamp | None:
        """The file at ``path`` now (None: no file there)."""
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    def same_file(self, other: Stamp) -> bool:
        return (self.dev, self.ino) == (other.dev, other.ino)

    def grew_to(self, other: Stamp) -> bool:
        """Whether ``other`` is this file with lines appended (same file, larger)."""
        return self.same_file(other) and other.size > self.size


@dataclass(frozen=True)
class Notice:
    """A line the watch prints between steps. ``forget``: the steps from ``forget[0]`` to
    ``forget[1]`` (None: every later one) are reported again (a restart, a step read again),
    so the alert window and the trend drop what they hold of them."""

    text: str
    forget: tuple[int, int | None] | None = None


#: Bytes kept of the end of a file handed out: lines appended keep them, a rewrite does not.
ENDING_BYTES = 64


@dataclass
class Handed:
    """A step handed out: its file as read (None: nothing read), the bytes that ended it, and
    its metrics row."""

    path: Path | None
    stamp: Stamp | None
    row: dict[str, Any] | None = None
    ending: bytes = b""

    def appended(self, now: Stamp) -> bool:
        """Whether the file is now the one handed out with lines appended: the same file,
        larger, still holding the bytes that ended it (else it was written anew)."""
        if self.path is None or self.stamp is None or not self.stamp.grew_to(now):
            return False
        return _ending(self.path, self.stamp.size) == self.ending


def _ending(path: Path, size: int) -> bytes:
    """The last :data:`ENDING_BYTES` of the file's first ``size`` bytes (b"": unreadable)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, size - ENDING_BYTES))
            return fh.read(min(size, ENDING_BYTES))
    except OSError:
        return b""


@dataclass
class History:
    """The steps handed out since the run last broke its order (a restart), with their files."""

    done: dict[int, Handed] = field(default_factory=dict)

    @property
    def last(self) -> int:
        """The highest step handed out (-1: none)."""
        return max(self.done, default=-1)

    def fresh(self, step: int) -> bool:
        return step not in self.done

    def hand(self, step: int, path: Path | None, row: dict[str, Any] | None = None) -> str | None:
        """Record a step handed out; what to say with it (reported late, after a later step)."""
        last = self.last
        stamp = Stamp.of(path) if path is not None else None
        ending = _ending(path, stamp.size) if path is not None and stamp is not None else b""
        self.done[step] = Handed(path, stamp, row, ending)
        return f"reported late: step {last} was reported before it" if step < last else None

    def truncate(self, step: int) -> list[int]:
        """Forget the steps from ``step`` on (they are written again); those forgotten."""
        gone = sorted(s for s in self.done if s >= step)
        for s in gone:
            del self.done[s]
        return gone

    def changed(self) -> list[tuple[int, Handed, Stamp]]:
        """The steps whose file changed since it was read, in step order (a file gone is no
        change: a trainer may clean old steps up). One ``stat`` per step handed out."""
        out = []
        for step in sorted(self.done):
            handed = self.done[step]
            if handed.path is None or handed.stamp is None:
                continue
            now = Stamp.of(handed.path)
            if now is not None and now != handed.stamp:
                out.append((step, handed, now))
        return out


def within(step: int, first: int, last: int | None) -> bool:
    """Whether ``step`` lies from ``first`` to ``last`` (None: no end)."""
    return step >= first and (last is None or step <= last)


def steps_text(steps: Iterable[int]) -> str:
    """``step 3``, ``steps 1-3``, ``steps 1, 2, 5-7``: the steps named, runs joined."""
    ordered = sorted(set(steps))
    runs: list[list[int]] = []
    for s in ordered:
        if runs and s == runs[-1][-1] + 1:
            runs[-1].append(s)
        else:
            runs.append([s])
    parts = [str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs]
    return f"step {parts[0]}" if len(ordered) == 1 else f"steps {', '.join(parts)}"
