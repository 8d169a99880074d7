"""The complete lines appended to a file since the last read, from a kept byte offset.

A file the watch reads lines from (prime-rl's ``metrics.jsonl``) can be replaced under it: a
log rotation renames it and creates another at its path, a restarted trainer truncates it or
writes it anew. A read from the old offset would then start mid-line in another file, or skip
its first rows. So each read checks that the file is the one it read before (its device and
inode), no shorter than the offset, and still holds, just before the offset, the bytes that
ended the last read; otherwise it reads the file from its start and says why
(:attr:`LineTail.replaced`). A file deleted under it is said once (:attr:`LineTail.gone`);
one created at its path again is read from its start.
"""

from __future__ import annotations

from pathlib import Path

from whilecli.watch.history import Stamp

#: Bytes before the offset kept to check that the file was not rewritten in place.
KEEP_BYTES = 64


class LineTail:
    """The complete lines appended to a file since the last read, from a kept byte offset.

    A last line without its newline is not consumed: the next read starts at it again."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.lines = 0  # complete lines consumed (the next line's number is lines + 1)
        self.stamp: Stamp | None = None  # the file at the last read
        self.kept = b""  # the bytes just before the offset
        self.replaced: str | None = None  # why the last read started the file over
        self.gone = False  # the last read found the file deleted (it was there before)

    def read(self) -> list[tuple[int, bytes]]:
        """(line number, line) of every complete line appended since the last read; the
        whole file again when it was replaced (:attr:`replaced` says how)."""
        self.replaced = None
        self.gone = False
        now = Stamp.of(self.path)
        if now is None:
            if self.stamp is not None:  # deleted since the last read: said once
                self.gone = True
                self._restart(None)
                self.stamp = None  # a file at its path again is read from its start
            return []
        why = self._replaced_by(now)
        if why is not None:
            self._restart(why)
        self.stamp = now
        if now.size == self.offset:
            return []
        data = self._bytes_from_kept(now.size)
        if data is None:  # the bytes before the offset changed: rewritten in place
            self._restart("it was rewritten in place (its earlier lines changed)")
            data = self._bytes_from_kept(now.size) or b""
        return self._consume(data)

    def _replaced_by(self, now: Stamp) -> str | None:
        if self.stamp is not None and not self.stamp.same_file(now):
            return "another file is at its path now (rotated or replaced)"
        if now.size < self.offset:
            return f"it shrank from {self.offset} to {now.size} bytes (truncated or rewritten)"
        return None

    def _restart(self, why: str | None) -> None:
        self.replaced = why
        self.offset = 0
        self.lines = 0
        self.kept = b""

    def _bytes_from_kept(self, size: int) -> bytes | None:
        """The bytes from the offset to ``size``; None when the kept bytes before the offset
        are not there any more."""
        back = len(self.kept)
        with open(self.path, "rb") as fh:
            fh.seek(self.offset - back)
            data = fh.read(size - self.offset + back)
        if data[:back] != self.kept:
            return None
        return data[back:]

    def _consume(self, data: bytes) -> list[tuple[int, bytes]]:
        end = data.rfind(b"\n")
        if end < 0:
            return []
        whole = data[: end + 1]
        self.offset += end + 1
        self.kept = (self.kept + whole)[-KEEP_BYTES:]
        out = []
        for raw in whole.split(b"\n")[:-1]:
            self.lines += 1
            out.append((self.lines, raw))
        return out
